"""The judge's validation against human labels (seed 002 §3.3, Table 2 upper block, App. F).

Over the labelled questions of the judged error pool with a decided verdict, the judge's "acceptable" verdicts
are compared with the human labels (the reference): ``tp`` both accept, ``fp`` the judge accepts what the human
rejects, ``fn`` the reverse, ``tn`` both reject. From the counts (:func:`vqaudit.shortanswer.judge.
agreement_from_counts`): precision ``tp / (tp + fp)``, recall ``tp / (tp + fn)``, agreement and Cohen's kappa
(Table 2: 97.6%, 95.5%, 0.917 on 570 items).

Table 2 also gives the precision's 95% interval (95.3-98.8) and the precision per contract bucket (other-open
95.1%, scalar 97.6%, readout 100%, identifier 100%, multi-span 97.1%; §3.3 "Judge precision remains high in
every bucket"). The interval is the Wilson score interval over the ``tp + fp`` items the judge accepted
(:func:`vqaudit.metrics.proportion.wilson_interval`, where the choice is backed out from the paper's numbers);
each bucket's precision, with its own interval, is over the accepted items of that bucket, the bucket being the
row's contract (:mod:`vqaudit.scoring.contracts`). A bucket where the judge accepted no labelled item has no
precision (NaN, null in JSON).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.metrics.proportion import wilson_interval
from vqaudit.scoring.contracts import BUCKETS
from vqaudit.shortanswer.judge import agreement_from_counts

CONFIDENCE = 0.95
"""Coverage of the precision intervals (Table 2 "Precision 95% CI")."""

INTERVAL_METHOD = "wilson"
"""The interval recorded beside the precision (``precision_ci_method`` in ``report.json``)."""


def precision_interval(tp: int, fp: int) -> tuple[float, float]:
    """The 95% Wilson interval of the precision ``tp / (tp + fp)`` (fractions); ``(nan, nan)`` if none accepted."""
    return wilson_interval(tp, tp + fp, CONFIDENCE)


def _counts(pairs: list[tuple[bool, bool]]) -> tuple[int, int, int, int]:
    tp = sum(1 for j, h in pairs if j and h)
    fp = sum(1 for j, h in pairs if j and not h)
    fn = sum(1 for j, h in pairs if not j and h)
    return tp, fp, fn, len(pairs) - tp - fp - fn


def bucket_precision(tp: int, fp: int, fn: int, tn: int) -> dict[str, Any]:
    """One bucket's block: its counts, ``n`` (labelled items), ``accepted`` (``tp + fp``), precision and interval.

    Precision and interval are fractions in [0, 1], NaN when the judge accepted none of the bucket's items.
    """
    low, high = precision_interval(tp, fp)
    return {
        "n": tp + fp + fn + tn,
        "accepted": tp + fp,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "precision": tp / (tp + fp) if tp + fp else math.nan,
        "precision_ci": [low, high],
    }


def validate_judge(
    verdicts: Mapping[str, bool | None],
    human: Mapping[str, bool],
    buckets: Mapping[str, str],
    labels_path: Path,
    *,
    joined: Collection[str] | None = None,
) -> dict[str, Any]:
    """Precision (with its 95% interval, overall and per bucket), recall, agreement and kappa against human labels.

    Args:
        verdicts: the judge's verdicts over the error pool, ``qid -> True | False | None`` (undecided: left out).
        human: the human labels, ``qid -> acceptable`` (:func:`vqaudit.shortanswer.judge.read_labels`); labels
            of questions outside the judged pool are ignored.
        buckets: ``qid -> contract bucket`` of every judged row.
        labels_path: the labels file, named in the error.
        joined: the qids of every joined row (the audit's); with it, labels that are not compared are counted in
            ``labels_not_compared`` (only when there are any, so a file whose labels all count gives the block
            it gave before).

    Returns:
        JSON-ready: ``n``, ``tp``/``fp``/``fn``/``tn``, ``precision``, ``recall``, ``agreement``, ``kappa``
        (fractions; NaN when undefined), ``precision_ci`` ``[low, high]`` (fractions), ``precision_ci_method``
        (``"wilson"``) and ``by_bucket``: every bucket of :data:`~vqaudit.scoring.contracts.BUCKETS` ->
        :func:`bucket_precision`'s block; ``labels_not_compared`` (with ``joined``, when some label is not
        compared): ``officially_correct`` (labels of rows the official metric credits), ``undecided`` (of errors
        without a verdict), ``unknown`` (ids of no joined row: a typo, another file's ids) and ``unknown_example``.

    Raises:
        VqauditError: no labelled question has a decided verdict (naming the labels file).
    """
    pairs = {q: (bool(v), human[q]) for q, v in verdicts.items() if q in human and v is not None}
    if not pairs:
        decided = [q for q, v in verdicts.items() if v is not None]
        # show one id of each side: a label id written as "2.0" or " 2 " never equals the pool's "2"
        label_id = next(iter(human), None)
        pool = f"e.g. {decided[0]!r}" if decided else "none"
        raise VqauditError(
            f"{labels_path}: no labelled question is in the judged error pool ({len(human)} labels, e.g. question id "
            f"{label_id!r}; {len(decided)} official errors with a decided verdict, {pool}; labels of officially "
            "correct rows are not compared)"
        )
    stats = agreement_from_counts(*_counts(list(pairs.values())))
    low, high = precision_interval(stats.tp, stats.fp)
    out: dict[str, Any] = {
        "n": stats.n,
        "precision": stats.precision,
        "recall": stats.recall,
        "kappa": stats.kappa,
        "agreement": stats.agreement,
        "tp": stats.tp,
        "fp": stats.fp,
        "fn": stats.fn,
        "tn": stats.tn,
        "precision_ci": [low, high],
        "precision_ci_method": INTERVAL_METHOD,
        "by_bucket": {b: bucket_precision(*_counts([p for q, p in pairs.items() if buckets[q] == b])) for b in BUCKETS},
    }
    if joined is not None and len(pairs) < len(human):
        known = set(joined)
        unknown = [q for q in human if q not in known]
        out["labels_not_compared"] = {
            "officially_correct": sum(1 for q in human if q in known and q not in verdicts),
            "undecided": sum(1 for q in human if q in verdicts and verdicts[q] is None),
            "unknown": len(unknown),
            "unknown_example": unknown[0] if unknown else None,
        }
    return out


def pooled_precision(
    tp: int, fp: int, by_bucket: Sequence[Mapping[str, tuple[int, int, int, int]] | None], notes: list[str]
) -> dict[str, Any]:
    """Pooled precision interval and per-bucket precision over several validated audits (``vqaudit audit-summary``).

    Args:
        tp: pooled judge-and-human acceptances (the audits' ``tp`` summed).
        fp: pooled judge acceptances the humans rejected.
        by_bucket: each audit's per-bucket ``(tp, fp, fn, tn)``, or None for an audit that did not record them
            (a ``report.json`` written before they were).
        notes: where the reason per-bucket precision is not pooled is appended.

    Returns:
        ``precision_ci_pct`` ``[low, high]`` (percent) and ``by_bucket``: bucket -> ``n``, ``accepted``, the four
        counts summed over the audits, ``precision_pct`` and ``precision_ci_pct`` (percent; NaN when the judge
        accepted none of the bucket's items); ``by_bucket`` is empty when some audit has no per-bucket counts.
    """
    low, high = precision_interval(tp, fp)
    out: dict[str, Any] = {"precision_ci_pct": [100.0 * low, 100.0 * high], "by_bucket": {}}
    if any(counts is None for counts in by_bucket):
        notes.append(
            "Table 2 per-bucket judge precision is not pooled: some report.json has no per-bucket validation "
            "counts (written by an older vqaudit); rerun its audit with --labels"
        )
        return out
    for b in BUCKETS:
        summed = [sum(counts[b][k] for counts in by_bucket if counts is not None) for k in range(4)]
        block = bucket_precision(*summed)
        block["precision_pct"] = 100.0 * block.pop("precision")
        block["precision_ci_pct"] = [100.0 * x for x in block.pop("precision_ci")]
        out["by_bucket"][b] = block
    return out
