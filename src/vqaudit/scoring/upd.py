"""Score MM-UPD views: the strict matcher, then an optional judge, then the paper's correctness rules.

Seed 001, §4 "Automatic Evaluation Strategy" and appendix 0.C.1. For every reply:

1. a JSON reply under the answerability contract (``{"answerable": ..., "answer": ...}``, as the reference
   policies give) is read first: ``answerable: false`` is an abstention (``matcher:json-abstain``); otherwise the
   ``answer`` value goes through step 2 (rules ``matcher:json-...``);
2. the strict matcher of :mod:`vqaudit.parsing.choice` over the view's letters plus its abstention letter
   (``matcher:letter``, ``matcher:letter-prefix``, ``matcher:option-text``); then the whole reply equal to the
   removed correct option's text (``matcher:removed-option-text``, UPD views) or to an abstention phrase of
   :data:`ABSTAIN_PHRASES` (``matcher:abstain-text``); then the final-answer rules (docs/upd.md, "How a choice is read")
   (:func:`vqaudit.parsing.choice.extract_choice`): the last explicit declaration naming exactly one valid
   letter (``matcher:final-declaration``; a declaration naming two letters or an unknown one leaves the reply
   undecided), else a refusal or abstention phrase anywhere in a short reply (``matcher:abstain-phrase``), else
   exactly one option's text as whole words in a short reply (``matcher:option-text-in-reply``);
3. if still undecided and a judge spec is given: the judge (any backend, temperature 0) picks among the view's
   options plus the removed correct option, the variant's abstention option and "none" (appendix 0.C.1). It
   sees text only: the call carries no image. Its verdicts are cached in ``run_dir/judge.sqlite``
   (``decided_by = "judge:SPEC"``). The judge is never asked about a reply the matcher decided, and is shown the
   reply's final answer, never its thinking; a judge that thinks is read after its own thinking
   (:func:`parse_judge_reply`). When its first calls all fail (:data:`vqaudit.backends.judge.EARLY_STOP_CALLS`),
   scoring stops: the judge is unreachable; when none of its replies gives a verdict (all unreadable, or all
   reasoning never finished), scoring stops and says so, showing one reply as stored;
4. otherwise ``decided_by = "undecided"``: the view fails and is counted separately. A reply over
   :data:`vqaudit.parsing.answerability.MAX_REPLY_CHARS` characters goes straight here (``invalid_reason``
   ``too long``): it is neither matched nor sent to a judge.

Correctness: a standard view is right when the selected letter is the gold letter. A UPD view is right when the
reply abstains (the extra option's letter in the option setting, ``F`` in the instruction setting, an abstention
phrase or option, a JSON abstention) or names the removed correct option. For UPD views ``decision_correct`` and
``task_correct`` both mean "right" in this sense; ``answer_correct`` is always False.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vqaudit.backends import (
    Backend,
    GenerationParams,
    ModelOptions,
    ResponseCache,
    load_backend,
    loaded_generation,
)
from vqaudit.backends.judge import JudgeCall, ask_judge_all
from vqaudit.errors import VqauditError
from vqaudit.parsing.answerability import TOO_LONG, extract_json_object_repaired, fenced_blocks, too_long
from vqaudit.parsing.choice import (
    find_abstention,
    match_choice,
    match_declaration,
    match_letter,
    match_option_in_reply,
    match_option_text,
    normalize_text,
)
from vqaudit.parsing.declarations import declarations
from vqaudit.parsing.reasoning import AUTO, NOT_FINISHED, split_reasoning
from vqaudit.prompts.upd import (
    EXTRA_OPTION,
    JUDGE_ABSTAIN_OPTION,
    JUDGE_PROMPT_ID,
    LETTERS,
    judge_options,
    judge_prompt,
)
from vqaudit.schema import Outcome, Response, UPDViewMeta, View
from vqaudit.signals import run_async
from vqaudit.store import RunFolder

JUDGE_PARAMS = GenerationParams(temperature=0.0, max_tokens=16)

ABSTAIN_PHRASES: frozenset[str] = frozenset(
    normalize_text(t)
    for t in (
        *EXTRA_OPTION.values(),
        *JUDGE_ABSTAIN_OPTION.values(),
        "None of these",
        "None of the options",
        "None of the options are correct",
        "All provided options are incorrect",
        "No answer",
        "No correct answer",
        "I cannot answer",
        "I can't answer",
        "I cannot answer this question",
        "Cannot answer",
        "Unanswerable",
        "The image is irrelevant to the question",
        "The image and the question are irrelevant",
        "The image is incompatible with the question",
        "The image and question are incompatible",
    )
)
"""Whole replies that abstain (compared after normalisation); anything else undecided goes to the judge."""


@dataclass(frozen=True)
class Verdict:
    """What a reply selects: ``option:<L>``, ``abstain``, ``removed``, ``none`` or ``undecided``; who decided."""

    meaning: str
    decided_by: str
    note: str | None = None


def _options(view: View) -> dict[str, str]:
    return {LETTERS[k]: t for k, t in enumerate(view.options)}


def _plain(view: View, text: str, prefix: str) -> Verdict | None:
    options = _options(view)
    meta = UPDViewMeta.of(view)
    abstain_letter = meta.abstain_letter
    extra = abstain_letter if abstain_letter is not None and abstain_letter not in options else ""
    found = match_choice(text, options, extra)
    if found is not None:
        meaning = "abstain" if found.letter == abstain_letter else f"option:{found.letter}"
        return Verdict(meaning, f"matcher:{prefix}{found.rule}")
    norm = normalize_text(text)
    removed = meta.removed_text
    if meta.kind == "upd" and removed is not None and norm == normalize_text(removed):
        return Verdict("removed", f"matcher:{prefix}removed-option-text")
    if norm in ABSTAIN_PHRASES:
        return Verdict("abstain", f"matcher:{prefix}abstain-text")
    if declarations(text):  # a final declaration decides, or (two labels, an unknown label) nothing does
        letters = "".join(options) + extra
        declared = match_declaration(text, letters)
        if declared is None:
            return None
        meaning = "abstain" if declared.letter == abstain_letter else f"option:{declared.letter}"
        return Verdict(meaning, f"matcher:{prefix}{declared.rule}")
    abstention = find_abstention(text)
    if abstention is not None:
        return Verdict("abstain", f"matcher:{prefix}{abstention.rule}", f"abstention phrase {abstention.phrase!r}")
    in_reply = match_option_in_reply(text, options)
    if in_reply is not None:
        return Verdict(f"option:{in_reply.letter}", f"matcher:{prefix}{in_reply.rule}")
    return None


def match_reply(view: View, text: str) -> Verdict | None:
    """Steps 1-2 of the module docstring: the matcher's verdict on one reply, or None when it cannot decide."""
    if "{" in text:
        obj, _ = extract_json_object_repaired(text)  # strict, then the repair pass (trailing commas, True, ...)
        if obj is not None and isinstance(obj.get("answerable"), bool):
            if obj["answerable"] is False:
                return Verdict("abstain", "matcher:json-abstain")
            answer = obj.get("answer")
            if isinstance(answer, str | int | float) and not isinstance(answer, bool):
                return _plain(view, str(answer), "json-")
            return None
    return _plain(view, text, "")


