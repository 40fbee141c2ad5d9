"""The help layout of every vqaudit command: click's plain layout, never breaking a line at a hyphen.

:class:`PlainHelpGroup` is the group class of the app (:mod:`vqaudit.cli`) and of its sub-apps (``build``).
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperGroup

_NO_BREAK_HYPHEN = "\u2011"


class _HelpFormatter(typer.Context.formatter_class):  # type: ignore[valid-type,misc]
    """Click's plain help layout, never breaking a line at a hyphen: names such as ``chartqa-machine`` stay whole.

    Click wraps with :class:`textwrap.TextWrapper`, which breaks after an ASCII hyphen; the text is wrapped with
    each hyphen as U+2011 (a non-breaking hyphen, one column wide too) and the hyphens are put back at the end.
    """

    def write_text(self, text: str) -> None:
        """Click's ``write_text``, hyphens kept on their line."""
        super().write_text(text.replace("-", _NO_BREAK_HYPHEN))

    def write_dl(self, rows: Any, col_max: int = 30, col_spacing: int = 2) -> None:
        """Click's ``write_dl`` (options, commands), hyphens kept on their line."""
        super().write_dl([(term, text.replace("-", _NO_BREAK_HYPHEN)) for term, text in rows], col_max, col_spacing)

    def getvalue(self) -> str:
        """The help text, with its hyphens back."""
        text: str = super().getvalue()
        return text.replace(_NO_BREAK_HYPHEN, "-")


class HelpContext(typer.Context):
    """The context of every vqaudit command: help written by :class:`_HelpFormatter`."""

    formatter_class = _HelpFormatter


class PlainHelpGroup(TyperGroup):
    """A command group whose commands (and their subcommands) write their help with :class:`_HelpFormatter`.

    The help is click's plain layout, not typer's rich panels (``rich_markup_mode=None``): rendering those
    imports ``typer.rich_utils`` (rich's markdown, tables and tracebacks), which alone costs twice the start-up
    of typer and rich together (``benchmarks/bench_startup.py``), and typer builds every command at start.
    """

    context_class = HelpContext

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The command ``cmd_name``, made to use :class:`HelpContext` too."""
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            command.context_class = HelpContext
        return command
