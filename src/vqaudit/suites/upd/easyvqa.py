"""Convert easy-VQA (PyPI ``easy-vqa`` 1.0, MIT) into MMBench-layout multiple-choice rows.

This is how the bundled ``data/easyvqa_*_mc.tsv`` files were made (see ``data/SOURCES.md``); vqaudit does not
depend on ``easy-vqa`` at run time. easy-VQA images are 64x64 PNGs with exactly one shape (circle, rectangle or
triangle) in one of eight colours; its questions are yes/no or ask for a colour or a shape.

Conversion rules (deterministic for a seed):

- only colour and shape questions are used (yes/no questions would be 2-option items, which AAD drops);
- each image's shape and colour are read off its own colour/shape questions and written to the extra columns
  ``image_shape`` and ``image_color`` (the IVQD rule uses them);
- ``n_items`` images are drawn without replacement; one of their colour/shape questions is drawn per image;
- a colour question gets 4 options: the answer plus 3 other colours drawn from the answer vocabulary; a shape
  question gets the 3 shapes of the vocabulary (easy-VQA has only three); options are shuffled;
- every item is MMBench ability ``attribute_recognition`` (#4), ``l2-category``
  ``finegrained_perception (instance-level)``; ``answer_domain`` is ``color`` or ``shape``.
"""

from __future__ import annotations

import base64
import csv
import io
import json
from pathlib import Path

import numpy as np

COLORS = ("red", "green", "blue", "yellow", "gray", "teal", "black", "brown")
SHAPES = ("circle", "rectangle", "triangle")
COLUMNS = (
    "index",
    "question",
    "hint",
    "A",
    "B",
    "C",
    "D",
    "answer",
    "category",
    "image",
    "source",
    "l2-category",
    "answer_domain",
    "image_shape",
    "image_color",
    "easyvqa_image_id",
    "split",
)


def _image_attributes(questions: list[tuple[str, str, int]]) -> dict[int, dict[str, str]]:
    attrs: dict[int, dict[str, str]] = {}
    for _, answer, image_id in questions:
        if answer in COLORS:
            attrs.setdefault(image_id, {})["color"] = answer
        elif answer in SHAPES:
            attrs.setdefault(image_id, {})["shape"] = answer
    return attrs


def convert_split(package_dir: Path, split: str, n_items: int, seed: int, first_index: int) -> list[dict[str, str]]:
    """Make MMBench-layout rows from one easy-VQA split.

    Args:
        package_dir: the installed ``easy_vqa`` package folder (holding ``data/<split>/questions.json``).
        split: ``train`` or ``test``.
        n_items: rows to make (at most the number of images with both attributes known).
        seed: seed of ``numpy.random.default_rng``.
        first_index: ``index`` of the first row; rows are numbered consecutively.

    Returns:
        Rows keyed by :data:`COLUMNS` (images base64-encoded), ordered by ``index``.
    """
    data_dir = package_dir / "data" / split
    questions = [(str(q), str(a), int(i)) for q, a, i in json.loads((data_dir / "questions.json").read_text())]
    attrs = _image_attributes(questions)
    candidates = sorted(i for i, a in attrs.items() if "color" in a and "shape" in a)
    rng = np.random.default_rng(seed)
    chosen = sorted(int(i) for i in rng.choice(candidates, size=min(n_items, len(candidates)), replace=False))
    by_image: dict[int, list[tuple[str, str]]] = {}
    for q, a, i in questions:
        if a in COLORS or a in SHAPES:
            by_image.setdefault(i, []).append((q, a))
    rows: list[dict[str, str]] = []
    for offset, image_id in enumerate(chosen):
        q, a = by_image[image_id][int(rng.integers(len(by_image[image_id])))]
        if a in COLORS:
            others = [c for c in COLORS if c != a]
            options = [a, *(others[int(k)] for k in rng.choice(len(others), size=3, replace=False))]
            domain = "color"
        else:
            options, domain = list(SHAPES), "shape"
        order = [int(k) for k in rng.permutation(len(options))]
        options = [options[k] for k in order]
        letters = "ABCD"
        image = (data_dir / "images" / f"{image_id}.png").read_bytes()
        row = {
            "index": str(first_index + offset),
            "question": q[:1].upper() + q[1:],
            "hint": "",
            **{letters[k]: (options[k] if k < len(options) else "") for k in range(4)},
            "answer": letters[options.index(a)],
            "category": "attribute_recognition",
            "image": base64.b64encode(image).decode("ascii"),
            "source": f"easy-vqa 1.0 {split}/images/{image_id}.png",
            "l2-category": "finegrained_perception (instance-level)",
            "answer_domain": domain,
            "image_shape": attrs[image_id]["shape"],
            "image_color": attrs[image_id]["color"],
            "easyvqa_image_id": str(image_id),
            "split": split,
        }
        rows.append(row)
    return rows


def rows_to_tsv(rows: list[dict[str, str]]) -> str:
    """Serialise rows as an MMBench-layout TSV with the columns of :data:`COLUMNS`."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(COLUMNS), delimiter="\t", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()
