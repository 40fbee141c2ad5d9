"""AAD / IASD / IVQD builders (seed 001, appendix 0.B.2-0.B.4) and the benchmark folder they are written to."""

from __future__ import annotations

from pathlib import Path

from upd.helpers import row, write_tsv
from vqaudit.schema import View
from vqaudit.store import load_benchmark
from vqaudit.suites.upd.build import build_upd, load_items
from vqaudit.suites.upd.preprocess import CANT_JUDGE, normalize, preprocess
from vqaudit.suites.upd.tsv import MCItem, load_tsv
from vqaudit.suites.upd.variants import build_aad, build_iasd, build_ivqd


def _bundled() -> list[MCItem]:
    return list(preprocess(load_items(None)[0]).items)


def test_aad_removes_the_correct_option_and_applies_the_drop_rules(tmp_path: Path) -> None:
    # 0.B.2: mask the correct option; drop 2-option items and "all of these"/"both" answers; drop near-duplicates.
    rows = [
        row(1, "What colour?", ["red", "blue", "green", "pink"], "C", "attribute_recognition"),
        row(2, "Yes or no?", ["yes", "no"], "A", "ocr"),
        row(3, "Which apply?", ["A", "B", "Both A and B"], "C", "ocr"),
        row(4, "Which apply?", ["x", "y", "All of these options are correct."], "C", "ocr"),
        row(5, "Who?", ["Jackie Chan", "Jackie Chan.", "Steve Jobs"], "A", "celebrity_recognition"),
    ]
    pairs, dropped = build_aad(list(preprocess(load_tsv(write_tsv(tmp_path / "t.tsv", rows))).items))
    assert [(p.item.index, p.upd_options, p.removed_text) for p in pairs] == [(1, ("red", "blue", "pink"), "green")]
    assert [i for i, _ in dropped] == [2, 3, 4, 5]


def test_iasd_pairs_never_share_an_option_with_the_original_set() -> None:
    # docs/upd.md, IASD rule (2); checked on every pair of the full bundled data (320 rows), two seeds.
    items = _bundled()
    by_index = {i.index: i for i in items}
    for seed in (0, 1):
        pairs, _ = build_iasd(items, seed)
        assert len(pairs) >= 300
        for pair in pairs:
            assert pair.donor_index is not None
            donor = by_index[pair.donor_index]
            assert pair.upd_options == donor.options and donor.index != pair.item.index
            assert donor.answer_domain != pair.item.answer_domain
            original = {normalize(o) for o in pair.item.options}
            assert not original & {normalize(o) for o in pair.upd_options}
            assert normalize(pair.item.answer_text) not in " ".join(normalize(o) for o in pair.upd_options).split()


def test_iasd_is_deterministic_and_depends_on_the_seed() -> None:
    items = _bundled()
    first = [p.donor_index for p in build_iasd(items, 0)[0]]
    assert first == [p.donor_index for p in build_iasd(items, 0)[0]]
    assert first != [p.donor_index for p in build_iasd(items, 1)[0]]


def test_ivqd_excludes_generic_questions_and_cant_judge(tmp_path: Path) -> None:
    # 0.B.4 and Table C: "How many ...", captions, emotion, ... fit any image; "Can't judge" is removed.
    rows = [
        row(1, "How many dogs are in this picture?", ["1", "2", "3"], "A", "object_localization"),
        row(2, "Which mood does this image convey?", ["calm", "sad", "angry"], "A", "image_emotion"),
        row(3, "Which one is the correct caption of this image?", ["a", "b", "c"], "A", "image_topic"),
        row(4, "Which object is taller?", ["the tree", "the house", "Can't judge"], "B", "attribute_comparison"),
        row(5, "Who is the person in this image?", ["Jackie Chan", "Steve Jobs"], "B", "celebrity_recognition"),
    ]
    pairs, dropped = build_ivqd(list(preprocess(load_tsv(write_tsv(tmp_path / "t.tsv", rows))).items), seed=0)
    assert sorted(p.item.index for p in pairs) == [4, 5]
    assert {i for i, _ in dropped} == {1, 2, 3}
    pair = next(p for p in pairs if p.item.index == 4)
    assert CANT_JUDGE not in pair.item.options and pair.item.answer_text == "the house"
    assert pair.upd_image != pair.item.image and pair.removed_text is None


def test_ivqd_easy_vqa_donor_images_lack_what_the_question_names() -> None:
    # Our IVQD rule for easy-VQA (docs/upd.md): "What color is the triangle?" never gets an image with a triangle.
    items = _bundled()
    by_index = {i.index: i for i in items}
    pairs, _ = build_ivqd(items, seed=0)
    easy = [p for p in pairs if "image_shape" in p.item.extra]
    assert len(easy) >= 100
    for pair in easy:
        assert pair.donor_index is not None
        donor = by_index[pair.donor_index]
        words = set(normalize(pair.item.question).replace("?", "").split())
        assert donor.extra["image_shape"] not in words and donor.extra["image_color"] not in words


def _by_group(views: list[View]) -> dict[str, list[View]]:
    out: dict[str, list[View]] = {}
    for v in views:
        out.setdefault(v.group_id, []).append(v)
    return out


def test_views_hold_one_circular_rotation_each(small_views: list[View]) -> None:
    # 0.C.1 circular evaluation: n options -> n rotations; the gold letter follows the correct option.
    groups = _by_group(small_views)
    assert groups
    for group in groups.values():
        for v in group:
            n = v.meta["n_rotations"]
            real = v.options[:n]
            assert len([x for x in group if x.state == v.state]) == n
            if v.obligation.kind == "answer":
                assert real["ABCDE".index(v.obligation.gold[0])] == v.meta["correct_text"]
            if v.meta["setting"] == "option":
                assert len(v.options) == n + 1 and v.meta["abstain_letter"] == "ABCDEF"[n]
            elif v.meta["setting"] == "instruction":
                assert len(v.options) == n and v.meta["abstain_letter"] == "F"
            else:
                assert len(v.options) == n and v.meta["abstain_letter"] is None
        kinds = {v.meta["kind"] for v in group}
        assert kinds == ({"standard"} if group[0].meta["setting"] == "original" else {"standard", "upd"})


def test_build_is_byte_identical_for_a_seed(tmp_path: Path, small_bench: Path) -> None:
    out = tmp_path / "again"
    build_upd(out, tsv=None, variant="all", setting="all", seed=0, max_items=40)
    for name in ("views.jsonl", "groups.jsonl", "manifest.json"):
        assert (out / name).read_bytes() == (small_bench / name).read_bytes()
    bench = load_benchmark(out)  # every image exists and matches its hash
    assert {v.source for v in bench.views} == {"upd"}
