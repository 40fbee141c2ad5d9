"""Run the benign perturbations over a prediction set and score them (seed 002 §4, §5.3, Table 6).

The prediction set gives the questions, gold answers and image names; each question is re-asked under Base,
A1-A5 and B1-B3 (:mod:`vqaudit.prompts.perturbations`) through any backend, and every reply is scored on the
official layer and the canonical layer. :func:`vqaudit.metrics.flips.summarize_perturbations` then gives the
flip rates against Base (B3 apart) and the mean official and canonical deltas per family.
"""

from __future__ import annotations

import mimetypes
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from vqaudit.backends import Backend
from vqaudit.errors import VqauditError
from vqaudit.metrics.flips import PerturbationSummary, summarize_perturbations
from vqaudit.prompts.perturbations import VARIANT_IDS, ImageFor, run_perturbations
from vqaudit.scoring.canonical import canonical_score
from vqaudit.suites.shortanswer.benchmarks import get_benchmark, official_scorer
from vqaudit.suites.shortanswer.records import AuditRow

_SUFFIXES = ("", ".jpg", ".jpeg", ".png")


def image_resolver(images: Path) -> Mapping[str, Path]:
    """Index an image folder (recursively) by file name and by stem, for rows naming an image by id or path."""
    index: dict[str, Path] = {}
    for path in sorted(images.rglob("*")):
        if path.is_file():
            index.setdefault(path.name, path)
            index.setdefault(path.stem, path)
    return index


def image_loader(images: Path) -> ImageFor:
    """Return a loader ``row -> (image bytes, MIME type)`` over an image folder (see :func:`image_resolver`).

    Raises (from the loader):
        VqauditError: a row without an image name, or whose image is not in the folder (naming the qid).
    """
    index = image_resolver(images)

    def load(row: AuditRow) -> tuple[bytes, str]:
        if not row.image:
            raise VqauditError(f"question {row.qid!r}, field 'image': the prediction set names no image")
        name = Path(row.image).name
        for candidate in (name + s for s in _SUFFIXES):
            if candidate in index:
                path = index[candidate]
                return path.read_bytes(), mimetypes.guess_type(path.name)[0] or "image/png"
        raise VqauditError(f"question {row.qid!r}, field 'image': {row.image!r} not found under {images}")

    return load


def score_replies(rows: Sequence[AuditRow], replies: Mapping[str, Mapping[str, str | None]], metric: str,
                  variant: str) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """Official and canonical score of every reply, ``variant id -> qid -> score``; failed calls are left out."""
    scorer = official_scorer(metric, variant)
    official: dict[str, dict[str, float]] = {}
    canonical: dict[str, dict[str, float]] = {}
    for vid, by_qid in replies.items():
        official[vid], canonical[vid] = {}, {}
        for row in rows:
            text = by_qid.get(row.qid)
            if text is None or not row.answers:
                continue
            try:
                official[vid][row.qid] = scorer(text, row.answers)
            except ValueError as exc:
                raise VqauditError(f"question id {row.qid!r}, field 'answers': {exc}") from None
            canonical[vid][row.qid] = canonical_score(text, row.answers, metric)[0]
    return official, canonical


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
) -> tuple[PerturbationSummary, dict[str, dict[str, str | None]]]:
    """Ask ``model`` every row's question under each perturbation and summarize flips and deltas.

    Returns:
        The summary and the raw replies (``variant -> qid -> text``).

    Raises:
        VqauditError: a bad benchmark/metric/spec, a missing image, or a variant list without Base.
    """
    if "Base" not in variants:
        raise VqauditError("perturbations need the Base prompt to compare against")
    spec = get_benchmark(benchmark)
    metric = metric or spec.metric
    variant = variant or spec.variant
    replies = run_perturbations(rows, image_loader(images), model, cache_path, variants=variants, backend=backend,
                                concurrency=concurrency)
    official, canonical = score_replies(rows, replies, metric, variant)
    return summarize_perturbations(official, canonical), replies


def summary_markdown(summary: PerturbationSummary) -> str:
    """A Markdown table of flip rates and deltas per variant, then the family means (Table 6 layout)."""
    lines = ["| variant | flip rate % | official delta pp | canonical delta pp |", "|---|---|---|---|"]
    for vid, rate in summary.flip_rates.items():
        label = f"{vid} (control)" if vid == "B3" else vid
        lines.append(f"| {label} | {100 * rate:.1f} | {summary.official_delta[vid]:+.2f} | "
                     f"{summary.canonical_delta[vid]:+.2f} |")
    lines += ["", f"Mean benign flip rate (A1-A5, B1-B2): {100 * summary.mean_benign_flip_rate:.1f}%; "
                  f"B3 control: {100 * summary.control_flip_rate:.1f}%.", "",
              "| family | official delta pp | canonical delta pp |", "|---|---|---|"]
    for family in ("A", "B"):
        lines.append(f"| {family} | {summary.family_official_delta[family]:+.2f} | "
                     f"{summary.family_canonical_delta[family]:+.2f} |")
    return re.sub(r"\bnan\b", "n/a", "\n".join(lines)) + "\n"
