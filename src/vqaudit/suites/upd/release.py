"""Read the official MM-UPD release files and build the UPD benchmark from them as published (seed 001, §4).

The release (``MM-UPD/MM-UPD``, one file per configuration ``mm{aad,iasd,ivqd}_{base,option,instruction}``,
as parquet or as the TSV export the UPD repository evaluates; ``AtsuMiyai/UPD``
``automatic_eval/calculate_scores.py``) holds, per configuration, **standard and UPD rows sharing one index**:

- ``type``: ``standard`` (the item as MMBench asks it) or ``upd`` (its unsolvable counterpart);
- ``index``: the item's index; circular passes are further rows ``index + k * 10**6`` of the same type (the
  scorer groups ``index % 10**6``), whose options are rotations of the first pass's;
- ``question``, ``hint``, ``A``-``E`` (empty cells end the list; the option setting already holds the extra
  option "None of the above" / "The image and question are irrelevant."), ``answer`` (standard: the correct
  letter; UPD: ``F`` or, in the option setting, the extra option's letter), ``masked_answer`` (AAD/IASD UPD
  rows: the removed correct option's text), ``category``, ``l2-category``, ``image`` (base64 text, raw bytes, or
  a ``{"bytes": ...}`` image struct in parquet; digits refer to the image of that index), ``split``.

:func:`read_release` pairs standard and UPD rows by index as the release's scorer does (a UPD row without its
standard row, or the reverse, is an error naming the row), checks every circular copy, and keeps every
question: the published set is taken as it is (no preprocessing, no variant rules, no donor draw).
:func:`build_upd_release` writes a benchmark folder with the same views, groups and meta as
:func:`vqaudit.suites.upd.build.build_upd`, so scoring, metrics and reports work unchanged.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vqaudit.errors import VqauditError
from vqaudit.files import sha256_bytes
from vqaudit.parsing.choice import normalize_text
from vqaudit.prompts.upd import EXTRA_OPTION, INSTRUCTION_LETTER, LETTERS
from vqaudit.schema import Group, Obligation, UPDViewMeta, View
from vqaudit.suites.common import GroupBuild, build_benchmark
from vqaudit.suites.upd.abilities import ability_index
from vqaudit.suites.upd.tsv import CIRCULAR_STRIDE, IMAGE_MAGIC, read_records, rotation_shift

RELEASE_NAME = re.compile(r"mm(aad|iasd|ivqd)_(base|option|instruction)", re.IGNORECASE)
"""A release file's configuration, read from its name (``mmaad_base.tsv``, ``mmivqd_option-....parquet``)."""
_REQUIRED = ("index", "question", "A", "B", "answer", "category", "image", "type")
_OPTION_LETTERS = "ABCDE"


@dataclass(frozen=True)
class ReleaseRow:
    """One row of a release file (one pass of one side of one item)."""

    row: int
    index: int
    kind: str
    question: str
    hint: str
    options: tuple[str, ...]
    answer: str
    masked_answer: str
    category: str
    l2_category: str
    image: bytes
    source: str


@dataclass(frozen=True)
class ReleaseItem:
    """One published item: its standard and UPD passes (first pass first), paired by index."""

    index: int
    standard: tuple[ReleaseRow, ...]
    upd: tuple[ReleaseRow, ...]


@dataclass(frozen=True)
class ReleaseSet:
    """A release file's items, in file order of their first standard row, with its configuration."""

    path: Path
    variant: str
    setting: str
    items: tuple[ReleaseItem, ...]
    n_rows: int


def _err(path: Path, row: int, name: str, msg: str) -> VqauditError:
    return VqauditError(f"{path}: row {row}, field '{name}': {msg}")


def _records(path: Path) -> list[dict[str, Any]]:
    if path.suffix.lower() == ".parquet":
        if not path.is_file():
            raise VqauditError(f"{path}: file not found")
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise VqauditError("reading parquet needs pyarrow: pip install 'vqaudit[parquet]'") from None
        try:
            rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
        except Exception as exc:  # noqa: BLE001 - pyarrow raises many types for a damaged file
            raise VqauditError(f"{path}: not a readable parquet file: {exc}") from None
        return rows
    header, records = read_records(path)
    missing = [c for c in _REQUIRED if c not in header]
    if missing:
        raise VqauditError(f"{path}: row 0 (header), field '{missing[0]}': required column is missing")
    return [dict(r) for r in records]


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    text = str(value).strip()
    return "" if text.lower() in ("nan", "none") else text


