"""Input rules found by trying the inputs as a new user: quoting, ChartQA splits and ids, row-number joins,
gold files that cannot be read, and the messages that must say what the input looked like.

Every expected value says where it comes from: the documented rule (docs/shortanswer.md "Inputs"), a hand
computation on the few rows written here, or the layout of the official files.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from vqaudit.errors import VqauditError
from vqaudit.shortanswer.importers import read_predictions

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "shortanswer"


def _lines(path: Path, *records: object) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _naive(rows: list[list[str]], delimiter: str) -> str:
    """A table written with a plain ``delimiter.join`` (no CSV quoting), as the trial's user wrote it."""
    return "".join(delimiter.join(r) + "\n" for r in rows)


# 1. An unmatched quote must not swallow rows ----------------------------------------------------------------------

ROWS = [["index", "split", "answer", "prediction"]] + [[str(i), "test_human", "5", "5"] for i in range(1, 21)]


@pytest.mark.parametrize(("name", "delimiter"), [("p.tsv", "\t"), ("p.csv", ",")])
def test_an_unterminated_quote_is_refused_at_the_row_it_opens(tmp_path: Path, name: str, delimiter: str) -> None:
    # Data row 6 (file row 7: the header is row 1, the documented table numbering) starts its prediction with
    # a '"' that nothing closes. Before the fix the other 14 rows became part of row 6's prediction (6 rows
    # audited, exit 0).
    rows = [list(r) for r in ROWS]
    rows[6][3] = '"Yes, it is'
    path = tmp_path / name
    path.write_text(_naive(rows, delimiter), encoding="utf-8")
    with pytest.raises(
        VqauditError,
        match=rf"p\.{name[2:]}: row 7 \(line 7\), field 'prediction': a quoted field "
        "starts here and is never closed",
    ):
        read_predictions(path)


def test_a_stray_quote_closed_rows_later_is_refused(tmp_path: Path) -> None:
    # Row 2 opens a quote, row 4 ends its prediction with one: the csv module makes rows 2-4 one field (the
    # width is right, so the width check passes). Line 3 inside the field is a whole row of its own.
    path = tmp_path / "p.tsv"
    path.write_text(
        'index\tsplit\tanswer\tprediction\n1\ttest_human\t14\t"14\n2\ttest_human\t0.57\t0.57\n3\ttest_human\t3\t3"\n',
        encoding="utf-8",
    )
    with pytest.raises(
        VqauditError,
        match=r"p\.tsv: row 2 \(line 2\), field 'prediction': this quoted field runs "
        r"over line 3, which looks like a row of its own \(4 fields\)",
    ):
        read_predictions(path)


def test_a_quote_in_the_middle_of_a_quoted_field_is_refused(tmp_path: Path) -> None:
    # '"Yes" he said' is not CSV (a quoted field must end at the delimiter); the lenient reader made it
    # 'Yes he said' silently.
    path = tmp_path / "p.csv"
    path.write_text('index,prediction\n1,"Yes" he said\n', encoding="utf-8")
    with pytest.raises(VqauditError, match=r"p\.csv: row 2 \(line 2\), field 'prediction': not valid CSV"):
        read_predictions(path)


def test_quoted_fields_written_by_a_csv_writer_still_read(tmp_path: Path) -> None:
    # Python's csv.writer output: a prediction spanning two lines, one with commas, one with doubled quotes,
    # CRLF line ends. Values by hand: what was written.
    import csv

    path = tmp_path / "p.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["index", "answer", "prediction"])
        w.writerow(["1", "3", "3\nreally, three"])
        w.writerow(["2", "No", 'He said "no", twice,\nthen, "no", again, ok'])
        w.writerow(["3", "5", "5"])
    got = [(p.qid, p.prediction) for p in read_predictions(path)]
    assert got == [("1", "3\nreally, three"), ("2", 'He said "no", twice,\nthen, "no", again, ok'), ("3", "5")]


# 8, 12. Gold files that cannot be read; paths that are not files; bytes that are not UTF-8 ------------------------