_JUDGE_KEYS = ("answer", "choice", "option", "letter", "verdict")


def _judge_candidates(text: str) -> list[str]:
    out = [text]
    if "{" in text:
        obj, _ = extract_json_object_repaired(text)
        if obj is not None:
            out += [v for k in _JUDGE_KEYS if isinstance(v := obj.get(k), str)][:1]
    return out + fenced_blocks(text)[:1]


def parse_judge_reply(view: View, text: str | None, spec: str, *, server_reasoning: str | None = None) -> Verdict:
    """Read a judge's reply: a strict letter, one option's exact text, or a final declaration of one letter.

    A judge that thinks is read after its thinking: the reply is split first
    (:func:`vqaudit.parsing.reasoning.split_reasoning`, every known format, with ``server_reasoning`` the
    reasoning its server sent apart), and only the final text is read; a reply whose reasoning never finished is
    undecided (``reasoning not finished``), whatever its thinking holds. The letters are those of
    :func:`judge_options`; a declaration is "The answer is (C)", "**C**", ...
    (:func:`vqaudit.parsing.choice.match_declaration`). Tried on the final text, then on the string value of
    ``answer``/``choice``/``option``/``letter``/``verdict`` of a JSON object in it, then on its first fenced
    block; anything else is undecided. Never raises.
    """
    split = split_reasoning(text, AUTO, server_reasoning=server_reasoning)
    if split.final is None:
        return Verdict("undecided", "undecided", f"judge {spec} reply: {NOT_FINISHED}")
    final = split.final
    jo = judge_options(view)
    letters = "".join(jo.meaning)
    found = None
    for candidate in _judge_candidates(final):
        found = (
            match_letter(candidate, letters)
            or match_option_text(candidate, jo.texts)
            or match_declaration(candidate, letters)
        )
        if found is not None:
            break
    if found is None:
        return Verdict("undecided", "undecided", f"judge {spec} reply not understood: {final.strip()[:80]!r}")
    return Verdict(jo.meaning[found.letter], f"judge:{spec}")


