"""Replies written in each harness's own output format, from a vqaudit export (no harness installed).

Shapes, from the harnesses' sources: VLMEvalKit ``vlmeval/inference.py`` (the input columns except ``image``,
plus ``prediction``; written by ``vlmeval/smp/file.py::dump``: xlsx through xlsxwriter, tsv with
``csv.QUOTE_ALL``); lmms-eval ``evaluator.py`` (the nested sample: ``doc``, ``resps: [[text]]``,
``filtered_resps: [text]``) and ``loggers/evaluation_tracker.py::save_results_samples`` (the flat sample:
``doc`` and ``arguments`` dropped, one-element lists unwrapped, ``resps`` dropped when equal); inspect_ai's
``EvalLog`` as ``--log-format json`` writes it (``samples[].id/epoch/output.completion/error``).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping
from pathlib import Path

from PIL import Image

from vqaudit.files import sha256_bytes, write_json, write_jsonl
from vqaudit.schema import Group, Obligation, View

csv.field_size_limit(2**31 - 1)


def read_tsv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def vlmevalkit_rows(export: Path, replies: Mapping[str, str]) -> tuple[list[str], list[list[str]]]:
    """The result sheet of an exported dataset: every input column but ``image``, then ``prediction``."""
    header: list[str] = []
    rows: list[list[str]] = []
    for tsv in sorted(export.glob("*.tsv")):
        records = read_tsv(tsv)
        header = [c for c in records[0] if c != "image"] + ["prediction"]
        rows += [[r.get(c, "") for c in header[:-1]] + [replies[r["view_id"]]] for r in records]
    return header, rows


def write_vlmevalkit_tsv(export: Path, replies: Mapping[str, str], out: Path) -> Path:
    header, rows = vlmevalkit_rows(export, replies)
    return write_table(out, header, rows)


def write_table(out: Path, header: list[str], rows: list[list[str]]) -> Path:
    """A sheet as VLMEvalKit's ``dump`` writes it: every field quoted; tab-separated for .tsv, else commas."""
    buffer = io.StringIO()
    writer = csv.writer(
        buffer, delimiter="\t" if out.suffix == ".tsv" else ",", quoting=csv.QUOTE_ALL, lineterminator="\n"
    )
    writer.writerow(header)
    writer.writerows(rows)
    out.write_text(buffer.getvalue(), encoding="utf-8")
    return out


def write_vlmevalkit_xlsx(export: Path, replies: Mapping[str, str], out: Path) -> Path:
    import xlsxwriter  # what VLMEvalKit's dump(..., "x.xlsx") writes with (pandas engine='xlsxwriter')

    header, rows = vlmevalkit_rows(export, replies)
    book = xlsxwriter.Workbook(str(out), {"strings_to_formulas": False, "strings_to_numbers": False})
    sheet = book.add_worksheet()
    sheet.write_row(0, 0, header)
    for r, row in enumerate(rows, start=1):
        for c, (name, value) in enumerate(zip(header, row, strict=True)):
            if name == "index":
                sheet.write_number(r, c, int(value))  # pandas writes an int column as numbers
            else:
                sheet.write_string(r, c, value)
    book.close()
    return out


def lmms_docs(export: Path) -> list[dict[str, object]]:
    (data,) = export.glob("*.jsonl")
    return [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]


def write_lmms_nested(export: Path, replies: Mapping[str, str], out: Path) -> Path:
    lines = []
    for doc_id, doc in enumerate(lmms_docs(export)):
        text = replies[str(doc["view_id"])]
        lines.append(
            {
                "doc_id": doc_id,
                "doc": doc,
                "target": doc["view_id"],
                "arguments": [doc["prompt"]],
                "resps": [[text]],
                "filtered_resps": [text],
                "replied": 1.0,
                "doc_hash": "x",
            }
        )
    out.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return out


def write_lmms_flat(
    export: Path, replies: Mapping[str, str], out: Path, keep: Callable[[int], bool] = lambda _i: True
) -> Path:
    lines = []
    for doc_id, doc in enumerate(lmms_docs(export)):
        if keep(doc_id):
            text = replies[str(doc["view_id"])]
            lines.append(
                {
                    "doc_id": doc_id,
                    "target": doc["view_id"],
                    "filtered_resps": text,
                    "replied": 1.0,
                    "doc_hash": "x",
                    "input": doc["prompt"],
                }
            )
    out.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return out


def inspect_samples(export: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (export / "samples.jsonl").read_text(encoding="utf-8").splitlines()]


def write_inspect_json(export: Path, replies: Mapping[str, str | None], out: Path, epochs: int = 1) -> Path:
    samples = []
    for epoch in range(1, epochs + 1):
        for s in inspect_samples(export):
            text = replies[str(s["id"])]
            error = None if text is not None else {"message": "RuntimeError: boom", "traceback": ""}
            samples.append(
                {
                    "id": s["id"],
                    "epoch": epoch,
                    "input": s["input"],
                    "target": s["target"],
                    "metadata": s["metadata"],
                    "messages": [],
                    "error": error,
                    "output": {"model": "m", "choices": [], "completion": text or ""},
                }
            )
    log = {"version": 2, "status": "success", "eval": {"task": "t", "model": "openai-api/vq/m"}, "samples": samples}
    out.write_text(json.dumps(log), encoding="utf-8")
    return out


def tiny_png(seed: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), (seed & 0xFF, (seed >> 8) & 0xFF, 7)).save(buffer, format="PNG")
    return buffer.getvalue()


def write_tiny_benchmark(root: Path, n_groups: int = 2) -> Path:
    """A charts-source benchmark of 3 views per group (one supported, gold str(10*g); two negative)."""
    (root / "images").mkdir(parents=True)
    views: list[View] = []
    groups: list[Group] = []
    for g in range(n_groups):
        ids = []
        for k in range(3):
            view_id, data = f"g{g}-v{k}", tiny_png(3 * g + k)
            (root / "images" / f"{view_id}.png").write_bytes(data)
            obligation = (
                Obligation(kind="answer", gold=(str(10 * g),), answer_type="number")
                if k == 0
                else Obligation(kind="abstain")
            )
            views.append(
                View(
                    view_id=view_id,
                    group_id=f"g{g}",
                    source="charts",
                    state="original" if k == 0 else "M",
                    image=f"images/{view_id}.png",
                    image_sha256=sha256_bytes(data),
                    question=f"What is bar {g}?",
                    obligation=obligation,
                )
            )
            ids.append(view_id)
        groups.append(Group(group_id=f"g{g}", source="charts", question=f"What is bar {g}?", view_ids=tuple(ids)))
    write_jsonl(root / "views.jsonl", views)
    write_jsonl(root / "groups.jsonl", groups)
    write_json(
        root / "manifest.json",
        {"format": "vqaudit-benchmark/1", "source": "charts", "n_views": len(views), "n_groups": len(groups)},
    )
    return root
