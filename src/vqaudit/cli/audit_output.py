"""The output folder of ``vqaudit audit``: its overwrite guard and its report set.

The guard never lets an audit overwrite another audit or the user's own files; the report set (``report.md``,
``report.json``, ``rows.jsonl``) is written as one.

Shared by the short-answer and multiple-choice branches of ``vqaudit audit`` (:mod:`vqaudit.cli.shortanswer`);
``vqaudit perturb`` and ``audit-summary`` create their folders with :func:`ready_folder`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.signals import Completed, TerminatedAfterWrite, completes_on_write, output_complete


def ready_folder(folder: Path) -> Path:
    """``folder``, created with its parents if missing.

    Raises:
        VqauditError: it cannot be created (naming it and why).
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise VqauditError(f"{folder}: cannot create the output folder: {exc}") from None
    return folder


_AUDIT_HEADINGS = ("# Short-answer score audit:", "# Multiple-choice audit:")
"""The first line of every ``report.md`` of ``vqaudit audit`` (:mod:`vqaudit.report.shortanswer`, ``.multichoice``)."""


def _first_line(path: Path) -> str:
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.strip():
                    return line.strip()
    except OSError:
        return ""
    return ""


def _ours(path: Path) -> bool:
    """Whether ``report.md`` / ``rows.jsonl`` at ``path`` looks written by ``vqaudit audit`` (first line only)."""
    first = _first_line(path)
    if path.name == "report.md":
        return first.startswith(_AUDIT_HEADINGS)
    if not first:
        return True  # an audit with no joined rows writes an empty rows.jsonl
    try:
        rec = json.loads(first)
    except ValueError:
        return False
    return isinstance(rec, dict) and ("qid" in rec or {"id", "group", "kind"} <= rec.keys())  # short-answer, MC


def _old_report(target: Path) -> dict[str, Any] | None:
    """The ``report.json`` of the audit in ``target`` (None: there is none); refuse files the audit did not write.

    Refused: a ``report.md`` or ``rows.jsonl`` not written by ``vqaudit audit`` (the user's own files), a
    ``report.json`` that is not a JSON object with a ``benchmark`` field.
    """
    from vqaudit.files import read_json

    for mine in ("report.md", "rows.jsonl"):
        if (target / mine).is_file() and not _ours(target / mine):
            raise VqauditError(
                f"{target / mine}: exists and was not written by `vqaudit audit`; the audit would "
                "overwrite it: choose another --out"
            )
    report = target / "report.json"
    if not report.exists():
        return None
    try:
        old = read_json(report) if report.is_file() else None
    except VqauditError:
        old = None
    if not isinstance(old, dict) or not isinstance(old.get("benchmark"), str):
        raise VqauditError(
            f"{report}: exists and is not the report.json of a `vqaudit audit` (no benchmark and "
            "model fields); the audit would overwrite it: choose another --out"
        )
    return old


def refuse_other_mc_audit(target: Path, benchmark: str, predictions: Path) -> None:
    """The guard of the multiple-choice branch: the user's own files, or another audit, are never overwritten.

    Its ``report.json`` names the prediction file by its name (``predictions``) and resolved path
    (``predictions_file``; an audit written before it was recorded has only the name): the same benchmark and
    file may rewrite the folder, another file of the same name may not (re-trial: ``mcb/preds.tsv`` silently
    replaced the audit of ``mca/preds.tsv``).
    """
    old = _old_report(target)
    if old is None:
        return
    if "choice" not in old:
        raise VqauditError(
            f"{target}: holds the audit of {old.get('model')!r} on {old['benchmark']!r}; this "
            "multiple-choice audit would overwrite it: choose another --out"
        )
    if (old["benchmark"], old.get("predictions")) != (benchmark, predictions.name):
        raise VqauditError(
            f"{target}: holds the multiple-choice audit of {old.get('predictions')!r} on "
            f"{old['benchmark']!r}; this one ({predictions.name!r} on {benchmark!r}) would "
            "overwrite it: choose another --out"
        )
    stored, current = old.get("predictions_file"), str(predictions.resolve())
    if isinstance(stored, str) and stored != current:
        raise VqauditError(
            f"{target}: holds the multiple-choice audit of {stored} on {old['benchmark']!r}; this "
            f"one reads another file of the same name ({current}) and would overwrite it: choose "
            "another --out"
        )


def refuse_other_audit(target: Path, benchmark: str, predictions: Path, model_name: str | None) -> None:
    """Refuse an output folder whose files the audit would overwrite and that the user may still need.

    Refused: a ``report.md`` or ``rows.jsonl`` not written by ``vqaudit audit``; a ``report.json`` that is not an
    audit report; the audit of another model or benchmark; the audit of the same model name made from another
    prediction file (``predictions_file`` in ``report.json``: ``runs/step1000/predictions.jsonl`` and
    ``runs/step2000/predictions.jsonl`` are both model ``predictions``) unless ``--model-name`` names the model
    explicitly. Rerunning the same audit into its own folder is allowed: it rewrites the report and reuses the
    judge cache.
    """
    from vqaudit.shortanswer.audit import model_name_of
    from vqaudit.shortanswer.benchmarks import get_benchmark

    old = _old_report(target)
    if old is None:
        return
    if "choice" in old:
        raise VqauditError(
            f"{target}: holds the multiple-choice audit of {old.get('predictions')!r} on "
            f"{old['benchmark']!r}; this one would overwrite it: choose another --out"
        )
    if not isinstance(old.get("model"), str):
        raise VqauditError(
            f"{target / 'report.json'}: exists and is not the report.json of a `vqaudit audit` (no "
            "benchmark and model fields); the audit would overwrite it: choose another --out"
        )
    model = model_name if model_name is not None else model_name_of(predictions)
    name = get_benchmark(benchmark).name
    if (old["benchmark"], old["model"]) != (name, model):
        raise VqauditError(
            f"{target}: holds the audit of {old['model']!r} on {old['benchmark']!r}; this "
            f"one ({model!r} on {name!r}) would overwrite it: choose another --out (or "
            "--model-name)"
        )
    stored, current = old.get("predictions_file"), str(predictions.resolve())
    if isinstance(stored, str) and stored != current and model_name is None:
        raise VqauditError(
            f"{target}: holds the audit of {model!r} on {name!r} made from {stored}; this one reads "
            f"another file under the same model name ({current}) and would overwrite it: choose "
            f"another --out, or give --model-name (--model-name {model} replaces that audit)"
        )


def write_report_set(target: Path, write: Callable[[], Path]) -> Path:
    """Run ``write`` (it renames ``report.md``, ``report.json`` and ``rows.jsonl`` into ``target`` as one set).

    From the last rename on the audit's output is complete, so a SIGTERM no longer makes it look failed
    (new-user trial: an audit that had printed "report written" exited 143): it stops the command with exit 0
    and a line saying the report was completely written (:func:`vqaudit.signals.output_complete`). So does a
    SIGTERM that arrived during the renames, held back until the set was whole.

    Returns:
        What ``write`` returns: the path of ``report.md``.

    Raises:
        Completed: a SIGTERM arrived during the renames (exit 0, the CLI prints the line).
    """
    note = (
        f"stopped by SIGTERM after the audit was completely written to {target} (report.md, report.json, "
        "rows.jsonl): nothing was lost"
    )
    try:
        with completes_on_write(note):  # complete from the last rename on, with no gap before this line
            path = write()
    except TerminatedAfterWrite:
        raise Completed(note) from None
    output_complete(note)
    return path
