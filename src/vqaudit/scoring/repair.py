"""CPU-only contract repair: output-only, reference-only and bidirectional (seed 002 §5.4, Table 7, appendix D).

- **Output-only** (:func:`repair_output`): a conservative, gold-blind rewrite of the model output, routed by the
  item's contract bucket: every bucket loses answer wrappers ("The answer is"), enclosing quotes/asterisks and
  trailing punctuation, and Unicode dashes become ``-``; a *scalar* item whose output is a sentence (at least
  :data:`SENTENCE_WORDS` words, and not itself a date) holding
  exactly one number keeps that number (a leading "Yes,"/"No," keeps yes/no); an *identifier* item whose output
  holds exactly one code-shaped token keeps that token. Nothing else is touched.
- **Reference-only** (:func:`reference_overlay`): contract-aware canonical forms of each gold answer, kept as
  *new overlay columns* beside the original gold (never an overwrite, appendix D): dash/trailing-punctuation
  clean-ups; number forms without (or with) thousands separators; ``45%`` <-> ``45`` for percent gold (or
  percent questions); ``C-5`` -> ``C5``, ``C 5``; list golds as ``A, B`` / ``A and B`` / ``B and A``. The model
  output is never changed. A list gold needs an explicit separator (``, ; / &``) and is not one entity
  (:func:`vqaudit.scoring.canonical.is_single_entity`): "Procter and Gamble" or "Food and Drug Administration"
  are never split at "and", and a list form that would delete or add a word (other than the joiner "and") is
  dropped (an overlay never deletes a word inside a multi-word span).
- **Bidirectional**: both at once, in the same benchmark-native comparison.

Scoring re-applies the *official* metric (:func:`vqaudit.scoring.overlay_score.score_with_overlay`): an overlay
form counts as a form of its source reference, so VQA accuracy still counts annotators (a prediction matching an
alias of answer ``j`` matches annotator ``j``) and the others take the max over references and overlays.
Reference-only repair can therefore never lower a score.

Counting (Table 7): a row is *correct* when its score is 1, an *error* otherwise (graded metrics put partial
credit in the pool). ``recovered`` = errors that become correct; ``breaks`` = correct rows that become errors;
``net = recovered - breaks``; gain in points = 100 x (mean after - mean before); with a judge, the judge false
negatives (judge-accepted errors) that the repair recovers (:mod:`vqaudit.scoring.repair_counts`). Scoring against
the widened gold is :mod:`vqaudit.scoring.overlay_score`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from vqaudit.scoring.columns import gc_paused, repeated_rows
from vqaudit.scoring.contracts import Contract
from vqaudit.scoring.official_batch import official_scores
from vqaudit.scoring.output_repair import _NUM_TOKEN as _NUM_TOKEN  # re-exported (tests read it here)
from vqaudit.scoring.output_repair import SENTENCE_WORDS as SENTENCE_WORDS
from vqaudit.scoring.output_repair import repair_output as repair_output
from vqaudit.scoring.output_repair import repair_outputs
from vqaudit.scoring.overlay import _DIGIT as _DIGIT  # re-exported (tests read them here)
from vqaudit.scoring.overlay import _LIST_MARK as _LIST_MARK
from vqaudit.scoring.overlay import _PERCENT_Q as _PERCENT_Q
from vqaudit.scoring.overlay import Overlay as Overlay
from vqaudit.scoring.overlay import _may_be_number as _may_be_number
from vqaudit.scoring.overlay import _overlay_one as _overlay_one
from vqaudit.scoring.overlay import _overlay_spans as _overlay_spans
from vqaudit.scoring.overlay import _percent_question as _percent_question
from vqaudit.scoring.overlay import _words as _words
from vqaudit.scoring.overlay import reference_overlay as reference_overlay
from vqaudit.scoring.overlay import reference_overlays as reference_overlays
from vqaudit.scoring.overlay_score import ANLS_STRIP, Futility, futility, widened_score
from vqaudit.scoring.registry import scorer_identity

VARIANTS: tuple[str, ...] = ("output-only", "reference-only", "bidirectional")


def repair_scores(
    predictions: Sequence[str],
    answers: Sequence[Sequence[str]],
    questions: Sequence[str],
    contracts: Sequence[Contract],
    metric: str,
    variant: str,
    scorer: Callable[[str, Sequence[str]], float],
    variants: Sequence[str] = VARIANTS,
    *,
    official: Sequence[float] | None = None,
    overlays_given: Sequence[Overlay] | None = None,
) -> Mapping[str, list[float]]:
    """Scores of every row under each repair variant (same order as the inputs).

    A row's repaired scores are a pure function of (prediction, answers, question, bucket), so rows made of the
    same objects as an earlier row (a resampled pool) are computed once
    (:func:`vqaudit.scoring.columns.repeated_rows`; measured: finding rows of equal values by hashing every row
    cost the cold benchmark pool three times what its few equal rows saved). The cyclic garbage collector is
    paused meanwhile (the pass keeps every object it makes alive and makes no reference cycle, so the collector
    would only rescan them).

    Args:
        predictions: model outputs.
        answers: gold answers per row.
        questions: question texts.
        contracts: contract per row.
        metric: official metric name.
        variant: its variant.
        scorer: the official scorer.
        variants: which of :data:`VARIANTS` to compute.
        official: ``scorer(prediction, answers)`` of every row, when the caller has it (e.g. from
            :func:`vqaudit.scoring.official_batch.official_scores`): an output the rewrite leaves unchanged is
            then not scored again.
        overlays_given: :func:`reference_overlay` of every row, when the caller has it (else each is built
            only for a row the plain comparison does not accept and whose overlay could raise its score).

    Returns:
        ``{variant: [score per row]}`` for the requested variants.
    """
    with gc_paused():
        if not len(predictions) == len(answers) == len(questions) == len(contracts):
            raise ValueError("predictions, answers, questions and contracts must have one entry per row")
        # Rows made of the same objects as an earlier row are computed once (``where[k]``: that first row).
        shared = repeated_rows(answers, predictions, questions, contracts)
        distinct = shared is None
        firsts: Sequence[int] = range(len(predictions)) if shared is None else shared[0]
        where = [] if shared is None else shared[1]
        preds = list(predictions) if distinct else [predictions[k] for k in firsts]
        golds = [a if type(a) is tuple else tuple(a) for a in (answers if distinct else [answers[k] for k in firsts])]
        asked = list(questions) if distinct else [questions[k] for k in firsts]
        contract_of = list(contracts) if distinct else [contracts[k] for k in firsts]
        repaired = repair_outputs(preds, [c.bucket for c in contract_of])
        futile = futility(metric, variant, scorer)
        is_official = scorer_identity(scorer) == (metric, variant)
        overlays: dict[int, Overlay] = {}
        out: dict[str, list[float]] = {}
        if official is not None:
            before = list(official) if distinct else [official[k] for k in firsts]
        else:
            before = _scores(preds, golds, metric, variant, scorer, is_official)
        given = (
            None
            if overlays_given is None
            else (list(overlays_given) if distinct else [overlays_given[k] for k in firsts])
        )
        anls_strip = ANLS_STRIP.get(variant) if futile is not None else None
        rescored: list[float] | None = None  # the rewritten outputs' plain scores (output-only, bidirectional)
        for v in variants:
            if v == "reference-only":
                targets, values = preds, list(before)
            else:
                targets = repaired
                if rescored is None:
                    # Only an output the rewrite changed is scored again (in one batch for the official scorer).
                    rescored = list(before)
                    changed = [i for i, (t, p) in enumerate(zip(repaired, preds, strict=True)) if t != p]
                    if changed:
                        fresh = _scores(
                            [repaired[i] for i in changed],
                            [golds[i] for i in changed],
                            metric,
                            variant,
                            scorer,
                            is_official,
                        )
                        for i, value in zip(changed, fresh, strict=True):
                            rescored[i] = value
                values = list(rescored)
            if v != "output-only":
                need = []
                for i, base in enumerate(values):
                    if base >= 1.0:
                        continue
                    if anls_strip is not None:
                        # overlay_too_short, inline: no overlay form can score above 0 under official ANLS.
                        refs, target = golds[i], targets[i]
                        if target.isascii():
                            n = len(target.strip() if anls_strip else target)
                        else:
                            n = len(target.lower().strip() if anls_strip else target.lower())
                        if refs and 4 * max(map(len, refs)) + 8 < n and all(map(str.isascii, refs)):
                            continue
                    need.append(i)
                if given is None:
                    todo = [i for i in need if i not in overlays]
                    if todo:
                        overlays.update(
                            zip(
                                todo,
                                reference_overlays(
                                    [golds[i] for i in todo], [contract_of[i] for i in todo], [asked[i] for i in todo]
                                ),
                                strict=True,
                            )
                        )
                overlay_of: Mapping[int, Overlay] | list[Overlay] = overlays if given is None else given
                for i in need:
                    values[i] = widened_score(
                        targets[i], golds[i], overlay_of[i], metric, variant, scorer, values[i], is_official
                    )
            if distinct:
                out[v] = values
            else:
                by_first = dict(zip(firsts, values, strict=True))
                out[v] = [by_first[k] for k in where]
    return out


def _scores(
    predictions: list[str],
    golds: list[tuple[str, ...]],
    metric: str,
    variant: str,
    scorer: Callable[[str, Sequence[str]], float],
    is_official: bool,
) -> list[float]:
    """``scorer`` of every row; the official scorer's floats come from one batch (the same floats)."""
    if is_official:
        return official_scores(predictions, golds, metric, variant)
    return list(map(scorer, predictions, golds))


