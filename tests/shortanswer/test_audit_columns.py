"""The audit's pooled figures and row records equal their per-row definitions, bit for bit.

References, kept here: the per-row code :func:`vqaudit.shortanswer.audit.audit_rows` had before the columns
moved to :mod:`vqaudit.shortanswer.audit_columns` (one comprehension per figure, ``RowResult(...)`` per row).
Columns: random ones with hostile values (NaN, -0.0, 0 < s < 1, scores above 1, empty splits, one split for every
row, empty buckets, RA-Eval None, no rows at all) and the layers of the real fixture rows.
"""

from __future__ import annotations

import dataclasses
import math
import random
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from vqaudit.scoring.canonical import GAIN_KINDS, PARTIAL, REFUSAL_CAUSES, gain_kind, refusal_cause
from vqaudit.scoring.contracts import BUCKETS, Contract
from vqaudit.scoring.registry import official_scorer
from vqaudit.scoring.repair import VARIANTS
from vqaudit.shortanswer import audit_columns
from vqaudit.shortanswer.audit import RowResult
from vqaudit.shortanswer.audit_columns import OVERALL
from vqaudit.shortanswer.audit_layers import layer_passes
from vqaudit.shortanswer.records import AuditRow

from .helpers import bucket_counts, canonical_changes

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_fast_path import METRICS, _load  # noqa: E402  (the fixture loader of the fast-path tests)


def _mean100(values: Sequence[float]) -> float:
    return sum(values) / len(values) * 100.0 if values else math.nan


def _by_split(rows: Sequence[AuditRow], values: Sequence[float]) -> dict[str, float]:
    out: dict[str, float] = {}
    for split in dict.fromkeys(r.split for r in rows if r.split):
        out[split] = _mean100([v for r, v in zip(rows, values, strict=True) if r.split == split])
    out[OVERALL] = _mean100(values)
    return out


def _reference(
    rows: Sequence[AuditRow],
    official: list[float],
    canon: list[tuple[float, str | None]],
    contracts: list[Contract],
    overlays: list[tuple[tuple[str, ...], ...]],
    repaired_rows: list[tuple[float, ...]],
    ra: list[bool | None],
    verdicts: list[bool | None],
    metric: str,
) -> dict[str, object]:
    """The figures as audit_rows computed them before (copied from its code at commit 3e7146b)."""
    repaired = {v: [x[k] for x in repaired_rows] for k, v in enumerate(VARIANTS)}
    counts = bucket_counts(contracts)
    mix: dict[str, dict[str, float]] = {}
    by_bucket: dict[str, dict[str, float]] = {}
    rows_of: dict[str, list[int]] = {bucket: [] for bucket in BUCKETS}
    for i, contract in enumerate(contracts):
        rows_of[contract.bucket].append(i)
    for bucket in BUCKETS:
        idx = rows_of[bucket]
        mix[bucket] = {
            "n": counts[bucket],
            "share": 100.0 * counts[bucket] / len(rows) if rows else math.nan,
            "errors": sum(1 for i in idx if official[i] < 1.0),
            "official": _mean100([official[i] for i in idx]),
            "canonical": _mean100([canon[i][0] for i in idx]),
        }
        by_bucket[bucket] = {v: _mean100([repaired[v][i] for i in idx]) - mix[bucket]["official"] for v in VARIANTS}
    kinds = dict.fromkeys(GAIN_KINDS, 0)
    causes = dict.fromkeys(REFUSAL_CAUSES, 0)
    lost = 0
    gained_of: list[str | None] = []  # the row records carry the label each row is counted under
    lost_of: list[str | None] = []
    for row, s, (c, kind) in zip(rows, official, canon, strict=True):
        gained_of.append(None)
        lost_of.append(None)
        if c > s:
            named = (
                PARTIAL if kind is None else gain_kind(row.prediction, row.answers, metric) if kind == "exact" else kind
            )
            kinds[named] += 1
            gained_of[-1] = named
        elif c < s:
            lost += 1
            cause = refusal_cause(row.prediction, row.answers, metric)
            causes[cause] += 1
            lost_of[-1] = cause
    errors = [i for i, s in enumerate(official) if s < 1.0]
    zero = [i for i in errors if official[i] == 0.0 and ra[i] is not None]
    partial = [i for i in errors if official[i] > 0.0 and ra[i] is not None]
    recovered = sum(1 for i in zero if ra[i])
    ra_info = {
        "errors": float(len(errors)),
        "recovered": float(recovered),
        "share": 100.0 * recovered / len(zero) if zero else math.nan,
        "zero_credit_errors": float(len(zero)),
        "partial_credit_rows": float(len(partial)),
        "partial_credit_matched": float(sum(1 for i in partial if ra[i])),
        "multiple_choice_skipped": float(sum(1 for i in errors if ra[i] is None)),
        "score": _mean100([1.0 if ra[i] else s for i, s in enumerate(official)]),
    }
    results = tuple(
        RowResult(
            r.qid,
            r.split,
            official[i],
            canon[i][0],
            canon[i][1],
            gained_of[i],
            lost_of[i],
            contracts[i].bucket,
            contracts[i].subtype,
            overlays[i],
            dict(zip(VARIANTS, repaired_rows[i], strict=True)),
            ra[i],
            verdicts[i],
        )
        for i, r in enumerate(rows)
    )
    return {
        "mix": mix,
        "by_bucket": by_bucket,
        "kinds": kinds,
        "lost": lost,
        "causes": causes,
        "ra": ra_info,
        "rows": results,
        "scores": _by_split(rows, official) if rows else {},
        "canonical": _by_split(rows, [c[0] for c in canon]) if rows else {},
    }


