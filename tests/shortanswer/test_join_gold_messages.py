"""Messages of a question join that joins nothing and of a gold file with a repeated id: each says what the
input looked like.

The rules (docs/shortanswer.md "Inputs"): an id join where no id matches is refused showing one prediction id and
one gold id; a question join (``--join-on question`` / ``image-question``) where no question matches is refused
showing one prediction question and one gold question (repr, cut to about 80 characters) with the rows they come
from; a gold id that occurs twice is refused naming the file, the rows of both occurrences and the field the
layout names it by (TextVQA ``question_id``, DocVQA and InfographicVQA ``questionId``). Expected messages are
built by hand from the rows written here (row N: the N-th entry of ``data``, 1-based).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shortanswer.helpers import run_cli
from vqaudit.errors import VqauditError
from vqaudit.shortanswer.benchmarks import load_gold

CAT10 = ["cat"] * 10


def _lines(path: Path, *records: object) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _gold(path: Path, *rows: dict[str, object]) -> Path:
    path.write_text(json.dumps({"data": list(rows)}), encoding="utf-8")
    return path


def _audit(monkeypatch: pytest.MonkeyPatch, preds: Path, gold: Path, *extra: str) -> int:
    return run_cli(
        monkeypatch,
        "audit",
        str(preds),
        "--benchmark",
        "textvqa",
        "--gold",
        str(gold),
        "--out",
        str(preds.with_suffix(".audit")),
        *extra,
    )


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ")  # one line, no traceback
    return err[len("error: ") : -1]


# 3. --join-on question: its own message ----------------------------------------------------------------------------


def test_a_question_join_that_joins_nothing_shows_one_question_of_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: "textvqa: no prediction could be joined to a gold answer (check the ids, --gold, --join-on and
    # --format); nothing to audit", the line every failed join printed.
    preds = _lines(
        tmp_path / "p.jsonl", {"question_id": "a", "question": "What brand is the phone?", "prediction": "nokia"}
    )
    gold = _gold(
        tmp_path / "gold.json",
        {"question_id": 7, "question": "what is written on the sign?", "answers": CAT10, "image_id": "i1"},
    )
    assert _audit(monkeypatch, preds, gold, "--join-on", "question") == 2
    assert _error(capsys) == (
        "no prediction question is a gold question (compared lower-cased, whitespace collapsed): prediction "
        f"questions look like 'What brand is the phone?' ({preds}: row 1), gold questions like 'what is written "
        f"on the sign?' ({gold}: row 1); check the gold file (the benchmark and split of the predictions), or join "
        "by id"
    )


def test_a_long_question_is_cut_to_about_80_characters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    long = "Read the sign and tell me " + "x" * 200 + "?"
    preds = _lines(tmp_path / "p.jsonl", {"question_id": "a", "question": long, "prediction": "nokia"})
    gold = _gold(tmp_path / "gold.json", {"question_id": 7, "question": "q?", "answers": CAT10, "image_id": "i"})
    assert _audit(monkeypatch, preds, gold, "--join-on", "question") == 2
    message = _error(capsys)
    shown = repr(long[:77]) + "..."  # 77 characters of text, quoted, then "...": 82 characters in all
    assert f"prediction questions look like {shown} ({preds}: row 1)" in message
    assert long not in message and len(shown) == 82


def test_predictions_without_question_text_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    preds = _lines(tmp_path / "p.jsonl", {"question_id": "a", "prediction": "nokia"})
    gold = _gold(tmp_path / "gold.json", {"question_id": 7, "question": "q?", "answers": CAT10, "image_id": "i"})
    assert _audit(monkeypatch, preds, gold, "--join-on", "question") == 2
    assert _error(capsys) == (
        f"--join-on question: the predictions carry no question text ({preds}: row 1 has "
        "none), so none can be joined by question; give the file a question column, or join "
        "by id"
    )


def test_an_image_question_join_whose_images_differ_points_at_the_image_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    preds = _lines(
        tmp_path / "p.jsonl",
        {"question_id": "a", "question": "What is it?", "prediction": "cat", "image": "images/0054c91397f2fe05.jpg"},
    )
    gold = _gold(
        tmp_path / "gold.json",
        {"question_id": 7, "question": "what is it?", "answers": CAT10, "image_id": "0054c91397f2fe05"},
    )
    assert _audit(monkeypatch, preds, gold, "--join-on", "image-question") == 2
    assert _error(capsys) == (
        "no prediction's (image, question) is a gold (image, question): predictions look like image "
        f"'images/0054c91397f2fe05.jpg', question 'What is it?' ({preds}: row 1), the gold like image "
        f"'0054c91397f2fe05', question 'what is it?' ({gold}: row 1); the questions match but the images do not: "
        "check --image-field"
    )


def test_questions_left_unjoined_as_ambiguous_are_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The one prediction's question occurs twice in the gold: ambiguous, never guessed (docs), so nothing joins.
    preds = _lines(tmp_path / "p.jsonl", {"question_id": "a", "question": "What is it?", "prediction": "cat"})
    gold = _gold(
        tmp_path / "gold.json",
        *({"question_id": i, "question": "What is it?", "answers": CAT10, "image_id": f"i{i}"} for i in (1, 2)),
    )
    assert _audit(monkeypatch, preds, gold, "--join-on", "question") == 2
    assert _error(capsys).endswith(
        "gold questions like 'What is it?' "
        f"({gold}: row 1); 1 question key occurring more than once was left unjoined "
        "(ambiguous)"
    )


# 4. A repeated gold id: both rows and the layout's own field name ----------------------------------------------


@pytest.mark.parametrize(
    ("bench", "field", "extra"),
    [
        ("textvqa", "question_id", {"image_id": "i"}),
        ("stvqa", "question_id", {"file_name": "f.jpg"}),
        ("docvqa", "questionId", {}),
        ("infovqa", "questionId", {"answer_type": ["single span"]}),
    ],
)
def test_a_repeated_gold_id_names_both_rows_and_the_real_field(
    tmp_path: Path, bench: str, field: str, extra: dict[str, object]
) -> None:
    # Before: "row 3, field 'question_id': duplicate id '11'" for every layout (DocVQA's field is questionId) and
    # without the first row holding the id.
    rows = [{field: i, "question": f"q{n}?", "answers": ["a"], **extra} for n, i in enumerate((11, 12, 11, 13))]
    gold = _gold(tmp_path / "gold.json", *rows)
    with pytest.raises(VqauditError) as info:
        load_gold(gold, bench)
    assert str(info.value) == f"{gold}: row 3, field '{field}': duplicate id '11' (first at row 1)"


def test_a_docvqa_file_naming_the_id_question_id_is_named_by_that_field(tmp_path: Path) -> None:
    # The DocVQA loader also reads 'question_id' (the generic layout); the message names the field the row has.
    gold = _gold(
        tmp_path / "gold.json",
        {"questionId": 5, "question": "q?", "answers": ["a"]},
        {"question_id": 5, "question": "r?", "answers": ["b"]},
    )
    with pytest.raises(VqauditError) as info:
        load_gold(gold, "docvqa")
    assert str(info.value) == (
        f"{gold}: row 2, field 'question_id': duplicate id '5' (first at row 1, field 'questionId')"
    )


def test_an_integer_and_a_string_id_of_the_same_text_are_one_id(tmp_path: Path) -> None:
    # Ids are compared as text (the join compares them so): 7 and "7" are the same question.
    gold = _gold(
        tmp_path / "gold.json",
        {"question_id": 7, "question": "q?", "answers": CAT10, "image_id": "i"},
        {"question_id": "7", "question": "r?", "answers": CAT10, "image_id": "j"},
    )
    with pytest.raises(VqauditError, match=r"row 2, field 'question_id': duplicate id '7' \(first at row 1\)$"):
        load_gold(gold, "textvqa")


def test_chartqa_rows_are_numbered_so_repeated_rows_keep_their_own_ids(tmp_path: Path) -> None:
    # ChartQA's gold has no id: row N of test_human.json is test_human:N (loaders docstring), so two identical
    # rows are two questions, never a duplicate id.
    gold = tmp_path / "test_human.json"
    gold.write_text(json.dumps([{"imgname": "a.png", "query": "q?", "label": "1"}] * 2), encoding="utf-8")
    assert [g.qid for g in load_gold(gold, "chartqa")] == ["test_human:1", "test_human:2"]