def test_a_truncated_or_fake_gzip_gold_file_is_one_line_naming_it(tmp_path: Path) -> None:
    from vqaudit.shortanswer.benchmarks import load_gold

    full = gzip.compress(
        json.dumps({"data": [{"question_id": 1, "question": "q", "answers": ["a"] * 10, "image_id": "i"}] * 1}).encode()
    )
    truncated = tmp_path / "gold.json.gz"
    truncated.write_bytes(full[: len(full) // 2])  # before: EOFError traceback, exit 1
    with pytest.raises(
        VqauditError,
        match=r"gold\.json\.gz: not a readable gzip file \(it ends before the end of "
        r"the compressed data: the file is truncated\)",
    ):
        load_gold(truncated, "textvqa")
    fake = tmp_path / "fake.json.gz"
    fake.write_text("no gzip here")  # before: "BadGzipFile: Not a gzipped file (b'no')", no file name
    with pytest.raises(VqauditError, match=r"fake\.json\.gz: not a readable gzip file \(it is not gzip data"):
        load_gold(fake, "textvqa")


def test_a_folder_or_a_pipe_is_named_for_what_it_is(tmp_path: Path) -> None:
    from vqaudit.shortanswer.benchmarks import load_gold

    folder = tmp_path / "preds.jsonl"
    folder.mkdir()
    with pytest.raises(VqauditError, match=r"preds\.jsonl: is a folder, not a prediction file"):
        read_predictions(folder)
    with pytest.raises(VqauditError, match=r"preds\.jsonl: is a folder, not a gold file"):
        load_gold(folder, "textvqa")
    import os

    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(VqauditError, match=r"pipe\.jsonl: not a regular file \(a pipe or device"):
        read_predictions(fifo)


def test_bytes_that_are_not_utf8_name_the_row(tmp_path: Path) -> None:
    # Latin-1 'é' (0xe9) on the third line; before: "not UTF-8 text (byte 37: ...)", no row.
    path = tmp_path / "p.jsonl"
    path.write_bytes(
        b'{"question_id": 1, "prediction": "a"}\n{"question_id": 2, "prediction": "b"}\n'
        b'{"question_id": 3, "prediction": "caf\xe9"}\n'
    )
    with pytest.raises(VqauditError, match=r"p\.jsonl: row 3: not UTF-8 text \(invalid continuation byte\)"):
        read_predictions(path)


# 2. The ChartQA split of a gold file is read from its name, never guessed -----------------------------------------

CHART_ROWS = [{"imgname": "a.png", "query": "q1?", "label": "3"}, {"imgname": "b.png", "query": "q2?", "label": "5"}]


def test_a_chartqa_gold_name_that_tells_no_split_is_refused(tmp_path: Path) -> None:
    from vqaudit.shortanswer.benchmarks import load_gold
    from vqaudit.shortanswer.loaders import load_chartqa

    # Before the fix any name without "human" was labelled test_augmented: a renamed human slice joined the
    # augmented predictions (60 joined, exit 0).
    for name, said in (("my_chartqa_gold.json", "neither"), ("human_vs_augmented.json", "both")):
        path = tmp_path / name
        path.write_text(json.dumps(CHART_ROWS), encoding="utf-8")
        with pytest.raises(
            VqauditError,
            match=rf"{name}: a ChartQA gold file's split is read from its name, and "
            rf"this name says {said} of 'human' and 'augmented'.*--benchmark chartqa-human",
        ):
            load_gold(path, "chartqa")
    # the explicit split (--benchmark chartqa-human / chartqa-machine) needs no name
    neutral = tmp_path / "my_chartqa_gold.json"
    assert [g.qid for g in load_gold(neutral, "chartqa-human")] == ["test_human:1", "test_human:2"]
    assert [g.qid for g in load_gold(neutral, "chartqa-machine")] == ["test_augmented:1", "test_augmented:2"]
    # ChartQA's own names, and the paper's "machine"
    for name, split in (
        ("test_human.json", "test_human"),
        ("test_augmented.json", "test_augmented"),
        ("chartqa_machine.json", "test_augmented"),
    ):
        path = tmp_path / name
        path.write_text(json.dumps(CHART_ROWS), encoding="utf-8")
        assert load_chartqa(path)[0].qid == f"{split}:1"
    # a name saying the other split than the one asked for is refused
    with pytest.raises(
        VqauditError,
        match=r"test_human\.json: the file's name says it is ChartQA's test_human "
        "split, but chartqa-machine audits test_augmented",
    ):
        load_gold(tmp_path / "test_human.json", "chartqa-machine")


# 3, 4. Row-number joins are checked against the questions; unanswered gold is noted ------------------------------

DOC_GOLD = {
    "data": [
        {"questionId": 1, "question": "What is the date?", "answers": ["1968"]},
        {"questionId": 2, "question": "Who signed it?", "answers": ["Smith"]},
        {"questionId": 3, "question": "What is the total?", "answers": ["12"]},
    ]
}


def test_rows_joined_by_row_number_must_ask_the_gold_question(tmp_path: Path) -> None:
    from vqaudit.shortanswer.join import join_predictions
    from vqaudit.shortanswer.loaders import load_docvqa

    gold_path = tmp_path / "val.json"
    gold_path.write_text(json.dumps(DOC_GOLD), encoding="utf-8")
    gold = load_docvqa(gold_path)
    # no id column, rows shuffled: row 1 asks gold question 2. Before: joined to questionId 1 silently.
    shuffled = read_predictions(
        _lines(
            tmp_path / "p.jsonl",
            {"question": "Who signed it?", "response": "Smith"},
            {"question": "What is the date?", "response": "1968"},
        )
    )
    with pytest.raises(
        VqauditError,
        match=r"p\.jsonl: row 1, field 'question': joined by its row number to gold "
        r"id '1' \(.*val\.json: row 1\), but the questions differ \('Who signed it\?' vs 'What is the "
        r"date\?'\)",
    ):
        join_predictions(shuffled, gold, benchmark="docvqa")
    # in the gold's order: joined, with a note saying row numbers were used; gold 3 unanswered is noted too
    ordered = read_predictions(
        _lines(
            tmp_path / "q.jsonl",
            {"question": "What is the date?", "response": "1968"},
            {"question": "WHO signed  it?", "response": "Smith"},
        )
    )
    report = join_predictions(ordered, gold, benchmark="docvqa")
    assert [r.qid for r in report.rows] == ["1", "2"]
    assert report.notes == (
        "2 predictions have no id in the file: their row numbers were used as ids and joined to the gold ids of the "
        "same number (the question texts agree on the 2 joined rows that carry one)",
        "the scores average the 2 joined rows only: the gold has 3 questions, 1 of them without a prediction (ids "
        "in report.json, join.gold_without_predictions)",
    )
    # ids written by the file: no row-number note
    with_ids = read_predictions(
        _lines(tmp_path / "r.jsonl", *[{"questionId": i, "prediction": "x"} for i in (1, 2, 3)])
    )
    assert join_predictions(with_ids, gold, benchmark="docvqa").notes == ()


# 11, 12. VLMEvalKit's ChartQA index; what the ids looked like when nothing joins ---------------------------------


def test_a_vlmevalkit_chartqa_sheet_joins_the_official_split_files(tmp_path: Path) -> None:
    from vqaudit.shortanswer.audit import run_audit
    from vqaudit.shortanswer.loaders import load_chartqa

    sheet = FIXTURES / "vila15_13b_chartqa_test.xlsx"
    # The fixture's test_human rows are index 1-1250, its test_augmented rows 1251-2500 (ChartQA_TEST numbers
    # over both splits). The fixture slice of test_human.json holds its rows 1-46 verbatim, then rows from
    # further on (row 47 of the slice is row 55 of the file: its question is the sheet's index 55).
    entries = json.loads((FIXTURES / "chartqa_test_human_slice.json").read_text(encoding="utf-8"))
    human = tmp_path / "test_human.json"
    human.write_text(json.dumps(entries[:46]), encoding="utf-8")
    result = run_audit(sheet, "chartqa", gold=human, variant="vlmevalkit")
    assert len(result.join.rows) == 46 and result.join.rows[0].qid == "test_human:1"
    assert result.join.notes[0].startswith("VLMEvalKit ChartQA_TEST index mapped to the split's rows")
    # hand check: row 1 of test_human.json is "How many food item is shown in the bar graph?" (label 14); the
    # sheet's index 1 asks it and answers "10"
    assert (result.join.rows[0].question, result.join.rows[0].answers, result.join.rows[0].prediction) == (
        "How many food item is shown in the bar graph?",
        ("14",),
        "10",
    )
    # the whole slice numbers row 55 as its row 47: the question check refuses it (sheet row 48 = index 47)
    human.write_text(json.dumps(entries), encoding="utf-8")
    with pytest.raises(
        VqauditError,
        match=r"vila15_13b_chartqa_test\.xlsx: row 48, field 'question': joined by its "
        r"VLMEvalKit index to gold id 'test_human:47'",
    ):
        run_audit(sheet, "chartqa", gold=human)
    # test_augmented: index 1251 is row 1 of test_augmented.json (hand-written sheet, VLMEvalKit's columns)
    aug = tmp_path / "test_augmented.json"
    aug.write_text(
        json.dumps(
            [
                {"imgname": "x.png", "query": "How many stores?", "label": "47"},
                {"imgname": "y.png", "query": "Which year?", "label": "2013"},
            ]
        ),
        encoding="utf-8",
    )
    table = tmp_path / "m_ChartQA_TEST.csv"
    table.write_text(
        "index,question,answer,split,prediction\n1251,How many stores?,47,test_augmented,47\n"
        "1252,Which year?,2013,test_augmented,2014\n1,Other,3,test_human,3\n",
        encoding="utf-8",
    )
    joined = run_audit(table, "chartqa", gold=aug, fmt="vlmevalkit").join
    assert [(r.qid, r.prediction) for r in joined.rows] == [("test_augmented:1", "47"), ("test_augmented:2", "2014")]
    assert joined.predictions_without_gold == ("test_human:1",)
    # an index whose question is not the gold row's is refused, never joined
    table.write_text(
        "index,question,answer,split,prediction\n1252,How many stores?,47,test_augmented,47\n", encoding="utf-8"
    )
    with pytest.raises(
        VqauditError,
        match=r"m_ChartQA_TEST\.csv: row 2, field 'question': joined by its "
        "VLMEvalKit index to gold id 'test_augmented:2'",
    ):
        run_audit(table, "chartqa", gold=aug, fmt="vlmevalkit")
    assert load_chartqa(aug)[0].qid == "test_augmented:1"


@pytest.mark.parametrize(
    ("pred_id", "gold_name", "hint"),
    [
        (
            34602.0,
            "tv",
            r"prediction ids look like '34602\.0' \(.*p\.jsonl: row 1\), gold ids like '34602' "
            r"\(.*gold\.json: row 1\); the prediction ids are written as decimals",
        ),
        (
            "test_augmented:1",
            "test_human.json",
            r"prediction ids look like 'test_augmented:1'.*gold ids like "
            r"'test_human:1'.*the predictions are ChartQA's test_augmented split and the gold file holds test_human",
        ),
        (
            1,
            "test_human.json",
            r"prediction ids look like '1'.*gold ids like 'test_human:1'.*ChartQA gold ids are "
            r"<split>:<row>",
        ),
    ],
)
def test_when_no_id_joins_the_message_shows_both_ids(
    tmp_path: Path, pred_id: object, gold_name: str, hint: str
) -> None:
    from vqaudit.shortanswer.benchmarks import load_gold
    from vqaudit.shortanswer.join import join_predictions

    if gold_name == "tv":
        gold_path = tmp_path / "gold.json"
        gold_path.write_text(
            json.dumps({"data": [{"question_id": 34602, "question": "q", "image_id": "i", "answers": ["a"] * 10}]}),
            encoding="utf-8",
        )
        gold, bench = load_gold(gold_path, "textvqa"), "textvqa"
    else:
        gold_path = tmp_path / gold_name
        gold_path.write_text(json.dumps(CHART_ROWS), encoding="utf-8")
        gold, bench = load_gold(gold_path, "chartqa"), "chartqa"
    preds = read_predictions(_lines(tmp_path / "p.jsonl", {"question_id": pred_id, "prediction": "x"}))
    with pytest.raises(VqauditError, match=rf"no prediction id is a gold id: {hint}"):
        join_predictions(preds, gold, benchmark=bench)


# 12, 13. Sheets: booleans, dates, other sheets; odd ids; LLaVA's repeated ids ------------------------------------

NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PKG = "http://schemas.openxmlformats.org/package/2006/relationships"


def _workbook(path: Path, rows: list[str], sheets: tuple[str, ...] = ("Sheet1",)) -> Path:
    """An .xlsx whose first sheet holds ``rows`` (raw <row> XML); style 1 is Excel's built-in date format 14
    (ECMA-376 §18.8.30: "mm-dd-yy"), as Excel writes a typed-in date."""
    import zipfile

    listed = "".join(f'<sheet name="{n}" sheetId="{i}" r:id="rId{i}"/>' for i, n in enumerate(sheets, start=1))
    rels = "".join(
        f'<Relationship Id="rId{i}" Type="{REL}/worksheet" Target="worksheets/sheet{i}.xml"/>'
        for i in range(1, len(sheets) + 1)
    )
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(
            "xl/workbook.xml", f'<workbook xmlns="{NS}" xmlns:r="{REL}"><sheets>{listed}</sheets></workbook>'
        )
        archive.writestr("xl/_rels/workbook.xml.rels", f'<Relationships xmlns="{PKG}">{rels}</Relationships>')
        archive.writestr(
            "xl/styles.xml",
            f'<styleSheet xmlns="{NS}"><cellXfs count="2"><xf numFmtId="0"/>'
            '<xf numFmtId="14" applyNumberFormat="1"/></cellXfs></styleSheet>',
        )
        for i in range(1, len(sheets) + 1):
            body = "".join(rows) if i == 1 else '<row r="1"><c r="A1" t="inlineStr"><is><t>x</t></is></c></row>'
            archive.writestr(
                f"xl/worksheets/sheet{i}.xml", f'<worksheet xmlns="{NS}"><sheetData>{body}</sheetData></worksheet>'
            )
    return path


def _text(ref: str, value: str) -> str:
    return f'<c r="{ref}" t="inlineStr"><is><t>{value}</t></is></c>'


HEAD = f'<row r="1">{_text("A1", "index")}{_text("B1", "answer")}{_text("C1", "prediction")}</row>'


def test_sheet_booleans_and_dates_are_refused_like_json_booleans(tmp_path: Path) -> None:
    from vqaudit.xlsx import XlsxDate, read_xlsx_cells, read_xlsx_rows

    # A TRUE cell (t="b"): before, the prediction "True"; JSON true was already refused (docs "Inputs").
    boolean = _workbook(
        tmp_path / "b.xlsx",
        [HEAD, f'<row r="2">{_text("A2", "1")}{_text("B2", "Yes")}<c r="C2" t="b"><v>1</v></c></row>'],
    )
    with pytest.raises(
        VqauditError,
        match=r"b\.xlsx: row 2, field 'prediction': expected text, got the boolean "
        "true",
    ):
        read_predictions(boolean)
    # A date typed into a cell (the number 43832 in date format 14 = 2020-01-02): before, the prediction "43832".
    date = _workbook(
        tmp_path / "d.xlsx",
        [HEAD, f'<row r="2">{_text("A2", "1")}{_text("B2", "2020")}<c r="C2" s="1"><v>43832</v></c></row>'],
    )
    with pytest.raises(
        VqauditError,
        match=r"d\.xlsx: row 2, field 'prediction': expected text, got a date cell "
        r"\(serial number 43832",
    ):
        read_predictions(date)
    assert read_xlsx_cells(date)[1][2] == XlsxDate("43832")
    assert read_xlsx_rows(date)[1][2] == "43832" and read_xlsx_rows(boolean)[1][2] == "True"  # text API unchanged
    # the same number without a date style stays the number's text
    plain = _workbook(
        tmp_path / "n.xlsx",
        [HEAD, f'<row r="2">{_text("A2", "1")}{_text("B2", "2020")}<c r="C2"><v>43832</v></c></row>'],
    )
    assert read_predictions(plain)[0].prediction == "43832"


def test_a_sheet_without_predictions_says_only_the_first_sheet_is_read(tmp_path: Path) -> None:
    book = _workbook(tmp_path / "two.xlsx", [f'<row r="1">{_text("A1", "note")}</row>'], ("Summary", "Predictions"))
    with pytest.raises(
        VqauditError,
        match=r"two\.xlsx: row 1, field 'prediction': missing .*only the first of the "
        r"workbook's 2 sheets, 'Summary', is read; the others are 'Predictions'",
    ):
        read_predictions(book)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, "expected a string or integer id, got the boolean true"),
        ("", "the id is empty text"),
        ("  ", "the id is empty text"),
        ([1], "expected a string or integer id, got a JSON list"),
        ({"a": 1}, "expected a string or integer id, got a JSON object"),
    ],
)
def test_odd_ids_are_refused(tmp_path: Path, value: object, message: str) -> None:
    # Before: true became the id "True" and "" an id of its own; lists read "got list".
    path = _lines(
        tmp_path / "p.jsonl", {"question_id": 1, "prediction": "a"}, {"question_id": value, "prediction": "b"}
    )
    with pytest.raises(VqauditError, match=rf"p\.jsonl: row 2, field 'question_id': {message}"):
        read_predictions(path)


