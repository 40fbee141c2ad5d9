"""Read the folders ``vqaudit audit-summary`` combines: audit ``report.json`` and perturbation ``perturbations.json``.

Each file is parsed into a frozen record holding only what the multi-audit tables of seed 002 need (Tables 2-7);
every field is checked, and a folder without its file, a file that is not JSON, or a missing or mistyped field is
a :class:`~vqaudit.errors.VqauditError` naming the file and the field (as a dotted path, e.g.
``contract_mix.scalar.errors``). Scores are in points (0-100), shares in percent unless said otherwise; a JSON
``null`` (the audit's NaN) becomes ``math.nan``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.report.summary_files import FieldReader, load_folder_file
from vqaudit.scoring.contracts import BUCKETS

REPAIR_VARIANTS: tuple[str, ...] = ("output-only", "reference-only", "bidirectional")
"""The three contract-repair variants of seed 002 Table 7, in its row order."""


@dataclass(frozen=True)
class BucketStats:
    """One bucket of an audit's contract mix: rows, official errors (score < 1), mean scores in points."""

    n: int
    errors: int
    official: float
    canonical: float


@dataclass(frozen=True)
class RepairStats:
    """One repair variant of an audit (Table 7): gain in points, counts of rows recovered and broken."""

    variant: str
    n: int
    gain_pp: float
    errors_before: int
    recovered: int
    breaks: int
    net: int
    judge_fn: int | None
    judge_fn_recovered: int | None


@dataclass(frozen=True)
class SecondJudge:
    """The second judge of an audit (Table 2): decided items both judged, agreement (fraction), acceptance %."""

    spec: str
    n: int
    agreement: float
    accepted_share: float
    counts: tuple[int, int, int, int] | None = None  # (tp, fp, fn, tn), judge 1 against judge 2
    undecided: int = 0  # its undecided verdicts: no verdict, so outside the acceptance share's denominator


@dataclass(frozen=True)
class JudgeStats:
    """An audit's judge layer: error pool size, accepted errors, judged score (points), accepts per bucket."""

    spec: str
    pool: int
    accepted: int
    judged_score: float
    accepted_by_bucket: dict[str, int]
    second: SecondJudge | None
    validated: bool
    validation_counts: tuple[int, int, int, int] | None = None  # (tp, fp, fn, tn) against the human labels
    undecided: int = 0  # undecided verdicts: no verdict, so outside the judge score and the acceptance share
    delta: float | None = None  # judge - official over the rows with a verdict (points), when recorded
    # per contract bucket: (tp, fp, fn, tn) against the human labels; None when not recorded (older report.json)
    validation_by_bucket: dict[str, tuple[int, int, int, int]] | None = None


@dataclass(frozen=True)
class AuditInput:
    """What one audit folder contributes: identity, overall scores (points; NaN without gold), mix, repair, judge."""

    folder: str
    benchmark: str
    model: str
    metric: str
    variant: str
    official: float
    canonical: float
    mix: dict[str, BucketStats]
    repair: tuple[RepairStats, ...]
    repair_by_bucket: dict[str, dict[str, float]]
    judge: JudgeStats | None
    raw_split: dict[str, Any] | None = None  # appendix A (report.json ``raw_split``); None: an older report


@dataclass(frozen=True)
class PerturbInput:
    """What one perturbation folder contributes (Table 4 "Delta True", Table 6); deltas in points."""

    folder: str
    benchmark: str
    model: str
    mean_benign_flip_rate: float
    mean_benign_official_delta: float
    family_official_delta: dict[str, float]
    family_canonical_delta: dict[str, float]
    bucket_n: dict[str, int]
    benign_bucket_canonical_delta: dict[str, float]
    notes: tuple[str, ...]
    flip_cells: dict[str, dict[str, list[int]]] | None = None  # appendix B counts; None: an older run


