"""The replay backend: replies saved in a JSONL file, answered by request id (``replay:FILE``)."""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vqaudit.backends.base import BackendCallError, Completion, ModelOptions, Request, finish_reason_of
from vqaudit.errors import VqauditError
from vqaudit.textsafe import decode_lenient


@dataclass(frozen=True)
class ReplayBackend:
    """Replies read from a JSONL file of saved responses, looked up by view id.

    ``sha256``: SHA-256 (hex) of the file's bytes, part of :attr:`identity`. ``completions``: the rows that carry
    more than their text (reasoning, finish reason, usage), as the :class:`Completion` replayed for them.
    ``path`` and ``rows`` (view id -> its 1-based line) name where a reply came from in the errors about it.
    """

    spec: str
    replies: Mapping[str, str | None]
    sha256: str
    completions: Mapping[str, Completion] = field(default_factory=dict)
    path: Path | None = None
    rows: Mapping[str, int] = field(default_factory=dict)

    @property
    def identity(self) -> str:
        """``SPEC@sha256:HEX``: the spec and the SHA-256 of the file's bytes (as ``hf:`` pins its weights).

        The response cache keys replies by it and run.json records it (``model_identity``), so rerunning into a
        run folder after the file was edited asks every view again instead of reusing the old replies; shards of
        one file share it, so ``vqaudit merge`` joins them (and refuses shards of different versions).
        """
        return f"{self.spec}@sha256:{self.sha256}"

    @classmethod
    def from_file(cls, spec: str, path: Path) -> ReplayBackend:
        """Read a replay file: one JSON object per line with ``view_id`` (string) and ``text`` (string or null).

        Optional, beside ``text`` (each may be null, as in an exported Response record): ``reasoning`` (string:
        what a reasoning parser sent apart), ``finish_reason`` (1 to 64 printable ASCII characters, e.g. ``stop``,
        ``length``) and ``usage``
        (an object of token counts, each an integer from 0 to 2**53 - 1; ``prompt_tokens``,
        ``completion_tokens`` and ``reasoning_tokens`` are kept). Such a row replays as a :class:`Completion`.
        A null ``text`` beside ``reasoning`` is a reply cut off while thinking (scored "reasoning not
        finished"); a null ``text`` without reasoning is a recorded error (an exported Response record of a
        failed call) and makes that view fail, naming the file and row. A line without ``text`` at all is
        refused unless it has ``reasoning`` (a cut reply may leave the text out). Other keys are ignored, so a
        JSONL of exported Response records replays as is.

        Raises:
            VqauditError: the file is missing, a line is not a JSON object, a field has the wrong type, a line
                has no ``text`` and no ``reasoning``, or a view id appears twice; the message names the file,
                the 1-based row and the field.
        """
        if not path.is_file():
            raise VqauditError(f"{path}: replay file not found")
        replies: dict[str, str | None] = {}
        completions: dict[str, Completion] = {}
        rows: dict[str, int] = {}
        data = path.read_bytes()  # one read: the replies and the hash come from the same bytes
        with io.BytesIO(data) as handle:
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
                if "text" not in record and record.get("reasoning") is None:
                    raise VqauditError(
                        f"{path}: row {row}, field 'text': missing (the reply, or null with "
                        "'reasoning' for a reply cut off while thinking)"
                    )
                if view_id in replies:
                    raise VqauditError(f"{path}: row {row}, field 'view_id': duplicate view {view_id!r}")
                replies[view_id] = text
                rows[view_id] = row
                more = _completion(record, text, f"{path}: row {row}")
                if more is not None:
                    completions[view_id] = more
        return cls(
            spec=spec,
            replies=replies,
            sha256=hashlib.sha256(data).hexdigest(),
            completions=completions,
            path=path,
            rows=rows,
        )

    def refuse_unknown_ids(self, ids: Collection[str], what: str) -> None:
        """Refuse a file with a row for an id outside ``ids`` (a reply meant for another benchmark).

        Raises:
            VqauditError: one line naming the file, the first such row and its view id.
        """
        known = ids if isinstance(ids, (set, frozenset)) else set(ids)
        unknown = [view_id for view_id in self.replies if view_id not in known]
        if unknown:
            first = min(unknown, key=lambda v: self.rows.get(v, 0))
            more = f" ({len(unknown) - 1} more rows name unknown views)" if len(unknown) > 1 else ""
            raise VqauditError(
                f"{self.path}: row {self.rows.get(first, 0)}, field 'view_id': view {first!r} is not "
                f"in {what}{more}; a replay file holds replies for this benchmark's views only"
            )

    async def complete(self, request: Request) -> str | Completion:
        """Return the saved reply of ``request.request_id`` (a Completion for a row with reasoning or usage).

        Raises:
            BackendCallError: the file has no row for the view, or its row has neither text nor reasoning.
        """
        view_id = request.request_id
        if view_id not in self.replies:
            raise BackendCallError(f"replay file has no reply for view {view_id!r}")
        more = self.completions.get(view_id)
        if more is not None:
            return more
        text = self.replies[view_id]
        if text is None:
            raise BackendCallError(
                f"{self.path}: row {self.rows.get(view_id, 0)}: the replay file records no reply "
                f"text for view {view_id!r}"
            )
        return text

    async def aclose(self) -> None:
        """Nothing to release."""


