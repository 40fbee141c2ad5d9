"""import-predictions refuses logs of another build of the benchmark and reads lmms-eval replies as lmms-eval does.

A new-user trial: a VLMEvalKit sheet whose option columns were swapped on every row (as a sheet exported from
another ``--seed`` of the same benchmark would be) was imported and its letters scored against this build's
options; an lmms-eval sample with ``"filtered_resps": null`` was imported as the empty reply; two replies for
one sample silently became the first; a JSON list saved as ``.jsonl`` failed on "row 1"; and ``vqaudit score``
said nothing about views that hold only a recorded error. The values asserted are the exported cells and
prompts themselves (written by ``vqaudit export``) and the hand-written replies of each log.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness import helpers
from vqaudit.cli import app
from vqaudit.errors import VqauditError
from vqaudit.harness import export_benchmark, import_predictions
from vqaudit.run import load_responses
from vqaudit.store import load_benchmark


@pytest.fixture(scope="module")
def upd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from vqaudit.suites.registry import hooks

    out = tmp_path_factory.mktemp("import-checks-upd") / "bench"
    source = hooks("upd")
    source.build(out, source.Options(max_items=2, seed=0), workers=1, on_group=lambda _n: None)
    return out


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return helpers.write_tiny_benchmark(tmp_path / "tiny")


def _replies(bench: Path) -> dict[str, str]:
    return {v.view_id: "A" for v in load_benchmark(bench, check_images=False).views}


def _import(pred: Path, bench: Path, fmt: str, out: Path) -> tuple[int, str]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "vqaudit",
            "import-predictions",
            str(pred),
            "--bench",
            str(bench),
            "--format",
            fmt,
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    return done.returncode, done.stderr


@pytest.mark.slow
def test_a_vlmevalkit_sheet_with_swapped_options_or_another_question_is_refused(tmp_path: Path, upd: Path) -> None:
    export_benchmark(upd, "vlmevalkit", tmp_path / "ex")
    header, rows = helpers.vlmevalkit_rows(tmp_path / "ex", _replies(upd))
    a, b, question = header.index("A"), header.index("B"), header.index("question")
    exported = [list(r) for r in rows]
    for row in rows:  # every row's A and B swapped: its letters would mean the other option
        row[a], row[b] = row[b], row[a]
    pred = helpers.write_table(tmp_path / "swapped.tsv", header, rows)
    code, err = _import(pred, upd, "vlmevalkit", tmp_path / "run")
    assert code == 2 and len(err.strip().splitlines()) == 1
    # row 2 of the file (the first after the header) is the first view: its A cell holds the exported B
    assert err.startswith(f"error: {pred}: row 2, field 'A': ")
    assert "is not the benchmark's " in err and f"(view {exported[0][header.index('view_id')]!r})" in err
    assert exported[0][a] != exported[0][b] and repr(exported[0][b][:20])[1:-1] in err
    assert not (tmp_path / "run").exists()
    rows = [list(r) for r in exported]
    rows[3][question] += " (edited)"
    pred = helpers.write_table(tmp_path / "question.tsv", header, rows)
    with pytest.raises(VqauditError, match=r"question\.tsv: row 5, field 'question': .*another --seed"):
        import_predictions(pred, upd, "vlmevalkit", tmp_path / "run")


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".tsv", ".xlsx"])
def test_a_sheet_written_by_pandas_as_vlmevalkit_writes_it_is_accepted(tmp_path: Path, upd: Path, suffix: str) -> None:
    import pandas as pd  # vlmeval/inference.py: dataset.data (pd.read_csv of the TSV) minus image, plus prediction

    export_benchmark(upd, "vlmevalkit", tmp_path / "ex")
    data = pd.read_csv(tmp_path / "ex" / "vqaudit_upd_MCQ.tsv", sep="\t")
    data.pop("image")
    data["prediction"] = "B"
    pred = tmp_path / f"sheet{suffix}"
    if suffix == ".tsv":  # vlmeval/smp/file.py::dump: to_csv(sep='\t', quoting=QUOTE_ALL), else to_excel
        data.to_csv(pred, sep="\t", index=False, quoting=csv.QUOTE_ALL, encoding="utf-8")
    else:
        data.to_excel(pred, index=False, engine="xlsxwriter")
    summary = import_predictions(pred, upd, "vlmevalkit", tmp_path / "run")
    assert summary.n_replies == len(data) == len(load_benchmark(upd).views)
    assert {r.text for r in load_responses(tmp_path / "run").values()} == {"B"}


def test_the_two_rewrites_pandas_makes_are_not_differences() -> None:
    import pandas as pd

    from vqaudit.harness.common import same_text

    cells = ["None", "3", "NA", "a b", "3"]  # a hand-made row; column E holds only numbers and an empty cell
    sheet = io.StringIO()
    csv.writer(sheet, delimiter="\t", quoting=csv.QUOTE_ALL).writerows(
        [["A", "B", "C", "D", "E"], cells, ["x", "y", "z", "w", ""]]
    )
    frame = pd.read_csv(io.StringIO(sheet.getvalue()), sep="\t")  # E: float64 (3.0, NaN)
    back = io.StringIO()
    frame.to_csv(back, sep="\t", index=False, quoting=csv.QUOTE_ALL)
    got = list(csv.reader(io.StringIO(back.getvalue()), delimiter="\t"))[1]
    assert got == ["", "3", "", "a b", "3.0"]  # what pandas writes back for ["None", "3", "NA", "a b", "3"]
    assert all(same_text(g, w, pandas=True) for g, w in zip(got, cells, strict=True))
    assert [same_text(g, w) for g, w in zip(got, cells, strict=True)] == [False, True, False, True, False]
    assert not same_text("4", "3", pandas=True) and not same_text("", "x", pandas=True)
    assert not same_text("B", "A", pandas=True)


def test_an_lmms_sample_whose_prompt_is_not_the_views_is_refused(tmp_path: Path, tiny: Path) -> None:
    export_benchmark(tiny, "lmms-eval", tmp_path / "ex")
    pred = helpers.write_lmms_nested(tmp_path / "ex", _replies(tiny), tmp_path / "nested.jsonl")
    lines = [json.loads(line) for line in pred.read_text().splitlines()]
    prompt = str(lines[2]["doc"]["prompt"])
    lines[2]["doc"]["prompt"] = prompt.replace("bar 0", "bar 9")
    pred.write_text("".join(json.dumps(r) + "\n" for r in lines))
    code, err = _import(pred, tiny, "lmms-eval", tmp_path / "run")
    assert code == 2 and "nested.jsonl: row 3, field 'doc.prompt': " in err and "'g0-v2'" in err
    flat = helpers.write_lmms_flat(tmp_path / "ex", _replies(tiny), tmp_path / "flat.jsonl")
    lines = [json.loads(line) for line in flat.read_text().splitlines()]
    lines[4]["input"] = "What is bar 7?"
    flat.write_text("".join(json.dumps(r) + "\n" for r in lines))
    with pytest.raises(VqauditError, match=r"flat\.jsonl: row 5, field 'input': 'What is bar 7\?' is not"):
        import_predictions(flat, tiny, "lmms-eval", tmp_path / "run")
    # --system_instruction prefixes the context lmms-eval sends (fewshot_context): the prompt is still in it
    lines[4]["input"] = "Be brief.\n\n" + str(helpers.lmms_docs(tmp_path / "ex")[4]["prompt"])
    flat.write_text("".join(json.dumps(r) + "\n" for r in lines))
    assert import_predictions(flat, tiny, "lmms-eval", tmp_path / "run").n_replies == 6


def _flat(tmp_path: Path, tiny: Path, name: str, edit: dict[str, object]) -> Path:
    if not (tmp_path / "ex").exists():
        export_benchmark(tiny, "lmms-eval", tmp_path / "ex")
    pred = helpers.write_lmms_flat(tmp_path / "ex", _replies(tiny), tmp_path / name)
    lines = [json.loads(line) for line in pred.read_text().splitlines()]
    lines[0].update(edit)
    pred.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return pred


def test_lmms_null_filtered_resps_falls_back_to_resps_and_two_replies_are_refused(tmp_path: Path, tiny: Path) -> None:
    pred = _flat(tmp_path, tiny, "null.jsonl", {"filtered_resps": None, "resps": [["B"]]})
    import_predictions(pred, tiny, "lmms-eval", tmp_path / "run")
    assert load_responses(tmp_path / "run")["g0-v0"].text == "B"  # was '' before
    pred = _flat(tmp_path, tiny, "two.jsonl", {"filtered_resps": ["B", "A"]})
    with pytest.raises(VqauditError, match=r"two\.jsonl: row 1, field 'filtered_resps': 2 replies for one sample"):
        import_predictions(pred, tiny, "lmms-eval", tmp_path / "run2")
    pred = _flat(tmp_path, tiny, "nested-two.jsonl", {"filtered_resps": None, "resps": [["B", "A"]]})
    with pytest.raises(VqauditError, match=r"row 1, field 'resps': 2 replies for one sample"):
        import_predictions(pred, tiny, "lmms-eval", tmp_path / "run2")
    pred = _flat(tmp_path, tiny, "none.jsonl", {"filtered_resps": None})
    summary = import_predictions(pred, tiny, "lmms-eval", tmp_path / "run3")
    assert (summary.n_replies, summary.n_errors) == (5, 1)  # no reply logged: an error reply, not ''
    assert load_responses(tmp_path / "run3")["g0-v0"].text is None


def test_a_json_list_named_jsonl_is_read_as_the_list(tmp_path: Path, tiny: Path) -> None:
    export_benchmark(tiny, "lmms-eval", tmp_path / "ex")
    replies = {v.view_id: f"reply {v.view_id}" for v in load_benchmark(tiny).views}
    lines = helpers.write_lmms_flat(tmp_path / "ex", replies, tmp_path / "s.jsonl").read_text().splitlines()
    listed = tmp_path / "20260101_samples_vqaudit_charts.jsonl"
    listed.write_text(json.dumps([json.loads(line) for line in lines], indent=2))
    import_predictions(listed, tiny, "lmms-eval", tmp_path / "run")
    assert {k: r.text for k, r in load_responses(tmp_path / "run").items()} == replies
    listed.write_text(listed.read_text()[:-3])
    with pytest.raises(
        VqauditError,
        match=r"not valid JSON \(the file starts with '\[': one JSON list, not JSON "
        r"Lines\)",
    ):
        import_predictions(listed, tiny, "lmms-eval", tmp_path / "run2")


def test_score_warns_about_views_with_only_a_recorded_error(tmp_path: Path, tiny: Path) -> None:
    views = load_benchmark(tiny).views
    replay = tmp_path / "replies.jsonl"  # 4 of the 6 views answered: the replay backend records an error for 2
    replay.write_text("".join(json.dumps({"view_id": v.view_id, "text": "x"}) + "\n" for v in views[:4]))
    runner = CliRunner()
    run = runner.invoke(app, ["run", str(tiny), "--model", f"replay:{replay}", "--out", str(tmp_path / "run")])
    assert run.exit_code == 1
    scored = runner.invoke(app, ["score", str(tmp_path / "run"), "--draws", "10"])
    assert scored.exit_code == 0  # README: exit 1 is for a run that left errors, not for scoring it
    (line,) = [x for x in scored.stderr.splitlines() if x.startswith("warning:")]
    assert line.startswith(
        "warning: 2 of 6 views have no reply, only a recorded error (first: g1-v1); they are scored as failures"
    )
    assert f"--out {tmp_path / 'run'} --retry-errors" in line
    outcomes = [json.loads(x) for x in (tmp_path / "run" / "outcomes.jsonl").read_text().splitlines()]
    assert [o["view_id"] for o in outcomes if o["decision"] == "invalid" and o["error"]] == ["g1-v1", "g1-v2"]
    export_benchmark(tiny, "lmms-eval", tmp_path / "ex")
    pred = helpers.write_lmms_flat(tmp_path / "ex", _replies(tiny), tmp_path / "s.jsonl", keep=lambda i: i != 0)
    import_predictions(pred, tiny, "lmms-eval", tmp_path / "imported")
    scored = runner.invoke(app, ["score", str(tmp_path / "imported"), "--draws", "10"])
    assert scored.exit_code == 0 and "warning: 1 of 6 views have no reply" in scored.stderr
    assert "vqaudit import-predictions" in scored.stderr
    replay.write_text("".join(json.dumps({"view_id": v.view_id, "text": "x"}) + "\n" for v in views))
    assert (
        runner.invoke(app, ["run", str(tiny), "--model", f"replay:{replay}", "--out", str(tmp_path / "full")]).exit_code
        == 0
    )
    clean = runner.invoke(app, ["score", str(tmp_path / "full"), "--draws", "10"])
    assert clean.exit_code == 0 and "warning:" not in clean.stderr


def test_an_xlsx_sheet_given_as_an_lmms_eval_log_is_named_for_what_it_is(tmp_path: Path, tiny: Path) -> None:
    # A VLMEvalKit .xlsx given with --format lmms-eval once said "row 1: not valid JSON"; it is named for what it is.
    # An .xlsx is a zip archive: its first four bytes are the zip local-file signature "PK\x03\x04".
    import xlsxwriter

    sheet = tmp_path / "m_vqaudit_charts.xlsx"
    book = xlsxwriter.Workbook(str(sheet))
    book.add_worksheet().write_row(0, 0, ["index", "prediction"])
    book.close()
    assert sheet.read_bytes()[:4] == b"PK\x03\x04"
    with pytest.raises(
        VqauditError,
        match=r"m_vqaudit_charts\.xlsx: a zip archive \(an \.xlsx sheet\?\), not an "
        r"lmms-eval log of JSON samples; a VLMEvalKit result sheet is read with "
        r"--format vlmevalkit$",
    ):
        import_predictions(sheet, tiny, "lmms-eval", tmp_path / "run")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "name,content",
    [
        ("0-bytes.jsonl", ""),
        ("blank.jsonl", "\n  \n\n"),
        ("list.jsonl", "[]"),
        ("logs.jsonl", '{"logs": []}'),
        ("0-bytes.json", ""),
        ("list.json", "[ ]\n"),
        ("logs.json", '{\n  "logs": []\n}\n'),
    ],
)
def test_an_empty_lmms_eval_log_is_refused_and_writes_nothing(
    tmp_path: Path, tiny: Path, name: str, content: str
) -> None:
    # A log caught while lmms-eval is still starting (0 bytes, blank lines, [] or
    # {"logs": []}) made a run folder of 6 error replies, one per view, instead of being refused.
    pred = tmp_path / name
    pred.write_text(content)
    with pytest.raises(VqauditError, match=rf"^{pred}: no samples \(an empty lmms-eval log\)$"):
        import_predictions(pred, tiny, "lmms-eval", tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_the_cli_refuses_an_empty_log_with_one_line_and_exit_2(tmp_path: Path, tiny: Path) -> None:
    pred = tmp_path / "2026_samples_vqaudit_tiny.jsonl"
    pred.write_bytes(b"")
    code, stderr = _import(pred, tiny, "lmms-eval", tmp_path / "run")
    assert (code, stderr.strip().splitlines()) == (2, [f"error: {pred}: no samples (an empty lmms-eval log)"])
    assert not (tmp_path / "run").exists()


def test_an_empty_vlmevalkit_sheet_or_inspect_log_is_refused(tmp_path: Path, tiny: Path) -> None:
    # The same gap in the other two importers: a sheet of a header only, an inspect_ai log of no samples.
    export_benchmark(tiny, "vlmevalkit", tmp_path / "vx")
    header, _rows = helpers.vlmevalkit_rows(tmp_path / "vx", _replies(tiny))
    sheet = helpers.write_table(tmp_path / "header_only.tsv", header, [])
    with pytest.raises(VqauditError, match=r"header_only\.tsv: no data rows \(an empty VLMEvalKit result sheet"):
        import_predictions(sheet, tiny, "vlmevalkit", tmp_path / "run")
    log = tmp_path / "inspect.json"
    log.write_text(json.dumps({"status": "started", "samples": []}))
    with pytest.raises(VqauditError, match=r"inspect\.json: no samples \(an empty inspect_ai log\)$"):
        import_predictions(log, tiny, "inspect", tmp_path / "run")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("indent", [None, 2], ids=["one-line", "pretty-printed"])
def test_a_logs_object_named_jsonl_is_read_as_its_list(tmp_path: Path, tiny: Path, indent: int | None) -> None:
    # {"logs": [...]} saved as .jsonl once said "row 1: no 'doc.view_id', 'target' or 'doc_id'";
    # the same content named .json imported. Each view's reply is its own text, so a mix-up would show.
    export_benchmark(tiny, "lmms-eval", tmp_path / "ex")
    replies = {v.view_id: f"reply {v.view_id}" for v in load_benchmark(tiny).views}
    lines = helpers.write_lmms_flat(tmp_path / "ex", replies, tmp_path / "s.jsonl").read_text().splitlines()
    logs = tmp_path / "20260101_samples_vqaudit_tiny.jsonl"
    logs.write_text(json.dumps({"logs": [json.loads(line) for line in lines]}, indent=indent))
    import_predictions(logs, tiny, "lmms-eval", tmp_path / "run")
    assert {k: r.text for k, r in load_responses(tmp_path / "run").items()} == replies