def _repair(r: FieldReader, i: int) -> RepairStats:
    p = f"repair.{i}"
    return RepairStats(
        r.text(f"{p}.variant"),
        r.count(f"{p}.n"),
        r.number(f"{p}.gain_pp"),
        r.count(f"{p}.errors_before"),
        r.count(f"{p}.recovered"),
        r.count(f"{p}.breaks"),
        r.integer(f"{p}.net"),
        r.maybe_count(f"{p}.judge_fn"),
        r.maybe_count(f"{p}.judge_fn_recovered"),
    )


def _judge(r: FieldReader) -> JudgeStats | None:
    if r.get("judge") is None:
        return None
    second = None
    if r.get("judge.second") is not None:
        second = SecondJudge(
            r.text("judge.second.spec"),
            r.count("judge.second.n"),
            r.number("judge.second.agreement"),
            r.number("judge.second.accepted_share"),
            r.confusion("judge.second.counts"),
            _optional_count(r, "judge.second.undecided"),
        )
    return JudgeStats(
        r.text("judge.spec"),
        r.count("judge.pool"),
        r.count("judge.accepted"),
        r.number("judge.judged_score"),
        {b: r.count(f"judge.accepted_by_bucket.{b}") for b in BUCKETS},
        second,
        r.get("judge.validation", optional=True) is not None,
        r.confusion("judge.validation"),
        _optional_count(r, "judge.undecided"),
        _delta_point(r),
        _validation_by_bucket(r),
    )


def _validation_by_bucket(r: FieldReader) -> dict[str, tuple[int, int, int, int]] | None:
    """Per-bucket confusion counts of the human-label validation; None when absent (written before they were)."""
    if r.get("judge.validation", optional=True) is None or r.get("judge.validation.by_bucket", optional=True) is None:
        return None
    out = {}
    for b in BUCKETS:
        counts = r.confusion(f"judge.validation.by_bucket.{b}")
        if counts is None:
            return None
        out[b] = counts
    return out


def _optional_count(r: FieldReader, dotted: str) -> int:
    return 0 if r.get(dotted, optional=True) is None else r.count(dotted)  # absent in files of older versions


def _delta_point(r: FieldReader) -> float | None:
    delta = r.get("judge.delta", optional=True)
    if isinstance(delta, list) and delta and isinstance(delta[0], int | float) and not isinstance(delta[0], bool):
        return float(delta[0])
    return None


def read_audit(folder: Path) -> AuditInput:
    """Read ``folder/report.json`` written by ``vqaudit audit`` (:func:`vqaudit.report.shortanswer.result_to_json`).

    Args:
        folder: an audit output folder.

    Returns:
        The :class:`AuditInput`; ``official`` and ``canonical`` are the pooled ("Overall") scores, NaN when the
        audit had no gold (e.g. VizWiz test).

    Raises:
        VqauditError: no such folder, no report.json, invalid JSON, or a missing/mistyped field (named).
    """
    r = load_folder_file(folder, "report.json", "not an audit folder; write one with `vqaudit audit ... --out FOLDER`")
    scores = r.get("scores")
    if not isinstance(scores, dict):
        raise VqauditError(f"{r.path}: field 'scores': expected an object")
    has_gold = "Overall" in scores
    mix = {
        b: BucketStats(
            r.count(f"contract_mix.{b}.n"),
            r.count(f"contract_mix.{b}.errors"),
            r.number(f"contract_mix.{b}.official"),
            r.number(f"contract_mix.{b}.canonical"),
        )
        for b in BUCKETS
    }
    repair_list = r.get("repair")
    if not isinstance(repair_list, list):
        raise VqauditError(f"{r.path}: field 'repair': expected a list")
    repair = tuple(_repair(r, i) for i in range(len(repair_list)))
    by_bucket = {b: {v.variant: r.number(f"repair_by_bucket.{b}.{v.variant}") for v in repair} for b in BUCKETS}
    return AuditInput(
        str(folder),
        r.text("benchmark"),
        r.text("model"),
        r.text("metric"),
        r.text("variant"),
        r.number("scores.Overall") if has_gold else math.nan,
        r.number("canonical_scores.Overall") if has_gold else math.nan,
        mix,
        repair,
        by_bucket,
        _judge(r),
        _raw_split(r),
    )


