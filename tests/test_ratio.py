"""``Ratio(k, n)``: the exact rate, its text and its Wilson interval, on hand-worked counts."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from analysis.scoring.ratio import Ratio


def test_rate_is_the_exact_fraction() -> None:
    assert Ratio(61, 106).rate == Fraction(61, 106)
    assert Ratio(np.int64(3), np.int64(4)) == Ratio(3, 4)  # numpy counts become plain ints


def test_text_rounds_once_half_up() -> None:
    # 61/106 = 57.547...% -> "57.5%"; 1/8 = 12.5% exactly; 1/16 = 6.25% -> half up -> "6.3%"
    # (a binary double of 6.25 printed with round-half-even would give "6.2%").
    assert Ratio(61, 106).text() == "57.5%"
    assert Ratio(1, 8).text() == "12.5%"
    assert Ratio(1, 16).text() == "6.3%"
    assert Ratio(0, 5).text() == "0.0%"


def test_interval_is_wilson() -> None:
    # Wilson 95% for 8 of 10, by hand: z = 1.959964, p = 0.8, centre = (p + z^2/2n) / (1 + z^2/n)
    z = 1.959963984540054
    p, n = 0.8, 10
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low, high = Ratio(8, 10).interval()
    assert (low, high) == pytest.approx((centre - half, centre + half), abs=1e-12)


def test_interval_never_crosses_the_rate() -> None:
    low, high = Ratio(7, 7).interval()
    assert low < 1 <= high  # the bound computes as 0.9999999999999999, clipped to the rate
    low, high = Ratio(0, 7).interval()
    assert low <= 0 < high


def test_pooling_adds_counts() -> None:
    assert Ratio(1, 4) + Ratio(2, 3) == Ratio(3, 7)


@pytest.mark.parametrize(("k", "n"), [(5, 4), (-1, 3), (1.5, 3)])
def test_counts_outside_0_to_n_are_refused(k, n) -> None:
    with pytest.raises(ValueError, match="0 <= k <= n"):
        Ratio(k, n)


def test_an_empty_denominator_has_no_rate() -> None:
    empty = Ratio(0, 0)
    with pytest.raises(ZeroDivisionError, match="empty denominator"):
        empty.rate  # noqa: B018
    with pytest.raises(ZeroDivisionError, match="empty denominator"):
        empty.interval()
