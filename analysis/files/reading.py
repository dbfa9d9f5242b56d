"""Reading input files: one UTF-8 text reader and one JSON reader, each naming the file on error.

Every failure is one line that starts with the file's path and says what is wrong with it:
``<path>: missing``, ``<path>: unreadable (<reason>)``, ``<path>: not UTF-8 text (byte 0x.. at
offset n)``, ``<path>: malformed JSON at line l, column c (char p): <reason>`` or
``<path>: key 'k' appears twice in one object`` (JSON parsers disagree on which one wins). Callers
choose the exception raised (``error``), so each module keeps its own error type. Inside
:func:`json_read_once`, a JSON file read twice is parsed once. This module imports only the
standard library, so the fast no-op check of ``make paper`` can use it.

A document is parsed with the cyclic garbage collector paused: parsing makes no reference
cycles, so the collections it would set off (a release's verdict file holds some 700,000
objects at 1,000 conditions) find nothing and only cost time, about a third of the parse.
"""

from __future__ import annotations

import contextlib
import gc
import json
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any


class InputFileError(ValueError):
    """An input file is missing, unreadable, not UTF-8 or not JSON; the message names it."""


ErrorType = Callable[[str], Exception]


def read_text(path: str | Path, *, error: ErrorType = InputFileError) -> str:
    """The UTF-8 text of ``path``; a missing, unreadable or undecodable file raises ``error``."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise error(f"{path}: missing") from None
    except OSError as exc:
        raise error(f"{path}: unreadable ({exc.strerror})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(
            f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None


#: The documents parsed inside :func:`json_read_once`, by path, size and modification time.
_parsed: ContextVar[dict[tuple[str, int, int], Any] | None] = ContextVar("parsed", default=None)
#: The (document, checker) pairs that passed inside :func:`json_read_once`, by their ids
#: (the pair kept, so that no id is reused while the block lasts).
_checked: ContextVar[dict[tuple[int, int], tuple[Any, object]] | None] = ContextVar(
    "checked", default=None
)


@contextlib.contextmanager
def json_read_once() -> Iterator[None]:
    """Within the block, :func:`read_json` parses each file once: reading a file again (same
    path, size and modification time) gives the document already parsed, which its readers
    must not change. A release's ``scenarios-detail.json`` is read by the trials loader and
    again by the cross-check of its cell records (about 0.8 s a parse at 120,000 trials)."""
    token, checked = _parsed.set({}), _checked.set({})
    try:
        yield
    finally:
        _checked.reset(checked)
        _parsed.reset(token)


def check_once(document: Any, checker: object, check: Callable[[], object]) -> None:
    """Call ``check`` (``checker``, a schema, meeting ``document`` as :func:`read_json` gave
    it) unless that pair passed already inside :func:`json_read_once`, and record it when it
    passes; outside the block, always call it."""
    checked = _checked.get()
    pair = (id(document), id(checker))
    if checked is not None and pair in checked:
        return
    check()
    if checked is not None:
        checked[pair] = (document, checker)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off within the block (as it was, after): for work that
    makes many objects and no reference cycles, such as parsing a document or building
    rows from it."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


class DuplicateKeyError(ValueError):
    """A JSON object names one key twice (``key``, quoted and cut to 80 characters)."""

    def __init__(self, key: str) -> None:
        text = repr(key)
        self.key = text if len(text) <= 80 else f"{text[:79]}… ({len(key)} characters)"
        super().__init__(self.key)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """One JSON object, refused when it names a key twice (``json`` keeps the last)."""
    document = dict(pairs)
    if len(document) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    return document


def read_json(path: str | Path, *, error: ErrorType = InputFileError) -> Any:
    """The JSON document in ``path``; as :func:`read_text`, and malformed JSON raises ``error``
    with the line and column."""
    parsed, key = _parsed.get(), None
    if parsed is not None:
        with contextlib.suppress(OSError):  # read_text says what is wrong with the file
            stat = Path(path).stat()
            key = (str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns)
        if key in parsed:
            return parsed[key]
    text = read_text(path, error=error)
    try:
        with collector_paused():
            document = json.loads(text, object_pairs_hook=_unique_keys)
    except DuplicateKeyError as exc:
        raise error(f"{path}: key {exc.key} appears twice in one object") from None
    except json.JSONDecodeError as exc:
        raise error(
            f"{path}: malformed JSON at line {exc.lineno}, column {exc.colno} "
            f"(char {exc.pos}): {exc.msg}"
        ) from None
    if parsed is not None and key is not None:
        parsed[key] = document
    return document
