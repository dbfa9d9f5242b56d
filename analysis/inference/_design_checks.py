"""The checks every design quantity applies to its arguments, and the level and power it is
stated at unless told otherwise (shared by :mod:`.detectable` and :mod:`.detectable_mcnemar`)."""

from __future__ import annotations

import numpy as np

#: The level and power a detectable difference is stated at unless told otherwise.
ALPHA = 0.05
POWER = 0.8


def _check(
    name: str, value, low: float, high: float, *, closed_low: bool = False, closed_high=False
) -> float:
    """``value`` as a float inside (low, high) (closed at either end when told), or one
    ValueError naming ``name``."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, not {value!r}") from None
    above = low <= number if closed_low else low < number
    below = number <= high if closed_high else number < high
    if not (above and below):
        brackets = ("[" if closed_low else "(") + f"{low}, {high}" + ("]" if closed_high else ")")
        raise ValueError(f"{name} must lie in {brackets}, not {value!r}")
    return number


def _check_counts(n_scenarios, trials_per_cell: int | None = None) -> np.ndarray:
    """The scenario counts as an int array (each at least 2: a test needs two scenarios),
    and the trials per cell at least 1; else one ValueError naming the argument."""
    n = np.asarray(n_scenarios)
    if n.size == 0 or not np.issubdtype(n.dtype, np.number) or np.any(n != np.round(n)):
        raise ValueError(f"n_scenarios must be whole numbers, not {n_scenarios!r}")
    if np.any(n < 2):
        raise ValueError(f"n_scenarios must be at least 2 (a test needs two), not {n_scenarios!r}")
    if trials_per_cell is not None and (
        not float(trials_per_cell).is_integer() or int(trials_per_cell) < 1
    ):
        raise ValueError(f"trials_per_cell must be a whole number >= 1, not {trials_per_cell!r}")
    return n.astype("int64")
