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

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.parsing.choice import normalize_text
from vqaudit.shortanswer.benchmarks import MC_BENCHMARKS
from vqaudit.shortanswer.input_files import check_input_file
from vqaudit.shortanswer.record_files import file_suffix, iter_json_records
from vqaudit.suites.upd.tsv import CIRCULAR_STRIDE, read_records

__all__ = ["MATHVISTA_READS", "MC_LETTERS", "MCFile", "MCRow", "RowDefect", "read_mc_file", "read_mc_predictions"]
MC_LETTERS = "ABCDEFGHI"
MATHVISTA_READS = ("response", "extraction")
"""The fields of a MathVista output a ``mathvista`` audit may read: the raw reply (default) or its extraction."""
_ID_KEYS = ("question_id", "id", "index", "pid", "qid")
_REPLY_KEYS = ("prediction", "response", "output", "text", "model_answer")
_CHOICE_TYPES = ("multiple-choice", "multi_choice", "choice", "")


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


class _Defect(VqauditError):
    """A row's own data is broken (raised inside the loader, caught by :func:`read_mc_file`)."""

    def __init__(self, path: Path, row: int, field: str, reason: str) -> None:
        super().__init__(f"{path}: row {row}, field '{field}': {reason}")
        self.field = field
        self.reason = reason


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


def _text(path: Path, row: int, name: str, value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise VqauditError(f"{path}: row {row}, field '{name}': expected text, got {type(value).__name__}")
    return str(value).strip()


def _first(rec: dict[str, Any], keys: Sequence[str]) -> str | None:
    return next((k for k in keys if k in rec and rec[k] is not None), None)


def _column_options(path: Path, row: int, rec: dict[str, Any]) -> tuple[str, ...]:
    values = [_text(path, row, c, rec.get(c)) for c in MC_LETTERS]
    values = ["" if v.lower() == "nan" else v for v in values]
    last = max((i for i, v in enumerate(values) if v), default=-1)
    for i in range(last + 1):
        if not values[i]:
            raise _Defect(path, row, MC_LETTERS[i], f"option {MC_LETTERS[i]} is empty but a later option is set")
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
            raise _Defect(path, row, name, f"the gold {answer} names option {answer}, which is empty")
        return answer
    if len(answer) == 1 and answer in MC_LETTERS:
        raise _Defect(
            path,
            row,
            name,
            f"the gold {answer} is not among the options ({shown}): option {answer} is empty or missing",
        )
    hits = [MC_LETTERS[i] for i, o in enumerate(options) if normalize_text(o) == normalize_text(answer)]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise _Defect(
            path, row, name, f"the gold {answer!r} is the text of options {', '.join(hits)} (duplicate choices)"
        )
    raise _Defect(
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


def _layout(path: Path, rec: dict[str, Any], benchmark: str) -> str:
    """The layout of one record (:class:`MCFile` ``layout``)."""
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
        return _text(path, row, field, rec[field]), field
    reply_key = _first(rec, _REPLY_KEYS)
    if reply_key is None and not any(k in rec for k in _REPLY_KEYS):
        raise VqauditError(f"{path}: row {row}, field 'prediction': missing (looked for {', '.join(_REPLY_KEYS)})")
    if reply_key is None:
        return "", next(k for k in _REPLY_KEYS if k in rec)
    return _text(path, row, reply_key, rec[reply_key]), reply_key


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
        raise _Defect(path, row, f"index2ans.{missing[0]}", f"no text for option {missing[0]}")
    return tuple(_text(path, row, f"index2ans.{c}", index2ans[c]) for c in choices)


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


def _row(path: Path, row: int, rec: dict[str, Any], benchmark: str, read: str | None = None) -> tuple[MCRow, str]:
    """One record as a row, and the reply field read."""
    id_key = _first(rec, _ID_KEYS)
    qid = str(row) if id_key is None else _text(path, row, id_key, rec[id_key])
    if not qid:
        raise VqauditError(f"{path}: row {row}, field '{id_key}': empty id")
    reply, field = _reply(path, row, rec, benchmark, read)
    question = _text(path, row, "question", rec.get("question"))
    category = _text(path, row, "category", rec.get("category"))
    if "answer" not in rec or rec["answer"] is None:
        raise VqauditError(f"{path}: row {row}, field 'answer': missing (the gold answer)")
    answer_value = rec["answer"]
    qtype = str(rec.get("question_type") or "").strip()
    if qtype not in (*_CHOICE_TYPES, "open", "free_form"):
        raise VqauditError(f"{path}: row {row}, field 'question_type': unknown type {qtype!r}")
    layout = _layout(path, rec, benchmark)
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
        list_key = _first(rec, ("options", "choices"))
        if list_key is None:
            raise VqauditError(f"{path}: row {row}, field 'A': no options (columns A, B, ... or an 'options' list)")
        options = _list_options(path, row, list_key, rec[list_key])
    if options and len(options) < 2:
        raise _Defect(path, row, "B", "a choice row needs at least two options")
    if options:
        gold = _gold_letter(path, row, _text(path, row, "answer", answer_value), options)
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
        gold = "\n".join(_text(path, row, "answer", a) for a in answer_value)
    else:
        gold = _text(path, row, "answer", answer_value)
    if not gold:
        raise _Defect(path, row, "answer", "empty gold answer")
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
            layout = _layout(path, rec, benchmark)
            if layout not in layouts:
                layouts.append(layout)
            id_key = _first(rec, _ID_KEYS)
            qid = "" if id_key is None else _text(path, row, id_key, rec[id_key])
            try:
                item, field = _row(path, row, rec, benchmark, read)
            except _Defect as exc:
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
