"""Test helpers: a scripted in-process backend that records every request it sees; the CLI run in-process;
the real fixture rows; the new-user trial's perturb run with missing replies."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from vqaudit.backends import Request
from vqaudit.files import write_json
from vqaudit.scoring.contracts import BUCKETS, Contract
from vqaudit.shortanswer.audit_columns import canonical_change_labels, count_changes
from vqaudit.shortanswer.perturb import perturbation_json, run_perturbation_audit
from vqaudit.shortanswer.records import AuditRow


@dataclass
class ScriptedBackend:
    """Replies ``reply(request)``; keeps every request so tests can check what was (not) asked."""

    reply: Callable[[Request], str]
    spec: str = "scripted:test"
    requests: list[Request] = field(default_factory=list)

    async def complete(self, request: Request) -> str:
        self.requests.append(request)
        return self.reply(request)

    async def aclose(self) -> None:
        return None


def run_cli(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    """Run ``vqaudit ARGS`` through :func:`vqaudit.cli.main` in this process; return its exit code."""
    from vqaudit.cli import main

    monkeypatch.setattr(sys, "argv", ["vqaudit", *args])
    with pytest.raises(SystemExit) as exc:
        main()
    return int(exc.value.code or 0)


FIXTURE_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "shortanswer"
FixtureRow = tuple[str, str, tuple[str, ...], tuple[str, ...]]  # (question, prediction, answers, ocr tokens)


def load_fixture_rows() -> dict[str, list[FixtureRow]]:
    """Every row of the three real prediction fixtures (LLaVA-1.5-13B TextVQA val, VILA1.5-13B ChartQA test,
    mPLUG-Owl DocVQA val) as (question, prediction, answers, OCR tokens), TextVQA joined to its gold file."""
    with gzip.open(FIXTURE_DIR / "textvqa_val_gold.json.gz", "rt", encoding="utf-8") as f:
        gold = {g["question_id"]: g for g in json.load(f)["data"]}
    with gzip.open(FIXTURE_DIR / "llava15_13b_textvqa_val.jsonl.gz", "rt", encoding="utf-8") as f:
        textvqa = [
            (
                gold[r["textvqa_question_id"]]["question"],
                r["prediction"],
                tuple(r["gt_answers"]),
                tuple(gold[r["textvqa_question_id"]]["ocr_tokens"]),
            )
            for r in map(json.loads, f)
        ]
    with gzip.open(FIXTURE_DIR / "vila15_13b_chartqa_test.jsonl.gz", "rt", encoding="utf-8") as f:
        chartqa = [("", r["prediction"] or "", (r["answer"],), ()) for r in map(json.loads, f)]
    with gzip.open(FIXTURE_DIR / "mocr_mplugowl_docvqa_val.json.gz", "rt", encoding="utf-8") as f:
        docvqa = [(r["question"], r["answer"], tuple(r["gt_answers"]), ()) for r in json.load(f)]
    return {"textvqa": textvqa, "chartqa": chartqa, "docvqa": docvqa}


DOC_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")


def gap_perturb_args(
    tmp: Path,
    *,
    missing: Sequence[tuple[str, int]] = (("Base", 0), ("A1", 1)),
    wrong: Sequence[tuple[str, int]] = (("A1", 0),),
    out: str = "p6",
) -> list[str]:
    """The new-user trial's perturb run: 8 DocVQA questions q0-q7 (gold ``DOC_WORDS``), variants Base, A1, B1.

    A replay file answers every (variant, question) with the gold word, except the ``missing`` pairs (no reply)
    and the ``wrong`` ones (``zzzzzz``: ANLS 0 against any gold word here). Returns the ``vqaudit perturb`` args.
    """
    (tmp / "imgs").mkdir(exist_ok=True)
    preds, replay = [], []
    for i, word in enumerate(DOC_WORDS):
        (tmp / "imgs" / f"d{i}.png").write_bytes(b"\x89PNG" + bytes([i]))
        preds.append(
            {
                "qid": f"q{i}",
                "prediction": word,
                "answers": [word],
                "image": f"d{i}.png",
                "question": f"What is word {i}?",
            }
        )
        for v in ("Base", "A1", "B1"):
            if (v, i) not in missing:
                replay.append({"view_id": f"{v}:q{i}", "text": "zzzzzz" if (v, i) in wrong else word})
    (tmp / "preds.jsonl").write_text("".join(json.dumps(r) + "\n" for r in preds))
    (tmp / "replay_gap.jsonl").write_text("".join(json.dumps(r) + "\n" for r in replay))
    return [
        "perturb",
        str(tmp / "preds.jsonl"),
        "--benchmark",
        "docvqa",
        "--model",
        f"replay:{tmp / 'replay_gap.jsonl'}",
        "--images",
        str(tmp / "imgs"),
        "--variants",
        "Base,A1,B1",
        "--out",
        str(tmp / out),
    ]


@contextmanager
def audit_folder_held(out: Path, command: str) -> Iterator[None]:
    """Another process holds ``out``'s audit-folder lock (as a running ``command`` would) inside the block."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; "
            "from vqaudit.folder_lock import folder_lock\n"
            "with folder_lock(Path(sys.argv[1]), sys.argv[2], kind='audit folder'):\n"
            "    print('locked', flush=True); time.sleep(60)",
            str(out),
            command,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        yield
    finally:
        holder.kill()
        holder.wait()


def bucket_counts(contracts: Sequence[Contract]) -> dict[str, int]:
    """Per-bucket counts in :data:`BUCKETS` order (Table 5 layout); every bucket present, zeros included."""
    counts = Counter(c.bucket for c in contracts)
    return {b: counts.get(b, 0) for b in BUCKETS}


def canonical_changes(
    rows: Sequence[AuditRow],
    official: Sequence[float],
    canonical: Sequence[float],
    kinds_of_rows: Sequence[str | None],
    metric: str,
) -> tuple[dict[str, int], int, dict[str, int]]:
    """The gained rows' fault kinds, the lost rows and their causes, as the audit counts them.

    ``count_changes`` of ``canonical_change_labels`` (:mod:`vqaudit.shortanswer.audit_columns`).
    """
    return count_changes(*canonical_change_labels(rows, official, canonical, kinds_of_rows, metric))


def perturb_folder(
    tmp: Path,
    model: str,
    bench: str,
    rows: list[AuditRow],
    replies: dict[str, dict[str, str]],
) -> Path:
    """A ``vqaudit perturb`` folder of ``rows`` whose scripted replies are ``replies[variant][qid]``."""
    images = tmp / "images"
    images.mkdir(exist_ok=True)
    for row in rows:
        (images / f"{row.qid}.png").write_bytes(b"\x89PNG" + row.qid.encode())
    out = tmp / f"perturb-{model}-{bench}"
    out.mkdir()

    def reply(request: Request) -> str:
        variant, _, qid = request.request_id.partition(":")
        return replies[variant][qid]

    summary, _ = run_perturbation_audit(
        rows,
        bench,
        "scripted:test",
        images,
        out / "c.sqlite",
        variants=tuple(replies),
        metric="exact_match",
        variant="pix2struct",
        backend=ScriptedBackend(reply),
    )
    write_json(
        out / "perturbations.json",
        perturbation_json(
            summary,
            benchmark=bench,
            model=model,
            model_spec="scripted:test",
            metric="exact_match",
            variant="pix2struct",
            variants=tuple(replies),
            n_questions=len(rows),
        ),
    )
    return out
