"""Build an MM-UPD benchmark folder: standard and UPD views, one per circular rotation (seed 001, §4, 0.B, 0.C).

Views have ``source="upd"``. States: ``standard`` (the item as asked) and ``aad`` / ``iasd`` / ``ivqd`` (its
unsolvable counterpart). One view per circular rotation: an item with n options gets n views whose options are
``options[r:] + options[:r]`` for r = 0..n-1 (MMBench circular evaluation, 0.C.1). In the option setting the
extra option ("None of the above" / "The image and question are irrelevant.") is appended *after* the rotated
options, so it is always the last letter and the rotation count stays n (the paper does not say whether its
extra option takes part in the shift).

A group is one item under one (variant, setting): its standard views and its UPD views (the ``original`` setting,
LLaVA's letter-only prompt for the "Original Standard" row of Table 1, has standard views only). Obligations:
standard views ``answer`` with ``gold = (letter of the correct option in that rotation,)``, ``choice``; UPD views
``abstain`` (a reply naming ``meta["removed_text"]`` also passes, 0.C.1). ``view.meta`` keys: ``item_index``,
``ability``, ``ability_index``, ``l2_category``, ``variant``, ``setting``, ``kind`` (``standard``/``upd``),
``rotation``, ``n_rotations``, ``hint``, ``correct_text`` (standard), ``removed_text`` (AAD/IASD UPD views; None
otherwise), ``abstain_letter`` (the letter that abstains: the extra option's in the option setting, ``F`` in the
instruction setting, else None), ``donor_index`` and ``item_source``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.files import sha256_bytes
from vqaudit.prompts.upd import EXTRA_OPTION, INSTRUCTION_LETTER, LETTERS, SETTINGS
from vqaudit.schema import Group, Obligation, UPDViewMeta, View
from vqaudit.suites.common import GroupBuild, build_benchmark
from vqaudit.suites.common import versions as common_versions
from vqaudit.suites.upd.abilities import ability_index
from vqaudit.suites.upd.preprocess import preprocess
from vqaudit.suites.upd.tsv import MCItem, load_mc
from vqaudit.suites.upd.variants import VARIANTS, UPDPair, build_pairs

BUNDLED_TSVS = ("mmbench_samples_en.tsv", "easyvqa_test_mc.tsv")
"""Bundled evaluation inputs, in the order their items are used (see ``data/SOURCES.md``)."""


def bundled_path(name: str) -> Path:
    """Path of a bundled data file of this suite (``vqaudit/suites/upd/data/<name>``)."""
    return Path(str(resources.files("vqaudit.suites.upd").joinpath("data", name)))


def load_items(
    tsv: Path | None, max_items: int | None = None, *, images: Path | None = None, merged: list[int] | None = None
) -> tuple[list[MCItem], dict[str, str]]:
    """Load the items of ``tsv`` (or of the bundled TSVs when None), keeping the first ``max_items``.

    Circular copies (index + k * 10**6) are merged into their items (:func:`vqaudit.suites.upd.tsv.load_mc`);
    the number of merged rows is appended to ``merged`` when given.

    Returns:
        The items and ``{file name: SHA-256}`` of the files read.

    Raises:
        VqauditError: a malformed file (see :func:`load_mc`), an index used twice across the bundled files, or
            ``max_items < 1``.
    """
    paths = [tsv] if tsv is not None else [bundled_path(n) for n in BUNDLED_TSVS]
    items: list[MCItem] = []
    n_merged = 0
    for path in paths:
        loaded = load_mc(path, images=images if tsv is not None else None)
        items.extend(loaded.items)
        n_merged += loaded.merged_rows
    if merged is not None:
        merged.append(n_merged)
    seen: set[int] = set()
    for item in items:
        if item.index in seen:
            raise VqauditError(f"index {item.index} appears in more than one input row")
        seen.add(item.index)
    if max_items is not None:
        if max_items < 1:
            raise VqauditError(f"--max-items must be at least 1 (got {max_items})")
        items = items[:max_items]
    read = [*paths, *([images] if images is not None and tsv is not None else [])]
    return items, {p.name: sha256_bytes(p.read_bytes()) for p in read}


def _ext(data: bytes) -> str:
    return "png" if data.startswith(b"\x89PNG") else "jpg" if data.startswith(b"\xff\xd8") else "gif"


def image_name(data: bytes) -> str:
    """Benchmark-relative path of an image: ``images/<first 24 hex of its SHA-256>.<ext>``."""
    return f"images/{hashlib.sha256(data).hexdigest()[:24]}.{_ext(data)}"


@dataclass(frozen=True)
class _Side:
    kind: str
    state: str
    options: tuple[str, ...]
    answer: int | None
    image: bytes


def _views(pair: UPDPair, setting: str, group_id: str) -> list[View]:
    item = pair.item
    sides = [_Side("standard", "standard", item.options, item.answer, item.image)]
    if setting != "original":
        sides.append(_Side("upd", pair.variant, pair.upd_options, None, pair.upd_image))
    views: list[View] = []
    for side in sides:
        n = len(side.options)
        for r in range(n):
            shown = side.options[r:] + side.options[:r]
            abstain_letter: str | None = None
            if setting == "option":
                abstain_letter = LETTERS[n]
                shown = (*shown, EXTRA_OPTION[pair.variant])
            elif setting == "instruction":
                abstain_letter = INSTRUCTION_LETTER
            if side.answer is None:
                obligation = Obligation(kind="abstain")
            else:
                obligation = Obligation(kind="answer", gold=(LETTERS[(side.answer - r) % n],), answer_type="choice")
            meta = UPDViewMeta(
                item_index=item.index,
                ability=item.category,
                ability_index=ability_index(item.category),
                l2_category=item.l2_category,
                variant=pair.variant,
                setting=setting,
                kind=side.kind,
                rotation=r,
                n_rotations=n,
                hint=item.hint,
                correct_text=item.answer_text if side.kind == "standard" else None,
                removed_text=pair.removed_text if side.kind == "upd" else None,
                abstain_letter=abstain_letter,
                donor_index=pair.donor_index,
                item_source=item.extra.get("source", ""),
            ).model_dump()
            views.append(
                View(
                    view_id=f"{group_id}-{'std' if side.kind == 'standard' else side.state}-r{r}",
                    group_id=group_id,
                    source="upd",
                    state=side.state,
                    image=image_name(side.image),
                    image_sha256=sha256_bytes(side.image),
                    question=item.question,
                    options=shown,
                    obligation=obligation,
                    meta=meta,
                )
            )
    return views


def _expand(value: str, allowed: tuple[str, ...], what: str) -> tuple[str, ...]:
    if value == "all":
        return allowed
    parts = tuple(v.strip() for v in value.split(",") if v.strip())
    bad = [p for p in parts if p not in allowed]
    if bad or not parts:
        raise VqauditError(f"unknown {what} {value!r}; expected 'all' or a comma list of {', '.join(allowed)}")
    return parts


def _drop_agnostic(
    items: list[MCItem], inputs: dict[str, str], runs: Sequence[Path], k: int | None
) -> tuple[list[MCItem], dict[str, Any]]:
    """The items left after dropping those the blind ``runs`` answer, and the manifest's ``image_agnostic``."""
    from vqaudit.suites.upd.agnostic import image_agnostic, read_blind_run

    blind = [read_blind_run(path) for path in runs]
    for run in blind:
        if run.inputs != inputs:  # an item index names another question in other input files
            raise VqauditError(
                f"{run.path}: its benchmark was built from other input files ({run.inputs}) than "
                f"this build ({inputs}); run the blind pass on a build of the same files"
            )
    dropped, record = image_agnostic(blind, k)
    kept = [item for item in items if item.index not in dropped]
    gone = sorted(item.index for item in items if item.index in dropped)
    return kept, {**record, "n_dropped": len(gone), "dropped": gone}