def test_prediction_types_are_named_as_json_names_them(tmp_path: Path) -> None:
    for value, kind in (([1], "a JSON list"), ({"a": 1}, "a JSON object")):
        path = _lines(tmp_path / "p.jsonl", {"question_id": 1, "prediction": value})
        with pytest.raises(VqauditError, match=rf"row 1, field 'prediction': expected text, got {kind}$"):
            read_predictions(path)


def test_llava_answer_files_with_repeated_ids_get_the_flags_that_read_them(tmp_path: Path) -> None:
    # LLaVA's answers/*.jsonl: question_id is the image id, repeated per question (docs/shortanswer.md names
    # the flags that read them).
    llava = _lines(
        tmp_path / "answers.jsonl",
        {"question_id": "003a", "prompt": "What brand?\nAnswer briefly.", "text": "Dakota"},
        {"question_id": "003a", "prompt": "What year?\nAnswer briefly.", "text": "2014"},
    )
    with pytest.raises(
        VqauditError,
        match=r"answers\.jsonl: row 2, field 'question_id': duplicate id '003a' \(first "
        r"at row 1\); LLaVA's answer files repeat the image id as 'question_id': read them with "
        "--id-field row --image-field question_id --join-on image-question",
    ):
        read_predictions(llava)
    assert [p.qid for p in read_predictions(llava, id_field="row", image_field="question_id")] == ["1", "2"]
    other = _lines(tmp_path / "p.jsonl", {"question_id": 1, "prediction": "a"}, {"question_id": 1, "prediction": "b"})
    with pytest.raises(VqauditError, match=r"duplicate id '1' \(first at row 1\)$"):
        read_predictions(other)


