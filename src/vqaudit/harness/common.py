"""What every harness exporter and importer shares: the rows a benchmark exports, and the run an import writes.

An export row is one view with the exact prompt vqaudit asks it with (the source's ``prompt`` hook) and its
image bytes, read from the benchmark and checked against ``image_sha256``. Its ``index`` is the view's 0-based
position in ``views.jsonl``, so a harness's own row number (VLMEvalKit ``index``, lmms-eval ``doc_id``) maps back
to the view from the benchmark alone.

An import is a list of :class:`Prediction` (one per row of the harness's log) checked against the benchmark:
a row naming a view the benchmark does not have, or a view twice, is refused (:class:`VqauditError` naming the
file, the row and the field), and so is a row whose logged inputs (question, options, prompt) are not what the
export gave the harness for its view (:func:`check_input`: a log of another build of the benchmark); a view
without a row is reported and recorded as an error response ("no prediction"), never dropped, so ``vqaudit
score`` counts it as a failure like a run's recorded error. The run
folder is an ordinary one (``run.json`` through :class:`~vqaudit.store.RunInfo`, replies in ``responses.sqlite``
keyed as a ``replay:`` run keys them, by view id), written in a staged folder renamed into place when complete.
Each reply is stored exactly as the log holds it, a reasoning model's thinking included: nothing on the import
path reads a decision, a letter or an answer out of it; ``vqaudit score`` splits the thinking off
(:mod:`vqaudit.parsing.reasoning`) and reads only the final answer, as for any run.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vqaudit import __version__
from vqaudit.backends import ResponseCache
from vqaudit.backends.cache import cache_key
from vqaudit.backends.runner import by_id_image_key
from vqaudit.errors import VqauditError
from vqaudit.files import sha256_bytes, sha256_file, staged_folder
from vqaudit.progress import track
from vqaudit.run import image_mime
from vqaudit.schema import GenerationParams, Response, View
from vqaudit.store import (
    Benchmark,
    BenchmarkFolder,
    RunFolder,
    RunInfo,
    load_benchmark,
    manifest_problems,
    relative_path,
)
from vqaudit.suites.registry import prompt_for, sources_in_order

GENERATION = GenerationParams()
"""The generation settings every export asks for (temperature 0, at most 512 new tokens), as ``vqaudit run``."""

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")


@dataclass(frozen=True)
class ExportRow:
    """One view as a harness gets it.

    Attributes:
        index: 0-based position of the view in ``views.jsonl`` (VLMEvalKit ``index``, lmms-eval ``doc_id``).
        view: the view.
        prompt_id: id of the prompt template (``answerability-json-v1``, ``upd-base-v1``, ...).
        prompt: the full prompt text vqaudit asks the view with.
        image: the image file's bytes (their SHA-256 is ``view.image_sha256``).
        image_mime: MIME type sniffed from the bytes (``image/png``, ``image/jpeg``, ...).
    """

    index: int
    view: View
    prompt_id: str
    prompt: str
    image: bytes
    image_mime: str


def open_benchmark(bench_dir: Path) -> Benchmark:
    """Load a benchmark folder with every image checked, refusing one edited after it was built (as ``run`` does).

    Raises:
        VqauditError: a missing or malformed file, an image whose bytes do not match its hash, or
            ``views.jsonl`` / ``groups.jsonl`` not matching ``manifest.json``.
    """
    bench = load_benchmark(bench_dir)
    tampered = [p for p in manifest_problems(bench) if "views.jsonl" in p or "groups.jsonl" in p]
    if tampered:
        raise VqauditError(
            f"{bench_dir}: {tampered[0]}; the benchmark was edited after it was built (rebuild it, "
            "or check it with `vqaudit verify`)"
        )
    return bench


def export_rows(bench: Benchmark) -> Iterator[ExportRow]:
    """Every view of ``bench`` in file order with its prompt and image bytes (read one at a time).

    Raises:
        VqauditError: an image file changed since the benchmark was loaded (its SHA-256 differs).
    """
    for index, view in enumerate(bench.views):
        prompt_id, prompt = prompt_for(view)
        path = bench.image_path(view)
        image = path.read_bytes()
        if sha256_bytes(image) != view.image_sha256:
            raise VqauditError(f"{path}: does not match the image_sha256 of view {view.view_id!r}")
        yield ExportRow(
            index=index, view=view, prompt_id=prompt_id, prompt=prompt, image=image, image_mime=image_mime(image, path)
        )


def default_name(bench: Benchmark) -> str:
    """The export's default name: ``vqaudit_<source>`` (e.g. ``vqaudit_charts``), several sources joined by ``_``."""
    sources = sources_in_order({v.source for v in bench.views}) or ["empty"]
    return check_name("vqaudit_" + "_".join(re.sub(r"[^A-Za-z0-9]+", "_", s) for s in sources))


