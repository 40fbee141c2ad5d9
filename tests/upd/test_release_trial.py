"""Release-reader findings of the new-user trial of ``vqaudit build upd --release FILE.tsv``.

Each test writes the user's input as a small TSV in the release layout (``AtsuMiyai/UPD``
``automatic_eval/calculate_scores.py``: standard and UPD rows sharing ``index``, a ``type`` column, circular
passes at ``index + k * 10**6``) and checks what the reader makes of it:

1. an option whose text is ``None`` is an option (only an empty cell is missing), in both readers;
2. a circular copy whose answer letter names another option than the first pass's is refused;
3. in the option setting a UPD answer must be the added option ("None of the above" for AAD, seed 001 §4: the
   added option "is the correct one for UPD questions"), and an answer letter must be an option;
4. an image that is valid base64 of a truncated PNG, or of the bare 8-byte PNG signature, is refused.
"""

from __future__ import annotations

import base64
import csv
import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from shortanswer.helpers import run_cli
from upd.helpers import png
from upd.helpers import write_tsv as write_mc_tsv
from vqaudit.errors import VqauditError
from vqaudit.store import load_benchmark
from vqaudit.suites.upd.release import read_release
from vqaudit.suites.upd.release_build import build_upd_release
from vqaudit.suites.upd.tsv import load_mc

COLUMNS = [
    "index",
    "question",
    "hint",
    "A",
    "B",
    "C",
    "D",
    "E",
    "answer",
    "masked_answer",
    "category",
    "image",
    "l2-category",
    "type",
]
IMAGE = png(7)


def rec(
    index: int, kind: str, options: list[str], answer: str, masked: str = "", image: bytes | str = IMAGE
) -> dict[str, Any]:
    """One release row; ``image`` bytes are base64-encoded, a str is written as it is (an index reference)."""
    row = {c: "" for c in COLUMNS}
    row.update(
        {
            "index": str(index),
            "question": "How many dogs?",
            "answer": answer,
            "masked_answer": masked,
            "category": "object_localization",
            "l2-category": "finegrained_perception (instance-level)",
            "type": kind,
            "image": base64.b64encode(image).decode() if isinstance(image, bytes) else image,
        }
    )
    row.update({"ABCDE"[i]: o for i, o in enumerate(options)})
    return row


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, delimiter="\t", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


def dogs(circular: bool) -> list[dict[str, Any]]:
    """The user's item: "How many dogs?" A=1 B=2 C=None, answer B; its AAD side has B (the answer) removed."""
    rows = [rec(1, "standard", ["1", "2", "None"], "B"), rec(1, "upd", ["1", "None"], "F", masked="2")]
    if circular:  # rotations left by 1 and 2: '2' (the answer) moves to A, then to C
        rows += [
            rec(1000001, "standard", ["2", "None", "1"], "A", image="1"),
            rec(2000001, "standard", ["None", "1", "2"], "C", image="1"),
            rec(1000001, "upd", ["None", "1"], "F", masked="2", image="1"),
        ]
    return rows


def test_an_option_none_is_an_option_in_the_release_reader(tmp_path: Path) -> None:
    # Hand-read from the rows above: the standard question has the 3 options as written, the AAD one 2.
    item = read_release(write(tmp_path / "mmaad_base.tsv", dogs(circular=False))).items[0]
    assert item.standard[0].options == ("1", "2", "None") and item.upd[0].options == ("1", "None")
    # With circular copies: the rotation putting "None" in B is a rotation, not an option gap.
    build_upd_release(tmp_path / "b", [write(tmp_path / "circular_mmaad_base.tsv", dogs(circular=True))])
    views = load_benchmark(tmp_path / "b", check_images=False).views
    assert [(v.options, v.obligation.gold) for v in views] == [
        (("1", "2", "None"), ("B",)),
        (("2", "None", "1"), ("A",)),
        (("None", "1", "2"), ("C",)),
        (("1", "None"), ()),
        (("None", "1"), ()),
    ]


def test_only_an_empty_cell_is_missing_in_both_readers(tmp_path: Path) -> None:
    # The MMBench-layout (--tsv) reader agrees: "None" and "nan" are option texts, an empty D is no option.
    path = write_mc_tsv(
        tmp_path / "mc.tsv",
        [
            {
                "index": 1,
                "question": "How many dogs?",
                "A": "1",
                "B": "None",
                "C": "nan",
                "D": "",
                "answer": "B",
                "category": "c",
                "image": IMAGE,
                "hint": "NA",
            }
        ],
    )
    item = load_mc(path).items[0]
    assert (item.options, item.answer_text, item.hint) == (("1", "None", "nan"), "None", "NA")
    rows = [
        rec(1, "standard", ["1", "None", "nan"], "B", image=IMAGE) | {"hint": "NA"},
        rec(1, "upd", ["1", "nan"], "F", masked="None"),
    ]
    std = read_release(write(tmp_path / "mmaad_base.tsv", rows)).items[0].standard[0]
    assert (std.options, std.hint) == (item.options, item.hint)


