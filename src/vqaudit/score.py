"""The score stage: a run folder's cached responses -> outcomes per view -> metrics per source.

Reads ``RUN/run.json`` (which names the benchmark) and the response cache; writes, atomically,
``RUN/outcomes.jsonl`` (one Outcome per view, raw reply kept beside the parse), ``RUN/metrics.json`` (one
object per source with exactly the keys of :data:`vqaudit.metrics.METRIC_KEYS`, ``n_groups``, ``n_views`` and
``ci``) and ``RUN/diagnostics.json`` (failure accounting, E_lambda curve, invalid-reply reasons). Rerunning it
gives identical files.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from vqaudit.backends import load_backend, require_free_text_model
from vqaudit.errors import VqauditError
from vqaudit.metrics import answerability_metrics, e_lambda, failure_accounting
from vqaudit.prompts.dispatch import ANSWERABILITY_SOURCES
from vqaudit.run import load_responses
from vqaudit.schema import Outcome
from vqaudit.scoring import score_view
from vqaudit.store import load_benchmark, read_json, read_jsonl, write_json, write_jsonl

N_DRAWS = 10_000
LAMBDAS = tuple(i / 10 for i in range(11))
JUDGE_CONCURRENCY = 8


def run_benchmark_dir(run_dir: Path) -> Path:
    """The benchmark folder a run was made on (from ``RUN/run.json``). Raises VqauditError if unreadable."""
    info = read_json(run_dir / "run.json")
    bench = info.get("benchmark") if isinstance(info, dict) else None
    if not isinstance(bench, str):
        raise VqauditError(f"{run_dir / 'run.json'}: field 'benchmark' is missing")
    return Path(bench)


def score_run(run_dir: Path, *, n_draws: int = N_DRAWS, seed: int = 0, judge: str | None = None) -> dict[str, Any]:
    """Score every view of a run and write outcomes, metrics and diagnostics; return the metrics.

    Answerability sources (charts, scenes, photos) are parsed with the answerability contract and scored with
    :func:`vqaudit.metrics.answerability_metrics`; multiple-choice UPD views are scored by
    :mod:`vqaudit.scoring.upd` (strict matcher, then the optional judge) and :mod:`vqaudit.metrics.upd`.

    Args:
        run_dir: a run folder made by ``vqaudit run``.
        n_draws: group-bootstrap draws for the 95% intervals (seed 000, §4: 10,000).
        seed: seed of the bootstrap draws (runs scored with the same seed share draws).
        judge: model spec of a judge for replies the UPD choice matcher cannot decide (None: no judge). It is
            checked before anything is read or scored; a reference policy is refused.

    Raises:
        VqauditError: a bad judge spec (the message lists the valid forms), a reference policy as the judge,
            the run or its benchmark cannot be read, some views have no response yet (the message says how many
            and that ``vqaudit run`` resumes), or the judge fails (fatally, or its first calls all fail: it is
            unreachable; the verdicts received stay cached in ``RUN/judge.sqlite``).
    """
    judge_backend = load_backend(judge, concurrency=JUDGE_CONCURRENCY) if judge is not None else None
    if judge is not None:
        require_free_text_model(judge, "--judge")  # UPD judge replies are free text (a letter or option text)
    bench = load_benchmark(run_benchmark_dir(run_dir), check_images=False)
    responses = load_responses(run_dir)
    missing = [v.view_id for v in bench.views if v.view_id not in responses]
    if missing:
        raise VqauditError(
            f"{run_dir}: {len(missing)} of {len(bench.views)} views have no response (first: {missing[0]}); "
            "run `vqaudit run` again with the same arguments to resume"
        )
    answerability = [v for v in bench.views if v.source in ANSWERABILITY_SOURCES]
    upd = [v for v in bench.views if v.source == "upd"]
    outcomes = [score_view(v, responses[v.view_id]) for v in answerability]
    if upd:
        from vqaudit.scoring.upd import score_upd_views

        outcomes += score_upd_views(upd, responses, run_dir=run_dir, judge=judge, judge_backend=judge_backend,
                                    concurrency=JUDGE_CONCURRENCY)
    write_jsonl(run_dir / "outcomes.jsonl", outcomes)
    metrics: dict[str, Any] = {}
    diag: dict[str, Any] = {}
    answer_outcomes = [o for o in outcomes if o.source in ANSWERABILITY_SOURCES]
    if answer_outcomes:
        metrics.update(answerability_metrics(answer_outcomes, n_draws=n_draws, seed=seed))
        diag.update(diagnostics(answer_outcomes, metrics))
    photo_outcomes = [o for o in answer_outcomes if o.source == "photos"]
    if photo_outcomes:
        from vqaudit.suites.photos.cues import mask_reaction, stratified_metrics

        photo_groups = [g for g in bench.groups if g.source == "photos"]
        diag["photos"]["residual_cues"] = {
            stratum: stratified_metrics(photo_outcomes, photo_groups, stratum=stratum, n_draws=n_draws, seed=seed)
            for stratum in ("spatial_answer", "residual_cue")
        }
        diag["photos"]["mask_reaction"] = mask_reaction(photo_outcomes)
    if upd:
        from vqaudit.metrics.upd import upd_metrics

        metrics["upd"] = upd_metrics([o for o in outcomes if o.source == "upd"], upd, n_draws=n_draws, seed=seed)
    write_json(run_dir / "metrics.json", metrics)
    write_json(run_dir / "diagnostics.json", diag)
    return metrics


def diagnostics(outcomes: list[Outcome], metrics: dict[str, Any]) -> dict[str, Any]:
    """Failure accounting (seed 000, §E.2), the E_lambda curve and counts of invalid-reply reasons, per source."""
    accounting: dict[str, Any] = dict(failure_accounting(outcomes))
    out: dict[str, Any] = {}
    for source, m in metrics.items():
        if source not in accounting:
            continue
        reasons = Counter(o.invalid_reason for o in outcomes if o.source == source and o.decision == "invalid")
        out[source] = {
            "failure_accounting": accounting[source],
            "E_lambda": {f"{lam:.1f}": e_lambda(m, lam) for lam in LAMBDAS},
            "invalid_reasons": dict(sorted((str(k), v) for k, v in reasons.items())),
            "backend_errors": sum(1 for o in outcomes if o.source == source and o.error is not None),
        }
    return out


def load_outcomes(run_dir: Path) -> list[Outcome]:
    """The outcomes of a scored run. Raises VqauditError if the run has not been scored."""
    path = run_dir / "outcomes.jsonl"
    if not path.is_file():
        raise VqauditError(f"{run_dir}: not scored yet; run `vqaudit score {run_dir}` first")
    return read_jsonl(path, Outcome, surrogates=True)
