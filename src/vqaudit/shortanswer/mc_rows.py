"""One record of a multiple-choice prediction file as an :class:`~vqaudit.shortanswer.mc_records.MCRow`.

The layouts and the defective-row rules are in the module docstring of :mod:`.mc_read`; a row whose own data is
broken raises :class:`DefectiveRow`, which :func:`vqaudit.shortanswer.mc_read.read_mc_file` lists or refuses.
Every error names the file, the data row (1-based) and the field.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.parsing.choice import normalize_text
from vqaudit.shortanswer.mc_records import MC_LETTERS, MCRow
from vqaudit.suites.upd.tsv import CIRCULAR_STRIDE

ID_KEYS = ("question_id", "id", "index", "pid", "qid")
"""The id fields of a record, first found (none: the row number is the id)."""
_REPLY_KEYS = ("prediction", "response", "output", "text", "model_answer")
_CHOICE_TYPES = ("multiple-choice", "multi_choice", "choice", "")


class DefectiveRow(VqauditError):
    """A row's own data is broken: raised by :func:`mc_row`, listed or refused by ``mc_read.read_mc_file``."""

    def __init__(self, path: Path, row: int, field: str, reason: str) -> None:
        super().__init__(f"{path}: row {row}, field '{field}': {reason}")
        self.field = field
        self.reason = reason


def cell_text(path: Path, row: int, name: str, value: Any) -> str:
    """A cell as stripped text ("" for a missing or NaN cell).

    Raises:
        VqauditError: a boolean, a list or an object (naming the file, row and field).
    """
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise VqauditError(f"{path}: row {row}, field '{name}': expected text, got {type(value).__name__}")
    return str(value).strip()


def first_key(rec: dict[str, Any], keys: Sequence[str]) -> str | None:
    """The first of ``keys`` that ``rec`` holds with a non-null value, or None."""
    return next((k for k in keys if k in rec and rec[k] is not None), None)


def _column_options(path: Path, row: int, rec: dict[str, Any]) -> tuple[str, ...]:
    values = [cell_text(path, row, c, rec.get(c)) for c in MC_LETTERS]
    values = ["" if v.lower() == "nan" else v for v in values]
    last = max((i for i, v in enumerate(values) if v), default=-1)
    for i in range(last + 1):
        if not values[i]:
            raise DefectiveRow(path, row, MC_LETTERS[i], f"option {MC_LETTERS[i]} is empty but a later option is set")
    return tuple(values[: last + 1])


def _list_options(path: Path, row: int, name: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str) and value.strip().startswith("["):
        import ast

        try:
            value = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise VqauditError(f"{path}: row {row}, field '{name}': not a list of options") from None
    if not isinstance(value, list) or any(not isinstance(v, (str, int, float)) or isinstance(v, bool) for v in value):
        raise VqauditError(f"{path}: row {row}, field '{name}': expected a list of option texts")
    if len(value) > len(MC_LETTERS):
        raise VqauditError(f"{path}: row {row}, field '{name}': {len(value)} options; at most {len(MC_LETTERS)}")
    return tuple(str(v).strip() for v in value)


def _gold_letter(path: Path, row: int, answer: str, options: tuple[str, ...], name: str = "answer") -> str:
    """The gold letter; a gold that names an empty or missing option, or a repeated text, is a defect."""
    letters = MC_LETTERS[: len(options)]
    shown = ", ".join(letters)
    if len(answer) == 1 and answer in letters:
        if not options[letters.index(answer)]:
            raise DefectiveRow(path, row, name, f"the gold {answer} names option {answer}, which is empty")
        return answer
    if len(answer) == 1 and answer in MC_LETTERS:
        raise DefectiveRow(
            path,
            row,
            name,
            f"the gold {answer} is not among the options ({shown}): option {answer} is empty or missing",
        )
    hits = [MC_LETTERS[i] for i, o in enumerate(options) if normalize_text(o) == normalize_text(answer)]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise DefectiveRow(
            path, row, name, f"the gold {answer!r} is the text of options {', '.join(hits)} (duplicate choices)"
        )
    raise DefectiveRow(
        path, row, name, f"{answer!r} is neither a letter of the options ({shown}) nor exactly one option's text"
    )


