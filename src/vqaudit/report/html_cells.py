"""The cell texts of the HTML report: percentages, points, intervals and coefficients as the pages show them.

Shared by the answerability sections (:mod:`vqaudit.report.html`), the UPD section (:mod:`.html_upd`) and the
audit sections (:mod:`.html_audit`); plots are inlined as ``data:`` URIs (:func:`data_uri`).
"""

from __future__ import annotations

import base64
import math
from typing import Any


def pct(value: object) -> str:
    """A fraction as a percentage with one decimal (0.613 -> ``61.3``); ``n/a`` for a missing value, a bool or NaN."""
    if not isinstance(value, int | float) or isinstance(value, bool) or math.isnan(value):
        return "n/a"
    return f"{100 * value:.1f}"


def signed(value: float) -> str:
    """A fraction difference as signed points with one decimal (0.02 -> ``+2.0``); ``n/a`` for NaN."""
    return "n/a" if math.isnan(value) else f"{100 * value:+.1f}"


def with_ci(m: dict[str, Any], key: str) -> dict[str, str]:
    """The cell of metric ``key`` of ``m``: its percentage and its 95% interval ``[lo, hi]`` from ``m["ci"]``.

    The interval is "" when ``m`` has none for ``key``.
    """
    ci = (m.get("ci") or {}).get(key)
    cell = {"point": pct(m.get(key)), "ci": ""}
    if isinstance(ci, list) and len(ci) == 2 and ci[0] is not None:
        cell["ci"] = f"[{pct(ci[0])}, {pct(ci[1])}]"
    return cell


def data_uri(kind: str, data: bytes) -> str:
    """``data`` as a base64 ``data:`` URI of media type ``kind`` (plots inline: the report needs no server)."""
    return f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"


def points(value: object, digits: int = 1) -> str:
    """A number of points or percent; scores with 2 digits, as report.md shows them (61.25, not 61.3)."""
    if not isinstance(value, int | float) or isinstance(value, bool) or math.isnan(value):
        return "n/a"
    return f"{value:.{digits}f}"


def signed_points(value: float) -> str:
    """A difference already in points, signed with one decimal and ``pp`` (``+1.5 pp``); ``n/a`` for NaN."""
    return "n/a" if math.isnan(value) else f"{value:+.1f} pp"


def coef(value: object) -> str:
    """A correlation or kappa coefficient with three decimals; ``undefined`` when not a number."""
    return "undefined" if not isinstance(value, int | float) else f"{value:.3f}"
