"""Load multiple-choice items from an MMBench-layout file: TSV, CSV or a VLMEvalKit .xlsx (seed 001, §4).

Columns: ``index``, ``question``, ``hint``, ``A``..``E`` (options; trailing ones may be empty), ``answer`` (a
letter), ``category``, ``l2-category``, ``image`` (base64 image bytes). Other columns (``source``, ``comment``,
``split``, ...) are kept in :attr:`MCItem.extra`. As in the MMBench dev TSV, an ``image`` cell that holds only
digits refers to the image of the row with that ``index``. A file without an ``image`` column (a VLMEvalKit
result sheet) takes its images by index from a second file (``images=``, any file of this layout with ``index``
and ``image``).

**Circular copies** (MMBench CircularEval, seed 001 appendix 0.C.1): the published MMBench dev/test files hold
every circular pass as its own row, the copy of item ``i`` having index ``i + k * 10**6`` (k = 1, 2, ...). The
loader merges every copy into its original (the row with index ``i mod 10**6``), keeping the original's option
order, after checking that the copy asks the same question, that its options are a rotation of the original's
(MMBench rotates the first ``m`` options and keeps trailing ones such as "both A,B, and C" in place; ``m = n``
is the full rotation) and that its answer letter names the same option text. A copy without its original, or
one that fails a check, is an error naming both rows. :class:`MCLoad` reports how many rows were merged.

Every problem raises a :class:`VqauditError` naming the file, the 1-based data row (the header is row 0) and the
field: a missing column, a duplicate or non-integer index, an empty question, fewer than two options, a gap
between options, an answer letter that is not an option, a bad circular copy, or a missing or undecodable image.

The file is read, and a missing cell told apart, by :mod:`vqaudit.suites.upd.table_files` (``read_records``,
``cell_text``: only an empty or blank cell, or a parquet null, is missing; a text such as ``None`` is data).
"""

from __future__ import annotations

import base64
import binascii
import io
from dataclasses import dataclass, field, replace
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from vqaudit.errors import VqauditError
from vqaudit.suites.upd.table_files import cell_text, row_error

# Also re-exported: the short-answer multiple-choice reader imports it from here.
from vqaudit.suites.upd.table_files import read_records as read_records
from vqaudit.textsafe import hidden_characters

LETTERS = "ABCDE"
REQUIRED_COLUMNS = ("index", "question", "A", "B", "answer", "category", "image")
CIRCULAR_STRIDE = 10**6
"""MMBench's circular copies of item ``i`` have index ``i + k * CIRCULAR_STRIDE``."""
_KNOWN = frozenset({"index", "question", "hint", *LETTERS, "answer", "category", "l2-category", "image"})
IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a")
"""The leading bytes of the image files an item may carry (PNG, JPEG, GIF)."""


@dataclass(frozen=True)
class MCItem:
    """One multiple-choice item.

    Attributes:
        index: the item's ``index`` (unique in its file; below 10**6 for MMBench originals).
        question: question text.
        hint: hint text ('' when none); shown before the question.
        options: option texts in letter order (2-5 entries); the original row's order when copies were merged.
        answer: index into ``options`` of the correct option.
        category: MMBench leaf category (the ability).
        l2_category: MMBench second-level category ('' when absent).
        image: the image file's bytes (PNG, JPEG or GIF).
        extra: the other columns of the row, as text.
        copies: indices of the circular-copy rows merged into this item (index + k * 10**6), ascending.
    """

    index: int
    question: str
    hint: str
    options: tuple[str, ...]
    answer: int
    category: str
    l2_category: str
    image: bytes
    extra: dict[str, str] = field(default_factory=dict)
    copies: tuple[int, ...] = ()

    @property
    def answer_text(self) -> str:
        """The correct option's text."""
        return self.options[self.answer]

    @property
    def answer_domain(self) -> str:
        """The kind of answer the options give: the ``answer_domain`` column if present, else the category."""
        return self.extra.get("answer_domain") or self.category


@dataclass(frozen=True)
class MCLoad:
    """What :func:`load_mc` read from one file.

    Attributes:
        items: the merged items, in file order of their original rows.
        n_rows: data rows read.
        merged_rows: circular-copy rows merged into their originals (``n_rows - len(items)``).
    """

    items: list[MCItem]
    n_rows: int
    merged_rows: int


