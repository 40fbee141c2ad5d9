"""Image-agnostic questions: the items blind runs answer correctly, dropped from an MM-UPD build.

Seed 001, App. 0.B.1, "Exclusion of some image-agnostic questions": the authors removed the MMBench questions
that GPT-4 answered correctly from the text alone, then checked the rest by hand; 13% of the questions went. Here
a blind run (``vqaudit run --blind``: every view asked with its prompt and no image) stands for the text-only
model, and ``vqaudit build upd --drop-image-agnostic RUN`` removes the items it answers. The hand check that
followed in the paper is the user's: this module removes only what the given runs answer.

The rule, per item (an MMBench ``index``, shared by its circular copies and by every variant and setting):

- a blind run answers an item correctly when it asked at least one standard view of the item and every standard
  view of the item it asked is right (every circular rotation, in every variant and setting of its benchmark:
  MMBench circular evaluation, App. 0.C.1); UPD views are not read;
- an item is image-agnostic, and dropped, when at least ``k`` of the given blind runs answer it correctly
  (default ``k``: all of them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.files import read_jsonl
from vqaudit.schema import Outcome, UPDViewMeta
from vqaudit.store import RunFolder, load_benchmark

HAND_CHECK = (
    "seed 001 App. 0.B.1 then checked the remaining questions by hand and removed the image-agnostic "
    "ones it found; that check is not done here"
)
"""Recorded in the manifest beside the rule: what the paper did after the text-only pass, left to the user."""


@dataclass(frozen=True)
class BlindRun:
    """What one scored blind run says about the items of its benchmark.

    Attributes:
        path: the run folder (absolute).
        model: the run's model spec.
        model_identity: the backend's identity (pinned weights, a replay file's hash), as ``run.json`` records it.
        inputs: ``{file name: SHA-256}`` of the input files its benchmark was built from (its manifest's
            ``inputs``).
        asked: the item indices with at least one standard view in the run.
        correct: the item indices the run answers correctly (every standard view of the item right).
    """

    path: Path
    model: str
    model_identity: str | None
    inputs: dict[str, str]
    asked: frozenset[int]
    correct: frozenset[int]


def read_blind_run(run_dir: Path) -> BlindRun:
    """Read a scored blind run of an MM-UPD benchmark: which items it answers correctly.

    Args:
        run_dir: a run folder made by ``vqaudit run --blind`` and scored by ``vqaudit score`` (the caller checks
            that its replies did not change since: :func:`vqaudit.scored_state.check_scored`).

    Returns:
        The run's :class:`BlindRun`.

    Raises:
        VqauditError: no ``run.json``, a run made with images (not ``--blind``), not scored (no
            ``outcomes.jsonl``), its benchmark not found, or a benchmark without standard UPD views.
    """
    folder = RunFolder(run_dir)
    if not folder.info.is_file():
        raise VqauditError(
            f"{run_dir}: not a run folder (no {folder.info.name}); give the folder of a `vqaudit run --blind`"
        )
    info = folder.read_info()
    if not info.blind:
        raise VqauditError(
            f"{folder.info}: field 'blind': the run was made with images; --drop-image-agnostic "
            "takes blind runs (`vqaudit run BENCH --model M --out RUN --blind`)"
        )
    if not folder.outcomes.is_file():
        raise VqauditError(f"{run_dir}: not scored yet; run `vqaudit score {run_dir}` first")
    bench_dir = folder.benchmark()
    bench = load_benchmark(bench_dir, check_images=False)
    inputs = bench.manifest.get("inputs")
    item_of: dict[str, int] = {}
    for view in bench.views:
        if view.source == "upd" and view.obligation.kind == "answer":
            item_of[view.view_id] = UPDViewMeta.of(view).item_index
    if not item_of:
        raise VqauditError(f"{bench_dir}: the blind run's benchmark has no standard MM-UPD views")
    right: dict[str, bool] = {o.view_id: o.task_correct for o in read_jsonl(folder.outcomes, Outcome, surrogates=True)}
    passed: dict[int, bool] = {}
    for view_id, item in item_of.items():
        passed[item] = passed.get(item, True) and right.get(view_id, False)  # a view not scored fails
    return BlindRun(
        path=run_dir.resolve(),
        model=info.model,
        model_identity=info.model_identity,
        inputs=dict(inputs) if isinstance(inputs, dict) else {},
        asked=frozenset(passed),
        correct=frozenset(i for i, ok in passed.items() if ok),
    )


def image_agnostic(runs: Sequence[BlindRun], k: int | None = None) -> tuple[frozenset[int], dict[str, Any]]:
    """The items at least ``k`` of ``runs`` answer correctly, and the manifest record of the rule.

    Args:
        runs: the blind runs (at least one).
        k: how many of them must answer an item correctly for it to be dropped, 1..len(runs); None: all.

    Returns:
        ``(dropped item indices, record)``; the record is ``{"rule", "k", "n_runs", "runs": [{"path", "model",
        "model_identity", "n_items", "n_correct"}], "hand_check"}`` (the build adds what it dropped).

    Raises:
        VqauditError: no runs, or ``k`` outside 1..len(runs).
    """
    if not runs:
        raise VqauditError("--drop-image-agnostic: give at least one blind run folder")
    need = len(runs) if k is None else k
    if not 1 <= need <= len(runs):
        raise VqauditError(f"--drop-k: expected 1 to {len(runs)} (the blind runs given), got {need}")
    votes: dict[int, int] = {}
    for run in runs:
        for item in run.correct:
            votes[item] = votes.get(item, 0) + 1
    dropped = frozenset(i for i, n in votes.items() if n >= need)
    record: dict[str, Any] = {
        "rule": (
            f"an item is dropped when at least {need} of the {len(runs)} blind runs answer it correctly (every "
            "standard view of the item they asked right, all circular rotations; seed 001 App. 0.B.1)"
        ),
        "k": need,
        "n_runs": len(runs),
        "runs": [
            {
                "path": str(r.path),
                "model": r.model,
                "model_identity": r.model_identity,
                "n_items": len(r.asked),
                "n_correct": len(r.correct),
            }
            for r in runs
        ],
        "hand_check": HAND_CHECK,
    }
    return dropped, record
