"""The records of a multiple-choice prediction file as read (:mod:`.mc_read`).

Its rows (:class:`MCRow`), its defective rows (:class:`RowDefect`) and the file as a whole (:class:`MCFile`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

MC_LETTERS = "ABCDEFGHI"
MATHVISTA_READS = ("response", "extraction")
"""The fields of a MathVista output a ``mathvista`` audit may read: the raw reply (default) or its extraction."""


@dataclass(frozen=True)
class MCRow:
    """One row of a multiple-choice prediction file.

    Attributes:
        qid: the row's id.
        group: the circular group (MMBench: ``index mod 10**6``; otherwise the id).
        question: question text ('' when the file has none).
        options: option texts in letter order (A, B, ...); empty for an open row.
        gold: the correct letter (choice rows) or the gold answer text (open rows).
        reply: the model's raw reply ('' when missing).
        answer_type: ``choice`` for choice rows; MathVista's ``integer``/``float``/``text``/``list`` or
            ``open`` otherwise.
        precision: decimal places a float answer is compared at (MathVista ``precision``), or None.
        category: the row's category or ability ('' when none).
        source: ``file:row``.
        rules: how the row is scored: ``default`` (choice rows by the one choice reader, open rows by exact or
            numeric match), ``mmmu`` (open rows by MMMU's ``parse_open_response``/``eval_open``), ``mathvista``
            (free-form rows by MathVista's answer-type rules on the raw reply), ``mathvista-extraction`` (every
            row as MathVista's ``calculate_score.py`` scores its ``extraction`` field).
    """

    qid: str
    group: str
    question: str
    options: tuple[str, ...]
    gold: str
    reply: str
    answer_type: str
    precision: int | None
    category: str
    source: str
    rules: str = "default"

    @property
    def is_choice(self) -> bool:
        """True for a multiple-choice row."""
        return self.answer_type == "choice"


@dataclass(frozen=True)
class RowDefect:
    """A row left out of the score because the benchmark's own data is broken (module docstring).

    Attributes:
        file: the prediction file's name.
        row: the data row, 1-based.
        qid: the row's id ('' when it has none).
        field: the broken field (``answer``, ``D``, ``choices``, ``index2ans.D``, ...).
        reason: what is broken, one sentence.
    """

    file: str
    row: int
    qid: str
    field: str
    reason: str

    def message(self, path: Path | str | None = None) -> str:
        """``FILE: row R, field 'F': reason`` (the line ``--strict`` refuses with)."""
        return f"{path if path is not None else self.file}: row {self.row}, field '{self.field}': {self.reason}"


@dataclass(frozen=True)
class MCFile:
    """A multiple-choice prediction file as read: the scored rows, the defective rows left out, the field read.

    ``read_field``: the reply field read (``response``, ``extraction``, ``prediction``, ...; several joined by
    ``, `` when rows differ). ``layout``: ``mmmu-output``, ``vlmevalkit-mmmu``, ``mathvista-output``, ``mmbench``
    or ``table`` (``mmmu`` files of both layouts at once: both named, joined by ``+``).
    """

    rows: list[MCRow]
    defects: list[RowDefect]
    read_field: str
    layout: str
