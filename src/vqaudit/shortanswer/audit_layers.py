"""The per-layer passes of the short-answer audit (seed 002 §4 "Metric layers").

Official, contract, overlay, repair, RA-Eval and canonical: one pass per layer over a chunk of joined rows, the
chunks joined into compact columns.

The judge layer (:mod:`.audit_judge`) and the pooled tables (:mod:`.audit_columns`) read these columns;
:func:`vqaudit.shortanswer.audit.audit_rows` runs them.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager

from vqaudit.errors import VqauditError
from vqaudit.progress import Reporter
from vqaudit.scoring.canonical import canonical_scores
from vqaudit.scoring.contracts import Contract, classify_many
from vqaudit.scoring.official_batch import official_scores
from vqaudit.scoring.ra_eval import ra_eval_layer
from vqaudit.scoring.repair import VARIANTS, Overlay, reference_overlays, repair_scores
from vqaudit.scoring.vqa_normalize import fast_vqaeval_process
from vqaudit.shortanswer.layer_columns import LayerColumns
from vqaudit.shortanswer.records import AuditRow


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while the audit computes its layers (restored afterwards).

    The pass allocates several small objects per row and keeps them alive, so the collector's generational
    passes would rescan every row already done: about 30% of the audit on a 166,731-row pool
    (``benchmarks/bench_audit.py``). At the end, ``freeze()`` + ``unfreeze()`` moves the objects allocated
    meanwhile straight into the oldest generation, so the first collection afterwards does not scan them all
    at once; they stay collectable (only reference cycles need the collector, and the pass makes none).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:  # never unfreeze what a caller froze (e.g. before forking workers)
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()


ChunkColumns = tuple[
    list[float],
    list[tuple[float, str | None]],
    list[Contract],
    list[Overlay],
    list[tuple[float, ...]],
    list[bool | None],
]
"""One chunk's columns from :func:`layer_passes`: official, canonical ``(score, kind)``, contract, overlay, repaired
scores (in :data:`VARIANTS` order) and RA-Eval, one entry per row."""


N_PASSES = 6
"""The passes of :func:`layer_passes` over all rows: official, contract, overlay, repair, RA-Eval, canonical."""


LAYER_CHUNK_ROWS = 1 << 14
"""Rows per call of :func:`layer_passes` (:func:`layers_in_chunks`): its passes hold memos of every distinct string of
the rows they are given (the canonical pass alone about 0.9 KB a row, measured with ``tracemalloc`` at 50,000 rows),
so chunks bound that to the chunk's strings, whatever the file's size. 16,384 rows: 65,536 left about 150 MB of
one chunk's passes on top of the rows at 500,000 rows (``benchmarks/bench_audit_memory.py``: 437 MB peak, against
371 MB with 16,384)."""


def layers_in_chunks(
    rows: Sequence[AuditRow],
    scorer: Callable[[str, Sequence[str]], float],
    metric: str,
    variant: str,
    where: Mapping[str, str] | None = None,
    shown: Reporter | None = None,
) -> LayerColumns:
    """:func:`layer_passes` of the rows, :data:`LAYER_CHUNK_ROWS` rows at a time, its columns joined in row order.

    Every layer of a row depends on that row alone (the memos only save time), so the columns equal those of one
    call over all rows; a refused gold is named by its joined row number over all rows. ``shown`` is advanced
    :data:`N_PASSES` times per chunk. The columns are held compactly (:class:`LayerColumns`); each chunk's
    lists are let go once added.
    """
    columns = LayerColumns()
    for start in range(0, len(rows), LAYER_CHUNK_ROWS):  # a slice of a Packed sequence is a list of its records
        part = layer_passes(rows[start : start + LAYER_CHUNK_ROWS], scorer, metric, variant, where, shown, offset=start)
        columns.add(*part)
    return columns


def layer_passes(
    rows: Sequence[AuditRow],
    scorer: Callable[[str, Sequence[str]], float],
    metric: str,
    variant: str,
    where: Mapping[str, str] | None = None,
    shown: Reporter | None = None,
    *,
    offset: int = 0,
) -> ChunkColumns:
    """Every gold-side and output-side layer of the rows before the judge, one pass per layer over all rows.

    Returns the columns official, canonical ``(score, kind)``, contract, overlay, repaired scores (in
    :data:`VARIANTS` order) and RA-Eval. The layers that apply the vqaEval normalization (canonical, RA-Eval)
    share one memo of it, local to this call. ``shown`` is advanced after each of the :data:`N_PASSES` passes.
    ``offset``: the joined row number of ``rows[0]`` minus 1 (the rows are a chunk of all rows), for the message.

    Raises:
        VqauditError: a gold the metric cannot take (naming the file and row its gold was read from, from
            ``where``, else the joined row, and its question id).
    """
    outputs, golds, questions = [r.prediction for r in rows], [r.answers for r in rows], [r.question for r in rows]
    try:
        official = official_scores(outputs, golds, metric, variant)
    except ValueError:  # the first row the metric refuses, found row by row to name it
        official = []
        try:
            for row in rows:
                official.append(scorer(row.prediction, row.answers))
        except ValueError as exc:
            bad = rows[len(official)]
            place = (where or {}).get(bad.qid, f"joined row {offset + len(official) + 1}")
            raise VqauditError(f"{place} (question id {bad.qid!r}), field 'answers': {exc}") from None
        raise
    shown = shown or Reporter("", 0)
    shown.advance()
    contracts = classify_many(questions, golds, [r.answer_type for r in rows], [r.ocr_tokens for r in rows])
    shown.advance()
    overlays = reference_overlays(golds, contracts, questions)
    shown.advance()
    by_variant = repair_scores(
        outputs,
        golds,
        questions,
        contracts,
        metric,
        variant,
        scorer,
        VARIANTS,
        official=official,
        overlays_given=overlays,
    )
    shown.advance()
    repaired = list(zip(*(by_variant[v] for v in VARIANTS), strict=True))
    forms: dict[str, str] = {}  # vqaEval forms, shared by RA-Eval and the canonical layer
    predictions = [r.prediction for r in rows]
    answers = [r.answers for r in rows]
    ra = ra_eval_layer(predictions, answers, [r.question for r in rows], official, forms=forms)
    shown.advance()
    canon = canonical_scores(predictions, answers, metric, vqaeval=_memo(fast_vqaeval_process, forms))
    shown.advance()
    return official, canon, contracts, overlays, repaired, ra


def _memo(fn: Callable[[str], str], cache: dict[str, str] | None = None) -> Callable[[str], str]:
    """``fn`` memoized in ``cache`` (default: a new dict, living as long as the returned function).

    No global cache to clear; a given ``cache`` may already hold results of ``fn`` (e.g. ``vqaeval_many``'s).
    """
    if cache is None:
        cache = {}

    def memo(text: str) -> str:
        out = cache.get(text)
        if out is None:
            out = cache[text] = fn(text)
        return out

    return memo
