"""One fraction of two counts: ``Ratio(k, n)``, k of n, with its exact rate, text and interval.

Every count pair the paper reports (modal-correct of scored cells, over-refusals of proceed
opportunities, ...) is a ``Ratio``; the rate, its printed percentage and its Wilson interval
are computed here from the integers, never from a rounded value.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from analysis.corpus.formatting import format_percent
from analysis.scoring.intervals import wilson_interval


@dataclass(frozen=True)
class Ratio:
    """``k`` of ``n``: integer counts with ``0 <= k <= n``.

    >>> Ratio(61, 106).text()
    '57.5%'
    >>> Ratio(1, 4).rate
    Fraction(1, 4)
    """

    k: int
    n: int

    def __post_init__(self) -> None:
        k, n = int(self.k), int(self.n)
        if k != self.k or n != self.n or not 0 <= k <= n:
            raise ValueError(f"a ratio needs integer counts 0 <= k <= n, not {self.k}/{self.n}")
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "n", n)

    @property
    def rate(self) -> Fraction:
        """``k / n`` exactly; an empty denominator raises ``ZeroDivisionError``."""
        self._require_denominator()
        return Fraction(self.k, self.n)

    def _require_denominator(self) -> None:
        if self.n == 0:
            raise ZeroDivisionError(f"rate of an empty denominator ({self.k}/{self.n})")

    def text(self) -> str:
        """The rate as a percentage with one decimal, rounded once: ``"57.5%"``."""
        return format_percent(100 * self.rate)

    def interval(self) -> tuple[float, float]:
        """The Wilson score 95% interval of the rate, as fractions (lower, upper), each bound
        clipped to the rate (:func:`analysis.scoring.intervals.wilson_interval`)."""
        self._require_denominator()
        low, high = wilson_interval(self.k, self.n)
        return float(low), float(high)

    def __add__(self, other: Ratio) -> Ratio:
        """Pooled counts: ``Ratio(a, b) + Ratio(c, d) == Ratio(a + c, b + d)``."""
        if not isinstance(other, Ratio):
            return NotImplemented
        return Ratio(self.k + other.k, self.n + other.n)
