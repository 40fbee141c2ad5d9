"""The scored run folders the HTML report reads (:func:`load_run`) and the short labels that tell them apart."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.files import read_json, read_jsonl
from vqaudit.schema import Outcome
from vqaudit.scored_state import check_scored
from vqaudit.store import RunFolder

METRIC_COLUMNS = ("Jk", "Bk", "decision_accuracy", "supported_rejection", "EU", "EM", "EI", "Ebal", "invalid_rate")
"""The answerability metrics of the overview table, in column order (``metrics.json`` keys, seed 000 §4)."""


@dataclass
class LoadedRun:
    """A scored run folder read for the HTML report."""

    run_dir: Path
    label: str
    model: str
    bench_dir: Path
    metrics: dict[str, Any]
    diagnostics: dict[str, Any]
    outcomes: list[Outcome]
    answer_sources: list[str] = field(default_factory=list)
    benchmark_sha256: str = ""
    """The SHA-256 of the benchmark's ``manifest.json`` recorded in ``run.json``: what pairs two runs."""


def _object(path: Path) -> dict[str, Any]:
    value = read_json(path)
    if not isinstance(value, dict):
        raise VqauditError(f"{path}: expected a JSON object")
    return value


def load_run(run_dir: Path) -> LoadedRun:
    """Read a scored run folder: ``run.json``, ``metrics.json``, ``diagnostics.json``, ``outcomes.jsonl``.

    Raises:
        VqauditError: a file is missing (the run was not scored) or malformed (the message names the file and
            field), or the replies changed since it was scored (:func:`vqaudit.scored_state.check_scored`).
    """
    folder = RunFolder(run_dir)
    for path in (folder.info, folder.metrics, folder.outcomes):
        if not path.is_file():
            raise VqauditError(f"{run_dir}: no {path.name}; run `vqaudit score {run_dir}` first")
    check_scored(run_dir)  # a run whose replies changed since `score` is refused, not shown with old numbers
    info = folder.read_info()
    metrics = _object(folder.metrics)
    diagnostics = _object(folder.diagnostics) if folder.diagnostics.is_file() else {}
    for source, m in metrics.items():
        if not isinstance(m, dict):
            raise VqauditError(f"{folder.metrics}: field {source!r} is not an object")
        for key in METRIC_COLUMNS if source != "upd" else ():
            if m.get(key) is not None and not isinstance(m.get(key), int | float):
                raise VqauditError(f"{folder.metrics}: field '{source}.{key}': expected a number or null")
    outcomes = read_jsonl(folder.outcomes, Outcome, surrogates=True)  # score writes a lone surrogate as \udXXX
    return LoadedRun(
        run_dir=run_dir,
        label=run_dir.name,
        model=info.model,
        bench_dir=folder.benchmark(),
        metrics=metrics,
        diagnostics=diagnostics,
        outcomes=outcomes,
        answer_sources=sorted(s for s in metrics if s != "upd"),
        benchmark_sha256=info.benchmark_manifest_sha256,
    )


def run_labels(run_dirs: Sequence[Path]) -> list[str]:
    """Distinct short labels: each folder's name, or its shortest path tail that tells it from the others."""
    parts = [Path(d).resolve().parts for d in run_dirs]
    labels = []
    for i, p in enumerate(parts):
        label = f"{p[-1] if p else '?'} ({i + 1})"  # the same folder given twice
        for n in range(1, len(p)):
            if all(q[-n:] != p[-n:] for j, q in enumerate(parts) if j != i):
                label = "/".join(p[-n:])
                break
        labels.append(label)
    return labels