_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "reasoning_tokens")
_MAX_COUNT = 2**53 - 1


def _completion(record: dict[str, Any], text: str | None, where: str) -> Completion | None:
    """The Completion of a row with ``reasoning``, ``finish_reason`` or ``usage`` set; None for a text-only row.

    A null ``text`` without reasoning stays a recorded error (None: the view fails), unless ``finish_reason`` is
    ``length``: content cut off by the token budget before any was sent, as OpenAI's reasoning models send it when
    their hidden reasoning used every token (scored "reasoning not finished", as the same reply from a server).

    Raises:
        VqauditError: a field of the wrong type, naming ``where`` (file and row) and the field.
    """
    reasoning, finish_reason, usage = record.get("reasoning"), record.get("finish_reason"), record.get("usage")
    if reasoning is not None and not isinstance(reasoning, str):
        raise VqauditError(f"{where}, field 'reasoning': expected a string or null")
    if finish_reason is not None and finish_reason_of(finish_reason) is None:
        raise VqauditError(
            f"{where}, field 'finish_reason': expected a string of 1 to 64 printable ASCII "
            "characters (e.g. stop, length) or null"
        )
    counts: dict[str, int] | None = None
    if usage is not None:
        if not isinstance(usage, dict):
            raise VqauditError(f"{where}, field 'usage': expected an object of token counts or null")
        flat = dict(usage)
        details = flat.pop("completion_tokens_details", None)  # OpenAI's own shape: reasoning_tokens nested here
        if details is not None:
            if not isinstance(details, dict):
                raise VqauditError(f"{where}, field 'usage.completion_tokens_details': expected an object or null")
            if "reasoning_tokens" in details:
                if "reasoning_tokens" in flat:
                    raise VqauditError(
                        f"{where}, field 'usage.completion_tokens_details.reasoning_tokens': also "
                        "given as usage.reasoning_tokens; give one"
                    )
                flat["reasoning_tokens"] = details["reasoning_tokens"]
        for key in _USAGE_KEYS:  # the counts summed; other keys (total_tokens, prompt_tokens_details) are not read
            value = flat.get(key)
            if key in flat and (isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_COUNT):
                shown = "completion_tokens_details.reasoning_tokens" if key == "reasoning_tokens" and details else key
                raise VqauditError(f"{where}, field 'usage.{shown}': expected an integer from 0 to {_MAX_COUNT}")
        counts = {k: flat[k] for k in _USAGE_KEYS if k in flat} or None
    if reasoning is None and finish_reason is None and counts is None:
        return None
    if text is None and reasoning is None and finish_reason != "length":
        return None  # a recorded error: no reply to replay
    return Completion(text, reasoning, finish_reason, counts)


def load(spec: str, target: str, options: ModelOptions) -> ReplayBackend:
    """Build ``replay:FILE`` (the backend table's loader; no options apply).

    Raises:
        VqauditError: the file cannot be read (see :meth:`ReplayBackend.from_file`), or any ``--model-arg``.
    """
    options.refuse_unknown_args(spec, ())
    return ReplayBackend.from_file(spec, Path(target))


def check_request_ids(spec: str, target: str, ids: Collection[str], what: str) -> None:
    """Refuse ``replay:FILE`` when a row names a view outside ``ids`` (the registry's ``check_request_ids`` hook).

    ``import-predictions`` refuses rows for views the benchmark lacks in the same way: a saved reply for a view
    that is not there was meant for another benchmark, and the replies that do match may be shifted too.

    Raises:
        VqauditError: the file cannot be read (:meth:`ReplayBackend.from_file`), or one line naming the file, the
            row and the unknown view id.
    """
    ReplayBackend.from_file(spec, Path(target)).refuse_unknown_ids(ids, what)
