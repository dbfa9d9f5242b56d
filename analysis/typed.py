"""Typed reading of input files: a small schema per file, checked once, refused by name.

A schema is built from the shapes below (:class:`Str`, :class:`Int`, :class:`Obj`, ...).
:func:`check` walks a parsed document against it and refuses the first value of the wrong
type with one line naming the file, the JSON path and the expected type::

    data/scenarios/x.json: $.expected_behavior: expected an object, found a string 'proceed'

Objects are open (keys the schema does not name are left alone); a key the schema marks
optional may be absent, and a value may be null only where the schema says
(:class:`Nullable`). Lists of records can be required to name each record once
(``List(..., unique="id")``), and names that become paths (scenario ids, variants) can be
required to be one plain path component (:class:`Name`). Every value quoted in a refusal is
cut to :data:`SHOWN` characters with its length shown (:func:`shown`). Standard library
only, so the import can use it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.files import ErrorType, InputFileError, read_json

#: The most characters of one value a refusal quotes.
SHOWN = 80


def shown(value: object, limit: int = SHOWN) -> str:
    """``repr(value)``, at most ``limit`` characters: a longer one is cut, its length said
    (``'aaaa… (1000000 characters)``)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    size = len(value) if isinstance(value, str) else len(text)
    suffix = f"… ({size} characters)"
    return text[: max(limit - len(suffix), 1)] + suffix


def cut(text: object, limit: int = SHOWN) -> str:
    """``str(text)``, at most ``limit`` characters: a longer one is cut, its length said."""
    text = str(text)
    if len(text) <= limit:
        return text
    suffix = f"… ({len(text)} characters)"
    return text[: max(limit - len(suffix), 1)] + suffix


#: The most characters of one line of a refusal (:func:`bounded`).
LINE_LIMIT = 400
#: The most lines of one refusal.
LINES_LIMIT = 40


def bounded(message: str) -> str:
    """``message`` as a person can read it: each line cut to :data:`LINE_LIMIT` characters
    (its length said), at most :data:`LINES_LIMIT` lines (the number left out said)."""
    lines = [cut(line, LINE_LIMIT) for line in str(message).splitlines() or [""]]
    if len(lines) > LINES_LIMIT:
        lines = [*lines[: LINES_LIMIT - 1], f"  ... and {len(lines) - LINES_LIMIT + 1} more lines"]
    return "\n".join(lines)


def error_text(error: BaseException) -> str:
    """What went wrong, in one bounded message: an OS error names its file (a copy that failed
    on many files, the first one and how many others), anything else says its message."""
    problems = error.args[0] if error.args else None
    if isinstance(error, OSError) and isinstance(problems, list) and problems:
        first = problems[0]
        where, why = (first[0], first[-1]) if isinstance(first, tuple) else (first, "")
        others = len(problems) - 1
        more = f" (and {others} other file{'s' if others != 1 else ''})" if others else ""
        return bounded(f"{where}: {why}{more}")
    if isinstance(error, OSError) and error.filename is not None:
        reason = error.strerror or str(error)
        return bounded(f"{error.filename}: {reason}")
    return bounded(str(error).strip() or type(error).__name__)


def _key_path(path: str, key: str) -> str:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        return f"{path}.{key}"
    return f"{path}[{shown(key, 40)}]"


_KINDS = {
    str: "a string",
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    list: "a list",
    dict: "an object",
    type(None): "null",
}


def describe(value: object) -> str:
    """What a JSON value is, for a refusal: ``a string 'proceed'``, ``null``, ``a list``."""
    kind = _KINDS.get(type(value), type(value).__name__)
    if isinstance(value, (list, dict)):
        return f"{kind} of {len(value)}"
    if value is None:
        return kind
    return f"{kind} {shown(value)}"


class Mismatch(ValueError):
    """A value at ``path`` is not what the schema expects (``message`` says what)."""

    def __init__(self, path: str, message: str) -> None:
        self.path, self.message = path, message
        super().__init__(f"{path}: {message}")


class Shape:
    """One node of a schema."""

    #: What a value of this shape is, for a refusal.
    expected = "a value"

    def check(self, value: Any, path: str) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def refuse(self, value: Any, path: str) -> Mismatch:
        return Mismatch(path, f"expected {self.expected}, found {describe(value)}")


@dataclass(frozen=True)
class Str(Shape):
    """A string; ``nonempty`` refuses ``""``."""

    nonempty: bool = False

    @property
    def expected(self) -> str:
        return "a non-empty string" if self.nonempty else "a string"

    def check(self, value: Any, path: str) -> None:
        if not isinstance(value, str) or (self.nonempty and not value):
            raise self.refuse(value, path)


@dataclass(frozen=True)
class Name(Shape):
    """A name the project uses as one path component: a non-empty string that is not ``.``
    or ``..`` and holds no ``/``, ``\\`` or NUL, so a path made from it stays in its folder."""

    expected = "a plain name (no '/', '\\', NUL, '.' or '..')"

    def check(self, value: Any, path: str) -> None:
        if not is_plain_name(value):
            raise self.refuse(value, path)


def is_plain_name(value: object) -> bool:
    """Whether ``value`` is a string usable as one path component inside its folder."""
    return (
        isinstance(value, str)
        and value not in ("", ".", "..")
        and not any(c in value for c in "/\\\x00")
    )


@dataclass(frozen=True)
class Int(Shape):
    """An integer (not a boolean, not ``5.0``), at least ``minimum``."""

    minimum: int | None = None

    @property
    def expected(self) -> str:
        return "an integer" if self.minimum is None else f"an integer >= {self.minimum}"

    def check(self, value: Any, path: str) -> None:
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.refuse(value, path)
        if self.minimum is not None and value < self.minimum:
            raise self.refuse(value, path)


@dataclass(frozen=True)
class Num(Shape):
    """A finite number (an integer or a float, not a boolean)."""

    expected = "a number"

    def check(self, value: Any, path: str) -> None:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok or not math.isfinite(value):
            raise self.refuse(value, path)


@dataclass(frozen=True)
class Bool(Shape):
    """``true`` or ``false``."""

    expected = "a boolean"

    def check(self, value: Any, path: str) -> None:
        if not isinstance(value, bool):
            raise self.refuse(value, path)


@dataclass(frozen=True)
class Any_(Shape):
    """Any value (a field the project reads only to pass on)."""

    def check(self, value: Any, path: str) -> None:
        return None


@dataclass(frozen=True)
class Nullable(Shape):
    """``shape`` or null."""

    shape: Shape

    @property
    def expected(self) -> str:
        return f"{self.shape.expected} or null"

    def check(self, value: Any, path: str) -> None:
        if value is not None:
            try:
                self.shape.check(value, path)
            except Mismatch as error:
                if error.path != path:
                    raise
                raise self.refuse(value, path) from None


@dataclass(frozen=True)
class List(Shape):
    """A list of ``item``; with ``unique`` (a key of each item, or ``""`` for the items
    themselves) no two items may share it, and a repeat is refused naming it."""

    item: Shape
    unique: str | None = None

    expected = "a list"

    def check(self, value: Any, path: str) -> None:
        if not isinstance(value, list):
            raise self.refuse(value, path)
        seen: dict[Any, int] = {}
        for index, item in enumerate(value):
            self.item.check(item, f"{path}[{index}]")
            if self.unique is None:
                continue
            key = item if self.unique == "" else item.get(self.unique)
            if not isinstance(key, (str, int)):
                continue
            if key in seen:
                what = f".{self.unique}" if self.unique else ""
                raise Mismatch(
                    f"{path}[{index}]{what}",
                    f"{shown(key)} listed twice (also at {path}[{seen[key]}])",
                )
            seen[key] = index


@dataclass(frozen=True)
class Map(Shape):
    """An object of any keys, each value a ``value``; with ``keys``, each key a ``keys``."""

    value: Shape
    keys: Shape | None = None

    expected = "an object"

    def check(self, value: Any, path: str) -> None:
        if not isinstance(value, dict):
            raise self.refuse(value, path)
        for key, item in value.items():
            where = _key_path(path, key)
            if self.keys is not None:
                try:
                    self.keys.check(key, where)
                except Mismatch:
                    raise Mismatch(
                        where, f"key expected {self.keys.expected}, found {describe(key)}"
                    ) from None
            self.value.check(item, where)


@dataclass(frozen=True)
class Obj(Shape):
    """An object with the ``required`` keys and, where present, the ``optional`` ones, each
    of its shape (other keys are not looked at)."""

    required: Mapping[str, Shape] = field(default_factory=dict)
    optional: Mapping[str, Shape] = field(default_factory=dict)

    expected = "an object"

    def check(self, value: Any, path: str) -> None:
        if not isinstance(value, dict):
            raise self.refuse(value, path)
        for key, shape in self.required.items():
            if key not in value:
                raise Mismatch(path, f"missing key {key!r} ({shape.expected})")
            shape.check(value[key], _key_path(path, key))
        for key, shape in self.optional.items():
            if key in value:
                shape.check(value[key], _key_path(path, key))


def check(document: Any, schema: Shape, file: str | Path, *, error: ErrorType) -> Any:
    """``document`` (read from ``file``) if it fits ``schema``; else ``error`` with one line:
    ``<file>: <JSON path>: expected <type>, found <what>``."""
    try:
        schema.check(document, "$")
    except Mismatch as mismatch:
        raise error(f"{file}: {mismatch}") from None
    return document


def read_typed(path: str | Path, schema: Shape, *, error: ErrorType = InputFileError) -> Any:
    """The JSON document in ``path``, checked against ``schema`` (:func:`check`); a file that
    is missing, not JSON or repeats a key in one object raises ``error`` too."""
    return check(read_json(path, error=error), schema, path, error=error)


def inside(folder: Path, name: str, file: str | Path, what: str, *, error: ErrorType) -> Path:
    """``folder / name``, refused (naming ``file``, ``what`` and the name) unless ``name`` is
    one plain path component and the path, links followed, stays inside ``folder``."""
    if not is_plain_name(name):
        raise error(f"{file}: {what} {shown(name)} is not a plain name inside {folder}")
    path = folder / name
    if path.exists() and not path.resolve().is_relative_to(folder.resolve()):
        raise error(f"{file}: {what} {shown(name)} leads outside {folder} (to {path.resolve()})")
    return path


def is_relative_inside(name: str) -> bool:
    """Whether ``name`` is a relative path (several parts allowed) that cannot climb out of
    the folder it is joined to: not absolute, no ``..`` part, no backslash or NUL."""
    parts = Path(name).parts
    return (
        bool(name)
        and not name.startswith("/")
        and ".." not in parts
        and not any(c in name for c in "\\\x00")
    )


def within(folder: Path, name: str) -> bool:
    """Whether the relative path ``name`` stays inside ``folder``, links followed."""
    if not is_relative_inside(name):
        return False
    return (folder / name).resolve().is_relative_to(folder.resolve())
