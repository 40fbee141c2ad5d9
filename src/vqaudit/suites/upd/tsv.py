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

**Missing cells** (:func:`cell_text`, shared with the release reader): a cell is missing only when it is empty
(or blank) or, in parquet, null. Texts such as ``None``, ``nan``, ``NaN`` or ``NA`` are kept as written: pandas'
``read_csv`` (which VLMEvalKit's ``load`` calls with its defaults) would read them as NaN, but pandas and
VLMEvalKit's ``dump`` write a missing value as an empty cell, so a non-empty cell is data (an option "None" of a
counting question). ``docs/upd.md`` states the rule.
"""

from __future__ import annotations

import base64
import binascii
import csv
import gzip
import io
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from vqaudit.errors import VqauditError
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


def _err(path: Path, row: int, field_name: str, msg: str) -> VqauditError:
    return VqauditError(f"{path}: row {row}, field '{field_name}': {msg}")


def cell_text(value: object) -> str:
    """A cell's text, stripped; '' when the cell is missing.

    Missing means: ``None`` or a float NaN (a null in parquet / pandas) or a cell that is empty or blank. Any other
    text is kept as it is, ``"None"``, ``"nan"``, ``"NaN"`` and ``"NA"`` included (module docstring: pandas writes
    a missing value as an empty cell, so such a text is the data's own, e.g. a counting question's option "None").
    """
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return str(value).strip()


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
        raise _err(path, row, "image", "not valid base64") from None
    problem = image_problem(data)
    if problem:
        raise _err(path, row, "image", problem)
    return data


def _options(path: Path, row: int, rec: dict[str, str]) -> tuple[str, ...]:
    values = [cell_text(rec.get(letter)) for letter in LETTERS]
    last = max((i for i, v in enumerate(values) if v), default=-1)
    opts = values[: last + 1]
    for i, v in enumerate(opts):
        if not v:
            raise _err(path, row, LETTERS[i], f"option {LETTERS[i]} is empty but a later option is set")
        # an option that shows as another (a right-to-left override) or as nothing (zero-width characters) cannot
        # be read by the model as the text the answer key means; emoji are visible text and stay allowed
        hidden = hidden_characters(v)
        if hidden:
            raise _err(
                path,
                row,
                LETTERS[i],
                f"option {LETTERS[i]} {v!r} holds an invisible or direction-changing "
                f"character ({', '.join(hidden)}); remove it from the input",
            )
    if len(opts) < 2:
        raise _err(path, row, "B", "an item needs at least two options")
    return tuple(opts)


def read_records(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The header and the data rows of a TSV, CSV (either optionally ``.gz``) or .xlsx file, cells as text.

    Args:
        path: the file; TSV/CSV are UTF-8 with a header row (quoted cells may span lines); an .xlsx is read
            from its first worksheet (:func:`vqaudit.xlsx.read_xlsx_rows`). Empty cells are ''.

    Returns:
        ``(header, rows)``; row ``r`` of the file (1-based, header = row 0) is ``rows[r - 1]``.

    Raises:
        VqauditError: a missing or unreadable file, not UTF-8, or a row wider than the header (naming the row).
    """
    if path.is_dir():
        raise VqauditError(f"{path}: a folder, not a file: give the TSV, CSV or .xlsx file itself")
    if not path.is_file():
        raise VqauditError(f"{path}: file not found")
    suffixes = [x.lower() for x in path.suffixes]
    kind = suffixes[-2] if len(suffixes) >= 2 and suffixes[-1] == ".gz" else path.suffix.lower()
    if kind == ".xlsx":
        from vqaudit.xlsx import read_xlsx_rows

        table = read_xlsx_rows(path)
        if not table:
            raise VqauditError(f"{path}: row 0 (header): the sheet is empty")
        header = [h or "" for h in table[0]]
        return header, [{h: (v or "") for h, v in zip(header, values, strict=False) if h} for values in table[1:]]
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    delimiter = "," if kind == ".csv" else "\t"
    try:
        raw = gzip.decompress(path.read_bytes()) if path.suffix.lower() == ".gz" else path.read_bytes()
        text = raw.decode("utf-8-sig")
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise VqauditError(f"{path}: not a readable file: {exc}") from None
    except UnicodeDecodeError as exc:
        raise VqauditError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    # strict: a quote left open at the end of the file (a table cut off mid-cell) is an error, never a row holding
    # the fragment (Python's csv module reads it as a complete field unless strict)
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    rows: list[dict[str, str]] = []
    start = 1
    try:
        header = list(reader.fieldnames or [])
        _check_delimiter(path, kind, header)
        start = reader.line_num + 1
        for row, rec in enumerate(reader, start=1):
            if None in rec:
                raise _err(path, row, header[-1] if header else "index", "the row has more cells than the header")
            short = [k for k, v in rec.items() if v is None]
            if short:  # DictReader fills the cells a short row lacks with None (its restval)
                raise _err(
                    path,
                    row,
                    short[0],
                    f"the row has {len(header) - len(short)} cells where the header has "
                    f"{len(header)} (the row ends before this column: a cut or "
                    "mis-separated line?)",
                )
            rows.append({k: (v or "") for k, v in rec.items() if k is not None})
            start = reader.line_num + 1
    except csv.Error as exc:
        where = f"{path}: row {len(rows) + 1} (line {start})" if reader.line_num > 1 or rows else f"{path}: row 0"
        if "unexpected end of data" in str(exc):
            raise VqauditError(
                f"{where}: a quoted cell starts here and is never closed (the file is cut off, or a '\"' is unmatched)"
            ) from None
        raise VqauditError(f"{where}: not a valid table row: {exc}") from None
    return header, rows