def test_a_gzip_compressed_sheet_reads_as_the_sheet(tmp_path: Path) -> None:
    # vila15_13b_chartqa_test.xlsx gzip-compressed: before, "not a readable .xlsx workbook: File is not a zip file"
    sheet = FIXTURES / "vila15_13b_chartqa_test.xlsx"
    packed = tmp_path / "vila.xlsx.gz"
    packed.write_bytes(gzip.compress(sheet.read_bytes()))
    assert read_predictions(packed) == [
        p.__class__(**{**p.__dict__, "source": p.source.replace(str(sheet), str(packed))})
        for p in read_predictions(sheet)
    ]
    cut = tmp_path / "cut.xlsx.gz"
    cut.write_bytes(packed.read_bytes()[:1000])
    with pytest.raises(VqauditError, match=r"cut\.xlsx\.gz: not a readable gzip file"):
        read_predictions(cut)


# Formula and error cells of a sheet -------------------------------------------------------------------------------


def _sheet_with_cell(path: Path, cell_xml: str) -> Path:
    """A VLMEvalKit-like sheet (index, question, answer, prediction) whose row 3 prediction cell is ``cell_xml``."""
    import re
    import zipfile

    from upd.helpers import write_xlsx

    plain = path.with_name("plain.xlsx")
    write_xlsx(plain, ["index", "question", "answer", "prediction"], [[1, "q1?", "2", "2"], [2, "q2?", "2", "@@"]])
    with zipfile.ZipFile(plain) as src, zipfile.ZipFile(path, "w") as out:
        for name in src.namelist():
            data = src.read(name).decode("utf-8")
            if name == "xl/worksheets/sheet1.xml":
                data = re.sub(r'<c r="D3" t="inlineStr"><is><t>@@</t></is></c>', cell_xml, data)
                assert cell_xml in data
            out.writestr(name, data)
    return path


