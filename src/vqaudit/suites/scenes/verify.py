"""The scene checker: re-renders every group's views and re-derives its labels (``vqaudit verify``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from vqaudit.errors import VqauditError
from vqaudit.schema import Group, SceneGroupMeta, View


def verify_scene_groups(
    bench_dir: Path, views: Sequence[View], groups: Sequence[Group], missing: set[str]
) -> list[tuple[str, str]]:
    """Re-derive every scene group's labels from its files (program re-execution, instance buffers).

    Groups with a view in ``missing`` (image not found: already a fault) are skipped.
    """
    scene_groups = [g for g in groups if g.source == "scenes" and not missing.intersection(g.view_ids)]
    if not scene_groups:
        return []
    from vqaudit.suites.scenes.check import check_group

    by_id = {v.view_id: v for v in views}
    faults: list[tuple[str, str]] = []
    for group in scene_groups:
        members = [by_id[i] for i in group.view_ids]
        try:
            meta = SceneGroupMeta.of(group)
            problems = check_group(members, meta.camera, meta.directions, bench_dir)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, VqauditError) as exc:
            problems = [f"malformed scene metadata in the group or its views ({type(exc).__name__}: {exc})"]
        faults += [(group.group_id, p) for p in problems]
    return faults
