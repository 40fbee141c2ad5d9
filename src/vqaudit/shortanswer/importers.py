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
Prediction values (:func:`_prediction_text`): text is taken as is; a finite JSON number becomes its text as
written (``1.50`` -> ``"1.50"``); a missing, null or empty prediction becomes "" (an empty output, reported
in the failure notes, never dropped); booleans, non-finite numbers (``NaN``, ``Infinity``, ``1e999``), lists and
objects are refused.
Sheet cells holding a boolean or a date-formatted number are refused like JSON booleans; ids must be
non-blank strings or numbers. CSV/TSV are read strictly (:mod:`vqaudit.shortanswer.record_files`, which reads
every format's records): an unterminated quote, a quote closing a field early, and a quoted field swallowing
lines that look like rows are refused.
Text files are read as UTF-8 with an optional leading byte order mark (``utf-8-sig``).
Errors name the file, the 1-based row and the field.
"""

from __future__ import annotations

import ast
import gzip
import json
import math
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import replace
from itertools import chain
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.shortanswer.loaders import check_input_file, gzip_reason, undecodable_line
from vqaudit.shortanswer.packed import packed_records
from vqaudit.shortanswer.record_files import (
    GOLD_KEYS,
    ID_KEYS,
    IMAGE_KEYS,
    PRED_KEYS,
    QUESTION_KEYS,
    JsonNumber,
    file_suffix,
    iter_json_records,
    iter_table,
    open_text,
)
from vqaudit.shortanswer.records import Prediction
from vqaudit.xlsx import XlsxDate, XlsxUnreadable

FORMATS = ("auto", "generic", "vlmevalkit", "lmms-eval")
ROW_ID = "row"
"""``id_field="row"``: number the rows 1, 2, ... (for files whose id column repeats, such as LLaVA's TextVQA
answers, whose ``question_id`` is the image id; join those with ``on="image-question"``)."""


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _prediction_text(path: Path, row: int, name: str, value: Any) -> str:
    """A prediction cell as the output text (one rule for every format; docs/shortanswer.md "Inputs").

    Text is taken as is; a finite number becomes its text as written in a JSON file (``1.50`` -> ``"1.50"``),
    else its ``str()`` (integers: the digits); null and a missing or empty cell are an empty prediction ("").
    Booleans and non-finite numbers (JSON's non-standard ``NaN`` and ``Infinity``, ``1e999`` parsing as ``inf``)
    are refused alike: no model writes them, they mean the file was produced by something else (a NaN is a
    number that failed, not a reply that was empty: it would be scored as an empty reply).

    Raises:
        VqauditError: a boolean, a non-finite number, a list or an object (naming the file, row and field).
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return _answer_text(path, row, name, value, "prediction")


def _answer_text(path: Path, row: int, name: str, value: Any, what: str) -> str:
    """A non-missing prediction or gold-answer cell as text (the rule of :func:`_prediction_text`)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        raise VqauditError(
            f"{path}: row {row}, field '{name}': expected text, got the boolean "
            f"{str(value).lower()} (write the {what} as a string)"
        )
    if isinstance(value, float) and not math.isfinite(value):
        written = value.text if isinstance(value, JsonNumber) else "NaN" if value != value else str(value)
        missing = " (or null for a missing one)" if what == "prediction" else ""
        raise VqauditError(
            f"{path}: row {row}, field '{name}': expected text, got the non-finite number "
            f"{written} (write the {what} as a string{missing})"
        )
    if isinstance(value, XlsxDate):
        raise VqauditError(
            f"{path}: row {row}, field '{name}': expected text, got a date cell (serial number "
            f"{value.serial}; format the column as text and write the {what} there)"
        )
    if isinstance(value, JsonNumber):
        return value.text
    if isinstance(value, (int, float)):
        return str(value)
    raise VqauditError(f"{path}: row {row}, field '{name}': expected text, got {_kind(value)}")


def _kind(value: Any) -> str:
    """What a value is, in the words of the file that held it ("a JSON list", "a JSON object", ...)."""
    if isinstance(value, list):
        return "a JSON list"
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, XlsxDate):
        return f"a date cell (serial number {value.serial})"
    if isinstance(value, XlsxUnreadable):
        return f"a cell that {value.reason}"
    return f"a value of type {type(value).__name__}"


def _scalar_text(path: Path, row: int, name: str, value: Any) -> str:
    """A question, split or image cell as text (missing: ""); booleans, dates, lists and objects are refused."""
    if _is_missing(value):
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise VqauditError(f"{path}: row {row}, field '{name}': expected text, got {_kind(value)}")
    return str(value)


def _id_text(path: Path, row: int, name: str, value: Any) -> str:
    """An id cell as text: a string or a number; booleans, dates, lists, objects and blank text are refused."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise VqauditError(f"{path}: row {row}, field '{name}': expected a string or integer id, got {_kind(value)}")
    text = str(value)
    if not text.strip():
        raise VqauditError(
            f"{path}: row {row}, field '{name}': the id is empty text (a row without an id cannot "
            "be joined; give every row its id)"
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise VqauditError(
            f"{path}: row {row}, field '{name}': expected a string or integer id, got the non-finite number {text}"
        )
    return text


def _answerable_score(path: Path, row: int, value: Any) -> float | None:
    """An ``answerable`` cell (VizWiz's result format: the score that the question is answerable) as a float.

    Missing: None. A number in [0, 1] (0/1 included) is the score; anything else is refused.

    Raises:
        VqauditError: a boolean, text, or a number outside [0, 1] (naming the file, row and field).
    """
    if _is_missing(value):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
        raise VqauditError(
            f"{path}: row {row}, field 'answerable': expected a score from 0 to 1 that the question "
            f"is answerable, got {value!r}"
        )
    return float(value)


def _gold_values(path: Path, row: int, name: str, value: Any, *, expand_literal: bool) -> tuple[str, ...]:
    if _is_missing(value):
        return ()
    if isinstance(value, list):
        for i, v in enumerate(value, start=1):
            if _is_missing(v):
                raise VqauditError(
                    f"{path}: row {row}, field '{name}': answer {i} is null or NaN (a gold answer "
                    "must be text; drop it or give the row without gold)"
                )
        return tuple(_answer_text(path, row, name, v, "gold answer") for v in value)
    text = _answer_text(path, row, name, value, "gold answer")
    stripped = text.strip()
    if stripped.startswith("[") and stripped.endswith("]") and ("'" in stripped or '"' in stripped):
        strings = _string_list(stripped)
        if strings:
            return strings
    if expand_literal and text.startswith("["):
        try:
            parsed = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return (text,)
        if isinstance(parsed, list) and parsed:
            return tuple(str(v) for v in parsed)
    return (text,)


def _string_list(text: str) -> tuple[str, ...]:
    """The answers of a cell holding a Python list of strings (``"['a', 'b']"``), else () (never ``eval``)."""
    try:
        parsed = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return ()
    if isinstance(parsed, list) and parsed and all(isinstance(v, str) for v in parsed):
        return tuple(parsed)
    return ()


def _detect(path: Path, first: Any) -> str:
    if isinstance(first, dict) and "doc_id" in first and ("filtered_resps" in first or "resps" in first):
        return "lmms-eval"
    return "generic"


def _file_id_key(records: list[tuple[int, Any]]) -> str | None:
    """The first of :data:`ID_KEYS` that any record (any table column) has, or None: the file has no ids."""
    present = {k for _, rec in records if isinstance(rec, dict) for k in ID_KEYS if k in rec}
    return next((k for k in ID_KEYS if k in present), None)


def _generic(
    path: Path,
    row: int,
    rec: Any,
    vlmevalkit: bool,
    id_field: str | None = None,
    image_field: str | None = None,
    file_id_key: str | None = None,
) -> tuple[Prediction, str]:
    """One generic / VLMEvalKit record as a prediction and the name of the field its id came from.

    A row without an id in a file that has ids (``file_id_key``) is refused: numbering it would join it to
    another question's gold.
    """
    if not isinstance(rec, dict):
        raise VqauditError(f"{path}: row {row}: expected a JSON object")
    gold_key = next((k for k in GOLD_KEYS if k in rec), None)
    pred_key = next((k for k in PRED_KEYS if k in rec), None)
    if pred_key is None and gold_key is not None and "answer" in rec and not vlmevalkit:
        pred_key = "answer"
    if pred_key is None:
        raise VqauditError(f"{path}: row {row}, field 'prediction': missing (looked for {', '.join(PRED_KEYS)})")
    if gold_key is None and "answer" in rec and pred_key != "answer":
        gold_key = "answer"
    for name in (id_field, image_field):
        if name is not None and name != ROW_ID and (name not in rec or _is_missing(rec[name])):
            raise VqauditError(f"{path}: row {row}, field '{name}': missing")
    id_key = id_field or next((k for k in ID_KEYS if k in rec and not _is_missing(rec[k])), None)
    if id_key is None and file_id_key is not None:
        raise VqauditError(
            f"{path}: row {row}, field '{file_id_key}': missing (the other rows have ids; a row "
            "number would join this prediction to another question)"
        )
    qid = str(row) if id_key in (None, ROW_ID) else _id_text(path, row, str(id_key), rec[id_key])
    question = next((_scalar_text(path, row, k, rec[k]) for k in QUESTION_KEYS if k in rec), "")
    if not question and isinstance(rec.get("prompt"), str):
        question = rec["prompt"].split("\n", 1)[0]
    gold = () if gold_key is None else _gold_values(path, row, gold_key, rec[gold_key], expand_literal=False)
    image_key = image_field or next((k for k in IMAGE_KEYS if k in rec and isinstance(rec[k], (str, int))), None)
    image = "" if image_key is None or (vlmevalkit and image_field is None) else str(rec[image_key])
    return Prediction(
        qid=qid,
        prediction=_prediction_text(path, row, pred_key, rec.get(pred_key)),
        question=question,
        gold=gold,
        split=_scalar_text(path, row, "split", rec.get("split")),
        source=f"{path}:{row}",
        image=image,
        row_id=id_key in (None, ROW_ID),
        answerable_score=_answerable_score(path, row, rec.get("answerable")),
    ), str(id_key or ROW_ID)


def _lmms(path: Path, row: int, rec: Any) -> tuple[Prediction, str]:
    if not isinstance(rec, dict):
        raise VqauditError(f"{path}: row {row}: expected a JSON object")
    doc = rec.get("doc") if isinstance(rec.get("doc"), dict) else {}
    assert isinstance(doc, dict)
    resp: Any = rec.get("filtered_resps")
    name = "filtered_resps"
    if not resp:
        resp, name = rec.get("resps"), "resps"
    while isinstance(resp, list):
        if not resp:
            resp = None
            break
        resp = resp[0]
    qid_name = next((f"doc.{k}" for k in ("question_id", "questionId") if k in doc), "doc_id")
    qid_value = doc[qid_name[4:]] if qid_name != "doc_id" else rec.get("doc_id")
    if _is_missing(qid_value):
        raise VqauditError(f"{path}: row {row}, field '{qid_name}': missing")
    if "answers" in doc:
        gold = _gold_values(path, row, "doc.answers", doc["answers"], expand_literal=True)
    else:
        gold = _gold_values(path, row, "target", rec.get("target"), expand_literal=True)
    question = _scalar_text(path, row, "doc.question", doc.get("question", doc.get("query", "")))
    return Prediction(
        qid=_id_text(path, row, qid_name, qid_value),
        prediction=_prediction_text(path, row, name, resp),
        question=question,
        gold=gold,
        split=_scalar_text(path, row, "doc.split", doc.get("split")),
        source=f"{path}:{row}",
    ), qid_name


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
    try:
        for pred, id_name in _read_rows(path, fmt, id_field, image_field, _kind):
            predictions.append(pred)
            if duplicate is None:
                if pred.qid in seen:
                    duplicate = pred, id_name
                seen.add(pred.qid)
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
    its prediction (:func:`_generic`, :func:`_lmms`) as it is read and then dropped, and the gold answers repeated
    within a row share one string (:func:`_shared`). What needs the whole file is known without it: a CSV/TSV row
    has the header's columns (:func:`vqaudit.shortanswer.record_files.iter_table` refuses any other width), so the
    file's id column is the first row's; a JSON row without an id is numbered as it comes, and when another row
    turns out to have an id (the file has ids: :func:`_file_id_key`), or a row fails while such a numbered row is
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
                id_key = _file_id_key([(row, rec)])
            pred, id_name = _generic(path, row, rec, vlm, id_field, image_field, id_key)
            yield _with_shared_gold(pred), id_name
        return
    records = iter_json_records(path)
    first = next(records, None)
    if first is None:
        return
    kind = fmt if fmt != "auto" else _detect(path, first[1])
    if kind_seen is not None:
        kind_seen.append(kind)
    if kind == "lmms-eval":
        for row, rec in chain([first], records):
            pred, id_name = _lmms(path, row, rec)
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
            pred, id_name = _generic(path, row, rec, kind == "vlmevalkit", id_field, image_field, None)
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
        id_key = _file_id_key(table)
        for row, rec in table:
            out.append(_generic(path, row, rec, vlm, id_field, image_field, id_key))
    elif suffix in (".json", ".jsonl"):
        records = list(iter_json_records(path))
        kind = fmt if fmt != "auto" else (_detect(path, records[0][1]) if records else "generic")
        if kind_seen is not None:
            kind_seen.append(kind)
        id_key = _file_id_key(records) if kind != "lmms-eval" else None
        for row, rec in records:
            if kind == "lmms-eval":
                out.append(_lmms(path, row, rec))
            else:
                out.append(_generic(path, row, rec, kind == "vlmevalkit", id_field, image_field, id_key))
    else:
        raise VqauditError(
            f"{path}: unsupported prediction file type {suffix!r} (use .jsonl, .json, .csv, .tsv or .xlsx)"
        )
    return out
