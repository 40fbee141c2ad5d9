"""Build the UPD benchmark from official MM-UPD release files, every published question kept (seed 001, §4).

:func:`build_upd_release` reads each file with :func:`vqaudit.suites.upd.release.read_release` (which checks
it) and writes a benchmark folder with the same views, groups and meta as
:func:`vqaudit.suites.upd.build.build_upd`, so scoring, metrics and reports work unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.files import sha256_bytes
from vqaudit.parsing.choice import normalize_text
from vqaudit.prompts.upd import EXTRA_OPTION, INSTRUCTION_LETTER, LETTERS
from vqaudit.schema import Group, Obligation, UPDViewMeta, View
from vqaudit.suites.common import GroupBuild, build_benchmark
from vqaudit.suites.upd.abilities import ability_index
from vqaudit.suites.upd.release import ReleaseItem, read_release


def _extra_letter(options: tuple[str, ...], variant: str) -> str:
    wanted = normalize_text(EXTRA_OPTION[variant])
    hits = [LETTERS[i] for i, o in enumerate(options) if normalize_text(o) == wanted]
    return hits[-1] if hits else LETTERS[len(options) - 1]


def _image_name(data: bytes) -> str:
    from vqaudit.suites.upd.build import image_name

    return image_name(data)


def _views(item: ReleaseItem, variant: str, setting: str, group_id: str, path: Path) -> list[View]:
    std0 = item.standard[0]
    views: list[View] = []
    for side in (item.standard, item.upd):
        for k, r in enumerate(side):
            abstain: str | None = None
            if setting == "option":
                abstain = r.answer if r.kind == "upd" else _extra_letter(r.options, variant)
            elif setting == "instruction":
                abstain = INSTRUCTION_LETTER
            if r.kind == "standard":
                obligation = Obligation(kind="answer", gold=(r.answer,), answer_type="choice")
            else:
                obligation = Obligation(kind="abstain")
            removed = r.masked_answer if r.kind == "upd" and variant in ("aad", "iasd") and r.masked_answer else None
            meta = UPDViewMeta(
                item_index=item.index,
                ability=std0.category,
                ability_index=ability_index(std0.category),
                l2_category=std0.l2_category,
                variant=variant,
                setting=setting,
                kind=r.kind,
                rotation=k,
                n_rotations=len(side),
                hint=r.hint,
                correct_text=r.options[LETTERS.index(r.answer)] if r.kind == "standard" else None,
                removed_text=removed,
                abstain_letter=abstain,
                donor_index=None,
                item_source=f"{r.source} ({path.name}, row {r.row})".lstrip(),
            ).model_dump()
            tag = "std" if r.kind == "standard" else variant
            views.append(
                View(
                    view_id=f"{group_id}-{tag}-r{k}",
                    group_id=group_id,
                    source="upd",
                    state="standard" if r.kind == "standard" else variant,
                    image=_image_name(r.image),
                    image_sha256=sha256_bytes(r.image),
                    question=r.question,
                    options=r.options,
                    obligation=obligation,
                    meta=meta,
                )
            )
    return views


def build_upd_release(
    out: Path, files: Sequence[Path], *, variant: str | None = None, setting: str | None = None
) -> dict[str, Any]:
    """Build a UPD benchmark folder from release files, every published question kept; return its manifest.

    Args:
        out: target folder; must not exist or be empty.
        files: release files, one configuration each (their names say which, or ``variant``/``setting`` do).
        variant: the configuration's variant when the names do not say it.
        setting: the configuration's setting when the names do not say it.

    Returns:
        The manifest: ``release: true``, variants, settings, inputs (file SHA-256), ``counts`` per
        ``variant/setting``, ``counts_by_ability`` (``{variant: {ability: items}}``, seed 001 Table B's layout,
        from the first file of each variant), ``n_rows`` per file, and the hashes of every written file.

    Raises:
        VqauditError: no file, two files of one configuration, a malformed file (:func:`read_release`), or a
            non-empty output folder.
    """
    if not files:
        raise VqauditError("give at least one release file")
    if out.exists() and any(out.iterdir()):
        raise VqauditError(f"{out}: output folder exists and is not empty; choose a new folder")
    sets = [read_release(f, variant=variant, setting=setting) for f in files]
    seen: dict[tuple[str, str], Path] = {}
    for rs in sets:
        if (rs.variant, rs.setting) in seen:
            raise VqauditError(
                f"{rs.path}: configuration {rs.variant}/{rs.setting} also given by {seen[(rs.variant, rs.setting)]}"
            )
        seen[(rs.variant, rs.setting)] = rs.path
    builds: list[GroupBuild] = []
    counts: dict[str, int] = {}
    by_ability: dict[str, dict[str, int]] = {}
    for rs in sets:
        counts[f"{rs.variant}/{rs.setting}"] = len(rs.items)
        if rs.variant not in by_ability:
            tally: dict[str, int] = {}
            for item in rs.items:
                tally[item.standard[0].category] = tally.get(item.standard[0].category, 0) + 1
            by_ability[rs.variant] = dict(sorted(tally.items(), key=lambda kv: (ability_index(kv[0]) or 99, kv[0])))
        for item in rs.items:
            group_id = f"upd-{rs.variant}-{rs.setting}-{item.index}"
            views = _views(item, rs.variant, rs.setting, group_id, rs.path)
            std0 = item.standard[0]
            group = Group(
                group_id=group_id,
                source="upd",
                question=std0.question,
                view_ids=tuple(v.view_id for v in views),
                meta={
                    "item_index": item.index,
                    "ability": std0.category,
                    "ability_index": ability_index(std0.category),
                    "l2_category": std0.l2_category,
                    "variant": rs.variant,
                    "setting": rs.setting,
                    "donor_index": None,
                },
            )
            images = {_image_name(r.image): r.image for r in (*item.standard, *item.upd)}
            builds.append(GroupBuild(group=group, views=tuple(views), images=images))
    if not builds:
        raise VqauditError("the release files hold no item; nothing to build")

    def fields(groups: Sequence[Group], views: Sequence[View]) -> dict[str, Any]:
        from vqaudit.suites.upd.build import versions

        return {
            "release": True,
            "variants": sorted({rs.variant for rs in sets}),
            "settings": sorted({rs.setting for rs in sets}),
            "seed": 0,
            "max_items": None,
            "inputs": {rs.path.name: sha256_bytes(rs.path.read_bytes()) for rs in sets},
            "credits": "MM-UPD release (Miyai et al., seed 001): " + ", ".join(str(rs.path) for rs in sets),
            "n_rows": {rs.path.name: rs.n_rows for rs in sets},
            "n_items_loaded": sum(len(rs.items) for rs in sets),
            "n_rows_merged": sum(rs.n_rows - 2 * len(rs.items) for rs in sets),
            "n_groups": len(groups),
            "n_views": len(views),
            "counts": counts,
            "counts_by_ability": by_ability,
            "dropped": {},
            "edits": [],
            "versions": versions(),
        }

    return build_benchmark(out, "upd", builds, fields)
