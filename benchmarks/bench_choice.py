"""Decided replies of the multiple-choice extractor against VLMEvalKit's ``can_infer``, and the hand-checked counts.

Files: the bundled MMBench sheet (``tests/fixtures/upd/llava15_13b_mmbench_dev.jsonl.gz``, 4,377 LLaVA-1.5-13B
replies) and the hand-checked verbose replies (``tests/fixtures/upd/verbose_choice_replies.jsonl``). For each:
replies decided by vqaudit's strict matcher alone (the paper's rules), by the full extractor
(:func:`vqaudit.parsing.choice.extract_choice`) and by the re-stated ``can_infer`` (``tests/parsing/
vlmevalkit_reference.py``). On the hand-checked file, one row per reader of right / wrong / undecided against the
hand reading (``expected``): right = the reader's reading is the hand reading (a letter, ``abstain``, or undecided
where the hand reading is undecided; an ambiguous reply is undecided); wrong = a decision unlike the hand reading;
undecided = no decision where the hand reading decides; the same for the replies marked "held out" (written after
the rules were fixed and never used to tune them). With ``--before REV`` the choice reader of git revision
``REV`` (``vqaudit.parsing.choice`` there, with the modules it imports as of ``REV``) is read on the same
replies and printed as the first row. Then the time per reply of the extractor on the sheet and on 16 KB hostile
replies.

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/bench_choice.py [--before REV]``.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import io
import json
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _timing import measure, ratio, timed  # noqa: E402
from tests.parsing.vlmevalkit_reference import can_infer  # noqa: E402

from vqaudit.parsing.choice import extract_choice, match_choice  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "upd"


def _label(found: object) -> str | None:
    # Duck-typed so that an older module's result classes read the same: a letter, an abstention, or undecided
    # (None, and an ambiguous reply).
    if found is None or getattr(found, "rule", "") == "ambiguous":
        return None
    letter = getattr(found, "letter", None)
    return letter if isinstance(letter, str) else "abstain"


def _module_at(rev: str) -> ModuleType:
    """``vqaudit.parsing.choice`` as of git revision ``rev``, with the modules it imports as of ``rev`` too.

    The revision's ``src/vqaudit`` is unpacked into a temporary folder and imported from there while this
    checkout's ``vqaudit`` modules are set aside; they are put back before returning, so everything else reads
    this checkout's code. The returned module keeps its own globals (the revision's functions and patterns).
    """
    archive = subprocess.run(["git", "archive", rev, "src/vqaudit"], cwd=ROOT, check=True, capture_output=True).stdout
    tree = Path(tempfile.mkdtemp())
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tree, filter="data")

    def ours() -> list[str]:
        return [name for name in sys.modules if name == "vqaudit" or name.startswith("vqaudit.")]

    saved = {name: sys.modules.pop(name) for name in ours()}
    sys.path.insert(0, str(tree / "src"))
    try:
        return importlib.import_module("vqaudit.parsing.choice")
    finally:
        sys.path.remove(str(tree / "src"))
        for name in ours():
            del sys.modules[name]
        sys.modules.update(saved)


def _can_infer_label(reply: str, options: Mapping[str, str]) -> str | None:
    found = can_infer(reply, dict(options))
    return "abstain" if found == "Z" else found


Reader = Callable[[str, Mapping[str, str]], str | None]


def _reader_of(extract: Callable[[str, Mapping[str, str]], object]) -> Reader:
    return lambda reply, options: _label(extract(reply, options))


def hand_counts(reader: Reader, rows: list[tuple[dict[str, str], str, str | None]]) -> tuple[int, int, int]:
    """(right, wrong, undecided) of ``reader`` against the hand reading (module docstring)."""
    right = wrong = undecided = 0
    for opts, reply, expected in rows:
        got = reader(reply, opts)
        if got == expected:
            right += 1
        elif got is None:
            undecided += 1
        else:
            wrong += 1
    return right, wrong, undecided


def _rows() -> dict[str, list[tuple[dict[str, str], str, str | None]]]:
    with gzip.open(FIXTURES / "llava15_13b_mmbench_dev.jsonl.gz", "rt", encoding="utf-8") as handle:
        sheet = [
            ({c: r[c] for c in "ABCD" if r[c] is not None}, str(r["prediction"]), r["answer"])
            for r in map(json.loads, handle)
        ]
    verbose = [
        (r["options"], r["reply"], r["expected"])
        for r in map(json.loads, (FIXTURES / "verbose_choice_replies.jsonl").read_text().splitlines())
    ]
    return {"llava15_13b_mmbench_dev": sheet, "verbose_choice_replies (hand-checked)": verbose}


def _whys() -> list[str]:
    lines = (FIXTURES / "verbose_choice_replies.jsonl").read_text(encoding="utf-8").splitlines()
    return [str(json.loads(line)["why"]) for line in lines]


def main() -> None:
    """Print the counts and timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="REV", help="also read the replies with the choice reader of REV")
    args = parser.parse_args()
    for name, rows in _rows().items():
        strict = sum(match_choice(reply, opts) is not None for opts, reply, _ in rows)
        ours = [_label(extract_choice(reply, opts)) for opts, reply, _ in rows]
        theirs = [can_infer(reply, dict(opts)) for opts, reply, _ in rows]
        theirs = ["abstain" if t == "Z" else t for t in theirs]
        decided = sum(o is not None for o in ours)
        print(
            f"{name}: {len(rows)} replies; decided: strict matcher {strict}, vqaudit {decided}, "
            f"VLMEvalKit can_infer {sum(t is not None for t in theirs)}"
        )
        if "hand" not in name:
            continue
        readers: list[tuple[str, Reader]] = []
        if args.before:
            readers.append((f"vqaudit before ({args.before})", _reader_of(_module_at(args.before).extract_choice)))
        readers.append(("vqaudit (this checkout)", _reader_of(extract_choice)))
        readers.append(("VLMEvalKit can_infer", _can_infer_label))
        held = [i for i, why in enumerate(_whys()) if why.startswith("held out")]
        for subset, picked in (("all", rows), (f"the {len(held)} held out", [rows[i] for i in held])):
            by_hand = sum(e is not None for _, _, e in picked)
            print(
                f"  {subset} replies against the hand reading ({by_hand} decided by hand, "
                f"{len(picked) - by_hand} undecided by hand):"
            )
            print(f"  {'reader':<34}{'right':>7}{'wrong':>7}{'undecided':>11}")
            for label, reader in readers:
                right, wrong, undecided = hand_counts(reader, picked)
                print(f"  {label:<34}{right:>7}{wrong:>7}{undecided:>11}")
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
    for label, reply in (
        ("'Answer:' + 16K '*'", "Answer:" + "*" * 16_000),
        ("16K newlines", "\n" * 16_000 + "x"),
        ("'answer is option' + 16K spaces", "answer is option" + " " * 16_000),
        ("'**A** ' x 2,600", "**A** " * 2_600),
        ("'The answer is A, ' x 1,000", "The answer is A, " * 1_000),
        ("'A or ' x 3,200", "A or " * 3_200),
        ("'angle A is correct. ' x 800", "angle A is correct. " * 800),
    ):
        print(measure(f"extract_choice on {label}", lambda r=reply: extract_choice(r, opts)).line())


if __name__ == "__main__":
    main()
