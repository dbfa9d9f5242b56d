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

from analysis.files.reading import ErrorType, InputFileError, check_once, read_json

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


def _segment(key: str) -> str:
    """One step of a JSON path into an object: ``.key``, or ``['odd key']``."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        return f".{key}"
    return f"[{shown(key, 40)}]"


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


#: Where a refusal names the list a repeated record is in (filled in once the path is known).
_AT = "\x00at\x00"


class Mismatch(ValueError):
    """A value is not what the schema expects (``message`` says what). ``parts`` is the JSON
    path from the value checked down to it, filled in on the way out (paths are built only
    for a refusal); ``anchor`` counts the last parts after the list a repeat is in."""

    def __init__(self, message: str, parts: list[str] | None = None, anchor: int = 0) -> None:
        self.message, self.parts, self.anchor = message, parts or [], anchor
        super().__init__(message)

    def within(self, segment: str) -> Mismatch:
        """This refusal, one step further from the document's root."""
        self.parts.insert(0, segment)
        return self

    @property
    def path(self) -> str:
        return "$" + "".join(self.parts)

    def __str__(self) -> str:
        listed = "$" + "".join(self.parts[: len(self.parts) - self.anchor])
        return f"{self.path}: {self.message.replace(_AT, listed)}"


class Shape:
    """One node of a schema."""

    #: What a value of this shape is, for a refusal.
    expected = "a value"
    #: Exact types whose every value fits (checked without a call: a verdict file holds
    #: some 120,000 trials).
    fast: frozenset[type] = frozenset()

    def check(self, value: Any) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def all_fit(self, values: list) -> bool:
        """Whether each of ``values`` fits, found in one pass over a column of them (never
        True where :meth:`check` would refuse one); False sends the caller to :meth:`check`,
        which says which value is wrong and where."""
        if self.fast and set(map(type, values)) <= self.fast:
            return True
        try:
            for value in values:
                self.check(value)
        except Mismatch:
            return False
        return True

    def refuse(self, value: Any) -> Mismatch:
        return Mismatch(f"expected {self.expected}, found {describe(value)}")


@dataclass(frozen=True)
class Str(Shape):
    """A string; ``nonempty`` refuses ``""``."""

    nonempty: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "fast", frozenset() if self.nonempty else frozenset({str}))

    @property
    def expected(self) -> str:
        return "a non-empty string" if self.nonempty else "a string"

    def check(self, value: Any) -> None:
        if not isinstance(value, str) or (self.nonempty and not value):
            raise self.refuse(value)


@dataclass(frozen=True)
class Name(Shape):
    """A name the project uses as one path component: a non-empty string that is not ``.``
    or ``..`` and holds no ``/``, ``\\`` or NUL, so a path made from it stays in its folder."""

    expected = "a plain name (no '/', '\\', NUL, '.' or '..')"

    def check(self, value: Any) -> None:
        if not is_plain_name(value):
            raise self.refuse(value)


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

    def check(self, value: Any) -> None:
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.refuse(value)
        if self.minimum is not None and value < self.minimum:
            raise self.refuse(value)

    def all_fit(self, values: list) -> bool:
        if not set(map(type, values)) <= {int}:  # a boolean's type is bool, not int
            return False
        return self.minimum is None or not values or min(values) >= self.minimum


@dataclass(frozen=True)
class Num(Shape):
    """A finite number (an integer or a float, not a boolean)."""

    expected = "a number"

    def check(self, value: Any) -> None:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok or not math.isfinite(value):
            raise self.refuse(value)


@dataclass(frozen=True)
class Bool(Shape):
    """``true`` or ``false``."""

    expected = "a boolean"
    fast = frozenset({bool})

    def check(self, value: Any) -> None:
        if not isinstance(value, bool):
            raise self.refuse(value)


@dataclass(frozen=True)
class Any_(Shape):
    """Any value (a field the project reads only to pass on, or checks itself)."""

    def check(self, value: Any) -> None:
        return None


@dataclass(frozen=True)
class Nullable(Shape):
    """``shape`` or null."""

    shape: Shape

    def __post_init__(self) -> None:
        object.__setattr__(self, "fast", self.shape.fast | {type(None)})

    @property
    def expected(self) -> str:
        return f"{self.shape.expected} or null"

    def check(self, value: Any) -> None:
        if value is None:
            return
        try:
            self.shape.check(value)
        except Mismatch as error:
            if error.parts:  # a value inside this one
                raise
            raise self.refuse(value) from None

    def all_fit(self, values: list) -> bool:
        return self.shape.all_fit([value for value in values if value is not None])