def _raw_split(r: FieldReader) -> dict[str, Any] | None:
    """``raw_split`` (appendix A) with its counts checked; None when absent (an older report) or null."""
    data = r.get("raw_split", optional=True)
    if data is None:
        return None
    r.count("raw_split.questions")
    if r.get("raw_split.ocr") is not None:
        for key in ("questions_with_tokens", "extractable", "not_extractable"):
            r.count(f"raw_split.ocr.{key}")
        r.text("raw_split.ocr.definition")
    if r.get("raw_split.answer_types") is not None:
        r.count("raw_split.answer_types.questions_with_type")
        r.count("raw_split.answer_types.several")
        for part in ("first", "listed"):
            labels = r.get(f"raw_split.answer_types.{part}")
            if not isinstance(labels, dict):
                raise VqauditError(f"{r.path}: field 'raw_split.answer_types.{part}': expected an object")
            for label in labels:
                if "." in label:
                    raise VqauditError(f"{r.path}: field 'raw_split.answer_types.{part}': label {label!r} has a dot")
                r.count(f"raw_split.answer_types.{part}.{label}")
    checked: dict[str, Any] = data
    return checked


def _flip_cells(r: FieldReader) -> dict[str, dict[str, list[int]]] | None:
    """``summary.flip_cells`` (appendix B): grouping -> cell -> [pairs, flips]; None when absent or empty."""
    data = r.get("summary.flip_cells", optional=True)
    if not data:
        return None
    if not isinstance(data, dict):
        raise VqauditError(f"{r.path}: field 'summary.flip_cells': expected an object")
    out: dict[str, dict[str, list[int]]] = {}
    for grouping, cells in data.items():
        if not isinstance(cells, dict):
            raise VqauditError(f"{r.path}: field 'summary.flip_cells.{grouping}': expected an object")
        for cell, pair in cells.items():
            where = f"summary.flip_cells.{grouping}.{cell}"
            ok = isinstance(pair, list) and len(pair) == 2
            ok = ok and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in pair)
            if not ok or pair[1] > pair[0]:
                raise VqauditError(f"{r.path}: field {where!r}: expected [pairs, flips], 0 <= flips <= pairs")
            out.setdefault(grouping, {})[cell] = [pair[0], pair[1]]
    return out


def read_perturbation(folder: Path) -> PerturbInput:
    """Read ``folder/perturbations.json`` written by ``vqaudit perturb``.

    Args:
        folder: a perturbation output folder.

    Returns:
        The :class:`PerturbInput` (flip rate as a fraction in [0, 1], deltas in points, NaN where n/a).

    Raises:
        VqauditError: no such folder, no perturbations.json (runs of older versions wrote only the .md),
            invalid JSON, or a missing/mistyped field (named).
    """
    r = load_folder_file(folder, "perturbations.json", "write one with `vqaudit perturb ... --out FOLDER`")
    s = "summary"
    notes = r.get(f"{s}.notes")
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise VqauditError(f"{r.path}: field '{s}.notes': expected a list of strings")
    return PerturbInput(
        str(folder),
        r.text("benchmark"),
        r.text("model"),
        r.number(f"{s}.mean_benign_flip_rate"),
        r.number(f"{s}.mean_benign_official_delta"),
        {f: r.number(f"{s}.family_official_delta.{f}") for f in ("A", "B")},
        {f: r.number(f"{s}.family_canonical_delta.{f}") for f in ("A", "B")},
        {b: r.count(f"{s}.bucket_n.{b}") for b in BUCKETS},
        {b: r.number(f"{s}.benign_bucket_canonical_delta.{b}") for b in BUCKETS},
        tuple(notes),
        _flip_cells(r),
    )
