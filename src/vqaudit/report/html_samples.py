"""The sample browser's data: one record per (run, group), split into page files beside ``samples.html``.

``samples/index.js`` holds a compact index of every (run, group) row (its source, question, states and per-view
failure flags) that the filters and the search box run on; ``samples/page-NNNNN.js`` hold the full rows, at most
:data:`PAGE_GROUPS` each, loaded only when shown. Chromium refuses ``fetch`` of ``file://`` JSON, so each file is
one call ``vqauditIndex(JSON)`` / ``vqauditPage(N, JSON)`` of a function the page's own script defines: the
payload is a JSON literal (``json.dumps`` with ASCII escapes and ``<``, ``>``, ``&`` escaped), which the browser
script only ever puts into the page as text (``textContent``), never as markup.

Per view a row carries the question, options and gold answers, the model's raw reply (at most
:data:`MAX_REPLY_CHARS` characters shown, the rest counted), the parsed decision, answer and reason, the outcome,
the rule that decided it, and for masked views what justifies the label: a chart certificate's two witness
worlds and mask rectangle (seed 000 §3.2-3.3, appendix D), a photo's mask boxes, a scene's occlusion edit.

A reasoning model's reasoning is shown apart, collapsed (``<details>``), before the raw reply: the split of
:func:`vqaudit.parsing.reasoning.split_reasoning` with the format the run was scored with (``scored.json``) and the
reasoning the server sent apart from the content (``reasoning_content``, kept in ``responses.sqlite`` beside the
reply, never in ``outcomes.jsonl``), so a reply cut while thinking (no content) still shows what it thought.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from vqaudit.errors import VqauditError
from vqaudit.files import atomic_write_text, read_json
from vqaudit.parsing import parse_answerability
from vqaudit.parsing.reasoning import AUTO
from vqaudit.report.html_tables import state_rank
from vqaudit.report.sample_reasoning import StoredReply, reasoning_fields
from vqaudit.schema import Outcome, UPDViewMeta, View

PAGE_GROUPS = 100
MAX_REPLY_CHARS = 4000
MAX_TEXT_CHARS = 2000
SEARCH_CHARS = 400

FLAG_FAIL, FLAG_DECISION, FLAG_ANSWER, FLAG_INVALID, FLAG_ERROR = 1, 2, 4, 8, 16
"""Per-view flags in the index: task failed; decision wrong (a valid reply); answer wrong (decision right);
invalid reply; backend error (no reply)."""

ANSWER_RULES = {
    "number": "exact rational equality",
    "text": "normalized exact string match",
    "choice": "option letter or option text",
}


@dataclass(frozen=True)
class SampleRun:
    """What the browser needs of one scored run: its label, benchmark folder, views, groups and outcomes.

    ``replies`` (view id -> :class:`~vqaudit.report.sample_reasoning.StoredReply`, from
    :func:`vqaudit.report.sample_reasoning.stored_replies`) and ``reasoning_format`` (the format
    the run was scored with) let the browser split off the reasoning as ``score`` did.
    """

    label: str
    model: str
    bench_dir: Path
    views: Sequence[View]
    group_order: Sequence[tuple[str, str, str]]  # (group_id, source, question) in benchmark order
    outcomes: Mapping[str, Outcome]
    replies: Mapping[str, StoredReply] = field(default_factory=dict)
    reasoning_format: str = AUTO


def view_flags(o: Outcome) -> int:
    """The failure flags of one outcome (:data:`FLAG_FAIL` ...); 0 when the view met its obligation."""
    flags = 0 if o.task_correct else FLAG_FAIL
    if o.error is not None:
        flags |= FLAG_ERROR
    elif o.decision == "invalid":
        flags |= FLAG_INVALID
    elif not o.decision_correct:
        flags |= FLAG_DECISION
    elif o.obligation == "answer" and not o.answer_correct:
        flags |= FLAG_ANSWER
    return flags


def decision_rule(view: View, o: Outcome) -> str:
    """One sentence saying which rule decided the outcome of a view (papers.md; seed 000 appendix A)."""
    by = f" [{o.decided_by}]" if o.decided_by else ""
    if o.error is not None:
        return f"no reply (backend error after retries): scored as invalid, a failure everywhere{by}"
    if o.decision == "invalid":
        return f"invalid reply ({o.invalid_reason or 'unparseable'}): a failure everywhere{by}"
    if o.obligation == "answer":
        if o.decision != "answer":
            return f"supported view, the model abstained: supported rejection{by}"
        rule = ANSWER_RULES.get(view.obligation.answer_type or "", "answer match")
        if o.answer_correct:
            return f"answered; the answer matches a gold answer ({rule}){by}"
        if o.answer is None:
            return f"answered with a null answer: the decision passes, the answer fails{by}"
        return f"answered; the answer matches no gold answer ({rule}){by}"
    if o.decision == "abstain":
        return f"negative view, the model abstained: obligation met{by}"
    return f"negative view, the model answered: false acceptance{by}"


def _clip(text: str | None, limit: int) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"… [{len(text) - limit} more characters not shown]"


_SAFE_PATH = re.compile(r"^[A-Za-z0-9._/ -]+$")


def image_url(out_dir: Path, bench_dir: Path, image: str) -> str | None:
    """A relative, percent-encoded URL from the report folder to a view's image, or None if the path is unsafe.

    The image stays in the benchmark folder (a 10,000-group benchmark has 50,000 images); a path that is absolute,
    climbs out of the benchmark (``..``) or holds characters outside letters, digits and ``._/ -`` is not linked.
    """
    if not _SAFE_PATH.fullmatch(image) or image.startswith("/"):  # the pattern admits no "\\" and no ":"
        return None
    parts = [p for p in image.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    prefix = _bench_prefix(out_dir, bench_dir)
    if prefix is None:
        return None
    return "/".join([*prefix, *(quote(p) for p in parts)])


@functools.lru_cache(maxsize=64)
def _bench_prefix(out_dir: Path, bench_dir: Path) -> tuple[str, ...] | None:
    """The percent-encoded path parts from the report folder to the benchmark folder (None: no relative path)."""
    try:
        rel = Path(os.path.relpath(bench_dir.resolve(), out_dir.resolve()))
    except ValueError:  # another drive (Windows)
        return None
    return tuple(quote(p) for p in rel.parts if p != ".")


def _certificate(bench_dir: Path, view: View) -> dict[str, Any] | None:
    """What justifies a masked view's label: a chart witness, photo mask boxes, or a scene edit (else None)."""
    meta = view.meta
    cert_path = meta.get("certificate")
    if isinstance(cert_path, str) and ".." not in Path(cert_path).parts and not Path(cert_path).is_absolute():
        try:
            cert = read_json(bench_dir / cert_path)
        except Exception as exc:  # a missing or broken certificate is shown as such, never fatal to the report
            return {"kind": "chart", "problem": _clip(f"certificate {cert_path} unreadable: {exc}", MAX_TEXT_CHARS)}
        return _chart_certificate(cert, cert_path) if isinstance(cert, dict) else None
    if view.obligation.kind != "abstain":
        return None
    masked = meta.get("masked")
    if isinstance(masked, dict) and isinstance(masked.get("rects"), list):
        rects = [r for r in masked["rects"] if _is_rect(r)]
        return {
            "kind": "photo",
            "rects": rects[:50],
            "note": "mask boxes on the question's program dependencies (source-derived label, no pixel witness)",
        }
    edit = meta.get("edit")
    if view.state == "M" and isinstance(edit, str):
        return {"kind": "scene", "note": _clip(edit, MAX_TEXT_CHARS)}
    return None


