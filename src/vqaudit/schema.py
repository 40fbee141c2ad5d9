"""The one data model every stage shares: View, Group, Obligation, Response, Parsed, Outcome, typed meta.

Vocabulary (docs/papers.md, "One model for all three"):

- a **view** is one model input: one image, one question (optionally lettered options), a **state** name and
  an **obligation** (``answer`` with accepted gold answers and an answer type, or ``abstain``);
- a **group** is the set of views that share one fixed question;
- a **response** is the raw text a backend returned for one view plus how it was produced;
- a **parsed** reply keeps the raw text beside the decision (``answer`` / ``abstain`` / ``invalid``) and answer;
- an **outcome** per view says whether the decision and the answer were right.

Every record is a frozen pydantic model so stages exchange typed, immutable values and files round-trip exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

ObligationKind = Literal["answer", "abstain"]
AnswerType = Literal["number", "text", "choice"]
Decision = Literal["answer", "abstain", "invalid"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


_M = TypeVar("_M", bound=BaseModel)


class Obligation(_Frozen):
    """What a view obliges the model to do.

    ``kind == "answer"``: the image supports one answer; ``gold`` lists the accepted answers (at least one) and
    ``answer_type`` says how they are compared (``number``: exact rational equality; ``text``: normalized exact
    string match; ``choice``: option letter). ``unit`` is the axis unit a numeric answer may carry.
    ``kind == "abstain"``: the image does not support an answer; ``gold`` is empty.
    """

    kind: ObligationKind = Field(description="'answer' (supported view) or 'abstain' (negative view).")
    gold: tuple[str, ...] = Field(default=(), description="Accepted gold answers; empty for 'abstain'.")
    answer_type: AnswerType | None = Field(default=None, description="How answers are compared.")
    unit: str | None = Field(default=None, description="Unit a numeric answer may carry (e.g. '%').")

    @model_validator(mode="after")
    def _consistent(self) -> Obligation:
        if self.kind == "answer" and (not self.gold or self.answer_type is None):
            raise ValueError("an 'answer' obligation needs at least one gold answer and an answer_type")
        if self.kind == "abstain" and self.gold:
            raise ValueError("an 'abstain' obligation has no gold answers")
        return self

    @property
    def supported(self) -> bool:
        """True for a supported view (the model must answer), False for a negative view (it must abstain)."""
        return self.kind == "answer"


class View(_Frozen):
    """One model input. ``image`` is a path relative to the benchmark folder; ``image_sha256`` hashes its bytes."""

    view_id: str = Field(description="Unique id of the view within the benchmark.")
    group_id: str = Field(description="Id of the group the view belongs to.")
    source: str = Field(description="Benchmark source: 'charts', 'scenes', 'photos', 'upd', 'shortanswer'.")
    state: str = Field(description="State name, e.g. 'original', 'S', 'C', 'M', 'I'.")
    image: str = Field(description="Image path relative to the benchmark folder.")
    image_sha256: str = Field(description="SHA-256 (hex) of the image file's bytes.")
    question: str = Field(description="The question text shown to the model.")
    options: tuple[str, ...] = Field(default=(), description="Lettered options for multiple choice, else empty.")
    obligation: Obligation
    meta: dict[str, Any] = Field(default_factory=dict, description="Source-specific details (JSON values).")


class Group(_Frozen):
    """Views sharing one fixed question; scored together for Bk and Jk."""

    group_id: str
    source: str
    question: str
    view_ids: tuple[str, ...]
    meta: dict[str, Any] = Field(default_factory=dict)


class Response(_Frozen):
    """The raw reply of a backend for one view, with how it was produced.

    ``error`` records a call that failed after all retries (``text`` is then None). Otherwise ``text`` holds the
    reply's content, except for a reasoning model's reply that ended while thinking: ``text`` None (the server sent
    no content) beside ``reasoning``, scored as "reasoning not finished" (:mod:`vqaudit.parsing.reasoning`).
    """

    view_id: str
    model: str = Field(description="Model spec string, e.g. 'reference:gold' or 'openai:NAME@URL'.")
    prompt_id: str = Field(description="Id of the prompt template used.")
    params: dict[str, Any] = Field(default_factory=dict, description="Generation parameters (temperature, ...).")
    text: str | None = Field(default=None, description="Raw reply text, exactly as returned.")
    error: str | None = Field(default=None, description="Error message when no reply was obtained.")
    latency_s: float = Field(default=0.0, ge=0.0, description="Wall-clock seconds of the successful call.")
    cache_key: str = Field(default="", description="Key of the response in the run's SQLite cache.")
    reasoning: str | None = Field(
        default=None,
        description="Reasoning the server sent apart from the content "
        "(``reasoning_content``, thinking blocks); never scored.",
    )
    finish_reason: str | None = Field(
        default=None,
        description="Why generation stopped, as the server said (``stop``, ``length``, ...), when it said.",
    )
    usage: dict[str, int] | None = Field(
        default=None,
        description="Token counts the server reported: ``prompt_tokens``, ``completion_tokens``, ``reasoning_tokens``.",
    )


class Parsed(_Frozen):
    """A reply parsed under the answerability contract; the raw reply is kept beside the parse."""

    decision: Decision
    answer: str | None = None
    reason: str | None = None
    invalid_reason: str | None = Field(default=None, description="Why the reply is invalid, when it is.")
    decided_by: str | None = Field(default=None, description="Which rule or judge decided the parse.")
    raw: str | None = Field(default=None, description="The raw reply text the parse came from.")
    final: str | None = Field(
        default=None,
        description="The final text read, after the reasoning split "
        "(``vqaudit.parsing.reasoning``); equal to ``raw`` for a reply without reasoning.",
    )
    reasoning_chars: int | None = Field(
        default=None, description="Characters of reasoning in the reply; None when it holds none."
    )


class Outcome(_Frozen):
    """The score of one view.

    ``decision_correct``: answered a supported view / abstained on a negative one (invalid is never correct).
    ``answer_correct``: the answer matches a gold answer (False for negative views and for non-answers).
    ``task_correct``: the view's full obligation is met (supported: answered correctly; negative: abstained).
    """

    view_id: str
    group_id: str
    source: str
    state: str
    obligation: ObligationKind
    decision: Decision
    answer: str | None = None
    decision_correct: bool
    answer_correct: bool
    task_correct: bool
    invalid_reason: str | None = None
    decided_by: str | None = Field(default=None, description="Which rule or judge decided the parse.")
    error: str | None = None
    raw: str | None = None
    reasoning_chars: int | None = Field(
        default=None,
        description="Characters of reasoning before the final "
        "answer (tags or the server's reasoning field); None when none.",
    )
    draft_decision: Decision | None = Field(
        default=None,
        description="The decision of the last complete answerability object inside the reasoning (a draft), if any.",
    )


class UPDViewMeta(_Frozen):
    """The ``View.meta`` contract of a UPD view (source ``upd``; seed 001 §3-4, appendix 0.C).

    The builder writes exactly these keys (in this order); the prompt, the choice scorer and the UPD metrics
    read them through :meth:`of`, never by string key.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    item_index: int = Field(description="The source item's index (circular copies share it).")
    ability: str = Field(description="The item's ability (MMBench category).")
    ability_index: int | None = Field(description="The ability's position in the paper's ability order.")
    l2_category: str = Field(description="The item's L2 category.")
    variant: Literal["aad", "iasd", "ivqd"] = Field(description="Absent answer, incompatible answer set or image.")
    setting: Literal["base", "option", "instruction", "original"] = Field(description="The prompt setting.")
    kind: Literal["standard", "upd"] = Field(description="The standard question or its UPD variant.")
    rotation: int = Field(ge=0, description="The circular shift of the options.")
    n_rotations: int = Field(ge=1, description="How many circular shifts the group has per kind.")
    hint: str = Field(default="", description="The item's hint text, shown before the question.")
    correct_text: str | None = Field(default=None, description="Standard views: the correct option's text.")
    removed_text: str | None = Field(default=None, description="AAD/IASD UPD views: the removed correct option.")
    abstain_letter: str | None = Field(default=None, description="The letter that abstains (option/instruction).")
    donor_index: int | None = Field(default=None, description="IASD/IVQD: the item the options or image came from.")
    item_source: str = Field(default="", description="Where the item came from (bundled data).")

    @classmethod
    def of(cls, view: View) -> UPDViewMeta:
        """The typed meta of a UPD view.

        Raises:
            VqauditError: the meta breaks the contract (the message names the view and the field).
        """
        from pydantic import ValidationError

        from vqaudit.errors import VqauditError

        try:
            return cls.model_validate(view.meta)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "(meta)"
            raise VqauditError(f"view {view.view_id}: field 'meta.{field}': {err['msg']}") from None


