"""Export to VLMEvalKit, lmms-eval and inspect_ai, and import their prediction logs (docs/harnesses/*.md).

The round trip: replies written in each harness's own output format (tests/harness/helpers.py, shapes taken
from the harnesses' sources) and imported must score exactly as ``replay:`` of the same replies scores them
(same metrics.json bytes, same outcomes). The exports must carry the benchmark's image bytes (same SHA-256)
and vqaudit's own prompts.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness import helpers
from vqaudit.cli import app
from vqaudit.errors import VqauditError
from vqaudit.files import sha256_bytes
from vqaudit.harness import export_benchmark, import_predictions
from vqaudit.prompts.upd import INSTRUCTION
from vqaudit.run import load_responses, run_benchmark
from vqaudit.score import score_run
from vqaudit.store import RunFolder, load_benchmark
from vqaudit.suites.registry import prompt_for

DRAWS = 200
TRICKY = 'a\ttab, "quotes", a\nnewline, é, 数'  # TSV/CSV/JSON quoting must keep it as it is


def synth_replies(bench_dir: Path) -> dict[str, str]:
    """A mix of right, wrong, abstaining and invalid replies, deterministic per view."""
    out: dict[str, str] = {}
    for i, view in enumerate(load_benchmark(bench_dir, check_images=False).views):
        ob = view.obligation
        if view.options:  # UPD: the gold letter / the abstention option / a fixed letter / a refusal
            out[view.view_id] = [ob.gold[0] if ob.gold else "None of the above", "A", "I cannot answer."][i % 3]
            continue
        right = (
            json.dumps({"answerable": True, "answer": ob.gold[0], "reason": TRICKY})
            if ob.gold
            else json.dumps({"answerable": False, "answer": None, "reason": TRICKY})
        )
        out[view.view_id] = [
            right,
            json.dumps({"answerable": True, "answer": "0", "reason": "guess"}),
            json.dumps({"answerable": False, "answer": None, "reason": "hidden"}),
            "no JSON here",
        ][i % 4]
    return out


@pytest.fixture(scope="module")
def charts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from vqaudit.suites.charts.build import build_charts

    out = tmp_path_factory.mktemp("harness-charts") / "bench"
    build_charts(out, 3, 0, workers=1)
    return out


@pytest.fixture(scope="module")
def upd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from vqaudit.suites.registry import hooks

    out = tmp_path_factory.mktemp("harness-upd") / "bench"
    source = hooks("upd")
    source.build(out, source.Options(max_items=2, seed=0), workers=1, on_group=lambda _n: None)
    return out


def replay_run(bench: Path, replies: dict[str, str], root: Path) -> Path:
    replay = root / "replies.jsonl"
    replay.write_text(
        "".join(json.dumps({"view_id": k, "text": v}) + "\n" for k, v in replies.items()), encoding="utf-8"
    )
    run_benchmark(bench, f"replay:{replay}", root / "replay-run", progress=False)
    score_run(root / "replay-run", n_draws=DRAWS)
    return root / "replay-run"


WRITERS = {
    "vlmevalkit-tsv": ("vlmevalkit", "pred.tsv", helpers.write_vlmevalkit_tsv),
    "vlmevalkit-xlsx": ("vlmevalkit", "pred.xlsx", helpers.write_vlmevalkit_xlsx),
    "lmms-nested": ("lmms-eval", "samples.jsonl", helpers.write_lmms_nested),
    "lmms-flat": ("lmms-eval", "samples.jsonl", helpers.write_lmms_flat),
    "inspect-json": ("inspect", "log.json", helpers.write_inspect_json),
}


@pytest.mark.slow
@pytest.mark.parametrize("bench_name", ["charts", "upd"])
@pytest.mark.parametrize("writer", list(WRITERS))
def test_import_of_each_harness_format_scores_as_replay(
    request: pytest.FixtureRequest, tmp_path: Path, bench_name: str, writer: str
) -> None:
    bench: Path = request.getfixturevalue(bench_name)
    harness, file_name, write = WRITERS[writer]
    replies = synth_replies(bench)
    replay = replay_run(bench, replies, tmp_path)
    export_benchmark(bench, harness, tmp_path / "export")
    pred = write(tmp_path / "export", replies, tmp_path / file_name)
    summary = import_predictions(pred, bench, harness, tmp_path / "run")
    assert (summary.n_views, summary.n_replies, summary.missing) == (len(replies), len(replies), ())
    score_run(tmp_path / "run", n_draws=DRAWS)
    assert (tmp_path / "run" / "metrics.json").read_text() == (replay / "metrics.json").read_text()
    assert (tmp_path / "run" / "outcomes.jsonl").read_text() == (replay / "outcomes.jsonl").read_text()
    metrics = json.loads((replay / "metrics.json").read_text())[bench_name]
    if bench_name == "charts":  # the comparison is not vacuous: the replies are right, wrong and invalid
        assert 0 < metrics["decision_accuracy"] < 1 and metrics["invalid_rate"] == pytest.approx(3 / 15)
    info = RunFolder(tmp_path / "run").read_info()
    assert info.model == f"{harness}:{file_name}" and info.model_extra is not None
    assert info.model_extra["origin"]["harness"] == harness and info.model_extra["origin"]["n_rows"] == len(replies)
    assert {r.text for r in load_responses(tmp_path / "run").values()} == set(replies.values())


@pytest.mark.slow
@pytest.mark.parametrize("bench_name", ["charts", "upd"])
def test_exported_images_are_the_benchmark_bytes(
    request: pytest.FixtureRequest, tmp_path: Path, bench_name: str
) -> None:
    bench_dir: Path = request.getfixturevalue(bench_name)
    views = {v.view_id: v for v in load_benchmark(bench_dir).views}
    for harness in ("vlmevalkit", "lmms-eval", "inspect"):
        export_benchmark(bench_dir, harness, tmp_path / harness)
    seen: dict[str, dict[str, str]] = {"vlmevalkit": {}, "lmms-eval": {}, "inspect": {}}
    for tsv in (tmp_path / "vlmevalkit").glob("*.tsv"):
        for row in helpers.read_tsv(tsv):
            seen["vlmevalkit"][row["view_id"]] = sha256_bytes(base64.b64decode(row["image"], validate=True))
    for doc in helpers.lmms_docs(tmp_path / "lmms-eval"):
        seen["lmms-eval"][str(doc["view_id"])] = sha256_bytes(
            (tmp_path / "lmms-eval/images" / str(doc["image"])).read_bytes()
        )
    for sample in helpers.inspect_samples(tmp_path / "inspect"):
        url = sample["input"][0]["content"][0]["image"]  # type: ignore[index]
        head, _, data = url.partition(",")
        assert head.startswith("data:image/") and head.endswith(";base64")
        seen["inspect"][str(sample["id"])] = sha256_bytes(base64.b64decode(data, validate=True))
    for harness, hashes in seen.items():
        assert hashes == {k: v.image_sha256 for k, v in views.items()}, harness


@pytest.mark.slow
def test_exports_ask_with_vqaudits_prompts(tmp_path: Path, charts: Path, upd: Path) -> None:
    for bench_dir in (charts, upd):
        views = load_benchmark(bench_dir).views
        export_benchmark(bench_dir, "lmms-eval", tmp_path / bench_dir.parent.name / "lmms")
        export_benchmark(bench_dir, "inspect", tmp_path / bench_dir.parent.name / "inspect")
        docs = helpers.lmms_docs(tmp_path / bench_dir.parent.name / "lmms")
        samples = helpers.inspect_samples(tmp_path / bench_dir.parent.name / "inspect")
        for i, view in enumerate(views):
            assert docs[i]["view_id"] == view.view_id and docs[i]["index"] == i
            assert docs[i]["prompt"] == prompt_for(view)[1]
            assert samples[i]["input"][0]["content"][1] == {"type": "text", "text": prompt_for(view)[1]}  # type: ignore[index]
    export_benchmark(charts, "vlmevalkit", tmp_path / "vc")
    rows = helpers.read_tsv(tmp_path / "vc" / "vqaudit_charts.tsv")
    assert [r["question"] for r in rows] == [prompt_for(v)[1] for v in load_benchmark(charts).views]
    assert [r["index"] for r in rows] == [str(i) for i in range(len(rows))]
    export_benchmark(upd, "vlmevalkit", tmp_path / "vu", name="my_upd")
    assert sorted(p.name for p in (tmp_path / "vu").iterdir()) == ["README.md", "my_upd_MCQ.tsv"]
    by_id = {v.view_id: v for v in load_benchmark(upd).views}
    for row in helpers.read_tsv(tmp_path / "vu" / "my_upd_MCQ.tsv"):
        view = by_id[row["view_id"]]
        assert [row[k] for k in "ABCDEFGHIJ"[: len(view.options)]] == list(view.options)
        assert all(row[k] == "" for k in "ABCDEFGHIJ"[len(view.options) :] if k in row)
        # VLMEvalKit writes hint, question and options itself: the question cell keeps only the setting line
        setting, variant = view.meta["setting"], view.meta["variant"]
        expected = {"base": view.question, "instruction": f"{view.question}\n{INSTRUCTION[variant]}"}.get(
            setting, f"{view.question}\nAnswer with the option's letter from the given choices directly."
        )
        assert row["question"] == expected


# --- hostile logs, on a tiny hand-written benchmark (fast) -------------------------------------------------------


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return helpers.write_tiny_benchmark(tmp_path / "tiny")


def _tiny_replies(bench: Path) -> dict[str, str]:
    return {v.view_id: f"reply {v.view_id}" for v in load_benchmark(bench).views}


def test_a_view_without_a_prediction_is_recorded_and_reported_never_dropped(tmp_path: Path, tiny: Path) -> None:
    export_benchmark(tiny, "lmms-eval", tmp_path / "ex")
    pred = helpers.write_lmms_flat(tmp_path / "ex", _tiny_replies(tiny), tmp_path / "s.jsonl", keep=lambda i: i != 4)
    result = CliRunner().invoke(
        app,
        [
            "import-predictions",
            str(pred),
            "--bench",
            str(tiny),
            "--format",
            "lmms-eval",
            "--out",
            str(tmp_path / "run"),
        ],
    )
    assert result.exit_code == 1  # like a run that ends with recorded errors
    assert "g1-v1" in result.output
    info = RunFolder(tmp_path / "run").read_info()
    assert info.model_extra is not None and info.model_extra["origin"]["missing_view_ids"] == ["g1-v1"]
    assert info.n_errors == 1
    responses = load_responses(tmp_path / "run")
    assert len(responses) == 6 and responses["g1-v1"].text is None and "no prediction" in str(responses["g1-v1"].error)
    score_run(tmp_path / "run", n_draws=10)  # scores like any run: the missing view is a failure
    outcomes = [json.loads(line) for line in (tmp_path / "run" / "outcomes.jsonl").read_text().splitlines()]
    missing = next(o for o in outcomes if o["view_id"] == "g1-v1")
    assert missing["decision"] == "invalid" and missing["task_correct"] is False and missing["error"]


def test_a_row_for_a_view_the_benchmark_lacks_is_refused(tmp_path: Path, tiny: Path) -> None:
    export_benchmark(tiny, "inspect", tmp_path / "ex")
    replies = _tiny_replies(tiny)
    log = helpers.write_inspect_json(tmp_path / "ex", replies, tmp_path / "log.json")
    data = json.loads(log.read_text())
    data["samples"][1]["id"] = "g9-v9"
    log.write_text(json.dumps(data))
    with pytest.raises(VqauditError, match=r"log\.json: row 2, field 'id': 'g9-v9' is not a view"):
        import_predictions(log, tiny, "inspect", tmp_path / "run")
    assert not (tmp_path / "run").exists()  # nothing half-written


def test_two_rows_for_one_view_are_refused(tmp_path: Path, tiny: Path) -> None:
    export_benchmark(tiny, "vlmevalkit", tmp_path / "ex")
    header, rows = helpers.vlmevalkit_rows(tmp_path / "ex", _tiny_replies(tiny))
    pred = helpers.write_table(tmp_path / "p.tsv", header, [*rows, rows[2]])
    with pytest.raises(VqauditError, match=r"p\.tsv: row 8: a second prediction for view 'g0-v2' \(the first is row 4"):
        import_predictions(pred, tiny, "vlmevalkit", tmp_path / "run")


def test_vlmevalkit_rows_map_by_index_and_a_disagreeing_index_is_refused(tmp_path: Path, tiny: Path) -> None:
    export_benchmark(tiny, "vlmevalkit", tmp_path / "ex")
    replies = _tiny_replies(tiny)
    header, rows = helpers.vlmevalkit_rows(tmp_path / "ex", replies)
    keep = [header.index("index"), header.index("prediction")]
    only_index = helpers.write_table(
        tmp_path / "only_index.csv", [header[i] for i in keep], [[r[i] for i in keep] for r in rows]
    )
    import_predictions(only_index, tiny, "vlmevalkit", tmp_path / "run")
    assert {k: r.text for k, r in load_responses(tmp_path / "run").items()} == replies
    rows[2][header.index("index")] = "5"
    bad = helpers.write_table(tmp_path / "bad.tsv", header, rows)
    with pytest.raises(VqauditError, match=r"bad\.tsv: row 4, field 'index': 5 is view 'g1-v2', not 'g0-v2'"):
        import_predictions(bad, tiny, "vlmevalkit", tmp_path / "run2")
    rows[2][header.index("index")] = "-1"
    helpers.write_table(bad, header, rows)
    with pytest.raises(VqauditError, match="field 'index': expected a nonnegative integer"):
        import_predictions(bad, tiny, "vlmevalkit", tmp_path / "run3")


def test_lmms_doc_id_must_agree_with_the_view_the_sample_names(tmp_path: Path, tiny: Path) -> None:
    export_benchmark(tiny, "lmms-eval", tmp_path / "ex")
    pred = helpers.write_lmms_nested(tmp_path / "ex", _tiny_replies(tiny), tmp_path / "s.jsonl")
    lines = [json.loads(line) for line in pred.read_text().splitlines()]
    lines[0]["doc_id"] = 1
    pred.write_text("".join(json.dumps(r) + "\n" for r in lines))
    with pytest.raises(VqauditError, match=r"row 1, field 'doc_id': 1 is view 'g0-v1', but the sample names 'g0-v0'"):
        import_predictions(pred, tiny, "lmms-eval", tmp_path / "run")
    lines[0]["doc_id"], lines[0]["filtered_resps"] = 0, []
    pred.write_text("".join(json.dumps(r) + "\n" for r in lines))
    with pytest.raises(VqauditError, match=r"row 1, field 'filtered_resps': an empty list"):
        import_predictions(pred, tiny, "lmms-eval", tmp_path / "run")
    lines[0]["filtered_resps"] = [{"text": "x"}]
    pred.write_text("".join(json.dumps(r) + "\n" for r in lines))
    with pytest.raises(VqauditError, match=r"row 1, field 'filtered_resps': expected the reply text, got dict"):
        import_predictions(pred, tiny, "lmms-eval", tmp_path / "run")
    (tmp_path / "logs.json").write_text(json.dumps({"logs": [{"doc_id": 0, "resps": [["only resps"]]}]}))
    import_predictions(tmp_path / "logs.json", tiny, "lmms-eval", tmp_path / "run")  # older JSON: {"logs": [...]}
    assert load_responses(tmp_path / "run")["g0-v0"].text == "only resps"


def test_inspect_several_epochs_are_refused_and_a_sample_error_is_recorded(tmp_path: Path, tiny: Path) -> None:
    export_benchmark(tiny, "inspect", tmp_path / "ex")
    replies: dict[str, str | None] = dict(_tiny_replies(tiny))
    log = helpers.write_inspect_json(tmp_path / "ex", replies, tmp_path / "two.json", epochs=2)
    with pytest.raises(VqauditError, match=r"row 7, field 'epoch': 2; .* --epochs 1"):
        import_predictions(log, tiny, "inspect", tmp_path / "run")
    replies["g0-v1"] = None
    log = helpers.write_inspect_json(tmp_path / "ex", replies, tmp_path / "one.json")
    summary = import_predictions(log, tiny, "inspect", tmp_path / "run")
    assert (summary.n_replies, summary.n_errors, summary.missing) == (5, 1, ())
    assert load_responses(tmp_path / "run")["g0-v1"].error == "inspect_ai: RuntimeError: boom"


def test_export_refuses_a_used_folder_a_bad_name_and_an_edited_benchmark(tmp_path: Path, tiny: Path) -> None:
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "x").write_text("x")
    with pytest.raises(VqauditError, match="not empty"):
        export_benchmark(tiny, "inspect", tmp_path / "used")
    with pytest.raises(VqauditError, match="--name 'a-b'"):
        export_benchmark(tiny, "inspect", tmp_path / "new", name="a-b")
    with pytest.raises(VqauditError, match="unknown harness 'helm'"):
        export_benchmark(tiny, "helm", tmp_path / "new")
    (tiny / "images" / "g0-v0.png").write_bytes(helpers.tiny_png(99))
    with pytest.raises(VqauditError, match="image_sha256"):
        export_benchmark(tiny, "vlmevalkit", tmp_path / "new")
    assert not (tmp_path / "new").exists()


def test_unreadable_prediction_files_name_the_file(tmp_path: Path, tiny: Path) -> None:
    with pytest.raises(VqauditError, match="file not found"):
        import_predictions(tmp_path / "none.jsonl", tiny, "lmms-eval", tmp_path / "run")
    (tmp_path / "p.json").write_text("[1, 2")
    with pytest.raises(VqauditError, match=r"p\.json: not valid JSON"):
        import_predictions(tmp_path / "p.json", tiny, "lmms-eval", tmp_path / "run")
    (tmp_path / "p.xls").write_text("x")
    with pytest.raises(VqauditError, match=r"a VLMEvalKit result sheet is \.xlsx, \.tsv, \.csv"):
        import_predictions(tmp_path / "p.xls", tiny, "vlmevalkit", tmp_path / "run")
    (tmp_path / "p.tsv").write_text("index\tanswer\n0\t1\n")
    with pytest.raises(VqauditError, match="no 'prediction' column"):
        import_predictions(tmp_path / "p.tsv", tiny, "vlmevalkit", tmp_path / "run")
    (tmp_path / "p.xlsx").write_bytes(b"not a zip")
    with pytest.raises(VqauditError, match=r"p\.xlsx"):
        import_predictions(tmp_path / "p.xlsx", tiny, "vlmevalkit", tmp_path / "run")


# --- the exports load as the harnesses load them (their loaders' own calls, the harnesses not installed) ---------


def _load_task_yaml(path: Path) -> dict[str, object]:
    """lmms-eval's ``utils.load_yaml_config``: YAML with ``!function module.name`` resolved beside the file."""
    import importlib.util

    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def function(loader: yaml.SafeLoader, node: yaml.Node) -> object:
        module_name, _, name = str(loader.construct_scalar(node)).rpartition(".")  # type: ignore[arg-type]
        spec = importlib.util.spec_from_file_location(module_name, path.parent / f"{module_name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return getattr(module, name)

    Loader.add_constructor("!function", function)
    loaded: dict[str, object] = yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)  # noqa: S506
    return loaded


