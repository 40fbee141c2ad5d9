"""Test helpers: a scripted in-process backend that records every request it sees; the CLI run in-process."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

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


def run_cli(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    """Run ``vqaudit ARGS`` through :func:`vqaudit.cli.main` in this process; return its exit code."""
    from vqaudit.cli import main

    monkeypatch.setattr(sys, "argv", ["vqaudit", *args])
    with pytest.raises(SystemExit) as exc:
        main()
    return int(exc.value.code or 0)
