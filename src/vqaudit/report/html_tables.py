"""The tables of the HTML report, computed from a scored run's outcomes, metrics and diagnostics.

Pure functions over :class:`~vqaudit.schema.Outcome` lists and the JSON that ``vqaudit score`` writes:

- :func:`state_table`: seed 000 Table 3 (§5.1), decisions and answers per state: accepted, rejected, invalid
  (backend errors among them), correct and wrong answers, failures;
- :func:`decision_answer_gap`: seed 000 §5.2, groups with every decision right and the ``Bk - Jk`` groups among
  them that still hold a wrong supported answer;
- :func:`e_lambda_curve` and :func:`e_lambda_paired`: seed 000 §E.1 / Figure 5, ``E_λ = λ·supported_rejection +
  (1−λ)·EU`` over a grid of λ with 95% group-bootstrap intervals, and the paired difference of two runs on the
  same bootstrap draws (the draws of :mod:`vqaudit.metrics.bootstrap`, seed 0, as ``vqaudit score`` uses);
- :func:`residual_cue_rows`: seed 000 Table 9 (appendix C), the photo strata from ``diagnostics.json``;
- :func:`upd_ability_rows`: seed 001 Tables D-O, Standard / UPD / Dual accuracy per ability and configuration.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vqaudit.errors import VqauditError
from vqaudit.metrics import bootstrap_totals, group_counts, metrics_from_counts, percentile_interval
from vqaudit.schema import Outcome

LAMBDAS = tuple(i / 20 for i in range(21))
"""The λ grid of the E_λ curves: 0, 0.05, ..., 1."""

STATE_ORDER = ("original", "S", "C", "D", "M", "I", "control", "matched", "standard")


def state_rank(state: str) -> tuple[int, str]:
    """Sort key putting states in the papers' order (original, S, C, D, M, I, control, ...), others after."""
    return (STATE_ORDER.index(state) if state in STATE_ORDER else len(STATE_ORDER), state)


@dataclass(frozen=True)
class StateRow:
    """Decisions and answers on the views of one state (seed 000 Table 3). Counts of views.

    ``correct`` and ``wrong`` are None on negative states (there is no answer to grade). ``wrong`` counts
    answered supported views whose answer does not match a gold answer (a null answer included).
    """

    state: str
    obligation: str
    views: int
    accepted: int
    rejected: int
    invalid: int
    backend_errors: int
    correct: int | None
    wrong: int | None
    failures: int


def state_table(outcomes: Sequence[Outcome]) -> dict[str, list[StateRow]]:
    """Seed 000 Table 3 per source: one :class:`StateRow` per state, in the papers' state order.

    Args:
        outcomes: the scored views of a run (answerability sources).

    Returns:
        source -> rows. A state whose views mix obligations is reported under the first obligation seen.
    """
    by: dict[str, dict[str, list[Outcome]]] = defaultdict(lambda: defaultdict(list))
    for o in outcomes:
        by[o.source][o.state].append(o)
    table: dict[str, list[StateRow]] = {}
    for source in sorted(by):
        rows = []
        for state in sorted(by[source], key=state_rank):
            views = by[source][state]
            supported = views[0].obligation == "answer"
            answered = [o for o in views if o.decision == "answer"]
            rows.append(
                StateRow(
                    state=state,
                    obligation=views[0].obligation,
                    views=len(views),
                    accepted=len(answered),
                    rejected=sum(o.decision == "abstain" for o in views),
                    invalid=sum(o.decision == "invalid" for o in views),
                    backend_errors=sum(o.error is not None for o in views),
                    correct=sum(o.answer_correct for o in answered) if supported else None,
                    wrong=sum(not o.answer_correct for o in answered) if supported else None,
                    failures=sum(not o.task_correct for o in views),
                )
            )
        table[source] = rows
    return table


@dataclass(frozen=True)
class DecisionAnswerGap:
    """Seed 000 §5.2: groups with every decision right, and those among them with a wrong supported answer.

    Of ``n_groups`` groups, ``decisions_right`` have every decision correct (``Bk·n``), ``task_right`` meet every
    obligation (``Jk·n``) and ``gap = decisions_right - task_right`` (``(Bk - Jk)·n``) have every decision right
    but a wrong supported answer.
    """

    n_groups: int
    decisions_right: int
    task_right: int
    gap: int


