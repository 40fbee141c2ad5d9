"""Official scoring against gold widened by its overlay forms (seed 002 appendix D).

An overlay form counts as a form of its source reference (:func:`score_with_overlay`), so VQA accuracy still counts
annotators and the other metrics take the max over references and overlays: a widened score is never below the
plain one. Under official ANLS an overlay too short to score is never built (:func:`overlay_too_short`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from vqaudit.scoring.overlay import Overlay
from vqaudit.scoring.registry import scorer_identity
from vqaudit.scoring.vqa_normalize import fast_evalai_process, fast_vqaeval_process

_evalai = fast_evalai_process
_vqaeval = fast_vqaeval_process


def score_with_overlay(
    prediction: str,
    answers: Sequence[str],
    overlay: Overlay,
    metric: str,
    variant: str,
    scorer: Callable[[str, Sequence[str]], float],
) -> float:
    """Official score of ``prediction`` against the answers widened by their overlay forms.

    Args:
        prediction: the (possibly repaired) output.
        answers: the original gold answers.
        overlay: per-answer extra forms (:func:`reference_overlay`); all empty means plain official scoring.
        metric: official metric name.
        variant: its variant (VQA accuracy normalizes with the variant's processor).
        scorer: the official scorer ``(prediction, answers) -> [0, 1]``.

    Returns:
        A score in [0, 1], never below ``scorer(prediction, answers)``.
    """
    return widened_score(prediction, answers, overlay, metric, variant, scorer, scorer(prediction, answers), False)


# VQA variants whose official scorer normalizes both sides with the same processor as the overlay comparison.
_SAME_NORM_VQA = frozenset({"mmf_textvqa", "vlmevalkit"})


def widened_score(
    prediction: str,
    answers: Sequence[str],
    overlay: Overlay,
    metric: str,
    variant: str,
    scorer: Callable[[str, Sequence[str]], float],
    base: float,
    official: bool,
) -> float:
    """:func:`score_with_overlay` given ``base = scorer(prediction, answers)``.

    ``official``: the scorer is ``official_scorer(metric, variant)`` (enables the VQA shortcut below).
    """
    extra = [f for forms in overlay for f in forms]
    if base >= 1.0 or not extra:
        return base
    if metric == "vqa_accuracy":
        norm = _evalai if variant == "mmf_textvqa" else _vqaeval
        p = norm(prediction)
        if official and variant in _SAME_NORM_VQA and p not in map(norm, extra):
            # No overlay form adds a hit, so the widened hits are the official ones and the score is ``base``.
            return base
        hits = [norm(a) == p or any(norm(f) == p for f in forms) for a, forms in zip(answers, overlay, strict=True)]
        n, m = len(hits), sum(hits)
        widened = 0.0 if n < 2 else sum(min(1.0, (m - int(h)) / 3) for h in hits) / n
        return max(base, widened)
    return max(base, scorer(prediction, extra))


Futility = Callable[[str, Sequence[str]], bool]


def futility(metric: str, variant: str, scorer: Callable[[str, Sequence[str]], float]) -> Futility | None:
    """A test ``(target, refs) -> True`` when no overlay form of ``refs`` can raise ``target``'s score.

    Only for the official scorers it is proven for (else None: every overlay is built): ANLS by the length bound
    of :func:`overlay_too_short`. (A letter test for VQA accuracy - no form of a gold holds a letter it lacks -
    skipped too few overlays on the benchmark pools to pay for itself.)
    """
    if scorer_identity(scorer) != (metric, variant):
        return None
    if metric == "anls" and variant in ANLS_STRIP:
        strip = ANLS_STRIP[variant]
        return lambda target, refs: overlay_too_short(target, refs, strip)
    return None


# ANLS variants whose distance is taken between ``lower()`` forms (True: also ``strip()``ped) and whose score is 0
# once the normalized distance exceeds 0.5 (official.anls; the registry's scorers use the default threshold).
ANLS_STRIP: dict[str, bool] = {"paper": True, "mmf_stvqa": True, "pix2struct": False}


def overlay_too_short(target: str, refs: Sequence[str], strip: bool) -> bool:
    """True when no overlay form of any reference can score above 0 against ``target`` under official ANLS.

    Every form :func:`_overlay_one` makes from an ASCII reference of ``L`` characters has at most ``2 L + 4``
    (a slice of it; a number regrouped with commas, one more digit from rounding, a sign and "%"; spans rejoined
    with ", " or " and " in place of separators of at least one character each). A form of at most half the
    compared prediction's length is at normalized distance over 0.5 (the distance is at least the length
    difference), where every ANLS variant of :data:`ANLS_STRIP` scores 0; the overlay then cannot change the
    score and need not be built.
    """
    if target.isascii():  # lower() keeps the length of an ASCII text
        compared = target.strip() if strip else target
    else:
        compared = target.lower().strip() if strip else target.lower()
    return bool(refs) and 4 * max(map(len, refs)) + 8 < len(compared) and all(map(str.isascii, refs))
