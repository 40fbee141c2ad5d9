"""Run the benign perturbations over a prediction set and score them (seed 002 §4, §5.3, Table 6).

The prediction set gives the questions, gold answers and image names; each question is re-asked under Base,
A1-A5 and B1-B3 (:mod:`vqaudit.prompts.perturbations`) through any backend
(:mod:`vqaudit.shortanswer.perturb_ask`), and every reply is scored on the official layer and the canonical
layer. :func:`vqaudit.metrics.flips.summarize_perturbations` then gives the flip rates against Base (B3 apart)
and the mean official and canonical deltas per family, overall and per answer-contract bucket.
``perturbations.json`` (:func:`perturbation_json`) carries the summary as data for ``vqaudit audit-summary``
(Table 4 "Delta True", Table 6).

A reasoning model's reply is split before it is scored (:func:`vqaudit.parsing.reasoning.split_reasoning`): each
variant scores the final answer only, never the thinking, and a reply whose reasoning never finished scores as
an empty answer (:func:`score_replies`).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vqaudit.backends import Backend, ModelOptions, require_free_text_model
from vqaudit.errors import VqauditError
from vqaudit.files import json_ready
from vqaudit.markdown import row as table_row
from vqaudit.markdown import separator, table
from vqaudit.metrics.flips import PerturbationSummary, summarize_perturbations
from vqaudit.metrics.variance import answer_kind, benign_flip_cells
from vqaudit.parsing.reasoning import AUTO, split_reasoning
from vqaudit.prompts.perturbations import VARIANT_IDS, check_variants
from vqaudit.scoring.canonical import canonical_score
from vqaudit.scoring.contracts import classify
from vqaudit.scoring.registry import official_scorer
from vqaudit.shortanswer.benchmarks import resolve_metric
from vqaudit.shortanswer.perturb_ask import ask_perturbations, image_loader
from vqaudit.shortanswer.records import AuditRow


def score_replies(
    rows: Sequence[AuditRow],
    replies: Mapping[str, Mapping[str, str | None]],
    metric: str,
    variant: str,
    *,
    reasoning: Mapping[str, Mapping[str, str]] | None = None,
    reasoning_format: str = AUTO,
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """Official and canonical score of every reply's final answer, ``variant id -> qid -> score``.

    Each reply is split first (:func:`vqaudit.parsing.reasoning.split_reasoning` under ``reasoning_format``, with
    the reasoning the server sent apart, ``reasoning[variant][qid]``): the final answer is scored, never the
    thinking; a reply whose reasoning never finished (a span never closed, or server reasoning without content)
    scores as the empty answer "". Failed calls (no text and no reasoning) are left out.

    Raises:
        VqauditError: a gold the metric refuses (naming the question id and the field).
    """
    scorer = official_scorer(metric, variant)
    official: dict[str, dict[str, float]] = {}
    canonical: dict[str, dict[str, float]] = {}
    for vid, by_qid in replies.items():
        official[vid], canonical[vid] = {}, {}
        apart = (reasoning or {}).get(vid, {})
        for row in rows:
            raw, thought = by_qid.get(row.qid), apart.get(row.qid)
            if (raw is None and thought is None) or not row.answers:
                continue
            final = split_reasoning(raw, reasoning_format, server_reasoning=thought).final
            text = "" if final is None else final
            try:
                official[vid][row.qid] = scorer(text, row.answers)
            except ValueError as exc:
                raise VqauditError(f"question id {row.qid!r}, field 'answers': {exc}") from None
            canonical[vid][row.qid] = canonical_score(text, row.answers, metric)[0]
    return official, canonical


def _check_replies(
    rows: Sequence[AuditRow],
    replies: Mapping[str, Mapping[str, str | None]],
    model: str,
    variants: Sequence[str],
    official: Mapping[str, Mapping[str, float]],
    last_error: str | None = None,
) -> None:
    """Refuse a run with nothing to compare (no reply, none under Base or the other variants, no gold scored).

    Each message gives the last backend error when a call failed; the advice on reply ids is for ``replay:``.
    """
    example = rows[0].qid
    ids = ", ".join(repr(r.qid) for r in rows[:3]) + (", ..." if len(rows) > 3 else "")
    replay = model.partition(":")[0] == "replay"
    why = f" (last error: {last_error})" if last_error else ""
    if not any(text is not None for by_qid in replies.values() for text in by_qid.values()):
        advice = (
            f"; replies must carry the ids VARIANT:question_id (e.g. {variants[0]}:{example}; question ids here: {ids})"
            if replay
            else ""
        )
        raise VqauditError(
            f"model {model}: no reply was received for any question under {', '.join(variants)}{why}{advice}"
        )
    if not any(text is not None for text in replies.get("Base", {}).values()):
        advice = f"; replies must carry the ids Base:question_id (e.g. Base:{example})" if replay else ""
        raise VqauditError(
            f"model {model}: no reply was received for any question under Base, which every flip "
            f"rate and delta compares against{why}{advice}"
        )
    others = [v for v in variants if v != "Base"]
    if others and not any(text is not None for v in others for text in replies.get(v, {}).values()):
        advice = f"; replies must carry the ids VARIANT:question_id (e.g. {others[0]}:{example})" if replay else ""
        raise VqauditError(
            f"model {model}: no reply was received for any question under {', '.join(others)} "
            f"(only Base answered), so there is nothing to compare{why}{advice}"
        )
    if not official.get("Base"):
        raise VqauditError(
            f"model {model}: no Base reply could be scored: none of the answered questions has "
            "gold answers (pass --gold)"
        )


def check_gold(rows: Sequence[AuditRow], metric: str, variant: str, where: Mapping[str, str] | None = None) -> None:
    """Check, before any model call, that the rows can be scored: some question, some gold, every gold fits.

    Every row's gold answers are scored once against a dummy (empty) prediction on the official and the canonical
    layer, so a gold the metric cannot take (e.g. ``mmf_textvqa`` with fewer than 10 answers) fails here, not
    after the model was asked every question.

    Args:
        rows: the joined rows.
        metric: official metric.
        variant: metric variant.
        where: ``qid -> "FILE: row N"``, where each row's gold was read (:func:`gold_locations`); rows not in
            it are named by their joined row number.

    Raises:
        VqauditError: an unknown metric or variant, no row, no row with gold answers, or a gold the metric refuses
            (naming the file, the row, the question id and the field ``answers``).
    """
    scorer = official_scorer(metric, variant)
    if not rows:
        raise VqauditError("the prediction set has no joined question to re-ask (check --gold and --join-on)")
    if not any(r.answers for r in rows):
        raise VqauditError("no joined question has gold answers, so no reply could be scored (pass --gold)")
    for index, row in enumerate(rows, start=1):
        if not row.answers:
            continue
        try:
            scorer("", row.answers)
            canonical_score("", row.answers, metric)
        except ValueError as exc:
            place = (where or {}).get(row.qid, f"joined row {index}")
            raise VqauditError(
                f"{place} (question id {row.qid!r}), field 'answers': {exc} (metric {metric}, variant {variant})"
            ) from None


def run_perturbation_audit(
    rows: Sequence[AuditRow],
    benchmark: str,
    model: str,
    images: Path,
    cache_path: Path,
    *,
    variants: Sequence[str] = VARIANT_IDS,
    metric: str | None = None,
    variant: str | None = None,
    backend: Backend | None = None,
    concurrency: int = 8,
    gold_where: Mapping[str, str] | None = None,
    options: ModelOptions | None = None,
    reasoning_format: str = AUTO,
) -> tuple[PerturbationSummary, dict[str, dict[str, str | None]]]:
    """Ask ``model`` every row's question under each perturbation and summarize flips and deltas.

    Everything that can be checked without the model is checked first, in this order: the model is not a
    reference policy, the variant list (:func:`vqaudit.prompts.perturbations.check_variants`), the benchmark,
    metric and variant, the gold of every row (:func:`check_gold`), every row's image; only then is the model
    asked. The per-bucket deltas (seed 002 Table 4 "Delta True", Table 8) put each question in its
    answer-contract bucket with :func:`vqaudit.scoring.contracts.classify` (question, gold, answer type, OCR
    tokens).

    Args:
        rows: joined rows (question, gold answers, image name).
        benchmark: benchmark name (decides the default metric and variant).
        model: model spec to ask (any backend; ``replay:FILE`` ids are ``VARIANT:question_id``).
        images: folder holding the rows' images.
        cache_path: SQLite response cache.
        variants: perturbation ids, Base included.
        metric: official metric override.
        variant: metric variant override (e.g. ``vlmevalkit``).
        backend: a ready backend (tests).
        concurrency: calls in flight.
        gold_where: ``qid -> "FILE: row N"`` for the gold error messages (:func:`gold_locations`).
        options: generic model options (``--model-arg``, ``--timeout``, ``--max-retries``, ``--api-key-env``).
        reasoning_format: the reasoning spans split off every reply before it is scored (:func:`score_replies`).

    Returns:
        The summary and the raw replies (``variant -> qid -> text``, exactly as received).

    Raises:
        VqauditError: a reference policy as the model, a bad variant list (unknown, repeated, no Base, nothing
            but Base), a bad benchmark/metric/variant, no question or no gold, a gold the metric refuses, a
            missing image, a bad spec (all before any call); a fatal backend error, the first calls all failing
            (the model is unreachable; replies so far stay cached); no reply for any question (with the last
            backend error, and for ``replay:`` the ids the replies must carry), no reply under Base or under
            every other variant asked, or no Base reply with gold to score.
    """
    require_free_text_model(model, "--model")
    chosen = check_variants(variants)
    metric, variant = resolve_metric(benchmark, metric, variant)
    check_gold(rows, metric, variant, gold_where)
    asked = ask_perturbations(
        rows,
        image_loader(images),
        model,
        cache_path,
        variants=chosen,
        backend=backend,
        concurrency=concurrency,
        options=options,
    )
    replies = asked.replies
    official, canonical = score_replies(
        rows, replies, metric, variant, reasoning=asked.reasoning, reasoning_format=reasoning_format
    )
    _check_replies(rows, replies, model, chosen, official, asked.last_error)
    buckets = {
        r.qid: classify(r.question, r.answers, answer_type=r.answer_type, ocr_tokens=r.ocr_tokens).bucket
        for r in rows
        if r.answers
    }
    summary = summarize_perturbations(official, canonical, buckets, n_questions=len(buckets))
    kinds = {r.qid: answer_kind(r.answers) for r in rows if r.answers}  # appendix B: numeric / text
    cells = benign_flip_cells(official, {"contract": buckets, "numeric_text": kinds})
    return dataclasses.replace(summary, flip_cells=cells), replies


def perturbation_json(
    summary: PerturbationSummary,
    *,
    benchmark: str,
    model: str,
    model_spec: str,
    metric: str,
    variant: str,
    variants: Sequence[str],
    n_questions: int,
) -> dict[str, Any]:
    """``perturbations.json``: the run's identity and the :class:`PerturbationSummary` as data (NaN -> null).

    Args:
        summary: the summary of :func:`run_perturbation_audit`.
        benchmark: benchmark name.
        model: the model's display name (``vqaudit audit-summary`` columns).
        model_spec: the backend spec that was asked.
        metric: official metric.
        variant: metric variant.
        variants: the perturbation ids run, Base first.
        n_questions: joined questions asked.

    Returns:
        A JSON-able dict; flip rates are fractions in [0, 1], deltas in percentage points.
    """
    data = {
        "benchmark": benchmark,
        "model": model,
        "model_spec": model_spec,
        "metric": metric,
        "metric_variant": variant,
        "variants": list(variants),
        "n_questions": n_questions,
        "summary": dataclasses.asdict(summary),
    }
    cleaned: dict[str, Any] = json_ready(data)
    return cleaned


def _pct(fraction: float) -> str:
    return "n/a" if math.isnan(fraction) else f"{100 * fraction:.1f}%"


def summary_markdown(summary: PerturbationSummary) -> str:
    """Markdown: flip rates and deltas per variant, the family means (Table 6 layout), per-bucket deltas, notes.

    Each variant's row gives ``n``: the questions scored under both Base and the variant, over which its flip
    rate and both deltas are computed (paired, :func:`vqaudit.metrics.flips.paired_delta`).
    """
    lines = table(
        ["variant", "n (with Base)", "flip rate %", "official delta pp", "canonical delta pp"],
        [
            [
                f"{vid} (control)" if vid == "B3" else vid,
                f"{summary.paired.get(vid, 0)}",
                f"{100 * rate:.1f}",
                f"{summary.official_delta[vid]:+.2f}",
                f"{summary.canonical_delta[vid]:+.2f}",
            ]
            for vid, rate in summary.flip_rates.items()
        ],
    )
    lines += [
        "",
        f"Mean benign flip rate (A1-A5, B1-B2): {_pct(summary.mean_benign_flip_rate)}; "
        f"B3 control: {_pct(summary.control_flip_rate)}.",
        "",
        *table(
            ["family", "official delta pp", "canonical delta pp"],
            [
                [
                    family,
                    f"{summary.family_official_delta[family]:+.2f}",
                    f"{summary.family_canonical_delta[family]:+.2f}",
                ]
                for family in ("A", "B")
            ],
        ),
    ]
    if summary.bucket_n:
        lines += [
            "",
            "By bucket (points; benign = mean over the benign variants):",
            "",
            table_row(
                [
                    "bucket",
                    "n",
                    "A official",
                    "A canonical",
                    "B official",
                    "B canonical",
                    "benign official",
                    "benign canonical",
                ]
            ),
            separator(8),
        ]
        fo, fc = summary.family_bucket_official_delta, summary.family_bucket_canonical_delta
        for b, n in summary.bucket_n.items():
            lines.append(
                table_row(
                    [
                        b,
                        f"{n}",
                        f"{fo['A'][b]:+.2f}",
                        f"{fc['A'][b]:+.2f}",
                        f"{fo['B'][b]:+.2f}",
                        f"{fc['B'][b]:+.2f}",
                        f"{summary.benign_bucket_official_delta[b]:+.2f}",
                        f"{summary.benign_bucket_canonical_delta[b]:+.2f}",
                    ]
                )
            )
    if summary.notes:
        lines += [""] + [f"- note: {n}" for n in summary.notes]
    return re.sub(r"[+-]?\bnan\b", "n/a", "\n".join(lines)) + "\n"
