"""Option types and helpers every command group shares: one meaning per option name.

Model options are generic: ``--model-arg KEY=VALUE`` (repeatable) reaches the backend as it is (each backend
refuses keys it does not take), as inspect_ai's ``-M`` and lm-eval's ``--model_args`` do; ``--api-key-env``,
``--timeout`` and ``--max-retries`` apply to every backend they make sense for. Commands with both a model and a
judge give the judge its own ``--judge-arg``. The help layout is :mod:`vqaudit.cli.help_format`; the choice
options of the short-answer commands are :mod:`vqaudit.cli.audit_options`.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vqaudit.errors import VqauditError

if TYPE_CHECKING:  # imported where used: `vqaudit --help` builds no backend model and no executor
    from rich.console import Console

    from vqaudit.backends import ModelOptions
    from vqaudit.executors import Executor


class _StderrConsole:
    """rich's ``Console(stderr=True, soft_wrap=True)``, made at the first ``print``.

    So ``rich.console`` is not imported by a command that prints nothing through it, such as ``--help``.
    """

    def __init__(self) -> None:
        self._made: Console | None = None

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """``Console.print`` on stderr."""
        if self._made is None:
            from rich.console import Console

            self._made = Console(stderr=True, soft_wrap=True)
        self._made.print(*objects, **kwargs)


console = _StderrConsole()

Concurrency = Annotated[int, typer.Option(min=1, help="Concurrent model calls.")]
ApiKeyEnv = Annotated[
    str | None,
    typer.Option(
        help="Environment variable holding the API key of an HTTP backend "
        "(default: the backend's own variable; docs/backends.md)."
    ),
]
ModelArg = Annotated[
    list[str] | None,
    typer.Option(
        "--model-arg",
        help="Backend option KEY=VALUE for the model "
        "(repeatable), e.g. device=cpu, or a "
        "generation setting: max_tokens=4096, "
        "enable_thinking=false (docs/backends.md).",
    ),
]
JudgeArg = Annotated[
    list[str] | None,
    typer.Option("--judge-arg", help="Backend option KEY=VALUE for the judge (repeatable), e.g. max_tokens=1024."),
]
MAX_TIMEOUT_S = 86_400.0
"""The largest ``--timeout``: one day per call attempt (a finite bound: ``inf`` overflows the event loop's timer)."""
MAX_DRAWS = 1_000_000
"""The most ``--draws``: 10^6 bootstrap draws (100x the papers' 10,000; more would only exhaust memory)."""
MAX_GROUPS = 1_000_000
"""The most ``--groups`` a build makes: 10^6 (a larger number runs for hours before writing anything)."""

Timeout = Annotated[
    float, typer.Option(min=0.001, max=MAX_TIMEOUT_S, help="Seconds one call attempt may take (at most 86400).")
]
MaxRetries = Annotated[int, typer.Option(min=0, help="Retries after a failed attempt (429, 5xx, timeouts).")]
EndpointOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--endpoint",
        help="Another server of a KIND:MODEL@URL model "
        "whose backend takes several (repeatable): "
        "the spec becomes KIND:MODEL@URL,URL2,...",
    ),
]
Draws = Annotated[
    int,
    typer.Option(
        min=1, max=MAX_DRAWS, help="Group-bootstrap draws per 95% interval (seed 000 §4: 10,000; at most 10^6)."
    ),
]
BootSeed = Annotated[int, typer.Option("--bootstrap-seed", min=0, help="Seed of the bootstrap draws.")]
Workers = Annotated[int, typer.Option(min=1, help="Processes (output does not depend on it).")]


class ReasoningFormatName(StrEnum):
    """``--reasoning-format``: the reasoning spans split off before any reader (:mod:`vqaudit.parsing.reasoning`)."""

    auto = "auto"
    none = "none"
    think = "think"
    thinking = "thinking"
    reasoning = "reasoning"
    kimi = "kimi"
    thought = "thought"
    think_open = "think-open"
    thinking_open = "thinking-open"
    reasoning_open = "reasoning-open"
    kimi_open = "kimi-open"
    thought_open = "thought-open"


ReasoningFormatOpt = Annotated[
    ReasoningFormatName,
    typer.Option(
        "--reasoning-format",
        help="Reasoning spans split off before scoring: auto (every known format), none (for "
        "answers that legitimately hold the tags), or one of think, thinking, reasoning, "
        "kimi, thought, or NAME-open (think-open: the chat template opens the span, so a "
        "reply without </think> never finished thinking; auto detects it); the thinking is "
        "never scored.",
    ),
]


class ExecutorName(StrEnum):
    """``--executor``: where the parallel maps (and, for ``run``, the model) run (:mod:`vqaudit.executors`)."""

    local = "local"
    ray = "ray"


ExecutorOpt = Annotated[
    ExecutorName,
    typer.Option(
        "--executor",
        help="local (this machine's processes) or ray (a Ray cluster; pip install 'vqaudit[ray]'). Same output bytes.",
    ),
]
RayAddress = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help="Ray cluster head HOST:PORT (or auto) for --executor ray (default: start a local Ray instance).",
    ),
]
RayReplicas = Annotated[
    int | None,
    typer.Option(
        "--ray-replicas",
        min=1,
        help="Model replicas (Ray actors) for --executor ray (default: as many as the cluster holds).",
    ),
]