def decision_answer_gap(outcomes: Sequence[Outcome]) -> dict[str, DecisionAnswerGap]:
    """Per source, the groups with every decision right and the ``Bk - Jk`` groups with a wrong answer.

    Raises:
        VqauditError: on inconsistent outcomes (see :func:`vqaudit.metrics.group_counts`).
    """
    counts = group_counts(outcomes)
    out = {}
    cols = {name: i for i, name in enumerate(counts.columns)}
    for source in sorted(set(counts.sources)):
        m = counts.for_source(source).matrix.sum(axis=0)
        dec, task = int(m[cols["decision_ok_group"]]), int(m[cols["task_ok_group"]])
        out[source] = DecisionAnswerGap(
            n_groups=int(m[cols["groups"]]), decisions_right=dec, task_right=task, gap=dec - task
        )
    return out


@dataclass(frozen=True)
class Curve:
    """Values over :data:`LAMBDAS` (fractions in [0, 1], or signed differences in [-1, 1]); NaN where undefined."""

    lambdas: tuple[float, ...]
    point: tuple[float, ...]
    lo: tuple[float, ...]
    hi: tuple[float, ...]


def _e_lambda_values(totals: np.ndarray[Any, Any], lambdas: Sequence[float]) -> np.ndarray[Any, Any]:
    """E_λ for each λ (last axis) from count totals of shape ``(..., K)``."""
    m = metrics_from_counts(totals)
    lam = np.asarray(lambdas, dtype=np.float64)
    return np.asarray(m["supported_rejection"][..., None] * lam + m["EU"][..., None] * (1.0 - lam))


def _curve(point: np.ndarray[Any, Any], draws: np.ndarray[Any, Any], lambdas: Sequence[float]) -> Curve:
    if draws.shape[0]:
        lo, hi = percentile_interval(draws)
    else:
        lo = hi = np.full(len(lambdas), np.nan)
    return Curve(tuple(lambdas), tuple(map(float, point)), tuple(map(float, lo)), tuple(map(float, hi)))


def e_lambda_curve(
    outcomes: Sequence[Outcome],
    source: str,
    *,
    lambdas: Sequence[float] = LAMBDAS,
    n_draws: int = 10_000,
    seed: int = 0,
) -> Curve:
    """E_λ of one run and source over ``lambdas`` with 95% percentile intervals (seed 000 §E.1, Figure 5).

    Args:
        outcomes: a run's outcomes.
        source: the source to use.
        lambdas: weights λ in [0, 1] on supported rejection.
        n_draws: group-bootstrap draws (0: no intervals, lo/hi NaN).
        seed: seed of the draws.

    Raises:
        VqauditError: the source has no outcomes, or a λ outside [0, 1].
    """
    _check_lambdas(lambdas)
    counts = group_counts(outcomes).for_source(source).matrix
    point = _e_lambda_values(counts.sum(axis=0), lambdas)
    draws = _e_lambda_values(bootstrap_totals(counts, n_draws=n_draws, seed=seed), lambdas)
    return _curve(point, draws, lambdas)


def e_lambda_paired(
    outcomes_a: Sequence[Outcome],
    outcomes_b: Sequence[Outcome],
    source: str,
    *,
    lambdas: Sequence[float] = LAMBDAS,
    n_draws: int = 10_000,
    seed: int = 0,
) -> Curve:
    """Paired difference ``E_λ(A) - E_λ(B)`` over ``lambdas`` with 95% intervals from the same group draws.

    Seed 000 §4 and §E.1: both runs are weighted group by group with one draw, so the band is the paired
    difference interval (it includes zero where the ranking is not resolved).

    Raises:
        VqauditError: the runs do not hold the same groups of ``source``, or a λ outside [0, 1].
    """
    _check_lambdas(lambdas)
    a, b = group_counts(outcomes_a).for_source(source), group_counts(outcomes_b).for_source(source)
    if a.group_ids != b.group_ids or a.matrix[:, 0].tolist() != b.matrix[:, 0].tolist():
        raise VqauditError(f"E_lambda paired difference needs the same groups and views in both runs ({source!r})")
    point = _e_lambda_values(a.matrix.sum(axis=0), lambdas) - _e_lambda_values(b.matrix.sum(axis=0), lambdas)
    width = a.matrix.shape[1]
    totals = bootstrap_totals(np.concatenate([a.matrix, b.matrix], axis=1), n_draws=n_draws, seed=seed)
    draws = _e_lambda_values(totals[:, :width], lambdas) - _e_lambda_values(totals[:, width:], lambdas)
    return _curve(point, draws, lambdas)


