"""The reference policies: built-in replies that are not a model (``reference:POLICY``).

The reference policies reply under the answerability JSON contract (``vqaudit.prompts.answerability``):

- ``always-answer``: ``{"answerable": true, "answer": "0", ...}`` for every view (a fixed guess);
- ``always-abstain``: ``{"answerable": false, "answer": null, ...}`` for every view;
- ``gold``: the view's first gold answer on supported views, an abstention on negative views. It is an oracle
  that checks the scoring path, not a model, and its ``reason`` says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from vqaudit.backends.base import BackendCallError, ModelOptions, Request
from vqaudit.schema import Obligation

POLICIES = ("always-answer", "always-abstain", "gold")

ALWAYS_ANSWER_REASON = "reference policy: always answers with a fixed guess"
ALWAYS_ABSTAIN_REASON = "reference policy: always abstains"
GOLD_REASON = "reference:gold oracle \u2014 a check of the scoring path, not a model"


def _reply(answerable: bool, answer: str | None, reason: str) -> str:
    return json.dumps({"answerable": answerable, "answer": answer, "reason": reason}, ensure_ascii=False)


def reference_reply(policy: str, obligation: Obligation | None) -> str:
    """Return the reply text of a reference policy for one view.

    Args:
        policy: ``always-answer``, ``always-abstain`` or ``gold``.
        obligation: what the view asks (only ``gold`` reads it; None, as for a call that is not a view, makes
            ``gold`` refuse).

    Returns:
        A JSON object with ``answerable``, ``answer`` and ``reason``, as a model following the contract would.

    Raises:
        ValueError: an unknown policy, or ``gold`` without an obligation.
    """
    if policy == "always-answer":
        return _reply(True, "0", ALWAYS_ANSWER_REASON)
    if policy == "always-abstain":
        return _reply(False, None, ALWAYS_ABSTAIN_REASON)
    if policy == "gold":
        if obligation is None:
            raise ValueError("reference:gold needs the view's obligation")
        if obligation.kind == "answer":
            return _reply(True, obligation.gold[0], GOLD_REASON)
        return _reply(False, None, GOLD_REASON)
    raise ValueError(f"unknown reference policy {policy!r}")


@dataclass(frozen=True)
class ReferenceBackend:
    """A reference policy behind the Backend protocol (no I/O; never fails)."""

    spec: str
    policy: str

    @property
    def identity(self) -> str:
        """The spec: a policy's replies depend on nothing else."""
        return self.spec

    async def complete(self, request: Request) -> str:
        """Return the policy's reply for ``request.obligation`` (see ``reference_reply``).

        Raises:
            BackendCallError: ``reference:gold`` asked a request that carries no obligation.
        """
        try:
            return reference_reply(self.policy, request.obligation)
        except ValueError as exc:
            raise BackendCallError(str(exc), fatal=True) from None

    async def aclose(self) -> None:
        """Nothing to release."""


def load(spec: str, target: str, options: ModelOptions) -> ReferenceBackend:
    """Build ``reference:POLICY`` (the backend table's loader; no options apply).

    Raises:
        VqauditError: an unknown policy (the message lists the valid forms), or any ``--model-arg``.
    """
    from vqaudit.backends.registry import bad_spec

    if target not in POLICIES:
        raise bad_spec(spec, f"unknown reference policy {target!r}")
    options.refuse_unknown_args(spec, ())
    return ReferenceBackend(spec=spec, policy=target)
