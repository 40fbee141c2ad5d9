"""The choice options of the short-answer commands (``audit``, ``perturb``).

The prediction file's layout, the join key, MathVista's field read, and the benchmark and metric names, checked
against their tables when the command runs.
"""

from __future__ import annotations

from enum import StrEnum

import typer

from vqaudit.cli.options import _names_enum


class MathVistaRead(StrEnum):
    """``vqaudit audit --benchmark mathvista --read``: the field of MathVista's output read."""

    response = "response"
    extraction = "extraction"


class PredictionFormat(StrEnum):
    """``--format`` of a prediction file."""

    auto = "auto"
    generic = "generic"
    vlmevalkit = "vlmevalkit"
    lmms_eval = "lmms-eval"


class JoinOn(StrEnum):
    """``--join-on``: how predictions are matched to gold."""

    id = "id"
    question = "question"
    image_question = "image-question"


def _benchmark_names() -> tuple[str, ...]:
    from vqaudit.shortanswer.benchmarks import BENCHMARKS

    return tuple(BENCHMARKS)


def audit_benchmark_names() -> tuple[str, ...]:
    """The names ``vqaudit audit --benchmark`` takes now: the benchmark rows, then the multiple-choice layouts."""
    from vqaudit.shortanswer.benchmarks import MC_BENCHMARKS

    return (*_benchmark_names(), *MC_BENCHMARKS)


def _metric_names() -> tuple[str, ...]:
    from vqaudit.scoring.registry import METRICS

    return tuple(METRICS)


def _one_of(text: str, names: tuple[str, ...]) -> str:
    """``text`` lower-cased when it is one of ``names``, else refused as the CLI refuses an enum option.

    The message is the one ``--metric`` gives ("Value error, 'x' is not one of 'a', 'b'."), so every choice
    option is refused alike.
    """
    if text.lower() not in names:
        raise typer.BadParameter(f"Value error, {text!r} is not one of " + ", ".join(repr(n) for n in names) + ".")
    return text.lower()


def benchmark_name(text: str) -> str:
    """``--benchmark`` of ``perturb``: a row of :data:`vqaudit.shortanswer.benchmarks.BENCHMARKS`, lower-cased.

    Checked against the table as it is when the command runs, so a row added by :func:`register_benchmark`
    (a plugin, a test) is a valid name.

    Raises:
        typer.BadParameter: not a row (the CLI prints one line listing the names, exit 2).
    """
    return _one_of(text, _benchmark_names())


def audit_benchmark_name(text: str) -> str:
    """``--benchmark`` of ``vqaudit audit``: a short-answer benchmark, or a multiple-choice layout, lower-cased.

    The names are :func:`benchmark_name`'s and :data:`vqaudit.shortanswer.benchmarks.MC_BENCHMARKS`.

    Raises:
        typer.BadParameter: neither (the CLI prints one line listing the names, exit 2).
    """
    return _one_of(text, audit_benchmark_names())


MetricName = _names_enum("MetricName", _metric_names())
"""``--metric``: an official short-answer metric of :data:`vqaudit.scoring.registry.METRICS`."""
