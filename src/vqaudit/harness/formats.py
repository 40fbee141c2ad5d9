"""The harness table: every harness vqaudit exports to and imports from is one row here, and one module.

A row names the harness (the value of ``export --to`` and ``import-predictions --format``), the module that
exports and reads it (imported only when used), what the import reads, and its documentation page. A module
exposes ``export(bench, out, *, final, name) -> list[Path]`` (writes into the staged folder ``out``, which
becomes ``final``), ``predictions(path, views) -> Iterator[Prediction]`` (the log's rows one at a time, against a
:class:`~vqaudit.harness.view_index.ViewIndex`: what ``import-predictions`` reads) and ``read(path, bench) ->
list[Prediction]`` (the same rows against a loaded benchmark; see :mod:`vqaudit.harness.common`). No
harness is needed to export; only reading inspect_ai's zip logs (``.eval``) needs the ``[inspect]`` extra.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from vqaudit.errors import VqauditError


@dataclass(frozen=True)
class Harness:
    """One row of the harness table.

    Attributes:
        name: ``--to`` / ``--format`` value.
        module: dotted path of the module with ``export`` and ``read``.
        exports: what the export writes.
        reads: what the import reads.
        doc: the documentation page.
        images: what the harness does to the exported images before a model sees them (one line; ``vqaudit
            export`` prints it), from the harness's own source (the commit is named on the ``doc`` page).
    """

    name: str
    module: str
    exports: str
    reads: str
    doc: str
    images: str

    def load(self) -> ModuleType:
        """The harness's module (imported on first use)."""
        return importlib.import_module(self.module)


HARNESSES: dict[str, Harness] = {
    row.name: row
    for row in (
        Harness(
            "vlmevalkit",
            "vqaudit.harness.vlmevalkit",
            "custom-dataset TSV ($LMUData/NAME.tsv)",
            "result sheet MODEL_NAME.xlsx (or .tsv/.csv) with a prediction column",
            "docs/harnesses/vlmevalkit.md",
            "its API models (run.py --base-url, the GPT wrappers) re-encode every image as JPEG (Pillow's "
            "quality 75): a chart's pixels change, and answers read from them can too; local models get the "
            "PNG decoded to RGB",
        ),
        Harness(
            "lmms-eval",
            "vqaudit.harness.lmms_eval",
            "task folder for --include_path (YAML, JSONL, utils.py)",
            "--log_samples JSONL (nested or flat samples)",
            "docs/harnesses/lmms-eval.md",
            "the task gives the image file's pixels in RGB; its openai model sends them as PNG (lossless) "
            "unless LMMS_IMAGE_ENCODE_FORMAT=JPEG",
        ),
        Harness(
            "inspect",
            "vqaudit.harness.inspect_task",
            "JSONL dataset of samples and a task file",
            "eval log (.eval or .json)",
            "docs/harnesses/inspect.md",
            "each sample names its image file; inspect_ai sends the file's bytes as they are (a PNG stays "
            "the PNG vqaudit built)",
        ),
    )
}


def get_harness(name: str) -> Harness:
    """The row of a harness name.

    Raises:
        VqauditError: no such harness (the message lists the known ones).
    """
    row = HARNESSES.get(name)
    if row is None:
        raise VqauditError(f"unknown harness {name!r}; known: {', '.join(HARNESSES)}")
    return row
