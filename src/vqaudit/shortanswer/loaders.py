"""Gold loaders for the annotation layouts of the short-answer benchmarks (seed 002 §4 "Datasets").

Layouts (the files the benchmarks distribute):

- TextVQA (``TextVQA_0.5.1_val.json``; Singh et al. 2019): ``{"data": [{"question_id", "question", "answers"
  (10 annotator answers), "image_id", ...}]}``. OCR tokens, when present, are read from ``ocr_tokens`` (the mmf
  imdb / Rosetta layout) or ``ocr_info[*].word``; they anchor the readout bucket (seed 002 appendix A); a
  field of another type is refused (:mod:`vqaudit.shortanswer.gold_metadata`).
- ST-VQA (``train_task_1.json`` / test layouts; Biten et al. 2019): ``{"data": [{"question_id", "question",
  "answers", "file_name", ...}]}``.
- DocVQA (``val_v1.0.json``; Mathew et al. 2021): ``{"data": [{"questionId", "question", "answers", ...}]}``.
- InfographicVQA (``infographicsVQA_val_v1.0.json``; Mathew et al. 2022): DocVQA's layout plus ``answer_type``,
  a list such as ``["multiple spans"]`` (the official labels ``image span``, ``question span``, ``multiple
  spans``, ``non span``; appendix A: single span, question span, multi-span, non-extractive); a field that is
  not a string or a list of strings is refused (:mod:`vqaudit.shortanswer.gold_metadata`).
- ChartQA (``test_human.json`` / ``test_augmented.json``; Masry et al. 2022): a list of ``{"imgname", "query",
  "label"}``. There is no question id: the id is ``"<split>:<1-based position>"``, the split read from the
  file name (:func:`chartqa_split_of`; VLMEvalKit's ``ChartQA_TEST`` index runs over both splits and is mapped
  by :mod:`.join`); joins may also go by question text.
- VizWiz (``train.json`` / ``val.json``; Gurari et al. 2018): a list of ``{"image", "question", "answers"
  (10 objects with ``answer`` and ``answer_confidence``), "answer_type", "answerable"}`` (:func:`load_vizwiz`).

Every error names the file, the 1-based row (position in ``data``) and the field. Files may be gzip-compressed
(``.json.gz``); a truncated or non-gzip file, a folder or a pipe is refused naming the file.

Each loader first checks that the file is not another benchmark's gold
(:func:`vqaudit.shortanswer.benchmarks.detect_layout` on the first row, and ``dataset_name`` when the file has
one, asking the ``looks_*`` detector (:mod:`.gold_layouts`) of each layout of the benchmark table): a DocVQA file
given as InfographicVQA gold (or the reverse), a TextVQA file given as ST-VQA gold, a ChartQA list given as TextVQA
gold, ... is refused with a VqauditError that names the file, the layout it looks like and the one expected. A file
whose first row tells nothing (only ``question_id``, ``question`` and ``answers``, say) is accepted by either
VQA-style loader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.shortanswer.gold_layouts import check_layout
from vqaudit.shortanswer.gold_metadata import answer_type, ocr_tokens
from vqaudit.shortanswer.input_files import read_json_file
from vqaudit.shortanswer.records import GoldItem

CHARTQA_SPLITS = ("test_human", "test_augmented")


def _records(path: Path, data: Any) -> list[Any]:
    if isinstance(data, dict) and isinstance(data.get("data"), list):
        return list(data["data"])
    if isinstance(data, list):
        return data
    raise VqauditError(f"{path}: expected a JSON list or an object with a 'data' list")


def _field(path: Path, row: int, rec: Any, names: tuple[str, ...]) -> Any:
    if not isinstance(rec, dict):
        raise VqauditError(f"{path}: row {row}: expected a JSON object")
    for name in names:
        if name in rec:
            return rec[name]
    raise VqauditError(f"{path}: row {row}, field '{names[0]}': missing")


def _id(path: Path, row: int, rec: Any, names: tuple[str, ...]) -> tuple[str, str]:
    """The row's id (as text) and the name of the field it was read from, the first of ``names`` present."""
    value = _field(path, row, rec, names)
    name = next(n for n in names if n in rec)
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise VqauditError(f"{path}: row {row}, field '{name}': expected a string or integer id")
    return str(value), name


def _answers(path: Path, row: int, value: Any, name: str) -> tuple[str, ...]:
    items = [value] if isinstance(value, (str, int, float)) and not isinstance(value, bool) else value
    if not isinstance(items, list) or not items:
        raise VqauditError(f"{path}: row {row}, field '{name}': expected a non-empty list of answers")
    out = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            raise VqauditError(f"{path}: row {row}, field '{name}': answers must be strings")
        out.append(str(item))
    return tuple(out)


