"""Peak memory and CPU time of ``vqaudit audit`` on a generated prediction file of 5k, 50k and 500k rows.

Target (the audit must hold what it needs per row, not the file's raw records): at most 400 MB peak resident
memory at 500,000 rows. Each size is measured in a fresh process that runs the ``vqaudit audit`` command in
process and reports its own peak resident set (``getrusage(RUSAGE_SELF).ru_maxrss``, KiB on Linux) and CPU time
(user + system); the process's baseline after importing vqaudit is reported too, so the growth per row can be
read off. The files are generated in another child (Linux keeps ``ru_maxrss`` across ``fork`` and ``exec``: a
child of a parent holding the generated rows would start with the parent's peak).

Rows: TextVQA rows of the real fixture (LLaVA-1.5-13B answers joined with the TextVQA val gold,
``tests/fixtures/shortanswer``), perturbed as :func:`bench_audit.perturbed_pool` does (a random letter and digit
swap per row, applied to the prediction and every gold answer alike, so nearly every string is new and no memo
helps), written as a generic JSONL file with embedded gold: ``question_id``, ``question``, ``image_id``,
``prediction``, ``answers`` (the 10 annotator answers). The files are generated into a temporary folder (not
committed) and removed at the end unless ``--keep DIR`` is given.

``vqaudit import-predictions`` is measured the same way (a fresh process, peak RSS, CPU) on an lmms-eval samples
log at ``--import-views`` views (default 5,000, 50,000 and 500,000; the same 400 MB target at 500,000 views).
The benchmark folder and its log are written directly by the generator child (:func:`write_import_log`: the
files ``vqaudit build`` and ``--log_samples`` write, charts-source groups of 3 views as
``tests/harness/helpers.py`` makes them, 16 shared 4x4 PNG images; a build and ``vqaudit export`` of 500,000
views take far longer than the import). ``--src DIR`` measures the vqaudit at ``DIR`` (another checkout's
``src``) on the same files, for a before / after.

Last measured (2-core machine, load average about 2; docs/shortanswer.md, "Packed rows"): audit 115 MB /
1.5 CPU-s at 5,000 rows, 181 MB / 8.4 s at 50,000, 371 MB / 92.2 s at 500,000 (was 839 MB), about 0.42 KB a row
of growth from 50,000 to 500,000; import-predictions ("Import in bounded memory"), before / after: 77 / 67 MB
and 1.3 / 0.9 CPU-s at 4,998 views, 237 / 77 MB and 12.1 / 9.1 s at 49,998, 1,826 / 164 MB and 123.6 / 93.7 s at
499,998 (3.6 KB a view over the imports before, 0.2 KB after: the view ids and line offsets).

Run: ``.venv/bin/python benchmarks/bench_audit_memory.py [--rows [5000 50000 500000]] [--import-views [5000 50000
500000]] [--src DIR] [--keep DIR]``. Exit 1 ("TARGET MISSED") if a measurement at 500,000 rows or views or more
reaches :data:`TARGET_MB`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_MB = 400.0
TARGET_ROWS = 500_000
ROOT = Path(__file__).resolve().parents[1]


def write_predictions(path: Path, rows: int) -> int:
    """Write ``rows`` generated TextVQA prediction rows to ``path`` (JSONL); return the file's size in bytes."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_audit import load_rows, perturbed_pool

    real = {"textvqa": load_rows()["textvqa"]}
    pool = perturbed_pool(real, rows)["textvqa"]
    with path.open("w", encoding="utf-8") as handle:
        for i, row in enumerate(pool, start=1):
            handle.write(
                json.dumps(
                    {
                        "question_id": i,
                        "question": row.question,
                        "image_id": row.image,
                        "prediction": row.prediction,
                        "answers": list(row.answers),
                    }
                )
                + "\n"
            )
    return path.stat().st_size