def check_name(name: str) -> str:
    """Return ``name`` if it can name a VLMEvalKit dataset, an lmms-eval task and an inspect_ai task function.

    Raises:
        VqauditError: not a letter followed by at most 63 letters, digits or underscores.
    """
    if not _NAME.fullmatch(name):
        raise VqauditError(
            f"--name {name!r}: expected a letter, then at most 63 letters, digits or '_' "
            "(it names the harness's dataset or task, and a Python function)"
        )
    return name


@dataclass(frozen=True)
class Prediction:
    """One row of a harness's prediction log, mapped to a view.

    Attributes:
        row: 1-based row (sheet row after the header, JSONL line, log sample) in the file, for error messages.
        view_id: the view the row answers.
        text: the reply text exactly as the harness logged it (None when the harness recorded an error).
        error: the harness's error message for the row (then ``text`` is None).
    """

    row: int
    view_id: str
    text: str | None
    error: str | None = None


@dataclass(frozen=True)
class ImportSummary:
    """What one import wrote.

    Attributes:
        out_dir: the run folder.
        model: the model spec recorded in ``run.json`` and on every reply (``FORMAT:FILE_NAME``).
        n_views: views in the benchmark.
        n_replies: views with a reply text.
        n_errors: views whose row records a harness error.
        missing: views with no row in the file (recorded as errors), in benchmark order.
    """

    out_dir: Path
    model: str
    n_views: int
    n_replies: int
    n_errors: int
    missing: tuple[str, ...] = field(default=())


def view_at(path: Path, bench: Benchmark, row: int, name: str, value: Any) -> View:
    """The view at 0-based position ``value`` of ``views.jsonl`` (a harness's ``index`` or ``doc_id``).

    ``value`` may be an int or a string of decimal digits (a sheet cell).

    Raises:
        VqauditError: not a nonnegative integer, or no view at that position (naming file, row and field).
    """
    text = value.strip() if isinstance(value, str) else value
    if isinstance(text, str) and text.isascii() and text.isdigit():
        text = int(text)
    if not isinstance(text, int) or isinstance(text, bool) or text < 0:
        raise VqauditError(f"{path}: row {row}, field '{name}': expected a nonnegative integer, got {value!r}")
    if text >= len(bench.views):
        raise VqauditError(
            f"{path}: row {row}, field '{name}': {text} is not a view of the benchmark "
            f"(it has {len(bench.views)} views, numbered from 0)"
        )
    return bench.views[text]


def check_view_id(path: Path, bench_ids: Collection[str], row: int, name: str, value: Any) -> str:
    """``value`` if it is the id of a view of the benchmark.

    Raises:
        VqauditError: not a string, or no such view (naming file, row and field).
    """
    if not isinstance(value, str):
        raise VqauditError(f"{path}: row {row}, field '{name}': expected a view id string, got {value!r}")
    if value not in bench_ids:
        raise VqauditError(f"{path}: row {row}, field '{name}': {value[:200]!r} is not a view of the benchmark")
    return value


_PANDAS_NA = frozenset(
    {
        "",
        "#N/A",
        "#N/A N/A",
        "#NA",
        "-1.#IND",
        "-1.#QNAN",
        "-NaN",
        "-nan",
        "1.#IND",
        "1.#QNAN",
        "<NA>",
        "N/A",
        "NA",
        "NULL",
        "NaN",
        "None",
        "n/a",
        "nan",
        "null",
    }
)
"""The cells ``pandas.read_csv`` reads as missing by default (its ``na_values``): a harness that loads the export
with pandas and writes its log back (VLMEvalKit) writes them as empty cells."""


def same_text(got: str | None, want: str, *, pandas: bool = False) -> bool:
    """Whether a logged input text ``got`` is the exported text ``want`` (exact; None is the empty text).

    With ``pandas`` (a sheet that went through ``pandas.read_csv`` and back, as VLMEvalKit's result sheets do),
    two changes pandas itself makes are not differences: a cell pandas reads as missing (``"None"``, ``"NA"``,
    ...) written back empty, and a number-like cell rewritten as the same number (``"3"`` as ``"3.0"``).
    """
    text = got or ""
    if text == want:
        return True
    if not pandas:
        return False
    if text == "" and want in _PANDAS_NA:
        return True
    try:
        return float(text) == float(want)  # int or float column: "3" -> 3 -> "3.0" (tsv) or 3 (xlsx)
    except ValueError:
        return False


def check_input(
    path: Path, row: int, name: str, got: str | None, want: str, view_id: str, *, pandas: bool = False
) -> None:
    """Refuse a log row whose input text (question, option, prompt) is not what the export gave the harness.

    A log made from another build of the benchmark (another ``--seed``: the same view ids, other questions or
    option order) must not be scored against this one. The message shows both values from a little before
    their first difference, each cut at 60 characters.

    Raises:
        VqauditError: ``got`` is not ``want`` (:func:`same_text`), naming the file, the row, the field and view.
    """
    if same_text(got, want, pandas=pandas):
        return
    text = got or ""
    start = max(
        0, next((i for i, (a, b) in enumerate(zip(text, want, strict=False)) if a != b), min(len(text), len(want))) - 20
    )
    raise VqauditError(
        f"{path}: row {row}, field '{name}': {_cut(text, start)} is not the benchmark's "
        f"{_cut(want, start)} (view {view_id!r}); was the log made from another export or build "
        "of the benchmark (e.g. another --seed)? Export this benchmark and run the harness on it"
    )