SHOWN_REPLY_CHARS = 200
"""Characters of a judge reply an error message shows."""


def shown_reply(response: Response) -> str:
    """One judge reply for an error message: its text as stored in the cache, cut to :data:`SHOWN_REPLY_CHARS`.

    ``repr`` of the text (``...`` after it when cut); a reply with no content shows the start of the reasoning
    its server sent apart. Error texts are masked before they are stored, so what is stored is what is shown.
    """
    if response.text is None and response.reasoning is not None:
        head, text = "no content; reasoning sent apart ", response.reasoning
    else:
        head, text = "", response.text or ""
    cut = text[:SHOWN_REPLY_CHARS]
    return head + repr(cut) + ("..." if len(text) > SHOWN_REPLY_CHARS else "")


def unreadable_judge(spec: str, replies: Sequence[Response], unfinished: int, cache_path: Path) -> VqauditError:
    """The error of a judge none of whose replies gives a verdict: why, and one reply as stored.

    Args:
        spec: the judge spec.
        replies: the replies received (failed calls excluded), at least one.
        unfinished: how many of them are reasoning never finished.
        cache_path: the judge's cache file, where every reply can be read.
    """
    why = (
        f"{unfinished} of them reasoning never finished (the judge was still thinking when its token budget ran out)"
        if unfinished
        else "none says yes or no, or names an option"
    )
    shown = next((r for r in replies if r.text is None or r.text.strip()), replies[0])
    return VqauditError(
        f"judge {spec}: no verdict could be read from any of its {len(replies)} replies: {why}; "
        f"one reply, as stored in {cache_path}: {shown_reply(shown)}"
    )


async def _judge_all(
    pending: list[tuple[View, str]], spec: str, backend: Backend, cache: ResponseCache, concurrency: int
) -> list[Verdict]:
    """Ask the judge about every pending (view, final answer) and read its verdicts (:func:`parse_judge_reply`).

    The judge is shown the candidate's final answer (the callers pass the text after the reasoning split), never
    its thinking.

    Raises:
        VqauditError: from :func:`vqaudit.backends.judge.ask_judge_all`, or no received reply gives a verdict
            (:func:`unreadable_judge`: the cause and one reply as stored).
    """
    calls = [JudgeCall(v.view_id, JUDGE_PROMPT_ID, judge_prompt(v, t, judge_options(v))) for v, t in pending]
    try:
        replies = await ask_judge_all(
            backend, spec, cache, calls, loaded_generation(backend, JUDGE_PARAMS), concurrency=concurrency
        )
    finally:
        await backend.aclose()
    verdicts: list[Verdict] = []
    received: list[Response] = []
    for (view, _), r in zip(pending, replies, strict=True):
        if r.error is not None or (r.text is None and r.reasoning is None):
            verdicts.append(Verdict("undecided", "undecided", f"judge {spec} failed: {r.error}"))
            continue
        received.append(r)
        verdicts.append(parse_judge_reply(view, r.text, spec, server_reasoning=r.reasoning))
    if received and all(v.meaning == "undecided" for v in verdicts):
        unfinished = sum(1 for v in verdicts if v.note is not None and v.note.endswith(NOT_FINISHED))
        raise unreadable_judge(spec, received, unfinished, cache.path)
    return verdicts


