"""Rounding once, half-up, from exact counts; the release's two print styles."""

from fractions import Fraction

from analysis.formatting import count_text, percent, percent_text, points_text, rate_text, rounded


def test_half_up_from_exact_fractions():
    assert str(rounded(Fraction(1, 8), 2)) == "0.13"  # 0.125: half-up, not half-even
    assert str(percent(471, 1677)) == "28.1"
    assert str(percent(15, 1500)) == "1.0"


def test_print_styles():
    assert percent_text(477, 530) == "90.0%"  # accuracies keep the decimal
    assert rate_text(14, 56) == "25%"  # rates print whole numbers bare
    assert count_text(0, 50, whole_bare=True) == "0% (0/50)"
    assert count_text(61, 106) == "57.5% (61/106)"


def test_differences_in_points_from_counts():
    assert points_text(405, 530, 310, 530) == "+17.9"  # gpt-5.4-nano, high minus off
    assert points_text(25, 56, 45, 56) == "-35.7"