def image_problem(data: bytes) -> str | None:
    """Why ``data`` is not a usable image file, or None when it is a PNG, JPEG or GIF that PIL decodes fully.

    The leading bytes must be a PNG/JPEG/GIF signature (:data:`IMAGE_MAGIC`), and ``PIL.Image.open`` + ``load``
    must decode every pixel: a truncated file or a bare signature is refused. Cost: one full decode per image.
    """
    if not data.startswith(IMAGE_MAGIC):
        return "decoded bytes are not a PNG, JPEG or GIF image"
    try:
        with Image.open(io.BytesIO(data)) as im:
            im.load()
    except UnidentifiedImageError:
        return "the image cannot be decoded (PIL cannot identify the image file)"
    except (OSError, SyntaxError, ValueError, EOFError, Image.DecompressionBombError) as exc:
        return f"the image cannot be decoded (PIL: {exc})"
    return None


def _decode_image(path: Path, row: int, cell: str) -> bytes:
    try:
        data = base64.b64decode(cell.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise row_error(path, row, "image", "not valid base64") from None
    problem = image_problem(data)
    if problem:
        raise row_error(path, row, "image", problem)
    return data


def _options(path: Path, row: int, rec: dict[str, str]) -> tuple[str, ...]:
    values = [cell_text(rec.get(letter)) for letter in LETTERS]
    last = max((i for i, v in enumerate(values) if v), default=-1)
    opts = values[: last + 1]
    for i, v in enumerate(opts):
        if not v:
            raise row_error(path, row, LETTERS[i], f"option {LETTERS[i]} is empty but a later option is set")
        # an option that shows as another (a right-to-left override) or as nothing (zero-width characters) cannot
        # be read by the model as the text the answer key means; emoji are visible text and stay allowed
        hidden = hidden_characters(v)
        if hidden:
            raise row_error(
                path,
                row,
                LETTERS[i],
                f"option {LETTERS[i]} {v!r} holds an invisible or direction-changing "
                f"character ({', '.join(hidden)}); remove it from the input",
            )
    if len(opts) < 2:
        raise row_error(path, row, "B", "an item needs at least two options")
    return tuple(opts)


def _parse_index(path: Path, row: int, rec: dict[str, str]) -> int:
    text = (rec.get("index") or "").strip()
    try:
        value = int(text)
    except ValueError:
        raise row_error(path, row, "index", f"not an integer: {rec.get('index')!r}") from None
    if value < 0:
        raise row_error(path, row, "index", f"negative index {value}")
    return value


def _image_cells(path: Path) -> dict[int, str]:
    """``index -> image cell`` of a file holding images by index (digit cells resolved within the file)."""
    header, records = read_records(path)
    for name in ("index", "image"):
        if name not in header:
            raise VqauditError(f"{path}: row 0 (header), field '{name}': required column is missing")
    cells: dict[int, str] = {}
    for row, rec in enumerate(records, start=1):
        index = _parse_index(path, row, rec)
        if index in cells:
            raise row_error(path, row, "index", f"duplicate index {index}")
        cells[index] = (rec.get("image") or "").strip()
    return {i: cells.get(int(c), c) if c.isdigit() and int(c) != i else c for i, c in cells.items()}


def rotation_shift(original: tuple[str, ...], copy: tuple[str, ...]) -> int | None:
    """How far ``copy`` rotates ``original`` (MMBench circular copies), or None if it is no such rotation.

    A copy rotates the first ``m`` options left by ``s`` (``copy[:m] == original[s:m] + original[:s]``) and keeps
    ``original[m:]`` in place, for some ``2 <= m <= n``; ``s = 0`` (the same order) counts as a rotation.

    Returns:
        The shift ``s`` (0 <= s < n) of the longest rotated prefix that matches, or None.
    """
    n = len(original)
    if len(copy) != n:
        return None
    if copy == original:
        return 0
    for m in range(n, 1, -1):
        if copy[m:] != original[m:]:
            continue
        for s in range(1, m):
            if copy[:m] == original[s:m] + original[:s]:
                return s
    return None


@dataclass(frozen=True)
class _Row:
    row: int
    index: int
    item: MCItem


def _merge(path: Path, rows: list[_Row]) -> list[MCItem]:
    """Merge circular copies (index >= 10**6) into their originals (see the module docstring)."""
    originals: dict[int, _Row] = {}
    for r in rows:
        if r.index < CIRCULAR_STRIDE:
            originals[r.index] = r
    copies: dict[int, list[int]] = {}
    for r in rows:
        if r.index < CIRCULAR_STRIDE:
            continue
        base = r.index % CIRCULAR_STRIDE
        orig = originals.get(base)
        if orig is None:
            raise row_error(
                path, r.row, "index", f"circular copy {r.index} of item {base}, but no row has index {base}"
            )
        where = f"{path}: rows {orig.row} and {r.row} (index {base} and its circular copy {r.index})"
        a, b = orig.item, r.item
        if a.question != b.question:
            raise VqauditError(f"{where}, field 'question': the copy asks another question")
        if rotation_shift(a.options, b.options) is None:
            raise VqauditError(
                f"{where}, fields 'A'-'{LETTERS[max(len(a.options), len(b.options)) - 1]}': the "
                "copy's options are not a rotation of the original's"
            )
        if a.answer_text != b.answer_text:
            raise VqauditError(
                f"{where}, field 'answer': the copy's answer {LETTERS[b.answer]} names "
                f"{b.answer_text!r}, the original's {LETTERS[a.answer]} names {a.answer_text!r}"
            )
        copies.setdefault(base, []).append(r.index)
    return [replace(r.item, copies=tuple(sorted(copies.get(r.index, ())))) for r in rows if r.index < CIRCULAR_STRIDE]


def load_mc(path: Path, *, images: Path | None = None) -> MCLoad:
    """Read every item of an MMBench-layout file, merging circular copies into their originals.

    Args:
        path: a TSV, CSV (optionally ``.gz``) or .xlsx file in the MMBench layout.
        images: a second file with ``index`` and ``image`` columns, for a ``path`` without (or with empty)
            image cells; an item's image is looked up by its (original) index there.

    Returns:
        The items (originals in file order, copies merged) and the row counts.

    Raises:
        VqauditError: the file is missing or malformed, or a circular copy is bad (the message names the file,
            the row(s) and the field).
    """
    header, records = read_records(path)
    required = [c for c in REQUIRED_COLUMNS if not (c == "image" and images is not None)]
    missing = [c for c in required if c not in header]
    if missing:
        raise VqauditError(f"{path}: row 0 (header), field '{missing[0]}': required column is missing")
    if not records:
        raise VqauditError(f"{path}: no data rows")
    external = _image_cells(images) if images is not None else {}
    raw_images: dict[int, str] = {}
    indices: list[int] = []
    for row, rec in enumerate(records, start=1):
        index = _parse_index(path, row, rec)
        if index in raw_images:
            raise row_error(path, row, "index", f"duplicate index {index}")
        raw_images[index] = (rec.get("image") or "").strip()
        indices.append(index)
    parsed: list[_Row] = []
    for row, (rec, index) in enumerate(zip(records, indices, strict=True), start=1):
        cell = raw_images[index]
        if cell.isdigit() and int(cell) in raw_images and int(cell) != index:
            cell = raw_images[int(cell)]
        elif cell.isdigit() and int(cell) != index and index < CIRCULAR_STRIDE:  # no base64 image is all digits
            raise row_error(
                path,
                row,
                "image",
                f"names index {cell} (the row whose image it shares), but no row of the file has index {cell}",
            )
        if not cell and index < CIRCULAR_STRIDE:
            cell = external.get(index, "")
        elif index >= CIRCULAR_STRIDE:
            cell = "copy"  # a copy's image is its original's: it is never decoded
        if not cell:
            where = f" (not in {images} either)" if images is not None else " (give the images file with --images)"
            raise row_error(path, row, "image", f"missing image for index {index}{where}")
        parsed.append(_Row(row, index, _item(path, row, rec, index, cell)))
    items = _merge(path, parsed)
    return MCLoad(items=items, n_rows=len(records), merged_rows=len(records) - len(items))


def _item(path: Path, row: int, rec: dict[str, str], index: int, cell: str) -> MCItem:
    question = (rec.get("question") or "").strip()
    if not question:
        raise row_error(path, row, "question", "empty question")
    options = _options(path, row, rec)
    letter = (rec.get("answer") or "").strip()
    if len(letter) != 1 or letter not in LETTERS[: len(options)]:
        shown = ", ".join(LETTERS[: len(options)])
        raise row_error(path, row, "answer", f"{letter!r} is not one of the options {shown}")
    category = (rec.get("category") or "").strip()
    if not category:
        raise row_error(path, row, "category", "empty category")
    return MCItem(
        index=index,
        question=question,
        hint=cell_text(rec.get("hint")),
        options=options,
        answer=LETTERS.index(letter),
        category=category,
        l2_category=(rec.get("l2-category") or "").strip(),
        image=b"" if index >= CIRCULAR_STRIDE else _decode_image(path, row, cell),
        extra={k: (v or "") for k, v in rec.items() if k not in _KNOWN},
    )


def load_tsv(path: Path, *, images: Path | None = None) -> list[MCItem]:
    """Read the items of an MMBench-layout file, circular copies merged (:func:`load_mc`); raises VqauditError."""
    return load_mc(path, images=images).items
