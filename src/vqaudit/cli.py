"""The ``vqaudit`` command line: build, run, score, report, eval (all four), verify.

Every stage reads and writes folders, so any stage can be rerun alone. A :class:`VqauditError` is printed as
one line without a traceback and the command exits with status 2.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from vqaudit.cli_audit import audit_certifier_cmd
from vqaudit.cli_leaks import audit_leaks_cmd  # issue 20: temporary wiring
from vqaudit.cli_shortanswer import audit_cmd, audit_summary_cmd, perturb_cmd
from vqaudit.cli_upd import DEFAULT_EVAL_ITEMS, build_upd_cmd, eval_upd, export_tuning_cmd
from vqaudit.errors import VqauditError

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Audit answerability of vision-language models.")
build_app = typer.Typer(no_args_is_help=True, help="Build a benchmark folder.")
app.add_typer(build_app, name="build")
build_app.command("upd")(build_upd_cmd)
app.command("export-tuning")(export_tuning_cmd)
app.command("audit-certifier")(audit_certifier_cmd)
app.command("audit")(audit_cmd)
app.command("perturb")(perturb_cmd)
app.command("audit-summary")(audit_summary_cmd)
app.command("audit-leaks")(audit_leaks_cmd)  # issue 20: temporary wiring
console = Console(stderr=True, soft_wrap=True)

DEFAULT_MODELS = ("reference:always-answer", "reference:always-abstain", "reference:gold")

Concurrency = Annotated[int, typer.Option(min=1, help="Concurrent model calls.")]
ApiKeyEnv = Annotated[str, typer.Option(help="Environment variable holding the API key (openai backend).")]


def _progress(total: int, label: str) -> Progress:
    progress = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                        disable=not sys.stderr.isatty())
    progress.add_task(label, total=total)
    return progress


def _build_charts(out: Path, groups: int, seed: int, workers: int, programs: str = "lookup",
                  determined: bool = False) -> None:
    from vqaudit.suites.charts.build import build_charts

    with _progress(groups, "building chart groups") as progress:
        task = progress.task_ids[0]
        build_charts(out, groups, seed, workers=workers, programs=programs, determined=determined,
                     on_group=lambda n: progress.update(task, completed=n))


@build_app.command("charts")
def build_charts_cmd(
    out: Annotated[Path, typer.Option(help="Output benchmark folder (new or empty).")],
    groups: Annotated[int, typer.Option(min=1, help="Number of question groups (5 views each).")] = 100,
    seed: Annotated[int, typer.Option(min=0, help="Build seed; the same seed gives byte-identical output.")] = 0,
    workers: Annotated[int, typer.Option(min=1, help="Rendering processes (output does not depend on it).")] = 1,
    programs: Annotated[str, typer.Option(help="'lookup' (the paper's question) or 'all' program kinds.")] = "lookup",
    determined: Annotated[bool, typer.Option(help="Add D views: masked, answer still determined (proved).")] = False,
) -> None:
    """Build a chart answerability benchmark from the bundled real tables."""
    _build_charts(out, groups, seed, workers, programs, determined)
    console.print(f"benchmark written to {out}")


def _build_scenes(out: Path, groups: int, seed: int, workers: int, determined: bool = False) -> None:
    from vqaudit.suites.scenes.build import build_scenes

    with _progress(groups, "building scene groups") as progress:
        task = progress.task_ids[0]
        build_scenes(out, groups, seed, workers=workers, allow_determined=determined,
                     on_group=lambda n: progress.update(task, completed=n))


@build_app.command("scenes")
def build_scenes_cmd(
    out: Annotated[Path, typer.Option(help="Output benchmark folder (new or empty).")],
    groups: Annotated[int, typer.Option(min=1, help="Number of question groups (4 views each).")] = 100,
    seed: Annotated[int, typer.Option(min=0, help="Build seed; the same seed gives byte-identical output.")] = 0,
    workers: Annotated[int, typer.Option(min=1, help="Rendering processes (output does not depend on it).")] = 1,
    determined: Annotated[bool, typer.Option(help="Keep groups whose occluded view still determines the answer "
                                                  "(labelled answerable); default redraws them, as in the paper.")]
    = False,
) -> None:
    """Build a CLEVR scene answerability benchmark (original, S, C, M) from bundled real scene graphs."""
    _build_scenes(out, groups, seed, workers, determined)
    console.print(f"benchmark written to {out}")


def _build_photos(out: Path, groups: int, seed: int, workers: int, *, source: str = "coco",
                  images: Path | None = None, annotations: Path | None = None, questions: Path | None = None,
                  mask: str = "fill", matched: bool = False) -> None:
    from vqaudit.suites.photos.build import build_photos

    with _progress(groups, "building photo groups") as progress:
        task = progress.task_ids[0]
        build_photos(out, groups, seed, workers=workers, source=source, images_dir=images, annotations=annotations,
                     questions=questions, mask=mask, matched=matched,
                     on_group=lambda n: progress.update(task, completed=n))


@build_app.command("photos")
def build_photos_cmd(
    out: Annotated[Path, typer.Option(help="Output benchmark folder (new or empty).")],
    source: Annotated[str, typer.Option(help="coco (COCO instances; default: bundled public-domain photos) or gqa.")]
    = "coco",
    groups: Annotated[int, typer.Option(min=1, help="Number of question groups (3 views each; 4 with --matched).")]
    = 40,
    seed: Annotated[int, typer.Option(min=0, help="Build seed; the same seed gives byte-identical output.")] = 0,
    workers: Annotated[int, typer.Option(min=1, help="Processes (output does not depend on it).")] = 1,
    images: Annotated[Path | None, typer.Option(help="Image folder (COCO or GQA).")] = None,
    annotations: Annotated[Path | None, typer.Option(help="COCO instances JSON, or GQA scene graphs JSON.")] = None,
    questions: Annotated[Path | None, typer.Option(help="GQA questions JSON (--source gqa).")] = None,
    mask: Annotated[str, typer.Option(help="fill, blur or inpaint.")] = "fill",
    matched: Annotated[bool, typer.Option(help="Add an appearance-matched control (same masks, elsewhere).")]
    = False,
) -> None:
    """Build a photo answerability benchmark (original, control, M) with object-box masks."""
    _build_photos(out, groups, seed, workers, source=source, images=images, annotations=annotations,
                  questions=questions, mask=mask, matched=matched)
    console.print(f"benchmark written to {out}")


@app.command()
def run(
    bench: Annotated[Path, typer.Argument(help="Benchmark folder.")],
    model: Annotated[str, typer.Option(help="Model spec, e.g. reference:gold or openai:NAME@http://HOST:PORT/v1.")],
    out: Annotated[Path, typer.Option(help="Run folder (rerunning into it resumes).")],
    concurrency: Concurrency = 8,
    retry_errors: Annotated[bool, typer.Option(help="Ask again views whose recorded reply is an error.")] = False,
    api_key_env: ApiKeyEnv = "OPENAI_API_KEY",
) -> None:
    """Ask a model about every view of a benchmark; each reply is cached before anything is scored."""
    from vqaudit.run import run_benchmark

    _check_key_env(api_key_env)
    summary = run_benchmark(bench, model, out, concurrency=concurrency, retry_errors=retry_errors,
                            progress=sys.stderr.isatty(), backend_options={"api_key_env": api_key_env})
    console.print(f"{summary.n_views} views: {summary.n_cached} already cached, {summary.n_asked} requests sent "
                  f"(views with identical inputs share one request), {summary.n_errors} with a recorded error; "
                  f"run folder {out}")
    if summary.n_errors:
        _error(f"{summary.n_errors} views have no reply, only a recorded error; fix the cause and rerun with "
               "--retry-errors (scoring would count them as invalid)")
        raise typer.Exit(1)


@app.command()
def score(
    run_dir: Annotated[Path, typer.Argument(help="Run folder.")],
    judge: Annotated[str | None, typer.Option(help="Judge model spec for UPD replies the matcher cannot decide.")]
    = None,
) -> None:
    """Parse and score a run; write outcomes.jsonl, metrics.json and diagnostics.json."""
    from vqaudit.score import score_run

    metrics = score_run(run_dir, judge=judge)
    for source, m in metrics.items():
        if source == "upd":
            console.print("upd: see metrics.json (Standard, UPD and Dual accuracy per setting and ability)")
            continue
        console.print(f"{source}: Jk={m['Jk']:.3f} Bk={m['Bk']:.3f} Ebal={m['Ebal']:.3f} "
                      f"invalid={m['invalid_rate']:.3f} ({m['n_groups']} groups)")
    console.print(f"metrics written to {run_dir / 'metrics.json'}")


@app.command()
def report(
    runs: Annotated[list[Path], typer.Argument(help="Scored run folders to compare.")],
    out: Annotated[Path | None, typer.Option(help="Report folder (default: the first run's report/).")] = None,
) -> None:
    """Write a Markdown table comparing runs and a PNG chart of Jk/Bk (or UPD radar charts) with intervals."""
    from vqaudit.report import write_report
    from vqaudit.report.upd import write_upd_report
    from vqaudit.store import read_json

    target = out or runs[0] / "report"
    upd = [r for r in runs if "upd" in read_json(r / "metrics.json")] if all(
        (r / "metrics.json").is_file() for r in runs) else []
    if upd:
        typer.echo(f"UPD report: {write_upd_report(upd, target / 'upd')}")
    if len(upd) < len(runs):
        typer.echo(f"report: {write_report([r for r in runs if r not in upd], target)}")


@app.command()
def verify(
    bench: Annotated[Path, typer.Argument(help="Benchmark folder.")],
    workers: Annotated[int, typer.Option(min=1, help="Re-rendering processes.")] = 2,
) -> None:
    """Re-check every image hash, witness certificate, proof and scene label; exit 1 listing every fault."""
    from vqaudit.verify import count_checked, verify_benchmark

    faults = verify_benchmark(bench, workers=workers)
    if faults:
        for view_id, problem in faults:
            typer.echo(f"FAIL {view_id}: {problem}")
        raise typer.Exit(1)
    counts = ", ".join(f"{n} {what}" for what, n in count_checked(bench).items())
    typer.echo(f"{bench}: every image matches views.jsonl; verified {counts}")


@app.command("audit-checker")
def audit_checker(
    bench: Annotated[Path, typer.Argument(help="A built chart benchmark.")],
    max_views: Annotated[int, typer.Option(min=2, help="Masked views to make faults from (9 faults each).")] = 12,
    workers: Annotated[int, typer.Option(min=1, help="Re-rendering processes.")] = 2,
) -> None:
    """Inject designed faults into genuine certificates; exit 1 unless the checker rejects every one."""
    from vqaudit.verify import run_fault_suite

    table = run_fault_suite(bench, max_views=max_views, workers=workers)
    typer.echo("| fault kind | designed | rejected |\n|---|---|---|")
    for kind, (n, rejected) in table.items():
        label = "genuine (accepted)" if kind == "genuine" else kind
        typer.echo(f"| {label} | {n} | {rejected} |")
    faults = {k: v for k, v in table.items() if k != "genuine"}
    ok = all(n == r for n, r in faults.values()) and table["genuine"][0] == table["genuine"][1]
    if not ok:
        raise typer.Exit(1)


def _check_key_env(name: str) -> None:
    """An explicitly named API-key variable that is unset is a mistake, not a request to send no key."""
    import os

    if name != "OPENAI_API_KEY" and not os.environ.get(name):
        raise VqauditError(f"--api-key-env {name}: that environment variable is not set")


def _slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", spec).strip("_")


def run_folder_names(specs: list[str]) -> list[str]:
    """Readable, distinct run-folder names for model specs (a short hash is added where two names would clash)."""
    slugs = [_slug(s) for s in specs]
    return [f"{slug}-{hashlib.sha256(spec.encode()).hexdigest()[:8]}" if slugs.count(slug) > 1 else slug
            for slug, spec in zip(slugs, specs, strict=True)]


def _check_reused_bench(bench_dir: Path, source: str, groups: int | None, seed: int | None) -> None:
    """Refuse to silently reuse an existing benchmark that does not match what the options ask for."""
    from vqaudit.store import read_json

    manifest = read_json(bench_dir / "manifest.json")
    got = manifest.get("source") if isinstance(manifest, dict) else None
    if got != source:
        raise VqauditError(f"{bench_dir}: holds a {got!r} benchmark, not {source!r}")
    other_groups = groups is not None and manifest.get("n_groups") != groups
    if other_groups or (seed is not None and manifest.get("seed") != seed):
        raise VqauditError(f"{bench_dir}: already holds a benchmark with {manifest.get('n_groups')} groups and seed "
                           f"{manifest.get('seed')}; choose another --out to build a different one")


@app.command("eval")
def eval_cmd(
    source: Annotated[str, typer.Argument(help="What to evaluate: charts, scenes, photos (answerability) or upd.")]
    = "charts",
    out: Annotated[Path | None, typer.Option(help="Evaluation folder (default runs/SOURCE): bench/, runs/, report/.")]
    = None,
    model: Annotated[list[str] | None, typer.Option(help="Model spec; repeat for several.")] = None,
    bench: Annotated[Path | None, typer.Option(help="Existing benchmark folder (default: build one).")] = None,
    groups: Annotated[int | None, typer.Option(min=1, help="Groups to build when no --bench is given "
                                                        "(default: 60 charts, 12 scenes, 40 photos).")] = None,
    seed: Annotated[int | None, typer.Option(min=0, help="Build seed (default 0).")] = None,
    workers: Annotated[int, typer.Option(min=1, help="Rendering processes.")] = 2,
    concurrency: Concurrency = 8,
    api_key_env: ApiKeyEnv = "OPENAI_API_KEY",
    judge: Annotated[str | None, typer.Option(help="upd: judge model spec for undecided replies.")] = None,
    max_items: Annotated[int, typer.Option(min=1, help="upd: bundled input rows to use.")] = DEFAULT_EVAL_ITEMS,
) -> None:
    """Build (or reuse) a benchmark, run each model, score, and report: the main job in one command."""
    from vqaudit.report import write_report
    from vqaudit.run import run_benchmark
    from vqaudit.score import score_run

    _check_key_env(api_key_env)
    if source not in ("charts", "scenes", "photos", "upd"):
        raise VqauditError(f"unknown source {source!r}; expected charts, scenes, photos or upd")
    out = out or Path("runs") / source
    if source == "upd" and bench is not None:
        raise VqauditError("eval upd builds its benchmark from the bundled data; run `vqaudit run`, `score` and "
                           "`report` on a benchmark made with `vqaudit build upd --tsv FILE` instead of --bench")
    if source == "upd":
        path = eval_upd(out, list(model or DEFAULT_MODELS), judge, max_items=max_items, seed=seed or 0,
                        concurrency=concurrency, api_key_env=api_key_env)
        typer.echo(f"report: {path}")
        return
    bench_dir = bench or out / "bench"
    if (bench_dir / "manifest.json").is_file():
        _check_reused_bench(bench_dir, source, groups if bench is None else None, seed if bench is None else None)
    elif bench is None:
        if source == "charts":
            _build_charts(bench_dir, groups or 60, seed or 0, workers)
        elif source == "scenes":
            _build_scenes(bench_dir, groups or 12, seed or 0, workers)
        else:
            _build_photos(bench_dir, groups or 40, seed or 0, workers)
    specs = model or list(DEFAULT_MODELS)
    run_dirs = []
    for spec, name in zip(specs, run_folder_names(specs), strict=True):
        run_dir = out / "runs" / name
        run_benchmark(bench_dir, spec, run_dir, concurrency=concurrency, progress=sys.stderr.isatty(),
                      backend_options={"api_key_env": api_key_env})
        score_run(run_dir)
        run_dirs.append(run_dir)
    path = write_report(run_dirs, out / "report")
    typer.echo(path.read_text(encoding="utf-8").split("## Failure")[0].rstrip())
    typer.echo(f"\nreport: {path}")


def _error(message: str) -> None:
    """Print one plain error line (no markup, no traceback) on stderr."""
    typer.echo(f"error: {message}", err=True)


def main() -> None:
    """Console entry point: run the app; print a user error as one line (exit 2), never a traceback.

    Exit codes: 0 success; 1 a check failed (verify, audit-checker, audit-certifier) or a run ended with views
    whose reply is a recorded error; 2 a user error (bad input file, row or field, bad option, bad model spec);
    130 interrupted (rerun the same command to resume).
    """
    try:
        code = app(standalone_mode=False)
    except VqauditError as exc:
        _error(str(exc))
        sys.exit(2)
    except typer.TyperException as exc:  # usage errors: bad option, missing argument, ...
        _error(exc.format_message())
        sys.exit(exc.exit_code)
    except (OSError, sqlite3.DatabaseError, UnicodeDecodeError) as exc:  # file-system and storage problems
        _error(f"{type(exc).__name__}: {exc}")
        sys.exit(2)
    if code == 130:
        _error("interrupted; rerun the same command to resume")
    sys.exit(code if isinstance(code, int) else 0)