@dataclass(frozen=True)
class List(Shape):
    """A list of ``item``; with ``unique`` (a key of each item, several keys as a tuple, or
    ``""`` for the items themselves) no two items may share it, and a repeat is refused
    naming it."""

    item: Shape
    unique: str | tuple[str, ...] | None = None

    expected = "a list"

    def __post_init__(self) -> None:
        if isinstance(self.item, Any_) and self.unique is None:  # any list fits
            object.__setattr__(self, "fast", frozenset({list}))

    def check(self, value: Any) -> None:
        if not isinstance(value, list):
            raise self.refuse(value)
        item = self.item
        if not isinstance(item, Any_):  # any item fits: a verdict file's 500,000 trials
            for index, entry in enumerate(value):
                try:
                    item.check(entry)
                except Mismatch as error:
                    raise error.within(f"[{index}]") from None
        if self.unique is not None:
            self._check_unique(value)

    def _check_unique(self, value: list) -> None:
        seen: dict[Any, int] = {}
        for index, entry in enumerate(value):
            key = self._key(entry)
            if key is None:
                continue
            if key in seen:
                parts = [f"[{index}]"]
                if isinstance(self.unique, str) and self.unique:
                    parts.append(_segment(self.unique))
                named = (
                    ", ".join(f"{k} {shown(v)}" for k, v in zip(self.unique, key, strict=True))
                    if isinstance(self.unique, tuple)
                    else shown(key)
                )
                message = f"{named} listed twice (also at {_AT}[{seen[key]}])"
                raise Mismatch(message, parts, anchor=len(parts))
            seen[key] = index

    def _key(self, entry: Any) -> Any:
        """What ``entry`` must not share with another (None: nothing to compare)."""
        if self.unique == "":
            key = entry
        elif isinstance(self.unique, tuple):
            key = tuple(entry.get(k) for k in self.unique)
            return key if all(isinstance(k, (str, int)) for k in key) else None
        else:
            key = entry.get(self.unique)
        return key if isinstance(key, (str, int)) else None


@dataclass(frozen=True)
class Map(Shape):
    """An object of any keys, each value a ``value``; with ``keys``, each key a ``keys``."""

    value: Shape
    keys: Shape | None = None

    expected = "an object"

    def __post_init__(self) -> None:
        if isinstance(self.value, Any_) and self.keys is None:  # any object fits
            object.__setattr__(self, "fast", frozenset({dict}))

    def check(self, value: Any) -> None:
        if not isinstance(value, dict):
            raise self.refuse(value)
        keys, shape = self.keys, self.value
        for key, item in value.items():
            if keys is not None:
                try:
                    keys.check(key)
                except Mismatch:
                    message = f"key expected {keys.expected}, found {describe(key)}"
                    raise Mismatch(message, [_segment(key)]) from None
            try:
                shape.check(item)
            except Mismatch as error:
                raise error.within(_segment(key)) from None


@dataclass(frozen=True)
class Obj(Shape):
    """An object with the ``required`` keys and, where present, the ``optional`` ones, each
    of its shape (other keys are not looked at)."""

    required: Mapping[str, Shape] = field(default_factory=dict)
    optional: Mapping[str, Shape] = field(default_factory=dict)

    expected = "an object"

    def check(self, value: Any) -> None:
        if not isinstance(value, dict):
            raise self.refuse(value)
        for key, shape in self.required.items():
            if key not in value:
                raise Mismatch(f"missing key {key!r} ({shape.expected})")
            item = value[key]
            if type(item) not in shape.fast:
                self._field(shape, item, key)
        for key, shape in self.optional.items():
            if key in value:
                item = value[key]
                if type(item) not in shape.fast:
                    self._field(shape, item, key)

    @staticmethod
    def _field(shape: Shape, value: Any, key: str) -> None:
        try:
            shape.check(value)
        except Mismatch as error:
            raise error.within(_segment(key)) from None


def check(document: Any, schema: Shape, file: str | Path, *, error: ErrorType) -> Any:
    """``document`` (read from ``file``) if it fits ``schema``; else ``error`` with one line:
    ``<file>: <JSON path>: expected <type>, found <what>``."""
    try:
        schema.check(document)
    except Mismatch as mismatch:
        raise error(f"{file}: {mismatch}") from None
    return document


def read_typed(path: str | Path, schema: Shape, *, error: ErrorType = InputFileError) -> Any:
    """The JSON document in ``path``, checked against ``schema`` (:func:`check`); a file that
    is missing, not JSON or repeats a key in one object raises ``error`` too."""
    document = read_json(path, error=error)
    check_once(document, schema, lambda: check(document, schema, path, error=error))
    return document


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