def _image(path: Path, row: int, value: Any) -> bytes | str:
    """Raw image bytes, or the digit text of an index reference."""
    if isinstance(value, dict):
        value = value.get("bytes")
    if isinstance(value, (bytes, bytearray)):
        data = bytes(value)
    else:
        text = _text(value)
        if text.isdigit():
            return text
        if not text:
            raise _err(path, row, "image", "missing image")
        try:
            data = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise _err(path, row, "image", "not valid base64") from None
    if not data.startswith(IMAGE_MAGIC):
        raise _err(path, row, "image", "decoded bytes are not a PNG, JPEG or GIF image")
    return data


def _parse(path: Path, row: int, rec: dict[str, Any]) -> tuple[ReleaseRow, bytes | str]:
    for name in _REQUIRED:
        if name not in rec:
            raise _err(path, row, name, "missing")
    try:
        index = int(_text(rec["index"]))
    except ValueError:
        raise _err(path, row, "index", f"not an integer: {rec['index']!r}") from None
    if index < 0:
        raise _err(path, row, "index", f"negative index {index}")
    kind = _text(rec["type"]).lower()
    if kind not in ("standard", "upd"):
        raise _err(path, row, "type", f"expected 'standard' or 'upd', got {rec['type']!r}")
    question = _text(rec["question"])
    if not question:
        raise _err(path, row, "question", "empty question")
    values = [_text(rec.get(c)) for c in _OPTION_LETTERS]
    last = max((i for i, v in enumerate(values) if v), default=-1)
    for i in range(last + 1):
        if not values[i]:
            raise _err(path, row, _OPTION_LETTERS[i], f"option {_OPTION_LETTERS[i]} is empty but a later one is set")
    options = tuple(values[: last + 1])
    if len(options) < 1 or (kind == "standard" and len(options) < 2):
        raise _err(path, row, "B", "too few options")
    answer = _text(rec["answer"])
    if kind == "standard" and (len(answer) != 1 or answer not in LETTERS[: len(options)]):
        raise _err(path, row, "answer", f"{answer!r} is not one of the options {', '.join(LETTERS[: len(options)])}")
    category = _text(rec["category"])
    if not category:
        raise _err(path, row, "category", "empty category")
    parsed = ReleaseRow(row=row, index=index, kind=kind, question=question, hint=_text(rec.get("hint")),
                        options=options, answer=answer, masked_answer=_text(rec.get("masked_answer")),
                        category=category, l2_category=_text(rec.get("l2-category")), image=b"",
                        source=_text(rec.get("source")))
    return parsed, _image(path, row, rec["image"])


def config_of(path: Path, variant: str | None, setting: str | None) -> tuple[str, str]:
    """The (variant, setting) of a release file: from its name, or the given values (which must agree).

    Raises:
        VqauditError: the name tells nothing and a value is missing, or a given value contradicts the name.
    """
    found = RELEASE_NAME.search(path.name)
    named = (found.group(1).lower(), found.group(2).lower()) if found else (None, None)
    v, s = variant or named[0], setting or named[1]
    if v is None or s is None:
        raise VqauditError(f"{path}: the file name does not say its configuration (mmaad_base, mmivqd_option, ...); "
                           "give --variant and --setting (one value each)")
    if (named[0] and v != named[0]) or (named[1] and s != named[1]):
        raise VqauditError(f"{path}: the file name says {named[0]}/{named[1]}, the options say {v}/{s}")
    if v not in EXTRA_OPTION or s not in ("base", "option", "instruction"):
        raise VqauditError(f"{path}: unknown configuration {v}/{s}")
    return v, s


def read_release(path: Path, *, variant: str | None = None, setting: str | None = None) -> ReleaseSet:
    """Read one release file and pair its standard and UPD rows by index (module docstring).

    Args:
        path: a ``.parquet`` (needs pyarrow, the ``parquet`` extra) or a TSV/CSV/.xlsx export.
        variant: ``aad``/``iasd``/``ivqd`` when the file name does not say it.
        setting: ``base``/``option``/``instruction`` when the file name does not say it.

    Returns:
        The paired items and the configuration.

    Raises:
        VqauditError: naming the file, row and field of a malformed row, a duplicate (index, type), an image
            reference to no row, a circular copy that is not a rotation of its first pass or asks another
            question, a copy without its first pass, or a row of one type without its partner of the other.
    """
    v, s = config_of(path, variant, setting)
    records = _records(path)
    if not records:
        raise VqauditError(f"{path}: no data rows")
    rows: list[tuple[ReleaseRow, bytes | str]] = [_parse(path, r, rec) for r, rec in enumerate(records, start=1)]
    by_key: dict[tuple[str, int], ReleaseRow] = {}
    raw: dict[tuple[str, int], bytes | str] = {}
    for parsed, image in rows:
        key = (parsed.kind, parsed.index)
        if key in by_key:
            raise _err(path, parsed.row, "index", f"duplicate {parsed.kind} row for index {parsed.index} (first at "
                       f"row {by_key[key].row})")
        by_key[key], raw[key] = parsed, image
    resolved: dict[tuple[str, int], ReleaseRow] = {}
    for key, parsed in by_key.items():
        image = raw[key]
        if isinstance(image, str):
            ref = int(image)
            image = next((raw[k] for k in ((key[0], ref), ("standard", ref), ("upd", ref)) if k in raw
                          and isinstance(raw[k], bytes)), "")
            if not image:
                raise _err(path, parsed.row, "image", f"refers to index {ref}, which has no image in this file")
        assert isinstance(image, bytes)
        resolved[key] = ReleaseRow(**{**parsed.__dict__, "image": image})
    return ReleaseSet(path, v, s, tuple(_pair(path, resolved)), len(records))


