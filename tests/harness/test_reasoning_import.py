"""Harness imports keep a reasoning model's reply byte-exact; ``vqaudit score`` splits it later.

Replies in the Qwen3, template-opened, Kimi-VL and GLM-4.5V formats, whose thinking holds another letter than the
final answer (and one that never finishes), are written in each harness's log format, imported, and scored: the
stored replies are the replies written, the outcomes are those of a ``replay:`` run of the same replies, and
every decision is the one of the same final answers without thinking (nothing on the import path read a letter
out of the thinking).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import helpers
from vqaudit.harness import export_benchmark, import_predictions
from vqaudit.run import load_responses, run_benchmark
from vqaudit.score import load_outcomes, score_run
from vqaudit.store import load_benchmark

WRITERS = {
    "vlmevalkit": ("pred.tsv", helpers.write_vlmevalkit_tsv),
    "lmms-eval": ("samples.jsonl", helpers.write_lmms_flat),
    "inspect": ("log.json", helpers.write_inspect_json),
}


@pytest.fixture(scope="module")
def upd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from vqaudit.suites.registry import hooks

    out = tmp_path_factory.mktemp("reasoning-import") / "bench"
    source = hooks("upd")
    source.build(out, source.Options(max_items=2, seed=0), workers=1, on_group=lambda _n: None)
    return out


def _final(gold: tuple[str, ...], k: int) -> str:
    """A plain final answer: the gold letter, the abstention phrase, or a fixed letter, by view."""
    return [gold[0] if gold else "None of the above", "A", "I cannot answer."][k % 3]


def _thinking(final: str, k: int) -> str:
    draft = "\nThe answer is (B). No, look again.\n"
    return [
        f"<think>{draft}</think>\n\n{final}",
        f"{draft}</think>\n\n{final}",
        f"\u25c1think\u25b7{draft}\u25c1/think\u25b7{final}",
        f"<think>{draft}</think><answer><|begin_of_box|>{final}<|end_of_box|></answer>",
    ][k % 4]


def _replay_run(bench: Path, replies: dict[str, str], root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    replay = root / "replies.jsonl"
    replay.write_text(
        "".join(json.dumps({"view_id": k, "text": v}) + "\n" for k, v in replies.items()), encoding="utf-8"
    )
    run_benchmark(bench, f"replay:{replay}", root / "run", progress=False)
    score_run(root / "run", n_draws=20)
    return root / "run"


@pytest.mark.parametrize("harness", list(WRITERS))
def test_a_thinking_reply_is_stored_as_written_and_scored_by_its_final_answer(
    tmp_path: Path, upd: Path, harness: str
) -> None:
    views = load_benchmark(upd, check_images=False).views
    plain = {v.view_id: _final(v.obligation.gold, k) for k, v in enumerate(views)}
    thinking = {v.view_id: _thinking(plain[v.view_id], k) for k, v in enumerate(views)}
    cut = views[0].view_id
    thinking[cut] = "<think>The answer is (B), surely. Let me check the"  # never finished
    file_name, write = WRITERS[harness]
    export_benchmark(upd, harness, tmp_path / "export")
    pred = write(tmp_path / "export", thinking, tmp_path / file_name)
    import_predictions(pred, upd, harness, tmp_path / "imported")
    stored = {k: r.text for k, r in load_responses(tmp_path / "imported").items()}
    assert stored == thinking  # byte-exact: the import parses nothing
    score_run(tmp_path / "imported", n_draws=20)
    replay = _replay_run(upd, thinking, tmp_path / "replay")
    assert (tmp_path / "imported" / "outcomes.jsonl").read_text() == (replay / "outcomes.jsonl").read_text()
    decided = {o.view_id: (o.decision, o.answer) for o in load_outcomes(tmp_path / "imported")}
    without = {o.view_id: (o.decision, o.answer) for o in load_outcomes(_replay_run(upd, plain, tmp_path / "plain"))}
    assert decided[cut] == ("invalid", None)
    assert {k: v for k, v in decided.items() if k != cut} == {k: v for k, v in without.items() if k != cut}
    # not vacuous: on these views a reader of the thinking's "(B)" would have decided otherwise
    assert sum(1 for d in without.values() if d != ("answer", "B")) >= len(views) // 2