def _columns(
    rows: Sequence[AuditRow],
    official: list[float],
    canon: list[tuple[float, str | None]],
    contracts: list[Contract],
    overlays: list[tuple[tuple[str, ...], ...]],
    repaired_rows: list[tuple[float, ...]],
    ra: list[bool | None],
    verdicts: list[bool | None],
    metric: str,
) -> dict[str, object]:
    """The same figures from audit_columns, called the way audit_rows calls them."""
    repaired = {v: [x[k] for x in repaired_rows] for k, v in enumerate(VARIANTS)}
    canonical = [c for c, _ in canon]
    mix, by_bucket = audit_columns.bucket_tables([c.bucket for c in contracts], official, canonical, repaired)
    gained, lost_of = audit_columns.canonical_change_labels(rows, official, canonical, [k for _, k in canon], metric)
    kinds, lost, causes = audit_columns.count_changes(gained, lost_of)
    assert (kinds, lost, causes) == canonical_changes(rows, official, canonical, [k for _, k in canon], metric)
    splits = [r.split for r in rows]
    return {
        "mix": mix,
        "by_bucket": by_bucket,
        "kinds": kinds,
        "lost": lost,
        "causes": causes,
        "ra": audit_columns.ra_eval_info(official, ra),
        "rows": audit_columns.row_results(
            rows, official, canon, contracts, overlays, repaired_rows, ra, verdicts, gained=gained, lost=lost_of
        ),
        "scores": audit_columns.by_split(splits, official) if rows else {},
        "canonical": audit_columns.by_split(splits, canonical) if rows else {},
    }