def _typed_meta(cls: type[_M], meta: dict[str, Any], where: str) -> _M:
    """Validate ``meta`` against ``cls``; a broken contract is one VqauditError naming ``where`` and the field."""
    from pydantic import ValidationError

    from vqaudit.errors import VqauditError

    try:
        return cls.model_validate(meta)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "(meta)"
        raise VqauditError(f"{where}: field 'meta.{field}': {err['msg']}") from None


class _ViewMeta(_Frozen):
    """A source's ``View.meta`` contract: read through :meth:`of`, never by string key."""

    @classmethod
    def of(cls, view: View) -> Self:
        """The typed meta of ``view``.

        Raises:
            VqauditError: the meta breaks the contract (the message names the view and the field).
        """
        return _typed_meta(cls, view.meta, f"view {view.view_id}")


class _GroupMeta(_Frozen):
    """A source's ``Group.meta`` contract: read through :meth:`of`, never by string key."""

    @classmethod
    def of(cls, group: Group) -> Self:
        """The typed meta of ``group``.

        Raises:
            VqauditError: the meta breaks the contract (the message names the group and the field).
        """
        return _typed_meta(cls, group.meta, f"group {group.group_id}")


class ChartViewMeta(_ViewMeta):
    """The ``View.meta`` contract of a chart view (source ``charts``; seed 000 §3.1, appendix B).

    As ``suites/charts/build.py`` writes it; imported plots add ``imported`` and ``qa``.
    """

    table: str = Field(description="The data table the chart draws.")
    kind: str = Field(description="The chart kind of this view's world (``bar``, ``hbar``, ``line``, ...).")
    program: dict[str, Any] = Field(description="The question's program (``programs.program_to_json``).")
    world: dict[str, Any] = Field(description="The drawn world (``World.to_json``).")
    certificate: str | None = Field(default=None, description="M and D views: the certificate's path.")
    imported: str | None = Field(default=None, description="Imported plots: where the plot came from.")
    qa: dict[str, Any] | None = Field(default=None, description="Imported plots: the source's question/answer.")


