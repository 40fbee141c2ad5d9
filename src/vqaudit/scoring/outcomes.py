"""Score one view: parse the reply, then compare the decision and answer with the view's obligation."""

from __future__ import annotations

from vqaudit.parsing import parse_answerability
from vqaudit.parsing.answerability import draft_decision, parse_split
from vqaudit.parsing.reasoning import AUTO, split_reasoning
from vqaudit.schema import Outcome, Response, View
from vqaudit.scoring.answers import answer_matches


def score_view(view: View, response: Response, reasoning_format: str = AUTO) -> Outcome:
    """The outcome of one view (docs/papers.md, vocabulary, "An outcome per view").

    ``decision_correct``: a supported view was answered, or a negative view abstained; an invalid reply (or a
    recorded backend error) is never correct. ``answer_correct``: the answer matches a gold answer (only for
    supported views). ``task_correct``: supported views need a correct answer, negative views an abstention.

    Only the reply's final answer is read (:func:`vqaudit.parsing.parse_answerability` splits off the reasoning
    by ``reasoning_format``); ``reasoning_chars`` records the reasoning's length and ``draft_decision`` the
    decision of the last valid contract object inside it (:func:`vqaudit.parsing.answerability.draft_decision`).
    """
    if response.error is not None:
        parsed = parse_answerability(response.text, response.error)
        draft = None
    else:  # split once: the parse reads the final answer, the draft decision the reasoning
        split = split_reasoning(
            response.text, reasoning_format, server_reasoning=response.reasoning, finish_reason=response.finish_reason
        )
        parsed = parse_split(response.text, split)
        draft = draft_decision(split.reasoning) if split.reasoning else None
    supported = view.obligation.supported
    decision_correct = parsed.decision == ("answer" if supported else "abstain")
    answer_correct = supported and parsed.decision == "answer" and answer_matches(parsed.answer, view.obligation)
    return Outcome(
        view_id=view.view_id,
        group_id=view.group_id,
        source=view.source,
        state=view.state,
        obligation=view.obligation.kind,
        decision=parsed.decision,
        answer=parsed.answer,
        decision_correct=decision_correct,
        answer_correct=answer_correct,
        task_correct=answer_correct if supported else decision_correct,
        invalid_reason=parsed.invalid_reason,
        error=response.error,
        raw=response.text,
        reasoning_chars=parsed.reasoning_chars,
        draft_decision=draft,
    )
