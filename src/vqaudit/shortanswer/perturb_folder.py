"""What a `vqaudit perturb` output folder may already hold, checked before its model calls.

The same rules as an audit folder (``vqaudit audit``, docs/shortanswer.md "The output folder"): the folder may hold
an earlier run of the same model on the same benchmark (a rerun reuses its ``responses.sqlite`` and rewrites the
files), but never the user's own ``perturbations.md`` / ``perturbations.json`` / ``replies.json``, nor the run of
another model or benchmark, which ``audit-summary`` would otherwise read under the new name while the old one
was silently lost. The command holds the folder's lock (:func:`vqaudit.folder_lock.folder_lock`) from this check
to its last write, so two runs into one folder cannot both pass it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError

HEADING = "# Benign perturbations: "
"""The first characters of every ``perturbations.md`` that ``vqaudit perturb`` writes."""

_CHOOSE = "choose another --out"


def _json_object(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def refuse_foreign_files(folder: Path, benchmark: str, model: str) -> None:
    """Refuse a folder whose files ``vqaudit perturb`` did not write, or that holds another model's run.

    Args:
        folder: the ``--out`` folder (it may not exist yet).
        benchmark: this run's ``--benchmark``.
        model: this run's model name (``--model-name``, else the model spec), as ``perturbations.json`` records it.

    Raises:
        VqauditError: naming the file or folder: a ``perturbations.md`` not starting with :data:`HEADING`, a
            ``perturbations.json`` that is not an object with ``benchmark`` and ``model``, a ``replies.json`` that
            is not a JSON object, or the run of another (model, benchmark).
    """
    md = folder / "perturbations.md"
    if md.exists():
        try:
            ours = md.read_text(encoding="utf-8").startswith(HEADING)
        except (OSError, UnicodeDecodeError):
            ours = False
        if not ours:
            raise VqauditError(
                f"{md}: exists and was not written by `vqaudit perturb`; the run would overwrite it: {_CHOOSE}"
            )
    replies = folder / "replies.json"
    if replies.exists() and _json_object(replies) is None:
        raise VqauditError(
            f"{replies}: exists and was not written by `vqaudit perturb`; the run would overwrite it: {_CHOOSE}"
        )
    summary = folder / "perturbations.json"
    if not summary.exists():
        return
    old = _json_object(summary)
    if old is None or not isinstance(old.get("benchmark"), str) or not isinstance(old.get("model"), str):
        raise VqauditError(
            f"{summary}: exists and is not the perturbations.json of a `vqaudit perturb` (no benchmark and model "
            f"fields); the run would overwrite it: {_CHOOSE}"
        )
    if (old["model"], old["benchmark"]) != (model, benchmark):
        raise VqauditError(
            f"{folder}: holds the perturbation run of {old['model']!r} on {old['benchmark']!r}; this one "
            f"({model!r} on {benchmark!r}) would overwrite it: {_CHOOSE}"
        )
