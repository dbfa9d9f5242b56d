"""Rounding and printing numbers from raw counts, once.

Every percentage the project prints goes through :func:`percent`: the exact fraction of two
integers rounded half-up at the last printed digit, never a value derived from an
already-rounded number. The release prints accuracies with one decimal always (``"90.0%"``)
and directional rates with whole numbers bare (``"25%"``); both styles are here.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction


def rounded(value: Fraction | float | int, digits: int = 1) -> Decimal:
    """``value`` rounded half-up to ``digits`` decimals, exactly (no binary error)."""
    exact = Fraction(value) if not isinstance(value, int) else Fraction(int(value))
    quantum = Decimal(1).scaleb(-digits)
    numerator = Decimal(int(exact.numerator)) / Decimal(int(exact.denominator))
    return numerator.quantize(quantum, rounding=ROUND_HALF_UP)


def percent(k: int, n: int, digits: int = 1) -> Decimal:
    """100 * k / n, rounded once to ``digits`` decimals."""
    if n <= 0:
        raise ValueError(f"percentage of an empty denominator ({k}/{n})")
    return rounded(Fraction(100 * k, n), digits)


def format_percent(value: Fraction | float | int) -> str:
    """A percentage with one decimal, as the release prints accuracies: ``"84.0%"``."""
    return f"{rounded(Fraction(value))}%"


def percent_text(k: int, n: int) -> str:
    """``"57.5%"`` for 61/106, ``"90.0%"`` for 477/530."""
    return f"{percent(k, n)}%"


def rate_text(k: int, n: int) -> str:
    """A directional rate as the release prints it: whole numbers bare, ``"25%"``, ``"0%"``."""
    text = f"{percent(k, n)}"
    return (text.removesuffix(".0")) + "%"


def count_text(k: int, n: int, whole_bare: bool = False) -> str:
    """``"57.5% (61/106)"``: a percentage with its counts; ``whole_bare`` as :func:`rate_text`."""
    return f"{(rate_text if whole_bare else percent_text)(k, n)} ({k}/{n})"


def points_text(k1: int, n1: int, k0: int, n0: int) -> str:
    """``k1/n1 - k0/n0`` in percentage points, signed, rounded once from the exact fractions."""
    difference = rounded(100 * (Fraction(int(k1), int(n1)) - Fraction(int(k0), int(n0))))
    return f"{difference:+}"
