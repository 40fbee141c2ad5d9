#!/usr/bin/env python3
"""Record golden outputs: run every vqaudit command on small fixed inputs and list what each one produced.

Usage (from the repository root, with the code under test first on PYTHONPATH)::

    PYTHONPATH=$PWD/src .venv/bin/python scripts/golden_outputs.py OUT [--cmd "python -m vqaudit"] [--work DIR]

Every command runs with fixed seeds and small sizes on the bundled data and ``tests/fixtures``, in the fixed
working folder ``--work`` (default ``/tmp/vqaudit-golden-work``, wiped first), so absolute paths that end up in
output files (``run.json`` records its benchmark's absolute path) are the same in every recording. The folder is
then copied to ``OUT`` (which must not exist), and ``OUT/MANIFEST.txt`` lists, per step, the command, its exit
code, its stdout and stderr (the working folder and the repository root replaced by ``<WORK>`` and ``<REPO>``),
and then every produced file with its SHA-256. What changes between two recordings of the same code is
normalised in the copy (not in ``--work``): each ``*.sqlite`` is replaced by ``*.sqlite.dump.txt`` (sorted rows, no
time columns); a run folder's ``.vqaudit.lock`` (pid and time) becomes ``<volatile>``; JSON values of time keys
(``started``, ``finished``, ``seconds_*``, ...) become ``"<volatile>"``;
durations such as ``2.4 s`` in Markdown, text and the logs become ``<sec> s``. Compare two recordings with
``scripts/golden_compare.py BEFORE AFTER``.

``--cmd`` is the command prefix that starts the CLI (split like a shell line; default ``python -m vqaudit`` with
this interpreter, whose ``__main__`` calls ``vqaudit.cli:main``, so PYTHONPATH selects the code under test;
``python -m vqaudit.cli`` prints nothing today because ``cli.py`` has no ``__main__`` guard). After a refactor
that moves the entry point, pass e.g. ``--cmd "python -c 'from vqaudit.cli import main; main()'"``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIX = REPO / "tests" / "fixtures"
SA = FIX / "shortanswer"

# A replay reply per view index (mod 4): answer "0", abstain, gold-like text, and an invalid reply.
_RUN_REPLIES = [
    '{"answerable": true, "answer": "0", "reason": "the bar reaches 0"}',
    '{"answerable": false, "answer": null, "reason": "the value is hidden"}',
    '```json\n{"answerable": true, "answer": "12.5", "reason": "read off the axis"}\n```',
    "I cannot tell.",
]
_UPD_REPLIES = ["A", "B", "None of the above", "The answer is C.", "E", "I don't know"]
_UPD_JUDGE_REPLIES = ["B", "A", "C", "D", "E", "F", "no idea"]


def _write_inputs(work: Path) -> Path:
    """Write the hand-made inputs (images, predictions, replay files that do not depend on a build)."""
    inp = work / "inputs"
    (inp / "gqa_images").mkdir(parents=True)
    from PIL import Image  # vqaudit's own dependency

    # The GQA fixture's scene graphs describe one 300x200 image, img1 (as tests/suites/photos/test_build.py).
    Image.new("RGB", (300, 200), (40, 120, 200)).save(inp / "gqa_images" / "img1.jpg", format="JPEG", quality=90)
    (inp / "perturb_images").mkdir()
    (inp / "perturb_images" / "x.png").write_bytes(b"\x89PNG-x")
    (inp / "perturb_images" / "y.png").write_bytes(b"\x89PNG-y")
    rows = [
        {"qid": "1", "prediction": "3", "answer": "3", "image": "x.png", "question": "How many?"},
        {
            "qid": "2",
            "prediction": "[a, b]",
            "answer": "[Austria, Chile]",
            "image": "y.png",
            "question": "Which two countries?",
        },
        {"qid": "3", "prediction": "12%", "answer": "12", "image": "x.png", "question": "What share?"},
    ]
    (inp / "perturb_preds.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    replies = {
        "Base": ["3", "[Austria, Chile]", "12"],
        "A1": ["4", "[Austria, Chile]", "12"],
        "A2": ["three", "Austria and Chile", "0.12"],
        "B1": ["3", "[Chile, Austria]", "12.0"],
    }
    lines = [{"view_id": f"{v}:{i + 1}", "text": t} for v, ts in replies.items() for i, t in enumerate(ts)]
    (inp / "perturb_replay.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    return inp


def _replay_for(bench: Path, out: Path, replies: list[str]) -> None:
    """Write a replay file answering every view of ``bench`` with ``replies[i % len(replies)]`` (views order)."""
    ids = [json.loads(line)["view_id"] for line in (bench / "views.jsonl").read_text().splitlines() if line]
    out.write_text(
        "".join(json.dumps({"view_id": v, "text": replies[i % len(replies)]}) + "\n" for i, v in enumerate(ids))
    )


def _judge_files(work: Path, inp: Path) -> None:
    """Judge replay files (and human labels) for every question of the ChartQA audit, from its rows.jsonl."""
    rows = [json.loads(line) for line in (work / "audit" / "chartqa" / "rows.jsonl").read_text().splitlines() if line]
    qids = [str(r["qid"]) for r in rows]
    first, second = ["yes", "no", "Yes.", "no", "maybe"], ["no", "yes", "yes", "NO!", "yes"]
    for name, texts in (("audit_judge.jsonl", first), ("audit_judge2.jsonl", second)):
        (inp / name).write_text(
            "".join(
                json.dumps({"view_id": f"judge:{q}", "text": texts[i % len(texts)]}) + "\n" for i, q in enumerate(qids)
            )
        )
    (inp / "audit_judge_short.jsonl").write_text(json.dumps({"view_id": f"judge:{qids[0]}", "text": "yes"}) + "\n")
    (inp / "labels.jsonl").write_text(
        "".join(
            json.dumps({"question_id": q, "label": ["yes", "no", "1"][i % 3]}) + "\n" for i, q in enumerate(qids[:400])
        )
    )


def _steps(inp: Path) -> list[tuple[str, list[str]]]:
    """The commands, in order: (step name, CLI arguments). Paths are relative to the working folder."""
    coco = [
        "--images",
        str(FIX / "photos" / "coco" / "images"),
        "--annotations",
        str(FIX / "photos" / "coco" / "instances_subset.json"),
    ]
    gqa = [
        "--source",
        "gqa",
        "--images",
        str(inp / "gqa_images"),
        "--annotations",
        str(FIX / "photos" / "gqa" / "sceneGraphs.json"),
        "--questions",
        str(FIX / "photos" / "gqa" / "questions.json"),
    ]
    chartqa = str(SA / "vila15_13b_chartqa_test.xlsx")
    return [
        ("help", ["--help"]),
        ("build-charts", ["build", "charts", "--groups", "4", "--seed", "3", "--out", "bench/charts"]),
        (
            "build-charts-all",
            [
                "build",
                "charts",
                "--groups",
                "3",
                "--seed",
                "1",
                "--programs",
                "all",
                "--determined",
                "--workers",
                "2",
                "--out",
                "bench/charts_all",
            ],
        ),
        ("build-scenes", ["build", "scenes", "--groups", "2", "--seed", "0", "--out", "bench/scenes"]),
        ("build-photos", ["build", "photos", "--groups", "3", "--seed", "0", "--out", "bench/photos"]),
        (
            "build-photos-coco",
            [
                "build",
                "photos",
                "--groups",
                "3",
                "--seed",
                "1",
                "--mask",
                "blur",
                "--matched",
                *coco,
                "--out",
                "bench/photos_coco",
            ],
        ),
        ("build-photos-gqa", ["build", "photos", "--groups", "3", "--seed", "0", *gqa, "--out", "bench/photos_gqa"]),
        ("build-upd", ["build", "upd", "--max-items", "6", "--seed", "0", "--out", "bench/upd"]),
        (
            "build-upd-some",
            [
                "build",
                "upd",
                "--max-items",
                "4",
                "--variant",
                "aad,ivqd",
                "--setting",
                "base,option",
                "--seed",
                "2",
                "--out",
                "bench/upd_some",
            ],
        ),
        ("build-bad-source", ["build", "photos", "--source", "vqa", "--groups", "1", "--out", "bench/bad"]),
        ("verify-charts", ["verify", "bench/charts"]),
        ("verify-charts-all", ["verify", "bench/charts_all"]),
        ("verify-scenes", ["verify", "bench/scenes"]),
        ("verify-photos", ["verify", "bench/photos"]),
        ("verify-upd", ["verify", "bench/upd"]),
        *[
            (f"run-{b}-{p}", ["run", f"bench/{b}", "--model", f"reference:{p}", "--out", f"runs/{b}_{p}"])
            for b in ("charts", "charts_all", "scenes", "photos", "photos_gqa")
            for p in ("gold", "always-answer", "always-abstain")
        ],
        *[
            (f"run-upd-{p}", ["run", "bench/upd", "--model", f"reference:{p}", "--out", f"runs/upd_{p}"])
            for p in ("gold", "always-answer", "always-abstain")
        ],
        (
            "run-charts-replay",
            ["run", "bench/charts", "--model", "replay:inputs/charts_replay.jsonl", "--out", "runs/charts_replay"],
        ),
        (
            "run-charts-replay-again",
            ["run", "bench/charts", "--model", "replay:inputs/charts_replay.jsonl", "--out", "runs/charts_replay"],
        ),
        (
            "run-upd-replay",
            ["run", "bench/upd", "--model", "replay:inputs/upd_replay.jsonl", "--out", "runs/upd_replay"],
        ),
        (
            "run-upd-replay-for-judge",
            ["run", "bench/upd", "--model", "replay:inputs/upd_replay.jsonl", "--out", "runs/upd_judged"],
        ),
        ("run-bad-spec", ["run", "bench/charts", "--model", "nosuch:x", "--out", "runs/bad"]),
        *[
            (f"score-{r}", ["score", f"runs/{r}"])
            for b in ("charts", "charts_all", "scenes", "photos", "photos_gqa", "upd")
            for r in (f"{b}_gold", f"{b}_always-answer", f"{b}_always-abstain")
        ],
        ("score-charts-replay", ["score", "runs/charts_replay"]),
        ("score-upd-replay", ["score", "runs/upd_replay"]),
        ("score-upd-judge", ["score", "runs/upd_judged", "--judge", "replay:inputs/upd_judge.jsonl"]),
        ("score-upd-judge-again", ["score", "runs/upd_judged", "--judge", "replay:inputs/upd_judge.jsonl"]),
        ("score-upd-judge-reference", ["score", "runs/upd_judged", "--judge", "reference:gold"]),
        (
            "report-charts",
            [
                "report",
                "runs/charts_gold",
                "runs/charts_always-answer",
                "runs/charts_always-abstain",
                "runs/charts_replay",
                "--out",
                "reports/charts",
            ],
        ),
        ("report-charts-default", ["report", "runs/charts_replay"]),
        (
            "report-charts-all",
            ["report", "runs/charts_all_gold", "runs/charts_all_always-abstain", "--out", "reports/charts_all"],
        ),
        ("report-scenes", ["report", "runs/scenes_gold", "runs/scenes_always-answer", "--out", "reports/scenes"]),
        ("report-photos", ["report", "runs/photos_gold", "runs/photos_always-abstain", "--out", "reports/photos"]),
        (
            "report-upd",
            ["report", "runs/upd_gold", "runs/upd_always-answer", "runs/upd_replay", "--out", "reports/upd"],
        ),
        ("eval-charts", ["eval", "--groups", "3", "--seed", "2", "--out", "eval/charts"]),
        (
            "eval-charts-reuse",
            ["eval", "--groups", "3", "--seed", "2", "--model", "reference:gold", "--out", "eval/charts"],
        ),
        ("eval-charts-mismatch", ["eval", "--groups", "4", "--seed", "2", "--out", "eval/charts"]),
        ("eval-scenes", ["eval", "scenes", "--groups", "2", "--out", "eval/scenes"]),
        ("eval-photos", ["eval", "photos", "--groups", "3", "--out", "eval/photos"]),
        ("eval-upd", ["eval", "upd", "--max-items", "4", "--out", "eval/upd"]),
        (
            "eval-bench",
            ["eval", "--bench", "bench/charts", "--model", "reference:always-answer", "--out", "eval/bench"],
        ),
        ("audit-checker", ["audit-checker", "bench/charts", "--max-views", "2"]),
        ("audit-certifier", ["audit-certifier", "--grid", "0:2:1", "--trees", "2", "--seed", "0"]),
        (
            "audit-certifier-json",
            ["audit-certifier", "--grid", "0:2:1", "--no-recursive", "--out", "certifier/audit.json"],
        ),
        ("audit-certifier-md", ["audit-certifier", "--grid", "0:2:1", "--trees", "1", "--out", "certifier/audit.md"]),
        (
            "audit-chartqa",
            [
                "audit",
                chartqa,
                "--benchmark",
                "chartqa",
                "--metric-variant",
                "vlmevalkit",
                "--model-name",
                "vila",
                "--out",
                "audit/chartqa",
            ],
        ),
        (
            "audit-chartqa-judge",
            [
                "audit",
                chartqa,
                "--benchmark",
                "chartqa",
                "--metric-variant",
                "vlmevalkit",
                "--judge",
                "replay:inputs/audit_judge.jsonl",
                "--second-judge",
                "replay:inputs/audit_judge2.jsonl",
                "--labels",
                "inputs/labels.jsonl",
                "--draws",
                "300",
                "--model-name",
                "vila-judged",
                "--out",
                "audit/chartqa_judge",
            ],
        ),
        (
            "audit-chartqa-judge-short",
            [
                "audit",
                chartqa,
                "--benchmark",
                "chartqa",
                "--judge",
                "replay:inputs/audit_judge_short.jsonl",
                "--out",
                "audit/chartqa_short",
            ],
        ),
        (
            "audit-chartqa-csv",
            [
                "audit",
                str(SA / "vila15_13b_chartqa_test_acc.csv"),
                "--benchmark",
                "chartqa",
                "--model-name",
                "vila-csv",
                "--out",
                "audit/chartqa_csv",
            ],
        ),
        (
            "audit-textvqa",
            [
                "audit",
                str(SA / "llava15_13b_textvqa_val.jsonl.gz"),
                "--benchmark",
                "textvqa",
                "--model-name",
                "llava",
                "--out",
                "audit/textvqa",
            ],
        ),
        (
            "audit-textvqa-join",
            [
                "audit",
                str(SA / "llava15_13b_textvqa_answers.jsonl.gz"),
                "--benchmark",
                "textvqa",
                "--gold",
                str(SA / "textvqa_val_gold.json.gz"),
                "--join-on",
                "image-question",
                "--id-field",
                "row",
                "--image-field",
                "question_id",
                "--out",
                "audit/textvqa_join",
            ],
        ),
        (
            "audit-docvqa",
            [
                "audit",
                str(SA / "mocr_mplugowl_docvqa_val.json.gz"),
                "--benchmark",
                "docvqa",
                "--model-name",
                "mplug",
                "--out",
                "audit/docvqa",
            ],
        ),
        (
            "audit-docvqa-containment",
            [
                "audit",
                str(SA / "mocr_mplugowl_docvqa_val.json.gz"),
                "--benchmark",
                "docvqa",
                "--metric",
                "containment",
                "--out",
                "audit/docvqa_containment",
            ],
        ),
        (
            "audit-vizwiz",
            [
                "audit",
                str(SA / "llava15_13b_vizwiz_test.jsonl.gz"),
                "--benchmark",
                "vizwiz",
                "--model-name",
                "llava",
                "--out",
                "audit/vizwiz",
            ],
        ),
        ("audit-bad-benchmark", ["audit", chartqa, "--benchmark", "nosuch", "--out", "audit/bad"]),
        (
            "perturb",
            [
                "perturb",
                "inputs/perturb_preds.jsonl",
                "--benchmark",
                "chartqa",
                "--model",
                "replay:inputs/perturb_replay.jsonl",
                "--images",
                "inputs/perturb_images",
                "--variants",
                "Base,A1,A2,B1",
                "--model-name",
                "m1",
                "--out",
                "perturb/m1",
            ],
        ),
        (
            "perturb-default-variants",
            [
                "perturb",
                "inputs/perturb_preds.jsonl",
                "--benchmark",
                "chartqa",
                "--model",
                "replay:inputs/perturb_replay.jsonl",
                "--images",
                "inputs/perturb_images",
                "--out",
                "perturb/all",
            ],
        ),
        (
            "perturb-reference",
            [
                "perturb",
                "inputs/perturb_preds.jsonl",
                "--benchmark",
                "chartqa",
                "--model",
                "reference:gold",
                "--images",
                "inputs/perturb_images",
                "--out",
                "perturb/bad",
            ],
        ),
        (
            "audit-summary",
            [
                "audit-summary",
                "audit/chartqa",
                "audit/textvqa",
                "audit/docvqa",
                "audit/vizwiz",
                "--perturb",
                "perturb/m1",
                "--out",
                "summary",
            ],
        ),
        (
            "audit-summary-judged",
            [
                "audit-summary",
                "audit/chartqa_judge",
                "audit/docvqa",
                "--perturb",
                "perturb/m1",
                "--perturb",
                "perturb/all",
                "--out",
                "summary_judged",
            ],
        ),
        ("audit-summary-one", ["audit-summary", "audit/docvqa_containment", "--out", "summary_one"]),
        ("audit-summary-not-audit", ["audit-summary", "audit/chartqa_csv", "--out", "summary_bad"]),
        ("export-tuning", ["export-tuning", "--n", "12", "--seed", "0", "--out", "tuning/default"]),
        (
            "export-tuning-mix",
            [
                "export-tuning",
                "--n",
                "10",
                "--ratio",
                "4:3:3",
                "--settings",
                "base",
                "--seed",
                "5",
                "--out",
                "tuning/mix",
            ],
        ),
    ]


# Values that change from one recording to the next: wall-clock times and durations.
_VOLATILE_JSON = re.compile(
    r'("(?:started|finished|created_at|created|latency_s|elapsed\w*|seconds\w*)":\s*)'
    r'("[^"]*"|-?[0-9][0-9.eE+-]*)'
)
_SECONDS = re.compile(r"\b\d+(?:\.\d+)? s\b")
_VOLATILE_COLUMNS = {"latency_s", "created", "created_at"}


def _normalise(text: str, work: Path) -> str:
    """Replace the working folder and the repository root by names, and durations ("2.4 s") by "<sec> s"."""
    for path, name in ((str(work), "<WORK>"), (str(REPO), "<REPO>")):
        text = text.replace(path, name)
    return _SECONDS.sub("<sec> s", text)


def _dump_sqlite(path: Path) -> str:
    """Every table of a SQLite file as sorted text rows, without the time columns."""
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)  # no -wal/-shm beside the copy
    try:
        lines = []
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        for table in tables:
            cols = [r[1] for r in con.execute(f"PRAGMA table_info({table})") if r[1] not in _VOLATILE_COLUMNS]
            lines.append(f"## table {table} ({', '.join(cols)})")
            rows = con.execute(f"SELECT {', '.join(cols)} FROM {table}").fetchall()
            lines += sorted(json.dumps(list(r), ensure_ascii=False) for r in rows)
        return "\n".join(lines) + "\n"
    finally:
        con.close()


def _normalise_tree(out: Path, work: Path) -> None:
    """Make the copy comparable: SQLite files become text dumps, times in JSON/Markdown become placeholders."""
    for path in sorted(out.rglob("*")):
        if not path.is_file():
            continue
        if path.suffix == ".sqlite":
            path.with_name(path.name + ".dump.txt").write_text(_dump_sqlite(path), encoding="utf-8")
            for part in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
                part.unlink(missing_ok=True)
        elif path.suffix in {".json", ".jsonl"}:
            text = path.read_text(encoding="utf-8")
            path.write_text(_VOLATILE_JSON.sub(r'\1"<volatile>"', text), encoding="utf-8")
        elif path.suffix in {".md", ".txt"}:
            path.write_text(_normalise(path.read_text(encoding="utf-8"), work), encoding="utf-8")
        elif path.name == ".vqaudit.lock":  # a run folder's lock holds the last writer's pid and time
            path.write_text("<volatile>\n", encoding="utf-8")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main() -> int:
    """Run every step into ``--work``, copy it to OUT, and write OUT/MANIFEST.txt; return 0 (steps may fail)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="Output folder (must not exist).")
    parser.add_argument(
        "--cmd",
        default=f"{shlex.quote(sys.executable)} -m vqaudit",
        help="Command prefix that starts the CLI (default: this python -m vqaudit).",
    )
    parser.add_argument(
        "--work",
        type=Path,
        default=Path("/tmp/vqaudit-golden-work"),
        help="Fixed working folder (wiped first); keep it the same between recordings.",
    )
    parser.add_argument("--only", default="", help="Comma list of step names to run (debugging).")
    args = parser.parse_args()
    out: Path = args.out.resolve()
    work: Path = args.work.resolve()
    if out.exists():
        parser.error(f"{out} exists; choose a new folder")
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    prefix = shlex.split(args.cmd)
    inp = _write_inputs(work)
    env = dict(os.environ, COLUMNS="120", TERM="dumb", NO_COLOR="1", PYTHONHASHSEED="0", LC_ALL="C.UTF-8", TZ="UTC")
    env.pop("FORCE_COLOR", None)
    only = {s for s in args.only.split(",") if s}
    log: list[str] = [f"# golden outputs; command prefix: {_normalise(args.cmd, work)}", ""]
    for name, cli_args in _steps(inp):
        if only and name not in only:
            continue
        if name == "run-charts-replay":
            _replay_for(work / "bench" / "charts", inp / "charts_replay.jsonl", _RUN_REPLIES)
        if name == "run-upd-replay":
            _replay_for(work / "bench" / "upd", inp / "upd_replay.jsonl", _UPD_REPLIES)
            _replay_for(work / "bench" / "upd", inp / "upd_judge.jsonl", _UPD_JUDGE_REPLIES)
        if name == "audit-chartqa-judge":
            _judge_files(work, inp)
        start = time.monotonic()
        done = subprocess.run([*prefix, *cli_args], cwd=work, env=env, capture_output=True, text=True, check=False)
        print(f"{name}: exit {done.returncode} ({time.monotonic() - start:.1f} s)", file=sys.stderr, flush=True)
        log += [
            f"## {name}",
            f"$ vqaudit {_normalise(shlex.join(cli_args), work)}",
            f"exit: {done.returncode}",
            "--- stdout",
            _normalise(done.stdout, work).rstrip("\n"),
            "--- stderr",
            _normalise(done.stderr, work).rstrip("\n"),
            "",
        ]
    shutil.copytree(work, out, symlinks=True)
    _normalise_tree(out, work)
    log += ["# files (sha256  path)", ""]
    for path in sorted(p for p in out.rglob("*") if p.is_file() and p.name != "MANIFEST.txt"):
        log.append(f"{_sha256(path)}  {path.relative_to(out).as_posix()}")
    (out / "MANIFEST.txt").write_text("\n".join(log) + "\n", encoding="utf-8")
    print(f"wrote {out / 'MANIFEST.txt'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
