"""The confidence interval of a binomial proportion: the Wilson score interval (seed 002 Table 2 "Precision 95% CI").

Wilson score interval (E. B. Wilson, "Probable inference, the law of succession, and statistical inference",
JASA 22(158), 1927, 209-212; R. G. Newcombe, "Two-sided confidence intervals for the single proportion:
comparison of seven methods", Stat. Med. 17, 1998, 857-872, method 3), for ``x`` successes in ``n`` trials,
``p = x / n`` and ``z`` the standard normal quantile of ``1 - (1 - confidence) / 2`` (1.95996 for 95%)::

    centre    = (p + z^2 / (2n)) / (1 + z^2 / n)
    halfwidth = z * sqrt(p (1 - p) / n + z^2 / (4 n^2)) / (1 + z^2 / n)
    interval  = [centre - halfwidth, centre + halfwidth]

Why Wilson: seed 002 Table 2 reports precision 97.6% with a 95% interval of 95.3-98.8 from a 570-item human
review. Searching every ``x / n`` with ``n <= 570`` that rounds to 97.6%, and the confusion counts
``(tp, fp, fn, tn)`` summing to 570 that also give recall 95.5% and kappa 0.917, the Wilson interval reproduces
95.3-98.8 with ``tp + fp`` = 328, 329 or 330 (``fp = 8``, ``fn = 15``; e.g. 320 / 328: 95.26-98.76); the
Clopper-Pearson interval of the same counts ends at 98.9 (320 / 328: 95.25-98.94), the normal (Wald) interval
at 95.9-99.2, and the Agresti-Coull interval reproduces it only at 359 / 368, which gives no recall 95.5% and
kappa 0.917 within 570 items. So the paper's interval is read as Wilson's, over the items the judge accepted.
"""

from __future__ import annotations

import math
from statistics import NormalDist

from vqaudit.errors import VqauditError


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of the proportion ``successes / n`` (module docstring).

    Args:
        successes: the count of successes, ``0 <= successes <= n``.
        n: the count of trials; 0 gives ``(nan, nan)`` (no proportion).
        confidence: the two-sided coverage, in (0, 1).

    Returns:
        ``(low, high)`` as fractions in [0, 1]; ``low == 0`` when ``successes == 0`` and ``high == 1`` when
        ``successes == n`` (up to rounding, clamped).

    Raises:
        VqauditError: a negative count, ``successes > n``, or a confidence outside (0, 1).
    """
    if n < 0 or successes < 0 or successes > n:
        raise VqauditError(f"a proportion needs 0 <= successes <= n, got {successes} of {n}")
    if not 0.0 < confidence < 1.0:
        raise VqauditError(f"confidence must be in (0, 1), got {confidence}")
    if n == 0:
        return math.nan, math.nan
    z = NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)
    p = successes / n
    denominator = 1.0 + z * z / n
    centre = (p + z * z / (2.0 * n)) / denominator
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)
