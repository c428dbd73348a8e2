"""Small statistics helpers. Pure functions, no Django."""

from __future__ import annotations

import math

Z_95 = 1.959963984540054


def ratio(count: int, of: int) -> dict[str, float | int | None]:
    """A share as the API and the page show it: the count, what it is out of, and the rate
    (None when there is nothing to divide by, which is different from 0)."""
    return {"count": count, "of": of, "rate": round(count / of, 6) if of else None}


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float] | None:
    """The Wilson score interval for a binomial share; None without observations.

    Unlike the textbook p ± z·sqrt(p(1-p)/n) it stays inside [0, 1] and does not collapse to a
    zero-width interval when no sample (or every sample) was rejected, which is exactly the case
    of a good gate audited with a small sample.
    """
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n, got {successes} of {n}")
    p = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    # At 0 and n the bounds are exactly 0 and 1; rounding must not push them past the share.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high