def _is_rect(value: object) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 4
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    )


def _chart_certificate(cert: dict[str, Any], path: str) -> dict[str, Any]:
    """The two witness worlds' values at the hidden cells, their answers, and the mask rectangle.

    A ``D`` view's proof (masked, but the visible cells determine the answer) has one world and its answer.
    """
    mask: dict[str, Any] = cert["mask"] if isinstance(cert.get("mask"), dict) else {}
    rect = mask.get("rect_px")
    answerability: dict[str, Any] = cert["answerability"] if isinstance(cert.get("answerability"), dict) else {}
    certifier = _text(" ".join(str(answerability.get(k, "")) for k in ("status", "method")).strip()) or None
    if "world_a" not in cert and "world" in cert:
        return {
            "kind": "determined",
            "file": path,
            "format": _text(cert.get("format")),
            "answers": [_text(cert.get("answer"))],
            "rect": rect if _is_rect(rect) else None,
            "mask": _text(mask.get("name")),
            "certifier": certifier,
        }
    cells = []
    worlds = [cert.get("world_a"), cert.get("world_b")]
    hidden: list[Any] = cert["hidden_cells"] if isinstance(cert.get("hidden_cells"), list) else []
    for cell in hidden[:20]:
        if not (isinstance(cell, list) and len(cell) == 2):
            continue
        values = [_world_value(w, str(cell[0]), str(cell[1])) for w in worlds]
        cells.append([str(cell[0]), str(cell[1]), *values])
    rejected = cert["rejected_masks"] if isinstance(cert.get("rejected_masks"), list) else []
    return {
        "kind": "chart",
        "file": path,
        "format": _text(cert.get("format")),
        "answers": [_text(cert.get("answer_a")), _text(cert.get("answer_b"))],
        "cells": cells,
        "rect": rect if _is_rect(rect) else None,
        "mask": _text(mask.get("name")),
        "rejected": [_text(json.dumps(r, sort_keys=True, default=str)) for r in rejected[:10]],
        "certifier": certifier,
    }


