"""Official short-answer VQA metrics, reproduced rule for rule from the benchmarks' reference scorers.

Each function scores one item (a prediction against its reference answers) and returns a float in [0, 1]; a
benchmark score is 100 times the mean over items. The default variant is the benchmark's reference scorer; every
known deviation of a popular harness is a *named* variant, documented where it is offered. No code was copied;
the sources read were:

* GT-Vision-Lab/VQA ``PythonEvaluationTools/vqaEvaluation/vqaEval.py`` at
  ``a013f0043c1e2cdc995922dfe257f7149aa9af06`` (current rule) and ``c4e6a0e4e84b9702d99800d3393652d92b5df224``
  (earlier rule). The order is inferred from public threads: Cyanogenoid/pytorch-vqa#5 (2017) describes master as
  the c4e6a0e rule, GT-Vision-Lab/VQA#14 (2022, answered by the author) quotes the a013f00 rule, and
  EvolvingLMMs-Lab/lmms-eval#760 (2025) links a013f00 as the original script.
* facebookresearch/mmf ``mmf/utils/m4c_evaluators.py`` at ``2dc099af7ce267561e4c2ae033c27eb36be5b3ea``
  (``TextVQAAccuracyEvaluator``, ``STVQAAccuracyEvaluator``, ``STVQAANLSEvaluator``, ``EvalAIAnswerProcessor``).
  LLaVA's TextVQA numbers come from a copy of this file.
* google-research/pix2struct ``pix2struct/metrics.py`` at ``bd70460499dc7bf4279158264c4bcd69a0250ae9``
  (``anls_metric``, ``relaxed_correctness``, ``aggregate_metrics``; identical at ``5b086ef``).
* Biten et al., "Scene Text Visual Question Answering", ICCV 2019 (arXiv:1905.13648), Eq. 1: the ANLS definition.
* VizWiz's scorer: TRI-ML/vlm-evaluation ``vlm_eval/util/evaluation/vizwiz/eval.py`` at
  ``7292fd6727dbc40c1ad6051bf090d925f26f3b3a`` (``VQAEval.evaluate``, ``get_answerable_preds``,
  ``evaluate_unanswerability``; its header says it is based on Qing Li's VizWiz Python API, and the VizWiz API's
  own ``vqaEval.py`` read in the search index, whose repository the index does not name, has the same accuracy
  rule).
* Harness variants: open-compass/VLMEvalKit ``vlmeval/dataset/utils/vqa_eval.py`` at
  ``e5266a16515d3a5655e9ffaec06bd260ad86bdad`` (and, for the rules that changed, at
  ``5ba35c848dc40c35ff60dd05e5ba0b8efe5835d3``, the parent of 928a95b0, and at
  ``677e30a59a0d636d1ccd84915b9c29f11d89b594``) and QwenLM/Qwen-VL ``eval_mm/evaluate_vqa.py`` at
  ``cfe66a7cc5df6ca8bff95c2b8b02bc0a1cbdc72c``.

Edit distances use :mod:`rapidfuzz` (plain Levenshtein on code points, as ``editdistance.eval`` computes).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Literal, get_args

from rapidfuzz.distance import Levenshtein

from vqaudit.scoring.leave_one_out import leave_one_out_accuracy as leave_one_out_accuracy
from vqaudit.scoring.leave_one_out import leave_one_out_score as leave_one_out_score
from vqaudit.scoring.vqa_normalize import (
    PERIOD_STRIP_928A95B0,
    evalai_process,
    process_digit_article,
    process_punctuation,
    vqaeval_process,
)

VqaVariant = Literal["vqaeval", "vqaeval_legacy", "mmf_textvqa", "vlmevalkit", "vlmevalkit_928a95b0", "vizwiz"]
AnlsVariant = Literal["paper", "pix2struct", "mmf_stvqa", "vlmevalkit"]
RelaxedVariant = Literal["pix2struct", "qwenvl", "vlmevalkit", "vlmevalkit_677e30a5"]
ExactMatchVariant = Literal["pix2struct", "vlmevalkit", "mmf_stvqa"]

VQA_VARIANTS: tuple[str, ...] = get_args(VqaVariant)
ANLS_VARIANTS: tuple[str, ...] = get_args(AnlsVariant)
RELAXED_VARIANTS: tuple[str, ...] = get_args(RelaxedVariant)
EXACT_MATCH_VARIANTS: tuple[str, ...] = get_args(ExactMatchVariant)

# m4c_evaluators.py ``TextVQAAccuracyEvaluator._compute_answer_scores``: ``assert len(answers) == 10``.
_MMF_TEXTVQA_ANSWER_COUNT = 10


def vqa_accuracy(prediction: str, answers: Sequence[str], *, variant: VqaVariant = "vqaeval") -> float:
    r"""VQA accuracy of one prediction: min(#matching annotators / 3, 1), averaged over leave-one-out subsets.

    Common rule (vqaEval.py, both commits; m4c_evaluators.py ``_compute_answer_scores``): for each position ``i``
    of the ``n`` reference answers, count the *other* answers equal to the (normalized) prediction, score
    ``min(1, count / 3)``, and average the ``n`` scores in order. With 10 answers of which ``m`` match this is
    ``(m * min(1, (m - 1) / 3) + (10 - m) * min(1, m / 3)) / 10``: 1 match -> 0.3, 2 -> 0.6, 3 -> 0.9, 4+ -> 1.0.
    Matching is exact string equality after the variant's normalization.

    Variants:
        ``"vqaeval"`` (default; vqaEval.py at a013f00): tabs/newlines become spaces and both sides are stripped.
        Then, only if the stripped references are not all identical (``len(set(gtAnswers)) > 1``), the references
        *and* the prediction get ``processPunctuation`` + ``processDigitArticle`` (see
        :func:`vqaudit.scoring.vqa_normalize.vqaeval_process`). With unanimous references nothing is
        normalized: "Yes." against ten "yes" scores 0.
        ``"vqaeval_legacy"`` (vqaEval.py at c4e6a0e): the prediction is always fully normalized; references are
        never stripped and, only if not all identical, get ``processPunctuation`` alone (no lower-casing, no
        number words, no article removal). Unanimous "the cat" can then never be matched.
        ``"mmf_textvqa"`` (m4c_evaluators.py ``TextVQAAccuracyEvaluator`` at 2dc099a; LLaVA's TextVQA number):
        the prediction and every reference always go through ``EvalAIAnswerProcessor``
        (:func:`vqaudit.scoring.vqa_normalize.evalai_process`); exactly 10 references are required.
        ``"vlmevalkit"`` (VLMEvalKit ``process_line`` method ``vqa_score`` before 2025-05-13, as at
        5ba35c8): the vqaEval.py normalization applied to the prediction and every reference unconditionally,
        with vqaEval's period rule (every "." not followed by a digit is deleted). (VLMEvalKit averages with
        ``numpy.mean``, which may differ from this sequential sum in the last bit.) This variant once cited
        e5266a1, which already has the next rule.
        ``"vlmevalkit_928a95b0"`` (the same from commit 928a95b0, 2025-05-13, e.g. at e5266a1 and 677e30a5):
        ``process_punctuation``'s period pattern became ``(?<!\d)\.(?!\d)``, so a period right after a digit is
        kept: "5." against "5" no longer matches, "U.S.A" still becomes "USA".
        ``"vizwiz"`` (VizWiz's scorer, ``VQAEval.evaluate`` of the VizWiz API as read in TRI-ML/vlm-evaluation
        at 7292fd6): the prediction always gets tabs/newlines to spaces, strip, ``processPunctuation`` and
        ``processDigitArticle`` (lower-casing included), whatever the references; the references are compared
        exactly as written (never stripped nor normalized). So "Unanswerable" against ten "unanswerable"
        scores 1 here and 0 under ``"vqaeval"`` (unanimous references skip normalization there); a reference
        holding a capital or a period can never be matched. The copies read spell the contraction targets with
        "’" and "`" where vqaEval.py has "'"; this variant uses vqaEval.py's table (only a prediction
        holding a contraction key such as "dont" can tell them apart).

    Args:
        prediction: The model's answer.
        answers: The reference answers, usually 10 annotator answers; duplicates count separately.
        variant: Which scorer to reproduce.

    Returns:
        A score in [0, 1]; with ``n`` references it is a multiple of ``1 / (3 n)``. A single reference always
        scores 0 (no other answer is left to match), as in the scripts.

    Raises:
        TypeError: If ``answers`` is a single string instead of a sequence of strings, or holds a non-string.
        ValueError: If ``answers`` is empty (the scripts divide by zero), if ``variant`` is unknown, or if
            ``variant="mmf_textvqa"`` and there are not exactly 10 answers (the script asserts this).
    """
    if isinstance(answers, str):
        raise TypeError("answers must be a sequence of reference strings, not a single string")
    refs = _reference_list(answers)
    if variant == "vqaeval":
        refs = [_tabs_newlines_strip(a) for a in refs]
        pred = _tabs_newlines_strip(prediction)
        if len(set(refs)) > 1:
            refs = [vqaeval_process(a) for a in refs]
            pred = vqaeval_process(pred)
    elif variant == "vqaeval_legacy":
        pred = vqaeval_process(prediction)
        if len(set(refs)) > 1:
            refs = [process_punctuation(a) for a in refs]
    elif variant == "mmf_textvqa":
        if len(refs) != _MMF_TEXTVQA_ANSWER_COUNT:
            raise ValueError(f"variant 'mmf_textvqa' needs exactly 10 answers (the script asserts it), got {len(refs)}")
        refs = [evalai_process(a) for a in refs]
        pred = evalai_process(prediction)
    elif variant == "vlmevalkit":
        refs = [vqaeval_process(a) for a in refs]
        pred = vqaeval_process(prediction)
    elif variant == "vizwiz":
        pred = vqaeval_process(prediction)
    elif variant == "vlmevalkit_928a95b0":
        refs = [vlmevalkit_928a95b0_process(a) for a in refs]
        pred = vlmevalkit_928a95b0_process(prediction)
    else:
        raise ValueError(_unknown_variant(variant, VQA_VARIANTS))
    return leave_one_out_score(pred, refs)


def anls(
    prediction: str,
    answers: str | Sequence[str],
    *,
    threshold: float = 0.5,
    variant: AnlsVariant = "paper",
) -> float:
    """Average Normalized Levenshtein Similarity of one prediction: the best score over the references.

    Common rule: for a reference ``a`` and prediction ``o`` (both normalized as below), the normalized Levenshtein
    distance is ``NL = lev(a, o) / max(len(a), len(o))`` and the item score is ``max over a of s(a, o)`` with
    ``s = 1 - NL`` when the distance is under the threshold and ``0`` otherwise. The variants differ in the
    normalization and in what happens *exactly at* the threshold.

    Variants:
        ``"paper"`` (default; Biten et al. 2019, Eq. 1, ``s = 1 - NL if NL < tau else 0``; normalization
        ``lower().strip()`` as in mmf's ``STVQAANLSEvaluator``): a distance of exactly 0.5 scores **0**.
        ``"pix2struct"`` (pix2struct metrics.py ``anls_metric`` at bd70460, ``1 - NL if NL <= theta else 0``;
        ``aggregate_metrics`` lower-cases both sides with no strip): exactly 0.5 **keeps** 0.5, and leading or
        trailing spaces count as edits.
        ``"mmf_stvqa"`` (m4c_evaluators.py ``STVQAANLSEvaluator.get_anls`` at 2dc099a): ``lower().strip()``,
        similarity kept when ``1 - NL >= 0.5``, so exactly 0.5 is kept.
        ``"vlmevalkit"`` (VLMEvalKit ``anls_compute`` + ``hit_calculate`` at e5266a1, the DocVQA/RRC-style rule):
        the distance is taken between ``" ".join(s.strip().lower().split())`` forms, but divided by
        ``max(len(raw_ref.upper()), len(raw_pred.upper()))`` of the *unnormalized* strings; the best similarity
        is kept when ``>= 0.5``. Padding a prediction with spaces therefore lowers its distance.

    When both normalized strings are empty the distance is taken as 0 (score 1.0), the RRC/VLMEvalKit convention;
    pix2struct and mmf would raise ``ZeroDivisionError`` there.

    Args:
        prediction: The model's answer.
        answers: One reference string or a sequence of references.
        threshold: The paper's tau on the normalized *distance*. Variants whose script compares the similarity
            (``"mmf_stvqa"``, ``"vlmevalkit"``) keep a score when ``1 - NL >= 1 - threshold``, which is their rule
            exactly at the default 0.5.
        variant: Which scorer to reproduce.

    Returns:
        A score in [0, 1]: 0, or a value in (1 - threshold, 1] (``[1 - threshold, 1]`` for the variants that keep
        the boundary).

    Raises:
        TypeError: If a reference is not a string.
        ValueError: If there are no references, the threshold is outside [0, 1], or ``variant`` is unknown.
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold}")
    refs = _reference_list(answers)
    if variant == "paper":
        pred = prediction.lower().strip()
        # s(NL) is non-increasing in NL, so the max over references is s(min NL): one score, same float. With
        # ``score_cutoff`` rapidfuzz returns the same NL up to the threshold and 1.0 above it (documented): both
        # score as before, and a hopeless pair can stop early.
        if len(refs) == 1:
            nl = _normalized_distance(refs[0].lower().strip(), pred, score_cutoff=threshold)
        else:
            nl = min([_normalized_distance(r.lower().strip(), pred, score_cutoff=threshold) for r in refs])
        return 1.0 - nl if nl < threshold else 0.0
    if variant == "pix2struct":
        pred = prediction.lower()
        nl = min(_normalized_distance(r.lower(), pred, score_cutoff=threshold) for r in refs)
        return 1.0 - nl if nl <= threshold else 0.0
    if variant == "mmf_stvqa":
        pred = prediction.lower().strip()
        similarities = (1.0 - _nl(r.lower().strip(), pred) for r in refs)
        return max((s if s >= 1.0 - threshold else 0.0) for s in similarities)
    if variant == "vlmevalkit":
        pred = " ".join(prediction.strip().lower().split())
        best = 1.0 - min(_nl(" ".join(r.strip().lower().split()), pred, r.upper(), prediction.upper()) for r in refs)
        return best if best >= 1.0 - threshold else 0.0
    raise ValueError(_unknown_variant(variant, ANLS_VARIANTS))