def test_the_lmms_task_loads_and_its_hooks_give_vqaudits_inputs(tmp_path: Path, tiny: Path) -> None:
    from PIL import Image

    export_benchmark(tiny, "lmms-eval", tmp_path / "ex")
    config = _load_task_yaml(tmp_path / "ex" / "vqaudit_charts.yaml")
    assert config["dataset_path"] == "json" and config["test_split"] == "test"
    assert config["dataset_kwargs"] == {
        "data_files": {"test": str((tmp_path / "ex" / "vqaudit_charts.jsonl").resolve())}
    }
    assert config["output_type"] == "generate_until"
    assert config["generation_kwargs"] == {
        "max_new_tokens": 512,
        "temperature": 0,
        "do_sample": False,
        "until": ["<|vqaudit-no-stop|>"],
    }
    bench = load_benchmark(tiny)
    for doc, view in zip(helpers.lmms_docs(tmp_path / "ex"), bench.views, strict=True):
        (image,) = config["doc_to_visual"](doc)  # type: ignore[operator]
        with Image.open(bench.image_path(view)) as original:
            assert image.mode == "RGB" and image.tobytes() == original.convert("RGB").tobytes()
        assert config["doc_to_text"](doc, None) == prompt_for(view)[1]  # type: ignore[operator]
        assert config["doc_to_target"](doc) == view.view_id  # type: ignore[operator]
    process = config["process_results"]
    assert process({}, ["  a reply "]) == {"replied": 1.0} and process({}, [" "]) == {"replied": 0.0}  # type: ignore[operator]


