"""The ``vqaudit`` command line: one module per command group, commands listed in pipeline order.

``build`` (:mod:`vqaudit.cli.build`), then ``verify``, ``run``, ``merge``, ``score`` (:mod:`vqaudit.cli.pipeline`),
``report`` (:mod:`vqaudit.cli.report`), ``eval`` (:mod:`vqaudit.cli.evaluate`), ``export`` and
``import-predictions`` (:mod:`vqaudit.cli.harness`), then the audits (:mod:`vqaudit.cli.audits`,
:mod:`vqaudit.cli.leaks`, :mod:`vqaudit.cli.shortanswer`, :mod:`vqaudit.cli.perturb`) and ``export-tuning``
(:mod:`vqaudit.cli.upd`). Shared option types are in :mod:`vqaudit.cli.options`. A
:class:`~vqaudit.errors.VqauditError` is printed as one line without a traceback and the command exits with
status 2. Nothing else in vqaudit imports this package.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import sys
from typing import Annotated

import typer

from vqaudit.cli.audits import audit_certifier_cmd, audit_checker_cmd
from vqaudit.cli.build import build_app
from vqaudit.cli.evaluate import eval_cmd
from vqaudit.cli.harness import export_cmd, import_predictions_cmd
from vqaudit.cli.help_format import PlainHelpGroup
from vqaudit.cli.leaks import audit_leaks_cmd
from vqaudit.cli.options import error
from vqaudit.cli.perturb import perturb_cmd
from vqaudit.cli.pipeline import merge, run, score, verify
from vqaudit.cli.report import report
from vqaudit.cli.shortanswer import audit_cmd, audit_summary_cmd
from vqaudit.cli.upd import export_tuning_cmd
from vqaudit.errors import VqauditError
from vqaudit.progress import set_quiet
from vqaudit.signals import SIGTERM_EXIT, Completed, Terminated, exit_on_sigterm, sigterm_like_ctrl_c


class _InOrder(PlainHelpGroup):
    """Lists commands in the order they were registered (the pipeline's), not alphabetically."""

    def list_commands(self, ctx: object) -> list[str]:
        names = list(self.commands)  # typer adds sub-apps (build) after the commands: build leads the pipeline
        return sorted(names, key=lambda name: name != "build")


# Plain help text (click's layout; see cli.help_format.PlainHelpGroup for why not typer's rich panels).
app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    cls=_InOrder,
    rich_markup_mode=None,
    help="Audit answerability of vision-language models.",
)


@app.callback()
def _options(
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="No progress on stderr (by default a live "
            "bar on a terminal; otherwise a plain line at "
            "most every 10 s and at each quarter).",
        ),
    ] = False,
) -> None:
    """Audit answerability of vision-language models."""
    set_quiet(quiet)


app.add_typer(build_app, name="build")
app.command("verify")(verify)
app.command("run")(run)
app.command("merge")(merge)
app.command("score")(score)
app.command("report")(report)
app.command("eval")(eval_cmd)
app.command("export")(export_cmd)
app.command("import-predictions")(import_predictions_cmd)
app.command("audit-checker")(audit_checker_cmd)
app.command("audit-leaks")(audit_leaks_cmd)
app.command("audit-certifier")(audit_certifier_cmd)
app.command("audit")(audit_cmd)
app.command("perturb")(perturb_cmd)
app.command("audit-summary")(audit_summary_cmd)
app.command("export-tuning")(export_tuning_cmd)


def main() -> None:
    """Console entry point: run the app; print a user error as one line (exit 2), never a traceback.

    Exit codes: 0 success; 1 a check failed (verify, audit-checker, audit-certifier) or a run ended with views
    whose reply is a recorded error; 2 a user error (bad input file, row or field, bad option, bad model spec);
    130 interrupted (rerun the same command: a run resumes from its stored replies, other commands start again);
    143 stopped by SIGTERM, handled like Ctrl-C (a batch scheduler's stop: the replies received are stored, the
    folder lock released). A SIGTERM
    after the command's output is complete (``vqaudit.signals.output_complete``: an audit whose report set is
    renamed into place) stops it with exit 0 and a line saying so; one during the interpreter's shutdown ends the
    process at once with the status already decided (``vqaudit.signals.exit_on_sigterm``).
    """
    code = _run()
    exit_on_sigterm(code)
    sys.exit(code)


_RERUN = "rerun the same command (a run resumes from its stored replies, other commands start again)"
"""What an interrupted command advises: only `vqaudit run` (and `eval`'s run step) keeps what it was given."""


def _run() -> int:
    """Run the app under the CLI's SIGTERM handling; print what ended it, if anything; return the exit status."""
    try:
        with sigterm_like_ctrl_c():
            code = app(standalone_mode=False)
    except Completed as exc:
        typer.echo(exc.note, err=True)
        return 0
    except Terminated:
        error(f"terminated (SIGTERM); {_RERUN}")
        return SIGTERM_EXIT
    except VqauditError as exc:
        error(str(exc))
        return 2
    except typer.TyperException as exc:  # usage errors: bad option, missing argument, ...
        error(exc.format_message())
        return exc.exit_code
    except OSError as exc:  # file-system problems: one line naming the file
        error(os_error_line(exc))
        return 2
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:  # storage problems
        error(f"{type(exc).__name__}: {exc}")
        return 2
    if code == 130:
        error(f"interrupted; {_RERUN}")
    return code if isinstance(code, int) else 0


_OS_REASONS = {
    errno.ENOSPC: "no space left on the device: free space, or copy the folder to a disk with room, and rerun the "
    "same command (a rerun of `vqaudit run` asks only the views still missing)",
    errno.EDQUOT: "disk quota exceeded: free space, or copy the folder to a disk with room, and rerun the same "
    "command (a rerun of `vqaudit run` asks only the views still missing)",
    errno.EACCES: "permission denied: choose a folder you can write, or change its permissions",
    errno.EPERM: "operation not permitted: choose a folder you can write, or change its permissions",
    errno.EROFS: "read-only file system: choose a folder on a writable disk",
    errno.EEXIST: "already exists: choose a new name, or move it away",
    errno.EISDIR: "is a folder where a file was expected",
    errno.ENOTDIR: "a part of this path is a file where a folder was expected",
    errno.ENOENT: "not found",
    errno.ENAMETOOLONG: "the name is too long",
}


def os_error_line(exc: OSError) -> str:
    """One line for a file-system error: the path (both, for a rename), then what went wrong and what to do.

    A full disk (``ENOSPC``) says that the files written so far are kept and a rerun asks only what is missing;
    an error naming no file (rare: :func:`vqaudit.files.named_os_error` names the files vqaudit writes) is shown
    with its type.
    """
    reason = _OS_REASONS.get(exc.errno or -1) or exc.strerror or str(exc)
    if exc.errno == errno.EEXIST and exc.filename is not None and os.path.isfile(exc.filename):
        reason = "a file where a folder was expected: choose another path, or move the file away"
    if exc.filename is None:
        return f"{type(exc).__name__}: {reason}"
    where = str(exc.filename) if exc.filename2 is None else f"{exc.filename} -> {exc.filename2}"
    return f"{where}: {reason}"
