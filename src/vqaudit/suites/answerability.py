"""Hooks shared by the answerability sources (charts, scenes, photos): prompt, scorer, metrics, diagnostics.

Every view is asked with the answerability JSON prompt (:mod:`vqaudit.prompts.answerability`), parsed under the
reply contract and scored per view (:func:`vqaudit.scoring.score_view`); a source's metrics are Jk, Bk, the
error rates and their group-bootstrap intervals (:func:`vqaudit.metrics.answerability_metrics`, seed 000 §4).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from vqaudit.metrics import answerability_metrics, e_lambda, failure_accounting
from vqaudit.metrics.conditional import conditional_diagnostics
from vqaudit.prompts.answerability import ANSWERABILITY_PROMPT_ID, answerability_prompt
from vqaudit.schema import Group, Outcome, Response, View
from vqaudit.scoring import score_view
from vqaudit.suites.registry import ScoreContext

LAMBDAS = tuple(i / 10 for i in range(11))
"""The lambda grid of the E_lambda curve in ``diagnostics.json`` (seed 000 §E.1)."""


def prompt(view: View) -> tuple[str, str]:
    """``(prompt_id, text)``: the answerability JSON prompt around the view's question."""
    return ANSWERABILITY_PROMPT_ID, answerability_prompt(view.question)


def score(views: Sequence[View], responses: Mapping[str, Response], ctx: ScoreContext) -> list[Outcome]:
    """One Outcome per view, in order (every view has a response: the score stage checks it first)."""
    return [score_view(v, responses[v.view_id], ctx.reasoning_format) for v in views]


def metrics(
    outcomes: Sequence[Outcome], views: Sequence[View], groups: Sequence[Group], *, n_draws: int, seed: int
) -> dict[str, Any]:
    """The source's ``metrics.json`` entry (keys of :data:`vqaudit.metrics.METRIC_KEYS`, counts, ``ci``)."""
    (entry,) = answerability_metrics(list(outcomes), n_draws=n_draws, seed=seed).values()
    return dict(entry)


def diagnostics(
    outcomes: Sequence[Outcome], groups: Sequence[Group], entry: Mapping[str, Any], *, n_draws: int, seed: int
) -> dict[str, Any]:
    """The source's ``diagnostics.json`` entry: failure accounting (seed 000 §E.2), E_lambda, invalid reasons.

    Also the appendix-B common-state comparison, conditional disagreement and supported-answer counts
    (:func:`vqaudit.metrics.conditional.conditional_diagnostics`, on the same seed and draws as the metrics).
    """
    (accounting,) = failure_accounting(list(outcomes)).values()
    reasons = Counter(o.invalid_reason for o in outcomes if o.decision == "invalid")
    return {
        "failure_accounting": accounting,
        "E_lambda": {f"{lam:.1f}": e_lambda(dict(entry), lam) for lam in LAMBDAS},
        "invalid_reasons": dict(sorted((str(k), v) for k, v in reasons.items())),
        "backend_errors": sum(1 for o in outcomes if o.error is not None),
        **conditional_diagnostics(outcomes, n_draws=n_draws, seed=seed),
    }


def summary_line(entry: Mapping[str, Any]) -> str:
    """One line of a source's ``metrics.json`` entry for ``vqaudit score``: Jk, Bk, Ebal, invalid rate, groups."""
    return (
        f"Jk={entry['Jk']:.3f} Bk={entry['Bk']:.3f} Ebal={entry['Ebal']:.3f} "
        f"invalid={entry['invalid_rate']:.3f} ({entry['n_groups']} groups)"
    )
