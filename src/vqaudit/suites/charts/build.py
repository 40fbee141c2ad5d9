"""Build a chart answerability benchmark: five views per group over worlds drawn from real tables.

States (SPEC section 1; seed 000, §3.1): ``original``; ``S`` (a non-queried cell changes, answer kept); ``C`` (the
queried cell changes, answer changes); ``M`` (the queried category's band is masked over the whole plot area;
abstain, with a checked witness); ``I`` (the queried category is replaced by another real category of the same
table; abstain, the lookup is undefined). Group ``g`` draws everything from ``numpy.random.default_rng([seed, g])``,
so the same seed gives byte-identical views, images, certificates and manifest, whatever the number of workers.
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import PIL

import vqaudit
from vqaudit.errors import VqauditError
from vqaudit.schema import Group, Obligation, View
from vqaudit.store import atomic_write_bytes, sha256_bytes, write_json, write_jsonl
from vqaudit.suites.charts.render import apply_mask, pixel_sha256, png_bytes, render
from vqaudit.suites.charts.tables import TABLE_NAMES, RealTable, load_table
from vqaudit.suites.charts.witness import find_witness, lookup, make_certificate
from vqaudit.suites.charts.world import (
    CHART_KINDS,
    World,
    distinct_value,
    fraction_text,
    replace_category,
    sample_world,
)

STATES = ("original", "S", "C", "M", "I")
BENCHMARK_FORMAT = "vqaudit-benchmark/1"


@dataclass(frozen=True)
class GroupBuild:
    """Everything one group writes: its record, its views, image files and certificates (path -> content)."""

    group: Group
    views: tuple[View, ...]
    images: dict[str, bytes]
    certificates: dict[str, dict[str, Any]]


def question_text(world: World, series: str, category: str) -> str:
    """The fixed lookup question of a group, with the unit from the value-axis label."""
    return f"What is the value of {series} for {category}, in {world.unit}?"


def _draw_world(rng: np.random.Generator) -> tuple[RealTable, World, int, int, World]:
    for _ in range(100):
        table = load_table(TABLE_NAMES[int(rng.integers(len(TABLE_NAMES)))])
        kind = CHART_KINDS[int(rng.integers(len(CHART_KINDS)))]
        n_series = 1 if len(table.series) == 1 or rng.random() < 0.5 else 2
        world = sample_world(table, kind, n_series, int(rng.integers(4, 8)), rng)
        if world is None:
            continue
        s, c = int(rng.integers(n_series)), int(rng.integers(len(world.categories)))
        invalid = replace_category(world, c, table, rng)
        if invalid is not None:
            return table, world, s, c, invalid
    raise VqauditError("could not draw a chart world after 100 attempts")  # pragma: no cover


def build_group(seed: int, g: int) -> GroupBuild:
    """Build group ``g`` of a benchmark with ``seed``: five views, their PNG images and the M certificate.

    Raises:
        VqauditError: if no mask yields a witness (the build fails loudly rather than writing an unproven label).
    """
    rng = np.random.default_rng([seed, g])
    table, world, s, c, invalid = _draw_world(rng)
    series, category = world.series[s], world.categories[c]
    group_id = f"charts-{g:05d}"
    question = question_text(world, series, category)

    others = [(si, ci) for si in range(len(world.series)) for ci in range(len(world.categories)) if (si, ci) != (s, c)]
    s2, c2 = others[int(rng.integers(len(others)))]
    world_s = world.with_value(s2, c2, distinct_value(world, world.values[s2][c2], rng))
    world_c = world.with_value(s, c, distinct_value(world, world.values[s][c], rng))
    pixels = render(world)
    witness = find_witness(world, s, c, rng, pixels)

    worlds = {"original": world, "S": world_s, "C": world_c, "M": world, "I": invalid}
    images: dict[str, bytes] = {}
    certificates: dict[str, dict[str, Any]] = {}
    views: list[View] = []
    for state in STATES:
        view_id = f"{group_id}-{state}"
        w = worlds[state]
        px = pixels if state in ("original", "M") else render(w)
        if state == "M":
            px = apply_mask(px, witness.mask)
        data = png_bytes(px)
        image = f"images/{view_id}.png"
        images[image] = data
        answer = lookup(w, series, category)
        meta: dict[str, Any] = {
            "table": table.name,
            "kind": w.kind,
            "program": {"op": "lookup", "series": series, "category": category},
            "world": w.to_json(),
        }
        if state in ("M", "I"):
            obligation = Obligation(kind="abstain")
        else:
            assert answer is not None
            obligation = Obligation(kind="answer", gold=(fraction_text(answer),), answer_type="number", unit=w.unit)
        if state == "M":
            cert_path = f"certificates/{view_id}.json"
            meta["certificate"] = cert_path
            certificates[cert_path] = make_certificate(
                view_id=view_id, group_id=group_id, world=world, s=s, c=c, witness=witness,
                image_pixel_sha256=pixel_sha256(px),
            )
        views.append(View(view_id=view_id, group_id=group_id, source="charts", state=state, image=image,
                          image_sha256=sha256_bytes(data), question=question, obligation=obligation, meta=meta))
    group = Group(group_id=group_id, source="charts", question=question, view_ids=tuple(v.view_id for v in views),
                  meta={"table": table.name, "kind": world.kind, "n_series": len(world.series)})
    return GroupBuild(group=group, views=tuple(views), images=images, certificates=certificates)


def _groups(seed: int, n_groups: int, workers: int) -> Iterator[GroupBuild]:
    make = partial(build_group, seed)
    if workers <= 1:
        yield from map(make, range(n_groups))
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(make, range(n_groups), chunksize=8)


def versions() -> dict[str, str]:
    """Versions of everything that affects the pixels and the labels."""
    return {"vqaudit": vqaudit.__version__, "matplotlib": matplotlib.__version__, "numpy": np.__version__,
            "pillow": PIL.__version__, "python": platform.python_version()}


def build_charts(
    out: Path, n_groups: int, seed: int, *, workers: int = 1, on_group: Callable[[int], None] | None = None
) -> dict[str, Any]:
    """Build a chart benchmark folder and return its manifest.

    Args:
        out: target folder; must not exist or be empty.
        n_groups: number of groups (>= 1); each has five views.
        seed: the build seed; the same seed gives byte-identical files.
        workers: processes used to render (results are identical for any value).
        on_group: called after each group is written (for progress bars).

    Returns:
        The manifest written to ``out/manifest.json``: format, source, seed, n_groups, versions, tables (with
        credits) and the SHA-256 of every image, certificate, views and groups file.

    Raises:
        VqauditError: bad arguments, a non-empty output folder, or a group whose witness search fails.
    """
    if n_groups < 1:
        raise VqauditError(f"--groups must be at least 1 (got {n_groups})")
    if out.exists() and any(out.iterdir()):
        raise VqauditError(f"{out}: output folder exists and is not empty; choose a new folder")
    out.mkdir(parents=True, exist_ok=True)
    all_views: list[View] = []
    groups: list[Group] = []
    files: dict[str, str] = {}
    used_tables: set[str] = set()
    for built in _groups(seed, n_groups, workers):
        for path, data in built.images.items():
            atomic_write_bytes(out / path, data)
            files[path] = sha256_bytes(data)
        for path, cert in built.certificates.items():
            write_json(out / path, cert)
            files[path] = sha256_bytes((out / path).read_bytes())
        all_views.extend(built.views)
        groups.append(built.group)
        used_tables.add(str(built.group.meta["table"]))
        if on_group is not None:
            on_group(len(groups))
    write_jsonl(out / "views.jsonl", all_views)
    write_jsonl(out / "groups.jsonl", groups)
    manifest = {
        "format": BENCHMARK_FORMAT,
        "source": "charts",
        "seed": seed,
        "n_groups": n_groups,
        "n_views": len(all_views),
        "states": list(STATES),
        "versions": versions(),
        "tables": {name: load_table(name).source for name in sorted(used_tables)},
        "files": dict(sorted(files.items())),
        "views_sha256": sha256_bytes((out / "views.jsonl").read_bytes()),
        "groups_sha256": sha256_bytes((out / "groups.jsonl").read_bytes()),
    }
    write_json(out / "manifest.json", manifest)
    return manifest
