"""What every harness exporter and importer shares: the rows a benchmark exports, and the run an import writes.

An export row is one view with the exact prompt vqaudit asks it with (the source's ``prompt`` hook) and its
image bytes, read from the benchmark and checked against ``image_sha256``. Its ``index`` is the view's 0-based
position in ``views.jsonl``, so a harness's own row number (VLMEvalKit ``index``, lmms-eval ``doc_id``) maps back
to the view from the benchmark alone.

An import is a stream of :class:`Prediction` (one per row of the harness's log, read one at a time) checked
against the benchmark's views (:class:`~vqaudit.harness.view_index.ViewIndex`: ids held, each view read when a
row asks for it): a row naming a view the benchmark does not have, or a view twice, is refused
(:class:`VqauditError` naming the file, the row and the field), and so is a row whose logged inputs (question,
options, prompt) are not what the export gave the harness for its view (:func:`check_input`: a log of another
build of the benchmark); a view without a row is reported and recorded as an error response ("no prediction"),
never dropped, so ``vqaudit score`` counts it as a failure like a run's recorded error. The run folder
(:mod:`vqaudit.harness.import_run`) is an ordinary one (``run.json`` through :class:`~vqaudit.store.RunInfo`,
replies in ``responses.sqlite`` keyed as a ``replay:`` run keys them, by view id), written in batches in a staged
folder renamed into place when complete.
Each reply is stored exactly as the log holds it, a reasoning model's thinking included: nothing on the import
path reads a decision, a letter or an answer out of it; ``vqaudit score`` splits the thinking off
(:mod:`vqaudit.parsing.reasoning`) and reads only the final answer, as for any run.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.files import sha256_bytes
from vqaudit.harness.view_index import ViewIndex, refuse_edited
from vqaudit.run import image_mime
from vqaudit.schema import GenerationParams, View
from vqaudit.store import Benchmark, load_benchmark, manifest_problems
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
    refuse_edited(bench_dir, manifest_problems(bench))
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


def view_id_at(path: Path, views: ViewIndex, row: int, name: str, value: Any) -> str:
    """The id of the view at 0-based position ``value`` of ``views.jsonl`` (a harness's ``index`` or ``doc_id``).

    ``value`` may be an int or a string of decimal digits (a sheet cell).

    Raises:
        VqauditError: not a nonnegative integer, or no view at that position (naming file, row and field).
    """
    text = value.strip() if isinstance(value, str) else value
    if isinstance(text, str) and text.isascii() and text.isdigit():
        text = int(text)
    if not isinstance(text, int) or isinstance(text, bool) or text < 0:
        raise VqauditError(f"{path}: row {row}, field '{name}': expected a nonnegative integer, got {value!r}")
    if text >= len(views):
        raise VqauditError(
            f"{path}: row {row}, field '{name}': {text} is not a view of the benchmark "
            f"(it has {len(views)} views, numbered from 0)"
        )
    return views.ids[text]


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
