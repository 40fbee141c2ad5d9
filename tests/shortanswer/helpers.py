"""Test helpers: a scripted in-process backend that records every request it sees."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from vqaudit.backends import Request


@dataclass
class ScriptedBackend:
    """Replies ``reply(request)``; keeps every request so tests can check what was (not) asked."""

    reply: Callable[[Request], str]
    spec: str = "scripted:test"
    requests: list[Request] = field(default_factory=list)

    async def complete(self, request: Request) -> str:
        self.requests.append(request)
        return self.reply(request)

    async def aclose(self) -> None:
        return None
