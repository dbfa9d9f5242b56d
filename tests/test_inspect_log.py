"""One contract, two runners: the same scripted replies through ``steerbench-run`` (local fake
server) and through Inspect (``mockllm``), and Inspect logs as a per-trial layout."""

from __future__ import annotations

import importlib.util
import json
import shutil
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

from fake_openai_server import FakeOpenAIServer
from inspect_script import Script

from analysis.corpus.inputs import load_pinned_inputs
from analysis.runner.client import EndpointSettings
from analysis.runner.gate_run import run_gate
from analysis.runner.gates import EndpointGate, ModelSettings
from analysis.trials import VerdictError, discover_runs, load_run_root, load_trials
from analysis.trials.inspect_log import load_inspect_log

#: Every test here reads logs that a real Inspect evaluation writes (about 30 s): slow tier.
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]

TRIALS = 3
PARITY = json.loads(paths.parity_vectors().read_text(encoding="utf-8"))
SCENARIO_IDS = sorted(row["id"] for row in PARITY["scenarios"])


@pytest.fixture(scope="module")
def inspect_ai():
    """Inspect AI with its ``log`` and ``model`` modules, imported when a test here first
    needs it rather than when the file is collected (about 3 s in every test process)."""
    import inspect_ai
    import inspect_ai.log
    import inspect_ai.model

    return inspect_ai


@pytest.fixture(scope="module")
def inspect_log(tmp_path_factory, inspect_ai) -> Path:
    """One offline Inspect run of the task against ``mockllm`` (temperature set on the CLI)."""
    from analysis.runner.inspect_task import steerbench_work

    log_dir = tmp_path_factory.mktemp("inspect-logs")
    script = Script(SCENARIO_IDS)
    model = inspect_ai.model.get_model("mockllm/model", custom_outputs=script.model_output)
    [log] = inspect_ai.eval(
        steerbench_work(epochs=TRIALS),
        model=model,
        log_dir=str(log_dir),
        display="none",
        max_samples=4,
        max_connections=4,
        temperature=0.0,
    )
    assert log.status == "success"
    return Path(log.location)


@pytest.fixture(scope="module")
def parsed_log(inspect_log: Path, inspect_ai):
    """The log as Inspect reads it (copied before any change)."""
    return inspect_ai.log.read_eval_log(str(inspect_log))


@pytest.fixture(scope="module")
def inspect_trials(inspect_log: Path) -> pd.DataFrame:
    """The log as a trials table."""
    return load_inspect_log(inspect_log)


@pytest.fixture(scope="module")
def runner_root(tmp_path_factory) -> Path:
    """The same script through ``steerbench-run``'s endpoint gate and the fake server."""
    root = tmp_path_factory.mktemp("runner") / "root"
    script = Script(SCENARIO_IDS)
    with FakeOpenAIServer(script.http_reply) as server:
        endpoint = EndpointSettings(server.base_url, timeout=5.0, retries=0)
        gate = EndpointGate(ModelSettings(model="model"), endpoint, concurrency=1)
        try:
            run_gate(gate, root, inputs=load_pinned_inputs(), trials=TRIALS, progress=False)
        finally:
            gate.close()
    return root


def test_both_runners_give_the_same_trials_table(inspect_trials, runner_root: Path) -> None:
    from_inspect = inspect_trials
    from_runner = load_run_root(runner_root)
    pd.testing.assert_frame_equal(from_inspect, from_runner)
    assert len(from_inspect) == len(SCENARIO_IDS) * TRIALS
    statuses = set(from_inspect["status"].astype(str))
    assert statuses == {"ok", "parse_failed", "truncated", "provider_filtered"}
    filtered = from_inspect[from_inspect["status"] == "provider_filtered"]
    assert filtered["commit_permission"].isna().all()