def _world_value(world: object, series: str, category: str) -> str | None:
    if not isinstance(world, dict):
        return None
    try:
        s = list(world["series"]).index(series)
        c = list(world["categories"]).index(category)
        return _text(world["values"][s][c])
    except (KeyError, ValueError, IndexError, TypeError):
        return None


def _text(value: object) -> str | None:
    return None if value is None else _clip(str(value), MAX_TEXT_CHARS)


def _hint(view: View) -> str | None:
    """The hint a UPD view's prompt shows before the question (``UPDViewMeta.hint``), None when it has none."""
    if view.source != "upd":
        return None
    try:
        hint = UPDViewMeta.of(view).hint.strip()
    except VqauditError:  # a meta that breaks the contract is refused by `score`; the browser shows no hint
        return None
    return _text(hint) if hint else None


def _view_record(run: SampleRun, out_dir: Path, view: View, o: Outcome | None) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": view.view_id,
        "state": view.state,
        "obligation": view.obligation.kind,
        "gold": [_text(g) for g in view.obligation.gold[:20]],
        "question": _text(view.question),
        "options": [_text(x) for x in view.options[:26]],
        "hint": _hint(view),
        "image": image_url(out_dir, run.bench_dir, view.image),
        "cert": _certificate(run.bench_dir, view),
    }
    if o is None:
        record.update(scored=False, flags=FLAG_FAIL, rule="not scored (no outcome for this view)")
        return record
    reason = None
    if o.source != "upd" and o.raw is not None:
        reason = parse_answerability(o.raw, o.error).reason
    thought = reasoning_fields(o, run.replies.get(view.view_id), run.reasoning_format)
    if thought:
        thought["reasoning"] = _clip(thought["reasoning"], MAX_REPLY_CHARS)
    record.update(thought)
    record.update(
        scored=True,
        raw=_clip(o.raw, MAX_REPLY_CHARS),
        error=_text(o.error),
        decision=o.decision,
        answer=_text(o.answer),
        reason=_text(reason),
        passed=o.task_correct,
        flags=view_flags(o),
        rule=decision_rule(view, o),
    )
    return record


def _js_literal(value: Any) -> str:
    """JSON text safe anywhere in a script file: ASCII only, and ``<``, ``>``, ``&`` as escapes."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def write_sample_pages(runs: Sequence[SampleRun], out_dir: Path) -> int:
    """Write ``samples/index.js`` and ``samples/page-NNNNN.js`` under ``out_dir``; return the number of rows.

    Args:
        runs: the scored runs to browse (rows are (run, group) pairs, runs in the order given).
        out_dir: the report folder (``samples.html`` sits there; image links are relative to it).
    """
    folder = out_dir / "samples"
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("page-*.js"):
        stale.unlink()
    index: list[list[Any]] = []
    page: list[dict[str, Any]] = []
    states: set[str] = set()
    sources: set[str] = set()
    for r, run in enumerate(runs):
        by_group: dict[str, list[View]] = {}
        for v in run.views:
            by_group.setdefault(v.group_id, []).append(v)
        for group_id, source, question in run.group_order:
            views = by_group.get(group_id, [])
            records = [_view_record(run, out_dir, v, run.outcomes.get(v.view_id)) for v in views]
            row = {"run": r, "group": group_id, "source": source, "question": _text(question), "views": records}
            search = " ".join([group_id, question, *(x.get("answer") or "" for x in records)])
            index.append(
                [
                    r,
                    len(index) // PAGE_GROUPS,
                    group_id,
                    source,
                    search[:SEARCH_CHARS].lower(),
                    [[x["state"], x["flags"]] for x in records],
                ]
            )
            states.update(x["state"] for x in records)
            sources.add(source)
            page.append(row)
            if len(page) == PAGE_GROUPS:
                _write_page(folder, len(index) // PAGE_GROUPS - 1, page)
                page = []
    if page:
        _write_page(folder, (len(index) - 1) // PAGE_GROUPS, page)
    meta = {
        "runs": [{"label": run.label, "model": run.model} for run in runs],
        "sources": sorted(sources),
        "states": sorted(states, key=state_rank),
        "page_groups": PAGE_GROUPS,
        "rows": index,
    }
    atomic_write_text(folder / "index.js", f"vqauditIndex({_js_literal(meta)});\n")
    return len(index)


def _write_page(folder: Path, number: int, rows: list[dict[str, Any]]) -> None:
    atomic_write_text(folder / f"page-{number:05d}.js", f"vqauditPage({number},{_js_literal(rows)});\n")