def write_import_log(folder: Path, views: int) -> tuple[Path, Path]:
    """A benchmark of ``views // 3`` groups in ``folder/bench`` and its lmms-eval samples log; returns both paths.

    Written directly, line by line (a build and ``vqaudit export`` of 500,000 views take far longer than the
    import): the files ``vqaudit build`` writes (``store.write_benchmark``: ``views.jsonl`` and ``groups.jsonl``
    one record a line, ``manifest.json`` with ``files`` and both files' SHA-256, which the import checks), the
    views as ``tests/harness/helpers.py::write_tiny_benchmark`` makes them (charts-source groups of 3 views, one
    answerable, two negative) but sharing 16 tiny 4x4 PNG images (the import hashes each view's image, as ``vqaudit
    run`` does), and the flat samples lmms-eval's ``--log_samples`` writes for the export (``doc_id`` = the view's
    position, ``target`` = its id, ``input`` = its prompt, one reply each).
    """
    import hashlib

    sys.path.insert(0, str(ROOT / "tests"))
    from harness import helpers
    from vqaudit.files import sha256_bytes, write_json
    from vqaudit.schema import Group, Obligation, View
    from vqaudit.suites.registry import prompt_for
    from vqaudit.textsafe import model_json_line

    bench = folder / "bench"
    (bench / "images").mkdir(parents=True)
    images = []
    for k in range(16):
        data = helpers.tiny_png(k)
        (bench / "images" / f"i{k}.png").write_bytes(data)
        images.append((f"images/i{k}.png", sha256_bytes(data)))
    digests = {"views": hashlib.sha256(), "groups": hashlib.sha256()}
    log = folder / "samples.jsonl"
    n_groups = max(1, views // 3)
    with (
        (bench / "views.jsonl").open("w", encoding="utf-8") as v_out,
        (bench / "groups.jsonl").open("w", encoding="utf-8") as g_out,
        log.open("w", encoding="utf-8") as l_out,
    ):
        for g in range(n_groups):
            ids = []
            for k in range(3):
                view_id = f"g{g}-v{k}"
                image, digest = images[(3 * g + k) % 16]
                view = View(
                    view_id=view_id,
                    group_id=f"g{g}",
                    source="charts",
                    state="original" if k == 0 else "M",
                    image=image,
                    image_sha256=digest,
                    question=f"What is bar {g}?",
                    obligation=Obligation(kind="answer", gold=(str(10 * g),), answer_type="number")
                    if k == 0
                    else Obligation(kind="abstain"),
                )
                line = model_json_line(view) + "\n"
                v_out.write(line)
                digests["views"].update(line.encode("utf-8"))
                reply = f'{{"answerable": false, "answer": null, "reason": "{view_id}"}}'
                sample = {"doc_id": 3 * g + k, "target": view_id, "filtered_resps": reply, "input": prompt_for(view)[1]}
                l_out.write(json.dumps(sample) + "\n")
                ids.append(view_id)
            group = Group(group_id=f"g{g}", source="charts", question=f"What is bar {g}?", view_ids=tuple(ids))
            line = model_json_line(group) + "\n"
            g_out.write(line)
            digests["groups"].update(line.encode("utf-8"))
    write_json(
        bench / "manifest.json",
        {
            "format": "vqaudit-benchmark/1",
            "source": "charts",
            "n_views": 3 * n_groups,
            "n_groups": n_groups,
            "files": dict(sorted(images)),
            "views_sha256": digests["views"].hexdigest(),
            "groups_sha256": digests["groups"].hexdigest(),
        },
    )
    return bench, log


def run_in_process(argv: list[str]) -> None:
    """Run the ``vqaudit`` command line ``argv`` in this process; print its peak RSS (MB), CPU seconds and the
    import baseline as one JSON line."""
    import vqaudit.cli
    import vqaudit.harness  # noqa: F401 - the baseline includes what import-predictions imports
    import vqaudit.shortanswer.audit  # noqa: F401 - the baseline includes what the audit imports

    base_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    cpu0 = time.process_time()
    wall0 = time.perf_counter()
    from typer.main import get_command

    command = get_command(vqaudit.cli.app)
    with open(os.devnull, "w") as sink:
        saved, sys.stdout = sys.stdout, sink
        try:
            command.main(["--quiet", *argv], standalone_mode=False)
        finally:
            sys.stdout = saved
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "peak_mb": usage.ru_maxrss / 1024,
                "base_mb": base_mb,
                "cpu_s": time.process_time() - cpu0,
                "wall_s": time.perf_counter() - wall0,
            }
        )
    )


def child(predictions: Path, out: Path) -> None:
    """Run ``vqaudit audit`` in this process; print its peak RSS (MB), CPU seconds and the import baseline."""
    run_in_process(["audit", str(predictions), "--benchmark", "textvqa", "--out", str(out)])