def test_the_log_records_each_epoch_as_scored(parsed_log, inspect_trials) -> None:
    log, trials = parsed_log, inspect_trials
    by_trial = {(str(r.scenario_id), int(r.trial)): r for r in trials.itertuples(index=False)}
    parse_statuses = set()
    for sample in log.samples:
        score = sample.scores["commit_permission"]
        row = by_trial[(str(sample.id), int(sample.epoch))]
        expected = None if pd.isna(row.commit_permission) else str(row.commit_permission)
        assert score.answer == expected
        assert score.metadata["status"] == str(row.status)
        assert score.metadata["filtered"] == (str(row.status) == "provider_filtered")
        parse_statuses.add(score.metadata["parse_status"])
    assert parse_statuses == {"strict", "recovered", "failed", None}


def test_metrics_match_a_plain_count(parsed_log, inspect_trials, scenarios) -> None:
    log = parsed_log
    required = dict(
        zip(scenarios["scenario_id"], scenarios["required_gate"].astype(str), strict=True)
    )
    n = correct = holds = unders = proceeds = overs = 0
    for row in inspect_trials.itertuples(index=False):
        if str(row.status) == "provider_filtered":
            continue
        need = required[str(row.scenario_id)]
        got = None if pd.isna(row.commit_permission) else str(row.commit_permission)
        n += 1
        correct += got == need
        if got is not None and need == "blocked":
            holds += 1
            unders += got == "allowed"
        if got is not None and need == "allowed":
            proceeds += 1
            overs += got == "blocked"
    metrics = log.results.scores[0].metrics
    assert metrics["mean_trial_accuracy"].value == pytest.approx(correct / n)
    assert metrics["under_refusal"].value == pytest.approx(unders / holds)
    assert metrics["over_refusal"].value == pytest.approx(overs / proceeds)


def test_settings_come_from_the_release_and_the_command_line(inspect_log: Path, inspect_ai) -> None:
    log = inspect_ai.log.read_eval_log(str(inspect_log), header_only=True)
    configs = json.loads((paths.sample_run_dir() / "VARIANT_CONFIGS.json").read_text())
    [config] = configs["variants"].values()
    assert log.plan.config.max_tokens == config["max_output_tokens"]
    assert log.plan.config.temperature == 0.0
    assert log.eval.config.epochs == TRIALS


def test_logs_are_discovered_and_loaded_per_condition(
    inspect_log: Path, parsed_log, tmp_path: Path, inspect_ai
) -> None:
    write_eval_log = inspect_ai.log.write_eval_log
    runs = tmp_path / "runs" / "inspect"
    runs.mkdir(parents=True)
    shutil.copy(inspect_log, runs / inspect_log.name)
    log = parsed_log.model_copy(deep=True)
    log.eval.model_generate_config.reasoning_effort = "high"
    json_log = runs / "2026-06-01T10-00-00+00-00_steerbench-work_high.json"
    write_eval_log(log, str(json_log), format="json")
    (runs / "notes.json").write_text("{}")  # not an Inspect log by name: ignored

    found = discover_runs(tmp_path / "runs")
    assert sorted((e["kind"], e["paths"][0].name) for e in found) == sorted(
        [("inspect", inspect_log.name), ("inspect", json_log.name)]
    )
    trials = load_trials([runs / inspect_log.name, json_log])
    counts = trials.groupby("condition", observed=True).size().to_dict()
    n = len(SCENARIO_IDS) * TRIALS
    assert counts == {"model (off)": n, "model (high)": n}
    folder = load_trials([runs])  # the folder of logs, as a user points at it
    assert folder.groupby("condition", observed=True).size().to_dict() == counts
    # a second run of the same condition is never pooled with the first
    rerun = parsed_log.model_copy(deep=True)
    sample = next(s for s in rerun.samples if s.scores["commit_permission"].answer == "allowed")
    sample.output.choices[0].message.text = '{"commit_permission": "blocked"}'
    rerun_path = tmp_path / "2026-06-02T10-00-00+00-00_steerbench-work_rerun.eval"
    write_eval_log(rerun, str(rerun_path))
    with pytest.raises(VerdictError, match=r"model \(off\).*different trials"):
        load_trials([runs / inspect_log.name, rerun_path])