def out_folder(text: str) -> Path:
    """The ``--out`` folder of ``audit``, ``perturb`` and ``audit-summary``, as a path; refuse an empty name.

    ``Path("")`` is the current folder, so ``--out ''`` (an unset shell variable, say) wrote the report among the
    user's own files (seen by a new user). Empty and whitespace-only names are refused.

    Raises:
        typer.BadParameter: ``text`` is empty or only whitespace (the CLI prints one line, exit 2).
    """
    if not text.strip():
        raise typer.BadParameter(
            f"{text!r} names no folder (an empty path would mean the current folder); give the output folder's name"
        )
    return Path(text)


def executor(name: ExecutorName, ray_address: str | None) -> Executor:
    """The executor of ``--executor`` / ``--ray-address`` (:func:`vqaudit.executors.make_executor`).

    Raises:
        VqauditError: ``--ray-address`` without ``--executor ray``.
    """
    from vqaudit.executors import make_executor

    return make_executor(name.value, ray_address)


def model_executor(name: ExecutorName, ray_address: str | None, ray_replicas: int | None) -> Executor:
    """The executor of a command that runs a model (``run``, ``eval``): :func:`executor`, and ``--ray-replicas``.

    Raises:
        VqauditError: ``--ray-address`` or ``--ray-replicas`` without ``--executor ray``.
    """
    on = executor(name, ray_address)
    if ray_replicas is not None and on.name != "ray":
        raise VqauditError("--ray-replicas applies only to --executor ray")
    return on


class PhotoInput(StrEnum):
    """``build photos --input``: which annotation layout the photos come with."""

    coco = "coco"
    gqa = "gqa"


class MaskKind(StrEnum):
    """``build photos --mask``: how the evidence region is removed."""

    fill = "fill"
    blur = "blur"
    inpaint = "inpaint"


def _names_enum(name: str, values: tuple[str, ...]) -> type[StrEnum]:
    enum: type[StrEnum] = StrEnum(name, {v.replace("-", "_"): v for v in values})  # type: ignore[misc]
    return enum


def model_options(
    *,
    api_key_env: str | None = None,
    concurrency: int = 8,
    timeout: float = 120.0,
    max_retries: int = 5,
    args: list[str] | None = None,
    args_option: str = "--model-arg",
) -> ModelOptions:
    """The :class:`~vqaudit.backends.ModelOptions` of the generic CLI options.

    ``args_option`` is the option ``args`` were given with (``--judge-arg`` for a judge), named in their errors.

    Raises:
        VqauditError: a bad ``--model-arg`` pair (no ``=``, a blank key, a key given twice), or an explicitly
            named ``--api-key-env`` that is unset.
    """
    from vqaudit.backends import ModelOptions, parse_model_args

    check_key_env(api_key_env)
    return ModelOptions(
        api_key_env=api_key_env,
        concurrency=concurrency,
        timeout_s=timeout,
        max_retries=max_retries,
        args=parse_model_args(args or [], args_option),
        args_option=args_option,
    )


def with_endpoints(spec: str, endpoints: list[str] | None) -> str:
    """``spec`` with the ``--endpoint`` URLs appended (``KIND:M@URL`` + ``--endpoint URL2``: ``KIND:M@URL,URL2``).

    The result is the spec as written for the cache key and ``run.json`` (so resume with the same list).

    Raises:
        VqauditError: ``--endpoint`` with a spec whose backend table row does not take several endpoints (or a
            malformed spec), or a URL with a comma or whitespace.
    """
    if not endpoints:
        return spec
    from vqaudit.backends import BACKENDS, backend_kind

    if not backend_kind(spec).endpoints:
        several = ", ".join(f"{r.name}:" for r in BACKENDS.values() if r.endpoints)
        raise VqauditError(
            f"--endpoint: the model {spec!r} has one endpoint; only a KIND:MODEL@URL model of a "
            f"backend that takes several has more ({several})"
        )
    for url in endpoints:
        if not url or "," in url or any(c.isspace() for c in url):
            raise VqauditError(f"--endpoint {url!r}: expected one http:// or https:// URL")
    return ",".join([spec, *endpoints])


def check_key_env(name: str | None) -> None:
    """An explicitly named API-key variable that is unset is a mistake, not a request to send no key.

    None (no ``--api-key-env``) reads the backend's own variables, which may be unset (a local server wants no
    key).
    """
    if name is not None and not os.environ.get(name):
        raise VqauditError(f"--api-key-env {name}: that environment variable is not set")


def error(message: str) -> None:
    """Print one plain error line (no markup, no traceback) on stderr."""
    typer.echo(f"error: {message}", err=True)


def warning(message: str) -> None:
    """Print one plain notice line on stderr: something the user should know that did not fail the command."""
    typer.echo(f"warning: {message}", err=True)