def measure(predictions: Path, out: Path, *, bench: Path | None = None, src: Path = ROOT / "src") -> dict[str, float]:
    """Run :func:`child` (with ``bench``: ``import-predictions`` of the lmms-eval log ``predictions`` into the run
    folder ``out``) in a fresh interpreter importing vqaudit from ``src`` and return its report."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    argv = (
        ["--child", str(predictions), str(out)]
        if bench is None
        else ["--child-import", str(predictions), str(bench), str(out)]
    )
    done = subprocess.run([sys.executable, __file__, *argv], env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0 and not (bench is not None and done.stdout.strip()):
        raise SystemExit(f"the command failed:\n{done.stderr[-3000:]}")
    report: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def main() -> int:
    """Measure every size; print a table; exit 1 if the target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rows", type=int, nargs="*", default=[5_000, 50_000, 500_000])
    parser.add_argument("--keep", type=Path, default=None, help="write the generated files here and keep them")
    parser.add_argument("--import-views", type=int, nargs="*", default=[5_000, 50_000, 500_000])
    parser.add_argument(
        "--src", type=Path, default=ROOT / "src", help="vqaudit source to measure (another checkout's, for a before)"
    )
    parser.add_argument("--child", nargs=2, type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--child-import", nargs=3, type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--generate", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--generate-import", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate:
        write_predictions(Path(args.generate[1]), int(args.generate[0]))
        return 0
    if args.generate_import:
        write_import_log(Path(args.generate_import[1]), int(args.generate_import[0]))
        return 0
    if args.child:
        child(*args.child)
        return 0
    if args.child_import:
        log, bench, out = args.child_import
        run_in_process(
            ["import-predictions", str(log), "--bench", str(bench), "--format", "lmms-eval", "--out", str(out)]
        )
        return 0
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench-audit-memory-"))
    folder.mkdir(parents=True, exist_ok=True)
    print("| rows | file MB | peak RSS MB | after imports MB | KB/row over imports | CPU s | us/row |")
    print("|---|---|---|---|---|---|---|")
    missed = False
    try:
        for rows in args.rows:
            path = folder / f"preds-{rows}.jsonl"
            if not path.is_file():  # in a child: a child forked from a big parent starts with its peak RSS
                subprocess.run(
                    [sys.executable, __file__, "--generate", str(rows), str(path)],
                    check=True,
                    env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
                )
            size = path.stat().st_size
            r = measure(path, folder / f"audit-{rows}", src=args.src)
            per_row = (r["peak_mb"] - r["base_mb"]) * 1024 / rows
            print(
                f"| {rows:,} | {size / 1e6:.1f} | {r['peak_mb']:.0f} | {r['base_mb']:.0f} | {per_row:.2f} | "
                f"{r['cpu_s']:.1f} | {r['cpu_s'] / rows * 1e6:.0f} |",
                flush=True,
            )
            missed |= rows >= TARGET_ROWS and r["peak_mb"] >= TARGET_MB
        if args.import_views:
            print(
                "\n| import-predictions (lmms-eval) views | log MB | peak RSS MB | after imports MB | "
                "KB/view over imports | CPU s | us/view |"
            )
            print("|---|---|---|---|---|---|---|")
        for views in args.import_views:
            where = folder / f"import-{views}"
            if not (where / "samples.jsonl").is_file():
                subprocess.run(
                    [sys.executable, __file__, "--generate-import", str(views), str(where)],
                    check=True,
                    env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
                )
            with (where / "samples.jsonl").open("rb") as log:  # counted line by line: a child starts at our peak
                n = sum(1 for _ in log)
            if (where / "run").exists():
                import shutil

                shutil.rmtree(where / "run")
            r = measure(where / "samples.jsonl", where / "run", bench=where / "bench", src=args.src)
            missed |= n >= TARGET_ROWS - 2 and r["peak_mb"] >= TARGET_MB  # 499,998 views: 166,666 groups of 3
            per_view = (r["peak_mb"] - r["base_mb"]) * 1024 / n
            print(
                f"| {n:,} | {(where / 'samples.jsonl').stat().st_size / 1e6:.1f} | {r['peak_mb']:.0f} | "
                f"{r['base_mb']:.0f} | {per_view:.2f} | {r['cpu_s']:.1f} | {r['cpu_s'] / n * 1e6:.0f} |",
                flush=True,
            )
    finally:
        if args.keep is None:
            import shutil

            shutil.rmtree(folder, ignore_errors=True)
    if missed:
        print(f"TARGET MISSED: peak at least {TARGET_MB:.0f} MB at {TARGET_ROWS:,} rows (or views) or more")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
