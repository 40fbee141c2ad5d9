"""Decided replies of the multiple-choice extractor against VLMEvalKit's ``can_infer`` (issue 17 item 1).

Files: the bundled MMBench sheet (``tests/fixtures/upd/llava15_13b_mmbench_dev.jsonl.gz``, 4,377 LLaVA-1.5-13B
replies) and the hand-checked verbose replies (``tests/fixtures/upd/verbose_choice_replies.jsonl``). For each:
replies decided by vqaudit's strict matcher alone (the paper's rules), by the full extractor
(:func:`vqaudit.parsing.choice.extract_choice`) and by the re-stated ``can_infer`` (``tests/parsing/
vlmevalkit_reference.py``); on the hand-checked file also the decisions that differ from the hand reading.
Then the time per reply of the extractor on the sheet and on 16 KB hostile replies.

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/bench_choice.py``.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _timing import measure, ratio, timed  # noqa: E402
from tests.parsing.vlmevalkit_reference import can_infer  # noqa: E402

from vqaudit.parsing.choice import ChoiceMatch, extract_choice, match_choice  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "upd"


def _label(found: object) -> str | None:
    return found.letter if isinstance(found, ChoiceMatch) else "abstain" if found is not None else None


def _rows() -> dict[str, list[tuple[dict[str, str], str, str | None]]]:
    with gzip.open(FIXTURES / "llava15_13b_mmbench_dev.jsonl.gz", "rt", encoding="utf-8") as handle:
        sheet = [({c: r[c] for c in "ABCD" if r[c] is not None}, str(r["prediction"]), r["answer"])
                 for r in map(json.loads, handle)]
    verbose = [(r["options"], r["reply"], r["expected"])
               for r in map(json.loads, (FIXTURES / "verbose_choice_replies.jsonl").read_text().splitlines())]
    return {"llava15_13b_mmbench_dev": sheet, "verbose_choice_replies (hand-checked)": verbose}


def main() -> None:
    """Print the counts and timings."""
    for name, rows in _rows().items():
        strict = sum(match_choice(reply, opts) is not None for opts, reply, _ in rows)
        ours = [_label(extract_choice(reply, opts)) for opts, reply, _ in rows]
        theirs = [can_infer(reply, dict(opts)) for opts, reply, _ in rows]
        theirs = ["abstain" if t == "Z" else t for t in theirs]
        decided = sum(o is not None for o in ours)
        print(f"{name}: {len(rows)} replies; decided: strict matcher {strict}, vqaudit {decided}, "
              f"VLMEvalKit can_infer {sum(t is not None for t in theirs)}")
        if "hand" in name:
            wrong_ours = sum(o != e for o, (_, _, e) in zip(ours, rows, strict=True))
            wrong_theirs = sum(t is not None and t != e for t, (_, _, e) in zip(theirs, rows, strict=True))
            print(f"  decisions unlike the hand reading: vqaudit {wrong_ours}, can_infer {wrong_theirs}")
    sheet = _rows()["llava15_13b_mmbench_dev"]
    with timed("extract_choice on the sheet", len(sheet), "reply", descendants=False) as ours_t:
        for opts, reply, _ in sheet:
            extract_choice(reply, opts)
    print(ours_t.line())
    with timed("VLMEvalKit can_infer on the sheet (baseline)", len(sheet), "reply", descendants=False) as base_t:
        for opts, reply, _ in sheet:
            can_infer(reply, dict(opts))
    print(base_t.line())
    print(ratio(ours_t, base_t))
    opts = {"A": "a horse", "B": "a dog", "C": "a cat", "D": "a cow"}
    for label, reply in (("'Answer:' + 16K '*'", "Answer:" + "*" * 16_000), ("16K newlines", "\n" * 16_000 + "x"),
                         ("'answer is option' + 16K spaces", "answer is option" + " " * 16_000)):
        print(measure(f"extract_choice on {label}", lambda r=reply: extract_choice(r, opts)).line())


if __name__ == "__main__":
    main()