def relaxed_accuracy(
    prediction: str,
    target: str | Sequence[str],
    *,
    tolerance: float = 0.05,
    variant: RelaxedVariant = "pix2struct",
) -> float:
    """ChartQA relaxed accuracy of one prediction: 1.0 if it is relaxed-correct for any target, else 0.0.

    Reference rule (pix2struct metrics.py ``relaxed_correctness(target, prediction)`` at bd70460, applied per
    target with ``max`` in ``aggregate_metrics``, strings passed unmodified): a string is read as a number with
    Python ``float()`` (which accepts surrounding whitespace, "1e3", "1_000", "nan" and "inf" but not "1,000");
    a string ending in "%" is read as ``float(s.rstrip("%")) / 100``, so "50%" equals "0.5" but not "50". If the
    prediction parses and the target parses to a *non-zero* number, the answer is correct when
    ``abs(pred - target) / abs(target) <= tolerance`` (a "nan" target is therefore never correct). Otherwise -
    a non-number on either side, or a target of 0 - the answer is correct only on case-insensitive string
    equality: for target "0", "0" is correct but "0.0" and "0.01" are not, and "1,000" does not match "1000".

    Variants:
        ``"pix2struct"`` (default): the reference rule above.
        ``"qwenvl"`` (Qwen-VL ``evaluate_relaxed_accuracy`` at cfe66a7): calls
        ``relaxed_correctness(prediction.strip(), gold)`` - prediction and target *swapped* - so the tolerance
        is relative to the prediction and the zero/non-number test applies to the prediction (gold 100 with
        prediction 95.2 passes the reference rule, 4.8%, but fails here, 5.04%).
        ``"vlmevalkit"`` (VLMEvalKit ``process_line`` method ``relaxed_accuracy`` at e5266a1): the same swap and
        strip, and a target that is a Python list literal ("[2014, 2016]") is expanded into its elements, each
        compared via ``str()``. VLMEvalKit uses ``eval``; here ``ast.literal_eval`` is used, so only literal
        lists are expanded (non-literal expressions such as "[1+1]" stay strings). This is the rule until
        2025-09-01; it reproduces VILA1.5-13B's published ChartQA 42.88.
        ``"vlmevalkit_677e30a5"`` (VLMEvalKit after its fix of 2025-09-01, commit 677e30a5, PR #1204 "correct
        relaxed correctness parameter order"): ``relaxed_correctness(target, prediction.strip())`` - the
        reference argument order of pix2struct, tolerance relative to the target - with the stripped
        prediction and the list-literal gold expansion kept.

    Args:
        prediction: The model's answer.
        target: One gold answer or a sequence of gold answers.
        tolerance: The maximum relative change (ChartQA: 0.05, i.e. 5%).
        variant: Which scorer to reproduce.

    Returns:
        1.0 or 0.0.

    Raises:
        TypeError: If a target is not a string.
        ValueError: If there is no target (including a "[]" target expanded by ``"vlmevalkit"``), the tolerance
            is negative, or ``variant`` is unknown.
    """
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance}")
    refs = _reference_list(target)
    if variant == "pix2struct":
        hit = any(_relaxed_correctness(t, prediction, tolerance) for t in refs)
    elif variant == "qwenvl":
        hit = any(_relaxed_correctness(prediction.strip(), t, tolerance) for t in refs)
    elif variant == "vlmevalkit":
        expanded = _reference_list([g for t in refs for g in _expand_list_literal(t)])
        hit = any(_relaxed_correctness(prediction.strip(), t, tolerance) for t in expanded)
    elif variant == "vlmevalkit_677e30a5":
        expanded = _reference_list([g for t in refs for g in _expand_list_literal(t)])
        hit = any(_relaxed_correctness(t, prediction.strip(), tolerance) for t in expanded)
    else:
        raise ValueError(_unknown_variant(variant, RELAXED_VARIANTS))
    return 1.0 if hit else 0.0