def _cut(text: str, start: int) -> str:
    part = text[start : start + 60]
    return ("..." if start else "") + repr(part) + ("..." if start + 60 < len(text) else "")


def by_view(path: Path, predictions: Sequence[Prediction]) -> dict[str, Prediction]:
    """The predictions keyed by view id.

    Raises:
        VqauditError: a view answered by two rows (naming the file, the second row and the view).
    """
    out: dict[str, Prediction] = {}
    for pred in predictions:
        if pred.view_id in out:
            raise VqauditError(
                f"{path}: row {pred.row}: a second prediction for view {pred.view_id!r} "
                f"(the first is row {out[pred.view_id].row})"
            )
        out[pred.view_id] = pred
    return out


def write_imported_run(
    bench: Benchmark,
    predictions: Sequence[Prediction],
    *,
    pred_path: Path,
    harness: str,
    out: Path,
    origin: dict[str, Any] | None = None,
) -> ImportSummary:
    """Write a run folder holding the replies of ``predictions`` for the views of ``bench``.

    Every view gets one response keyed as a ``replay:`` run keys it (model spec, prompt id, prompt, image
    SHA-256 + ``#VIEW_ID``, generation parameters) under the model ``HARNESS:FILE_NAME``; a view without a
    prediction gets an error response. ``run.json`` records the benchmark (absolute path, path relative to
    ``out``, manifest hash) and ``origin``: the harness, the file's absolute path and SHA-256, the rows read
    and the views without a row.

    Args:
        bench: the benchmark the predictions answer (loaded by :func:`open_benchmark`).
        predictions: the file's rows, each naming a view of ``bench``.
        pred_path: the prediction file.
        harness: the format name (``vlmevalkit``, ``lmms-eval``, ``inspect``).
        out: the run folder to create (must not exist, or be empty).
        origin: more fields for ``run.json``'s ``origin`` (e.g. the harness's own model name).

    Raises:
        VqauditError: a view answered twice, or ``out`` exists and is not an empty folder.
    """
    preds = by_view(pred_path, predictions)
    model = f"{harness}:{pred_path.name}"
    bench_root = bench.root.resolve()
    missing = tuple(v.view_id for v in bench.views if v.view_id not in preds)
    info = RunInfo(
        model=model,
        model_identity=f"{harness}:sha256:{sha256_file(pred_path)}",
        benchmark=str(bench_root),
        benchmark_relative=relative_path(bench_root, out),
        benchmark_manifest_sha256=sha256_file(BenchmarkFolder(bench_root).manifest),
        sources=sources_in_order({v.source for v in bench.views}),
        prompt_ids=sorted({prompt_for(v)[0] for v in bench.views}),
        params=GENERATION.as_dict(),
        vqaudit_version=__version__,
        started=_now(),
        finished=_now(),
        n_views=len(bench.views),
        n_cached=0,
        n_asked=0,
        n_errors=sum(1 for p in preds.values() if p.text is None) + len(missing),
        origin={
            "harness": harness,
            "file": str(pred_path.resolve()),
            "file_sha256": sha256_file(pred_path),
            "n_rows": len(predictions),
            "missing_view_ids": list(missing),
            **(origin or {}),
        },
    )
    with staged_folder(out) as tmp:
        folder = RunFolder(tmp)
        folder.write_info(info)
        with ResponseCache(folder.responses) as cache:
            keys: dict[str, str] = {}
            for view in track(bench.views, f"import {pred_path.name} into {out}", len(bench.views)):
                response = _response(view, preds.get(view.view_id), model, pred_path, harness)
                cache.put(response)
                keys[view.view_id] = response.cache_key
            cache.set_view_keys(keys)
    return ImportSummary(
        out_dir=out,
        model=model,
        n_views=len(bench.views),
        n_replies=sum(1 for p in preds.values() if p.text is not None),
        n_errors=sum(1 for p in preds.values() if p.text is None),
        missing=missing,
    )


def _response(view: View, pred: Prediction | None, model: str, pred_path: Path, harness: str) -> Response:
    prompt_id, prompt = prompt_for(view)
    key = cache_key(model, prompt_id, prompt, by_id_image_key(view.image_sha256, view.view_id), GENERATION)
    text: str | None
    error: str | None
    if pred is None:
        text, error = None, f"no prediction for this view in {pred_path.name} ({harness})"
    else:
        text, error = pred.text, pred.error
        if text is None and not error:
            error = f"{harness} recorded no reply for this view"
    return Response(
        view_id=view.view_id,
        model=model,
        prompt_id=prompt_id,
        params=GENERATION.as_dict(),
        text=text,
        error=error,
        cache_key=key,
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
