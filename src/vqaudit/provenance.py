"""Is the benchmark of a run still as it was built? ``score`` checks before scoring.

``run`` refuses a benchmark whose ``views.jsonl`` or ``groups.jsonl`` no longer match the hashes its manifest
records, and ``RunFolder.benchmark`` checks the manifest's own hash against ``run.json``. ``score`` checked only
the latter: editing a gold answer in ``views.jsonl`` after the run (manifest untouched) silently changed the
metrics (Jk 1.000 -> 0.750, exit 0).
"""

from __future__ import annotations

from vqaudit.errors import VqauditError
from vqaudit.store import Benchmark, manifest_problems


def check_benchmark_of_run(bench: Benchmark) -> None:
    """Refuse to score against a benchmark whose views or groups differ from its manifest's hashes.

    Args:
        bench: the loaded benchmark the run names (its manifest hash already checked against ``run.json``).

    Raises:
        VqauditError: ``views.jsonl`` or ``groups.jsonl`` does not match its hash in ``manifest.json`` (one line).
    """
    tampered = [p for p in manifest_problems(bench) if "views.jsonl" in p or "groups.jsonl" in p]
    if tampered:
        raise VqauditError(
            f"{bench.root}: {tampered[0]}; the benchmark was edited after it was built, so the run "
            "cannot be scored against it (rebuild it, or check it with `vqaudit verify`)"
        )
