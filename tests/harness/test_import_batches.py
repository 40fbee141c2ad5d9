"""import-predictions streams: the run it writes is the same for any batch size, and its refusals are unchanged.

The import spools the log's rows and writes the responses in batches (``vqaudit.harness.import_run``) and reads
the benchmark's views through an index (``vqaudit.harness.view_index``). The values asserted: the rows a batch
of one writes are the rows of the default batch (every column but the write time), in ``views.jsonl`` order
(``created`` = 1, 2, ... as when each view was stored in turn); the missing view and the harness's null reply are
the hand-written log's; each benchmark refusal is the very message :func:`vqaudit.harness.common.open_benchmark`
(``load_benchmark``) gives for the same edited folder.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import helpers
from vqaudit.errors import VqauditError
from vqaudit.harness import export_benchmark, lmms_eval
from vqaudit.harness.common import open_benchmark
from vqaudit.harness.import_run import write_imported_run
from vqaudit.harness.view_index import open_view_index
from vqaudit.schema import View


def _log(tmp_path: Path, lines: list[dict[str, object]]) -> Path:
    log = tmp_path / "samples.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return log


def _sample(docs: list[dict[str, object]], doc_id: int, reply: str | None) -> dict[str, object]:
    return {
        "doc_id": doc_id,
        "target": docs[doc_id]["view_id"],
        "filtered_resps": reply,
        "input": docs[doc_id]["prompt"],
    }


def _import(bench: Path, log: Path, out: Path, batch: int | None = None) -> None:
    with open_view_index(bench) as views:
        rows = lmms_eval.predictions(log, views)
        if batch is None:
            write_imported_run(views, rows, pred_path=log, harness="lmms-eval", out=out)
        else:
            write_imported_run(views, rows, pred_path=log, harness="lmms-eval", out=out, batch=batch)


def _tables(run: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    with sqlite3.connect(run / "responses.sqlite") as conn:
        responses = conn.execute(
            "SELECT key, view_id, model, prompt_id, params, text, error, latency_s, created, reasoning, "
            "finish_reason, usage FROM responses ORDER BY rowid"
        ).fetchall()
        keys = conn.execute("SELECT rowid, view_id, key FROM view_keys ORDER BY rowid").fetchall()
    return responses, keys


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, object]]]:
    root = tmp_path_factory.mktemp("import-batches")
    bench = helpers.write_tiny_benchmark(root / "bench", n_groups=3)
    export_benchmark(bench, "lmms-eval", root / "export")
    return bench, helpers.lmms_docs(root / "export")


def test_a_batch_of_one_writes_the_rows_of_the_default_batch(
    exported: tuple[Path, list[dict[str, object]]], tmp_path: Path
) -> None:
    bench, docs = exported
    # 9 views; the log answers them out of order, logs a null reply for doc 4 and has no row for doc 7
    lines = [_sample(docs, i, None if i == 4 else f"reply {i}") for i in (8, 0, 3, 1, 2, 4, 6, 5)]
    log = _log(tmp_path, lines)
    _import(bench, log, tmp_path / "one", batch=1)
    _import(bench, log, tmp_path / "default")
    one, default = _tables(tmp_path / "one"), _tables(tmp_path / "default")
    assert one == default
    responses, keys = one
    ids = [str(d["view_id"]) for d in docs]
    assert [r[1] for r in responses] == ids  # views.jsonl order, whatever the log's order
    assert [r[8] for r in responses] == list(range(1, 10))  # created: 1..9, one view stored after the other
    assert [k[:2] for k in keys] == [(i + 1, v) for i, v in enumerate(ids)]
    assert [k[2] for k in keys] == [r[0] for r in responses]
    by_view = {r[1]: r for r in responses}
    assert by_view[ids[8]][5] == "reply 8"
    assert by_view[ids[4]][5:7] == (None, "lmms-eval logged no reply (filtered_resps and resps null or absent)")
    assert by_view[ids[7]][5:7] == (None, "no prediction for this view in samples.jsonl (lmms-eval)")
    info = [json.loads((tmp_path / name / "run.json").read_text(encoding="utf-8")) for name in ("one", "default")]
    for record in info:
        record.pop("started"), record.pop("finished")
    assert info[0] == info[1]
    assert info[0]["origin"]["n_rows"] == 8
    assert info[0]["origin"]["missing_view_ids"] == [ids[7]]
    assert info[0]["n_errors"] == 2  # the null reply and the missing view


def test_a_second_row_for_a_view_is_refused_across_batches_and_after_the_logs_own_refusals(
    exported: tuple[Path, list[dict[str, object]]], tmp_path: Path
) -> None:
    bench, docs = exported
    log = _log(tmp_path, [_sample(docs, 0, "a"), _sample(docs, 1, "b"), _sample(docs, 0, "c")])
    with pytest.raises(VqauditError) as twice:
        _import(bench, log, tmp_path / "run", batch=1)
    assert str(twice.value) == f"{log}: row 3: a second prediction for view 'g0-v0' (the first is row 1)"
    assert not (tmp_path / "run").exists()
    # a row naming no view later in the file is the reader's refusal, raised first (as when the log was read whole)
    log = _log(tmp_path, [_sample(docs, 0, "a"), _sample(docs, 0, "c"), {"doc_id": 99, "filtered_resps": "x"}])
    with pytest.raises(VqauditError, match=r"row 3, field 'doc_id': 99 is not a view of the benchmark"):
        _import(bench, log, tmp_path / "run", batch=1)
    assert not (tmp_path / "run").exists()


def _edit(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [
        ("views.jsonl", '"view_id":"g1-v0"', '"view_id":"g0-v0"'),  # a duplicate view id (row 4)
        ("views.jsonl", '"group_id":"g2"', '"group_id":"g9"'),  # a view naming an unknown group
        ("views.jsonl", '"image_sha256":"', '"image_sha256":"0'),  # an image not matching its hash
        ("views.jsonl", '"image":"images/g1-v1.png"', '"image":"../g1-v1.png"'),  # a path leaving the folder
        ("views.jsonl", '"view_id":"g2-v2"', '"view_id":7'),  # a malformed row
        ("groups.jsonl", '"g1-v2"', '"g1-v9"'),  # a group naming an unknown view
        ("groups.jsonl", '"group_id":"g1"', '"group_id":1'),  # a malformed group row
    ],
)
def test_the_view_index_refuses_an_edited_benchmark_as_open_benchmark_does(
    tmp_path: Path, name: str, old: str, new: str
) -> None:
    bench = helpers.write_tiny_benchmark(tmp_path / "bench", n_groups=3)
    _edit(bench / name, old, new)
    with pytest.raises(VqauditError) as loaded:
        open_benchmark(bench)
    with pytest.raises(VqauditError) as indexed, open_view_index(bench):
        pass
    assert str(indexed.value) == str(loaded.value)


def test_views_changed_during_the_import_are_refused_and_nothing_is_written(
    exported: tuple[Path, list[dict[str, object]]], tmp_path: Path
) -> None:
    bench, docs = exported
    copy = tmp_path / "bench"
    shutil.copytree(bench, copy)
    log = _log(tmp_path, [_sample(docs, 0, "a")])
    with open_view_index(copy) as views:
        rows = lmms_eval.predictions(log, views)
        # the views are read again while the run is written; a file edited meanwhile is refused, not half-used
        (copy / "views.jsonl").write_bytes((copy / "views.jsonl").read_bytes() + b"\n")
        with pytest.raises(VqauditError, match=r"views\.jsonl: changed while the predictions were imported"):
            write_imported_run(views, rows, pred_path=log, harness="lmms-eval", out=tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_a_benchmark_rewritten_with_its_manifest_during_the_import_is_refused_and_nothing_is_written(
    exported: tuple[Path, list[dict[str, object]]], tmp_path: Path
) -> None:
    bench, docs = exported
    copy = tmp_path / "bench"
    shutil.copytree(bench, copy)
    log = _log(tmp_path, [_sample(docs, 0, "a")])
    views_path, manifest_path = copy / "views.jsonl", copy / "manifest.json"

    def rebuild() -> None:
        # Rewritten as a rebuild would: new files renamed into place (a new inode, so the views the import is
        # already streaming are still the old file's and hash as indexed) and the manifest's views_sha256 updated
        # to match. Without the manifest check run.json would record the new manifest's hash, and score would
        # then score the replies against views they were never checked against.
        new_views = views_path.read_bytes() + b"\n"  # a blank line: the same views, another hash
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        manifest["views_sha256"] = hashlib.sha256(new_views).hexdigest()
        (copy / "views.tmp").write_bytes(new_views)
        (copy / "views.tmp").replace(views_path)
        (copy / "manifest.tmp").write_text(json.dumps(manifest), encoding="utf-8")
        (copy / "manifest.tmp").replace(manifest_path)

    with open_view_index(copy) as views:
        before = views.manifest_sha256
        rows = lmms_eval.predictions(log, views)
        streaming = views._stream

        def stream_then_rebuild() -> Iterator[View]:  # the rebuild lands once the import streams the views
            stream = streaming()
            first = next(stream)
            rebuild()
            yield first
            yield from stream

        views._stream = stream_then_rebuild
        with pytest.raises(VqauditError) as changed:
            write_imported_run(views, rows, pred_path=log, harness="lmms-eval", out=tmp_path / "run")
    assert str(changed.value) == (
        f"{manifest_path}: changed while the predictions were imported; nothing was written (import again)"
    )
    assert not (tmp_path / "run").exists()
    # the hash the index records is the one of the manifest it read (the file's bytes before the rewrite)
    assert before == hashlib.sha256((bench / "manifest.json").read_bytes()).hexdigest()


def test_an_import_records_the_hash_of_the_manifest_it_read(
    exported: tuple[Path, list[dict[str, object]]], tmp_path: Path
) -> None:
    bench, docs = exported
    log = _log(tmp_path, [_sample(docs, 0, "a")])
    _import(bench, log, tmp_path / "run")
    info = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert info["benchmark_manifest_sha256"] == hashlib.sha256((bench / "manifest.json").read_bytes()).hexdigest()