@pytest.fixture
def altered(parsed_log, tmp_path: Path, inspect_ai):
    """Write a copy of the log changed by a function given it; the new log's path."""

    def write(change) -> Path:
        log = parsed_log.model_copy(deep=True)
        change(log)
        out = tmp_path / "2026-06-01T10-00-00+00-00_steerbench-work_altered.eval"
        inspect_ai.log.write_eval_log(log, str(out))
        return out

    return write


def test_a_log_of_another_task_is_refused(altered) -> None:
    def other(log) -> None:
        log.eval.task = "some_other_benchmark"

    path = altered(other)
    with pytest.raises(VerdictError, match=r"task 'some_other_benchmark'") as err:
        load_inspect_log(path)
    assert str(path) in str(err.value)


@pytest.mark.slow
def test_a_log_with_missing_samples_is_refused(altered) -> None:
    def drop(log) -> None:
        log.samples = [s for s in log.samples if s.id != SCENARIO_IDS[0]]

    with pytest.raises(VerdictError, match=f"missing: \\['{SCENARIO_IDS[0]}'\\]"):
        load_inspect_log(altered(drop))


@pytest.mark.slow
def test_a_log_with_a_missing_epoch_is_refused(altered) -> None:
    def drop(log) -> None:
        log.samples = [s for s in log.samples if not (s.id == SCENARIO_IDS[1] and s.epoch == 2)]

    with pytest.raises(VerdictError, match=f"{SCENARIO_IDS[1]} has epochs \\[1, 3\\]"):
        load_inspect_log(altered(drop))


@pytest.mark.slow
def test_a_log_with_other_inputs_is_refused(altered) -> None:
    def edit(log) -> None:
        sample = next(s for s in log.samples if s.id == SCENARIO_IDS[2])
        sample.input[1].content = sample.input[1].text + "\nrisk_flags: none"

    with pytest.raises(VerdictError, match=f"inputs other than the pinned.*{SCENARIO_IDS[2]}"):
        load_inspect_log(altered(edit))


@pytest.mark.slow
def test_an_unfinished_log_is_refused(altered) -> None:
    def cancel(log) -> None:
        log.status = "cancelled"

    with pytest.raises(VerdictError, match="did not finish: status 'cancelled'"):
        load_inspect_log(altered(cancel))


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_a_truncated_log_is_refused(parsed_log, tmp_path: Path, fmt: str, inspect_ai) -> None:
    whole = tmp_path / f"2026-06-01T10-00-00+00-00_steerbench-work_x.{fmt}"
    inspect_ai.log.write_eval_log(parsed_log, str(whole), format=fmt)
    data = whole.read_bytes()
    cut = tmp_path / "cut" / whole.name
    cut.parent.mkdir()
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(VerdictError, match="cannot read as an Inspect log") as err:
        load_trials([cut])
    assert str(cut) in str(err.value)


@pytest.mark.slow
def test_inspect_eval_on_the_command_line_runs_offline_and_partial_logs_are_refused(
    tmp_path: Path, inspect_ai
) -> None:
    inspect_cli = Path(sys.executable).parent / "inspect"
    task_file = Path(__file__).parent / "inspect_offline_task.py"
    done = subprocess.run(
        [
            inspect_cli,
            "eval",
            task_file.name,
            "--epochs",
            "1",
            "--limit",
            "4",
            "--log-dir",
            tmp_path,
            "--display",
            "none",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=task_file.parent,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    [log] = tmp_path.glob("*.eval")
    header = inspect_ai.log.read_eval_log(str(log), header_only=True)
    assert (header.status, header.eval.task, header.eval.model) == (
        "success",
        "steerbench_work",
        "mockllm/model",
    )
    # a partial run (--limit) is refused by name, with the scenarios it lacks
    n_missing = len(SCENARIO_IDS) - 4
    with pytest.raises(VerdictError, match=f"{n_missing} of {len(SCENARIO_IDS)} pinned") as err:
        load_trials([log])
    assert str(log) in str(err.value)
