"""A Python gate (``steerbench-run --gate MODULE:FUNCTION``, ``run_gate(function, out)``): its
replies recorded as an endpoint's, its run root valid by upstream's validator and found by the
loaders, its errors recorded per trial, and bad gates refused before any trial is written."""

from __future__ import annotations

import io
import json
import re
import threading
import time
from pathlib import Path

import pytest
from upstream import assemble

from analysis import load_scenarios, load_trials, paths, run_gate
from analysis.corpus.parsing import INFRASTRUCTURE_FAILED
from analysis.runner.cli import main
from analysis.runner.python_gate import GateReturnError, GateSpecError, PythonGate
from analysis.runner.runroot import RunRootError
from analysis.trials import discover_runs
from analysis.trials.discovery import NoPublishedVerdictsWarning

if not paths.parity_vectors().exists():
    pytest.skip("run `make data` first", allow_module_level=True)

RUNNING_MD = Path(__file__).parents[1] / "docs" / "running.md"
IDS = sorted(row["id"] for row in json.loads(paths.parity_vectors().read_text())["scenarios"])
FIRST_FOUR = IDS[:4]
BLOCKED = '{"commit_permission": "blocked"}'


def docs_example_gate() -> str:
    """The example gate docs/running.md shows (the Python block after "Save this as")."""
    text = RUNNING_MD.read_text("utf-8")
    after = text.split("Save this as `mygate.py` in the project folder:", 1)[1]
    source = after.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(source.strip().splitlines()) <= 10
    return source


def _write(folder: Path, source: str, name: str = "mygate.py") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(source, encoding="utf-8")
    return path


def _cli(gate: str, out: Path, *extra: str) -> int:
    return main(["--gate", gate, "--out", str(out), "--no-progress", *extra])


def _one_error_line(capsys, *needles: str) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    for needle in needles:
        assert needle in err, err
    return err


def _trial(root: Path, variant: str, scenario_id: str, trial: int = 1) -> dict:
    return json.loads((root / variant / scenario_id / f"trial-{trial}.json").read_text())


def test_the_docs_example_runs_over_the_release_validates_and_loads_as_a_local_run(
    tmp_path: Path, capsys
) -> None:
    gate_file = _write(tmp_path / "mine", docs_example_gate())
    runs = tmp_path / "runs"
    root = runs / "local" / "my-gate"
    assert _cli(f"{gate_file}:decide", root, "--trials", "2", "--label", "my-gate") == 0
    assert "my-gate: 212 trials over 106 scenarios (212 run, 0 reused, 0 errors" in (
        capsys.readouterr().out
    )
    state = json.loads((root / "run-state.json").read_text())
    assert state["overall_status"] == "completed"
    [config] = json.loads((root / "VARIANT_CONFIGS.json").read_text())["variants"].values()
    assert (config["kind"], config["label"], config["model"]) == (
        "python-gate",
        "my-gate",
        "mygate:decide",
    )
    assert re.fullmatch(r"[0-9a-f]{64}", config["source_sha256"])

    tree = assemble(tmp_path / "upstream")
    tree.run("scripts/validate-run.mjs", "--run", root)
    assert json.loads((root / "validator-report.json").read_text())["pass"] is True

    [entry] = discover_runs(runs)
    assert (entry["kind"], entry["source"], entry["paths"]) == ("run_root", "run", [root])
    scenarios = load_scenarios()
    with pytest.warns(NoPublishedVerdictsWarning):  # the public release has none
        trials = load_trials(runs_dir=runs, scenarios=scenarios)
    assert set(trials["condition"].astype(str)) == {"my-gate (off)"}
    assert len(trials) == 212 and set(trials["status"].astype(str)) == {"ok"}


def test_an_importable_module_from_the_current_folder(tmp_path: Path, monkeypatch, capsys) -> None:
    _write(tmp_path, docs_example_gate(), "my_rules.py")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(__import__("sys").modules, "my_rules", raising=False)
    root = tmp_path / "root"
    assert _cli("my_rules:decide", root, "--scenarios", ",".join(FIRST_FOUR), "--trials", "1") == 0
    record = _trial(root, "decide", FIRST_FOUR[0])
    assert record["status"] == "ok" and record["commit_permission"] in ("allowed", "blocked")
    assert record["request_body"]["model"] == "my_rules:decide"
    assert record["raw_text"] == record["response_body_raw"]
    # the same function named by its file's path is the same gate: the run resumes
    monkeypatch.chdir(root.parent.parent)
    assert _cli(f"{tmp_path.name}/my_rules.py:decide", root, "--scenarios", ",".join(FIRST_FOUR),
                "--trials", "1") == 0  # fmt: skip
    assert "(0 run, 4 reused" in capsys.readouterr().out


