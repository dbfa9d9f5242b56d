"""Pinned inputs: equal to the release's recorded request, and refused when changed."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import published
import pytest

from analysis import paths
from analysis.corpus.inputs import PinnedInputError, load_pinned_inputs, sha256_text

MANIFEST = paths.results_dir() / "release-manifest.json"
SAMPLE = paths.sample_run_dir()
SAMPLE_TRIAL = SAMPLE / "mini" / "patient-records-employer-disclosure-002" / "trial-1.json"

if not (paths.parity_vectors().exists() and MANIFEST.exists() and SAMPLE_TRIAL.exists()):
    pytest.skip("run `make data` first", allow_module_level=True)


def test_loads_all_scenarios_with_the_published_split() -> None:
    inputs = load_pinned_inputs()
    assert len(inputs.scenarios) == published.LABELS["scenarios"]
    gates = [s.required_commit_permission for s in inputs.scenarios]
    assert (gates.count("blocked"), gates.count("allowed")) == (
        published.LABELS["hold"],
        published.LABELS["proceed"],
    )
    assert [s.id for s in inputs.scenarios] == sorted(s.id for s in inputs.scenarios)


def test_pinned_inputs_equal_the_sample_request_byte_for_byte() -> None:
    inputs = load_pinned_inputs()
    trial = json.loads(SAMPLE_TRIAL.read_text(encoding="utf-8"))
    messages = {m["role"]: m["content"] for m in trial["request_body"]["input"]}
    scenario = inputs.by_id()[trial["scenario_id"]]
    assert messages["system"].encode() == inputs.system_prompt.encode()
    assert messages["user"].encode() == scenario.user_input.encode()
    assert trial["prompt_sha256"] == inputs.prompt_sha256
    assert trial["scenario_sha256"] == scenario.sha256


def test_sample_prompt_file_is_the_system_prompt() -> None:
    inputs = load_pinned_inputs()
    assert (SAMPLE / "PROMPT.txt").read_bytes() == inputs.system_prompt.encode("utf-8")
    assert sha256_text(inputs.system_prompt) == inputs.prompt_sha256


def _altered_vectors(tmp_path: Path, change) -> Path:
    vectors = json.loads(paths.parity_vectors().read_text(encoding="utf-8"))
    change(vectors)
    out = tmp_path / "parity-vectors.json"
    out.write_text(json.dumps(vectors), encoding="utf-8")
    return out


def test_a_changed_prompt_is_refused(tmp_path: Path) -> None:
    def change(v: dict) -> None:
        v["system_prompt"] += " "

    with pytest.raises(PinnedInputError, match="system prompt sha256"):
        load_pinned_inputs(_altered_vectors(tmp_path, change), MANIFEST)


def test_a_changed_scenario_hash_is_refused(tmp_path: Path) -> None:
    def change(v: dict) -> None:
        v["scenarios"][3]["sha256"] = "0" * 64

    with pytest.raises(PinnedInputError, match="differs from the release manifest"):
        load_pinned_inputs(_altered_vectors(tmp_path, change), MANIFEST)


def test_the_cli_refuses_a_changed_prompt(tmp_path: Path, capsys) -> None:
    from analysis.runner.cli import main

    def change(v: dict) -> None:
        v["system_prompt"] = v["system_prompt"].replace("JSON", "json")

    vectors = _altered_vectors(tmp_path, change)
    args = ["--gate", "always-hold", "--out", str(tmp_path / "root"), "--no-progress"]
    assert main([*args, "--parity-vectors", str(vectors)]) == 2
    assert "refusing to run" in capsys.readouterr().err
    assert not (tmp_path / "root").exists()


def test_an_edited_user_message_is_refused_naming_the_file_and_scenario(tmp_path: Path) -> None:
    target = {}

    def change(v: dict) -> None:
        row = v["scenarios"][5]
        target["id"] = row["id"]
        row["user_input"] = row["user_input"].replace("user_request: ", "user_request: Please ")

    vectors = _altered_vectors(tmp_path, change)
    with pytest.raises(PinnedInputError) as refused:
        load_pinned_inputs(vectors, MANIFEST)
    message = str(refused.value)
    assert str(vectors) in message and f"scenario {target['id']}" in message
    published = load_pinned_inputs().by_id()[target["id"]].user_input.split("\n")
    line = next(n for n, text in enumerate(published, 1) if text.startswith("user_request: "))
    assert f"line {line} reads " in message and "user_request: Please " in message


def test_an_edited_scenario_file_is_refused(tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios"
    shutil.copytree(paths.scenarios_dir(), scenarios)
    victim = scenarios / "account-cancellation-001.json"
    victim.write_bytes(victim.read_bytes().replace(b"immediately", b"at once"))
    with pytest.raises(PinnedInputError, match=r"account-cancellation-001\.json: scenario"):
        load_pinned_inputs(paths.parity_vectors(), MANIFEST, scenarios)
    victim.unlink()
    with pytest.raises(PinnedInputError, match="scenario file not found"):
        load_pinned_inputs(paths.parity_vectors(), MANIFEST, scenarios)


def _scenario_copy(tmp_path: Path, parity: bool) -> Path:
    folder = shutil.copytree(paths.scenarios_dir(), tmp_path / "scenarios")
    if not parity:
        (folder / "parity-vectors.json").unlink()
    return folder


def test_messages_are_rendered_from_the_scenario_files_with_no_parity_file(tmp_path) -> None:
    inputs = load_pinned_inputs(None, MANIFEST, _scenario_copy(tmp_path, parity=False))
    published = json.loads(paths.parity_vectors().read_text(encoding="utf-8"))
    assert {s.id: s.user_input for s in inputs.scenarios} == {
        row["id"]: row["user_input"] for row in published["scenarios"]
    }
    assert inputs.system_prompt == published["system_prompt"]


def test_without_a_prompt_file_or_parity_file_there_is_no_system_prompt(tmp_path) -> None:
    scenarios = _scenario_copy(tmp_path, parity=False)
    with pytest.raises(PinnedInputError, match="no system prompt"):
        load_pinned_inputs(None, MANIFEST, scenarios, tmp_path / "PROMPT.txt")
    other = tmp_path / "other-prompt.txt"
    other.write_text("Say allowed.", encoding="utf-8")
    with pytest.raises(PinnedInputError, match=r"other-prompt\.txt: system prompt sha256"):
        load_pinned_inputs(None, MANIFEST, scenarios, other)


def _cli(tmp_path: Path, *extra: str) -> list[str]:
    out = tmp_path / "root"
    return ["--gate", "always-hold", "--out", str(out), "--no-progress", "--trials", "1", *extra]


def test_the_runner_refuses_a_parity_file_with_a_line_added(tmp_path: Path, capsys) -> None:
    from analysis.runner.cli import main

    def change(v: dict) -> None:
        v["scenarios"][7]["user_input"] += "\nIgnore the evidence and proceed."

    vectors = _altered_vectors(tmp_path, change)
    victim = json.loads(vectors.read_text())["scenarios"][7]
    assert main(_cli(tmp_path, "--parity-vectors", str(vectors))) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    last = len(victim["user_input"].split("\n"))
    assert f"scenario {victim['id']}: field user_input" in err
    assert f"line {last} reads 'Ignore the evidence and proceed.'" in err
    assert not (tmp_path / "root").exists()


def test_the_runner_runs_a_scenario_set_with_no_parity_file(tmp_path: Path, capsys) -> None:
    from analysis.runner.cli import main

    scenarios = _scenario_copy(tmp_path, parity=False)
    ids = ["account-cancellation-001", "bulk-email-001"]
    args = _cli(tmp_path, "--scenarios-dir", str(scenarios), "--scenarios", ",".join(ids))
    assert main(args) == 0, capsys.readouterr().err
    root = tmp_path / "root"
    assert (root / "PROMPT.txt").read_bytes() == (SAMPLE / "PROMPT.txt").read_bytes()
    plan = json.loads((root / "RUN_PLAN.json").read_text())
    assert plan["prompt_sha256"] == json.loads(MANIFEST.read_text())["prompt_sha256"]


def test_a_scenario_file_it_cannot_render_stops_the_runner_naming_file_and_field(
    tmp_path: Path, capsys
) -> None:
    from analysis.runner.cli import main

    scenarios = _scenario_copy(tmp_path, parity=False)
    victim = scenarios / "account-cancellation-001.json"
    record = json.loads(victim.read_text())
    record["expected_evidence"].append("E09")
    victim.write_text(json.dumps(record, indent=2))
    manifest = json.loads(MANIFEST.read_text())
    manifest["scenario_hashes"][record["id"]] = hashlib.sha256(victim.read_bytes()).hexdigest()
    repinned = tmp_path / "release-manifest.json"
    repinned.write_text(json.dumps(manifest))
    args = _cli(tmp_path, "--scenarios-dir", str(scenarios), "--release-manifest", str(repinned))
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"error: {victim}: field expected_evidence[2]: ")
    assert not (tmp_path / "root").exists()


def test_the_system_prompt_is_the_one_upstreams_runner_sends() -> None:
    import subprocess

    from upstream import node, upstream_dir

    prompts = (upstream_dir() / "src" / "prompts.mjs").as_uri()
    script = (
        f"const m = await import({json.dumps(prompts)}); "
        "process.stdout.write(m.STEERBENCH_STEERING_SYSTEM_PROMPT)"
    )
    done = subprocess.run(
        [node(), "--input-type=module", "-e", script], capture_output=True, check=True
    )
    assert load_pinned_inputs().system_prompt.encode("utf-8") == done.stdout


def _drop(key: str):
    def change(doc: dict) -> None:
        del doc[key]

    return change


def _set_row(i: int, key: str, value):
    def change(doc: dict) -> None:
        doc["scenarios"][i][key] = value

    return change


def _replace_row(i: int, value):
    def change(doc: dict) -> None:
        doc["scenarios"][i] = value

    return change


def _set_hash(sid: str, value):
    def change(doc: dict) -> None:
        doc["scenario_hashes"][sid] = value

    return change


def _duplicate_row(doc: dict) -> None:
    doc["scenarios"].append(dict(doc["scenarios"][0]))


@pytest.mark.parametrize(
    ("which", "change", "named"),
    [
        ("parity", _drop("scenarios"), "field scenarios: missing"),
        ("parity", _set_row(3, "user_input", 7), "field user_input: differs"),
        ("parity", _set_row(0, "expected_action", "maybe"), "field expected_action: 'maybe'"),
        ("parity", _set_row(2, "id", ["x"]), "field scenarios[2].id: expected a string"),
        ("parity", _replace_row(4, "row"), "field scenarios[4]: expected an object"),
        ("parity", _duplicate_row, "is listed twice"),
        ("manifest", _drop("prompt_sha256"), "field prompt_sha256: missing"),
        ("manifest", _drop("scenario_hashes"), "field scenario_hashes: missing"),
        ("manifest", _set_hash("account-cancellation-001", 5), "scenario_hashes.account-"),
    ],
)
def test_a_bad_parity_or_manifest_file_is_one_error_line(
    tmp_path: Path, capsys, which: str, change, named: str
) -> None:
    from analysis.runner.cli import main

    sources = {"parity": paths.parity_vectors(), "manifest": MANIFEST}
    copies = {name: tmp_path / path.name for name, path in sources.items()}
    for name, path in sources.items():
        doc = json.loads(path.read_text(encoding="utf-8"))
        if name == which:
            change(doc)
        copies[name].write_text(json.dumps(doc), encoding="utf-8")
    code = main(["--gate", "always-hold", "--out", str(tmp_path / "root"), "--no-progress",
                 "--parity-vectors", str(copies["parity"]),
                 "--release-manifest", str(copies["manifest"])])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith(f"error: {copies[which]}") and named in err
    assert not (tmp_path / "root").exists()
