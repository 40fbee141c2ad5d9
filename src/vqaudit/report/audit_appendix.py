"""``vqaudit audit-summary``'s appendix blocks of seed 002: A (raw split per benchmark) and B (eta squared).

**Appendix A**: each audit's ``report.json`` holds the raw split of its gold file
(:mod:`vqaudit.shortanswer.raw_split`); audits of one benchmark share the gold, so the first audit's is shown per
benchmark (:func:`raw_splits`), and one that differs is noted.

**Appendix B**: eta squared of judge false negatives and of benign flips.

Seed 002 appendix B compares how much of the variance of two 0/1 outcomes three groupings explain
(:mod:`vqaudit.metrics.variance` for eta squared and the numeric / text rule):

- **judge false negative**, one item per official error (official score < 1) with a decided judge verdict
  (undecided verdicts are no verdict, as in the judge layer): 1 when the judge accepts it. Read from each judged
  audit's ``rows.jsonl`` (``official``, ``judge``, ``bucket``, ``answers``) one line at a time, holding only the
  per-cell counts; pooled over every judged audit.
- **benign flip**, one item per (question, benign variant) pair scored under both Base and the variant: 1 when
  official correctness differs from Base (:func:`vqaudit.metrics.variance.benign_flip_cells`). Read from the
  counts each ``vqaudit perturb`` run writes into ``perturbations.json`` (``summary.flip_cells``); pooled over
  the ``--perturb`` runs.

Groupings: ``dataset`` (the audit's or run's benchmark), ``numeric_text`` and ``contract`` (the bucket). Cells of
the same name pool across audits (e.g. every model's TextVQA errors form one ``textvqa`` cell).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.metrics.variance import GROUPINGS, Cells, answer_kind, eta_squared
from vqaudit.report.audit_inputs import AuditInput, PerturbInput


def _row_error(path: Path, row: int, field: str, what: str) -> VqauditError:
    return VqauditError(f"{path}: row {row}, field {field!r}: {what}")


def add_judge_rows(path: Path, dataset: str, cells: Cells) -> int:
    """Count one audit's judge false-negative outcomes from its ``rows.jsonl`` into ``cells``; return the items.

    Streams the file (one line held at a time).

    Raises:
        VqauditError: the file cannot be read, or a line is not JSON or has a mistyped field (file, row, field).
    """
    items = 0
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise VqauditError(f"{path}: cannot read: {exc}") from None
    with handle:
        for row, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                raise VqauditError(f"{path}: row {row}: not valid JSON") from None
            if not isinstance(rec, dict):
                raise VqauditError(f"{path}: row {row}: expected a JSON object")
            official, judge = rec.get("official"), rec.get("judge")
            if official is None or judge is None:  # no score (no gold) or no verdict (not an error, or undecided)
                continue
            if isinstance(official, bool) or not isinstance(official, int | float):
                raise _row_error(path, row, "official", "expected a number or null")
            if not isinstance(judge, bool):
                raise _row_error(path, row, "judge", "expected true, false or null")
            if official >= 1.0:
                continue
            bucket, answers = rec.get("bucket"), rec.get("answers")
            if not isinstance(bucket, str):
                raise _row_error(path, row, "bucket", "expected a string")
            if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
                raise _row_error(path, row, "answers", "expected a list of strings")
            cells.add({"dataset": dataset, "numeric_text": answer_kind(answers), "contract": bucket}, judge)
            items += 1
    return items


def _block(cells: Cells, items: int) -> dict[str, Any]:
    ones = sum(pair[1] for pair in cells.counts.get("dataset", {}).values())
    return {
        "items": items,
        "rate_pct": 100.0 * ones / items if items else math.nan,
        "eta_squared": {g: eta_squared(cells.counts.get(g, {})) for g in GROUPINGS},
        "cells": {g: cells.counts.get(g, {}) for g in GROUPINGS},
    }


def appendix_b(audits: Sequence[AuditInput], perturbs: Sequence[PerturbInput], notes: list[str]) -> dict[str, Any]:
    """The appendix B block: ``{"judge_fn": BLOCK, "flips": BLOCK}`` (module docstring).

    A BLOCK is ``{"items", "rate_pct", "eta_squared": {grouping: value}, "cells": {grouping: {cell: [n,
    ones]}}}``; eta squared is NaN (null in JSON) where undefined (no items, or every outcome equal). What is
    left out, and why, goes into ``notes``.

    Raises:
        VqauditError: a judged audit's ``rows.jsonl`` with a malformed line (named).
    """
    judge = Cells()
    judge_items = 0
    for a in audits:
        if a.judge is None:
            continue
        rows = Path(a.folder) / "rows.jsonl"
        if not rows.is_file():
            notes.append(f"appendix B judge FN: {a.model} on {a.benchmark} ({a.folder}) has no rows.jsonl: left out")
            continue
        judge_items += add_judge_rows(rows, a.benchmark, judge)
    if not any(a.judge is not None for a in audits):
        notes.append("appendix B judge FN: n/a: no audit ran a judge (`vqaudit audit --judge`)")
    flips = Cells()
    flip_items = 0
    for p in perturbs:
        if not p.flip_cells:
            notes.append(
                f"appendix B flips: perturbation run {p.model} on {p.benchmark} ({p.folder}) has no flip counts "
                "(perturbations.json written by an older vqaudit: rerun `vqaudit perturb`): left out"
            )
            continue
        contract = p.flip_cells.get("contract", {})
        pairs, flipped = sum(c[0] for c in contract.values()), sum(c[1] for c in contract.values())
        flips.merge({g: p.flip_cells.get(g, {}) for g in ("numeric_text", "contract")})
        flips.merge({"dataset": {p.benchmark: [pairs, flipped]}})
        flip_items += pairs
    if not perturbs:
        notes.append("appendix B flips: n/a: no perturbation runs given (--perturb FOLDER)")
    return {"judge_fn": _block(judge, judge_items), "flips": _block(flips, flip_items)}


def raw_splits(audits: Sequence[AuditInput], notes: list[str]) -> dict[str, dict[str, Any] | None]:
    """Appendix A per benchmark: the first audit's raw split (None: its report predates it).

    A differing one is noted in ``notes`` (the audits read different gold files).
    """
    out: dict[str, dict[str, Any] | None] = {}
    first: dict[str, AuditInput] = {}
    for a in audits:
        if a.benchmark not in out or (a.raw_split is not None and out[a.benchmark] is None):
            out[a.benchmark], first[a.benchmark] = a.raw_split, a
        elif a.raw_split is not None and a.raw_split != out[a.benchmark]:
            f = first[a.benchmark]
            notes.append(
                f"appendix A, {a.benchmark}: the raw split of {a.model} ({a.folder}) differs from that of "
                f"{f.model} ({f.folder}), so the audits read different gold files; the summary shows {f.model}'s"
            )
    return out
