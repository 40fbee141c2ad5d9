"""Multiple-choice prediction audits: MMBench result sheets, MMMU raw replies, MathVista outputs.

``vqaudit audit PREDICTIONS --benchmark mmbench|mmmu|mathvista|mc`` reads one prediction file, extracts the
chosen letter of every choice row from its final answer (a reasoning model's thinking is split off first and
never read) with the reader UPD scoring uses, and scores it; open (non-choice) rows are scored apart, by MMMU's
and MathVista's own rules for those benchmarks, else by exact or numeric match
(:func:`vqaudit.shortanswer.mc_extract.score_open`). Accuracy is reported over all choice rows (an unparsed reply
is wrong) and over parsed rows, side by side (:func:`summarize`), and over choice and open rows together
(``overall``, the headline of MMMU and MathVista; :func:`add_file_fields`). Defective rows (the benchmark's own
data broken) are left out and listed; ``strict`` refuses them (:mod:`vqaudit.shortanswer.mc_read`).

The prediction file is read by :mod:`vqaudit.shortanswer.mc_read` (the layouts); every loader error names the
file, the 1-based row and the field, and nothing is written before the whole file is read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vqaudit.backends import Backend, ModelOptions
from vqaudit.parsing.reasoning import AUTO, NOT_FINISHED
from vqaudit.shortanswer.mc_extract import RowVerdict, extract_choices
from vqaudit.shortanswer.mc_read import read_mc_file
from vqaudit.shortanswer.mc_records import MCFile, MCRow

__all__ = ["add_file_fields", "dumps_rows", "run_mc_audit", "summarize"]


def _share(num: int, den: int) -> float | None:
    return num / den if den else None


def summarize(rows: Sequence[MCRow], verdicts: Sequence[RowVerdict], *, benchmark: str) -> dict[str, Any]:
    """The audit's numbers (``report.json``).

    Returns:
        ``choice``: rows, parsed, unparsed, refusals, correct, ``accuracy_all`` (correct / rows),
        ``accuracy_parsed`` (correct / parsed), ``extracted_by`` counts; ``circular`` (when some group has more
        than one row): groups, groups right in every row, ``accuracy`` (all groups) and ``accuracy_parsed``
        (groups whose every row parsed), rows per group; ``open``: rows, answered, correct, accuracy;
        ``by_category`` (when the file names categories): choice rows, correct, accuracy per category;
        ``reasoning`` (only when some reply held reasoning): ``with_reasoning`` (replies whose thinking was split
        off) and ``not_finished`` (replies that are only thinking, never finished: unparsed, never credited).
    """
    choice = [(r, v) for r, v in zip(rows, verdicts, strict=True) if r.is_choice]
    opened = [(r, v) for r, v in zip(rows, verdicts, strict=True) if not r.is_choice]
    parsed = [(r, v) for r, v in choice if v.extracted is not None]
    correct = sum(v.correct for _, v in choice)
    how: dict[str, int] = {}
    for _, v in choice:
        how[v.extracted_by] = how.get(v.extracted_by, 0) + 1
    out: dict[str, Any] = {
        "benchmark": benchmark,
        "choice": {
            "rows": len(choice),
            "parsed": len(parsed),
            "unparsed": len(choice) - len(parsed),
            "refusals": sum(v.refusal for _, v in choice),
            "correct": correct,
            "accuracy_all": _share(correct, len(choice)),
            "accuracy_parsed": _share(sum(v.correct for _, v in parsed), len(parsed)),
            "extracted_by": dict(sorted(how.items())),
        },
    }
    groups: dict[str, list[RowVerdict]] = {}
    for _, v in choice:
        groups.setdefault(v.group, []).append(v)
    if any(len(g) > 1 for g in groups.values()):
        full = [g for g in groups.values() if all(v.extracted is not None for v in g)]
        right = sum(all(v.correct for v in g) for g in groups.values())
        sizes: dict[str, int] = {}
        for g in groups.values():
            sizes[str(len(g))] = sizes.get(str(len(g)), 0) + 1
        out["circular"] = {
            "groups": len(groups),
            "right": right,
            "accuracy": _share(right, len(groups)),
            "groups_parsed": len(full),
            "accuracy_parsed": _share(sum(all(v.correct for v in g) for g in full), len(full)),
            "rows_per_group": dict(sorted(sizes.items())),
        }
    out["open"] = {
        "rows": len(opened),
        "answered": sum(v.extracted is not None for _, v in opened),
        "refusals": sum(v.refusal for _, v in opened),
        "correct": sum(v.correct for _, v in opened),
        "accuracy": _share(sum(v.correct for _, v in opened), len(opened)),
    }
    cats: dict[str, list[bool]] = {}
    for r, v in choice:
        if r.category:
            cats.setdefault(r.category, []).append(v.correct)
    if cats:
        out["by_category"] = {
            c: {"rows": len(x), "correct": sum(x), "accuracy": sum(x) / len(x)} for c, x in sorted(cats.items())
        }
    with_reasoning = sum(1 for v in verdicts if v.split is not None and v.split.reasoning is not None)
    if with_reasoning:  # only then: the report of replies without reasoning is unchanged
        out["reasoning"] = {
            "with_reasoning": with_reasoning,
            "not_finished": sum(1 for v in verdicts if v.reason == NOT_FINISHED),
        }
    return out


def add_file_fields(summary: dict[str, Any], read: MCFile) -> None:
    """The file's own fields of ``report.json``: the field read, the layout, the defective rows, the overall row.

    ``read_field`` (the reply field read), ``layout``; ``defects`` (only when some row is defective):
    ``{"excluded", "of" (all data rows), "rows": [{file, row, id, field, reason}]}``; ``overall`` (MathVista's and
    MMMU's headline, for those benchmarks and whenever a file has open rows): rows, correct and accuracy over
    choice and open rows together, beside the choice and open accuracies.
    """
    summary["read_field"] = read.read_field
    summary["layout"] = read.layout
    if read.defects:
        summary["defects"] = {
            "excluded": len(read.defects),
            "of": len(read.rows) + len(read.defects),
            "rows": [
                {"file": d.file, "row": d.row, "id": d.qid, "field": d.field, "reason": d.reason} for d in read.defects
            ],
        }
    c, o = summary["choice"], summary["open"]
    if o["rows"] or summary["benchmark"] in ("mmmu", "mathvista"):
        rows, correct = c["rows"] + o["rows"], c["correct"] + o["correct"]
        summary["overall"] = {"rows": rows, "correct": correct, "accuracy": _share(correct, rows)}


def run_mc_audit(
    path: Path,
    benchmark: str,
    *,
    judge: str | None = None,
    judge_backend: Backend | None = None,
    cache_dir: Path | None = None,
    judge_options: ModelOptions | None = None,
    concurrency: int = 8,
    reasoning_format: str = AUTO,
    strict: bool = False,
    read: str | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Read, extract and score a multiple-choice prediction file.

    ``reasoning_format``: which reasoning spans are split off every reply before it is read
    (:mod:`vqaudit.parsing.reasoning`). ``strict``: refuse the file at its first defective row (else defective
    rows are left out of every number and listed, :func:`add_file_fields`). ``read``: ``mathvista`` only, the
    field read (``response``, the default, or ``extraction``; :mod:`vqaudit.shortanswer.mc_read`).

    Returns:
        ``(summary, rows)``: :func:`summarize`'s numbers (plus the file's name and resolved path, the judge) and
        one JSON-ready record per row
        (id, group, gold, extracted, extracted_by, refusal, correct, reply: the reply exactly as read); a reply
        the reasoning split changed also has ``final`` (the text read; null when never finished) and
        ``reasoning_chars``, and one never finished ``unparsed_reason: "reasoning not finished"``.

    Raises:
        VqauditError: see :func:`read_mc_file` and :func:`extract_choices`.
    """
    read_file = read_mc_file(path, benchmark, strict=strict, read=read)
    rows = read_file.rows
    verdicts = extract_choices(
        rows,
        judge=judge,
        judge_backend=judge_backend,
        cache_dir=cache_dir,
        judge_options=judge_options,
        concurrency=concurrency,
        reasoning_format=reasoning_format,
    )
    summary = summarize(rows, verdicts, benchmark=benchmark)
    add_file_fields(summary, read_file)
    summary["predictions"] = path.name
    summary["predictions_file"] = str(path.resolve())  # the overwrite guard tells two files of one name apart
    summary["judge"] = judge
    records = [
        {
            "id": r.qid,
            "group": r.group,
            "kind": "choice" if r.is_choice else "open",
            "gold": r.gold,
            "extracted": v.extracted,
            "extracted_by": v.extracted_by,
            "refusal": v.refusal,
            "correct": v.correct,
            "reply": r.reply,
            **_reasoning_fields(v),
        }
        for r, v in zip(rows, verdicts, strict=True)
    ]
    return summary, records


def _reasoning_fields(verdict: RowVerdict) -> dict[str, Any]:
    """The record fields of a reply the reasoning split changed (none for any other reply)."""
    if verdict.split is None:
        return {}
    fields: dict[str, Any] = {"final": verdict.split.final, "reasoning_chars": verdict.split.reasoning_chars}
    if verdict.reason is not None:
        fields["unparsed_reason"] = verdict.reason
    return fields


def dumps_rows(records: Sequence[dict[str, Any]]) -> str:
    """``rows.jsonl`` text: one JSON object a line."""
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records)
