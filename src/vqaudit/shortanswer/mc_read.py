"""Multiple-choice prediction files read into rows (:class:`MCRow`) for ``vqaudit audit`` (docs/shortanswer.md).

``--benchmark mmbench|mmmu|mathvista|mc`` names the layout:

- ``mmbench``: an MMBench result sheet (VLMEvalKit / LLaVA ``.xlsx``, or the same table as TSV/CSV/JSONL):
  ``index``, ``question``, options ``A``..``I`` (empty cells end the list), gold ``answer`` (a letter),
  ``prediction``, optional ``category``. Circular copies (``index + k * 10**6``) form one group: **circular
  accuracy** counts a question right only when every copy is right (MMBench CircularEval; seed 001, 0.C.1).
- ``mmmu``: MMMU's ``output.json`` records (MMMU-Benchmark/MMMU ``eval/README.md``, "Parse and Evaluation"): a
  list (or an id-keyed object) of ``{"id", "question_type": "multiple-choice" | "open", "answer",
  "all_choices", "index2ans", "response"}``; options A-I.
- ``mathvista``: MathVista's output file (lupantech/MathVista), an object keyed by ``pid``: ``{"question",
  "choices" (a list, or null for free-form), "answer" (the correct choice's *text*, or the free-form answer),
  "question_type": "multi_choice" | "free_form", "answer_type", "precision", "response"}``.
- ``mc``: any table or JSON with an id (``question_id``/``id``/``index``/``pid``), ``question``, options as
  columns ``A``..``I`` or as a list (``options``/``choices``), ``answer`` (a letter or an option's text) and a
  reply (``prediction``/``response``/``output``/``text``).

Every loader error names the file, the 1-based row and the field; nothing is returned before the whole file is
read.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.parsing.choice import normalize_text
from vqaudit.shortanswer.benchmarks import MC_BENCHMARKS
from vqaudit.shortanswer.loaders import check_input_file
from vqaudit.shortanswer.record_files import file_suffix, iter_json_records
from vqaudit.suites.upd.tsv import CIRCULAR_STRIDE, read_records

__all__ = ["MC_LETTERS", "MCRow", "read_mc_predictions"]
MC_LETTERS = "ABCDEFGHI"
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

    @property
    def is_choice(self) -> bool:
        """True for a multiple-choice row."""
        return self.answer_type == "choice"


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    suffix = file_suffix(path)
    if suffix in (".xlsx", ".tsv", ".csv", ".tab"):
        _, rows = read_records(path)
        for row, rec in enumerate(rows, start=1):
            yield row, {k: (v if v != "" else None) for k, v in rec.items()}
        return
    if suffix not in (".json", ".jsonl"):
        raise VqauditError(f"{path}: unsupported prediction file type {suffix!r} (use .xlsx, .tsv, .csv, .json "
                           "or .jsonl)")
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
            raise VqauditError(f"{path}: row {row}, field '{MC_LETTERS[i]}': option {MC_LETTERS[i]} is empty but "
                               "a later option is set")
    return tuple(values[: last + 1])


def _list_options(path: Path, row: int, name: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str) and value.strip().startswith("["):
        import ast

        try:
            value = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise VqauditError(f"{path}: row {row}, field '{name}': not a list of options") from None
    if not isinstance(value, list) or any(not isinstance(v, (str, int, float)) or isinstance(v, bool)
                                          for v in value):
        raise VqauditError(f"{path}: row {row}, field '{name}': expected a list of option texts")
    if len(value) > len(MC_LETTERS):
        raise VqauditError(f"{path}: row {row}, field '{name}': {len(value)} options; at most {len(MC_LETTERS)}")
    return tuple(str(v).strip() for v in value)


def _gold_letter(path: Path, row: int, answer: str, options: tuple[str, ...], name: str = "answer") -> str:
    letters = MC_LETTERS[: len(options)]
    if len(answer) == 1 and answer in letters:
        return answer
    hits = [MC_LETTERS[i] for i, o in enumerate(options) if normalize_text(o) == normalize_text(answer)]
    if len(hits) == 1:
        return hits[0]
    shown = ", ".join(letters)
    raise VqauditError(f"{path}: row {row}, field '{name}': {answer!r} is neither a letter of the options "
                       f"({shown}) nor exactly one option's text")


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


def _row(path: Path, row: int, rec: dict[str, Any], benchmark: str) -> MCRow:
    id_key = _first(rec, _ID_KEYS)
    qid = str(row) if id_key is None else _text(path, row, id_key, rec[id_key])
    if not qid:
        raise VqauditError(f"{path}: row {row}, field '{id_key}': empty id")
    reply_key = _first(rec, _REPLY_KEYS)
    if reply_key is None and not any(k in rec for k in _REPLY_KEYS):
        raise VqauditError(f"{path}: row {row}, field 'prediction': missing (looked for {', '.join(_REPLY_KEYS)})")
    reply = "" if reply_key is None else _text(path, row, reply_key, rec[reply_key])
    question = _text(path, row, "question", rec.get("question"))
    category = _text(path, row, "category", rec.get("category"))
    if "answer" not in rec or rec["answer"] is None:
        raise VqauditError(f"{path}: row {row}, field 'answer': missing (the gold answer)")
    answer_value = rec["answer"]
    qtype = str(rec.get("question_type") or "").strip()
    if qtype not in (*_CHOICE_TYPES, "open", "free_form"):
        raise VqauditError(f"{path}: row {row}, field 'question_type': unknown type {qtype!r}")
    if benchmark == "mmmu" and qtype != "open":
        choices = rec.get("all_choices")
        index2ans = rec.get("index2ans")
        if not isinstance(choices, list) or not isinstance(index2ans, dict):
            raise VqauditError(f"{path}: row {row}, field 'index2ans': a multiple-choice MMMU row needs "
                               "'all_choices' and 'index2ans'")
        if [str(c) for c in choices] != list(MC_LETTERS[: len(choices)]) or len(choices) < 2:
            raise VqauditError(f"{path}: row {row}, field 'all_choices': expected letters A, B, ... in order")
        missing = [c for c in choices if c not in index2ans]
        if missing:
            raise VqauditError(f"{path}: row {row}, field 'index2ans': no text for option {missing[0]}")
        options = tuple(_text(path, row, f"index2ans.{c}", index2ans[c]) for c in choices)
    elif qtype in ("open", "free_form"):
        options = ()
    elif any(rec.get(c) not in (None, "") for c in "AB"):
        options = _column_options(path, row, rec)
    else:
        list_key = _first(rec, ("options", "choices"))
        if list_key is None:
            raise VqauditError(f"{path}: row {row}, field 'A': no options (columns A, B, ... or an 'options' list)")
        options = _list_options(path, row, list_key, rec[list_key])
    if options and len(options) < 2:
        raise VqauditError(f"{path}: row {row}, field 'B': a choice row needs at least two options")
    if options:
        gold = _gold_letter(path, row, _text(path, row, "answer", answer_value), options)
        return MCRow(qid, _group_of(benchmark, qid), question, options, gold, reply, "choice", None, category,
                     f"{path}:{row}")
    if isinstance(answer_value, list):  # MMMU open answers may list several accepted forms
        gold = "\n".join(_text(path, row, "answer", a) for a in answer_value)
    else:
        gold = _text(path, row, "answer", answer_value)
    if not gold:
        raise VqauditError(f"{path}: row {row}, field 'answer': empty gold answer")
    answer_type = str(rec.get("answer_type") or "open")
    return MCRow(qid, qid, question, (), gold, reply, answer_type, _precision(path, row, rec.get("precision")),
                 category, f"{path}:{row}")


def read_mc_predictions(path: Path, benchmark: str) -> list[MCRow]:
    """Read a multiple-choice prediction file (module docstring) into rows, in file order.

    Args:
        path: the file (.xlsx, .tsv, .csv, .json, .jsonl; JSON/JSONL may be ``.gz``).
        benchmark: one of :data:`MC_BENCHMARKS` (``mmbench`` groups circular copies by ``index mod 10**6``).

    Returns:
        The rows; ids are unique.

    Raises:
        VqauditError: an unknown benchmark, a missing or malformed file, a missing field, an answer that is no
            option, or a duplicate id (naming the file, row and field).
    """
    if benchmark not in MC_BENCHMARKS:
        raise VqauditError(f"unknown multiple-choice benchmark {benchmark!r}; expected {', '.join(MC_BENCHMARKS)}")
    check_input_file(path, "prediction file")
    rows: list[MCRow] = []
    seen: dict[str, int] = {}
    try:
        for row, rec in _records(path):
            item = _row(path, row, rec, benchmark)
            if item.qid in seen:
                raise VqauditError(f"{path}: row {row}, field 'id': duplicate id {item.qid!r} (first at row "
                                   f"{seen[item.qid]})")
            seen[item.qid] = row
            rows.append(item)
    except UnicodeDecodeError as exc:
        raise VqauditError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    if not rows:
        raise VqauditError(f"{path}: no prediction rows in the file")
    return rows
