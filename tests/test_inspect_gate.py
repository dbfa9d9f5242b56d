"""One Python gate, two runners: ``steerbench-run --gate MODULE:FUNCTION`` and the Inspect task
with ``-T gate=MODULE:FUNCTION`` give the same trials table (needs the inspect extra)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from analysis import paths

if importlib.util.find_spec("inspect_ai") is None:  # found, not imported: see `inspect_ai`
    pytest.skip("needs the inspect extra: pip install -e '.[inspect]'", allow_module_level=True)
if not paths.parity_vectors().exists():
    pytest.skip("run `make data` first", allow_module_level=True)

from analysis.runner.cli import main
from analysis.runner.python_gate import GateSpecError
from analysis.trials import load_run_root, load_trials
from analysis.trials.inspect_log import load_inspect_log

#: Each test here runs a real Inspect evaluation (several seconds): slow tier.
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]

TRIALS = 2
INSPECT = Path(sys.executable).parent / "inspect"
PROJECT = Path(__file__).parents[1]
#: Relative to the project: ``inspect eval-set`` takes a task file by a relative path only.
TASK = "analysis/runner/inspect_task.py"
#: A deterministic gate whose replies cover the statuses a gate's text can have, and an
#: exception on some scenarios.
GATE = """
import hashlib, json


def decide(system, user, scenario_id):
    kind = int(hashlib.sha256(scenario_id.encode()).hexdigest(), 16) % 6
    if kind == 0:
        raise RuntimeError("no answer for " + scenario_id)
    if kind == 1:
        return "I cannot decide."
    if kind == 2:
        return 'Decision: {"commit_permission": "allowed"}'
    if kind == 3:
        return json.dumps({"policy_action": "escalate"})
    hold = "commit_point" not in user.split("risk_flags:")[1].splitlines()[0]
    return json.dumps({"commit_permission": "blocked" if hold else "allowed"})
"""


@pytest.fixture(scope="module")
def gate_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("gate") / "scripted_gate.py"
    path.write_text(GATE)
    return path


@pytest.fixture(scope="module")
def runner_trials(tmp_path_factory, gate_file: Path) -> pd.DataFrame:
    root = tmp_path_factory.mktemp("runner") / "root"
    spec = f"{gate_file}:decide"
    code = main(["--gate", spec, "--out", str(root), "--trials", str(TRIALS), "--no-progress",
                 "--label", "scripted", "--concurrency", "4"])  # fmt: skip
    assert code == 1  # the exceptions are recorded failures
    return load_run_root(root)


def test_the_same_gate_gives_the_same_trials_through_inspect(
    tmp_path: Path, gate_file: Path, runner_trials: pd.DataFrame
) -> None:
    import inspect_ai

    from analysis.runner.inspect_task import steerbench_work

    task = steerbench_work(gate=f"{gate_file}:decide", label="scripted", epochs=TRIALS)
    [log] = inspect_ai.eval(task, log_dir=str(tmp_path), display="none", max_samples=4,
                            fail_on_error=False)  # fmt: skip
    assert log.status == "success"
    assert log.eval.metadata["gate"]["function"] == "scripted_gate:decide"
    from_inspect = load_inspect_log(log.location)
    pd.testing.assert_frame_equal(from_inspect, runner_trials)
    assert set(runner_trials["status"].astype(str)) == {
        "ok",
        "parse_failed",
        "infrastructure_failed",
    }
    assert runner_trials["commit_permission"].notna().any()
    assert set(from_inspect["condition"].astype(str)) == {"scripted (off)"}


def test_inspect_eval_set_runs_the_gate_from_the_command_line(
    tmp_path: Path, gate_file: Path, runner_trials: pd.DataFrame
) -> None:
    logs = tmp_path / "logs"
    command = [str(INSPECT), "eval-set", TASK, "-T", f"gate={gate_file}:decide",
               "-T", "label=scripted", "--epochs", str(TRIALS), "--log-dir", str(logs),
               "--no-fail-on-error", "--display", "none"]  # fmt: skip
    done = subprocess.run(
        command,
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    trials = load_trials(logs)
    pd.testing.assert_frame_equal(
        trials.sort_values(["scenario_id", "trial"]).reset_index(drop=True),
        runner_trials.sort_values(["scenario_id", "trial"]).reset_index(drop=True),
    )


def test_the_task_refuses_a_bad_gate_and_a_label_without_one(tmp_path: Path) -> None:
    from analysis.runner.inspect_task import steerbench_work

    bad = tmp_path / "two_args.py"
    bad.write_text("def decide(system, user):\n    return ''\n")
    with pytest.raises(GateSpecError, match="3 positional arguments"):
        steerbench_work(gate=f"{bad}:decide")
    with pytest.raises(ValueError, match="label"):
        steerbench_work(label="mine")