def _passes(path: Path, rows: dict[tuple[str, int], ReleaseRow], kind: str, base: int) -> tuple[ReleaseRow, ...]:
    first = rows[(kind, base)]
    copies = sorted((r for (k, i), r in rows.items() if k == kind and i >= CIRCULAR_STRIDE
                     and i % CIRCULAR_STRIDE == base), key=lambda r: r.index)
    for copy in copies:
        where = f"{path}: rows {first.row} and {copy.row} ({kind} index {base} and its circular copy {copy.index})"
        if copy.question != first.question:
            raise VqauditError(f"{where}, field 'question': the copy asks another question")
        if rotation_shift(first.options, copy.options) is None:
            raise VqauditError(f"{where}, fields 'A'-'E': the copy's options are not a rotation of the first pass's")
    return (first, *copies)


def _pair(path: Path, rows: dict[tuple[str, int], ReleaseRow]) -> list[ReleaseItem]:
    for (kind, index), r in rows.items():
        base = index % CIRCULAR_STRIDE
        if index >= CIRCULAR_STRIDE and (kind, base) not in rows:
            raise _err(path, r.row, "index", f"circular copy {index} of {kind} index {base}, but no {kind} row has "
                       f"index {base}")
        other = "upd" if kind == "standard" else "standard"
        if index < CIRCULAR_STRIDE and (other, index) not in rows:
            raise _err(path, r.row, "type", f"the {kind} row of index {index} has no {other} row (the release pairs "
                       "them by index)")
    items: list[ReleaseItem] = []
    for (kind, index), _ in sorted(rows.items(), key=lambda kv: kv[1].row):
        if kind == "standard" and index < CIRCULAR_STRIDE:
            items.append(ReleaseItem(index, _passes(path, rows, "standard", index), _passes(path, rows, "upd", index)))
    return items


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
                letters = LETTERS[: len(r.options)]
                abstain = r.answer if r.kind == "upd" and r.answer in letters else _extra_letter(r.options, variant)
            elif setting == "instruction":
                abstain = INSTRUCTION_LETTER
            if r.kind == "standard":
                obligation = Obligation(kind="answer", gold=(r.answer,), answer_type="choice")
            else:
                obligation = Obligation(kind="abstain")
            removed = r.masked_answer if r.kind == "upd" and variant in ("aad", "iasd") and r.masked_answer else None
            meta = UPDViewMeta(
                item_index=item.index, ability=std0.category, ability_index=ability_index(std0.category),
                l2_category=std0.l2_category, variant=variant, setting=setting, kind=r.kind, rotation=k,
                n_rotations=len(side), hint=r.hint,
                correct_text=r.options[LETTERS.index(r.answer)] if r.kind == "standard" else None,
                removed_text=removed, abstain_letter=abstain, donor_index=None,
                item_source=f"{r.source} ({path.name}, row {r.row})".lstrip(),
            ).model_dump()
            tag = "std" if r.kind == "standard" else variant
            views.append(View(view_id=f"{group_id}-{tag}-r{k}", group_id=group_id, source="upd",
                              state="standard" if r.kind == "standard" else variant, image=_image_name(r.image),
                              image_sha256=sha256_bytes(r.image), question=r.question, options=r.options,
                              obligation=obligation, meta=meta))
    return views


def build_upd_release(out: Path, files: Sequence[Path], *, variant: str | None = None,
                      setting: str | None = None) -> dict[str, Any]:
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
            raise VqauditError(f"{rs.path}: configuration {rs.variant}/{rs.setting} also given by "
                               f"{seen[(rs.variant, rs.setting)]}")
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
            group = Group(group_id=group_id, source="upd", question=std0.question,
                          view_ids=tuple(v.view_id for v in views),
                          meta={"item_index": item.index, "ability": std0.category,
                                "ability_index": ability_index(std0.category), "l2_category": std0.l2_category,
                                "variant": rs.variant, "setting": rs.setting, "donor_index": None})
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
