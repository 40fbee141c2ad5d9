"""Parse time per reply with and without reasoning, on 10^5 generated replies (the reasoning split is linear).

For each of 100,000 generated answerability replies (a seeded mix: plain contract objects; the same preceded by
a thinking span in each documented format, holding a contradicting draft; unfinished spans; hostile tag soup)
the answerability parse (:func:`vqaudit.parsing.parse_answerability`, which splits first) is timed in CPU
seconds, beside the plain parse of the same final texts with ``reasoning_format="none"`` measured in the same run
(the ratio is what the split costs). Crashes are counted (must be 0). Linearity: the CPU time of one reply whose
thinking grows 1 K -> 16 K -> 256 K -> 2 M (characters), per character.

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/bench_reasoning.py``.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _timing import ratio, timed  # noqa: E402

from vqaudit.parsing import parse_answerability  # noqa: E402

N = 100_000
FINALS = (
    json.dumps({"answerable": True, "answer": "42", "reason": "read off the axis"}),
    json.dumps({"answerable": False, "answer": None, "reason": "the bar is covered"}),
)


def _reply(rng: random.Random) -> tuple[str, str]:
    """``(reply with reasoning, the same reply's final text)``."""
    final = rng.choice(FINALS)
    draft = FINALS[1] if final == FINALS[0] else FINALS[0]
    thought = "Let me look at the chart. " * rng.randint(1, 60) + f"Draft: {draft}. Hmm, no."
    kind = rng.randrange(7)
    if kind == 0:
        return f"<think>\n{thought}\n</think>\n\n{final}", final
    if kind == 1:
        return f"{thought}\n</think>\n\n{final}", final
    if kind == 2:
        return f"\u25c1think\u25b7{thought}\u25c1/think\u25b7{final}", final
    if kind == 3:
        return (
            f"<|begin_of_thought|>{thought}<|end_of_thought|><|begin_of_solution|>{final}<|end_of_solution|>"
        ), final
    if kind == 4:
        return f"<think>{thought}", final  # unfinished
    if kind == 5:
        return "<think></think>" * rng.randint(1, 200) + "<think>" * rng.randint(0, 3) + final, final
    return f"<think>{thought}</think><answer><|begin_of_box|>{final}<|end_of_box|></answer>", final


def main() -> None:
    """Print the per-reply CPU times, the ratio to the plain parse, crashes and the linearity check."""
    rng = random.Random(0)
    pairs = [_reply(rng) for _ in range(N)]
    crashes = 0
    with timed("parse with reasoning split", count=N, unit="reply") as split:
        for reply, _ in pairs:
            try:
                parse_answerability(reply)
            except Exception:  # noqa: BLE001 - counting crashes is the point
                crashes += 1
    with timed("parse of replies without reasoning (default auto)", count=N, unit="reply") as auto:
        for _, final in pairs:
            parse_answerability(final)
    with timed("parse of replies without reasoning (reasoning_format=none: no split)", count=N, unit="reply") as plain:
        for _, final in pairs:
            parse_answerability(final, reasoning_format="none")
    for t in (split, auto, plain):
        print(t.line())
    print(
        f"per reply: {split.cpu / N * 1e6:.1f} us with reasoning, {auto.cpu / N * 1e6:.1f} us without "
        f"(auto), {plain.cpu / N * 1e6:.1f} us with no split at all"
    )
    print(ratio(auto, plain))
    print(ratio(split, plain))
    print(f"crashes: {crashes} of {N}")
    print("linearity (one reply, thinking of growing length; CPU us per 1,000 characters):")
    for size in (2**10, 2**14, 2**18, 2**21):
        reply = "<think>" + ("a<b>" * (size // 4)) + "</think>" + FINALS[1]
        start = time.process_time()
        repeats = max(1, 2**20 // size)
        for _ in range(repeats):
            parse_answerability(reply)
        cpu = (time.process_time() - start) / repeats
        print(f"  {size:>9,} chars: {cpu * 1e3:8.3f} ms, {cpu / size * 1e9:6.1f} us per 1,000 chars")


if __name__ == "__main__":
    main()