def exact_match(
    prediction: str,
    answers: str | Sequence[str],
    *,
    variant: ExactMatchVariant = "pix2struct",
) -> float:
    """Exact match of one prediction: 1.0 if it equals any reference, else 0.0.

    Variants:
        ``"pix2struct"`` (default; pix2struct metrics.py ``pix2struct_metrics`` at bd70460, ``x == y`` with the
        identity normalization, max over targets): case, spaces and punctuation all count.
        ``"vlmevalkit"`` (VLMEvalKit ``process_line`` method ``accuracy`` at e5266a1; Qwen-VL
        ``evaluate_exact_match_accuracy`` at cfe66a7 is the same): ``strip().lower()`` on both sides.
        ``"mmf_stvqa"`` (m4c_evaluators.py ``STVQAAccuracyEvaluator`` at 2dc099a): ``EvalAIAnswerProcessor`` on both
        sides (:func:`vqaudit.scoring.vqa_normalize.evalai_process`), then membership.

    Args:
        prediction: The model's answer.
        answers: One reference string or a sequence of references.
        variant: Which scorer to reproduce.

    Returns:
        1.0 or 0.0.

    Raises:
        TypeError: If a reference is not a string.
        ValueError: If there are no references or ``variant`` is unknown.
    """
    refs = _reference_list(answers)
    if variant == "pix2struct":
        hit = prediction in refs
    elif variant == "vlmevalkit":
        hit = prediction.strip().lower() in {r.strip().lower() for r in refs}
    elif variant == "mmf_stvqa":
        hit = evalai_process(prediction) in {evalai_process(r) for r in refs}
    else:
        raise ValueError(_unknown_variant(variant, EXACT_MATCH_VARIANTS))
    return 1.0 if hit else 0.0