def _plain(value: object) -> object:
    """Comparable form: floats by repr (NaN equal to NaN, -0.0 apart from 0.0), records as (type, fields)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__, repr(value), _plain(dataclasses.asdict(value)), _plain(vars(value)))
    if isinstance(value, dict):
        return [(k, type(v).__name__, _plain(v)) for k, v in value.items()]  # key order and value types count
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float):
        return repr(value)
    return (type(value).__name__, value)


def _assert_same(got: dict[str, object], want: dict[str, object]) -> None:
    for key in want:
        assert _plain(got[key]) == _plain(want[key]), key


_SCORES = [0.0, 1.0, 0.3, 0.5, 2 / 3, 1e-300, -0.0, 1.5, math.nan, 0.9999999999999999, 1, 0]
_TEXTS = [
    "",
    "42",
    "1,000",
    "The answer is 7.",
    "[a, b]",
    "3.0",
    "yes",
    "no",
    "2019",
    "0042",
    "5 %",
    "a",
    "1e3",
    "0.05",
]


def _random_columns(rng: random.Random, n: int) -> tuple[list[AuditRow], ...]:
    splits = rng.choice([["val"], ["", "val"], ["test_human", "test_augmented", ""], [""]])
    buckets = rng.sample(BUCKETS, rng.randint(1, len(BUCKETS)))
    rows = [
        AuditRow(
            f"q{i}", "What?", rng.choice(_TEXTS), tuple(rng.sample(_TEXTS, rng.randint(1, 3))), "b", rng.choice(splits)
        )
        for i in range(n)
    ]
    official = [rng.choice(_SCORES) for _ in range(n)]
    canon = [
        (rng.choice([s, s, rng.choice(_SCORES)]), rng.choice([None, "exact", "sentence-wrapper", "numeric-equal"]))
        for s in official
    ]
    contracts = [Contract(b, rng.choice([None, "alnum code"]), "rule") for b in rng.choices(buckets, k=n)]
    overlays = [tuple(rng.sample([("a",), ("b", "c"), ()], rng.randint(0, 2))) for _ in range(n)]
    repaired_rows = [tuple(rng.choice(_SCORES) for _ in VARIANTS) for _ in range(n)]
    ra = [rng.choice([None, True, False]) for _ in range(n)]
    verdicts = [rng.choice([None, True, False]) for _ in range(n)]
    return rows, official, canon, contracts, overlays, repaired_rows, ra, verdicts  # type: ignore[return-value]


@pytest.mark.parametrize("seed", range(40))
def test_columns_equal_the_per_row_definitions_on_hostile_columns(seed: int) -> None:
    rng = random.Random(seed)
    cols = _random_columns(rng, rng.choice([0, 1, 2, 3, 17, 200]))
    metric = rng.choice(["vqa_accuracy", "relaxed_accuracy", "anls"])
    _assert_same(_columns(*cols, metric), _reference(*cols, metric))  # type: ignore[arg-type]


@pytest.mark.parametrize("dataset", sorted(METRICS))
def test_columns_equal_the_per_row_definitions_on_the_fixture_rows(dataset: str) -> None:
    metric, variant = METRICS[dataset]
    rows = [
        AuditRow(f"q{i}", q, p, a, dataset, "val" if i % 7 else "test", ocr_tokens=ocr)
        for i, (q, p, a, ocr) in enumerate(_load()[dataset])
    ]
    official, canon, contracts, overlays, repaired_rows, ra = layer_passes(
        rows, official_scorer(metric, variant), metric, variant
    )
    verdicts: list[bool | None] = [None if i % 3 else bool(i % 2) for i in range(len(rows))]
    cols = (rows, official, canon, contracts, overlays, repaired_rows, ra, verdicts)
    _assert_same(_columns(*cols, metric), _reference(*cols, metric))


def test_row_results_are_real_records() -> None:
    rows = [AuditRow("q", "What?", "7", ("7",), "b", "val")]
    (got,) = audit_columns.row_results(
        rows,
        [1.0],
        [(1.0, "exact")],
        [Contract("scalar", None, "r")],
        [()],
        [(1.0, 0.5, 0.0)],
        [None],
        [True],
        gained=[None],
        lost=[None],
    )
    want = RowResult(
        "q",
        "val",
        1.0,
        1.0,
        "exact",
        None,
        None,
        "scalar",
        None,
        (),
        dict(zip(VARIANTS, (1.0, 0.5, 0.0), strict=True)),
        None,
        True,
    )
    assert type(got) is RowResult and got == want and repr(got) == repr(want)
    assert dataclasses.asdict(got) == dataclasses.asdict(want) and vars(got) == vars(want)
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.qid = "other"  # type: ignore[misc]


def test_mismatched_columns_are_refused() -> None:
    rows = [AuditRow("q", "What?", "7", ("7",), "b", "val")]
    with pytest.raises(ValueError):
        audit_columns.row_results(
            rows,
            [1.0, 0.0],
            [(1.0, None)],
            [Contract("scalar", None, "r")],
            [()],
            [(1.0, 0.5, 0.0)],
            [None],
            [None],
            gained=[None],
            lost=[None],
        )
    with pytest.raises(ValueError):
        audit_columns.by_split(["val"], [1.0, 0.0])
    with pytest.raises(ValueError):
        audit_columns.ra_eval_info([1.0], [])
    with pytest.raises(ValueError):
        canonical_changes(rows, [1.0], [], [], "anls")
