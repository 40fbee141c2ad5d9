"""The judge layer of the short-answer audit (seed 002 §3.3, Table 2, Table 3, appendix G).

A judge model reads the official error pool (rows scoring below 1): its acceptance share ("Acc. Err." of Table 3),
the judge-corrected score, a paired-bootstrap interval of judge - official (appendix G), its false-negative rate per
contract bucket, validation against human labels and agreement with a second judge (Table 2).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from vqaudit.backends import Backend
from vqaudit.errors import VqauditError
from vqaudit.metrics.flips import judge_delta_interval
from vqaudit.scoring.contracts import BUCKETS, Contract
from vqaudit.shortanswer.audit_columns import mean100
from vqaudit.shortanswer.audit_result import JudgeAudit
from vqaudit.shortanswer.judge import binary_agreement, judge_rows, read_labels, run_judge
from vqaudit.shortanswer.judge_validation import validate_judge
from vqaudit.shortanswer.records import AuditRow


def _share(verdicts: Mapping[str, bool | None]) -> float:
    """The percentage of decided verdicts that accept (NaN when none is decided)."""
    decided = [v for v in verdicts.values() if v is not None]
    return 100.0 * sum(decided) / len(decided) if decided else math.nan


def judge_layer(
    rows: Sequence[AuditRow],
    official: Sequence[float],
    contracts: Sequence[Contract],
    spec: str,
    cache_dir: Path,
    backend: Backend | None,
    labels: Path | None,
    second: str | None,
    second_backend: Backend | None,
    n_draws: int,
    seed: int,
) -> tuple[JudgeAudit, list[bool | None]]:
    """The judge layer over the official error pool (the rows whose official score is below 1).

    Args:
        rows: the joined rows.
        official: each row's official score, in [0, 1].
        contracts: each row's contract (its bucket groups the false-negative rates).
        spec: the judge model spec; its verdicts are cached in ``cache_dir / "judge.sqlite"``.
        cache_dir: folder of the judge caches (a second judge's is ``judge2.sqlite``).
        backend: a ready judge backend (None: built from ``spec``).
        labels: human labels file for the validation (Table 2), or None.
        second: a second judge spec for agreement and kappa (Table 2), or None.
        second_backend: a ready second judge backend (None: built from ``second``).
        n_draws: bootstrap draws for the judge - official interval (appendix G).
        seed: the bootstrap seed.

    Returns:
        The :class:`JudgeAudit` and each row's verdict (None: outside the pool or undecided).

    Raises:
        VqauditError: more than half the pool's verdicts undecided, or bad labels.
    """
    pool = [r for r, s in zip(rows, official, strict=True) if s < 1.0]
    human = read_labels(labels) if labels is not None else None  # a bad labels file is refused before any judge call
    first = judge_rows(pool, spec, cache_dir / "judge.sqlite", backend=backend)
    verdicts = first.verdicts
    per_row = [verdicts.get(r.qid) if s < 1.0 else None for r, s in zip(rows, official, strict=True)]
    # An undecided verdict (a failed call or an unreadable reply) is no verdict: its row leaves the judge-corrected
    # score, the paired interval and the acceptance share's denominator, and is counted apart.
    kept = [s >= 1.0 or v is not None for s, v in zip(official, per_row, strict=True)]
    official_kept = [s for s, k in zip(official, kept, strict=True) if k]
    judged = [1.0 if v else s for s, v, k in zip(official, per_row, kept, strict=True) if k]
    accepted = sum(1 for v in verdicts.values() if v)
    undecided = sum(1 for v in verdicts.values() if v is None)
    n_decided = len(verdicts) - undecided
    if pool and 2 * undecided > len(pool):  # mostly undecided must not read as "0% false negatives"
        raise VqauditError(
            f"judge {spec}: {undecided} of {len(pool)} verdicts are undecided (replies neither yes nor "
            f"no), so its acceptance and false-negative rates would mean nothing; check its replies "
            f"in {cache_dir / 'judge.sqlite'}{first.why_undecided()}"
        )
    fn_rate: dict[str, float] = {}
    fn_count: dict[str, int] = {}
    for bucket in BUCKETS:
        errs = [
            v
            for v, c, s in zip(per_row, contracts, official, strict=True)
            if c.bucket == bucket and s < 1.0 and v is not None
        ]  # decided verdicts only
        fn_count[bucket] = sum(1 for v in errs if v)
        fn_rate[bucket] = 100.0 * fn_count[bucket] / len(errs) if errs else math.nan  # none decided: n/a, not 0%
    validation = None
    if labels is not None and human is not None:
        pool_buckets = {r.qid: c.bucket for r, c, s in zip(rows, contracts, official, strict=True) if s < 1.0}
        joined = [r.qid for r in rows]
        validation = validate_judge(verdicts, human, pool_buckets, labels, joined=joined)
    second_info = None
    if second is not None:
        other = run_judge(pool, second, cache_dir / "judge2.sqlite", backend=second_backend)
        both = [(verdicts[q], other[q]) for q in verdicts if verdicts[q] is not None and other.get(q) is not None]
        agree = binary_agreement([bool(a) for a, _ in both], [bool(b) for _, b in both]) if both else None
        second_info = {
            "spec": second,
            "n": len(both),
            "agreement": agree.agreement if agree else math.nan,
            "kappa": agree.kappa if agree else math.nan,
            "counts": [agree.tp, agree.fp, agree.fn, agree.tn] if agree else None,
            "accepted_share": _share(other),
            "undecided": sum(1 for v in other.values() if v is None),
        }
    delta = judge_delta_interval(official_kept, judged, n_draws=n_draws, seed=seed)
    audit = JudgeAudit(
        spec,
        len(pool),
        accepted,
        undecided,
        100.0 * accepted / n_decided if n_decided else math.nan,
        mean100(judged),
        delta,
        fn_rate,
        fn_count,
        validation,
        second_info,
        first.unfinished,
    )
    return audit, per_row
