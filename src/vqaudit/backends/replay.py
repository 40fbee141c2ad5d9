"""The replay backend: replies saved in a JSONL file, answered by request id (``replay:FILE``)."""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from vqaudit.backends.base import BackendCallError, ModelOptions, Request
from vqaudit.errors import VqauditError
from vqaudit.textsafe import decode_lenient


@dataclass(frozen=True)
class ReplayBackend:
    """Replies read from a JSONL file of saved responses, looked up by view id.

    ``sha256``: SHA-256 (hex) of the file's bytes, part of :attr:`identity`.
    """

    spec: str
    replies: Mapping[str, str | None]
    sha256: str

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

        Other keys are ignored, so a JSONL of exported Response records replays as is. A null ``text`` (a
        recorded error) makes that view fail.

        Raises:
            VqauditError: the file is missing, a line is not a JSON object, a field has the wrong type, or a
                view id appears twice; the message names the file, the 1-based row and the field.
        """
        if not path.is_file():
            raise VqauditError(f"{path}: replay file not found")
        replies: dict[str, str | None] = {}
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
                if view_id in replies:
                    raise VqauditError(f"{path}: row {row}, field 'view_id': duplicate view {view_id!r}")
                replies[view_id] = text
        return cls(spec=spec, replies=replies, sha256=hashlib.sha256(data).hexdigest())

    async def complete(self, request: Request) -> str:
        """Return the saved reply of ``request.request_id``.

        Raises:
            BackendCallError: the file has no row for the view, or its row has no text.
        """
        view_id = request.request_id
        if view_id not in self.replies:
            raise BackendCallError(f"replay file has no reply for view {view_id!r}")
        text = self.replies[view_id]
        if text is None:
            raise BackendCallError(f"replay file records no reply text for view {view_id!r}")
        return text

    async def aclose(self) -> None:
        """Nothing to release."""


def load(spec: str, target: str, options: ModelOptions) -> ReplayBackend:
    """Build ``replay:FILE`` (the backend table's loader; no options apply).

    Raises:
        VqauditError: the file cannot be read (see :meth:`ReplayBackend.from_file`), or any ``--model-arg``.
    """
    options.refuse_unknown_args(spec, ())
    return ReplayBackend.from_file(spec, Path(target))
