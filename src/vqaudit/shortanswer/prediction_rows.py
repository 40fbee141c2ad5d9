"""One row of a prediction file as a :class:`~vqaudit.shortanswer.records.Prediction`.

The cell rules and the row layouts (generic and VLMEvalKit records, lmms-eval samples) that :mod:`.importers` reads.

Every cell rule names the file, the 1-based row and the field of what it refuses (docs/shortanswer.md "Inputs").
"""

from __future__ import annotations

import ast
import math
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.shortanswer.record_files import GOLD_KEYS, ID_KEYS, IMAGE_KEYS, PRED_KEYS, QUESTION_KEYS, JsonNumber
from vqaudit.shortanswer.records import Prediction
from vqaudit.xlsx import XlsxDate, XlsxUnreadable

ROW_ID = "row"
"""``id_field="row"``: number the rows 1, 2, ... (for files whose id column repeats, such as LLaVA's TextVQA
answers, whose ``question_id`` is the image id; join those with ``on="image-question"``)."""


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def prediction_text(path: Path, row: int, name: str, value: Any) -> str:
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
    """A non-missing prediction or gold-answer cell as text (the rule of :func:`prediction_text`)."""
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


def gold_values(path: Path, row: int, name: str, value: Any, *, expand_literal: bool) -> tuple[str, ...]:
    """A gold cell as its answers (missing: none); a list's items each by the rule of :func:`prediction_text`.

    A text cell holding a Python list of strings (VLMEvalKit's ``"['a', 'b']"``) is expanded into its strings;
    with ``expand_literal`` (lmms-eval's ``target``) any list literal is. Never ``eval``.

    Raises:
        VqauditError: a null or NaN answer in a list, or an answer cell that is not text (naming the file, row and
            field).
    """
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


def detect_layout(path: Path, first: Any) -> str:
    """The layout of a JSON file by its first record: ``lmms-eval`` for a sample log, else ``generic``.

    A sample log's record has ``doc_id`` and its replies (``filtered_resps`` or ``resps``).
    """
    if isinstance(first, dict) and "doc_id" in first and ("filtered_resps" in first or "resps" in first):
        return "lmms-eval"
    return "generic"


def file_id_key(records: list[tuple[int, Any]]) -> str | None:
    """The first of :data:`ID_KEYS` that any record (any table column) has, or None: the file has no ids."""
    present = {k for _, rec in records if isinstance(rec, dict) for k in ID_KEYS if k in rec}
    return next((k for k in ID_KEYS if k in present), None)


def generic_prediction(
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
    gold = () if gold_key is None else gold_values(path, row, gold_key, rec[gold_key], expand_literal=False)
    image_key = image_field or next((k for k in IMAGE_KEYS if k in rec and isinstance(rec[k], (str, int))), None)
    image = "" if image_key is None or (vlmevalkit and image_field is None) else str(rec[image_key])
    return Prediction(
        qid=qid,
        prediction=prediction_text(path, row, pred_key, rec.get(pred_key)),
        question=question,
        gold=gold,
        split=_scalar_text(path, row, "split", rec.get("split")),
        source=f"{path}:{row}",
        image=image,
        row_id=id_key in (None, ROW_ID),
        answerable_score=_answerable_score(path, row, rec.get("answerable")),
    ), str(id_key or ROW_ID)


def lmms_prediction(path: Path, row: int, rec: Any) -> tuple[Prediction, str]:
    """One lmms-eval sample as a prediction and the name of the field its id came from.

    The fields read are in the module docstring of :mod:`.importers`: ``filtered_resps[0]``, ``doc.question_id``,
    ``doc.answers`` or ``target``.

    Raises:
        VqauditError: not a JSON object, a missing id, or a cell its rule refuses (naming the file, row and field).
    """
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
        gold = gold_values(path, row, "doc.answers", doc["answers"], expand_literal=True)
    else:
        gold = gold_values(path, row, "target", rec.get("target"), expand_literal=True)
    question = _scalar_text(path, row, "doc.question", doc.get("question", doc.get("query", "")))
    return Prediction(
        qid=_id_text(path, row, qid_name, qid_value),
        prediction=prediction_text(path, row, name, resp),
        question=question,
        gold=gold,
        split=_scalar_text(path, row, "doc.split", doc.get("split")),
        source=f"{path}:{row}",
    ), qid_name