def versions() -> dict[str, str]:
    """Versions of everything that affects the views."""
    return common_versions("numpy")


def build_upd(
    out: Path,
    *,
    tsv: Path | None,
    variant: str,
    setting: str,
    seed: int,
    max_items: int | None = None,
    images: Path | None = None,
    drop_image_agnostic: Sequence[Path] = (),
    drop_k: int | None = None,
) -> dict[str, Any]:
    """Build an MM-UPD benchmark folder and return its manifest.

    Args:
        out: target folder; must not exist or be empty.
        tsv: an MMBench-layout TSV, or None for the bundled real data (20 MMBench sample rows, then 300 easy-VQA
            test items converted to multiple choice).
        variant: ``aad``, ``iasd``, ``ivqd``, a comma list of them, or ``all``.
        setting: ``base``, ``option``, ``instruction``, ``original``, a comma list, or ``all``.
        seed: seed of the IASD/IVQD donor draws; the same inputs and seed give byte-identical files.
        max_items: use only the first ``max_items`` items, circular copies merged (None: all).
        images: a file with ``index`` and ``image`` columns for a ``tsv`` without images (a VLMEvalKit sheet).
        drop_image_agnostic: scored blind runs (``vqaudit run --blind``) on a build of the same input files;
            the items at least ``drop_k`` of them answer correctly are dropped before preprocessing
            (:mod:`vqaudit.suites.upd.agnostic`, seed 001 App. 0.B.1).
        drop_k: how many of those runs must answer an item (None: all of them).

    Returns:
        The manifest written to ``out/manifest.json``: format, source, variants, settings, seed, inputs (file
        SHA-256), counts per (variant, setting), dropped items with reasons, option edits, versions, and the
        SHA-256 of every image and of the views and groups files. ``counts_by_ability`` is
        ``{variant: {ability: items}}`` (seed 001 Table B's layout). ``n_rows_merged`` counts the circular-copy
        rows (index + k * 10**6) merged into their items. With ``drop_image_agnostic``, ``image_agnostic`` is the
        rule's record (:func:`vqaudit.suites.upd.agnostic.image_agnostic`) plus ``dropped`` (the item indices
        removed, sorted) and ``n_dropped``.

    Raises:
        VqauditError: bad arguments, a malformed TSV, a non-empty output folder, no item left to build, or a
            blind run that is not one (see :func:`vqaudit.suites.upd.agnostic.read_blind_run`) or was made on a
            build of other input files.
    """
    variants = _expand(variant, VARIANTS, "variant")
    settings = _expand(setting, SETTINGS, "setting")
    if out.exists() and any(out.iterdir()):
        raise VqauditError(f"{out}: output folder exists and is not empty; choose a new folder")
    if drop_k is not None and not drop_image_agnostic:
        raise VqauditError("--drop-k counts blind runs: give them with --drop-image-agnostic RUN")
    merged: list[int] = []
    items, inputs = load_items(tsv, max_items, images=images, merged=merged)
    agnostic: dict[str, Any] | None = None
    if drop_image_agnostic:
        items, agnostic = _drop_agnostic(items, inputs, drop_image_agnostic, drop_k)
    pre = preprocess(items)
    builds: list[GroupBuild] = []
    counts: dict[str, int] = {}
    by_ability: dict[str, dict[str, int]] = {}
    dropped: dict[str, list[list[Any]]] = {"preprocess": [list(d) for d in pre.dropped]}
    for v in variants:
        pairs, lost = build_pairs(v, list(pre.items), seed)
        dropped[v] = [list(d) for d in lost]
        tally: dict[str, int] = {}
        for pair in pairs:
            tally[pair.item.category] = tally.get(pair.item.category, 0) + 1
        by_ability[v] = dict(sorted(tally.items(), key=lambda kv: (ability_index(kv[0]) or 99, kv[0])))
        for s in settings:
            counts[f"{v}/{s}"] = len(pairs)
            for pair in pairs:
                group_id = f"upd-{v}-{s}-{pair.item.index}"
                group_views = _views(pair, s, group_id)
                item = pair.item
                group = Group(
                    group_id=group_id,
                    source="upd",
                    question=item.question,
                    view_ids=tuple(x.view_id for x in group_views),
                    meta={
                        "item_index": item.index,
                        "ability": item.category,
                        "ability_index": ability_index(item.category),
                        "l2_category": item.l2_category,
                        "variant": v,
                        "setting": s,
                        "donor_index": pair.donor_index,
                    },
                )
                files = {image_name(data): data for data in (pair.item.image, pair.upd_image)}
                builds.append(GroupBuild(group=group, views=tuple(group_views), images=files))
    if not builds:
        raise VqauditError("no item is left after preprocessing and the variant rules; nothing to build")

    def fields(groups: Sequence[Group], views: Sequence[View]) -> dict[str, Any]:
        return {
            "variants": list(variants),
            "settings": list(settings),
            "seed": seed,
            "max_items": max_items,
            "inputs": inputs,
            "credits": "see vqaudit/suites/upd/data/SOURCES.md" if tsv is None else str(tsv),
            "n_items_loaded": len(items),
            "n_rows_merged": merged[0],
            "n_items_after_preprocess": len(pre.items),
            "n_groups": len(groups),
            "n_views": len(views),
            "counts": counts,
            "counts_by_ability": by_ability,
            "dropped": dropped,
            "edits": [list(e) for e in pre.edits],
            **({"image_agnostic": agnostic} if agnostic is not None else {}),
            "versions": versions(),
        }

    return build_benchmark(out, "upd", builds, fields)
