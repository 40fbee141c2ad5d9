"""Built-in backends that are not models: the reference policies and the replay of saved replies.

The reference policies reply under the answerability JSON contract (``vqaudit.prompts.answerability``):

- ``always-answer``: ``{"answerable": true, "answer": "0", ...}`` for every view (a fixed guess);
- ``always-abstain``: ``{"answerable": false, "answer": null, ...}`` for every view;
- ``gold``: the view's first gold answer on supported views, an abstention on negative views. It is an oracle
  that checks the scoring path, not a model, and its ``reason`` says so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from vqaudit.backends.base import BackendCallError, Request
from vqaudit.errors import VqauditError
from vqaudit.schema import View
from vqaudit.textsafe import decode_lenient

POLICIES = ("always-answer", "always-abstain", "gold")

ALWAYS_ANSWER_REASON = "reference policy: always answers with a fixed guess"
ALWAYS_ABSTAIN_REASON = "reference policy: always abstains"
GOLD_REASON = "reference:gold oracle \u2014 a check of the scoring path, not a model"


def _reply(answerable: bool, answer: str | None, reason: str) -> str:
    return json.dumps({"answerable": answerable, "answer": answer, "reason": reason}, ensure_ascii=False)


def reference_reply(policy: str, view: View) -> str:
    """Return the reply text of a reference policy for one view.

    Args:
        policy: ``always-answer``, ``always-abstain`` or ``gold``.
        view: the view asked about (only ``gold`` looks at it).

    Returns:
        A JSON object with ``answerable``, ``answer`` and ``reason``, as a model following the contract would.

    Raises:
        ValueError: an unknown policy.
    """
    if policy == "always-answer":
        return _reply(True, "0", ALWAYS_ANSWER_REASON)
    if policy == "always-abstain":
        return _reply(False, None, ALWAYS_ABSTAIN_REASON)
    if policy == "gold":
        if view.obligation.kind == "answer":
            return _reply(True, view.obligation.gold[0], GOLD_REASON)
        return _reply(False, None, GOLD_REASON)
    raise ValueError(f"unknown reference policy {policy!r}")


@dataclass(frozen=True)
class ReferenceBackend:
    """A reference policy behind the Backend protocol (no I/O; never fails)."""

    spec: str
    policy: str

    async def complete(self, request: Request) -> str:
        """Return the policy's reply for ``request.view`` (see ``reference_reply``)."""
        return reference_reply(self.policy, request.view)

    async def aclose(self) -> None:
        """Nothing to release."""


@dataclass(frozen=True)
class ReplayBackend:
    """Replies read from a JSONL file of saved responses, looked up by view id."""

    spec: str
    replies: Mapping[str, str | None]

    @classmethod
    def from_file(cls, spec: str, path: Path) -> ReplayBackend:
        """Read a replay file: one JSON object per line with ``view_id`` (string) and ``text`` (string or null).

        Other keys are ignored, so a JSONL of exported Response records replays as is. A null ``text`` (a
        recorded error) makes that view fail.

        Raises:
            VqauditError: the file is missing, a line is not a JSON object, a field has the wrong type, or a
                view id appears twice; the message names the file, the 1-based row and the field.
        """
        if not path.is_file():
            raise VqauditError(f"{path}: replay file not found")
        replies: dict[str, str | None] = {}
        with path.open("rb") as handle:
            for row, raw_line in enumerate(handle, start=1):
                line = decode_lenient(raw_line)  # raw lone surrogates and non-UTF-8 bytes kept, never a traceback
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except (ValueError, RecursionError) as exc:
                    why = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
                    raise VqauditError(f"{path}: row {row}: not valid JSON: {why}") from None
                if not isinstance(record, dict):
                    raise VqauditError(f"{path}: row {row}: expected a JSON object")
                view_id, text = record.get("view_id"), record.get("text")
                if not isinstance(view_id, str):
                    raise VqauditError(f"{path}: row {row}, field 'view_id': expected a string")
                if text is not None and not isinstance(text, str):
                    raise VqauditError(f"{path}: row {row}, field 'text': expected a string or null")
                if view_id in replies:
                    raise VqauditError(f"{path}: row {row}, field 'view_id': duplicate view {view_id!r}")
                replies[view_id] = text
        return cls(spec=spec, replies=replies)

    async def complete(self, request: Request) -> str:
        """Return the saved reply of ``request.view``.

        Raises:
            BackendCallError: the file has no row for the view, or its row has no text.
        """
        view_id = request.view.view_id
        if view_id not in self.replies:
            raise BackendCallError(f"replay file has no reply for view {view_id!r}")
        text = self.replies[view_id]
        if text is None:
            raise BackendCallError(f"replay file records no reply text for view {view_id!r}")
        return text

    async def aclose(self) -> None:
        """Nothing to release."""