class ChartGroupMeta(_GroupMeta):
    """The ``Group.meta`` contract of a chart group (source ``charts``), as ``suites/charts/build.py`` writes it."""

    table: str = Field(description="The data table the chart draws.")
    kind: str = Field(description="The chart kind of the original view (``bar``, ``hbar``, ``line``, ...).")
    n_series: int = Field(ge=1, description="Series drawn in the original view.")
    program: str = Field(description="The program's top operation (``lookup``, ``max``, ``diff``, ...).")
    imported: str | None = Field(default=None, description="Imported plots: where the plot came from.")
    qa: dict[str, Any] | None = Field(default=None, description="Imported plots: the source's question/answer.")


class SceneViewMeta(_ViewMeta):
    """The ``View.meta`` contract of a scene view (source ``scenes``; seed 000 §3.2), as the builder writes it."""

    scene_id: str = Field(description="The CLEVR scene the view was edited from.")
    template: str = Field(description="The CLEVR question template (``family/index``).")
    program: list[dict[str, Any]] = Field(description="The CLEVR functional program.")
    edit: str = Field(description="What the view's edit did, in words.")
    evidence: dict[str, Any] = Field(description="The edit's evidence (changed object, occluder, ...).")
    objects: list[dict[str, Any]] = Field(description="The edited scene's objects.")
    m_status: str | None = Field(default=None, description="The M view: how the occlusion was certified.")