def repair_row(
    pred: str,
    refs: Sequence[str],
    question: str,
    contract: Contract,
    metric: str,
    variant: str,
    scorer: Callable[[str, Sequence[str]], float],
    variants: Sequence[str] = VARIANTS,
    overlay: Overlay | None = None,
) -> tuple[float, ...]:
    """Scores of one row under each repair variant (module docstring rules).

    Args:
        pred: the model output.
        refs: the gold answers.
        question: the question text.
        contract: the row's contract.
        metric: official metric name.
        variant: its variant.
        scorer: the official scorer.
        variants: which of :data:`VARIANTS` to compute, in this order.
        overlay: the row's :func:`reference_overlay`, when the caller has it; else it is built only for a row
            that the plain comparison does not already accept (and, under ANLS, only when one of its forms could
            score at all: :func:`vqaudit.scoring.overlay_score.overlay_too_short`).

    Returns:
        One score in [0, 1] per requested variant.
    """
    return _repair_row(
        pred,
        refs,
        question,
        contract,
        metric,
        variant,
        scorer,
        variants,
        overlay,
        futility(metric, variant, scorer) if overlay is None else None,
    )


def _repair_row(
    pred: str,
    refs: Sequence[str],
    question: str,
    contract: Contract,
    metric: str,
    variant: str,
    scorer: Callable[[str, Sequence[str]], float],
    variants: Sequence[str],
    overlay: Overlay | None,
    futile: Futility | None,
) -> tuple[float, ...]:
    repaired = repair_output(pred, contract.bucket)
    official = scorer_identity(scorer) == (metric, variant)
    values = []
    for v in variants:
        if v == "output-only":
            values.append(scorer(repaired, refs))
            continue
        target = pred if v == "reference-only" else repaired
        base = scorer(target, refs)
        if base >= 1.0:
            values.append(base)
            continue
        if overlay is None:
            if futile is not None and futile(target, refs):
                values.append(base)  # no overlay form can raise the score (see futility)
                continue
            overlay = reference_overlay(refs, contract, question)
        values.append(widened_score(target, refs, overlay, metric, variant, scorer, base, official))
    return tuple(values)