# ``lev(a, b) / max(len(a), len(b))`` (0.0 for two empty strings) in one C call: rapidfuzz divides the same two
# integers in double precision, so the float is the one ``_nl`` computes.
_normalized_distance = Levenshtein.normalized_distance


def _nl(ref: str, pred: str, ref_for_length: str | None = None, pred_for_length: str | None = None) -> float:
    """Normalized Levenshtein distance; the length may come from other strings (the RRC raw-length quirk)."""
    length = max(
        len(ref if ref_for_length is None else ref_for_length),
        len(pred if pred_for_length is None else pred_for_length),
    )
    if length == 0:
        return 0.0
    return Levenshtein.distance(ref, pred) / length


def _to_float(text: str) -> float | None:
    # pix2struct ``relaxed_correctness._to_float``: "%" suffix means divide by 100; only ValueError is caught.
    try:
        if text.endswith("%"):
            return float(text.rstrip("%")) / 100.0
        return float(text)
    except ValueError:
        return None


def _relaxed_correctness(target: str, prediction: str, max_relative_change: float) -> bool:
    prediction_float = _to_float(prediction)
    target_float = _to_float(target)
    if prediction_float is not None and target_float:  # truthiness: a target of 0.0 falls through
        return abs(prediction_float - target_float) / abs(target_float) <= max_relative_change
    return prediction.lower() == target.lower()