def _check_delimiter(path: Path, kind: str, header: list[str]) -> None:
    """Refuse a table whose header is one column holding the other separator (a TSV named .csv, or the reverse).

    Such a file reads as one field per row, and every later check would name a missing column instead.
    """
    if len(header) != 1:
        return
    used, other, right = (",", "\t", ".tsv") if kind == ".csv" else ("\t", ",", ".csv")
    if other in header[0]:
        names = "tab" if other == "\t" else "comma"
        raise VqauditError(
            f"{path}: row 0 (header): one column {header[0][:40]!r} holding {names}s: the file is "
            f"{names}-separated but named {kind} (read as {used!r}-separated); give it the {right} "
            "suffix"
        )


def _parse_index(path: Path, row: int, rec: dict[str, str]) -> int:
    text = (rec.get("index") or "").strip()
    try:
        value = int(text)
    except ValueError:
        raise _err(path, row, "index", f"not an integer: {rec.get('index')!r}") from None
    if value < 0:
        raise _err(path, row, "index", f"negative index {value}")
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
            raise _err(path, row, "index", f"duplicate index {index}")
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
            raise _err(path, r.row, "index", f"circular copy {r.index} of item {base}, but no row has index {base}")
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
            raise _err(path, row, "index", f"duplicate index {index}")
        raw_images[index] = (rec.get("image") or "").strip()
        indices.append(index)
    parsed: list[_Row] = []
    for row, (rec, index) in enumerate(zip(records, indices, strict=True), start=1):
        cell = raw_images[index]
        if cell.isdigit() and int(cell) in raw_images and int(cell) != index:
            cell = raw_images[int(cell)]
        elif cell.isdigit() and int(cell) != index and index < CIRCULAR_STRIDE:  # no base64 image is all digits
            raise _err(
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
            raise _err(path, row, "image", f"missing image for index {index}{where}")
        parsed.append(_Row(row, index, _item(path, row, rec, index, cell)))
    items = _merge(path, parsed)
    return MCLoad(items=items, n_rows=len(records), merged_rows=len(records) - len(items))


def _item(path: Path, row: int, rec: dict[str, str], index: int, cell: str) -> MCItem:
    question = (rec.get("question") or "").strip()
    if not question:
        raise _err(path, row, "question", "empty question")
    options = _options(path, row, rec)
    letter = (rec.get("answer") or "").strip()
    if len(letter) != 1 or letter not in LETTERS[: len(options)]:
        shown = ", ".join(LETTERS[: len(options)])
        raise _err(path, row, "answer", f"{letter!r} is not one of the options {shown}")
    category = (rec.get("category") or "").strip()
    if not category:
        raise _err(path, row, "category", "empty category")
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
