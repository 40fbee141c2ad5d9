"""How the audit holds its rows changes no byte it writes: packed rows, layer chunks and compact columns.

The audit holds its predictions, joined rows and outputs packed in compressed blocks
(``vqaudit.shortanswer.packed``, ``BLOCK_ROWS`` records a block), computes its layers over chunks of rows
(``audit_layers.LAYER_CHUNK_ROWS``) and keeps the layer columns compact (``vqaudit.shortanswer.layer_columns``). Every
layer of a row depends on that row alone, so the written ``rows.jsonl``, ``report.json`` and ``report.md`` must
be the same bytes whatever the block and chunk sizes: here 5-record blocks and 7-row chunks (several hundred of
each, the last one short) against the defaults (one chunk and a few blocks on these files), on the bundled real
prediction files whose one-chunk results the golden files of ``tests/golden`` pin.
"""

from __future__ import annotations

import dataclasses
import math
from array import array
from pathlib import Path
from typing import Any

import pytest

from vqaudit.report.shortanswer import write_audit_report
from vqaudit.scoring.contracts import Contract
from vqaudit.shortanswer import audit_layers, packed
from vqaudit.shortanswer.audit import run_audit
from vqaudit.shortanswer.layer_columns import LayerColumns, Zipped
from vqaudit.shortanswer.packed import field_values, packed_records, packed_strings
from vqaudit.shortanswer.records import AuditRow, Prediction

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "shortanswer"
CASES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "textvqa": (
        "llava15_13b_textvqa_answers.jsonl.gz",
        "textvqa",
        {
            "gold": FIXTURES / "textvqa_val_gold.json.gz",
            "join_on": "image-question",
            "id_field": "row",
            "image_field": "question_id",
        },
    ),
    "chartqa": ("vila15_13b_chartqa_test.xlsx", "chartqa", {}),
    "docvqa": ("mocr_mplugowl_docvqa_val.json.gz", "docvqa", {}),
}
FILES = ("rows.jsonl", "report.json", "report.md")


def _written(name: str, out: Path) -> dict[str, bytes]:
    file_name, benchmark, options = CASES[name]
    predictions = FIXTURES / file_name
    result = run_audit(predictions, benchmark, **options)
    write_audit_report(result, out, predictions=predictions)
    return {f: (out / f).read_bytes() for f in FILES}


@pytest.mark.parametrize("name", sorted(CASES))
def test_small_blocks_and_chunks_write_the_same_bytes(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    default = _written(name, tmp_path / "default")
    assert default["rows.jsonl"].count(b"\n") > 1000  # many blocks and chunks below
    monkeypatch.setattr(packed, "BLOCK_ROWS", 5)
    monkeypatch.setattr(audit_layers, "LAYER_CHUNK_ROWS", 7)
    small = _written(name, tmp_path / "small")
    for f in FILES:
        assert small[f] == default[f], f


def test_packed_records_read_back_equal_by_index_slice_iteration_and_field() -> None:
    rows = [
        AuditRow(
            f"q{i}", "What?", str(i), ("a", "b") if i % 2 else ("a",), "textvqa", "val", raw=None if i % 3 else "x"
        )
        for i in range(12)
    ]
    store = packed_records(AuditRow)
    for row in rows:
        store.append(row)
    assert len(store) == 12 and store == rows and store == tuple(rows) and list(store) == rows
    assert store[5] == rows[5] and store[-1] == rows[11] and store[3:9] == rows[3:9] and store[::4] == rows[::4]
    assert list(field_values(store, "prediction")) == [str(i) for i in range(12)]
    assert list(field_values(rows, "raw")) == [r.raw for r in rows]  # a plain list: read by getattr
    with pytest.raises(IndexError):
        store[12]
    pred = Prediction("q", "p", gold=("g", "g"), source="f.jsonl:3", answerable_score=0.25)
    back = packed_records(Prediction, [pred] * 3000)[2999]  # from the second block (2048 records a block)
    assert back == pred and repr(back) == repr(pred) and dataclasses.asdict(back) == dataclasses.asdict(pred)
    assert packed_strings(["", "x\x00y"]) == ["", "x\x00y"]


def test_layer_columns_keep_every_value_and_its_type() -> None:
    columns = LayerColumns()
    # a chunk of floats (NaN, -0.0 kept bit for bit), then one with an int score: the column becomes a list
    contract = Contract("scalar", None, "r")
    columns.add(
        [1.0, math.nan], [(-0.0, "exact"), (0.5, None)], [contract] * 2, [(), (("x",),)], [(1.0,) * 3] * 2, [None, True]
    )
    assert isinstance(columns.official, array)
    columns.add([1], [(0.0, None)], [contract], [()], [(1, 0.0, 0.0)], [False])
    assert isinstance(columns.official, list) and [type(v) for v in columns.official] == [float, float, int]
    assert [repr(v) for v in columns.canonical] == ["-0.0", "0.5", "0.0"] and math.isnan(columns.official[1])
    assert columns.canon()[0] == (-0.0, "exact") and list(columns.overlays) == [(), (("x",),), ()]
    assert columns.repaired_rows()[2] == (1, 0.0, 0.0) and type(columns.repaired_rows()[2][0]) is int
    assert list(Zipped([1, 2], "ab")) == [(1, "a"), (2, "b")]
    with pytest.raises(ValueError, match="differ in length"):
        columns.add([1.0], [], [], [], [], [])