def _expand_list_literal(text: str) -> list[str]:
    # VLMEvalKit ``istype(answer, list)`` then ``eval(answer)``; elements are later passed through ``str()``.
    if "[" not in text:  # early exit: every list literal has a "[" (parsing is the cost of this scorer)
        return [text]
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return [text]
    if isinstance(value, list):
        return [str(v) for v in value]
    return [text]


def _reference_list(answers: str | Sequence[str]) -> list[str]:
    refs = [answers] if isinstance(answers, str) else list(answers)
    if not refs:
        raise ValueError("at least one reference answer is required")
    for ref in refs:
        if not isinstance(ref, str):
            raise TypeError(f"reference answers must be strings, got {type(ref).__name__}")
    return refs


def vlmevalkit_928a95b0_process(text: str) -> str:
    r"""VLMEvalKit ``process_answer`` from commit 928a95b0 on: :func:`vqaeval_process` with its period rule.

    Tabs/newlines to spaces, strip, ``process_punctuation`` with ``(?<!\d)\.(?!\d)`` (see
    :data:`vqaudit.scoring.vqa_normalize.PERIOD_STRIP_928A95B0`), then the digit/article step.
    """
    return process_digit_article(process_punctuation(_tabs_newlines_strip(text), period_strip=PERIOD_STRIP_928A95B0))


def _tabs_newlines_strip(text: str) -> str:
    return text.replace("\n", " ").replace("\t", " ").strip()


def _unknown_variant(variant: str, known: tuple[str, ...]) -> str:
    return f"unknown variant {variant!r}; expected one of {', '.join(known)}"
