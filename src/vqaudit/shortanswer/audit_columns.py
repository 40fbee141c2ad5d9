"""The short-answer audit's pooled figures and per-row records, computed from its layer columns.

:func:`vqaudit.shortanswer.audit.audit_rows` computes each layer as one column over the joined rows (official
score, canonical ``(score, kind)``, contract, overlay, repaired scores, RA-Eval); this module turns those columns
into what the Table 13 report shows: the mean score per split (:func:`by_split`), the contract mix with official
and canonical scores and repair gains per bucket (Tables 4/5/7), the canonical fault kinds of gained rows and the
causes of lost ones, the RA-Eval counts (seed 002 §3.3; partial credit and multiple choice apart) and the
:class:`RowResult` record of every row.

Every pooled mean is ``sum(values) / n * 100`` over the same values in row order as the per-row definitions
(``sum`` of a list, so the float result is bit-identical on every Python version), and the columns are read
in C-level passes (``operator.itemgetter`` over each bucket's row numbers, comprehensions over ``zip``) instead
of one small Python call per row and figure.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from itertools import compress
from operator import itemgetter, ne
from typing import overload

from vqaudit.scoring.canonical import GAIN_KINDS, PARTIAL, REFUSAL_CAUSES, gain_kind, refusal_cause
from vqaudit.scoring.contracts import BUCKETS, Contract
from vqaudit.scoring.repair import VARIANTS, Overlay
from vqaudit.shortanswer.records import AuditRow

OVERALL = "Overall"


@dataclass(frozen=True)
class RowResult:
    """Every layer's result for one joined row (written to ``rows.jsonl``; overlay = new gold columns).

    ``canonical_kind`` is the kind of the best-matching reference (``exact`` when one reference equals the
    prediction, None for no canonical match), on every row. The report counts changed rows by two other labels,
    which the record carries so that its counts can be found row by row: ``canonical_gain_kind``, the kind a
    row the canonical layer scores above official is counted under in ``canonical_kinds`` (None on every other
    row), and ``canonical_lost_cause``, the cause a row it scores below official is counted under in
    ``canonical_lost_causes`` (None on every other row); see :func:`canonical_change_labels`.
    """

    qid: str
    split: str
    official: float
    canonical: float
    canonical_kind: str | None
    canonical_gain_kind: str | None
    canonical_lost_cause: str | None
    bucket: str
    subtype: str | None
    overlay: tuple[tuple[str, ...], ...]
    repaired: dict[str, float]
    ra_eval: bool | None = None
    judge: bool | None = None


_ROW_FIELDS = (
    "qid",
    "split",
    "official",
    "canonical",
    "canonical_kind",
    "canonical_gain_kind",
    "canonical_lost_cause",
    "bucket",
    "subtype",
    "overlay",
    "repaired",
    "ra_eval",
    "judge",
)
assert tuple(f.name for f in fields(RowResult)) == _ROW_FIELDS  # row_results writes exactly these, in this order
_OUTPUT_ONLY, _REFERENCE_ONLY, _BIDIRECTIONAL = VARIANTS  # row_results builds RowResult.repaired in this order


def mean100(values: Sequence[float]) -> float:
    """``sum(values) / len(values) * 100`` (NaN for no values), in VLMEvalKit's order of operations.

    Its Overall 58.720000000000006 depends on that order (``vlmeval/dataset/utils/vqa_eval.py``), so every pooled
    score of the audit is computed this way.
    """
    return sum(values) / len(values) * 100.0 if values else math.nan


def by_split(splits: Sequence[str], values: Sequence[float]) -> dict[str, float]:
    """:func:`mean100` of ``values`` per split (first-seen order; rows with an empty split in none) and Overall.

    Args:
        splits: the split name of each row ("" when unknown).
        values: one score per row (same order).

    Returns:
        ``{split: mean, ..., "Overall": mean}``.

    Raises:
        ValueError: the two sequences differ in length.
    """
    if len(splits) != len(values):
        raise ValueError("splits and values differ in length")
    out: dict[str, float] = {}
    for split in dict.fromkeys(s for s in splits if s):
        if splits.count(split) == len(splits):  # one split holds every row: its values are all of them
            out[split] = mean100(values)
        else:
            out[split] = mean100([v for s, v in zip(splits, values, strict=True) if s == split])
    out[OVERALL] = mean100(values)
    return out


def _pick(values: Sequence[float], rows: Sequence[int]) -> list[float]:
    """``[values[i] for i in rows]``, read by one ``itemgetter`` call."""
    if len(rows) > 1:
        return list(itemgetter(*rows)(values))
    return [values[i] for i in rows]


def bucket_tables(
    buckets: Sequence[str],
    official: Sequence[float],
    canonical: Sequence[float],
    repaired: Mapping[str, Sequence[float]],
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """The contract mix (Tables 4/5) and the repair gain per bucket (Table 7), every bucket of :data:`BUCKETS`.

    Args:
        buckets: the contract bucket of each row.
        official: official score per row.
        canonical: canonical score per row.
        repaired: for each of :data:`VARIANTS`, the repaired score per row.

    Returns:
        ``mix``: per bucket ``n``, ``share`` (percent of rows; NaN for no rows), ``errors`` (official score
        below 1), ``official`` and ``canonical`` (:func:`mean100`; NaN for an empty bucket); and ``by_bucket``:
        per bucket and variant, the repaired mean minus the official mean (points).
    """
    rows_of: dict[str, list[int]] = {bucket: [] for bucket in BUCKETS}
    for i, bucket in enumerate(buckets):
        rows_of[bucket].append(i)
    mix: dict[str, dict[str, float]] = {}
    by_bucket: dict[str, dict[str, float]] = {}
    n = len(buckets)
    for bucket in BUCKETS:
        idx = rows_of[bucket]
        scores = _pick(official, idx)
        mix[bucket] = {
            "n": len(idx),
            "share": 100.0 * len(idx) / n if n else math.nan,
            "errors": sum([s < 1.0 for s in scores]),
            "official": mean100(scores),
            "canonical": mean100(_pick(canonical, idx)),
        }
        by_bucket[bucket] = {v: mean100(_pick(repaired[v], idx)) - mix[bucket]["official"] for v in VARIANTS}
    return mix, by_bucket


def canonical_change_labels(
    rows: Sequence[AuditRow],
    official: Sequence[float],
    canonical: Sequence[float],
    kinds_of_rows: Sequence[str | None],
    metric: str,
) -> tuple[list[str | None], list[str | None]]:
    """The label each row is counted under in the report: its gain kind, or its loss cause.

    A gained row (canonical above official) is labelled with its canonical kind: :data:`PARTIAL` for no kind,
    the kind of :func:`vqaudit.scoring.canonical.gain_kind` for ``exact`` (a VQA-accuracy row gains from its
    other references), else the kind itself. A lost row (canonical below official) is labelled with
    :func:`vqaudit.scoring.canonical.refusal_cause`. Rows with equal scores, or a NaN score, get neither.

    Args:
        rows: the joined rows (prediction and answers of the changed ones are read).
        official: official score per row.
        canonical: canonical score per row.
        kinds_of_rows: canonical kind per row (None: no canonical match).
        metric: the official metric name.

    Returns:
        ``(gained, lost)``, one entry per row: one of :data:`GAIN_KINDS` or None, one of :data:`REFUSAL_CAUSES`
        or None (never both set).

    Raises:
        ValueError: the columns differ in length.
    """
    if not len(rows) == len(official) == len(canonical) == len(kinds_of_rows):
        raise ValueError("rows, official and canonical scores and kinds differ in length")
    gained: list[str | None] = [None] * len(rows)
    lost: list[str | None] = [None] * len(rows)
    for i in compress(range(len(rows)), map(ne, official, canonical)):  # NaN != NaN: neither branch below takes it
        s, c, row = official[i], canonical[i], rows[i]
        if c > s:
            kind = kinds_of_rows[i]
            gained[i] = (
                PARTIAL if kind is None else gain_kind(row.prediction, row.answers, metric) if kind == "exact" else kind
            )
        elif c < s:
            lost[i] = refusal_cause(row.prediction, row.answers, metric)
    return gained, lost


def count_changes(
    gained: Sequence[str | None], lost: Sequence[str | None]
) -> tuple[dict[str, int], int, dict[str, int]]:
    """The report's counts of the row labels of :func:`canonical_change_labels`.

    Returns:
        ``(kinds, lost, causes)``: every one of :data:`GAIN_KINDS` with its count of gained rows, the number of
        lost rows, and every one of :data:`REFUSAL_CAUSES` with its count.
    """
    kinds = dict.fromkeys(GAIN_KINDS, 0)
    causes = dict.fromkeys(REFUSAL_CAUSES, 0)
    n_lost = 0
    for kind in filter(None, gained):
        kinds[kind] += 1
    for cause in filter(None, lost):
        causes[cause] += 1
        n_lost += 1
    return kinds, n_lost, causes


def ra_eval_info(official: Sequence[float], ra: Sequence[bool | None]) -> dict[str, float]:
    """The RA-Eval figures of an audit (seed 002 §3.3), all as floats.

    ``errors``: rows with official score below 1; ``zero_credit_errors`` / ``partial_credit_rows``: the tested
    ones (RA-Eval not None) scoring 0 / above 0; ``recovered``: zero-credit errors RA-Eval recovers, ``share`` of
    them in percent (NaN for none); ``partial_credit_matched``: partial-credit rows it matches;
    ``multiple_choice_skipped``: errors not tested; ``score``: :func:`mean100` with every recovered or matched row
    counted as 1.

    Raises:
        ValueError: the two sequences differ in length.
    """
    if len(official) != len(ra):
        raise ValueError("official scores and RA-Eval results differ in length")
    is_error = [s < 1.0 for s in official]
    error_scores = list(compress(official, is_error))
    error_ra = list(compress(ra, is_error))
    zero = [r for s, r in zip(error_scores, error_ra, strict=True) if s == 0.0 and r is not None]
    partial = [r for s, r in zip(error_scores, error_ra, strict=True) if s > 0.0 and r is not None]
    recovered = zero.count(True)
    return {
        "errors": float(len(error_scores)),
        "recovered": float(recovered),
        "share": 100.0 * recovered / len(zero) if zero else math.nan,
        "zero_credit_errors": float(len(zero)),
        "partial_credit_rows": float(len(partial)),
        "partial_credit_matched": float(partial.count(True)),
        "multiple_choice_skipped": float(error_ra.count(None)),
        "score": mean100([1.0 if r else s for s, r in zip(official, ra, strict=True)]),
    }


class RowResults(Sequence[RowResult]):
    """The :class:`RowResult` of every row, held as columns and built one record at a time when read.

    A record per row held for the whole audit cost about 430 bytes a row (the instance, its attribute dict and
    the ``repaired`` dict; ``tracemalloc`` at 50,000 rows); the columns are the audit's own layer columns, held
    as given (nothing is copied or converted: every value comes back as the same object), and the joined rows
    (already held by the join report) for ``qid`` and ``split``. Reading a record (by index, slice or iteration)
    builds a new :class:`RowResult` equal field for field to the one ``RowResult(qid, split, ...)`` gives. Two
    sequences of records compare equal when their records do, in order (another :class:`RowResults`, a tuple or
    a list).
    """

    __slots__ = (
        "_canonical",
        "_contracts",
        "_gained",
        "_lost",
        "_official",
        "_overlays",
        "_ra",
        "_repaired",
        "_rows",
        "_verdicts",
    )

    def __init__(
        self,
        rows: Sequence[AuditRow],
        official: Sequence[float],
        canonical: Sequence[tuple[float, str | None]],
        contracts: Sequence[Contract],
        overlays: Sequence[Overlay],
        repaired_rows: Sequence[tuple[float, ...]],
        ra: Sequence[bool | None],
        verdicts: Sequence[bool | None],
        gained: Sequence[str | None],
        lost: Sequence[str | None],
    ) -> None:
        n = len(rows)
        columns = (official, canonical, contracts, overlays, repaired_rows, ra, verdicts, gained, lost)
        if any(len(column) != n for column in columns):
            raise ValueError("the audit's columns differ in length")
        if any(len(r) != len(VARIANTS) for r in repaired_rows):
            raise ValueError(f"a row has not one repaired score per variant ({len(VARIANTS)})")
        self._rows = rows
        self._official = official
        self._canonical = canonical
        self._contracts = contracts
        self._overlays = overlays
        self._repaired = repaired_rows
        self._ra = ra
        self._verdicts = verdicts
        self._gained = gained
        self._lost = lost

    def __len__(self) -> int:
        return len(self._rows)

    def with_rows(self) -> Iterator[tuple[RowResult, AuditRow]]:
        """Each record with the joined row it was built from, in order, reading the joined rows once.

        What ``rows.jsonl`` writes of a row needs both (:func:`vqaudit.report.shortanswer.write_audit_report`);
        reading the records and the rows side by side read a packed sequence of rows twice.
        """
        for i, row in enumerate(self._rows):
            yield self._record(i, row), row

    def _record(self, i: int, row: AuditRow | None = None) -> RowResult:
        # Built without the dataclass __init__ (a frozen dataclass sets each of the 13 fields through
        # object.__setattr__): a new instance's attribute dict gets the fields in declaration order, which is all
        # that __init__ does (RowResult has no __post_init__), so the records are equal, compare and print alike,
        # and dataclasses.asdict gives the same dict.
        if row is None:
            row = self._rows[i]
        contract, (canonical, kind) = self._contracts[i], self._canonical[i]
        r0, r1, r2 = self._repaired[i]
        rec = object.__new__(RowResult)
        rec.__dict__.update(
            qid=row.qid,
            split=row.split,
            official=self._official[i],
            canonical=canonical,
            canonical_kind=kind,
            canonical_gain_kind=self._gained[i],
            canonical_lost_cause=self._lost[i],
            bucket=contract.bucket,
            subtype=contract.subtype,
            overlay=self._overlays[i],
            repaired={_OUTPUT_ONLY: r0, _REFERENCE_ONLY: r1, _BIDIRECTIONAL: r2},
            ra_eval=self._ra[i],
            judge=self._verdicts[i],
        )
        return rec

    @overload
    def __getitem__(self, index: int) -> RowResult: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[RowResult, ...]: ...

    def __getitem__(self, index: int | slice) -> RowResult | tuple[RowResult, ...]:
        if isinstance(index, slice):
            return tuple(map(self._record, range(len(self))[index]))
        n = len(self)
        if not -n <= index < n:
            raise IndexError("row index out of range")
        return self._record(index % n)

    def __iter__(self) -> Iterator[RowResult]:
        return map(self._record, range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RowResults | tuple | list):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # equal to tuples and lists, which hash differently

    def __repr__(self) -> str:
        return f"RowResults({len(self)} rows)"


def row_results(
    rows: Sequence[AuditRow],
    official: Sequence[float],
    canonical: Sequence[tuple[float, str | None]],
    contracts: Sequence[Contract],
    overlays: Sequence[Overlay],
    repaired_rows: Sequence[tuple[float, ...]],
    ra: Sequence[bool | None],
    verdicts: Sequence[bool | None],
    *,
    gained: Sequence[str | None],
    lost: Sequence[str | None],
) -> tuple[RowResult, ...]:
    """The :class:`RowResult` of every row, equal field for field to ``RowResult(qid, split, ...)``.

    ``gained`` / ``lost`` are the row labels of :func:`canonical_change_labels` (the record's
    ``canonical_gain_kind`` / ``canonical_lost_cause``). ``repaired_rows`` holds each row's repaired scores in
    :data:`VARIANTS` order; the record's ``repaired`` maps each variant to its score. Every record is held; the
    audit keeps its :class:`RowResults` instead, which builds the same records when read.

    Raises:
        ValueError: the columns differ in length, or a row has not one repaired score per variant.
    """
    return tuple(RowResults(rows, official, canonical, contracts, overlays, repaired_rows, ra, verdicts, gained, lost))
