"""How often the UPD judge's verdicts agree with human labels (seed 001 App. 0.C.2, Fig. E).

The paper sampled 100 predictions per model (LLaVA-Next-34B, GPT-4V) that pattern matching did not match, labelled
each right or wrong by hand and compared the labels with ChatGPT's verdicts. Here a labels file gives a human
verdict per view id; the views compared are the labelled ones the judge decided (``decided_by`` ``judge:SPEC``),
as in the paper: a view the matcher decided, or left undecided, is counted apart and not compared.

Agreement: ``accuracy = (tp + tn) / n``, the share of compared views where the judge's verdict (the outcome's
``task_correct``) equals the human's; Cohen's kappa ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the accuracy and
``p_e = p_J * p_H + (1 - p_J) * (1 - p_H)`` from the shares judged right by the judge (``p_J``) and by the human
(``p_H``) (J. Cohen, "A coefficient of agreement for nominal scales", Educ. Psychol. Meas. 20(1), 1960, eq. 1);
kappa is None when ``p_e == 1`` (both raters gave one verdict throughout).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.files import sha256_file
from vqaudit.labels import VIEW_LABELS, read_label_file
from vqaudit.schema import Outcome


def read_view_labels(path: Path) -> dict[str, bool]:
    """Read human verdicts per view: JSONL objects or CSV/TSV rows with ``view_id`` and ``label``.

    ``label`` is ``correct`` / ``incorrect`` (also ``right``/``wrong``, ``true``/``false``, ``yes``/``no``,
    ``1``/``0``, any case): whether the model's reply to that view is right. Rows are 1-based lines (a CSV's
    header is row 1). The one label reader: :func:`vqaudit.labels.read_label_file` with
    :data:`vqaudit.labels.VIEW_LABELS`.

    Returns:
        ``{view_id: True (right) | False (wrong)}``.

    Raises:
        VqauditError: a missing, empty or non-UTF-8 file, a row that is not an object, a missing field, an
            unreadable label, or a view labelled twice; the message names the file, row and field.
    """
    return read_label_file(path, VIEW_LABELS)


def kappa_from_counts(tp: int, fp: int, fn: int, tn: int) -> float | None:
    """Cohen's kappa of two binary raters from their confusion counts (Cohen 1960, eq. 1); None if ``p_e == 1``.

    ``tp``: both say right; ``fp``: the first right, the second wrong; ``fn``: the reverse; ``tn``: both wrong.

    Raises:
        VqauditError: no items.
    """
    n = tp + fp + fn + tn
    if n <= 0:
        raise VqauditError("kappa needs at least one item")
    p_o = (tp + tn) / n
    p_e = ((tp + fp) / n) * ((tp + fn) / n) + ((fn + tn) / n) * ((fp + tn) / n)
    return None if p_e == 1.0 else (p_o - p_e) / (1.0 - p_e)


def judge_agreement(
    outcomes: Sequence[Outcome], labels: Mapping[str, bool], *, labels_path: Path, judge: str
) -> dict[str, Any]:
    """Accuracy and Cohen's kappa of the judge's verdicts against human labels, over the views the judge decided.

    Args:
        outcomes: the UPD outcomes of a run scored with a judge.
        labels: ``{view_id: human verdict}`` (:func:`read_view_labels`).
        labels_path: the labels file (recorded with its SHA-256).
        judge: the judge's model spec (its views have ``decided_by == "judge:" + judge``).

    Returns:
        JSON-ready: ``labels`` (path), ``labels_sha256``, ``judge``, ``n_labels``, ``n_compared`` (labelled views
        the judge decided), ``n_not_judged`` (labelled views the matcher decided or left undecided), ``counts``
        (``tp``/``fp``/``fn``/``tn``, judge first: ``fp`` = judge right, human wrong), ``accuracy`` (fraction)
        and ``kappa`` (None when undefined).

    Raises:
        VqauditError: a labelled view id that is not a view of the run (naming the file and view), or no
            labelled view the judge decided.
    """
    by_id = {o.view_id: o for o in outcomes}
    unknown = sorted(v for v in labels if v not in by_id)
    if unknown:
        raise VqauditError(
            f"{labels_path}: field 'view_id': {unknown[0]!r} is not a UPD view of this run ({len(unknown)} such labels)"
        )
    decided_by = f"judge:{judge}"
    tp = fp = fn = tn = 0
    for view_id, human in labels.items():
        outcome = by_id[view_id]
        if outcome.decided_by != decided_by:
            continue
        judged = outcome.task_correct
        tp += judged and human
        fp += judged and not human
        fn += (not judged) and human
        tn += (not judged) and not human
    n = tp + fp + fn + tn
    if n == 0:
        raise VqauditError(
            f"{labels_path}: none of its {len(labels)} labelled views was decided by the judge "
            f"{judge!r} (the paper compares the replies pattern matching left to the judge)"
        )
    return {
        "labels": str(labels_path),
        "labels_sha256": sha256_file(labels_path),
        "judge": judge,
        "n_labels": len(labels),
        "n_compared": n,
        "n_not_judged": len(labels) - n,
        "counts": {"tp": tp, "fp": fp, "fn": fn, "tn": tn},
        "accuracy": (tp + tn) / n,
        "kappa": kappa_from_counts(tp, fp, fn, tn),
    }
