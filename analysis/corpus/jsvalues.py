"""JSON values as upstream's renderer (JavaScript) reads them: text, truth and absence.

Upstream renders a scenario's user message with JavaScript template strings and ``||``
fallbacks, so a value's rendering follows JavaScript's rules, not Python's: an absent field
reads ``undefined``, ``null`` reads ``null``, ``1.0`` reads ``1`` and ``1e-7`` reads
``1e-7``; ``""``, ``0``, ``false``, ``null`` and an absent field are false, every list and
object true. A list or object where text is expected (JavaScript would print
``[object Object]``) is refused by the renderer, so these helpers take scalars only.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Final


class _Missing:
    """An absent field (JavaScript's ``undefined``)."""

    def __repr__(self) -> str:
        return "MISSING"


#: The value of a field the document does not have.
MISSING: Final = _Missing()

#: JavaScript prints a number in positional notation while its decimal exponent is in
#: (MIN_POSITIONAL, MAX_POSITIONAL] (ECMAScript Number::toString), else as d.ddde±n.
MIN_POSITIONAL: Final = -6
MAX_POSITIONAL: Final = 21


def get(document: Any, *keys: str) -> Any:
    """``document.a?.b``: the value at ``keys``, MISSING where a step has none."""
    value = document
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return MISSING
        value = value[key]
    return value


def js_number(value: float) -> str:
    """A finite number as JavaScript prints it (``String(x)``)."""
    number = float(value)
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    digits_tuple, exponent = Decimal(repr(abs(number))).normalize().as_tuple()[1:]
    digits = "".join(map(str, digits_tuple))
    k = len(digits)
    n = k + int(exponent)  # value = 0.digits x 10^n
    if k <= n <= MAX_POSITIONAL:
        text = digits + "0" * (n - k)
    elif 0 < n <= MAX_POSITIONAL:
        text = f"{digits[:n]}.{digits[n:]}"
    elif MIN_POSITIONAL < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        power = n - 1
        mantissa = digits if k == 1 else f"{digits[0]}.{digits[1:]}"
        text = f"{mantissa}e{'+' if power >= 0 else '-'}{abs(power)}"
    return sign + text


def js_text(value: Any) -> str:
    """A scalar as a JavaScript template string prints it."""
    if value is MISSING:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, str):
        return value
    raise TypeError(f"not a scalar: {type(value).__name__}")


def js_truthy(value: Any) -> bool:
    """Whether JavaScript counts ``value`` as true (every list and object does)."""
    if value is MISSING or value is None:
        return False
    if isinstance(value, list | dict):
        return True
    if isinstance(value, float) and math.isnan(value):
        return False
    return bool(value)


def js_or(*values: Any) -> Any:
    """``a || b || ...``: the first true value, else the last."""
    for value in values[:-1]:
        if js_truthy(value):
            return value
    return values[-1]


def js_less(value: Any, bound: float) -> bool:
    """``value < bound`` for a number, boolean, null or absent value (JavaScript coerces
    null and false to 0, true to 1, and an absent value to NaN, never less)."""
    if value is MISSING:
        return False
    if value is None:
        return bound > 0  # null reads as 0
    return float(value) < bound