def test_a_circular_copy_whose_answer_names_another_option_is_refused(tmp_path: Path) -> None:
    # Copy 1000001 rotates [red, blue, green] left by 1: red (the answer) is now C, but the row says A = blue.
    rows = [
        rec(1, "standard", ["red", "blue", "green"], "A"),
        rec(1, "upd", ["blue", "green"], "F", masked="red"),
        rec(1000001, "standard", ["blue", "green", "red"], "A", image="1"),
    ]
    path = write(tmp_path / "mmaad_base.tsv", rows)
    with pytest.raises(
        VqauditError,
        match=r"rows 1 and 3 \(standard index 1 and its circular copy 1000001\), "
        r"field 'answer': the copy's answer A names 'blue', the first pass's A "
        r"names 'red'",
    ):
        read_release(path)
    rows[2]["answer"] = "C"  # the right letter builds (with the item's other passes: 3 standard, 2 UPD)
    rows += [
        rec(2000001, "standard", ["green", "red", "blue"], "B", image="1"),
        rec(1000001, "upd", ["green", "blue"], "F", masked="red", image="1"),
    ]
    assert len(read_release(write(path, rows)).items[0].standard) == 3


def _option_rows(upd_answer: str) -> list[dict[str, Any]]:
    return [
        rec(1, "standard", ["red", "blue", "green", "None of the above"], "A"),
        rec(1, "upd", ["blue", "green", "None of the above"], upd_answer, masked="red"),
    ]


def test_the_option_settings_upd_answer_is_the_added_option(tmp_path: Path) -> None:
    # The added option is C of the UPD row: its abstention letter is C (seed 001 §4, Fig. 2 (b)).
    build_upd_release(tmp_path / "ok", [write(tmp_path / "mmaad_option.tsv", _option_rows("C"))])
    views = {v.meta["kind"]: v for v in load_benchmark(tmp_path / "ok", check_images=False).views}
    assert (views["upd"].meta["abstain_letter"], views["standard"].meta["abstain_letter"]) == ("C", "D")
    with pytest.raises(
        VqauditError,
        match=r"mmaad_option.tsv: row 2, field 'answer': a UPD row of the option "
        r"setting must answer the added option 'None of the above'.*A is 'blue'",
    ):
        read_release(write(tmp_path / "mmaad_option.tsv", _option_rows("A")))
    with pytest.raises(VqauditError, match=r"row 2, field 'answer': 'Z' is not one of the options A, B, C"):
        read_release(write(tmp_path / "mmaad_option.tsv", _option_rows("Z")))


def test_the_cli_refuses_a_content_option_as_upd_answer_with_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "mmaad_option.tsv", _option_rows("A"))
    assert run_cli(monkeypatch, "build", "upd", "--out", str(tmp_path / "b"), "--release", str(path)) == 2
    assert f"{path}: row 2, field 'answer'" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()


