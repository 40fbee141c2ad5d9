"""Load multiple-choice items from a TSV in the MMBench layout (seed 001, §4; docs/papers.md, seed 001).

Columns: ``index``, ``question``, ``hint``, ``A``..``E`` (options; trailing ones may be empty), ``answer`` (a
letter), ``category``, ``l2-category``, ``image`` (base64 image bytes). Other columns (``source``, ``comment``,
``split``, ...) are kept in :attr:`MCItem.extra`. As in the MMBench dev TSV, an ``image`` cell that holds only
digits refers to the image of the row with that ``index``.

Every problem raises a :class:`VqauditError` naming the file, the 1-based data row (the header is row 0) and the
field: a missing column, a duplicate or non-integer index, an empty question, fewer than two options, a gap
between options, an answer letter that is not an option, or a missing or undecodable image.
"""

from __future__ import annotations

import base64
import binascii
import csv
import sys
from dataclasses import dataclass, field
from pathlib import Path

from vqaudit.errors import VqauditError

LETTERS = "ABCDE"
REQUIRED_COLUMNS = ("index", "question", "A", "B", "answer", "category", "image")
_KNOWN = frozenset({"index", "question", "hint", *LETTERS, "answer", "category", "l2-category", "image"})
_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a")


@dataclass(frozen=True)
class MCItem:
    """One multiple-choice item.

    Attributes:
        index: the item's ``index`` (unique in its file).
        question: question text.
        hint: hint text ('' when none); shown before the question.
        options: option texts in letter order (2-5 entries).
        answer: index into ``options`` of the correct option.
        category: MMBench leaf category (the ability).
        l2_category: MMBench second-level category ('' when absent).
        image: the image file's bytes (PNG, JPEG or GIF).
        extra: the other columns of the row, as text.
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

    @property
    def answer_text(self) -> str:
        """The correct option's text."""
        return self.options[self.answer]

    @property
    def answer_domain(self) -> str:
        """The kind of answer the options give: the ``answer_domain`` column if present, else the category."""
        return self.extra.get("answer_domain") or self.category


def _err(path: Path, row: int, field_name: str, msg: str) -> VqauditError:
    return VqauditError(f"{path}: row {row}, field '{field_name}': {msg}")


def _decode_image(path: Path, row: int, cell: str) -> bytes:
    try:
        data = base64.b64decode(cell.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise _err(path, row, "image", "not valid base64") from None
    if not data.startswith(_MAGIC):
        raise _err(path, row, "image", "decoded bytes are not a PNG, JPEG or GIF image")
    return data


def _options(path: Path, row: int, rec: dict[str, str]) -> tuple[str, ...]:
    values = [(rec.get(letter) or "").strip() for letter in LETTERS]
    last = max((i for i, v in enumerate(values) if v and v.lower() != "nan"), default=-1)
    opts = values[: last + 1]
    for i, v in enumerate(opts):
        if not v or v.lower() == "nan":
            raise _err(path, row, LETTERS[i], f"option {LETTERS[i]} is empty but a later option is set")
    if len(opts) < 2:
        raise _err(path, row, "B", "an item needs at least two options")
    return tuple(opts)


def load_tsv(path: Path) -> list[MCItem]:
    """Read every item of an MMBench-layout TSV, in file order.

    Args:
        path: the TSV file (UTF-8, tab-separated, a header row, quoted cells may span lines).

    Returns:
        The items, in file order.

    Raises:
        VqauditError: the file is missing or malformed (the message names the file, the row and the field).
    """
    if not path.is_file():
        raise VqauditError(f"{path}: file not found")
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        header = reader.fieldnames or []
        missing = [c for c in REQUIRED_COLUMNS if c not in header]
        if missing:
            raise VqauditError(f"{path}: row 0 (header), field '{missing[0]}': required column is missing")
        records = list(reader)
    raw_images: dict[int, str] = {}
    indices: list[int] = []
    for row, rec in enumerate(records, start=1):
        try:
            index = int((rec.get("index") or "").strip())
        except ValueError:
            raise _err(path, row, "index", f"not an integer: {rec.get('index')!r}") from None
        if index in raw_images:
            raise _err(path, row, "index", f"duplicate index {index}")
        raw_images[index] = (rec.get("image") or "").strip()
        indices.append(index)
    items: list[MCItem] = []
    for row, (rec, index) in enumerate(zip(records, indices, strict=True), start=1):
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
        cell = raw_images[index]
        if cell.isdigit() and int(cell) in raw_images and int(cell) != index:
            cell = raw_images[int(cell)]
        if not cell:
            raise _err(path, row, "image", "missing image")
        hint = (rec.get("hint") or "").strip()
        items.append(
            MCItem(
                index=index,
                question=question,
                hint="" if hint.lower() == "nan" else hint,
                options=options,
                answer=LETTERS.index(letter),
                category=category,
                l2_category=(rec.get("l2-category") or "").strip(),
                image=_decode_image(path, row, cell),
                extra={k: (v or "") for k, v in rec.items() if k is not None and k not in _KNOWN},
            )
        )
    return items
