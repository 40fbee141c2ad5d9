"""The default model name of a prediction file keeps its dots (``llava-v1.5-13b`` once became ``llava-v1``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vqaudit.shortanswer.audit import model_name_of


@pytest.mark.parametrize(
    ("file", "name"),
    [
        ("llava-v1.5-13b.jsonl", "llava-v1.5-13b"),
        ("llava-v1.6-34b.jsonl", "llava-v1.6-34b"),
        ("preds.json.gz", "preds"),
        ("Qwen2.5-VL-7B.xlsx", "Qwen2.5-VL-7B"),
        ("model.v2.CSV", "model.v2"),
        ("noext", "noext"),
        (".jsonl", ".jsonl"),
    ],
)
def test_model_name_of(file: str, name: str) -> None:
    assert model_name_of(Path("/x") / file) == name
