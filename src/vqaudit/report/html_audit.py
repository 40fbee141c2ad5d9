"""Short-answer audit folders (``vqaudit audit --out DIR``) in the HTML report: seed 002 Tables 5 and 8.

An audit folder holds ``report.json`` (the Table 13 report) and ``rows.jsonl`` (every layer per row). From them:

- the benchmark score, official and canonical (the "True" layer), per split;
- the contract mix (Table 5): rows, share, official and canonical score per bucket;
- Table 8 (appendix C), per bucket and per subtype within identifier and multi-span: ``n``, Official -> True =
  mean canonical score - mean official score in points (row-weighted, as ``audit-summary``'s Table 4 "auto gap"),
  and Judge FN % = judge-accepted rows / official errors (official score < 1) in percent, where a judge ran.
  The perturbation column (Perturb Delta True) needs a ``vqaudit perturb`` run and is shown as n/a here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.files import read_json
from vqaudit.report.html_cells import data_uri, points, signed_points
from vqaudit.report.html_plots import contract_mix_svg
from vqaudit.report.html_runs import run_labels
from vqaudit.shortanswer.raw_split import raw_split_lines

BUCKET_ORDER = ("scalar", "readout", "identifier", "multi-span", "other-open")


def is_audit_folder(path: Path) -> bool:
    """True for a folder written by ``vqaudit audit`` (``report.json`` and ``rows.jsonl``, no ``run.json``)."""
    return (path / "report.json").is_file() and (path / "rows.jsonl").is_file() and not (path / "run.json").is_file()


@dataclass(frozen=True)
class AuditRow:
    """The fields of one ``rows.jsonl`` line the tables use (scores in [0, 1])."""

    bucket: str
    subtype: str | None
    official: float
    canonical: float
    judge: bool | None


@dataclass(frozen=True)
class Audit:
    """One audit folder: its report (``report.json``) and rows."""

    folder: Path
    report: dict[str, Any]
    rows: tuple[AuditRow, ...]

    @property
    def judged(self) -> bool:
        """Whether a judge ran (``report.json`` has a judge layer)."""
        return isinstance(self.report.get("judge"), dict)


def _score(value: object, path: Path, row: int, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= float(value) <= 1.0:
        raise VqauditError(f"{path}: row {row}, field {field!r}: expected a score in [0, 1]")
    return float(value)


def load_audit(folder: Path) -> Audit:
    """Read an audit folder.

    Raises:
        VqauditError: ``report.json`` is not an object, or a row of ``rows.jsonl`` is not JSON or lacks a field
            (the message names the file, the 1-based row and the field).
    """
    report = read_json(folder / "report.json")
    if not isinstance(report, dict):
        raise VqauditError(f"{folder / 'report.json'}: expected a JSON object")
    path = folder / "rows.jsonl"
    rows = []
    with path.open(encoding="utf-8") as handle:
        for n, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                raise VqauditError(f"{path}: row {n}: not valid JSON") from None
            if not isinstance(rec, dict) or not isinstance(rec.get("bucket"), str):
                raise VqauditError(f"{path}: row {n}, field 'bucket': expected a string")
            subtype, judge = rec.get("subtype"), rec.get("judge")
            if subtype is not None and not isinstance(subtype, str):
                raise VqauditError(f"{path}: row {n}, field 'subtype': expected a string or null")
            if judge is not None and not isinstance(judge, bool):
                raise VqauditError(f"{path}: row {n}, field 'judge': expected true, false or null")
            rows.append(
                AuditRow(
                    bucket=rec["bucket"],
                    subtype=subtype,
                    judge=judge,
                    official=_score(rec.get("official"), path, n, "official"),
                    canonical=_score(rec.get("canonical"), path, n, "canonical"),
                )
            )
    return Audit(folder=folder, report=report, rows=tuple(rows))


@dataclass(frozen=True)
class SubtypeRow:
    """One line of Table 8: ``gap_pp`` in points, ``fn_pct`` in percent (NaN: no judge, or no errors)."""

    parent: str
    subtype: str | None
    n: int
    official: float
    canonical: float
    gap_pp: float
    errors: int
    judge_accepted: int
    fn_pct: float


def _line(parent: str, subtype: str | None, rows: Sequence[AuditRow], judged: bool) -> SubtypeRow:
    n = len(rows)
    official = sum(r.official for r in rows) / n * 100.0
    canonical = sum(r.canonical for r in rows) / n * 100.0
    errors = sum(r.official < 1.0 for r in rows)
    accepted = sum(r.official < 1.0 and r.judge is True for r in rows)
    fn = 100.0 * accepted / errors if judged and errors else math.nan
    return SubtypeRow(parent, subtype, n, official, canonical, canonical - official, errors, accepted, fn)


def subtype_table(audit: Audit) -> list[SubtypeRow]:
    """Table 8 lines: each bucket (``subtype`` None), then its subtypes, buckets in the taxonomy's order."""
    buckets = sorted(
        {r.bucket for r in audit.rows},
        key=lambda b: (BUCKET_ORDER.index(b) if b in BUCKET_ORDER else len(BUCKET_ORDER), b),
    )
    lines = []
    for bucket in buckets:
        rows = [r for r in audit.rows if r.bucket == bucket]
        lines.append(_line(bucket, None, rows, audit.judged))
        for subtype in sorted({r.subtype for r in rows if r.subtype is not None}):
            lines.append(_line(bucket, subtype, [r for r in rows if r.subtype == subtype], audit.judged))
    return lines


