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
written (``1.50`` -> ``"1.50"``); a missing, null, empty or NaN prediction becomes "" (an empty output, reported
in the failure notes, never dropped); booleans, infinite numbers (``1e999``), lists and objects are refused.
Sheet cells holding a boolean or a date-formatted number are refused like JSON booleans; ids must be
non-blank strings or numbers. CSV/TSV are read strictly (:func:`_iter_table`): an unterminated quote, a quote
closing a field early, and a quoted field swallowing lines that look like rows are refused.
Text files are read as UTF-8 with an optional leading byte order mark (``utf-8-sig``).
Errors name the file, the 1-based row and the field.
"""

from __future__ import annotations

import ast
import csv
import gzip
import io
import json
import math
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.shortanswer.loaders import check_input_file, gzip_reason, undecodable_line
from vqaudit.shortanswer.records import Prediction
from vqaudit.xlsx import XlsxDate, read_xlsx_cells, sheet_names

FORMATS = ("auto", "generic", "vlmevalkit", "lmms-eval")
ID_KEYS = ("question_id", "questionId", "qid", "id", "index", "doc_id", "textvqa_question_id")
PRED_KEYS = ("prediction", "pred", "text", "output", "response", "model_answer")
GOLD_KEYS = ("gt_answers", "answers", "gold", "label", "target")
QUESTION_KEYS = ("question", "query")
IMAGE_KEYS = ("image", "image_path", "image_id", "imgname", "file_name")
_SHORT_ROW = "\x00vqaudit:short-row\x00"  # csv restval: marks the fields of a row shorter than the header
ROW_ID = "row"
"""``id_field="row"``: number the rows 1, 2, ... (for files whose id column repeats, such as LLaVA's TextVQA
answers, whose ``question_id`` is the image id; join those with ``on="image-question"``)."""


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


class _JsonNumber(float):
    """A JSON number with a fraction or exponent, carrying its text as written (``1.50`` stays ``"1.50"``).

    It is a float everywhere else (``str()`` gives the float's repr, as before), so only the prediction rule
    (:func:`_prediction_text`) sees the written text.
    """

    text: str

    def __new__(cls, text: str) -> _JsonNumber:
        number = super().__new__(cls, text)
        number.text = text
        return number


def _json_loads(text: str) -> Any:
    """``json.loads`` keeping each fractional number's text (:class:`_JsonNumber`); integers stay ints."""
    return json.loads(text, parse_float=_JsonNumber)


def _prediction_text(path: Path, row: int, name: str, value: Any) -> str:
    """A prediction cell as the output text (one rule for every format; docs/shortanswer.md "Inputs").

    Text is taken as is; a finite number becomes its text as written in a JSON file (``1.50`` -> ``"1.50"``),
    else its ``str()`` (integers: the digits); null, a missing cell and NaN (pandas' missing value in a sheet)
    are an empty prediction (""). Booleans and infinite numbers (``1e999`` parses as ``inf``) are refused: no
    model writes them, they mean the file was produced by something else.

    Raises:
        VqauditError: a boolean, an infinite number, a list or an object (naming the file, row and field).
    """
    if _is_missing(value):
        return ""
    if isinstance(value, str):
        return value
    return _answer_text(path, row, name, value, "prediction")


def _answer_text(path: Path, row: int, name: str, value: Any, what: str) -> str:
    """A non-missing prediction or gold-answer cell as text (the rule of :func:`_prediction_text`)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        raise VqauditError(f"{path}: row {row}, field '{name}': expected text, got the boolean "
                           f"{str(value).lower()} (write the {what} as a string)")
    if isinstance(value, float) and not math.isfinite(value):
        written = value.text if isinstance(value, _JsonNumber) else str(value)
        raise VqauditError(f"{path}: row {row}, field '{name}': expected text, got the non-finite number "
                           f"{written} (write the {what} as a string)")
    if isinstance(value, XlsxDate):
        raise VqauditError(f"{path}: row {row}, field '{name}': expected text, got a date cell (serial number "
                           f"{value.serial}; format the column as text and write the {what} there)")
    if isinstance(value, _JsonNumber):
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
        raise VqauditError(f"{path}: row {row}, field '{name}': expected a string or integer id, got "
                           f"{_kind(value)}")
    text = str(value)
    if not text.strip():
        raise VqauditError(f"{path}: row {row}, field '{name}': the id is empty text (a row without an id cannot "
                           "be joined; give every row its id)")
    if isinstance(value, float) and not math.isfinite(value):
        raise VqauditError(f"{path}: row {row}, field '{name}': expected a string or integer id, got the "
                           f"non-finite number {text}")
    return text


def _gold_values(path: Path, row: int, name: str, value: Any, *, expand_literal: bool) -> tuple[str, ...]:
    if _is_missing(value):
        return ()
    if isinstance(value, list):
        for i, v in enumerate(value, start=1):
            if _is_missing(v):
                raise VqauditError(f"{path}: row {row}, field '{name}': answer {i} is null or NaN (a gold answer "
                                   "must be text; drop it or give the row without gold)")
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


def _suffix(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        return suffixes[-2] if len(suffixes) >= 2 else ""
    return path.suffix.lower()


def _open_text(path: Path) -> io.TextIOBase:
    if path.suffix.lower() == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline="")
    return io.TextIOWrapper(path.open("rb"), encoding="utf-8-sig", newline="")


def _iter_json_records(path: Path) -> Iterator[tuple[int, Any]]:
    if _suffix(path) == ".jsonl":
        with _open_text(path) as handle:
            for row, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    yield row, _json_loads(line)
                except json.JSONDecodeError as exc:
                    raise VqauditError(f"{path}: row {row}: not valid JSON: {exc.msg}") from None
        return
    try:
        with _open_text(path) as handle:
            data = _json_loads(handle.read())
    except json.JSONDecodeError as exc:
        raise VqauditError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}") from None
    if isinstance(data, dict) and isinstance(data.get("logs"), list):
        data = data["logs"]
    elif isinstance(data, dict) and data and all(isinstance(v, dict) for v in data.values()):
        data = [v if any(k in v for k in ID_KEYS) else {"question_id": key, **v} for key, v in data.items()]
    if not isinstance(data, list):
        raise VqauditError(f"{path}: expected a JSON list of records, an object of records keyed by question id, "
                           "or lmms-eval {'logs': [...]}")
    yield from enumerate(data, start=1)


def _iter_table(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    suffix = _suffix(path)
    if suffix == ".xlsx":
        rows = read_xlsx_cells(path)
        sheets = sheet_names(path)
        more = (f" (only the first of the workbook's {len(sheets)} sheets, {sheets[0]!r}, is read; the others are "
                f"{', '.join(repr(n) for n in sheets[1:])}: put the predictions in the first sheet)"
                if len(sheets) > 1 else "")
        if not rows:
            raise VqauditError(f"{path}: the sheet is empty{more}")
        header = [str(h) if h is not None else "" for h in rows[0]]
        if more and not any(k in header for k in PRED_KEYS):
            raise VqauditError(f"{path}: row 1, field 'prediction': missing (looked for {', '.join(PRED_KEYS)})"
                               f"{more}")
        for row, values in enumerate(rows[1:], start=2):
            yield row, dict(zip(header, values, strict=False))
        return
    delimiter, kind = ("\t", "TSV") if suffix in (".tsv", ".tab") else (",", "CSV")
    with _open_text(path) as handle:
        reader = csv.DictReader(handle, delimiter=delimiter, restval=_SHORT_ROW, strict=True)
        row, start = 1, 2  # row 1 is the header; ``start`` is the physical line the next row starts on
        try:
            for row, rec in enumerate(reader, start=2):
                header = list(reader.fieldnames or ())
                _check_width(path, row, rec, len(header))
                if reader.line_num > start:
                    _check_spanning(path, row, start, rec, header, delimiter)
                start = reader.line_num + 1
                yield row, {k: (None if v == "" else v) for k, v in rec.items()}
        except csv.Error as exc:
            raise _quote_error(path, row + 1, start, reader.fieldnames or (), delimiter, kind, exc) from None


_QUOTING_HINT = ("write the file with a CSV writer (Python's csv module, pandas to_csv), which quotes such fields "
                 "and doubles the quotes inside them, or as JSON Lines, which needs no quoting")


def _quote_error(path: Path, row: int, line: int, header: Any, delimiter: str, kind: str,
                 exc: csv.Error) -> VqauditError:
    """The one-line error for a CSV/TSV record the strict reader refuses (an unterminated or misplaced quote)."""
    field = _quoted_field(path, line, delimiter)
    name = f", field '{header[field]}'" if header and field is not None and field < len(header) else ""
    where = f"{path}: row {row} (line {line}){name}"
    if "unexpected end of data" in str(exc):
        return VqauditError(f"{where}: a quoted field starts here and is never closed (an unmatched '\"' swallows "
                            f"the rest of the file); {_QUOTING_HINT}")
    return VqauditError(f"{where}: not valid {kind}: {exc} (a '\"' ends a quoted field in the middle of it); "
                        f"{_QUOTING_HINT}")


def _quoted_field(path: Path, line: int, delimiter: str) -> int | None:
    """The 0-based index of the field on physical line ``line`` whose quoting is broken, or None.

    Broken: a quote opened at the start of the field and never closed on the line, or closed and followed by
    something other than the delimiter or the line's end.
    """
    try:
        with _open_text(path) as handle:
            text = next((t for n, t in enumerate(handle, start=1) if n == line), "")
    except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile, zlib.error):
        return None
    text = text.rstrip("\r\n")
    field, quoted, closed, at_start, i = 0, False, False, True, 0
    while i < len(text):
        ch = text[i]
        if quoted:
            if ch == '"' and text[i + 1:i + 2] == '"':
                i += 1
            elif ch == '"':
                quoted, closed = False, True
        elif ch == delimiter:
            field, at_start, closed = field + 1, True, False
            i += 1
            continue
        elif closed:
            return field
        elif ch == '"' and at_start:
            quoted = True
        at_start = False
        i += 1
    return field if quoted else None


def _check_spanning(path: Path, row: int, line: int, rec: dict[Any, Any], header: Any, delimiter: str) -> None:
    """Refuse a quoted field running over lines that look like rows of their own (a stray quote's swallow).

    A field legitimately spanning lines (a multi-line prediction, written by a CSV writer) is kept. A stray
    ``"`` at the start of a field and another one at the end of a later row make one field of the rows
    between: the field's lines then have the header's number of fields, and (when the header has an id
    column) an id of the row's own kind in that column (digits when the row's id is digits). Such a line is
    refused, naming it.
    """
    width = len(header)
    id_col = next((header.index(k) for k in ID_KEYS if k in header), None)
    own_id = rec.get(header[id_col]) if id_col is not None else None
    for name, value in rec.items():
        if not isinstance(value, str) or "\n" not in value and "\r" not in value:
            continue
        for offset, inner in enumerate(value.splitlines()[1:], start=1):
            parts = inner.split(delimiter)
            if width < 2 or len(parts) != width:
                continue
            if id_col is not None:
                cell = parts[id_col].strip()
                if not cell or any(c.isspace() for c in cell):
                    continue
                if isinstance(own_id, str) and own_id.isdigit() and not cell.isdigit():
                    continue
            raise VqauditError(f"{path}: row {row} (line {line}), field '{name}': this quoted field runs over "
                               f"line {line + offset}, which looks like a row of its own ({width} fields); an "
                               f"unmatched '\"' at the start of the field joins the rows between into one; "
                               f"{_QUOTING_HINT}")


def _check_width(path: Path, row: int, rec: dict[Any, Any], header: int) -> None:
    """Refuse a CSV/TSV row with more or fewer fields than the header (a quoting slip shifts every column)."""
    if None in rec:
        raise VqauditError(f"{path}: row {row}: {header + len(rec[None])} fields where the header has {header}")
    short = next((k for k, v in rec.items() if v == _SHORT_ROW), None)
    if short is not None:
        raise VqauditError(f"{path}: row {row}, field '{short}': missing (the row has fewer fields than the header)")


def _detect(path: Path, first: Any) -> str:
    if isinstance(first, dict) and "doc_id" in first and ("filtered_resps" in first or "resps" in first):
        return "lmms-eval"
    return "generic"


def _file_id_key(records: list[tuple[int, Any]]) -> str | None:
    """The first of :data:`ID_KEYS` that any record (any table column) has, or None: the file has no ids."""
    present = {k for _, rec in records if isinstance(rec, dict) for k in ID_KEYS if k in rec}
    return next((k for k in ID_KEYS if k in present), None)


def _generic(path: Path, row: int, rec: Any, vlmevalkit: bool, id_field: str | None = None,
             image_field: str | None = None, file_id_key: str | None = None) -> tuple[Prediction, str]:
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
        raise VqauditError(f"{path}: row {row}, field '{file_id_key}': missing (the other rows have ids; a row "
                           "number would join this prediction to another question)")
    qid = str(row) if id_key in (None, ROW_ID) else _id_text(path, row, str(id_key), rec[id_key])
    question = next((_scalar_text(path, row, k, rec[k]) for k in QUESTION_KEYS if k in rec), "")
    if not question and isinstance(rec.get("prompt"), str):
        question = rec["prompt"].split("\n", 1)[0]
    gold = () if gold_key is None else _gold_values(path, row, gold_key, rec[gold_key], expand_literal=False)
    image_key = image_field or next((k for k in IMAGE_KEYS if k in rec and isinstance(rec[k], (str, int))), None)
    image = "" if image_key is None or (vlmevalkit and image_field is None) else str(rec[image_key])
    return Prediction(qid=qid, prediction=_prediction_text(path, row, pred_key, rec.get(pred_key)),
                      question=question, gold=gold, split=_scalar_text(path, row, "split", rec.get("split")),
                      source=f"{path}:{row}", image=image, row_id=id_key in (None, ROW_ID)), str(id_key or ROW_ID)


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
    return Prediction(qid=_id_text(path, row, qid_name, qid_value),
                      prediction=_prediction_text(path, row, name, resp), question=question, gold=gold,
                      split=_scalar_text(path, row, "doc.split", doc.get("split")), source=f"{path}:{row}"), qid_name


def read_predictions(path: Path, fmt: str = "auto", *, id_field: str | None = None,
                     image_field: str | None = None) -> list[Prediction]:
    """Read a prediction file into :class:`Prediction` records, in file order.

    Args:
        path: the file (.jsonl, .json, .csv, .tsv or .xlsx).
        fmt: one of :data:`FORMATS` (see the module docstring).
        id_field: the id column to use instead of the first of :data:`ID_KEYS` (generic and VLMEvalKit), or
            ``"row"`` for row numbers.
        image_field: the column naming the image (default: the first of :data:`IMAGE_KEYS`; VLMEvalKit's
            ``image`` column holds base64 data and is ignored).

    Returns:
        The predictions; ids are unique.

    Raises:
        VqauditError: a missing file, an unknown format, a malformed row, a missing prediction field or a
            duplicate id (naming the file, row and field).
    """
    if fmt not in FORMATS:
        raise VqauditError(f"unknown prediction format {fmt!r}; expected one of {', '.join(FORMATS)}")
    check_input_file(path, "prediction file")
    try:
        read = _read_all(path, fmt, id_field, image_field)
    except UnicodeDecodeError as exc:
        line = undecodable_line(path)
        at = f"row {line}: " if line is not None and _suffix(path) == ".jsonl" else (
            f"line {line}: " if line is not None else "")
        raise VqauditError(f"{path}: {at}not UTF-8 text ({exc.reason}); save the file as UTF-8") from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise VqauditError(f"{path}: not a readable gzip file ({gzip_reason(exc)})") from None
    if not read:
        raise VqauditError(f"{path}: no prediction rows in the file")
    seen: dict[str, str] = {}
    for pred, id_name in read:
        if pred.qid in seen:
            hint = ("; LLaVA's answer files repeat the image id as 'question_id': read them with --id-field row "
                    "--image-field question_id --join-on image-question" if _looks_like_llava(path, id_name) else "")
            raise VqauditError(f"{pred.source.rsplit(':', 1)[0]}: row {pred.source.rsplit(':', 1)[1]}, field "
                               f"'{id_name}': duplicate id {pred.qid!r} (first at row {seen[pred.qid]}){hint}")
        seen[pred.qid] = pred.source.rsplit(":", 1)[1]
    return [pred for pred, _ in read]


def _looks_like_llava(path: Path, id_name: str) -> bool:
    """Whether a file is LLaVA's ``answers/*.jsonl`` (``question_id``, ``prompt``, ``text``; the id is the image's)."""
    if id_name != "question_id" or _suffix(path) != ".jsonl":
        return False
    try:
        with _open_text(path) as handle:
            first = json.loads(next((line for line in handle if line.strip()), "{}"))
    except (OSError, ValueError, EOFError, zlib.error):
        return False
    return isinstance(first, dict) and {"question_id", "prompt", "text"} <= set(first)


def _read_all(path: Path, fmt: str, id_field: str | None, image_field: str | None) -> list[tuple[Prediction, str]]:
    """Every row as ``(prediction, the field its id came from)``, in file order."""
    suffix = _suffix(path)
    out: list[tuple[Prediction, str]] = []
    if suffix in (".xlsx", ".csv", ".tsv", ".tab") and fmt == "lmms-eval":
        raise VqauditError(f"{path}: --format lmms-eval reads lmms-eval's JSON/JSONL sample logs, not a "
                           f"{suffix} table (use --format auto, generic or vlmevalkit)")
    if suffix in (".xlsx", ".csv", ".tsv", ".tab"):
        vlm = fmt == "vlmevalkit" or (fmt == "auto" and suffix == ".xlsx")
        table = list(_iter_table(path))
        id_key = _file_id_key(table)
        for row, rec in table:
            out.append(_generic(path, row, rec, vlm, id_field, image_field, id_key))
    elif suffix in (".json", ".jsonl"):
        records = list(_iter_json_records(path))
        kind = fmt if fmt != "auto" else (_detect(path, records[0][1]) if records else "generic")
        id_key = _file_id_key(records) if kind != "lmms-eval" else None
        for row, rec in records:
            if kind == "lmms-eval":
                out.append(_lmms(path, row, rec))
            else:
                out.append(_generic(path, row, rec, kind == "vlmevalkit", id_field, image_field, id_key))
    else:
        raise VqauditError(f"{path}: unsupported prediction file type {suffix!r} "
                           "(use .jsonl, .json, .csv, .tsv or .xlsx)")
    return out
