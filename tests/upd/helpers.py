"""Helpers for the MM-UPD tests: hand-made MMBench-layout TSVs and canned responses."""

from __future__ import annotations

import base64
import csv
import io
from pathlib import Path
from typing import Any

from PIL import Image

from vqaudit.schema import Response, View

COLUMNS = ("index", "question", "hint", "A", "B", "C", "D", "answer", "category", "image", "l2-category")


def png(seed: int) -> bytes:
    """A 4x4 PNG whose bytes differ per seed."""
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), (seed % 256, (seed // 256) % 256, 7)).save(buffer, format="PNG")
    return buffer.getvalue()


def write_tsv(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Write rows (missing columns empty; ``image`` given as bytes is base64-encoded) as an MMBench TSV."""
    buffer = io.StringIO()
    writer = csv.DictWriter(
        buffer, fieldnames=list(COLUMNS), delimiter="\t", lineterminator="\n", extrasaction="ignore"
    )
    writer.writeheader()
    for row in rows:
        cells = {k: "" for k in COLUMNS}
        cells.update({k: v for k, v in row.items() if k != "image"})
        image = row.get("image", b"")
        cells["image"] = base64.b64encode(image).decode() if isinstance(image, bytes) else str(image)
        writer.writerow(cells)
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


def row(index: int, question: str, options: list[str], answer: str, category: str, **extra: Any) -> dict[str, Any]:
    """One TSV row with a distinct image per index."""
    rec: dict[str, Any] = {
        "index": index,
        "question": question,
        "answer": answer,
        "category": category,
        "image": png(index),
        "l2-category": "l2",
    }
    rec.update({"ABCD"[k]: o for k, o in enumerate(options)})
    rec.update(extra)
    return rec


def respond(views: list[View], reply: Any) -> dict[str, Response]:
    """Responses whose text is ``reply(view)``."""
    return {v.view_id: Response(view_id=v.view_id, model="test", prompt_id="p", text=reply(v)) for v in views}


def write_xlsx(path: Path, header: list[str], rows: list[list[Any]]) -> Path:
    """Write a one-sheet .xlsx with inline-string cells (the parts of ECMA-376 a VLMEvalKit sheet uses)."""
    import zipfile
    from xml.sax.saxutils import escape

    def col(i: int) -> str:
        name = ""
        i += 1
        while i:
            i, rem = divmod(i - 1, 26)
            name = chr(65 + rem) + name
        return name

    body = []
    for r, values in enumerate([header, *rows], start=1):
        cells = "".join(
            f'<c r="{col(c)}{r}" t="inlineStr"><is><t>{escape(str(v))}</t></is></c>'
            for c, v in enumerate(values)
            if v is not None and v != ""
        )
        body.append(f'<row r="{r}">{cells}</row>')
    ns = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    pkg = "http://schemas.openxmlformats.org/package/2006/relationships"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(
            "xl/workbook.xml",
            f'<workbook xmlns="{ns}" xmlns:r="{rel}"><sheets>'
            '<sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>',
        )
        archive.writestr(
            "xl/_rels/workbook.xml.rels",
            f'<Relationships xmlns="{pkg}"><Relationship Id="rId1" '
            f'Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
        )
        archive.writestr(
            "xl/worksheets/sheet1.xml", f'<worksheet xmlns="{ns}"><sheetData>{"".join(body)}</sheetData></worksheet>'
        )
    return path