def audit_sections(audits: Sequence[Audit]) -> list[dict[str, Any]]:
    """Seed 002 per audit folder: the score per split, the contract mix (Table 5) and Table 8."""
    sections = []
    labels = run_labels([a.folder for a in audits]) if audits else []
    for audit, label in zip(audits, labels, strict=True):
        rep = audit.report
        mix = _obj(rep, "contract_mix")
        shares = {
            b: float(m["share"]) / 100.0
            for b, m in sorted(mix.items(), key=lambda kv: _bucket_rank(kv[0]))
            if isinstance(m, dict) and isinstance(m.get("share"), int | float)
        }
        scores, canonical, judge = _obj(rep, "scores"), _obj(rep, "canonical_scores"), _obj(rep, "judge")
        sections.append(
            {
                "label": label,
                "benchmark": str(rep.get("benchmark", "?")),
                "model": str(rep.get("model", "?")),
                "metric": f"{rep.get('metric', '?')} ({rep.get('variant', '?')})",
                "judge": str(judge.get("spec")) if judge else None,
                "scores": [(split, points(scores.get(split), 2), points(canonical.get(split), 2)) for split in scores],
                "mix": [
                    (
                        b,
                        m.get("n"),
                        points(m.get("share")),
                        points(m.get("official"), 2),
                        points(m.get("canonical"), 2),
                    )
                    for b, m in sorted(mix.items(), key=lambda kv: _bucket_rank(kv[0]))
                    if isinstance(m, dict)
                ],
                "mix_plot": data_uri("image/svg+xml", contract_mix_svg(f"{label}: contract mix", shares))
                if shares
                else None,
                "table8": [
                    {
                        "parent": r.parent,
                        "subtype": r.subtype,
                        "n": r.n,
                        "gap": signed_points(r.gap_pp),
                        "fn": points(r.fn_pct),
                        "errors": r.errors,
                        "accepted": r.judge_accepted,
                    }
                    for r in subtype_table(audit)
                ],
                # appendix A, the gold file's metadata: the lines of report.md without their bullets
                "raw_split": [line.removeprefix("- ") for line in raw_split_lines(_raw_split(rep))],
            }
        )
    return sections


def _raw_split(report: dict[str, Any]) -> dict[str, Any] | None:
    """``report.json``'s ``raw_split`` (None: written before it existed, or not computed)."""
    value = report.get("raw_split")
    return value if isinstance(value, dict) else None


def _obj(mapping: dict[str, Any], key: str) -> dict[str, Any]:
    value = mapping.get(key)
    return value if isinstance(value, dict) else {}


def _bucket_rank(bucket: str) -> tuple[int, str]:
    return (BUCKET_ORDER.index(bucket) if bucket in BUCKET_ORDER else len(BUCKET_ORDER), bucket)
