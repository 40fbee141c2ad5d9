"""The lines of an audit's ``rows.jsonl``: one JSON record per joined row, written in chunks.

Each record is built field by field with its keys in sorted order, the line ``json.dumps(..., sort_keys=True)``
would write (``tests/shortanswer/test_audit_output.py`` checks it against that formula); the writing is reported
as a progress step. :func:`vqaudit.report.shortanswer.write_audit_report` writes the lines beside the report.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from vqaudit.progress import Reporter, step
from vqaudit.shortanswer.audit_columns import RowResults
from vqaudit.shortanswer.audit_result import AuditResult
from vqaudit.shortanswer.records import AuditRow

_ROW_ENCODER = json.JSONEncoder(ensure_ascii=False, check_circular=False)  # keys come sorted (see row_chunks)
_CHUNK_ROWS = 10_000


def row_chunks(result: AuditResult) -> Iterator[str]:
    """The lines of ``rows.jsonl``, ``_CHUNK_ROWS`` lines per chunk (the whole file is never held as one string).

    Each line is the row's :class:`~vqaudit.shortanswer.audit.RowResult` as
    ``json.dumps(json_ready(dataclasses.asdict(row)), ensure_ascii=False, sort_keys=True)`` gives it, ``overlay``
    renamed ``canonical_answers``, plus the joined row's question, prediction (as read) and gold ``answers``, and
    for a row whose prediction held reasoning :func:`_reasoning_fields`. The record is
    built field by field with its keys already in sorted order and NaN as null (asdict's deep copy and the key
    sort took most of the writing time, as measured); ``tests/shortanswer/test_audit_output.py``
    checks it against that formula. The lines written are reported as a progress step (``vqaudit.progress``).
    """
    # result.rows holds one record per joined row, in the same order (audit_rows): read side by side, not
    # through a dict of every row by qid (about 100 bytes a row held while writing)
    pairs = (
        result.rows.with_rows()
        if isinstance(result.rows, RowResults)
        else zip(result.rows, result.join.rows, strict=True)
    )
    with step("audit: writing rows.jsonl", len(result.rows)) as shown:
        yield from _row_lines(pairs, shown)


def _row_lines(pairs: Iterable[tuple[Any, AuditRow]], shown: Reporter) -> Iterator[str]:
    """:func:`row_chunks`'s chunks of ``pairs`` (result row, joined row); ``shown`` advanced per chunk."""
    encode = _ROW_ENCODER.encode
    lines: list[str] = []
    for row, source in pairs:
        official, canonical = row.official, row.canonical
        record = {  # keys in sorted order: the line json.dumps(..., sort_keys=True) writes
            "answers": source.answers,
            "bucket": row.bucket,  # tuples: JSON arrays, as lists
            "canonical": canonical if canonical == canonical else None,  # NaN -> null, as json_ready
            "canonical_answers": row.overlay,
            "canonical_gain_kind": row.canonical_gain_kind,
            "canonical_kind": row.canonical_kind,
            "canonical_lost_cause": row.canonical_lost_cause,
            "judge": row.judge,
            "official": official if official == official else None,
            "prediction": source.prediction,
            "qid": row.qid,
            "question": source.question,
            "ra_eval": row.ra_eval,
            "repaired": {str(k): v if v == v else None for k, v in sorted(row.repaired.items())},
            "split": row.split,
            "subtype": row.subtype,
        }
        if source.raw is not None or not source.finished:  # the prediction held reasoning: raw and final apart
            record = dict(sorted({**record, **_reasoning_fields(source)}.items()))
        lines.append(encode(record))
        if len(lines) == _CHUNK_ROWS:
            yield "\n".join(lines) + "\n"
            shown.advance(len(lines))
            lines = []
    if lines:
        yield "\n".join(lines) + "\n"
        shown.advance(len(lines))


def _reasoning_fields(row: AuditRow) -> dict[str, Any]:
    """The ``rows.jsonl`` fields of a row whose prediction held reasoning or an answer box.

    ``prediction``: the prediction exactly as read; ``final``: the text every layer scored (null when the
    reasoning never finished); ``reasoning_chars``: characters of reasoning (null for an answer box alone);
    ``reasoning_not_finished``: true, only on a row whose reasoning never closed.
    """
    fields: dict[str, Any] = {
        "prediction": row.raw if row.raw is not None else row.prediction,
        "final": row.prediction if row.finished else None,
        "reasoning_chars": row.reasoning_chars,
    }
    if not row.finished:
        fields["reasoning_not_finished"] = True
    return fields
