"""Multiple-choice prediction files read into rows (:class:`MCRow`) for ``vqaudit audit`` (docs/shortanswer.md).

``--benchmark mmbench|mmmu|mathvista|mc`` names the layout:

- ``mmbench``: an MMBench result sheet (VLMEvalKit / LLaVA ``.xlsx``, or the same table as TSV/CSV/JSONL):
  ``index``, ``question``, options ``A``..``I`` (empty cells end the list), gold ``answer`` (a letter),
  ``prediction``, optional ``category``. Circular copies (``index + k * 10**6``) form one group: **circular
  accuracy** counts a question right only when every copy is right (MMBench CircularEval; seed 001, 0.C.1).
- ``mmmu``: MMMU's ``output.json`` records (MMMU-Benchmark/MMMU ``eval/README.md``, "Parse and Evaluation"): a
  list (or an id-keyed object) of ``{"id", "question_type": "multiple-choice" | "open", "answer",
  "all_choices", "index2ans", "response"}``; options A-I. Or VLMEvalKit's MMMU sheet (``.xlsx``/``.tsv``/``.csv``,
  or JSON records without ``index2ans``): ``index``, ``question``, options ``A``..``I``, ``answer``,
  ``prediction``; a row whose option ``A`` is empty is an open question whose ``answer`` is the text (VLMEvalKit's
  ``MMMU_preproc`` turns those into two-option questions when it evaluates: a row of its evaluated sheet with
  ``B`` = "Other Answers" and no ``C`` is read back as the open question, its gold the text of ``A``). Open rows
  are scored by MMMU's rules (:mod:`vqaudit.shortanswer.mc_open`).
- ``mathvista``: MathVista's output file (lupantech/MathVista), an object keyed by ``pid``: ``{"question",
  "choices" (a list, or null for free-form), "answer" (the correct choice's *text*, or the free-form answer),
  "question_type": "multi_choice" | "free_form", "answer_type", "precision", "response", "extraction"}``. The
  raw ``response`` is read by default; ``read="extraction"`` reads MathVista's own extracted answer and scores it
  as its ``calculate_score.py`` does (:mod:`vqaudit.shortanswer.mc_open`).
- ``mc``: any table or JSON with an id (``question_id``/``id``/``index``/``pid``), ``question``, options as
  columns ``A``..``I`` or as a list (``options``/``choices``), ``answer`` (a letter or an option's text) and a
  reply (``prediction``/``response``/``output``/``text``).

Rows are counted the same way in every layout and message: data rows, 1-based (the first record, or the first
line under a table's header, is row 1; the header is named ``header``, never a row number). Every loader error
names the file, the row and the field; nothing is returned before the whole file is read.

**Defective rows.** A row whose own data is broken is a defect of the benchmark file, not of the model:
an option left empty before a later one, a gold answer that is no option (its option empty or missing, or a text
no option has), or a gold given as a text that several options repeat (duplicate choices: the gold cannot be told
apart). A gold given as a letter stays decidable when its text repeats (MMBench dev has such rows, ``855`` and
``1770`` in every circular copy, and its published 67.7 counts them), so those rows are kept.
:func:`read_mc_file` lists each (:class:`RowDefect`: file, row, id, field, reason) and leaves the row out of the
score; with ``strict=True`` the first one refuses the file, naming the file, row and field. A file that is
malformed as a whole (no rows, a missing column, a duplicate id, an unknown type) is refused either way.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.shortanswer.benchmarks import MC_BENCHMARKS
from vqaudit.shortanswer.input_files import check_input_file
from vqaudit.shortanswer.mc_records import MATHVISTA_READS, MCFile, MCRow, RowDefect
from vqaudit.shortanswer.mc_rows import ID_KEYS, DefectiveRow, cell_text, first_key, mc_row, row_layout
from vqaudit.shortanswer.record_files import file_suffix, iter_json_records
from vqaudit.suites.upd.tsv import read_records

__all__ = ["read_mc_file", "read_mc_predictions"]


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    suffix = file_suffix(path)
    if suffix in (".xlsx", ".tsv", ".csv", ".tab"):
        _, rows = read_records(path)
        for row, rec in enumerate(rows, start=1):
            yield row, {k: (v if v != "" else None) for k, v in rec.items()}
        return
    if suffix not in (".json", ".jsonl"):
        raise VqauditError(
            f"{path}: unsupported prediction file type {suffix!r} (use .xlsx, .tsv, .csv, .json or .jsonl)"
        )
    for row, rec in iter_json_records(path):
        if not isinstance(rec, dict):
            raise VqauditError(f"{path}: row {row}: expected a JSON object")
        yield row, rec


def read_mc_file(path: Path, benchmark: str, *, strict: bool = False, read: str | None = None) -> MCFile:
    """Read a multiple-choice prediction file (module docstring): scored rows and defective rows, in file order.

    Args:
        path: the file (.xlsx, .tsv, .csv, .json, .jsonl; JSON/JSONL may be ``.gz``).
        benchmark: one of :data:`MC_BENCHMARKS` (``mmbench`` groups circular copies by ``index mod 10**6``).
        strict: refuse the file at its first defective row instead of leaving the row out.
        read: ``mathvista`` only: the reply field, one of :data:`MATHVISTA_READS` (default ``response``).

    Returns:
        The :class:`MCFile`; row ids are unique across scored and defective rows.

    Raises:
        VqauditError: an unknown benchmark, ``read`` given for another benchmark or unknown, a missing or
            malformed file, a missing field, a duplicate id, no scored row, or (``strict``) a defective row;
            each naming the file, the data row (1-based) and the field.
    """
    if benchmark not in MC_BENCHMARKS:
        raise VqauditError(f"unknown multiple-choice benchmark {benchmark!r}; expected {', '.join(MC_BENCHMARKS)}")
    if read is not None and benchmark != "mathvista":
        raise VqauditError(f"--read {read} applies only to --benchmark mathvista (which field of its output is read)")
    if read is not None and read not in MATHVISTA_READS:
        raise VqauditError(f"--read {read!r}: expected one of {', '.join(MATHVISTA_READS)}")
    check_input_file(path, "prediction file")
    rows: list[MCRow] = []
    defects: list[RowDefect] = []
    fields: list[str] = []
    layouts: list[str] = []
    seen: dict[str, int] = {}
    try:
        for row, rec in _records(path):
            layout = row_layout(path, rec, benchmark)
            if layout not in layouts:
                layouts.append(layout)
            id_key = first_key(rec, ID_KEYS)
            qid = "" if id_key is None else cell_text(path, row, id_key, rec[id_key])
            try:
                item, field = mc_row(path, row, rec, benchmark, read)
            except DefectiveRow as exc:
                if strict:
                    raise VqauditError(str(exc)) from None
                defects.append(RowDefect(path.name, row, qid or str(row), exc.field, exc.reason))
                item = None
            key = item.qid if item is not None else (qid or str(row))
            if key in seen:
                raise VqauditError(f"{path}: row {row}, field 'id': duplicate id {key!r} (first at row {seen[key]})")
            seen[key] = row
            if item is not None:
                rows.append(item)
                if field not in fields:
                    fields.append(field)
    except UnicodeDecodeError as exc:
        raise VqauditError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    if not rows and not defects:
        raise VqauditError(f"{path}: no prediction rows in the file")
    if not rows:
        every = "the file's only row" if len(defects) == 1 else f"every one of the file's {len(defects)} rows"
        raise VqauditError(f"{defects[0].message(path)}; {every} is defective: nothing to score")
    return MCFile(rows, defects, ", ".join(fields), "+".join(layouts))


def read_mc_predictions(path: Path, benchmark: str) -> list[MCRow]:
    """Read a multiple-choice prediction file (module docstring) into rows, in file order, refusing any defect.

    :func:`read_mc_file` with ``strict=True``: the first defective row refuses the file.

    Args:
        path: the file (.xlsx, .tsv, .csv, .json, .jsonl; JSON/JSONL may be ``.gz``).
        benchmark: one of :data:`MC_BENCHMARKS` (``mmbench`` groups circular copies by ``index mod 10**6``).

    Returns:
        The rows; ids are unique.

    Raises:
        VqauditError: an unknown benchmark, a missing or malformed file, a missing field, an answer that is no
            option, or a duplicate id (naming the file, row and field).
    """
    return read_mc_file(path, benchmark, strict=True).rows
