"""Rounding and printing numbers from raw counts, once.

Two kinds of text come out of this module:

- the project's own values (:func:`percent`, :func:`points_text`): the exact fraction of two
  integers rounded half-up at the last printed digit, never a value derived from an
  already-rounded number;
- the release's strings (:func:`percent_text`, :func:`rate_text`, :func:`count_text`,
  :func:`weighted_miss_text`), printed as the release's JavaScript tooling prints them:
  ``Number.prototype.toFixed`` on the binary double, which rounds the double's exact decimal
  value half-up (:func:`js_fixed`). Accuracies always carry one decimal (``"90.0%"``);
  directional rates drop the ".0" only when ``(k / n) * 100`` is an integer in double
  arithmetic, so 1/50 prints ``"2%"`` but 7/50 (``14.000000000000002``) prints ``"14.0%"``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
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


#: The largest denominator :func:`exact_fraction` looks for.
MAX_DENOMINATOR = 10**7
#: How near a rounding tie (in units of the last printed digit) a double must be for
#: :func:`fraction_texts` to round it from its exact fraction.
TIE_WINDOW = 1e-6


def exact_fraction(value: float) -> Fraction:
    """The fraction of two counts that the double ``value`` was computed as: the nearest
    fraction whose denominator is at most :data:`MAX_DENOMINATOR`. A ratio of such counts
    comes back exactly (two of them lie at least 1e-14 apart, its double within 1e-16 of
    it); any other value moves by less than 1e-14.

    >>> exact_fraction(51 / 80), exact_fraction(0.1 + 0.2)
    (Fraction(51, 80), Fraction(3, 10))
    """
    return _exact_fraction(float(value))


@functools.lru_cache(maxsize=1 << 16)  # a release's rates repeat across its tables
def _exact_fraction(value: float) -> Fraction:
    return Fraction(value).limit_denominator(MAX_DENOMINATOR)


def fraction_texts(values: Iterable[float], digits: int, scale: int = 1) -> list[str]:
    """Each of ``values`` times ``scale`` to ``digits`` decimals, rounded half-up from its
    exact fraction (:func:`exact_fraction`), as :func:`percent` rounds counts; a missing
    value is a dash. A double's own rounding differs only at a tie, so only a value within
    :data:`TIE_WINDOW` of one takes the exact route.

    >>> fraction_texts([13 / 16, 51 / 80, 1 / 3, float("nan")], 1, scale=100)
    ['81.3', '63.8', '33.3', '–']
    """
    texts = []
    for value in values:
        if value is None or value != value:
            texts.append("–")
            continue
        scaled = float(value) * scale * 10**digits
        if abs(abs(scaled) % 1 - 0.5) < TIE_WINDOW:
            texts.append(f"{rounded(scale * exact_fraction(value), digits)}")
        else:
            texts.append(f"{float(value) * scale:.{digits}f}")
    return texts


def format_percent(value: Fraction | float | int) -> str:
    """A percentage with one decimal, rounded half-up from the exact value: ``"84.0%"``."""
    return f"{rounded(Fraction(value))}%"


# --------------------------------------------------------------------------------------------
# The release's strings (JavaScript number formatting)
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1 << 16)  # a release prints the same rates many times
def js_fixed(value: float, digits: int) -> str:
    """``value.toFixed(digits)`` as JavaScript prints it (for |value| < 1e21).

    ``toFixed`` picks the integer n nearest to ``value * 10**digits`` computed exactly from the
    double, the larger on a tie: the exact binary value rounded half-up, so ``(1.005).toFixed(2)``
    is ``"1.00"`` (the double is just below 1.005) and ``(12.55).toFixed(1)`` is ``"12.6"``.
    """
    exact = Decimal(float(value))
    quantum = Decimal(1).scaleb(-digits)
    sign = "-" if exact < 0 else ""
    text = f"{abs(exact).quantize(quantum, rounding=ROUND_HALF_UP):f}"
    return sign + text if float(text) != 0 else text


def js_percent(k: int, n: int) -> float:
    """``(k / n) * 100`` in double arithmetic, as the release's tooling computes it."""
    if n <= 0:
        raise ValueError(f"percentage of an empty denominator ({k}/{n})")
    return (int(k) / int(n)) * 100


def percent_text(k: int, n: int) -> str:
    """An accuracy as the release prints it: ``"57.5%"`` for 61/106, ``"90.0%"`` for 477/530."""
    return f"{js_fixed(js_percent(k, n), 1)}%"


def rate_text(k: int, n: int) -> str:
    """A directional rate as the release prints it: bare when ``(k / n) * 100`` is an integer
    double (``"2%"`` for 1/50, ``"25%"`` for 14/56), else one decimal (``"14.0%"`` for 7/50)."""
    value = js_percent(k, n)
    return f"{int(value)}%" if value.is_integer() else f"{js_fixed(value, 1)}%"


def count_text(k: int, n: int, whole_bare: bool = False) -> str:
    """``"57.5% (61/106)"``: a percentage with its counts; ``whole_bare`` as :func:`rate_text`."""
    return f"{(rate_text if whole_bare else percent_text)(k, n)} ({k}/{n})"


def interval_bound_text(fraction: float) -> str:
    """One bound of a printed interval: ``(fraction * 100).toFixed(1) + "%"``; a bound that
    rounds to zero prints unsigned (:func:`unsigned_zero`)."""
    return f"{js_fixed(float(fraction) * 100, 1)}%"


#: A printed zero with a minus sign: "-0.0%", "-0%" (not "-0.05%").
_NEGATIVE_ZERO = re.compile(r"-(?=0(?:\.0*)?%)")


def unsigned_zero(text: str) -> str:
    """A published string with each negative zero written as zero: ``"[-0.0%, 3.5%]"`` is
    ``"[0.0%, 3.5%]"``. ``toFixed`` writes "-0.0" for a negative double that rounds to zero,
    and the lower Wilson bound at 0 successes computes as 0 or as -1e-17 depending on the
    order of the arithmetic, so the release's tooling may print either for the same bound.

    >>> unsigned_zero("[-0.0%, 3.5%]"), unsigned_zero("-0.05%")
    ('[0.0%, 3.5%]', '-0.05%')
    """
    return _NEGATIVE_ZERO.sub("", text)


def weighted_miss_rate(missed: int, scored: int) -> float:
    """The release's weighted-miss rate: ``missed / scored`` rounded to 4 decimals
    (``Number(x.toFixed(4))``)."""
    if scored <= 0:
        raise ValueError(f"weighted miss over an empty weight ({missed}/{scored})")
    return float(js_fixed(int(missed) / int(scored), 4))


def weighted_miss_text(missed: int, scored: int) -> str:
    """The release's weighted miss: the 4-decimal rate times 100, to one decimal:
    ``"12.6%"`` for 34/271 (rate 0.1255)."""
    return f"{js_fixed(weighted_miss_rate(missed, scored) * 100, 1)}%"


def points_text(k1: int, n1: int, k0: int, n0: int) -> str:
    """``k1/n1 - k0/n0`` in percentage points, signed, rounded once from the exact fractions."""
    difference = rounded(100 * (Fraction(int(k1), int(n1)) - Fraction(int(k0), int(n0))))
    return f"{difference:+}"
