"""Question generation from the official CLEVR 1.0 templates (Johnson et al., CVPR 2017; docs/scenes.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from vqaudit.errors import VqauditError
from vqaudit.suites.scenes.programs import Node, execute, metadata
from vqaudit.suites.scenes.questions import (
    SUPPORTED_FAMILIES,
    Question,
    Template,
    generate,
    is_degenerate,
    synonyms,
    templates,
)
from vqaudit.suites.scenes.scene import load_scenes


def supported_templates() -> tuple[Template, ...]:
    """All templates of ``SUPPORTED_FAMILIES``, in family then index order."""
    return tuple(t for f in SUPPORTED_FAMILIES for t in templates(f))


FIXTURES = Path(__file__).parents[2] / "fixtures" / "scenes" / "questions"


def _sample(n: int, seed: int = 7) -> list[tuple[Question, object]]:
    scenes = load_scenes("val")
    ts = supported_templates()
    out = []
    for g in range(n):
        rng = np.random.default_rng([seed, g])
        scene = scenes[int(rng.integers(len(scenes)))]
        q = generate(scene, ts[g % len(ts)], rng)
        if q is not None:
            out.append((q, scene))
    return out


@pytest.fixture(scope="module")
def sample() -> list[tuple[Question, object]]:
    return _sample(57)  # one attempt per supported template


def test_the_official_template_files_have_90_families_and_57_are_supported() -> None:
    counts = {
        f: len(templates(f))
        for f in (
            "compare_integer",
            "comparison",
            "one_hop",
            "same_relate",
            "single_and",
            "single_or",
            "three_hop",
            "two_hop",
            "zero_hop",
        )
    }
    assert sum(counts.values()) == 90
    assert len(supported_templates()) == 6 + 6 + 9 + 8 + 28 == 57
    assert SUPPORTED_FAMILIES == ("zero_hop", "one_hop", "compare_integer", "single_or", "same_relate")
    with pytest.raises(VqauditError):
        templates("four_hop")


def test_generation_is_deterministic_for_a_seed() -> None:
    scene = load_scenes("val")[3]
    t = templates("one_hop")[3]
    a = generate(scene, t, np.random.default_rng([5, 1]))
    b = generate(scene, t, np.random.default_rng([5, 1]))
    assert a == b and a is not None


def test_generated_questions_are_valid_non_degenerate_and_satisfy_their_constraints(sample: list) -> None:
    assert len(sample) >= 50  # a few templates have no valid instance on the drawn scene
    for q, scene in sample:
        outputs = execute(q.program, scene)
        assert outputs[-1] == q.answer and q.answer is not None
        monotone = q.program[-1].type in ("less_than", "greater_than")
        assert not is_degenerate(q.program, scene, require_all=monotone)
        for node, out in zip(q.program, outputs, strict=True):
            if node.type == "unique":
                assert isinstance(out, int)
        family, index = q.template_id.split("/")
        template = templates(family)[int(index)]
        vals = dict(q.values)
        for c in template.constraints:
            if c["type"] == "NULL":
                assert vals.get(c["params"][0], "") in ("", "thing"), q.template_id


def test_every_filter_value_and_relation_is_named_in_the_text(sample: list) -> None:
    for q, _ in sample:
        text = f" {q.text.lower().replace('?', ' ').replace(';', ' ')} "
        for node in q.program:
            if node.type.startswith("filter_") or node.type == "relate":
                forms = synonyms().get(node.values[0], [node.values[0]])
                assert any(re.search(rf"\b{re.escape(f)}s?\b", text) for f in forms), (q.text, node)
        assert "<" not in q.text and "[" not in q.text and "  " not in q.text


def test_degenerate_relate_is_rejected_on_a_hand_checked_scene() -> None:
    # CLEVR_val_000000: right-of(brown cylinder 0) = [1, 2, 3, 4], i.e. every other object, so "things right of the
    # brown cylinder" equals "all things but it"; counting gray things there gives 2, as in the whole scene.
    s = load_scenes("val")[0]
    prog = (
        Node("scene"),
        Node("filter_color", (0,), ("brown",)),
        Node("unique", (1,)),
        Node("relate", (2,), ("right",)),
        Node("filter_color", (3,), ("gray",)),
        Node("count", (4,)),
    )
    assert execute(prog, s)[-1] == 2
    assert is_degenerate(prog, s)
    left = prog[:3] + (Node("relate", (2,), ("left",)), prog[4], prog[5])  # left of 0 is empty: 0 != 2
    assert not is_degenerate(left, s)
    # "fewer gray things left of the brown cylinder (none: 0) than large things right of it (1 and 3: 2)?" -> yes.
    # Dropping the right-hand relate can only grow its count (large: 0, 1, 3 -> 0 < 3), so the answer survives:
    # degenerate under CLEVR's "any" rule. Dropping the left one gives gray {1, 4}: 2 < 2 -> no, so not "all".
    cmp = (
        *prog[:5],
        Node("count", (4,)),
        Node("scene"),
        Node("filter_color", (6,), ("brown",)),
        Node("unique", (7,)),
        Node("relate", (8,), ("right",)),
        Node("filter_size", (9,), ("large",)),
        Node("count", (10,)),
        Node("less_than", (5, 11)),
    )
    cmp = (*prog[:3], Node("relate", (2,), ("left",)), *cmp[4:])
    assert execute(cmp, s)[-1] is True
    assert is_degenerate(cmp, s)  # replacing the right-hand relate keeps 0 < 3
    assert not is_degenerate(cmp, s, require_all=True)  # replacing the left one gives 2 < 2: no


def test_traced_questions_name_existing_templates_and_use_the_official_phrasings() -> None:
    # Every real traced question matches one phrasing of its template, with each <param> replaced by a synonym,
    # a plural, or nothing, and [optional] parts present or absent.
    # (the traced set writes relations unsynonymised, e.g. "left the", hence the raw type values too)
    raw = {str(v) for vs in metadata()["types"].values() if vs for v in vs}
    words = sorted({w for ws in synonyms().values() for w in ws} | raw, key=len, reverse=True)
    alt = "|".join(re.escape(w) for w in words)
    n = 0
    for path in sorted(FIXTURES.glob("*.json")):
        family = path.stem.removeprefix("CLEVR_val_1_")
        for q in json.loads(path.read_text())["questions"]:
            # same_relate questions cite "1_same_relate_restricted.json", a re-indexed subset: try the whole family
            restricted = "restricted" in q["template_filename"]
            cands = templates(family) if restricted else (templates(family)[q["template_index"]],)
            pats = []
            for phr in (p for t in cands for p in t.text):
                p = re.escape(phr)
                p = re.sub(r"\\\[([^\]]*?)\\\]", r"(?:\1)?", p)
                p = re.sub(r"<[A-Z]\d?>", f"(?:{alt})?", p)
                p = re.sub(r"(\\ )+", r"\\s*", p)
                # the generator's "other" heuristic drops "other" and turns "another" into "a"
                p = p.replace("another", "an?(?:other)?").replace("other\\s*", "(?:other\\s*)?")
                pats.append("^" + p + "$")
            text = q["question"]
            assert any(re.match(p, text) for p in pats), text
            n += 1
    assert n == 55