@pytest.mark.parametrize(
    ("cell", "said"),
    [
        # openpyxl writes "=1+1" as a formula with no cached <v>: it was read as an empty prediction, scored wrong.
        ('<c r="D3"><f>1+1</f></c>', "a cell that is a formula saved without its result"),
        ('<c r="D3" t="str"><f>A1&amp;""</f></c>', "a cell that is a formula saved without its result"),
        # an error cell was read as the text "#DIV/0!" and scored as the model's answer
        ('<c r="D3" t="e"><f>1/0</f><v>#DIV/0!</v></c>', "a cell that holds the spreadsheet error #DIV/0!"),
    ],
)
def test_formula_cells_without_a_value_and_error_cells_are_refused(tmp_path: Path, cell: str, said: str) -> None:
    sheet = _sheet_with_cell(tmp_path / "s.xlsx", cell)
    with pytest.raises(VqauditError, match=rf"s\.xlsx: row 3, field 'prediction': expected text, got {said}"):
        read_predictions(sheet)


def test_a_formula_with_its_stored_result_reads_as_that_result(tmp_path: Path) -> None:
    # What a spreadsheet program saves: the formula and its computed value, which is what it shows.
    sheet = _sheet_with_cell(tmp_path / "s.xlsx", '<c r="D3"><f>1+1</f><v>2</v></c>')
    assert [p.prediction for p in read_predictions(sheet)] == ["2", "2"]
