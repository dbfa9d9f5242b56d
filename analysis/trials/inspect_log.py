"""Inspect AI logs (``.eval`` and ``.json``) of ``steerbench_work`` as a trials table.

Read through ``inspect_ai.log`` (needs the extra: ``pip install -e '.[inspect]'``). One log
is one condition: the model (``provider/`` prefix dropped) and the reasoning effort of the
log's generate config (``off`` when unset), or, for a log a Python gate answered, the
``label`` and ``reasoning_label`` its metadata's ``gate`` records; each epoch is a trial. A
log is refused, naming it and what differs, when it cannot be read (truncated, not a log), is
of another task, did not finish, lacks pinned scenarios or epochs, or was given inputs other
than the pinned system prompt and user messages.

Which files are Inspect logs follows Inspect's own naming rule (``list_eval_logs``): every
``*.eval`` file, and ``*.json`` files whose name starts with an ISO timestamp
(``2026-05-01T12-00-00...``).
"""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.corpus.inputs import PinnedInputError, PinnedInputs, load_pinned_inputs
from analysis.corpus.verdict import trial_verdict
from analysis.files.typed import is_relative_inside, shown
from analysis.trials.schema import VerdictError, normalize_trials

TASK_NAME = "steerbench_work"
INSTALL_HINT = "reading Inspect logs needs the inspect extra: pip install -e '.[inspect]'"
JSON_LOG_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}.*\.json$")
_SHOW = 5


def is_inspect_log(path: Path) -> bool:
    """True for a file Inspect would list as a log (see the module docstring)."""
    name = Path(path).name
    return name.endswith(".eval") or JSON_LOG_NAME.match(name) is not None


def condition_of(model: str, reasoning_effort: str | None) -> tuple[str, str]:
    """``("openai/gpt-5.4-mini", None)`` -> ``("gpt-5.4-mini", "off")``."""
    _, sep, name = model.partition("/")
    return (name if sep and name else model), (reasoning_effort or "off")


def _check_members(path: Path) -> None:
    """An ``.eval`` log is a zip archive: a member named with an absolute path or ``..`` (a
    name that would leave any folder it were unpacked into) is refused, naming it."""
    if path.suffix != ".eval" or not zipfile.is_zipfile(path):
        return  # a JSON log, or not an archive: read_eval_log says what is wrong
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if not is_relative_inside(name):
                raise VerdictError(f"{path}: member {shown(name)} leads outside the archive")


def _read_log(path: Path) -> Any:
    _check_members(path)
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise VerdictError(f"{path}: {INSTALL_HINT}") from None
    try:
        return read_eval_log(str(path))
    except Exception as exc:  # zip, JSON and validation errors all mean "unreadable"
        raise VerdictError(
            f"{path}: cannot read as an Inspect log (truncated or not a log): "
            f"{type(exc).__name__}: {str(exc)[:200]}"
        ) from None


def _message_texts(sample: Any) -> list[tuple[str, str]]:
    if isinstance(sample.input, str):
        return [("user", sample.input)]
    return [(m.role, m.text) for m in sample.input]


def _check_header(log: Any, path: Path) -> None:
    task = str(log.eval.task)
    if task != TASK_NAME and not task.endswith(f"/{TASK_NAME}"):
        raise VerdictError(f"{path}: a log of task {shown(task)}, not {TASK_NAME!r}")
    if log.status != "success":
        reason = f" ({log.error.message[:200]})" if getattr(log, "error", None) else ""
        raise VerdictError(f"{path}: the run did not finish: status {shown(log.status)}{reason}")


def _check_inputs(samples: list[Any], pinned: PinnedInputs, path: Path) -> None:
    by_id = pinned.by_id()
    differing = []
    for sample in samples:
        scenario = by_id.get(str(sample.id))
        if scenario is None:
            continue
        expected = [("system", pinned.system_prompt), ("user", scenario.user_input)]
        if _message_texts(sample) != expected:
            differing.append(f"{sample.id} (epoch {sample.epoch})")
    if differing:
        raise VerdictError(
            f"{path}: {len(differing)} sample(s) were given inputs other than the pinned "
            f"system prompt and user message: {differing[:_SHOW]}"
        )


def _check_complete(samples: list[Any], pinned: PinnedInputs, epochs: int, path: Path) -> None:
    pinned_ids = {s.id for s in pinned.scenarios}
    seen: dict[str, set[int]] = {}
    for sample in samples:
        seen.setdefault(str(sample.id), set()).add(int(sample.epoch))
    unknown = sorted(set(seen) - pinned_ids)
    if unknown:
        raise VerdictError(
            f"{path}: {len(unknown)} sample id(s) not among the pinned scenarios: {unknown[:_SHOW]}"
        )
    missing = sorted(pinned_ids - set(seen))
    if missing:
        raise VerdictError(
            f"{path}: {len(missing)} of {len(pinned_ids)} pinned scenario(s) missing: "
            f"{missing[:_SHOW]}"
        )
    short = sorted(sid for sid, have in seen.items() if have != set(range(1, epochs + 1)))
    if short:
        named = [f"{sid} has epochs {sorted(seen[sid])}" for sid in short[:_SHOW]]
        raise VerdictError(
            f"{path}: {len(short)} scenario(s) lack some of the log's {epochs} epochs: {named}"
        )


def _reasoning_effort(log: Any) -> str | None:
    for config in (log.eval.model_generate_config, getattr(log.plan, "config", None)):
        effort = getattr(config, "reasoning_effort", None)
        if effort:
            return str(effort)
    return None


def load_inspect_log(
    path: str | os.PathLike[str],
    *,
    scenarios: pd.DataFrame | None = None,
    pinned: PinnedInputs | None = None,
    source: str = "run",
) -> pd.DataFrame:
    """The trials of one ``steerbench_work`` Inspect log as a trials table.

    ``pinned`` defaults to the release's pinned inputs (``load_pinned_inputs()``).
    """
    path = Path(path)
    log = _read_log(path)
    _check_header(log, path)
    if pinned is None:
        try:
            pinned = load_pinned_inputs()
        except PinnedInputError as exc:
            raise VerdictError(f"{path}: cannot check the log's inputs: {exc}") from None
    logged_prompt = (log.eval.metadata or {}).get("prompt_sha256")
    if logged_prompt is not None and logged_prompt != pinned.prompt_sha256:
        raise VerdictError(
            f"{path}: the log's prompt_sha256 {logged_prompt} differs from the release "
            f"manifest's {pinned.prompt_sha256}"
        )
    samples = list(log.samples or [])
    epochs = int(log.eval.config.epochs or 1)
    _check_complete(samples, pinned, epochs, path)
    _check_inputs(samples, pinned, path)
    gate = (log.eval.metadata or {}).get("gate")
    if isinstance(gate, dict) and gate.get("label"):  # a Python gate answered, not the model
        model, reasoning = str(gate["label"]), str(gate.get("reasoning_label") or "off")
    else:
        model, reasoning = condition_of(str(log.eval.model), _reasoning_effort(log))
    rows = []
    for sample in samples:
        verdict = trial_verdict(sample.output, sample.error)
        rows.append(
            {
                "scenario_id": str(sample.id),
                "model": model,
                "reasoning": reasoning,
                "trial": int(sample.epoch),
                "commit_permission": verdict.commit_permission,
                "status": verdict.status,
            }
        )
    return normalize_trials(
        pd.DataFrame(rows, dtype=object),
        origin=str(path),
        source=source,
        n_trials=epochs,
        scenarios=scenarios,
    )
