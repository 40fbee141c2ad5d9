"""Forgers for the tamper suite: edit a benchmark as an attacker would, with every manifest hash recomputed.

A forged benchmark passes the manifest's hash checks (the attacker rewrites ``manifest.json``), so only a
re-derivation from what the benchmark declares (``vqaudit verify``) can catch it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vqaudit.files import sha256_bytes


def rehash(bench: Path) -> None:
    """Recompute every hash a benchmark records: each view's ``image_sha256``, the manifest's files and JSONL."""
    rows = [json.loads(line) for line in (bench / "views.jsonl").read_text().splitlines()]
    for row in rows:
        row["image_sha256"] = sha256_bytes((bench / row["image"]).read_bytes())
    (bench / "views.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifest = json.loads((bench / "manifest.json").read_text())
    manifest["files"] = {rel: sha256_bytes((bench / rel).read_bytes()) for rel in manifest["files"]}
    manifest["views_sha256"] = sha256_bytes((bench / "views.jsonl").read_bytes())
    manifest["groups_sha256"] = sha256_bytes((bench / "groups.jsonl").read_bytes())
    (bench / "manifest.json").write_text(json.dumps(manifest, indent=2))


def forge_view(src: Path, out: Path, view_id: str, edit: Callable[[dict[str, Any]], None]) -> Path:
    """Copy benchmark ``src`` to ``out``, apply ``edit`` to view ``view_id``'s JSON row, recompute every hash."""
    shutil.copytree(src, out)
    rows = [json.loads(line) for line in (out / "views.jsonl").read_text().splitlines()]
    [row] = [r for r in rows if r["view_id"] == view_id]
    edit(row)
    (out / "views.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    rehash(out)
    return out


def swap_image(src: Path, out: Path, view_id: str, other_view_id: str) -> Path:
    """Copy ``src`` to ``out`` with view ``view_id``'s image replaced by ``other_view_id``'s; recompute hashes."""
    shutil.copytree(src, out)
    rows = {r["view_id"]: r for r in map(json.loads, (out / "views.jsonl").read_text().splitlines())}
    (out / rows[view_id]["image"]).write_bytes((out / rows[other_view_id]["image"]).read_bytes())
    rehash(out)
    return out
