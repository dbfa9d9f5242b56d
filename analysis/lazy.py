"""Names a package re-exports, imported on first use, so that importing the package stays
cheap (``import analysis`` imports no pandas; the build reads ``analysis.paper.sections.READS``
without the analysis stack)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(
    namespace: dict[str, Any], homes: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the module whose globals are ``namespace``:
    each name of ``homes`` is imported from the module ``homes`` names on first use, then
    kept in ``namespace``.

    Examples
    --------
    >>> namespace = {"__name__": "example"}
    >>> getattr_, dir_ = lazy_exports(namespace, {"sqrt": "math"})
    >>> getattr_("sqrt")(9.0), "sqrt" in namespace, dir_()
    (3.0, True, ['__name__', 'sqrt'])
    """

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *homes})

    return __getattr__, __dir__