def _outcome(view: View, response: Response | None, verdict: Verdict, reasoning_chars: int | None = None) -> Outcome:
    upd = view.obligation.kind == "abstain"
    decision = "invalid"
    answer: str | None = None
    invalid_reason: str | None = None
    if verdict.meaning.startswith("option:"):
        decision, answer = "answer", verdict.meaning.split(":", 1)[1]
    elif verdict.meaning == "abstain":
        decision = "abstain"
    elif verdict.meaning == "removed":
        decision, answer = "answer", str(UPDViewMeta.of(view).removed_text)
    elif verdict.meaning == "none":
        invalid_reason = "the reply matches no option"
    else:
        invalid_reason = verdict.note or "undecided: the strict matcher found no unique option and no judge was given"
    if upd:
        right = verdict.meaning in ("abstain", "removed")
        decision_correct, answer_correct, task_correct = right, False, right
    else:
        answer_correct = decision == "answer" and answer == view.obligation.gold[0]
        decision_correct, task_correct = decision == "answer", answer_correct
    return Outcome(
        view_id=view.view_id,
        group_id=view.group_id,
        source=view.source,
        state=view.state,
        obligation=view.obligation.kind,
        decision=decision,
        answer=answer,
        decision_correct=decision_correct,
        answer_correct=answer_correct,
        task_correct=task_correct,
        invalid_reason=invalid_reason,
        decided_by=verdict.decided_by,
        error=None if response is None else response.error,
        raw=None if response is None else response.text,
        reasoning_chars=reasoning_chars,
    )


def score_upd_views(
    views: list[View],
    responses: Mapping[str, Response],
    *,
    run_dir: Path,
    judge: str | None,
    judge_backend: Backend | None = None,
    concurrency: int = 8,
    judge_options: ModelOptions | None = None,
    reasoning_format: str = AUTO,
) -> list[Outcome]:
    """Score UPD views (module docstring): one Outcome per view, in the order of ``views``.

    Args:
        views: views with ``source == "upd"``.
        responses: ``view_id -> Response``; a missing response or a recorded error fails the view
            (``decided_by = "no-reply"``).
        run_dir: the run folder; judge verdicts are cached in ``run_dir/judge.sqlite``.
        judge: model spec of the judge (see ``vqaudit.backends.base``), or None for no judge.
        judge_backend: a ready backend to use instead of ``load_backend(judge)`` (tests); needs ``judge`` too.
        concurrency: maximum judge calls in flight.
        judge_options: generic model options of the judge (``--judge-arg``, ...); ``concurrency`` replaces its own.
        reasoning_format: which reasoning spans are split off each reply before it is matched
            (:mod:`vqaudit.parsing.reasoning`): only the final answer is matched or shown to the judge; a reply
            whose thinking never closed is undecided with the reason ``reasoning not finished``.

    Returns:
        The outcomes; every one has ``decided_by`` set.

    Raises:
        VqauditError: a bad judge spec, a fatal judge error, or an unreachable judge (its first calls all
            failed; see :func:`vqaudit.backends.judge.ask_judge_all`); verdicts received before it stay cached.
    """
    verdicts: dict[str, Verdict] = {}
    pending: list[tuple[View, str]] = []
    chars: dict[str, int | None] = {}  # reasoning length of each view with a reply, from its one split
    for view in views:
        response = responses.get(view.view_id)
        if response is None or response.error is not None or (response.text is None and response.reasoning is None):
            why = "no response" if response is None else f"no reply: {response.error or 'missing'}"
            verdicts[view.view_id] = Verdict("undecided", "no-reply", why)
            continue
        # seed 001 §4 matches the model's answer: a reasoning model's thinking is split off first, never matched
        split = split_reasoning(
            response.text, reasoning_format, server_reasoning=response.reasoning, finish_reason=response.finish_reason
        )
        chars[view.view_id] = split.reasoning_chars
        final = split.final
        if final is None:
            verdicts[view.view_id] = Verdict("undecided", "undecided", NOT_FINISHED)
            continue
        if too_long(final):  # over the token budget's reply length: not matched, not sent to a judge
            verdicts[view.view_id] = Verdict("undecided", "undecided", TOO_LONG)
            continue
        found = match_reply(view, final)
        if found is not None:
            verdicts[view.view_id] = found
        elif judge is None:
            verdicts[view.view_id] = Verdict("undecided", "undecided")
        else:
            pending.append((view, final))
    if pending and judge is not None:
        backend = (
            judge_backend
            if judge_backend is not None
            else load_backend(judge, dataclasses.replace(judge_options or ModelOptions(), concurrency=concurrency))
        )
        run_dir.mkdir(parents=True, exist_ok=True)
        with ResponseCache(RunFolder(run_dir).judge_cache) as cache:
            judged = run_async(_judge_all(pending, judge, backend, cache, concurrency))
        for (view, _), verdict in zip(pending, judged, strict=True):
            verdicts[view.view_id] = verdict
    return [_outcome(v, responses.get(v.view_id), verdicts[v.view_id], chars.get(v.view_id)) for v in views]
