"""The report of a multiple-choice prediction audit (``vqaudit audit ... --benchmark mmbench|mmmu|mathvista|mc``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vqaudit.files import atomic_write_set
from vqaudit.markdown import LEFT, RIGHT, table
from vqaudit.shortanswer.multichoice import dumps_rows


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


def mc_markdown(summary: dict[str, Any]) -> str:
    """``report.md``: choice accuracy over all and over parsed rows, extraction counts, circular, open rows."""
    c = summary["choice"]
    lines = [f"# Multiple-choice audit: {summary['benchmark']}, {summary.get('predictions', '')}", "",
             "| rows | parsed | unparsed | refusals | correct | accuracy (all rows) | accuracy (parsed rows) |",
             "|---:|---:|---:|---:|---:|---:|---:|",
             f"| {c['rows']} | {c['parsed']} | {c['unparsed']} | {c['refusals']} | {c['correct']} | "
             f"{_pct(c['accuracy_all'])} | {_pct(c['accuracy_parsed'])} |", "",
             "Extraction: " + ", ".join(f"{k} {n}" for k, n in c["extracted_by"].items()) + "."]
    reasoning = summary.get("reasoning")
    if reasoning:
        lines += ["", f"Reasoning: {reasoning['with_reasoning']} replies held reasoning, split off and never read "
                      "(only the final answer is); reasoning not finished (only thinking, never answered: "
                      f"unparsed, never credited): {reasoning['not_finished']}."]
    circ = summary.get("circular")
    if circ:
        sizes = ", ".join(f"{n} with {k} rows" for k, n in circ["rows_per_group"].items())
        lines += ["", "## Circular evaluation (a question counts only if every circular copy is right)", "",
                  "| questions | right in every copy | circular accuracy | questions fully parsed | "
                  "circular accuracy (parsed) |", "|---:|---:|---:|---:|---:|",
                  f"| {circ['groups']} | {circ['right']} | {_pct(circ['accuracy'])} | {circ['groups_parsed']} | "
                  f"{_pct(circ['accuracy_parsed'])} |", "", f"Questions: {sizes}."]
    o = summary["open"]
    if o["rows"]:
        lines += ["", "## Open (non-choice) rows, exact or numeric match", "",
                  *table(["rows", "answered", "refusals", "correct", "accuracy"],
                         [[f"{o['rows']}", f"{o['answered']}", f"{o['refusals']}", f"{o['correct']}",
                           _pct(o["accuracy"])]], align=[RIGHT] * 5)]
    cats = summary.get("by_category")
    if cats:
        lines += ["", "## Choice rows by category", "",
                  *table(["category", "rows", "correct", "accuracy"],
                         [[f"{k}", f"{v['rows']}", f"{v['correct']}", _pct(v["accuracy"])] for k, v in cats.items()],
                         align=[LEFT, RIGHT, RIGHT, RIGHT])]
    return "\n".join(lines) + "\n"


def write_mc_report(summary: dict[str, Any], records: list[dict[str, Any]], out: Path) -> Path:
    """Write ``rows.jsonl``, ``report.md`` and ``report.json`` into ``out`` as one set; return the Markdown path.

    As the short-answer report (:func:`vqaudit.report.shortanswer.write_audit_report`): all three are rendered to
    temporary files first and then renamed together (:func:`vqaudit.files.atomic_write_set`), ``report.json`` (the
    file the overwrite guard reads) removed first and renamed last, so an audit stopped part-way leaves the previous
    audit whole, never its ``report.json`` beside the new rows (new-user trial: the three files were written one
    after another). ``report.json`` holds the bytes :func:`vqaudit.files.write_json` writes.
    """
    out.mkdir(parents=True, exist_ok=True)
    report = json.dumps(summary, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    path = out / "report.md"
    atomic_write_set([(out / "rows.jsonl", [dumps_rows(records)]), (path, [mc_markdown(summary)]),
                      (out / "report.json", [report])])
    return path