def _precision(path: Path, row: int, value: Any) -> int | None:
    if value is None or value == "" or (isinstance(value, float) and value != value):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise VqauditError(f"{path}: row {row}, field 'precision': not a number: {value!r}") from None
    if not number.is_integer() or not 0 <= number <= 12:
        raise VqauditError(f"{path}: row {row}, field 'precision': expected 0-12 decimal places, got {value!r}")
    return int(number)


def _group_of(benchmark: str, qid: str) -> str:
    if benchmark == "mmbench" and qid.isdigit():
        return str(int(qid) % CIRCULAR_STRIDE)
    return qid


def row_layout(path: Path, rec: dict[str, Any], benchmark: str) -> str:
    """The layout of one record (:class:`~vqaudit.shortanswer.mc_records.MCFile` ``layout``)."""
    if benchmark == "mmmu":
        # MMMU's output.json: choice records carry all_choices/index2ans, open ones a response and no columns
        if "index2ans" in rec or "all_choices" in rec or ("response" in rec and "A" not in rec):
            return "mmmu-output"
        return "vlmevalkit-mmmu"
    if benchmark == "mathvista":
        return "mathvista-output"
    return "mmbench" if benchmark == "mmbench" else "table"


def _reply(path: Path, row: int, rec: dict[str, Any], benchmark: str, read: str | None) -> tuple[str, str]:
    """``(reply, field read)``; MathVista's raw ``response`` (or ``extraction``), else the first reply field."""
    if benchmark == "mathvista":
        field = read or "response"
        if field not in rec:
            other = "" if field == "extraction" else "; --read extraction reads MathVista's extracted answer"
            raise VqauditError(f"{path}: row {row}, field '{field}': missing (the MathVista output's {field}{other})")
        return cell_text(path, row, field, rec[field]), field
    reply_key = first_key(rec, _REPLY_KEYS)
    if reply_key is None and not any(k in rec for k in _REPLY_KEYS):
        raise VqauditError(f"{path}: row {row}, field 'prediction': missing (looked for {', '.join(_REPLY_KEYS)})")
    if reply_key is None:
        return "", next(k for k in _REPLY_KEYS if k in rec)
    return cell_text(path, row, reply_key, rec[reply_key]), reply_key


def _mmmu_output_options(path: Path, row: int, rec: dict[str, Any]) -> tuple[str, ...]:
    choices = rec.get("all_choices")
    index2ans = rec.get("index2ans")
    if not isinstance(choices, list) or not isinstance(index2ans, dict):
        raise VqauditError(
            f"{path}: row {row}, field 'index2ans': a multiple-choice MMMU output.json record needs "
            "'all_choices' and 'index2ans' (a VLMEvalKit MMMU sheet has option columns A, B, ...; "
            "another layout: --benchmark mc)"
        )
    if [str(c) for c in choices] != list(MC_LETTERS[: len(choices)]) or len(choices) < 2:
        raise VqauditError(f"{path}: row {row}, field 'all_choices': expected letters A, B, ... in order")
    missing = [c for c in choices if c not in index2ans]
    if missing:
        raise DefectiveRow(path, row, f"index2ans.{missing[0]}", f"no text for option {missing[0]}")
    return tuple(cell_text(path, row, f"index2ans.{c}", index2ans[c]) for c in choices)


_PREPROC_OTHER = "Other Answers"
"""Option B that VLMEvalKit's ``MMMU_preproc`` gives an open MMMU question (option A: the gold answer's text)."""


