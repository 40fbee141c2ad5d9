"""MM-UPD commands: plain typer command functions, registered by ``vqaudit.cli``.

- ``build_upd_cmd``: ``vqaudit build upd`` (an AAD/IASD/IVQD benchmark folder, bundled data by default);
- ``export_tuning_cmd``: ``vqaudit export-tuning`` (LLaVA instruction-tuning data, seed 001 §6);
- ``eval_upd``: ``vqaudit eval upd`` (build the bundled set if needed, run each model, score,
  report; returns the report path).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Annotated

import typer

from vqaudit.errors import VqauditError

DEFAULT_EVAL_ITEMS = 80
"""Rows of the bundled data the eval uses by default: the 20 MMBench samples and the first 60 easy-VQA items."""
DEFAULT_UPD_MODELS = ("reference:always-answer", "reference:always-abstain", "reference:gold")


def _slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", spec).strip("_")


def build_upd_cmd(
    out: Annotated[Path, typer.Option(help="Output benchmark folder (new or empty).")],
    tsv: Annotated[Path | None, typer.Option(help="MMBench-layout TSV (default: the bundled real data).")] = None,
    variant: Annotated[str, typer.Option(help="aad, iasd, ivqd, a comma list, or all.")] = "all",
    setting: Annotated[str, typer.Option(help="base, option, instruction, original, a comma list, or all.")] = "all",
    seed: Annotated[int, typer.Option(min=0, help="Seed of the IASD/IVQD pairings; same seed, same bytes.")] = 0,
    max_items: Annotated[int | None, typer.Option(min=1, help="Use only the first N input rows.")] = None,
) -> None:
    """Build an MM-UPD benchmark (AAD / IASD / IVQD, circular rotations) from an MMBench-layout TSV."""
    from vqaudit.suites.upd.build import build_upd

    manifest = build_upd(out, tsv=tsv, variant=variant, setting=setting, seed=seed, max_items=max_items)
    typer.echo(f"{manifest['n_groups']} groups, {manifest['n_views']} views written to {out}")


def _ratio(text: str) -> tuple[float, float, float]:
    parts = text.split(":")
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        raise VqauditError(f"--ratio must look like 6:2:2 (standard:AAD:IVQD), got {text!r}") from None
    if len(values) != 3:
        raise VqauditError(f"--ratio needs three parts (standard:AAD:IVQD), got {text!r}")
    return values[0], values[1], values[2]


def export_tuning_cmd(
    out: Annotated[Path, typer.Option(help="Output folder (new or empty).")],
    tsv: Annotated[Path | None, typer.Option(help="MMBench-layout TSV of training items (default: bundled "
                                                  "easy-VQA train items).")] = None,
    n: Annotated[int, typer.Option("-n", "--n", min=1, help="Number of samples.")] = 1000,
    ratio: Annotated[str, typer.Option(help="standard:AAD:IVQD mix.")] = "6:2:2",
    settings: Annotated[str, typer.Option(help="Comma list of base and/or option.")] = "base,option",
    seed: Annotated[int, typer.Option(min=0, help="Seed of every draw; same seed, same bytes.")] = 0,
) -> None:
    """Export UPD instruction-tuning data in the LLaVA conversation JSON format, with its images."""
    from vqaudit.suites.upd.tuning import TUNING_FILE, export_tuning

    manifest = export_tuning(out, tsv=tsv, n=n, ratio=_ratio(ratio),
                             settings=tuple(s.strip() for s in settings.split(",") if s.strip()), seed=seed)
    typer.echo(f"{manifest['counts']} samples written to {out / TUNING_FILE}")


def eval_upd(
    out: Path,
    models: list[str],
    judge: str | None,
    *,
    max_items: int | None = DEFAULT_EVAL_ITEMS,
    seed: int = 0,
    concurrency: int = 8,
    api_key_env: str = "OPENAI_API_KEY",
    n_draws: int = 10_000,
) -> Path:
    """Build the bundled MM-UPD set (if ``out/bench`` has none), run and score each model, write the report.

    Args:
        out: evaluation folder: ``bench/``, ``runs/<model>/``, ``report/``.
        models: model specs (empty: the three reference policies).
        judge: judge model spec for replies the strict matcher cannot decide, or None.
        max_items: bundled input rows to use (None: all 320).
        seed: build seed.
        concurrency: concurrent model calls.
        api_key_env: environment variable of the API key (openai backend).
        n_draws: bootstrap draws per interval.

    Returns:
        Path of ``out/report/upd_report.md``.

    Raises:
        VqauditError: a bad judge or model spec, or a reference policy as the judge (before anything is built
            or run), or from any stage (unreadable folder, fatal backend error).
    """
    from vqaudit.backends import load_backend, require_free_text_model
    from vqaudit.report.upd import write_upd_report
    from vqaudit.run import run_benchmark
    from vqaudit.score import score_run
    from vqaudit.suites.upd.build import build_upd

    if judge is not None:
        load_backend(judge)  # a bad judge spec fails here, before any model is run
        require_free_text_model(judge, "--judge")  # and so does a reference policy as the judge
    for spec in models:
        load_backend(spec, api_key_env=api_key_env)  # likewise for a bad model spec
    bench_dir = out / "bench"
    if not (bench_dir / "manifest.json").is_file():
        build_upd(bench_dir, tsv=None, variant="all", setting="all", seed=seed, max_items=max_items)
    run_dirs = []
    for spec in models or list(DEFAULT_UPD_MODELS):
        run_dir = out / "runs" / _slug(spec)
        run_benchmark(bench_dir, spec, run_dir, concurrency=concurrency, progress=sys.stderr.isatty(),
                      backend_options={"api_key_env": api_key_env})
        score_run(run_dir, n_draws=n_draws, judge=judge)
        run_dirs.append(run_dir)
    return write_upd_report(run_dirs, out / "report")
