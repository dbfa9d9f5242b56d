"""Rounding once, half-up, from exact counts; the release's JavaScript print styles."""

from fractions import Fraction

import published
import pytest

from analysis.corpus.formatting import (
    count_text,
    js_fixed,
    percent,
    percent_text,
    points_text,
    rate_text,
    rounded,
    weighted_miss_rate,
    weighted_miss_text,
)


def test_half_up_from_exact_fractions():
    assert str(rounded(Fraction(1, 8), 2)) == "0.13"  # 0.125: half-up, not half-even
    for k, n, rate in (published.OVER_REFUSAL, published.UNDER_REFUSAL):
        assert str(percent(k, n)) == f"{rate:.1f}"


@pytest.mark.parametrize(
    ("value", "digits", "printed"),
    [
        (1.005, 2, "1.00"),  # the double is 1.00499999999999989...
        (1.45, 1, "1.4"),  # 1.4499999999999999555...
        (12.55, 1, "12.6"),  # 12.5500000000000007105...
        (0.5, 0, "1"),  # an exact tie goes up
        (2.5, 0, "3"),
        (0.0, 1, "0.0"),
    ],
)
def test_to_fixed_rounds_the_binary_double(value, digits, printed):
    assert js_fixed(value, digits) == printed


def test_print_styles():
    assert percent_text(477, 530) == "90.0%"  # accuracies keep the decimal
    assert rate_text(14, 56) == "25%"  # (14/56)*100 is exactly 25
    assert rate_text(1, 50) == "2%"
    assert rate_text(7, 50) == "14.0%"  # (7/50)*100 is 14.000000000000002
    assert count_text(7, 50, whole_bare=True) == "14.0% (7/50)"
    assert count_text(0, 50, whole_bare=True) == "0% (0/50)"
    assert count_text(61, 106) == "57.5% (61/106)"


def test_weighted_miss_is_rounded_to_four_decimals_first():
    # 34/271 = 0.125461...: rounded to 0.1255 first, then 12.55 prints as 12.6 (not 12.5)
    assert weighted_miss_rate(34, 271) == 0.1255
    assert weighted_miss_text(34, 271) == "12.6%"
    assert weighted_miss_text(0, 9) == "0.0%"


def test_differences_in_points_from_counts():
    assert points_text(405, 530, 310, 530) == "+17.9"  # gpt-5.4-nano, high minus off
    assert points_text(25, 56, 45, 56) == "-35.7"