def _half_png() -> bytes:
    """The first half of a 256x256 gradient PNG: PIL opens it (the header is whole) but cannot load its pixels."""
    buffer = io.BytesIO()
    Image.linear_gradient("L").save(buffer, format="PNG")
    return buffer.getvalue()[: len(buffer.getvalue()) // 2]


@pytest.mark.parametrize(
    "data", [IMAGE[:40], IMAGE[:8], _half_png()], ids=["truncated-png", "png-signature-only", "half-png"]
)
def test_an_image_that_does_not_decode_is_refused(tmp_path: Path, data: bytes) -> None:
    assert data.startswith(b"\x89PNG\r\n\x1a\n")  # passes the magic-bytes check alone
    rows = [rec(1, "standard", ["red", "blue"], "A"), rec(1, "upd", ["blue"], "F", masked="red", image=data)]
    path = write(tmp_path / "mmaad_base.tsv", rows)
    with pytest.raises(VqauditError, match=r"mmaad_base.tsv: row 2, field 'image': the image cannot be decoded"):
        build_upd_release(tmp_path / "b", [path])
    assert not (tmp_path / "b").exists()
    mc = write_mc_tsv(
        tmp_path / "mc.tsv",
        [{"index": 1, "question": "q", "A": "x", "B": "y", "answer": "A", "category": "c", "image": data}],
    )
    with pytest.raises(VqauditError, match=r"mc.tsv: row 1, field 'image': the image cannot be decoded"):
        load_mc(mc)


def test_an_option_setting_file_named_as_another_setting_is_refused(tmp_path: Path) -> None:
    # A copy of an AAD option-setting file named mmiasd_base once built as IASD/base. In the
    # option setting every row ends with the added option (seed 001 §4), which base and instruction never add.
    rows = _option_rows("C")
    for name in ("mmiasd_base.tsv", "mmaad_instruction.tsv"):
        with pytest.raises(
            VqauditError,
            match=rf"{name}: row 1, field 'D': every row's last option is the option "
            r"setting's added option \('None of the above'\), but the file name "
            r"says (iasd/base|aad/instruction)",
        ):
            read_release(write(tmp_path / name, rows))
    # One real option "None of the above" in a base file is an option like any other.
    mixed = [
        rec(1, "standard", ["red", "blue", "None of the above"], "A"),
        rec(1, "upd", ["blue", "None of the above"], "F", masked="red"),
        rec(2, "standard", ["cat", "dog"], "B"),
        rec(2, "upd", ["cat"], "F", masked="dog"),
    ]
    assert len(read_release(write(tmp_path / "mmaad_base.tsv", mixed)).items) == 2


def _circular_option_rows() -> list[dict[str, Any]]:
    """One AAD option-setting item with all its passes: 3 content options (3 standard rotations), 2 on its UPD side.

    The added option "None of the above" stays last (docs/upd.md, Settings), so only the content options rotate.
    """
    nota = "None of the above"
    return [
        rec(1, "standard", ["red", "blue", "green", nota], "A"),
        rec(1000001, "standard", ["blue", "green", "red", nota], "C", image="1"),
        rec(2000001, "standard", ["green", "red", "blue", nota], "B", image="1"),
        rec(1, "upd", ["blue", "green", nota], "C", masked="red"),
        rec(1000001, "upd", ["green", "blue", nota], "C", masked="red", image="1"),
    ]


def test_an_item_missing_a_circular_pass_is_refused_for_either_kind(tmp_path: Path) -> None:
    # The file without its last row (1000001 upd), as while it is still being written, once built
    # with the UPD question asked once instead of twice, so its circular score was over 1 pass. The release's
    # scorer (automatic_eval/calculate_scores.py) scores every row with index % 10**6 == item and does not
    # regenerate passes, so the reader must refuse. Row numbers and indexes hand-read from the rows above.
    rows = _circular_option_rows()
    full = build_upd_release(tmp_path / "full", [write(tmp_path / "mmaad_option.tsv", rows)])
    assert full["n_views"] == 5
    cases = {
        "no-upd-copy": (rows[:4], 4, "upd index 1 has 1 of its 2 circular passes: no upd row has index 1000001"),
        "no-std-copy": (
            rows[:1] + rows[2:],
            1,
            "standard index 1 has 2 of its 3 circular passes: no standard row has index 1000001",
        ),
        "no-std-copies": (
            [rows[0], rows[3], rows[4]],
            1,
            "standard index 1 has 1 of its 3 circular passes: no standard row has index 1000001, 2000001",
        ),
    }
    for name, (kept, row, message) in cases.items():
        path = write(tmp_path / name / "mmaad_option.tsv", kept) if (tmp_path / name).mkdir() is None else None
        assert path is not None
        with pytest.raises(VqauditError, match=rf"mmaad_option.tsv: row {row}, field 'index': {message} "):
            build_upd_release(tmp_path / name / "b", [path])
        assert not (tmp_path / name / "b").exists()


def test_a_kept_trailing_option_is_not_a_missing_rotation(tmp_path: Path) -> None:
    # MMBench rotates the first m options and keeps a trailing "both" option in place (docs/upd.md): 2 rotating
    # options mean 2 passes, so this complete item builds 2 + 1 views (its UPD side has one content option).
    rows = [
        rec(1, "standard", ["red", "blue", "both"], "A"),
        rec(1000001, "standard", ["blue", "red", "both"], "B", image="1"),
        rec(1, "upd", ["blue", "both"], "F", masked="red"),
    ]
    assert build_upd_release(tmp_path / "b", [write(tmp_path / "mmaad_base.tsv", rows)])["n_views"] == 3
