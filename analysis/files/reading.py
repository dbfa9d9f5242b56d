"""Reading input files: one UTF-8 text reader and one JSON reader, each naming the file on error.

Every failure is one line that starts with the file's path and says what is wrong with it:
``<path>: missing``, ``<path>: unreadable (<reason>)``, ``<path>: not UTF-8 text (byte 0x.. at
offset n)``, ``<path>: malformed JSON at line l, column c (char p): <reason>`` or
``<path>: key 'k' appears twice in one object`` (JSON parsers disagree on which one wins). Callers
choose the exception raised (``error``), so each module keeps its own error type. Inside
:func:`json_read_once`, a JSON file read twice is parsed once, and a large one is parsed by
msgspec while another process checks its keys (:data:`KEYS_ASIDE_CHARS`). This module imports
only the standard library at import time, so the fast no-op check of ``make paper`` can use it.

A document is parsed with the cyclic garbage collector paused: parsing makes no reference
cycles, so the collections it would set off (a release's verdict file holds some 700,000
objects at 1,000 conditions) find nothing and only cost time, about a third of the parse.
"""

from __future__ import annotations

import contextlib
import gc
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any


class InputFileError(ValueError):
    """An input file is missing, unreadable, not UTF-8 or not JSON; the message names it."""


ErrorType = Callable[[str], Exception]


def read_text(path: str | Path, *, error: ErrorType = InputFileError) -> str:
    """The UTF-8 text of ``path``; a missing, unreadable or undecodable file raises ``error``."""
    return _utf8(_read_bytes(path, error), path, error)


def _read_bytes(path: str | Path, error: ErrorType) -> bytes:
    path = Path(path)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise error(f"{path}: missing") from None
    except OSError as exc:
        raise error(f"{path}: unreadable ({exc.strerror})") from None


def _utf8(data: bytes, path: str | Path, error: ErrorType) -> str:
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
#: The key checks started inside :func:`json_read_once`, in the order their files were read.
_aside: ContextVar[list[_KeyCheck] | None] = ContextVar("aside", default=None)

#: Inside :func:`json_read_once`, a document of at least this many characters is parsed by
#: msgspec (about a third of the time the standard parser takes with its repeated-key hook:
#: 0.33 s against 0.94 s for a 1,000-condition verdict file), while a process of its own, at
#: the lowest priority, parses it again with the hook; the block's end waits for that
#: process and refuses a repeated key as :func:`read_json` does (msgspec, like most parsers,
#: keeps the last). msgspec accepts no document the standard parser refuses; one it refuses
#: (NaN, a number out of range, a lone surrogate, malformed JSON) goes to the standard parser,
#: which reads it or says where it is malformed. Below this size a second process costs more
#: than it saves.
KEYS_ASIDE_CHARS = 8_000_000


@contextlib.contextmanager
def json_read_once() -> Iterator[None]:
    """Within the block, :func:`read_json` parses each file once: reading a file again (same
    path, size and modification time) gives the document already parsed, which its readers
    must not change. A release's ``scenarios-detail.json`` is read by the trials loader and
    again by the cross-check of its cell records. A large document's keys are checked in
    another process while the block runs (:data:`KEYS_ASIDE_CHARS`); its end waits for
    those checks, and a repeated key is refused then, in place of anything else the block
    raised (reading the file would have refused it first)."""
    token, checked, aside = _parsed.set({}), _checked.set({}), _aside.set([])
    started = _aside.get()
    try:
        yield
    except Exception:
        _settle(started)
        raise
    except BaseException:
        for check in started:
            check.stop()
        raise
    else:
        _settle(started)
    finally:
        _aside.reset(aside)
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


