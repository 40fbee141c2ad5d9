"""The records of a short-answer audit (seed 002; report layout of Table 13).

What :func:`vqaudit.shortanswer.audit.audit_rows` returns.

:class:`AuditResult` holds every layer's numbers for the report (:mod:`vqaudit.report.shortanswer`); :class:`JudgeAudit`
the judge layer's (§3.3, Tables 2 and 3, appendix G); :class:`ReasoningNotes` what the reasoning split did to the
joined predictions (:mod:`vqaudit.parsing.reasoning`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from vqaudit.scoring.repair_counts import RepairResult
from vqaudit.scoring.unanswerable import UnanswerableMetrics
from vqaudit.shortanswer.audit_columns import RowResult
from vqaudit.shortanswer.failures import FailureNotes
from vqaudit.shortanswer.packed import field_values
from vqaudit.shortanswer.raw_split import RawSplit
from vqaudit.shortanswer.records import AuditRow, JoinReport


@dataclass(frozen=True)
class JudgeAudit:
    """The judge layer (seed 002 §3.3, Table 2, Table 3, appendix G)."""

    spec: str
    pool: int
    accepted: int
    undecided: int
    accepted_share: float
    judged_score: float
    delta: tuple[float, float, float]
    fn_rate_by_bucket: dict[str, float]
    accepted_by_bucket: dict[str, int]
    validation: dict[str, Any] | None = None  # judge_validation.validate_judge
    second: dict[str, Any] | None = None
    unfinished: int = 0  # of the undecided verdicts, judge replies whose reasoning never finished (token budget)


@dataclass(frozen=True)
class ReasoningNotes:
    """Joined predictions of a reasoning model: what the reasoning split did (:mod:`vqaudit.parsing.reasoning`).

    Attributes:
        with_reasoning: rows whose prediction held reasoning (split off, never scored).
        not_finished: rows whose reasoning never finished ("reasoning not finished"): scored as empty answers
            (the failure notes count them as empty), marked ``reasoning_not_finished`` in ``rows.jsonl``.
    """

    with_reasoning: int
    not_finished: int


def reasoning_notes(rows: Sequence[AuditRow]) -> ReasoningNotes | None:
    """The :class:`ReasoningNotes` of joined rows, or None when no prediction held reasoning.

    None keeps the report of predictions without reasoning exactly as it was before the split existed.
    """
    with_reasoning = sum(1 for chars in field_values(rows, "reasoning_chars") if chars is not None)
    if not with_reasoning:
        return None
    return ReasoningNotes(with_reasoning, sum(1 for finished in field_values(rows, "finished") if not finished))


@dataclass(frozen=True)
class AuditResult:
    """Everything the Table 13 report shows (see :mod:`vqaudit.report.shortanswer`)."""

    benchmark: str
    model: str
    metric: str
    variant: str
    n_predictions: int
    join: JoinReport
    scores: dict[str, float]
    canonical_scores: dict[str, float]
    contract_mix: dict[str, dict[str, float]]
    subtypes: dict[str, dict[str, int]]
    canonical_kinds: dict[str, int]
    canonical_lost: int
    ra_eval: dict[str, float]
    repair: tuple[RepairResult, ...]
    repair_by_bucket: dict[str, dict[str, float]]
    failures: FailureNotes
    judge: JudgeAudit | None
    notes: tuple[str, ...]
    rows: Sequence[RowResult] = field(repr=False)  # a RowResults: records built when read
    canonical_lost_causes: dict[str, int] = field(default_factory=dict)  # cause -> rows (REFUSAL_CAUSES)
    # the file's harness and the official scores (by split) of its own variants where they differ from the
    # default variant's: {"harness", "variants": {variant: {split: score}}}; None when nothing differs
    harness_scores: dict[str, Any] | None = None
    answerability: UnanswerableMetrics | None = None  # benchmarks whose row has answerability, gold labelled
    raw_split: RawSplit | None = None  # appendix A, from the gold file's metadata (run_audit); None: not computed

    @cached_property  # one pass over the joined rows, read by report.md and report.json alike
    def reasoning(self) -> ReasoningNotes | None:
        """:func:`reasoning_notes` of the joined rows (None: no prediction held reasoning)."""
        return reasoning_notes(self.join.rows)
