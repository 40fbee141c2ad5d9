"""The report of a multiple-choice prediction audit (``vqaudit audit ... --benchmark mmbench|mmmu|mathvista|mc``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vqaudit.files import atomic_write_set
from vqaudit.markdown import LEFT, RIGHT, table
from vqaudit.shortanswer.multichoice import dumps_rows

_READ_NOTES = {
    ("mathvista", "response"): " (the raw reply; `--read extraction` reproduces MathVista's own extracted answer)",
    ("mathvista", "extraction"): " (MathVista's own extracted answer, scored as its calculate_score.py does; the "
    "default reads the raw `response`)",
}
_OPEN_RULES = {
    "mmmu": "MMMU's rules (parse_open_response, eval_open)",
    "mathvista": "MathVista's rules (answer type, precision, units)",
    "mc": "exact or numeric match",
}


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


def mc_markdown(summary: dict[str, Any]) -> str:
    """``report.md``: choice accuracy over all and over parsed rows, extraction counts, circular, open rows."""
    c = summary["choice"]
    lines = [f"# Multiple-choice audit: {summary['benchmark']}, {summary.get('predictions', '')}", ""]
    defects = summary.get("defects")
    if defects:
        lines += [
            f"**{defects['excluded']} of {defects['of']} rows excluded as defective** (the benchmark's own data "
            "is broken: listed under Defective rows; every number below leaves them out).",
            "",
        ]
    overall = summary.get("overall")
    if overall:
        lines += [
            f"Overall accuracy (choice and open rows together, the benchmark's headline): "
            f"{_pct(overall['accuracy'])} ({overall['correct']} of {overall['rows']}); choice rows "
            f"{_pct(c['accuracy_all'])}, open rows {_pct(summary['open']['accuracy'])}.",
            "",
        ]
    lines += [
        *table(
            ["rows", "parsed", "unparsed", "refusals", "correct", "accuracy (all rows)", "accuracy (parsed rows)"],
            [
                [
                    f"{c['rows']}",
                    f"{c['parsed']}",
                    f"{c['unparsed']}",
                    f"{c['refusals']}",
                    f"{c['correct']}",
                    _pct(c["accuracy_all"]),
                    _pct(c["accuracy_parsed"]),
                ]
            ],
            align=[RIGHT] * 7,
        ),
        "",
        "Extraction: " + ", ".join(f"{k} {n}" for k, n in c["extracted_by"].items()) + ".",
    ]
    if summary.get("read_field"):
        lines += [
            "",
            f"Replies read from the field `{summary['read_field']}`"
            f"{_READ_NOTES.get((summary['benchmark'], summary['read_field']), '')}.",
        ]
    reasoning = summary.get("reasoning")
    if reasoning:
        lines += [
            "",
            f"Reasoning: {reasoning['with_reasoning']} replies held reasoning, split off and never read "
            "(only the final answer is); reasoning not finished (only thinking, never answered: "
            f"unparsed, never credited): {reasoning['not_finished']}.",
        ]
    circ = summary.get("circular")
    if circ:
        sizes = ", ".join(f"{n} with {k} rows" for k, n in circ["rows_per_group"].items())
        lines += [
            "",
            "## Circular evaluation (a question counts only if every circular copy is right)",
            "",
            *table(
                [
                    "questions",
                    "right in every copy",
                    "circular accuracy",
                    "questions fully parsed",
                    "circular accuracy (parsed)",
                ],
                [
                    [
                        f"{circ['groups']}",
                        f"{circ['right']}",
                        _pct(circ["accuracy"]),
                        f"{circ['groups_parsed']}",
                        _pct(circ["accuracy_parsed"]),
                    ]
                ],
                align=[RIGHT] * 5,
            ),
            "",
            f"Questions: {sizes}.",
        ]
    o = summary["open"]
    if o["rows"]:
        lines += [
            "",
            f"## Open (non-choice) rows, {_OPEN_RULES.get(summary['benchmark'], _OPEN_RULES['mc'])}",
            "",
            *table(
                ["rows", "answered", "refusals", "correct", "accuracy"],
                [[f"{o['rows']}", f"{o['answered']}", f"{o['refusals']}", f"{o['correct']}", _pct(o["accuracy"])]],
                align=[RIGHT] * 5,
            ),
        ]
    cats = summary.get("by_category")
    if cats:
        lines += [
            "",
            "## Choice rows by category",
            "",
            *table(
                ["category", "rows", "correct", "accuracy"],
                [[f"{k}", f"{v['rows']}", f"{v['correct']}", _pct(v["accuracy"])] for k, v in cats.items()],
                align=[LEFT, RIGHT, RIGHT, RIGHT],
            ),
        ]
    if defects:
        lines += [
            "",
            "## Defective rows (left out of the score)",
            "",
            *table(
                ["file", "row", "id", "field", "reason"],
                [
                    [f"{d['file']}", f"{d['row']}", f"{d['id']}", f"{d['field']}", _cell(d["reason"])]
                    for d in defects["rows"]
                ],
                align=[LEFT, RIGHT, LEFT, LEFT, LEFT],
            ),
        ]
        lines += ["", "Rows are data rows, 1-based (the header is not counted)."]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


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
    atomic_write_set(
        [(out / "rows.jsonl", [dumps_rows(records)]), (path, [mc_markdown(summary)]), (out / "report.json", [report])]
    )
    return path