@pytest.mark.slow
def test_vlmevalkit_reads_the_tsv_as_the_exported_values(tmp_path: Path, charts: Path, upd: Path) -> None:
    import pandas as pd  # VLMEvalKit's load() of a .tsv is pd.read_csv(f, sep='\t')

    export_benchmark(charts, "vlmevalkit", tmp_path / "c")
    export_benchmark(upd, "vlmevalkit", tmp_path / "u")
    vqa = pd.read_csv(tmp_path / "c" / "vqaudit_charts.tsv", sep="\t")
    assert not ("A" in vqa and "B" in vqa)  # a custom VQA dataset: the question is sent as it is
    assert vqa["index"].dtype.kind == "i" and list(vqa["question"]) == [
        prompt_for(v)[1] for v in load_benchmark(charts).views
    ]
    mcq = pd.read_csv(tmp_path / "u" / "vqaudit_upd_MCQ.tsv", sep="\t")
    assert "A" in mcq and "B" in mcq and mcq["index"].dtype.kind == "i"  # a custom MCQ dataset
    for (_, row), view in zip(mcq.iterrows(), load_benchmark(upd).views, strict=True):
        options = [row[k] for k in "ABCDEFGHIJ" if k in row and not pd.isna(row[k])]  # what build_prompt lists
        assert options == list(view.options) and row["view_id"] == view.view_id