def _first_repeat(pairs: list[tuple[str, Any]]) -> str | None:
    """The first key ``pairs`` (one JSON object's) names a second time, or None."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return key
        seen.add(key)
    return None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """One JSON object, refused when it names a key twice (``json`` keeps the last)."""
    document = dict(pairs)
    if len(document) != len(pairs):
        raise DuplicateKeyError(_first_repeat(pairs))
    return document


def _keys_only(pairs: list[tuple[str, Any]]) -> None:
    """One JSON object checked by :func:`_unique_keys`, and dropped (its parent keeps None)."""
    _unique_keys(pairs)


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
    data = _read_bytes(path, error)
    text = _utf8(data, path, error)
    del data
    document = _NOT_PARSED
    started = _aside.get()
    if started is not None and len(text) >= KEYS_ASIDE_CHARS and key is not None:
        document = _parsed_with_keys_aside(text, Path(path), key, error, started)
    if document is _NOT_PARSED:
        try:
            document = parse_json(text)
        except (DuplicateKeyError, json.JSONDecodeError) as exc:
            raise error(f"{path}: {refusal(exc)}") from None
    if parsed is not None and key is not None:
        parsed[key] = document
    return document


def parse_json(text: str) -> Any:
    """The JSON document ``text``, refused (:class:`DuplicateKeyError`,
    :class:`json.JSONDecodeError`) when an object repeats a key or it is not JSON."""
    with collector_paused():
        return json.loads(text, object_pairs_hook=_unique_keys)


def check_keys(text: str) -> None:
    """Refuse ``text`` as :func:`parse_json` does, without keeping the document (each object
    is dropped once its keys are checked: a large document costs its text alone)."""
    with collector_paused():
        json.loads(text, object_pairs_hook=_keys_only)


def refusal(exc: DuplicateKeyError | json.JSONDecodeError) -> str:
    """What :func:`parse_json`'s refusal says is wrong, for a message that starts with the
    file's path."""
    if isinstance(exc, DuplicateKeyError):
        return f"key {exc.key} appears twice in one object"
    return f"malformed JSON at line {exc.lineno}, column {exc.colno} (char {exc.pos}): {exc.msg}"


#: What :func:`_parsed_with_keys_aside` gives for a document it leaves to the standard parser.
_NOT_PARSED = object()


def _parsed_with_keys_aside(
    text: str, path: Path, key: tuple[str, int, int], error: ErrorType, started: list[_KeyCheck]
) -> Any:
    """``text`` (read from ``path``, whose path, size and modification time are ``key``)
    parsed by msgspec, its keys checked by another process (added to ``started``);
    :data:`_NOT_PARSED` when msgspec refuses it or no process starts."""
    import msgspec

    try:
        with collector_paused():
            document = msgspec.json.decode(text)
    except msgspec.MsgspecError:
        return _NOT_PARSED
    try:
        started.append(_KeyCheck(path, key, error))
    except OSError:
        return _NOT_PARSED
    return document


class _KeyCheck:
    """The process that checks the keys of the file at ``path`` (``python -m
    analysis.files.repeated_keys``), as read when its size and modification time were those
    of ``key``; a file changed since is checked again here, at :meth:`wait`."""

    def __init__(self, path: Path, key: tuple[str, int, int], error: ErrorType) -> None:
        self.path, self.error = path, error
        _, size, modified = key
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "analysis.files.repeated_keys",
                str(path),
                str(size),
                str(modified),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def wait(self) -> str | None:
        """What is wrong with the document (:func:`refusal`), or None. When the process
        did not say (it failed, or found the file changed), the check is made here."""
        said, _ = self.process.communicate()
        if self.process.returncode == 0:
            return json.loads(said).get("refusal") if said.strip() else None
        try:
            check_keys(read_text(self.path, error=self.error))
        except (DuplicateKeyError, json.JSONDecodeError) as exc:
            return refusal(exc)
        return None

    def stop(self) -> None:
        """End the process without waiting for its answer."""
        self.process.kill()
        self.process.communicate()


def _settle(started: list[_KeyCheck]) -> None:
    """Wait for every key check in ``started``; the first file (in the order read) found to
    repeat a key is refused with its reader's error."""
    problem = None
    for check in started:
        said = check.wait()
        if said is not None and problem is None:
            problem = check.error(f"{check.path}: {said}")
    if problem is not None:
        raise problem from None