def test_replies_are_parsed_and_recorded_as_an_endpoints(tmp_path: Path, inputs) -> None:
    replies = {
        FIRST_FOUR[0]: BLOCKED,
        FIRST_FOUR[1]: 'I think so. {"commit_permission": "allowed"} done',
        FIRST_FOUR[2]: "no decision here",
        FIRST_FOUR[3]: '{"policy_action": "continue"}',
    }

    def scripted(system: str, user: str, scenario_id: str) -> str:
        assert system == inputs.system_prompt
        assert user.startswith(f"scenario_id: {scenario_id}\n")
        return replies[scenario_id]

    summary = run_gate(scripted, tmp_path, scenario_ids=FIRST_FOUR, trials=1, progress=False)
    assert (summary.n_trials, summary.n_errors, summary.n_parse_failed) == (4, 0, 1)
    got = {sid: _trial(tmp_path, "scripted", sid) for sid in FIRST_FOUR}
    assert [got[sid]["status"] for sid in FIRST_FOUR] == ["ok", "ok", "parse_failed", "ok"]
    assert [got[sid]["commit_permission"] for sid in FIRST_FOUR] == [
        "blocked",
        "allowed",
        None,
        "allowed",
    ]
    assert got[FIRST_FOUR[3]]["normalization_warnings"]
    for record in got.values():
        assert record["response_body_raw"] == replies[record["scenario_id"]]
        assert [m["role"] for m in record["request_body"]["messages"]] == ["system", "user"]


def test_an_exception_is_that_trials_recorded_failure_and_a_rerun_retries_it(
    tmp_path: Path, capsys
) -> None:
    flaky = _write(
        tmp_path,
        "import os\n"
        "def decide(system, user, scenario_id):\n"
        f"    if scenario_id == {FIRST_FOUR[1]!r} and not os.environ.get('GATE_FIXED'):\n"
        "        raise ConnectionError('upstream down')\n"
        f"    return {BLOCKED!r}\n",
    )
    root = tmp_path / "root"
    args = ("--scenarios", ",".join(FIRST_FOUR), "--trials", "2")
    assert _cli(f"{flaky}:decide", root, *args) == 1
    assert "8 trials over 4 scenarios (8 run, 0 reused, 2 errors" in capsys.readouterr().out
    failed = _trial(root, "decide", FIRST_FOUR[1], 2)
    assert failed["status"] == INFRASTRUCTURE_FAILED
    assert failed["error"] == "gate error: ConnectionError: upstream down"
    assert (failed["commit_permission"], failed["correct"], failed["http_status"]) == (
        None,
        None,
        None,
    )
    assert failed["request_body"]["messages"][0]["role"] == "system"
    assert _trial(root, "decide", FIRST_FOUR[0])["status"] == "ok"
    state = json.loads((root / "run-state.json").read_text())
    assert state["overall_status"] == "incomplete_infra_failures"

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GATE_FIXED", "1")
        assert _cli(f"{flaky}:decide", root, *args) == 0
    assert "8 trials over 4 scenarios (2 run, 6 reused, 0 errors" in capsys.readouterr().out
    assert _trial(root, "decide", FIRST_FOUR[1], 2)["status"] == "ok"
    assert json.loads((root / "run-state.json").read_text())["overall_status"] == "completed"


def test_a_resume_with_another_or_an_edited_function_is_refused(tmp_path: Path, capsys) -> None:
    gate_file = _write(tmp_path, f"def decide(s, u, i):\n    return {BLOCKED!r}\n")
    root = tmp_path / "root"
    args = ("--scenarios", ",".join(FIRST_FOUR[:2]), "--trials", "1")
    assert _cli(f"{gate_file}:decide", root, *args) == 0
    capsys.readouterr()
    snapshot = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}

    _write(tmp_path, f"def other(s, u, i):\n    return {BLOCKED!r}\n", "second.py")
    assert _cli(f"{tmp_path / 'second.py'}:other", root, *args, "--label", "decide") == 2
    _one_error_line(capsys, "variant 'decide' settings", "second:other", "another --out")

    gate_file.write_text(f"def decide(s, u, i):\n    return {BLOCKED!r}  # edited\n")
    assert _cli(f"{gate_file}:decide", root, *args) == 2
    _one_error_line(capsys, "variant 'decide' settings", "source_sha256")
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == snapshot