@pytest.mark.parametrize(
    ("harness", "said"),
    [
        ("vlmevalkit", "re-encode every image as JPEG"),
        ("lmms-eval", "as PNG (lossless)"),
        ("inspect", "the file's bytes as they are"),
    ],
)
def test_export_prints_what_the_harness_does_to_the_images(tmp_path: Path, tiny: Path, harness: str, said: str) -> None:
    # VLMEvalKit's API models send every image as Pillow's default JPEG (vlmeval/smp/vlm.py
    # encode_image_to_base64, fmt='JPEG'; benchmarks/bench_jpeg.py: 34 of 50 chart-reader replies change);
    # lmms-eval's openai model sends PNG (models/chat/openai.py, LMMS_IMAGE_ENCODE_FORMAT default "PNG");
    # inspect_ai sends the data URL's bytes unchanged (tests/harness/test_inspect_real.py: the server's replies,
    # keyed by each image's SHA-256, score exactly as the replay of the same replies).
    from vqaudit.harness.formats import HARNESSES

    result = CliRunner().invoke(app, ["export", str(tiny), "--to", harness, "--out", str(tmp_path / "ex")])
    assert result.exit_code == 0, result.output
    line = f"images in {harness}: {HARNESSES[harness].images}"
    assert [text for text in result.output.splitlines() if text.startswith("images in ")] == [line]
    assert said in line
