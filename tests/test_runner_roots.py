"""Run roots: identity refusals, derived run ids shared by shards, the tidy export's
refusals, pinned message bytes and progress bars only on a terminal."""

from __future__ import annotations

import csv
import io
import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from analysis import paths
from analysis.corpus.inputs import PinnedInputError
from analysis.runner.cli import main
from analysis.runner.gate_run import run_gate
from analysis.runner.gates import REFERENCE_POLICIES, chat_messages
from analysis.runner.runroot import RunRootError
from analysis.trials import discover_runs, load_run_root

if not paths.parity_vectors().exists():
    pytest.skip("run `make data` first", allow_module_level=True)

FIRST_FOUR = ",".join(
    sorted(json.loads(paths.parity_vectors().read_text())["scenarios"], key=lambda r: r["id"])[i][
        "id"
    ]
    for i in range(4)
)


def _run(root: Path, *extra: str, gate: str = "always-hold") -> int:
    return main(["--gate", gate, "--out", str(root), "--scenarios", FIRST_FOUR, "--no-progress",
                 "--trials", "2", *extra])  # fmt: skip


def _snapshot(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _one_error_line(capsys, *needles: str) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: ")
    for needle in needles:
        assert needle in err
    return err


def test_a_resume_with_other_trials_is_refused_and_the_root_stays_loadable(
    tmp_path: Path, capsys
) -> None:
    root = tmp_path / "root"
    assert _run(root) == 0
    before = _snapshot(root)
    capsys.readouterr()
    assert _run(root, "--trials", "3") == 2
    _one_error_line(capsys, str(root / "RUN_PLAN.json"), "trials per cell", "3", "2")
    assert _snapshot(root) == before
    assert len(load_run_root(root)) == 4 * 2


def test_a_resume_with_another_prompt_hash_is_refused(tmp_path: Path, capsys) -> None:
    root = tmp_path / "root"
    assert _run(root) == 0
    plan_path = root / "RUN_PLAN.json"
    plan = json.loads(plan_path.read_text())
    plan["prompt_sha256"] = "0" * 64  # as a root written with another prompt would say
    plan_path.write_text(json.dumps(plan))
    capsys.readouterr()
    assert _run(root) == 2
    _one_error_line(capsys, "prompt_sha256", "0" * 64)


def test_a_shard_with_another_model_under_the_same_label_is_refused(inputs, tmp_path: Path) -> None:
    from analysis.runner.client import EndpointSettings
    from analysis.runner.gates import EndpointGate, ModelSettings

    def gate(model: str, temperature: float) -> EndpointGate:
        settings = ModelSettings(model=model, label="Shared", temperature=temperature)
        return EndpointGate(settings, EndpointSettings("http://127.0.0.1:9/v1"))

    first, second = gate("model-a", 0.0), gate("model-b", 0.0)
    assert first.variant_key == second.variant_key
    root = tmp_path / "root"
    # Shard 200/200 of 106 scenarios is empty: no request is made, only the plan is written.
    run_gate(first, root, inputs=inputs, trials=1, shard=(200, 200), progress=False)
    for other in (second, gate("model-a", 0.7)):
        with pytest.raises(RunRootError, match="variant 'Shared' settings"):
            run_gate(other, root, inputs=inputs, trials=1, shard=(200, 200), progress=False)
    with pytest.raises(RunRootError, match="shard"):
        run_gate(first, root, inputs=inputs, trials=1, shard=(199, 200), progress=False)


def test_shards_share_a_derived_run_id_and_load_together(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    shards = [runs / "hold-1", runs / "hold-2"]
    for i, root in enumerate(shards, 1):
        assert _run(root, "--shard", f"{i}/2") == 0
    ids = {json.loads((r / "RUN_PLAN.json").read_text())["run_id"] for r in shards}
    assert len(ids) == 1 and next(iter(ids)).startswith("always-hold-")
    entries = [e for e in discover_runs(runs) if e["kind"] == "run_root"]
    assert len(entries) == 1 and sorted(entries[0]["paths"]) == shards
    trials = load_run_root(shards)
    assert len(trials) == 4 * 2 and trials["scenario_id"].nunique() == 4

    other = tmp_path / "other"
    assert _run(other, "--trials", "3") == 0  # another identity, another id
    assert json.loads((other / "RUN_PLAN.json").read_text())["run_id"] not in ids


def test_export_dedupes_identical_overlaps_and_refuses_disagreeing_ones(
    tmp_path: Path, capsys
) -> None:
    root = tmp_path / "root"
    assert _run(root) == 0
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    out = tmp_path / "trials.csv"
    assert main(["export-tidy", str(root), str(copy), str(out)]) == 0
    assert len(list(csv.DictReader(out.open()))) == 4 * 2

    trial_path = sorted(copy.glob("always-hold/*/trial-2.json"))[0]
    trial = json.loads(trial_path.read_text())
    trial["commit_permission"] = "allowed"
    trial_path.write_text(json.dumps(trial))
    capsys.readouterr()
    out.unlink()
    assert main(["export-tidy", str(root), str(copy), str(out)]) == 2
    _one_error_line(capsys, str(trial_path), "disagrees", "commit_permission")
    assert not out.exists()


def test_export_refuses_roots_of_one_label_with_different_settings(tmp_path: Path, capsys) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert _run(a, "--shard", "1/2") == 0
    assert _run(b, "--shard", "2/2", "--trials", "3") == 0
    capsys.readouterr()
    assert main(["export-tidy", str(a), str(b), str(tmp_path / "t.csv")]) == 2
    _one_error_line(capsys, "n_trials_per_cell", "not shards of one run")


@pytest.mark.parametrize("damage", [b"{not json", b"\xff\xfe garbage", b"[1, 2]", b"{}"])
def test_a_corrupt_trial_file_is_one_error_line(tmp_path: Path, capsys, damage: bytes) -> None:
    root = tmp_path / "root"
    assert _run(root) == 0
    broken = sorted(root.glob("always-hold/*/trial-1.json"))[1]
    broken.write_bytes(damage)
    capsys.readouterr()
    out = tmp_path / "t.csv"
    assert main(["export-tidy", str(root), str(out)]) == 2
    _one_error_line(capsys, str(broken))
    assert not out.exists()


def test_the_bytes_about_to_be_sent_must_hash_to_the_pins(inputs) -> None:
    scenario = inputs.scenarios[0]
    messages = chat_messages(scenario, inputs.system_prompt)
    inputs.check_messages(scenario, messages)  # the pinned bytes pass
    edited = [dict(m) for m in messages]
    edited[0]["content"] += "\n"
    with pytest.raises(PinnedInputError, match=f"scenario {scenario.id}: the system prompt"):
        inputs.check_messages(scenario, edited)
    edited = [dict(m) for m in messages]
    edited[1]["content"] = edited[1]["content"].replace("question:", "question: ")
    with pytest.raises(PinnedInputError, match="user message about to be sent"):
        inputs.check_messages(scenario, edited)


def test_a_run_refuses_inputs_whose_prompt_differs_from_the_pin(inputs, tmp_path: Path) -> None:
    tampered = replace(inputs, system_prompt=inputs.system_prompt + " ")
    with pytest.raises(PinnedInputError, match="system prompt"):
        run_gate(
            REFERENCE_POLICIES["always-hold"](), tmp_path / "r", inputs=tampered, progress=False
        )
    assert not (tmp_path / "r").exists()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("terminal", [False, True])
def test_progress_bar_only_on_a_terminal(inputs, tmp_path: Path, monkeypatch, terminal) -> None:
    stream = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    ids = FIRST_FOUR.split(",")
    run_gate(
        REFERENCE_POLICIES["always-hold"](), tmp_path, inputs=inputs, scenario_ids=ids, trials=1
    )
    assert ("trial" in stream.getvalue()) is terminal


def test_shards_with_another_temperature_under_one_label_do_not_merge(tmp_path: Path) -> None:
    from fake_openai_server import FakeOpenAIServer

    from analysis.trials import VerdictError, load_trials

    runs = tmp_path / "runs"
    with FakeOpenAIServer() as server:
        for i, temperature in ((1, "0"), (2, "0.7")):
            code = main(
                ["--gate", "endpoint", "--base-url", server.base_url, "--model", "m",
                 "--label", "Shared", "--temperature", temperature, "--shard", f"{i}/2",
                 "--scenarios", FIRST_FOUR, "--trials", "1", "--no-progress",
                 "--out", str(runs / f"shard-{i}")]
            )  # fmt: skip
            assert code == 0
    assert len(server.requests) == 4
    entries = [e for e in discover_runs(runs) if e["kind"] == "run_root"]
    assert len(entries) == 2  # two runs, not two shards of one
    with pytest.raises(VerdictError, match="Shared"):
        load_trials([runs / "shard-1", runs / "shard-2"])
    with pytest.raises(VerdictError, match="Shared"):
        load_run_root([runs / "shard-1", runs / "shard-2"])


def test_another_model_without_a_label_is_refused_unless_added_by_run_id(
    inputs, tmp_path: Path
) -> None:
    from analysis.runner.client import EndpointSettings
    from analysis.runner.gates import EndpointGate, ModelSettings

    def gate(model: str) -> EndpointGate:
        return EndpointGate(ModelSettings(model=model), EndpointSettings("http://127.0.0.1:9/v1"))

    root = tmp_path / "root"
    # Shard 200/200 of 106 scenarios is empty: no request is made, only the plan is written.
    run_gate(gate("model-a"), root, inputs=inputs, trials=1, shard=(200, 200), progress=False)
    plan = (root / "RUN_PLAN.json").read_bytes()
    with pytest.raises(RunRootError, match=r"'model-a', not 'model-b'.*--run-id"):
        run_gate(gate("model-b"), root, inputs=inputs, trials=1, shard=(200, 200), progress=False)
    assert (root / "RUN_PLAN.json").read_bytes() == plan
    run_id = json.loads(plan)["run_id"]
    run_gate(gate("model-b"), root, inputs=inputs, trials=1, shard=(200, 200), run_id=run_id,
             progress=False)  # fmt: skip
    assert json.loads((root / "RUN_PLAN.json").read_text())["planned_variants"] == [
        "model-a",
        "model-b",
    ]