def _check_lambdas(lambdas: Sequence[float]) -> None:
    if not lambdas or any(not 0.0 <= lam <= 1.0 for lam in lambdas):
        raise VqauditError(f"lambda values must lie in [0, 1], got {list(lambdas)}")


@dataclass(frozen=True)
class StratumRow:
    """One line of seed 000 Table 9: a stratum's part (all / without / only flagged groups) and its metrics."""

    stratum: str
    part: str
    n_groups: int
    n_views: int
    metrics: Mapping[str, Any]


def residual_cue_rows(diagnostics: Mapping[str, Any]) -> list[StratumRow]:
    """Seed 000 Table 9 rows from ``diagnostics.json["photos"]["residual_cues"]`` (empty when absent).

    Raises:
        VqauditError: the entry exists but is not shaped as ``vqaudit score`` writes it.
    """
    cues = (diagnostics.get("photos") or {}).get("residual_cues")
    if cues is None:
        return []
    if not isinstance(cues, dict):
        raise VqauditError("diagnostics.json: field 'photos.residual_cues' is not an object")
    rows = []
    for stratum in sorted(cues):
        entry = cues[stratum]
        for part in ("all", "without", "only"):
            m = entry.get(part) if isinstance(entry, dict) else None
            if m is None:
                continue
            if not isinstance(m, dict) or not isinstance(m.get("n_groups"), int):
                raise VqauditError(f"diagnostics.json: field 'photos.residual_cues.{stratum}.{part}' is malformed")
            rows.append(
                StratumRow(
                    stratum=stratum, part=part, n_groups=m["n_groups"], n_views=int(m.get("n_views") or 0), metrics=m
                )
            )
    return rows


@dataclass(frozen=True)
class AbilityTable:
    """Seed 001 Tables D-O for one configuration: per ability (Table A order), Standard / UPD / Dual in [0, 1]."""

    variant: str
    setting: str
    abilities: tuple[tuple[int | None, str], ...]
    values: dict[str, tuple[float | None, ...]]
    n_items: tuple[int, ...]


def upd_ability_tables(upd_metrics: Mapping[str, Any]) -> list[AbilityTable]:
    """One :class:`AbilityTable` per configuration of ``metrics.json["upd"]`` (AAD, IASD, IVQD x settings).

    Raises:
        VqauditError: ``configs`` is missing or a configuration is not an object.
    """
    configs = upd_metrics.get("configs")
    if not isinstance(configs, dict):
        raise VqauditError("metrics.json: field 'upd.configs' is missing or not an object")
    rank = {s: i for i, s in enumerate(("original", "base", "option", "instruction"))}
    variants = ("aad", "iasd", "ivqd")
    tables = []
    for key in sorted(
        configs,
        key=lambda k: (
            variants.index(k.split("/")[0]) if k.split("/")[0] in variants else 9,
            rank.get(k.split("/")[-1], 9),
            k,
        ),
    ):
        c = configs[key]
        if not isinstance(c, dict) or not isinstance(c.get("per_ability"), dict):
            raise VqauditError(f"metrics.json: field 'upd.configs.{key}.per_ability' is missing or not an object")
        per = c["per_ability"]
        names = sorted(per, key=lambda a: (_int_or(per[a].get("ability_index"), 99), a))
        tables.append(
            AbilityTable(
                variant=str(c.get("variant", key.split("/")[0])),
                setting=str(c.get("setting", key.split("/")[-1])),
                abilities=tuple((_int_or(per[a].get("ability_index"), None), a) for a in names),
                values={k: tuple(_num(per[a].get(k)) for a in names) for k in ("standard", "upd", "dual")},
                n_items=tuple(_int_or(per[a].get("n_items"), 0) or 0 for a in names),
            )
        )
    return tables


def _int_or(value: object, default: int | None) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
