"""Running a gate over the selected scenarios x trials into a run root, resuming.

Re-running into the same root resumes: a trial whose identity matches and whose status is
not ``infrastructure_failed`` is reused, every other trial is redone. On
``KeyboardInterrupt`` in-flight calls are abandoned at once, a trial being written is
finished, nothing else is written, and ``RunInterrupted`` is raised.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from analysis.corpus.inputs import (
    PinnedInputs,
    PinnedScenario,
    load_pinned_inputs,
    scenario_metadata,
)
from analysis.corpus.parsing import INFRASTRUCTURE_FAILED
from analysis.files.atomic_write import atomic_write_json
from analysis.runner.gates import REFERENCE_POLICIES, Gate, GateOutcome, chat_messages
from analysis.runner.identity import config_hash, derived_run_id, run_identity
from analysis.runner.python_gate import GateFunction, GateSpecError, PythonGate
from analysis.runner.records import cell_record
from analysis.runner.runroot import RunRoot
from analysis.runner.secrets import redact_text
from analysis.runner.shards import shard_scenarios
from analysis.runner.workers import TrialWorkers


class RunInterrupted(Exception):
    """The run was interrupted; every trial file on disk is complete."""

    def __init__(self, summary: RunSummary) -> None:
        super().__init__("interrupted")
        self.summary = summary


@dataclass
class RunSummary:
    """Counts for one invocation of the runner."""

    run_id: str
    variant_key: str
    n_scenarios: int
    n_trials: int
    n_calls_made: int = 0
    n_trials_reused: int = 0
    n_errors: int = 0
    n_parse_failed: int = 0


def as_gate(
    gate: Gate | GateFunction | str,
    *,
    label: str | None = None,
    reasoning_label: str | None = None,
) -> Gate:
    """The gate ``gate`` names: a :class:`~analysis.runner.gates.Gate` as it is, a reference
    policy's name, or a Python gate function (a callable or ``"MODULE:FUNCTION"``) wrapped as
    a :class:`~analysis.runner.python_gate.PythonGate` with ``label`` and ``reasoning_label``
    (those two are refused for any other gate: it carries its own)."""
    if isinstance(gate, str) and gate in REFERENCE_POLICIES:
        found: Gate = REFERENCE_POLICIES[gate]()
    elif isinstance(gate, str) or (callable(gate) and not hasattr(gate, "variant_config")):
        return PythonGate(gate, label=label, reasoning_label=reasoning_label)
    elif hasattr(gate, "variant_config") and hasattr(gate, "run"):
        found = gate
    else:
        raise GateSpecError(f"gate: {type(gate).__name__} is neither a gate nor a function")
    if label is not None or reasoning_label is not None:
        raise ValueError(
            f"label / reasoning_label: given for {found.variant_key!r}, which carries its own; "
            "they name a Python gate function's runs"
        )
    return found


def run_gate(
    gate: Gate | GateFunction | str,
    out: str | os.PathLike[str],
    *,
    inputs: PinnedInputs | None = None,
    label: str | None = None,
    reasoning_label: str | None = None,
    trials: int = 5,
    run_id: str | None = None,
    scenario_ids: Sequence[str] | None = None,
    shard: tuple[int, int] | None = None,
    concurrency: int = 1,
    settings: dict[str, Any] | None = None,
    scenarios_dir: Path | None = None,
    progress: bool = True,
) -> RunSummary:
    """Run a gate over the selected scenarios x ``trials`` into the run root ``out``, resuming.

    The root is the one ``steerbench-run`` writes (re-running the same call resumes it); runs
    under ``data/runs/`` are read by :func:`analysis.load_trials` as condition
    ``LABEL (REASONING)``.

    Parameters
    ----------
    gate : callable, str or Gate
        A function ``(system: str, user: str, scenario_id: str) -> str`` returning the reply's
        text, or ``"MODULE:FUNCTION"`` naming one (MODULE importable or a path to a ``.py``
        file); a reference policy's name (``"always-hold"``, ``"always-proceed"``,
        ``"surface-flag"``); or a gate object (:class:`analysis.runner.gates.Gate`).
    out : str or PathLike
        The run root to write or resume.
    inputs : PinnedInputs, optional
        The pinned inputs (default: the imported release's, ``load_pinned_inputs()``).
    label, reasoning_label : str, optional
        A Python gate's condition name (default: the function's name) and reasoning label
        (default ``off``).
    trials : int, default 5
        Trials per cell.
    run_id, shard, scenario_ids : str, tuple of (int, int), sequence of str, optional
        As ``--run-id``, ``--shard i/n`` and ``--scenarios`` (default: every scenario).
    concurrency : int, default 1
        Threads calling the gate at once (a Python gate function must then be thread-safe).
    settings : dict, optional
        Run settings recorded in ``RUN_PLAN.json`` (not part of the run's identity).
    scenarios_dir : Path, optional
        The scenario files, for the manifest's metadata (default: the imported ones).
    progress : bool, default True
        Draw the progress bar (only when standard error is a terminal).

    Returns
    -------
    RunSummary
        Counts of this invocation: trials run, reused, failed and unparseable.

    Raises
    ------
    GateSpecError
        ``gate`` cannot be imported or does not take the three arguments (nothing written).
    GateReturnError
        The function returned something other than a ``str``: the run stops, that trial is
        not written (on the first call, nothing is written).
    PinnedInputError, RunRootError
        Before anything is written.
    RunInterrupted
        On ``KeyboardInterrupt``; every trial file on disk is complete.

    See Also
    --------
    load_trials : The run's trials read back.
    standings : The run ranked beside Table 2.

    Examples
    --------
    >>> import tempfile
    >>> def hold_all(system, user, scenario_id):
    ...     return '{"commit_permission": "blocked"}'
    >>> out = tempfile.mkdtemp()
    >>> IDS = ["account-cancellation-001", "air-canada-bereavement-policy-promise-realworld-010"]
    >>> summary = run_gate(hold_all, out, scenario_ids=IDS, trials=2, progress=False)
    >>> summary.variant_key, summary.n_trials, summary.n_errors
    ('hold_all', 4, 0)
    >>> run_gate(hold_all, out, scenario_ids=IDS, trials=2, progress=False).n_trials_reused
    4
    """
    if not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"out: the run root is a path, not {type(out).__name__}")
    gate = as_gate(gate, label=label, reasoning_label=reasoning_label)
    root = Path(out)
    inputs = load_pinned_inputs() if inputs is None else inputs
    run_root = RunRoot(root)
    scenarios = shard_scenarios(inputs.select(list(scenario_ids or [])), shard)
    for scenario in scenarios:
        inputs.check_messages(scenario, chat_messages(scenario, inputs.system_prompt))
    config = gate.variant_config()
    config = {**config, "config_hash": config_hash(config)}
    identity = run_identity(inputs, gate.variant_key, config, trials)
    run_root.check_compatible(identity, run_id=run_id, shard=shard, config=config)
    run_id = run_id or run_root.existing_run_id() or derived_run_id(identity)
    summary = RunSummary(run_id, gate.variant_key, len(scenarios), len(scenarios) * trials)
    records: dict[str, dict[int, dict[str, Any]]] = {s.id: {} for s in scenarios}
    pending: list[tuple[PinnedScenario, dict[str, Any]]] = []
    for scenario in scenarios:
        for t in range(1, trials + 1):
            trial_identity = {
                "run_id": run_id,
                "scenario_id": scenario.id,
                "scenario_sha256": scenario.sha256,
                "variant_key": gate.variant_key,
                "variant_config_hash": config["config_hash"],
                "prompt_sha256": inputs.prompt_sha256,
                "trial": t,
                "expected_action": scenario.expected_action,
            }
            stored = run_root.reusable_trial(trial_identity)
            if stored is None:
                pending.append((scenario, trial_identity))
            else:
                records[scenario.id][t] = stored
    ready: dict[tuple[str, int], GateOutcome] = {}
    if pending and isinstance(gate, PythonGate):
        # The function's first reply is checked before anything is written.
        scenario, first = pending[0]
        ready[scenario.id, first["trial"]] = gate.run(scenario, inputs.system_prompt)
    run_root.write_plan(
        run_id=run_id,
        inputs=inputs,
        scenarios=scenarios,
        variant_key=gate.variant_key,
        config=config,
        trials=trials,
        shard=shard,
        settings={
            k: redact_text(v) if isinstance(v, str) else v for k, v in (settings or {}).items()
        },
        scenarios_dir=scenarios_dir,
    )
    run_root.mark_started(gate.variant_key)
    metas = {s.id: scenario_metadata(s, scenarios_dir) for s in scenarios}
    summary.n_trials_reused = summary.n_trials - len(pending)

    def finish_cell(scenario: PinnedScenario) -> None:
        done = records[scenario.id]
        ordered = [done[t] for t in sorted(done)]
        cell = cell_record(
            identity={**ordered[0], "variant_key": gate.variant_key},
            config=config,
            meta=metas[scenario.id],
            scenario=scenario,
            trials=ordered,
        )
        atomic_write_json(root / gate.variant_key / scenario.id / "cell.json", cell)

    by_id = {s.id: s for s in scenarios}
    for scenario in scenarios:
        if len(records[scenario.id]) == trials:
            finish_cell(scenario)

    workers = TrialWorkers(gate, run_root, inputs.system_prompt, pending, concurrency, ready)
    bar = tqdm(
        total=summary.n_trials,
        initial=summary.n_trials_reused,
        desc=gate.variant_key,
        unit="trial",
        disable=not (progress and sys.stderr.isatty()),
    )
    try:
        workers.start()
        for _ in pending:
            item = workers.next_record()
            summary.n_calls_made += 1
            summary.n_errors += item["status"] == INFRASTRUCTURE_FAILED
            summary.n_parse_failed += bool(item["parse_failed"])
            records[item["scenario_id"]][item["trial"]] = item
            if len(records[item["scenario_id"]]) == trials:
                finish_cell(by_id[item["scenario_id"]])
            bar.set_postfix(errors=summary.n_errors, parse_failed=summary.n_parse_failed)
            bar.update()
    except BaseException as exc:
        workers.stop()  # a trial being written is finished; nothing is written after
        if isinstance(exc, KeyboardInterrupt):
            raise RunInterrupted(summary) from None
        raise
    finally:
        bar.close()
    run_root.write_aggregates(
        run_id=run_id,
        variant_key=gate.variant_key,
        config=config,
        trials=trials,
        counts={
            "n_calls_made_this_run": summary.n_calls_made,
            "n_trials_reused": summary.n_trials_reused,
            "n_infrastructure_failed": summary.n_errors,
        },
    )
    return summary