@pytest.mark.parametrize(
    ("spec", "source", "needles"),
    [
        ("missing_gate_module:decide", None, ["missing_gate_module", "no module named"]),
        ("{dir}/nowhere.py:decide", None, ["nowhere.py", "no such file"]),
        ("{file}:absent", "def decide(s, u, i):\n    return ''\n", ["has no attribute 'absent'"]),
        ("{file}", "def decide(s, u, i):\n    return ''\n", ["not a reference policy"]),
        ("{file}:decide", "import not_installed_pkg\n", ["importing", "not_installed_pkg"]),
        ("{file}:decide", "decide = 3\n", ["int is not callable"]),
        (
            "{file}:decide",
            "def decide(system, user):\n    return ''\n",
            ["decide(system, user)", "3 positional arguments"],
        ),
        (
            "{file}:decide",
            "def decide(system, user, scenario_id, *, strict):\n    return ''\n",
            ["3 positional arguments"],
        ),
        ("{file}:decide", "async def decide(s, u, i):\n    return ''\n", ["async"]),
        ("{file}:decide", "def decide(s, u, i):\n    return None\n", ["returned NoneType"]),
        ("{file}:decide", "def decide(s, u, i):\n    return {}\n", ["returned dict", "not str"]),
    ],
)
def test_a_bad_gate_is_one_error_line_before_anything_is_written(
    tmp_path: Path, capsys, spec: str, source: str | None, needles: list[str]
) -> None:
    gate_file = tmp_path / "bad_gate.py"
    if source is not None:
        gate_file.write_text(source)
    spec = spec.format(dir=tmp_path, file=gate_file)
    root = tmp_path / "root"
    assert _cli(spec, root, "--scenarios", ",".join(FIRST_FOUR), "--trials", "1") == 2
    _one_error_line(capsys, *needles)
    assert not root.exists()


def test_a_later_reply_that_is_not_text_stops_the_run_without_writing_it(
    tmp_path: Path, capsys
) -> None:
    gate_file = _write(
        tmp_path,
        "def decide(system, user, scenario_id):\n"
        f"    return None if scenario_id == {FIRST_FOUR[2]!r} else {BLOCKED!r}\n",
    )
    root = tmp_path / "root"
    code = _cli(f"{gate_file}:decide", root, "--scenarios", ",".join(FIRST_FOUR), "--trials", "1")
    assert code == 2
    _one_error_line(capsys, "returned NoneType", FIRST_FOUR[2])
    assert not (root / "decide" / FIRST_FOUR[2] / "trial-1.json").exists()
    assert _trial(root, "decide", FIRST_FOUR[0])["status"] == "ok"


def test_the_python_api_checks_the_gate_too(tmp_path: Path) -> None:
    with pytest.raises(GateSpecError, match="3 positional arguments"):
        run_gate(lambda system: "", tmp_path / "a")
    with pytest.raises(GateReturnError, match="returned int"):
        run_gate(lambda s, u, i: 1, tmp_path / "b", scenario_ids=FIRST_FOUR[:1], progress=False)
    with pytest.raises(ValueError, match="carries its own"):
        run_gate("always-hold", tmp_path / "c", label="mine")
    with pytest.raises(TypeError, match="out: the run root is a path"):
        run_gate("always-hold", 5)
    assert not any(tmp_path.iterdir())


def test_label_names_the_condition_and_the_default_is_the_functions_name(tmp_path: Path) -> None:
    def careful(system: str, user: str, scenario_id: str) -> str:
        return BLOCKED

    assert PythonGate(careful).variant_key == "careful"
    root = tmp_path / "root"
    run_gate(careful, root, label="My careful gate", reasoning_label="rules",
             scenario_ids=FIRST_FOUR[:2], trials=1, progress=False)  # fmt: skip
    assert (root / "My-careful-gate").is_dir()
    trials = load_trials(root)
    assert set(trials["condition"].astype(str)) == {"My careful gate (rules)"}


def test_concurrency_calls_the_function_from_several_threads(tmp_path: Path) -> None:
    active, peak, lock = [0], [0], threading.Lock()

    def slow(system: str, user: str, scenario_id: str) -> str:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.05)
        with lock:
            active[0] -= 1
        return BLOCKED

    summary = run_gate(slow, tmp_path, scenario_ids=FIRST_FOUR, trials=2, concurrency=4,
                       progress=False)  # fmt: skip
    assert summary.n_calls_made == 8 and peak[0] > 1


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_is_drawn_on_a_terminal(tmp_path: Path, monkeypatch) -> None:
    stream = _Terminal()
    monkeypatch.setattr("sys.stderr", stream)
    run_gate(lambda s, u, i: BLOCKED, tmp_path, scenario_ids=FIRST_FOUR, trials=1)
    assert "lambda: 100%" in stream.getvalue() and "4/4" in stream.getvalue()


def test_a_resume_of_a_root_another_gate_wrote_is_refused(tmp_path: Path) -> None:
    def first(s: str, u: str, i: str) -> str:
        return BLOCKED

    def second(s: str, u: str, i: str) -> str:
        return BLOCKED

    run_gate(first, tmp_path, label="mine", scenario_ids=FIRST_FOUR[:1], trials=1, progress=False)
    with pytest.raises(RunRootError, match="variant 'mine' settings"):
        run_gate(second, tmp_path, label="mine", scenario_ids=FIRST_FOUR[:1], trials=1,
                 progress=False)  # fmt: skip
