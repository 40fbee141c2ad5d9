"""Read the official MM-UPD release files and build the UPD benchmark from them as published (seed 001, §4).

The release (``MM-UPD/MM-UPD``, one file per configuration ``mm{aad,iasd,ivqd}_{base,option,instruction}``,
as parquet or as the TSV export the UPD repository evaluates; ``AtsuMiyai/UPD``
``automatic_eval/calculate_scores.py``) holds, per configuration, **standard and UPD rows sharing one index**:

- ``type``: ``standard`` (the item as MMBench asks it) or ``upd`` (its unsolvable counterpart);
- ``index``: the item's index; circular passes are further rows ``index + k * 10**6`` of the same type (the
  scorer groups ``index % 10**6``), whose options are rotations of the first pass's;
- ``question``, ``hint``, ``A``-``E`` (empty cells end the list; only an empty cell or a parquet null is missing,
  :func:`vqaudit.suites.upd.table_files.cell_text`, so an option "None" is kept; the option setting already holds the
  extra option "None of the above" / "The image and question are irrelevant."), ``answer`` (standard: the
  correct letter; UPD: ``F`` or, in the option setting, the extra option's letter, which must be an option and
  name that extra option: seed 001 §4, the added option "is the correct one for UPD questions"),
  ``masked_answer`` (AAD/IASD UPD rows: the removed correct option's text), ``category``, ``l2-category``,
  ``image`` (base64 text, raw bytes, or a ``{"bytes": ...}`` image struct in parquet; digits refer to the image
  of that index; every image must decode fully with PIL, :func:`vqaudit.suites.upd.tsv.image_problem`),
  ``split``.

:func:`read_release` pairs standard and UPD rows by index as the release's scorer does (a UPD row without its
standard row, or the reverse, is an error naming the row), checks every circular copy (same question, options
a rotation of the first pass's, answer letter naming the same option text, or the same letter when it names
no option), refuses a question missing one of its passes (one per rotation of its rotating options, standard and
UPD alike; the scorer would score it over the rows it finds, so a file cut short would shorten its circular
test; a file without any copy is single-pass), and keeps every question: the published set is taken as it is
(no preprocessing, no variant rules, no donor draw).
:func:`vqaudit.suites.upd.release_build.build_upd_release` builds the benchmark from these items. One row is read
and checked by :mod:`vqaudit.suites.upd.release_rows`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from vqaudit.errors import VqauditError
from vqaudit.parsing.choice import normalize_text
from vqaudit.prompts.upd import EXTRA_OPTION, LETTERS
from vqaudit.suites.upd.release_rows import ADDED_OPTIONS, ReleaseRow, check_setting, parse_row, read_rows
from vqaudit.suites.upd.table_files import row_error as _err
from vqaudit.suites.upd.tsv import CIRCULAR_STRIDE, image_problem, rotation_shift

RELEASE_NAME = re.compile(r"mm(aad|iasd|ivqd)_(base|option|instruction)", re.IGNORECASE)
"""A release file's configuration, read from its name (``mmaad_base.tsv``, ``mmivqd_option-....parquet``)."""


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