class SceneGroupMeta(_GroupMeta):
    """The ``Group.meta`` contract of a scene group (source ``scenes``), as ``suites/scenes/build.py`` writes it."""

    scene_id: str = Field(description="The CLEVR scene.")
    template: str = Field(description="The CLEVR question template (``family/index``).")
    answer: str = Field(description="The original answer.")
    m_status: str = Field(description="How the M view's occlusion was certified.")
    rejected: dict[str, int] = Field(description="Candidates rejected on the way to this group, by reason.")
    camera: dict[str, Any] = Field(description="The camera (``Camera.to_json``).")
    directions: dict[str, list[float]] = Field(description="The scene's direction vectors.")


class PhotoViewMeta(_ViewMeta):
    """The ``View.meta`` contract of a photo view (source ``photos``; seed 000 §3.3), as the builder writes it."""

    image_id: str = Field(description="The scene graph's image id.")
    file: str = Field(description="The photo's file name.")
    question_id: str = Field(description="The question's id.")
    program: list[dict[str, Any]] = Field(description="The GQA program.")
    mask: str | None = Field(description="The mask kind; None on the unmasked original.")
    masked: dict[str, Any] | None = Field(description="The masked boxes; None on the unmasked original.")


class PhotoGroupMeta(_GroupMeta):
    """The ``Group.meta`` contract of a photo group (source ``photos``), as ``suites/photos/build.py`` writes it.

    ``spatial_answer``, ``residual_cue`` and ``residual_cue_reasons`` are the residual-cue flags of
    ``suites/photos/cues.py`` (seed 000 §6.2, appendix C).
    """

    image_id: str = Field(description="The scene graph's image id.")
    file: str = Field(description="The photo's file name.")
    credit: str = Field(description="The photo's credit line.")
    question_id: str = Field(description="The question's id.")
    family: str = Field(description="The question family.")
    answer: str = Field(description="The original answer.")
    program: list[dict[str, Any]] = Field(description="The GQA program.")
    dependencies: list[str] = Field(description="Objects the answer depends on.")
    control_object: str = Field(description="The object the control view masks.")
    area_ratio: float = Field(description="Control mask area over M mask area.")
    mask: str = Field(description="The mask kind.")
    spatial_answer: bool = Field(description="The original answer is a spatial term.")
    residual_cue: bool = Field(description="The M view may still hint at the answer (any reason).")
    residual_cue_reasons: list[str] = Field(description="Why the group is flagged (empty when not).")
    scene_graph: dict[str, Any] = Field(description="The photo's scene graph.")
    matched: dict[str, Any] | None = Field(description="The appearance-matched control's masks, if built.")


@dataclass(frozen=True)
class GenerationParams:
    """Generation parameters sent with every call.

    Attributes:
        temperature: sampling temperature (0 = greedy).
        max_tokens: maximum number of new tokens in the reply (a reasoning model's thinking included).
        token_field: the body field ``max_tokens`` is sent as: ``max_tokens``, or ``max_completion_tokens`` for
            servers that want it (OpenAI's reasoning models refuse ``max_tokens``).
        reasoning_effort: sent as ``reasoning_effort`` (``low``, ``medium``, ``high``, ...) when set.
        enable_thinking: a chat template's thinking switch (Qwen3, GLM-4.5V, InternVL3.5), sent as
            ``chat_template_kwargs: {"enable_thinking": ...}`` when set.
        thinking_budget: tokens the model may think before it answers, when set (Anthropic Messages API
            ``thinking.budget_tokens``; Gemini ``generationConfig.thinkingConfig.thinkingBudget``, where 0 switches
            thinking off); part of ``max_tokens``, not beside it.

    The four optional settings enter :meth:`as_dict` (and so the cache key) only when set, so the key of a call
    without them is what it always was.
    """

    temperature: float = 0.0
    max_tokens: int = 512
    token_field: str = "max_tokens"
    reasoning_effort: str | None = None
    enable_thinking: bool | None = None
    thinking_budget: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """Return the parameters as a plain JSON-able dict (stored in responses and part of the cache key)."""
        out: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.token_field != "max_tokens":
            out["token_field"] = self.token_field
        if self.reasoning_effort is not None:
            out["reasoning_effort"] = self.reasoning_effort
        if self.enable_thinking is not None:
            out["enable_thinking"] = self.enable_thinking
        if self.thinking_budget is not None:
            out["thinking_budget"] = self.thinking_budget
        return out