def _is_open(rec: dict[str, Any], benchmark: str, layout: str, qtype: str) -> bool:
    if qtype in ("open", "free_form"):
        return True
    if layout != "vlmevalkit-mmmu":
        return False
    # VLMEvalKit's MMMU sheet: an open question has no options; its evaluated sheet has them as MMMU_preproc
    # rewrote them (A = the gold answer's text, B = "Other Answers", no C)
    return rec.get("A") in (None, "") or (rec.get("B") == _PREPROC_OTHER and rec.get("C") in (None, ""))


def mc_row(path: Path, row: int, rec: dict[str, Any], benchmark: str, read: str | None = None) -> tuple[MCRow, str]:
    """One record as a row, and the reply field read."""
    id_key = first_key(rec, ID_KEYS)
    qid = str(row) if id_key is None else cell_text(path, row, id_key, rec[id_key])
    if not qid:
        raise VqauditError(f"{path}: row {row}, field '{id_key}': empty id")
    reply, field = _reply(path, row, rec, benchmark, read)
    question = cell_text(path, row, "question", rec.get("question"))
    category = cell_text(path, row, "category", rec.get("category"))
    if "answer" not in rec or rec["answer"] is None:
        raise VqauditError(f"{path}: row {row}, field 'answer': missing (the gold answer)")
    answer_value = rec["answer"]
    qtype = str(rec.get("question_type") or "").strip()
    if qtype not in (*_CHOICE_TYPES, "open", "free_form"):
        raise VqauditError(f"{path}: row {row}, field 'question_type': unknown type {qtype!r}")
    layout = row_layout(path, rec, benchmark)
    if layout == "vlmevalkit-mmmu" and "A" not in rec:
        raise VqauditError(
            f"{path}: row {row}, field 'A': neither an MMMU output.json record (all_choices, "
            "index2ans, response) nor a row of VLMEvalKit's MMMU sheet (option columns A, B, ...); "
            "for another layout use --benchmark mc"
        )
    rules = "default"
    if benchmark == "mathvista":
        rules = "mathvista-extraction" if read == "extraction" else "mathvista"
    elif benchmark == "mmmu":
        rules = "mmmu"
    if _is_open(rec, benchmark, layout, qtype):
        options: tuple[str, ...] = ()
    elif layout == "mmmu-output":
        options = _mmmu_output_options(path, row, rec)
    elif any(rec.get(c) not in (None, "") for c in "AB"):
        options = _column_options(path, row, rec)
    else:
        list_key = first_key(rec, ("options", "choices"))
        if list_key is None:
            raise VqauditError(f"{path}: row {row}, field 'A': no options (columns A, B, ... or an 'options' list)")
        options = _list_options(path, row, list_key, rec[list_key])
    if options and len(options) < 2:
        raise DefectiveRow(path, row, "B", "a choice row needs at least two options")
    if options:
        gold = _gold_letter(path, row, cell_text(path, row, "answer", answer_value), options)
        return MCRow(
            qid,
            _group_of(benchmark, qid),
            question,
            options,
            gold,
            reply,
            "choice",
            None,
            category,
            f"{path}:{row}",
            rules,
        ), field
    if layout == "vlmevalkit-mmmu" and rec.get("B") == _PREPROC_OTHER and rec.get("A") not in (None, ""):
        answer_value = rec["A"]  # MMMU_preproc moved the open answer's text into option A (the answer may be "A")
    if isinstance(answer_value, list):  # MMMU open answers may list several accepted forms
        gold = "\n".join(cell_text(path, row, "answer", a) for a in answer_value)
    else:
        gold = cell_text(path, row, "answer", answer_value)
    if not gold:
        raise DefectiveRow(path, row, "answer", "empty gold answer")
    answer_type = str(rec.get("answer_type") or "open")
    return MCRow(
        qid,
        qid,
        question,
        (),
        gold,
        reply,
        answer_type,
        _precision(path, row, rec.get("precision")),
        category,
        f"{path}:{row}",
        rules,
    ), field
