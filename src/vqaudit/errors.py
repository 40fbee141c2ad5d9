"""The one user-facing error type. The CLI prints it without a traceback and exits with status 2."""

from __future__ import annotations


class VqauditError(Exception):
    """A problem the user can fix: bad input file, row or field, bad model spec, missing benchmark, ...

    The message names the file, row and field where they are known.
    """
