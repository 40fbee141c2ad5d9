"""The layout detectors of the short-answer gold files and the check that a gold file is its benchmark's.

Each ``looks_*`` detector is named by a :class:`~vqaudit.shortanswer.benchmarks.GoldLayout` row of the benchmark
table and says why a file looks like its layout (None: it does not); :func:`check_layout` refuses a file that
looks like another benchmark's gold (module docstring of :mod:`.loaders`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.shortanswer.benchmarks import detect_layout, get_layout

_TEXTVQA_ONLY = ("flickr_original_url", "flickr_300k_url", "image_classes")
_DATASET_NAMES = {
    "textvqa": "textvqa",
    "stvqa": "stvqa",
    "docvqa": "docvqa",
    "infographicvqa": "infovqa",
    "infographicsvqa": "infovqa",
    "infovqa": "infovqa",
}


def _dataset_named(data: Any) -> tuple[str | None, str]:
    """The layout id a file's ``dataset_name`` names (None: none, or one no layout knows) and the name as given."""
    name = data.get("dataset_name") if isinstance(data, dict) else None
    if not isinstance(name, str):
        return None, ""
    return _DATASET_NAMES.get("".join(c for c in name.lower() if c.isalnum())), name


def looks_chartqa(first: dict[str, Any], data: Any) -> str | None:
    """ChartQA: row 1 has ``imgname``, or ``query`` and ``label`` (:class:`.benchmarks.GoldLayout` detector)."""
    keys = set(first)
    if "imgname" in keys or {"query", "label"} <= keys:
        return "row 1 has " + ("'imgname'" if "imgname" in keys else "'query' and 'label'")
    return None


def looks_infovqa(first: dict[str, Any], data: Any) -> str | None:
    """InfographicVQA: row 1 has ``questionId`` and ``answer_type`` (or ``image_local_name``)."""
    if "questionId" in first:
        for marker in ("answer_type", "image_local_name"):
            if marker in first:
                return f"row 1 has 'questionId' and '{marker}'"
    return None


def looks_docvqa(first: dict[str, Any], data: Any) -> str | None:
    """DocVQA: row 1 has ``questionId`` and neither InfographicVQA marker (asked after :func:`looks_infovqa`)."""
    if "questionId" in first and looks_infovqa(first, data) is None:
        return "row 1 has 'questionId' and no 'answer_type'"
    return None


def looks_vizwiz(first: dict[str, Any], data: Any) -> str | None:
    """VizWiz: row 1 has ``image`` and ``answerable`` and no question id (the VizWiz VQA annotation rows)."""
    if {"image", "answerable"} <= set(first) and "question_id" not in first and "questionId" not in first:
        return "row 1 has 'image' and 'answerable'"
    return None


def looks_textvqa(first: dict[str, Any], data: Any) -> str | None:
    """TextVQA: ``question_id`` rows with its ``dataset_name``, a Flickr field, 10 answers or a bare ``image_id``.

    ``image_id`` counts only without ST-VQA's ``file_name``; a file whose ``dataset_name`` names ST-VQA is not
    TextVQA's.
    """
    if "question_id" not in first:
        return None
    named, name = _dataset_named(data)
    if named == "textvqa":
        return f"its 'dataset_name' is {name!r}"
    if named == "stvqa":  # the file says it is the other question_id layout
        return None
    answers = first.get("answers")
    ten = isinstance(answers, list) and len(answers) == 10
    flickr = [k for k in _TEXTVQA_ONLY if k in first]
    if flickr or ten:
        return "row 1 has " + (f"'{flickr[0]}'" if flickr else "'question_id' and 10 annotator answers")
    if "image_id" in first and not {"file_name", "file_path"} & set(first):
        return "row 1 has 'question_id' and 'image_id'"
    return None


def looks_stvqa(first: dict[str, Any], data: Any) -> str | None:
    """ST-VQA: ``question_id`` rows with its ``dataset_name``, or ``file_name`` (``file_path``) and no ``image_id``.

    Asked after :func:`looks_textvqa`, which takes 10-answer rows.
    """
    if "question_id" not in first:
        return None
    named, name = _dataset_named(data)
    if named == "stvqa":
        return f"its 'dataset_name' is {name!r}"
    if named == "textvqa":
        return None
    file_key = next((k for k in ("file_name", "file_path") if k in first), None)
    if file_key is not None and "image_id" not in first:
        return f"row 1 has 'question_id' and '{file_key}', no 'image_id'"
    return None


def check_layout(path: Path, data: Any, expected: str) -> None:
    """Refuse a gold file of another benchmark's layout (naming the file, what it looks like, what was expected).

    ``expected``: a layout id of the benchmark table (:func:`vqaudit.shortanswer.benchmarks.get_layout`).
    """
    found = detect_layout(data)
    if found is None or found[0] == expected:
        return
    got, evidence = found
    want = get_layout(expected)
    raise VqauditError(
        f"{path}: looks like a {get_layout(got).title} gold file ({evidence}), not the {want.title} "
        f"layout expected ({want.described}); give the {want.title} gold file, or --benchmark {got} "
        "for this one"
    )