def _text(path: Path, row: int, value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise VqauditError(f"{path}: row {row}, field '{name}': expected a string")
    return value


def _unique(path: Path, items: list[GoldItem], fields: list[str]) -> list[GoldItem]:
    """Refuse a repeated id: the file, the rows of the first and the second occurrence, the fields named so.

    ``fields``: the field each item's id was read from (``question_id``, or DocVQA's ``questionId``), row order.
    Ids are compared as text, as the join compares them (``7`` and ``"7"`` are one id).
    """
    first: dict[str, int] = {}
    for row, (item, field) in enumerate(zip(items, fields, strict=True), start=1):
        if item.qid in first:
            at = first[item.qid]
            named = "" if fields[at - 1] == field else f", field '{fields[at - 1]}'"
            raise VqauditError(
                f"{path}: row {row}, field '{field}': duplicate id {item.qid!r} (first at row {at}{named})"
            )
        first[item.qid] = row
    return items


def load_textvqa(path: Path, *, benchmark: str = "textvqa") -> list[GoldItem]:
    """Load TextVQA (or any VQA-style ``question_id`` / ``answers`` layout such as ST-VQA).

    Raises:
        VqauditError: a file of another benchmark's layout (:func:`detect_layout`; ST-VQA's when ``benchmark``
            is ``stvqa``), or naming the file, row and field of a missing or mistyped field or a duplicate id.
    """
    data = read_json_file(path)
    check_layout(path, data, "stvqa" if benchmark == "stvqa" else "textvqa")
    items, fields = [], []
    for row, rec in enumerate(_records(path, data), start=1):
        qid, field = _id(path, row, rec, ("question_id",))
        fields.append(field)
        question = _text(path, row, _field(path, row, rec, ("question",)), "question")
        answers = _answers(path, row, _field(path, row, rec, ("answers",)), "answers")
        image = rec.get("image_id", rec.get("file_name", rec.get("file_path", "")))
        items.append(
            GoldItem(qid, question, answers, benchmark, None, ocr_tokens(path, row, rec), f"{path}:{row}", str(image))
        )
    return _unique(path, items, fields)


def load_stvqa(path: Path) -> list[GoldItem]:
    """Load ST-VQA (task 1-3 layout: ``question_id``, ``question``, ``answers``). Raises VqauditError."""
    return load_textvqa(path, benchmark="stvqa")


def load_docvqa(path: Path, *, benchmark: str = "docvqa") -> list[GoldItem]:
    """Load DocVQA / InfographicVQA (``questionId``, ``question``, ``answers``, optional ``answer_type``).

    The InfographicVQA ``answer_type`` list is joined with ``"|"`` (e.g. ``"image span|multiple spans"``).

    Raises:
        VqauditError: a file of another benchmark's layout (:func:`detect_layout`; a DocVQA file without
            ``answer_type`` when ``benchmark`` is ``infovqa``), or naming the file, row and field of a missing
            or mistyped field or a duplicate id.
    """
    data = read_json_file(path)
    check_layout(path, data, "infovqa" if benchmark == "infovqa" else "docvqa")
    items, fields = [], []
    for row, rec in enumerate(_records(path, data), start=1):
        qid, field = _id(path, row, rec, ("questionId", "question_id"))
        fields.append(field)
        question = _text(path, row, _field(path, row, rec, ("question",)), "question")
        answers = _answers(path, row, _field(path, row, rec, ("answers",)), "answers")
        kind = answer_type(path, row, rec)
        image = str(rec.get("image", rec.get("image_local_name", "")))
        items.append(GoldItem(qid, question, answers, benchmark, kind, (), f"{path}:{row}", image))
    return _unique(path, items, fields)


def load_infovqa(path: Path) -> list[GoldItem]:
    """Load InfographicVQA (DocVQA layout plus ``answer_type``). Raises VqauditError."""
    return load_docvqa(path, benchmark="infovqa")


def load_chartqa(path: Path, *, split: str | None = None, benchmark: str = "chartqa") -> list[GoldItem]:
    """Load a ChartQA split file (``imgname``, ``query``, ``label``).

    Args:
        path: ``test_human.json``, ``test_augmented.json`` or a slice of either.
        split: split name for the ids; default: from the file name (:func:`chartqa_split_of`).
        benchmark: benchmark name recorded on the items.

    Raises:
        VqauditError: a file of another benchmark's layout (:func:`detect_layout`), a file whose name does not
            tell its split (``split`` not given), or naming the file, row and field of a missing or mistyped field.
    """
    data = read_json_file(path)
    check_layout(path, data, "chartqa")
    split_name = split or chartqa_split_of(path)
    named = _named_split(path)
    if split is not None and named is not None and named != split:
        raise VqauditError(
            f"{path}: the file's name says it is ChartQA's {named} split, but {benchmark} audits "
            f"{split}: give the {split} gold file, or --benchmark chartqa"
        )
    items = []
    for row, rec in enumerate(_records(path, data), start=1):
        question = _text(path, row, _field(path, row, rec, ("query", "question")), "query")
        answers = _answers(path, row, _field(path, row, rec, ("label", "answer")), "label")
        items.append(
            GoldItem(
                f"{split_name}:{row}",
                question,
                answers,
                benchmark,
                None,
                (),
                f"{path}:{row}",
                str(rec.get("imgname", "")),
            )
        )
    return items


def _named_split(path: Path) -> str | None:
    """``test_human`` / ``test_augmented`` when the file name says exactly one of them, else None."""
    name = path.name.lower()
    human = "human" in name
    augmented = "augmented" in name or "machine" in name
    if human == augmented:
        return None
    return "test_human" if human else "test_augmented"


def chartqa_split_of(path: Path) -> str:
    """The ChartQA split a gold file holds, read from its name.

    ChartQA distributes ``test_human.json`` and ``test_augmented.json`` (the paper's "machine" split); the rows
    themselves do not say which split they are.

    Raises:
        VqauditError: the name says neither "human" nor "augmented"/"machine", or both (nothing is guessed).
    """
    named = _named_split(path)
    if named is not None:
        return named
    said = "both" if "human" in path.name.lower() else "neither"
    raise VqauditError(
        f"{path}: a ChartQA gold file's split is read from its name, and this name says {said} of "
        "'human' and 'augmented': name the file after its split (test_human.json or "
        "test_augmented.json, as ChartQA ships them), or give --benchmark chartqa-human or "
        "chartqa-machine"
    )


def load_chartqa_human(path: Path) -> list[GoldItem]:
    """Load ChartQA's ``test_human`` split (ids ``test_human:N``). Raises VqauditError as :func:`load_chartqa`."""
    return load_chartqa(path, split="test_human", benchmark="chartqa-human")


def load_chartqa_machine(path: Path) -> list[GoldItem]:
    """Load ChartQA's ``test_augmented`` split (``test_augmented:N``). Raises VqauditError as load_chartqa."""
    return load_chartqa(path, split="test_augmented", benchmark="chartqa-machine")


def _vizwiz_answers(path: Path, row: int, value: Any) -> tuple[str, ...]:
    """The ``answer`` texts of a VizWiz row's ``answers`` objects, in file order.

    ``answer_confidence`` is not read: VizWiz's scorer counts every answer alike.
    """
    if not isinstance(value, list) or not value:
        raise VqauditError(f"{path}: row {row}, field 'answers': expected a non-empty list of answer objects")
    out = []
    for k, item in enumerate(value, start=1):
        text = item.get("answer") if isinstance(item, dict) else None
        if not isinstance(text, str):
            raise VqauditError(
                f"{path}: row {row}, field 'answers': answer {k} is not an object with a string 'answer'"
            )
        out.append(text)
    return tuple(out)


def load_vizwiz(path: Path) -> list[GoldItem]:
    """Load VizWiz VQA annotations (``train.json`` / ``val.json``; Gurari et al., CVPR 2018).

    Layout: a JSON list of ``{"image": "VizWiz_val_00000000.jpg", "question", "answers": [{"answer",
    "answer_confidence"}, ...] (10 crowd answers), "answer_type" ("other", "yes/no", "number",
    "unanswerable"), "answerable" (0 or 1)}``. A question is keyed by its image (one question per image, as
    VizWiz's evaluation keys results by ``image``), so the id is the image name; answers are kept as written
    ("unanswerable" is one of them when a worker judged the question unanswerable).

    Raises:
        VqauditError: a file of another benchmark's layout, a repeated image, or naming the file, row and field
            of a missing or mistyped field (``answerable`` must be 0 or 1).
    """
    data = read_json_file(path)
    check_layout(path, data, "vizwiz")
    items, fields = [], []
    for row, rec in enumerate(_records(path, data), start=1):
        qid, field = _id(path, row, rec, ("image",))
        fields.append(field)
        question = _text(path, row, _field(path, row, rec, ("question",)), "question")
        answers = _vizwiz_answers(path, row, _field(path, row, rec, ("answers",)))
        answerable = _field(path, row, rec, ("answerable",))
        if isinstance(answerable, bool) or answerable not in (0, 1):
            raise VqauditError(f"{path}: row {row}, field 'answerable': expected 0 or 1, got {answerable!r}")
        answer_type = rec.get("answer_type")
        items.append(
            GoldItem(
                qid,
                question,
                answers,
                "vizwiz",
                answer_type if isinstance(answer_type, str) else None,
                (),
                f"{path}:{row}",
                qid,
                answerable=bool(answerable),
            )
        )
    return _unique(path, items, fields)
