"""The Wilson interval: known values and the properties the estimate relies on."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewqueue.insight.stats import ratio, wilson_interval


# Worked out with the other common form of the interval,
# (2np + z^2 -/+ z * sqrt(z^2 + 4np(1 - p))) / (2(n + z^2)); with no success the upper bound
# is z^2 / (n + z^2).
@pytest.mark.parametrize("successes, n, low, high", [
    (1, 2, 0.094531, 0.905469),
    (0, 10, 0.0, 0.277533),
    (10, 10, 0.722467, 1.0),
    (5, 100, 0.021544, 0.111750),
])
def test_known_wilson_intervals(successes: int, n: int, low: float, high: float) -> None:
    interval = wilson_interval(successes, n)
    assert interval is not None
    assert interval[0] == pytest.approx(low, abs=1e-6)
    assert interval[1] == pytest.approx(high, abs=1e-6)


def test_no_samples_give_no_interval() -> None:
    assert wilson_interval(0, 0) is None


def test_more_successes_than_samples_is_an_error() -> None:
    with pytest.raises(ValueError, match="between 0 and n"):
        wilson_interval(3, 2)


@given(st.integers(min_value=1, max_value=100_000).flatmap(
    lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))))
def test_the_interval_holds_the_observed_share_and_stays_in_0_1(case: tuple[int, int]) -> None:
    successes, n = case
    interval = wilson_interval(successes, n)
    assert interval is not None
    low, high = interval
    assert 0.0 <= low <= successes / n <= high <= 1.0
    assert high - low > 0


def test_a_ratio_without_a_denominator_has_no_rate() -> None:
    assert ratio(0, 0) == {"count": 0, "of": 0, "rate": None}
    assert ratio(1, 3) == {"count": 1, "of": 3, "rate": 0.333333}
