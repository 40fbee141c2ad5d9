r"""Multiple-choice prediction audits: MMBench result sheets, MMMU raw replies, MathVista outputs (issue 14, item 4).

``vqaudit audit PREDICTIONS --benchmark mmbench|mmmu|mathvista|mc`` reads one prediction file, extracts the
chosen letter of every choice row and scores it; open (non-choice) rows are scored apart by exact or numeric
match. Layouts:

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

Choice extraction, in order (``extracted_by``): ``strict`` (the matcher of :mod:`vqaudit.parsing.choice`: a bare
letter, a lettered prefix naming no other option, or an option's whole text); ``final-answer``
(:func:`final_answer_letter`: "Answer: B", "the answer is (B)", ``\boxed{B}``, or a last line that is only a
letter; the last such statement counts); ``judge:SPEC`` (optional, text only, cached in ``OUT/judge.sqlite``,
the judge of :mod:`vqaudit.scoring.upd`). A reply none of them decides is ``unparsed``; an unparsed reply that
declines (:func:`is_refusal`) is counted as a ``refusal`` as well. Accuracy is reported over all choice rows
(an unparsed reply is wrong) and over parsed rows, side by side.

Every loader error names the file, the 1-based row and the field; nothing is written before the whole file is
read.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from vqaudit.backends import Backend, ModelOptions
from vqaudit.errors import VqauditError
from vqaudit.parsing.choice import match_choice, normalize_text
from vqaudit.schema import Obligation, Response, UPDViewMeta, View
from vqaudit.scoring.upd import ABSTAIN_PHRASES, score_upd_views
from vqaudit.shortanswer.benchmarks import MC_BENCHMARKS
from vqaudit.shortanswer.importers import _iter_json_records, _suffix
from vqaudit.suites.upd.tsv import CIRCULAR_STRIDE, read_records

__all__ = ["MC_BENCHMARKS", "MCRow", "RowVerdict", "extract_choices", "final_answer_letter", "is_refusal",
           "open_answer", "open_correct", "read_mc_predictions", "run_mc_audit", "summarize", "dumps_rows"]
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


@dataclass(frozen=True)
class RowVerdict:
    """The audit of one row: the extracted letter (or open answer), how, and whether it is right."""

    qid: str
    group: str
    extracted: str | None
    extracted_by: str
    refusal: bool
    correct: bool


# --- reading -------------------------------------------------------------------------------------------------


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    suffix = _suffix(path)
    if suffix in (".xlsx", ".tsv", ".csv", ".tab"):
        _, rows = read_records(path)
        for row, rec in enumerate(rows, start=1):
            yield row, {k: (v if v != "" else None) for k, v in rec.items()}
        return
    if suffix not in (".json", ".jsonl"):
        raise VqauditError(f"{path}: unsupported prediction file type {suffix!r} (use .xlsx, .tsv, .csv, .json "
                           "or .jsonl)")
    for row, rec in _iter_json_records(path):
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
    if not path.is_file():
        raise VqauditError(f"{path}: prediction file not found")
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


# --- extraction ----------------------------------------------------------------------------------------------

_FINAL_PATTERNS = (
    re.compile(r"\\boxed\{\s*\(?([A-I])\)?\s*\}"),
    re.compile(r"(?i:\b(?:final answer|correct answer|the answer|answer|correct option|option))(?:\s+is)?\s*[:：]?"
               r"\s*(?:option\s+)?[(\[*]*([A-I])(?![A-Za-z0-9])"),
)
_LAST_LINE = re.compile(r"^[(\[*\s]*([A-I])[)\].*\s]*$")
_REFUSAL = re.compile(
    r"(?i)\b(?:i\s+(?:cannot|can't|can not|am unable to|am not able to|do not know|don't know)"
    r"|unable to (?:determine|answer|tell|see|identify)|cannot be determined|can't be determined"
    r"|not possible to (?:determine|tell|answer)|impossible to (?:determine|tell)|sorry|as an ai\b)"
)
_NUMBER = re.compile(r"[-+]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)")


def final_answer_letter(reply: str, letters: str) -> str | None:
    r"""The letter a reasoning reply states as its final answer, or None.

    Rules (the conventions MMMU's and MathVista's prompts ask for): ``\boxed{B}``; "Answer: B", "the answer is
    (B)", "Final answer: **B**", "correct option is B" (the word is case-insensitive, the letter must be an
    upper-case letter not followed by a letter or digit); or a last non-empty line that is only a letter. The
    last statement in the reply counts; a letter outside ``letters`` decides nothing.

    Args:
        reply: the raw reply.
        letters: the valid letters, e.g. ``"ABCD"``.

    Returns:
        The letter, or None.
    """
    found: list[tuple[int, str]] = []
    for pattern in _FINAL_PATTERNS:
        found.extend((m.start(), m.group(1)) for m in pattern.finditer(reply))
    if found:
        letter = max(found)[1]
        return letter if letter in letters else None
    lines = [line for line in reply.strip().splitlines() if line.strip()]
    if len(lines) > 1:
        last = _LAST_LINE.match(lines[-1])
        if last and last.group(1) in letters:
            return last.group(1)
    return None


def is_refusal(reply: str) -> bool:
    """True when a reply declines to answer: an abstention phrase as the whole reply, or a refusal phrase."""
    return normalize_text(reply) in ABSTAIN_PHRASES or _REFUSAL.search(reply) is not None


def _number(text: str) -> Fraction | None:
    try:
        return Fraction(text.replace(",", ""))
    except (ValueError, ZeroDivisionError):
        return None


def open_answer(row: MCRow) -> str | None:
    """The answer an open row's reply gives, or None when it gives none.

    The value after the last "answer:" / "the answer is" statement, else the whole reply; for a numeric gold
    (or MathVista ``integer``/``float``) the last number in that text.
    """
    reply = row.reply.strip()
    if not reply:
        return None
    stated = re.findall(r"(?i:\b(?:final answer|the answer is|answer)\s*[:：]?)\s*([^\n]+)", reply)
    text = stated[-1].strip().rstrip(".") if stated else reply
    if any(_number(g) is not None for g in row.gold.split("\n")) or row.answer_type in ("integer", "float"):
        numbers = _NUMBER.findall(text)
        return numbers[-1] if numbers else None
    return text


def open_correct(row: MCRow, answer: str | None) -> bool:
    """Exact or numeric match of an open answer against any gold form.

    Numbers compare exactly as rationals, or after rounding both to ``row.precision`` decimal places when the
    row has one (MathVista's float answers); text compares after :func:`vqaudit.parsing.choice.normalize_text`.
    """
    if answer is None:
        return False
    for gold in row.gold.split("\n"):
        a, g = _number(answer), _number(gold)
        if a is not None and g is not None:
            if row.precision is not None:
                if round(a, row.precision) == round(g, row.precision):
                    return True
            elif a == g:
                return True
        elif normalize_text(answer) == normalize_text(gold):
            return True
    return False


def _view(row: MCRow) -> View:
    return View(view_id=row.qid, group_id=row.group, source="upd", state="standard", image="none.png",
                image_sha256="0" * 64, question=row.question, options=row.options,
                obligation=Obligation(kind="answer", gold=(row.gold,), answer_type="choice"),
                meta=UPDViewMeta(item_index=0, ability=row.category, ability_index=None, l2_category="",
                                 variant="aad", setting="original", kind="standard", rotation=0,
                                 n_rotations=1).model_dump())


def extract_choices(rows: Sequence[MCRow], *, judge: str | None = None, judge_backend: Backend | None = None,
                    cache_dir: Path | None = None, judge_options: ModelOptions | None = None,
                    concurrency: int = 8) -> list[RowVerdict]:
    """Extract and score every row (module docstring); one verdict per row, in order.

    Raises:
        VqauditError: a bad judge spec or an unreachable judge (see :func:`vqaudit.scoring.upd.score_upd_views`).
    """
    verdicts: dict[str, RowVerdict] = {}
    pending: list[MCRow] = []
    for row in rows:
        if not row.is_choice:
            answer = open_answer(row)
            verdicts[row.qid] = RowVerdict(row.qid, row.group, answer, "open" if answer is not None else "unparsed",
                                           answer is None and is_refusal(row.reply), open_correct(row, answer))
            continue
        letters = MC_LETTERS[: len(row.options)]
        strict = match_choice(row.reply, dict(zip(letters, row.options, strict=True)))
        letter, how = (strict.letter, "strict") if strict is not None else (None, "unparsed")
        if letter is None:
            letter = final_answer_letter(row.reply, letters)
            how = "final-answer" if letter is not None else how
        if letter is None and judge is not None and row.reply.strip():
            pending.append(row)
            continue
        verdicts[row.qid] = RowVerdict(row.qid, row.group, letter, how, letter is None and is_refusal(row.reply),
                                       letter == row.gold)
    if pending:
        views = [_view(r) for r in pending]
        responses = {r.qid: Response(view_id=r.qid, model="predictions", prompt_id="file", text=r.reply)
                     for r in pending}
        options = dataclasses.replace(judge_options or ModelOptions(), concurrency=concurrency)
        outcomes = score_upd_views(views, responses, run_dir=cache_dir or Path("."), judge=judge,
                                   judge_backend=judge_backend, concurrency=concurrency, judge_options=options)
        for row, outcome in zip(pending, outcomes, strict=True):
            decided = outcome.decision == "answer" and outcome.answer is not None
            verdicts[row.qid] = RowVerdict(
                row.qid, row.group, outcome.answer if decided else None,
                (outcome.decided_by or "judge") if decided else "unparsed",
                (not decided) and (outcome.decision == "abstain" or is_refusal(row.reply)),
                bool(outcome.answer_correct))
    return [verdicts[r.qid] for r in rows]


# --- the audit -----------------------------------------------------------------------------------------------


def _share(num: int, den: int) -> float | None:
    return num / den if den else None


def summarize(rows: Sequence[MCRow], verdicts: Sequence[RowVerdict], *, benchmark: str) -> dict[str, Any]:
    """The audit's numbers (``report.json``).

    Returns:
        ``choice``: rows, parsed, unparsed, refusals, correct, ``accuracy_all`` (correct / rows),
        ``accuracy_parsed`` (correct / parsed), ``extracted_by`` counts; ``circular`` (when some group has more
        than one row): groups, groups right in every row, ``accuracy`` (all groups) and ``accuracy_parsed``
        (groups whose every row parsed), rows per group; ``open``: rows, answered, correct, accuracy;
        ``by_category`` (when the file names categories): choice rows, correct, accuracy per category.
    """
    choice = [(r, v) for r, v in zip(rows, verdicts, strict=True) if r.is_choice]
    opened = [(r, v) for r, v in zip(rows, verdicts, strict=True) if not r.is_choice]
    parsed = [(r, v) for r, v in choice if v.extracted is not None]
    correct = sum(v.correct for _, v in choice)
    how: dict[str, int] = {}
    for _, v in choice:
        how[v.extracted_by] = how.get(v.extracted_by, 0) + 1
    out: dict[str, Any] = {
        "benchmark": benchmark,
        "choice": {
            "rows": len(choice), "parsed": len(parsed), "unparsed": len(choice) - len(parsed),
            "refusals": sum(v.refusal for _, v in choice), "correct": correct,
            "accuracy_all": _share(correct, len(choice)),
            "accuracy_parsed": _share(sum(v.correct for _, v in parsed), len(parsed)),
            "extracted_by": dict(sorted(how.items())),
        },
    }
    groups: dict[str, list[RowVerdict]] = {}
    for _, v in choice:
        groups.setdefault(v.group, []).append(v)
    if any(len(g) > 1 for g in groups.values()):
        full = [g for g in groups.values() if all(v.extracted is not None for v in g)]
        right = sum(all(v.correct for v in g) for g in groups.values())
        sizes: dict[str, int] = {}
        for g in groups.values():
            sizes[str(len(g))] = sizes.get(str(len(g)), 0) + 1
        out["circular"] = {
            "groups": len(groups), "right": right, "accuracy": _share(right, len(groups)),
            "groups_parsed": len(full), "accuracy_parsed": _share(sum(all(v.correct for v in g) for g in full),
                                                                  len(full)),
            "rows_per_group": dict(sorted(sizes.items())),
        }
    out["open"] = {"rows": len(opened), "answered": sum(v.extracted is not None for _, v in opened),
                   "refusals": sum(v.refusal for _, v in opened), "correct": sum(v.correct for _, v in opened),
                   "accuracy": _share(sum(v.correct for _, v in opened), len(opened))}
    cats: dict[str, list[bool]] = {}
    for r, v in choice:
        if r.category:
            cats.setdefault(r.category, []).append(v.correct)
    if cats:
        out["by_category"] = {c: {"rows": len(x), "correct": sum(x), "accuracy": sum(x) / len(x)}
                              for c, x in sorted(cats.items())}
    return out


def run_mc_audit(path: Path, benchmark: str, *, judge: str | None = None, judge_backend: Backend | None = None,
                 cache_dir: Path | None = None, judge_options: ModelOptions | None = None,
                 concurrency: int = 8) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Read, extract and score a multiple-choice prediction file.

    Returns:
        ``(summary, rows)``: :func:`summarize`'s numbers (plus the file name) and one JSON-ready record per row
        (id, group, gold, extracted, extracted_by, refusal, correct, reply).

    Raises:
        VqauditError: see :func:`read_mc_predictions` and :func:`extract_choices`.
    """
    rows = read_mc_predictions(path, benchmark)
    verdicts = extract_choices(rows, judge=judge, judge_backend=judge_backend, cache_dir=cache_dir,
                               judge_options=judge_options, concurrency=concurrency)
    summary = summarize(rows, verdicts, benchmark=benchmark)
    summary["predictions"] = path.name
    summary["judge"] = judge
    records = [{"id": r.qid, "group": r.group, "kind": "choice" if r.is_choice else "open", "gold": r.gold,
                "extracted": v.extracted, "extracted_by": v.extracted_by, "refusal": v.refusal,
                "correct": v.correct, "reply": r.reply} for r, v in zip(rows, verdicts, strict=True)]
    return summary, records


def dumps_rows(records: Sequence[dict[str, Any]]) -> str:
    """``rows.jsonl`` text: one JSON object a line."""
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records)
