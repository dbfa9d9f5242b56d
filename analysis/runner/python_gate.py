"""A Python gate: a function ``(system, user, scenario_id) -> str`` run as an endpoint is.

The function is given the pinned system prompt, the user message rendered from the scenario
file and the scenario id, and returns the reply's text; the text is parsed and recorded as an
endpoint's reply is (:func:`analysis.corpus.parsing.parse_response`, the same statuses and
trial record). An exception the function raises is that trial's ``infrastructure_failed``
record (``error: "gate error: ..."``), as a failed request is; re-running retries it. A
return value that is not a ``str`` stops the run with :class:`GateReturnError`: the first
call is made before anything is written (see :func:`analysis.runner.gate_run.run_gate`), so a
function that never returns text leaves no file behind.

``MODULE:FUNCTION`` names the function (:func:`load_gate_function`): MODULE is an importable
module (the current folder comes first on the path, as for ``python -m``) or a path to a
``.py`` file. The run's identity holds the function's ``module:qualname`` and the sha256 of
its module's source file, so a resume with another function, or an edited one, is refused.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from analysis.corpus.inputs import PinnedScenario
from analysis.corpus.parsing import INFRASTRUCTURE_FAILED, parse_response, status_for
from analysis.runner.client import Cancelled
from analysis.runner.gates import GateOutcome, chat_messages, variant_key_of
from analysis.runner.secrets import redact_text

PYTHON_KIND = "python-gate"
GATE_SPEC_RULE = "MODULE:FUNCTION, MODULE an importable module or a path to a .py file"
#: The arguments a gate function is called with, in order.
GATE_ARGUMENTS = ("system", "user", "scenario_id")

GateFunction = Callable[[str, str, str], str]


class GateSpecError(ValueError):
    """A gate that cannot be run: the message names it and says why."""


class GateReturnError(TypeError):
    """The gate function returned something other than a ``str``; the run stops."""


def _import_path(path: Path, named: str) -> Any:
    """The module in the ``.py`` file ``path``, named after the file, its folder first on
    the path while it is imported (as ``python path.py`` has it)."""
    if not path.is_file():
        raise GateSpecError(f"{named}: no such file {path}")
    name = path.stem
    loader_spec = importlib.util.spec_from_file_location(name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise GateSpecError(f"{named}: {path} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(loader_spec)
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)
    try:
        loader_spec.loader.exec_module(module)
    except Exception as exc:
        raise GateSpecError(f"{named}: importing {path} failed: {exc!r}") from None
    finally:
        sys.path.remove(folder)
    return module


def _import_module(name: str, named: str) -> Any:
    """The module ``name``, imported with the current folder first on the path."""
    cwd = os.getcwd()
    added = cwd not in sys.path and "" not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and (name == exc.name or name.startswith(exc.name + ".")):
            raise GateSpecError(
                f"{named}: no module named {exc.name!r} (run from the folder that holds "
                "it, or give the path to its .py file)"
            ) from None
        raise GateSpecError(f"{named}: importing {name} failed: {exc!r}") from None
    except Exception as exc:
        raise GateSpecError(f"{named}: importing {name} failed: {exc!r}") from None
    finally:
        if added:
            sys.path.remove(cwd)


def load_gate_function(spec: str, option: str = "--gate ") -> GateFunction:
    """The function ``MODULE:FUNCTION`` names, its signature checked (:func:`check_gate_function`).

    Raises :class:`GateSpecError`, naming ``option`` + ``spec``, when the module cannot be
    imported, has no such attribute, or the attribute is not a gate function.

    Examples
    --------
    >>> load_gate_function("textwrap:dedent")
    Traceback (most recent call last):
    ...
    analysis.runner.python_gate.GateSpecError: --gate textwrap:dedent: dedent(text) does not take the 3 positional arguments (system, user, scenario_id)
    >>> load_gate_function("no_such_module_here:decide")
    Traceback (most recent call last):
    ...
    analysis.runner.python_gate.GateSpecError: --gate no_such_module_here:decide: no module named 'no_such_module_here' (run from the folder that holds it, or give the path to its .py file)
    """  # noqa: E501
    named = f"{option}{spec}"
    module_part, sep, attribute = spec.rpartition(":")
    if not sep or not module_part.strip() or not attribute.strip():
        raise GateSpecError(f"{named}: not {GATE_SPEC_RULE}")
    is_path = module_part.endswith(".py") or "/" in module_part or os.sep in module_part
    module = (
        _import_path(Path(module_part), named) if is_path else _import_module(module_part, named)
    )
    value: Any = module
    for part in attribute.split("."):
        if not hasattr(value, part):
            where = module_part if value is module else attribute
            raise GateSpecError(f"{named}: {where} has no attribute {part!r}")
        value = getattr(value, part)
    check_gate_function(value, named)
    return value


def check_gate_function(function: Any, name: str = "gate") -> None:
    """Raise :class:`GateSpecError` unless ``function`` is callable with the three positional
    arguments ``(system, user, scenario_id)`` (a signature Python cannot read is accepted;
    an ``async def`` is refused: a gate returns its text)."""
    if not callable(function):
        raise GateSpecError(f"{name}: {type(function).__name__} is not callable")
    if inspect.iscoroutinefunction(function):
        raise GateSpecError(f"{name}: an async function; a gate is a plain def returning str")
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(*GATE_ARGUMENTS)
    except TypeError:
        title = getattr(function, "__name__", type(function).__name__)
        raise GateSpecError(
            f"{name}: {title}{signature} does not take the 3 positional arguments "
            f"({', '.join(GATE_ARGUMENTS)})"
        ) from None


def function_identity(function: Any) -> tuple[str, str | None]:
    """``(module:qualname, sha256 of the file that defines it)`` of a gate function (the hash
    of its own source when that file cannot be read; None when neither can be).

    Examples
    --------
    >>> import textwrap
    >>> name, digest = function_identity(textwrap.indent)
    >>> name, len(digest)
    ('textwrap:indent', 64)
    """
    module_name = getattr(function, "__module__", None) or "?"
    qualname = getattr(function, "__qualname__", None) or type(function).__qualname__
    defined = function if inspect.isroutine(function) else type(function)
    try:
        source_file = inspect.getsourcefile(defined)
    except TypeError:
        source_file = None
    digest: str | None = None
    if source_file and Path(source_file).is_file():
        digest = hashlib.sha256(Path(source_file).read_bytes()).hexdigest()
    else:
        with contextlib.suppress(OSError, TypeError):
            digest = hashlib.sha256(inspect.getsource(defined).encode("utf-8")).hexdigest()
    return f"{module_name}:{qualname}", digest


class PythonGate:
    """Runs a gate function as the runner runs an endpoint; called from ``concurrency``
    threads at once, so the function must be thread-safe."""

    def __init__(
        self,
        function: GateFunction | str,
        *,
        label: str | None = None,
        reasoning_label: str | None = None,
        option: str = "--gate ",
    ) -> None:
        if isinstance(function, str):
            function = load_gate_function(function, option)
        else:
            check_gate_function(function)
        self.function = function
        self.identity, self.source_sha256 = function_identity(function)
        self.label = label or variant_key_of(getattr(function, "__name__", None) or "gate")
        self.reasoning_label = reasoning_label or "off"
        self.variant_key = variant_key_of(self.label)
        self._cancel = threading.Event()

    def variant_config(self) -> dict[str, Any]:
        """The gate's identity: its label, ``module:qualname`` and source hash."""
        return {
            "vendor": "python",
            "kind": PYTHON_KIND,
            "label": self.label,
            "model": self.identity,
            "source_sha256": self.source_sha256,
            "reasoning_effort": None,
            "reasoning_label": self.reasoning_label,
        }

    def run(self, scenario: PinnedScenario, system_prompt: str) -> GateOutcome:
        """Call the function once; its text is parsed as an endpoint's reply, an exception is
        an ``infrastructure_failed`` outcome, a non-``str`` raises :class:`GateReturnError`."""
        if self._cancel.is_set():
            raise Cancelled()
        body = {"model": self.identity, "messages": chat_messages(scenario, system_prompt)}
        started = time.monotonic()
        try:
            text = self.function(system_prompt, scenario.user_input, scenario.id)
        except Exception as exc:
            return GateOutcome(
                status=INFRASTRUCTURE_FAILED,
                verdict=None,
                request_body=body,
                response_body_raw=None,
                error=redact_text(f"gate error: {type(exc).__name__}: {exc}"),
                wall_ms=round((time.monotonic() - started) * 1000),
            )
        verdict = parse_response(self.checked(text, scenario.id))
        return GateOutcome(
            status=status_for(verdict),
            verdict=verdict,
            request_body=body,
            response_body_raw=text,
            raw_text=text,
            wall_ms=round((time.monotonic() - started) * 1000),
        )

    def checked(self, text: Any, scenario_id: str) -> str:
        """``text``, the function's reply on ``scenario_id``, if it is a ``str``; else
        :class:`GateReturnError` naming the gate, the scenario and the type."""
        if not isinstance(text, str):
            raise GateReturnError(
                f"gate {self.identity} returned {type(text).__name__}, not str, on scenario "
                f"{scenario_id}: a gate returns the reply's text"
            )
        return text

    def cancel(self) -> None:
        """No call is started after this (a call under way finishes; nothing is written)."""
        self._cancel.set()

    def close(self) -> None:
        """Nothing to release."""