def config_of(path: Path, variant: str | None, setting: str | None) -> tuple[str, str]:
    """The (variant, setting) of a release file: from its name, or the given values (which must agree).

    Raises:
        VqauditError: the name tells nothing and a value is missing, or a given value contradicts the name.
    """
    found = RELEASE_NAME.search(path.name)
    named = (found.group(1).lower(), found.group(2).lower()) if found else (None, None)
    v, s = variant or named[0], setting or named[1]
    if v is None or s is None:
        raise VqauditError(
            f"{path}: the file name does not say its configuration (mmaad_base, mmivqd_option, ...); "
            "give --variant and --setting (one value each)"
        )
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
        VqauditError: naming the file, row and field of a malformed row (an empty question or category, a gap
            between options, an answer letter that is not an option, a UPD answer of the option setting that is
            not the added option, an image that PIL cannot decode), a duplicate (index, type), an image
            reference to no row, a circular copy that is not a rotation of its first pass, asks another
            question or whose answer names another option, a copy without its first pass, a question missing
            one of its circular passes (field ``index``, the missing indexes), or a row of one type without its
            partner of the other.
    """
    v, s = config_of(path, variant, setting)
    records = read_rows(path)
    if not records:
        raise VqauditError(f"{path}: no data rows")
    rows = [parse_row(path, r, rec, v, s) for r, rec in enumerate(records, start=1)]
    check_setting(path, [parsed for parsed, _ in rows], v, s)
    by_key: dict[tuple[str, int], ReleaseRow] = {}
    raw: dict[tuple[str, int], bytes | str] = {}
    for parsed, image in rows:
        key = (parsed.kind, parsed.index)
        if key in by_key:
            raise _err(
                path,
                parsed.row,
                "index",
                f"duplicate {parsed.kind} row for index {parsed.index} (first at row {by_key[key].row})",
            )
        by_key[key], raw[key] = parsed, image
    decoded: set[bytes] = set()
    for parsed, image in rows:
        if isinstance(image, bytes) and image not in decoded:
            problem = image_problem(image)
            if problem:
                raise _err(path, parsed.row, "image", problem)
            decoded.add(image)
    resolved: dict[tuple[str, int], ReleaseRow] = {}
    for key, parsed in by_key.items():
        image = raw[key]
        if isinstance(image, str):
            ref = int(image)
            image = next(
                (
                    raw[k]
                    for k in ((key[0], ref), ("standard", ref), ("upd", ref))
                    if k in raw and isinstance(raw[k], bytes)
                ),
                "",
            )
            if not image:
                raise _err(path, parsed.row, "image", f"refers to index {ref}, which has no image in this file")
        assert isinstance(image, bytes)
        resolved[key] = ReleaseRow(**{**parsed.__dict__, "image": image})
    return ReleaseSet(path, v, s, tuple(_pair(path, resolved, s)), len(records))


def _answer_named(r: ReleaseRow) -> str:
    """The option text an answer letter names, or the letter itself when it names no option (UPD ``F``)."""
    letters = LETTERS[: len(r.options)]
    return r.options[letters.index(r.answer)] if len(r.answer) == 1 and r.answer in letters else r.answer


def _passes(path: Path, rows: dict[tuple[str, int], ReleaseRow], kind: str, base: int) -> tuple[ReleaseRow, ...]:
    first = rows[(kind, base)]
    copies = sorted(
        (r for (k, i), r in rows.items() if k == kind and i >= CIRCULAR_STRIDE and i % CIRCULAR_STRIDE == base),
        key=lambda r: r.index,
    )
    for copy in copies:
        where = f"{path}: rows {first.row} and {copy.row} ({kind} index {base} and its circular copy {copy.index})"
        if copy.question != first.question:
            raise VqauditError(f"{where}, field 'question': the copy asks another question")
        if rotation_shift(first.options, copy.options) is None:
            raise VqauditError(f"{where}, fields 'A'-'E': the copy's options are not a rotation of the first pass's")
        if _answer_named(copy) != _answer_named(first):
            raise VqauditError(
                f"{where}, field 'answer': the copy's answer {copy.answer} names "
                f"{_answer_named(copy)!r}, the first pass's {first.answer} names "
                f"{_answer_named(first)!r}"
            )
    return (first, *copies)


def _kept_tail(passes: tuple[ReleaseRow, ...]) -> int | None:
    """How many trailing options the copies keep in place (n minus the rotated prefix), or None without copies."""
    first = passes[0]
    prefixes = [m for c in passes[1:] if (m := _rotated_prefix(first.options, c.options)) is not None]
    return len(first.options) - max(prefixes) if prefixes else None


def _rotated_prefix(original: tuple[str, ...], copy: tuple[str, ...]) -> int | None:
    """How many leading options ``copy`` rotates (the ``m`` of :func:`rotation_shift`), or None (same order)."""
    for m in range(len(original), 1, -1):
        if copy[m:] == original[m:] and any(copy[:m] == original[s:m] + original[:s] for s in range(1, m)):
            return m
    return None


def _check_complete(path: Path, passes: tuple[ReleaseRow, ...], tail: int) -> None:
    """Refuse a question that lacks circular passes: one pass per rotation of its rotating options.

    A question whose first ``m`` options rotate has ``m`` passes, at ``index + k * 10**6`` for ``k = 0 .. m-1``
    (MMBench circular evaluation; the release's scorer scores an item over whatever rows have its
    ``index % 10**6`` and regenerates none, so a lost row would shorten its circular test). ``m`` is the option
    count less ``tail`` kept options (the option setting's added option, or a trailing option the copies keep).
    """
    first, copies = passes[0], passes[1:]
    seen = {c.index // CIRCULAR_STRIDE for c in copies}
    missing = [first.index + k * CIRCULAR_STRIDE for k in range(1, len(first.options) - tail) if k not in seen]
    if missing:
        raise _err(
            path,
            first.row,
            "index",
            f"{first.kind} index {first.index} has {len(passes)} of its "
            f"{len(passes) + len(missing)} circular passes: no {first.kind} row has index "
            f"{', '.join(str(m) for m in missing)} (a file cut short or a row lost? the release's scorer "
            "would score this question over fewer rotations)",
        )


def _pair(path: Path, rows: dict[tuple[str, int], ReleaseRow], setting: str) -> list[ReleaseItem]:
    for (kind, index), r in rows.items():
        base = index % CIRCULAR_STRIDE
        if index >= CIRCULAR_STRIDE and (kind, base) not in rows:
            raise _err(
                path,
                r.row,
                "index",
                f"circular copy {index} of {kind} index {base}, but no {kind} row has index {base}",
            )
        other = "upd" if kind == "standard" else "standard"
        if index < CIRCULAR_STRIDE and (other, index) not in rows:
            raise _err(
                path,
                r.row,
                "type",
                f"the {kind} row of index {index} has no {other} row (the release pairs them by index)",
            )
    circular = any(index >= CIRCULAR_STRIDE for _, index in rows)
    items: list[ReleaseItem] = []
    for (kind, index), _ in sorted(rows.items(), key=lambda kv: kv[1].row):
        if kind == "standard" and index < CIRCULAR_STRIDE:
            std, upd = _passes(path, rows, "standard", index), _passes(path, rows, "upd", index)
            if circular:
                tails = (_kept_tail(std), _kept_tail(upd))
                added = int(setting == "option" and normalize_text(std[0].options[-1]) in ADDED_OPTIONS)
                for side, own, theirs in ((std, tails[0], tails[1]), (upd, tails[1], tails[0])):
                    tail = own if own is not None else theirs if theirs is not None else added
                    _check_complete(path, side, tail)
            items.append(ReleaseItem(index, std, upd))
    return items
