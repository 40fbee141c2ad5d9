"""Prediction importers: generic JSONL/JSON/CSV/TSV, lmms-eval sample logs, VLMEvalKit sheets, MultimodalOCR files.

Formats (``fmt``; ``"auto"`` picks by file suffix and the first record's keys):

- ``"generic"``: JSONL, a JSON list, CSV or TSV with a question id and a prediction. Id columns, first found:
  ``question_id``, ``questionId``, ``qid``, ``id``, ``index``, ``doc_id``. Row numbers stand in for ids only
  when the file has none of these fields at all; in a file that has one, a row without an id is refused.
  Prediction columns: ``prediction``, ``pred``, ``text`` (LLaVA ``answers/*.jsonl``), ``output``, ``response``,
  ``model_answer``; ``answer`` is read as the prediction only when a separate gold column exists
  (``gt_answers``/``answers``/``gold``/``label``/``target``), as in MultimodalOCR's ``answer_save`` files.
  Embedded gold, first found: ``gt_answers``, ``answers``, ``gold``, ``label``, ``target``, then ``answer``
  when it is not the prediction (VLMEvalKit). Question: ``question``, ``query``, else the first line of
  ``prompt`` (LLaVA puts the question there).
- ``"vlmevalkit"``: VLMEvalKit's ``<model>_<dataset>.xlsx`` (or the same table as CSV/TSV): ``index``,
  ``question``, ``answer`` (gold), ``prediction``, optional ``split``. A gold cell holding a Python list of
  strings (VLMEvalKit's TextVQA/DocVQA/VizWiz sheets: ``"['dakota', 'dakota digital', ...]"``, the
  annotator answers) is expanded into its answers for every metric and variant (``ast.literal_eval``, never
  ``eval``); other cells, such as ChartQA's numeric list ``"[2014, 2016]"``, stay one string (their meaning is
  the metric variant's business). Read with the stdlib reader of
  :mod:`vqaudit.xlsx` (no openpyxl needed).
- ``"lmms-eval"``: ``--log_samples`` output, JSONL (one sample a line) or JSON (``{"logs": [...]}``): the
  prediction is ``filtered_resps[0]`` (else ``resps[0][0]``); the id is ``doc.question_id`` /
  ``doc.questionId`` (else ``doc_id``); gold is ``doc.answers`` if present, else ``target`` (a string holding
  a Python list literal is expanded).

A JSON file may also be an object keyed by question id whose values are records (MathVista's
``{"1": {...}, "2": {...}}``): it is read like a list of records, the key serving as the id when the record
has none of the id fields. Any of these may be gzip-compressed (``.jsonl.gz``, ``.json.gz``, ``.csv.gz``, ``.tsv.gz``).
Prediction values (:func:`vqaudit.shortanswer.prediction_rows.prediction_text`): text is taken as is; a finite
JSON number becomes its text as written (``1.50`` -> ``"1.50"``); a missing, null or empty prediction becomes ""
(an empty output, reported in the failure notes, never dropped); booleans, non-finite numbers (``NaN``,
``Infinity``, ``1e999``), lists and objects are refused.
Sheet cells holding a boolean or a date-formatted number are refused like JSON booleans; ids must be
non-blank strings or numbers. CSV/TSV are read strictly (:mod:`vqaudit.shortanswer.record_files`, which reads
every format's records): an unterminated quote, a quote closing a field early, and a quoted field swallowing
lines that look like rows are refused.
Text files are read as UTF-8 with an optional leading byte order mark (``utf-8-sig``).
Errors name the file, the 1-based row and the field.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import replace
from itertools import chain
from pathlib import Path

from vqaudit.errors import VqauditError
from vqaudit.progress import step
from vqaudit.shortanswer.input_files import check_input_file, gzip_reason, undecodable_line
from vqaudit.shortanswer.packed import packed_records
from vqaudit.shortanswer.prediction_rows import (
    ROW_ID,
    detect_layout,
    file_id_key,
    generic_prediction,
    lmms_prediction,
)
from vqaudit.shortanswer.record_files import (
    ID_KEYS,
    file_suffix,
    iter_json_records,
    iter_table,
    open_text,
)
from vqaudit.shortanswer.records import Prediction

FORMATS = ("auto", "generic", "vlmevalkit", "lmms-eval")


def read_predictions_layout(
    path: Path, fmt: str = "auto", *, id_field: str | None = None, image_field: str | None = None
) -> tuple[Sequence[Prediction], str]:
    """:func:`read_predictions` and the layout the file was read as: ``generic``, ``vlmevalkit`` or ``lmms-eval``.

    The layout names the harness whose own metric rules the audit shows beside the default variant
    (:data:`vqaudit.scoring.registry.HARNESS_VARIANTS`). Raises as :func:`read_predictions`.
    """
    kind: list[str] = []
    preds = read_predictions(path, fmt, id_field=id_field, image_field=image_field, _kind=kind)
    return preds, kind[0] if kind else "generic"


def read_predictions(
    path: Path,
    fmt: str = "auto",
    *,
    id_field: str | None = None,
    image_field: str | None = None,
    _kind: list[str] | None = None,
) -> Sequence[Prediction]:
    """Read a prediction file into :class:`Prediction` records, in file order.

    Args:
        path: the file (.jsonl, .json, .csv, .tsv or .xlsx).
        fmt: one of :data:`FORMATS` (see the module docstring).
        id_field: the id column to use instead of the first of :data:`ID_KEYS` (generic and VLMEvalKit), or
            ``"row"`` for row numbers.
        image_field: the column naming the image (default: the first of :data:`IMAGE_KEYS`; VLMEvalKit's
            ``image`` column holds base64 data and is ignored).

    Returns:
        The predictions; ids are unique. Held packed (:func:`vqaudit.shortanswer.packed.packed_records`: about
        a tenth of the memory of the records themselves), each record built again when read.

    Raises:
        VqauditError: a missing file, an unknown format, a malformed row, a missing prediction field or a
            duplicate id (naming the file, row and field).
    """
    if fmt not in FORMATS:
        raise VqauditError(f"unknown prediction format {fmt!r}; expected one of {', '.join(FORMATS)}")
    check_input_file(path, "prediction file")
    predictions = packed_records(Prediction)
    seen: set[str] = set()
    duplicate: tuple[Prediction, str] | None = None  # the first row repeating an id, refused once all are read
    total = _text_lines(path)
    try:
        with step(f"reading {path.name}", total) as shown:
            for pred, id_name in _read_rows(path, fmt, id_field, image_field, _kind):
                predictions.append(pred)
                if duplicate is None:
                    if pred.qid in seen:
                        duplicate = pred, id_name
                    seen.add(pred.qid)
                if len(predictions) % _PROGRESS_ROWS == 0:
                    shown.update(min(len(predictions), total))
            shown.update(total)
    except UnicodeDecodeError as exc:
        line = undecodable_line(path)
        at = (
            f"row {line}: "
            if line is not None and file_suffix(path) == ".jsonl"
            else (f"line {line}: " if line is not None else "")
        )
        raise VqauditError(f"{path}: {at}not UTF-8 text ({exc.reason}); save the file as UTF-8") from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise VqauditError(f"{path}: not a readable gzip file ({gzip_reason(exc)})") from None
    if not predictions:
        raise VqauditError(f"{path}: no prediction rows in the file")
    if duplicate is not None:  # a malformed row anywhere in the file is refused first, as it is read
        pred, id_name = duplicate
        first = next(p for p in predictions if p.qid == pred.qid).source.rsplit(":", 1)[1]
        hint = (
            "; LLaVA's answer files repeat the image id as 'question_id': read them with --id-field row "
            "--image-field question_id --join-on image-question"
            if _looks_like_llava(path, id_name)
            else ""
        )
        raise VqauditError(
            f"{pred.source.rsplit(':', 1)[0]}: row {pred.source.rsplit(':', 1)[1]}, field "
            f"'{id_name}': duplicate id {pred.qid!r} (first at row {first}){hint}"
        )
    return predictions


_PROGRESS_ROWS = 1_000
"""Rows read between two progress updates (an update per row cost more than the line it might write); a file of
fewer lines is read in well under a second and shows no progress."""


def _text_lines(path: Path) -> int:
    """Lines of an uncompressed JSON Lines, CSV or TSV file (the reading step's total; 0: no progress shown).

    Files of fewer than :data:`_PROGRESS_ROWS` lines give 0.

    A CSV row quoted over several lines counts each line, so the count only bounds the rows; the step's updates
    are capped at it. Compressed files, JSON documents and .xlsx sheets give 0: their rows are not known
    before they are read.
    """
    if file_suffix(path) not in (".jsonl", ".csv", ".tsv", ".tab") or path.suffix.lower() == ".gz":
        return 0
    lines, last = 0, b"\n"
    try:
        with path.open("rb") as handle:
            while block := handle.read(1 << 20):
                lines += block.count(b"\n")
                last = block[-1:]
    except OSError:
        return 0  # the reader names the problem
    lines += last != b"\n"
    return lines if lines >= _PROGRESS_ROWS else 0


def _looks_like_llava(path: Path, id_name: str) -> bool:
    """Whether a file is LLaVA's ``answers/*.jsonl`` (``question_id``, ``prompt``, ``text``; the id is the image's)."""
    if id_name != "question_id" or file_suffix(path) != ".jsonl":
        return False
    try:
        with open_text(path) as handle:
            first = json.loads(next((line for line in handle if line.strip()), "{}"))
    except (OSError, ValueError, EOFError, zlib.error):
        return False
    return isinstance(first, dict) and {"question_id", "prompt", "text"} <= set(first)


def _read_rows(
    path: Path, fmt: str, id_field: str | None, image_field: str | None, kind_seen: list[str] | None = None
) -> Iterator[tuple[Prediction, str]]:
    """Every row as ``(prediction, the field its id came from)``, in file order, one record at a time.

    The rows and errors of :func:`_read_all`, without holding the file's raw records: each record is turned into
    its prediction (:func:`generic_prediction`, :func:`lmms_prediction`) as it is read and then dropped, and the
    gold answers repeated
    within a row share one string (:func:`_shared`). What needs the whole file is known without it: a CSV/TSV row
    has the header's columns (:func:`vqaudit.shortanswer.record_files.iter_table` refuses any other width), so the
    file's id column is the first row's; a JSON row without an id is numbered as it comes, and when another row
    turns out to have an id (the file has ids: :func:`file_id_key`), or a row fails while such a numbered row is
    pending, the file is read again by :func:`_read_all` to raise its error, the same as before. An xlsx sheet is
    read whole by its reader anyway and goes through :func:`_read_all`. ``kind_seen``: as in :func:`_read_all`.
    """
    suffix = file_suffix(path)
    if (
        suffix in (".xlsx", ".csv", ".tsv", ".tab")
        and fmt == "lmms-eval"
        or suffix not in (".xlsx", ".csv", ".tsv", ".tab", ".json", ".jsonl")
        or suffix == ".xlsx"
    ):
        for pred, id_name in _read_all(path, fmt, id_field, image_field, kind_seen):
            yield _with_shared_gold(pred), id_name
        return
    if suffix in (".csv", ".tsv", ".tab"):
        vlm = fmt == "vlmevalkit"
        if kind_seen is not None:
            kind_seen.append("vlmevalkit" if vlm else "generic")
        id_key: str | None = None
        for row, rec in iter_table(path):
            if row == 2:  # the first row after the header: every row has its columns
                id_key = file_id_key([(row, rec)])
            pred, id_name = generic_prediction(path, row, rec, vlm, id_field, image_field, id_key)
            yield _with_shared_gold(pred), id_name
        return
    records = iter_json_records(path)
    first = next(records, None)
    if first is None:
        return
    kind = fmt if fmt != "auto" else detect_layout(path, first[1])
    if kind_seen is not None:
        kind_seen.append(kind)
    if kind == "lmms-eval":
        for row, rec in chain([first], records):
            pred, id_name = lmms_prediction(path, row, rec)
            yield _with_shared_gold(pred), id_name
        return
    numbered = False  # a row without an id was numbered (an error if any row of the file has an id)
    has_ids = False
    for row, rec in chain([first], records):
        if not has_ids and isinstance(rec, dict) and any(k in rec for k in ID_KEYS):
            has_ids = True
        if numbered and has_ids:
            break
        try:
            pred, id_name = generic_prediction(path, row, rec, kind == "vlmevalkit", id_field, image_field, None)
        except VqauditError:
            if numbered:
                break
            raise
        numbered = numbered or (id_field is None and id_name == ROW_ID)
        yield _with_shared_gold(pred), id_name
    else:
        if not (numbered and has_ids):
            return
    _read_all(path, fmt, id_field, image_field)  # raises the error of the numbered row (or of the failing one)
    raise AssertionError(f"{path}: a row without an id in a file with ids was not refused")  # pragma: no cover


def _with_shared_gold(pred: Prediction) -> Prediction:
    """``pred`` with its repeated gold answers sharing one string each (TextVQA: 10 answers, a few distinct)."""
    gold = _shared(pred.gold)
    return pred if gold is pred.gold else replace(pred, gold=gold)


def _shared(values: tuple[str, ...]) -> tuple[str, ...]:
    """``values`` with equal strings made the same object (``values`` itself when no two are equal)."""
    if len(values) < 2:
        return values
    first: dict[str, str] = {}
    out = tuple(first.setdefault(v, v) for v in values)
    return values if len(first) == len(values) else out


def _read_all(
    path: Path, fmt: str, id_field: str | None, image_field: str | None, kind_seen: list[str] | None = None
) -> list[tuple[Prediction, str]]:
    """Every row as ``(prediction, the field its id came from)``, in file order.

    ``kind_seen``: when given, the layout the rows were read as (``generic``, ``vlmevalkit``, ``lmms-eval``) is
    appended to it.
    """
    suffix = file_suffix(path)
    out: list[tuple[Prediction, str]] = []
    if suffix in (".xlsx", ".csv", ".tsv", ".tab") and fmt == "lmms-eval":
        raise VqauditError(
            f"{path}: --format lmms-eval reads lmms-eval's JSON/JSONL sample logs, not a "
            f"{suffix} table (use --format auto, generic or vlmevalkit)"
        )
    if suffix in (".xlsx", ".csv", ".tsv", ".tab"):
        vlm = fmt == "vlmevalkit" or (fmt == "auto" and suffix == ".xlsx")
        if kind_seen is not None:
            kind_seen.append("vlmevalkit" if vlm else "generic")
        table = list(iter_table(path))
        id_key = file_id_key(table)
        for row, rec in table:
            out.append(generic_prediction(path, row, rec, vlm, id_field, image_field, id_key))
    elif suffix in (".json", ".jsonl"):
        records = list(iter_json_records(path))
        kind = fmt if fmt != "auto" else (detect_layout(path, records[0][1]) if records else "generic")
        if kind_seen is not None:
            kind_seen.append(kind)
        id_key = file_id_key(records) if kind != "lmms-eval" else None
        for row, rec in records:
            if kind == "lmms-eval":
                out.append(lmms_prediction(path, row, rec))
            else:
                out.append(generic_prediction(path, row, rec, kind == "vlmevalkit", id_field, image_field, id_key))
    else:
        raise VqauditError(
            f"{path}: unsupported prediction file type {suffix!r} (use .jsonl, .json, .csv, .tsv or .xlsx)"
        )
    return out
