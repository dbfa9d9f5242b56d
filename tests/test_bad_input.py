"""Bad input, as a hostile user or a broken tool would give it: every case is one refusal
naming the file, where in it, and what is wrong; nothing is half-imported or half-built, no
lock is left, and no message line runs on.

Import cases run in-process (``import_release``); the build's cases run its loaders on a
tampered data folder; the command lines (one ``error:`` line, exit 2, Ctrl-C) run as
subprocesses, the slow ones (a build, a signal) in the slow tier.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from factories import data_copy, scenarios_frame, trial_rows, write_run_root
from release_copies import copy_release, repin, results, scenario_dir

from analysis import paths
from analysis.corpus.scenarios import ScenarioError, load_scenarios
from analysis.exploring.export import write_scenarios_detail
from analysis.files.reading import InputFileError
from analysis.files.typed import LINE_LIMIT
from analysis.release.identity import LOCK_NAME, ReleaseError
from analysis.release.importer import import_release
from analysis.scoring.leaderboard import load_conditions
from analysis.trials import VerdictError, load_run_root, load_tidy, load_trials
from analysis.trials.detail import load_scenarios_detail
from analysis.trials.schema import normalize_trials

VICTIM = "bulk-email-001"
#: The longest line any refusal may print (the printers cut each line at LINE_LIMIT).
LONGEST = LINE_LIMIT


@pytest.fixture()
def release_copy(tmp_path):
    return copy_release(tmp_path / "release")


def edit_json(path: Path, change) -> None:
    document = json.loads(path.read_text())
    document = change(document) or document
    path.write_text(json.dumps(document, indent=1))


def refused(root: Path, tmp_path: Path) -> str:
    """The import's refusal of ``root`` (re-pinned first, as the release's tooling would);
    nothing is imported."""
    repin(root)
    data = tmp_path / "data"
    with pytest.raises(ReleaseError) as caught:
        import_release(root, data)
    assert not (data / "scenarios").exists() and not paths.import_stamp(data).exists()
    message = str(caught.value)
    assert max(len(line) for line in message.splitlines()) <= LONGEST
    return message


def scenario_file(root: Path, scenario_id: str = VICTIM) -> Path:
    return scenario_dir(root) / f"{scenario_id}.json"


# --------------------------------------------------------------------------------------------
# Typed fields at import


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("expected_behavior", "proceed", "$.expected_behavior: expected an object, found a string"),
        (
            "expected_behavior",
            {"correct_action": 3},
            "$.expected_behavior.correct_action: expected",
        ),
        ("irreversibility_class", None, "$.irreversibility_class: expected a string, found null"),
        ("tags", "ops", "$.tags: expected a list or null, found a string 'ops'"),
        ("taxonomy", ["x"], "$.taxonomy: expected an object or null, found a list of 1"),
        ("title", 7, "$.title: expected a string, found an integer 7"),
    ],
)
def test_a_wrongly_typed_scenario_field_is_named_at_import(
    release_copy, tmp_path, field, value, said
):
    edit_json(scenario_file(release_copy), lambda d: d.update({field: value}))
    message = refused(release_copy, tmp_path)
    assert f"{VICTIM}.json: {said}" in message


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda m: m.update(n_trials_per_cell="five"), "$.n_trials_per_cell: expected an integer"),
        (lambda m: m.update(n_trials_per_cell=0), "$.n_trials_per_cell: expected an integer >= 1"),
        (lambda m: m.update(scenario_hashes=[]), "$.scenario_hashes: expected an object"),
        (lambda m: m.update(published_rows="all"), "$.published_rows: expected a list"),
    ],
)
def test_a_wrongly_typed_manifest_field_is_named_at_import(release_copy, tmp_path, change, said):
    edit_json(results(release_copy) / "release-manifest.json", change)
    assert f"release-manifest.json: {said}" in refused(release_copy, tmp_path)


def test_a_leaderboard_row_that_is_a_string_is_named_at_import(release_copy, tmp_path):
    edit_json(results(release_copy) / "leaderboard.json", lambda b: b["rows"].insert(1, "row"))
    message = refused(release_copy, tmp_path)
    assert "leaderboard.json: $.rows[1]: expected an object, found a string 'row'" in message


def test_gold_labels_with_a_wrongly_typed_gate_are_named_at_import(release_copy, tmp_path):
    gold = results(release_copy) / "human-validation" / "gold-labels.json"
    edit_json(gold, lambda g: g["labels"][VICTIM].update(gate_state=["blocked"]))
    message = refused(release_copy, tmp_path)
    assert f"gold-labels.json: $.labels['{VICTIM}'].gate_state: expected a string" in message


def test_a_parity_file_listing_one_scenario_twice_is_refused_at_import(release_copy, tmp_path):
    vectors = release_copy / paths.RELEASE_PARITY_VECTORS
    edit_json(vectors, lambda v: v["scenarios"].append(dict(v["scenarios"][3])))
    message = refused(release_copy, tmp_path)
    sid = json.loads(vectors.read_text())["scenarios"][3]["id"]
    assert f"parity-vectors.json: $.scenarios[106].id: '{sid}' listed twice" in message
    assert "(also at $.scenarios[3])" in message


def test_a_parity_file_naming_a_file_outside_the_set_is_refused(release_copy, tmp_path):
    vectors = release_copy / paths.RELEASE_PARITY_VECTORS
    edit_json(vectors, lambda v: v["scenarios"][0].update(file="../../../etc/passwd"))
    assert "$.scenarios[0].file: expected a plain name" in refused(release_copy, tmp_path)


def test_a_json_key_named_twice_is_refused_at_import(release_copy, tmp_path):
    file = scenario_file(release_copy)
    text = file.read_text()
    file.write_text(text.replace('"title":', '"title": "Another title", "title":', 1))
    assert f"{VICTIM}.json: key 'title' appears twice in one object" in refused(
        release_copy, tmp_path
    )


def test_a_scenario_id_that_climbs_out_of_the_set_is_refused(release_copy, tmp_path):
    outside = release_copy / "scenario-sets" / "outside.json"
    shutil.copy(scenario_file(release_copy), outside)
    manifest = results(release_copy) / "release-manifest.json"
    edit_json(manifest, lambda m: m["scenario_hashes"].update({"../outside": "0" * 64}))
    message = refused(release_copy, tmp_path)
    assert "$.scenario_hashes['../outside']: key expected a plain name" in message


def test_a_million_character_scenario_id_is_shown_cut_with_its_length(release_copy, tmp_path):
    long_id = "x" * 1_000_000
    vectors = release_copy / paths.RELEASE_PARITY_VECTORS
    edit_json(vectors, lambda v: v["scenarios"][0].update(id=long_id))
    message = refused(release_copy, tmp_path)
    assert "(1000000 characters)" in message and len(message) < 20 * LONGEST


# --------------------------------------------------------------------------------------------
# Typed fields and closed vocabularies in what the build reads


@pytest.fixture(scope="module")
def scenarios():
    return load_scenarios()


@pytest.fixture()
def results_copy(tmp_path):
    folder = tmp_path / "results"
    shutil.copytree(paths.results_dir(), folder)
    return folder


def test_a_leaderboard_row_that_is_a_string_is_named_by_the_build(results_copy, scenarios):
    edit_json(results_copy / "leaderboard.json", lambda b: b["rows"].insert(0, "row"))
    with pytest.raises(InputFileError, match=r"leaderboard\.json: \$\.rows\[0\]: expected an obj"):
        load_conditions(scenarios, results_copy)


def test_a_leaderboard_listing_one_condition_twice_is_refused(results_copy, scenarios):
    edit_json(results_copy / "leaderboard.json", lambda b: b["rows"].append(b["rows"][1]))
    with pytest.raises(InputFileError) as caught:
        load_conditions(scenarios, results_copy)
    rows = json.loads((results_copy / "leaderboard.json").read_text())["rows"]
    assert str(caught.value) == (
        f"{results_copy / 'leaderboard.json'}: $.rows[{len(rows) - 1}]: model "
        f"{rows[1]['model']!r}, reasoning {rows[1]['reasoning']!r} listed twice (also at $.rows[1])"
    )


def test_a_leaderboard_listing_one_condition_twice_is_refused_at_import(release_copy, tmp_path):
    edit_json(results(release_copy) / "leaderboard.json", lambda b: b["rows"].append(b["rows"][0]))
    message = refused(release_copy, tmp_path)
    assert "leaderboard.json: $.rows[" in message and "listed twice (also at $.rows[0])" in message


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("five", "expected an integer >= 1, found a string 'five'"),
        (5.5, "expected an integer >= 1, found a number 5.5"),
        (None, "expected an integer >= 1, found null"),
    ],
)
def test_trials_per_cell_of_another_type_is_named_by_the_build(
    results_copy, scenarios, value, said
):
    edit_json(results_copy / "release-manifest.json", lambda m: m.update(n_trials_per_cell=value))
    with pytest.raises(InputFileError) as caught:
        load_conditions(scenarios, results_copy)
    assert str(caught.value) == (
        f"{results_copy / 'release-manifest.json'}: $.n_trials_per_cell: {said}"
    )


def test_a_scenario_with_an_unknown_direction_is_refused_by_the_build(tmp_path):
    folder = tmp_path / "scenarios"
    shutil.copytree(paths.scenarios_dir(), folder)
    edit_json(folder / f"{VICTIM}.json", lambda d: d.update(taxonomy={"direction": "sideways"}))
    with pytest.raises(ScenarioError, match=r"field taxonomy.direction: unknown value 'sideways'"):
        load_scenarios(folder, paths.results_dir())


def test_a_parity_file_listing_one_scenario_twice_is_refused_by_the_build(tmp_path):
    folder = tmp_path / "scenarios"
    shutil.copytree(paths.scenarios_dir(), folder)
    edit_json(folder / "parity-vectors.json", lambda v: v["scenarios"].insert(0, v["scenarios"][5]))
    with pytest.raises(ScenarioError, match=r"\$\.scenarios\[6\]\.id: '.*' listed twice"):
        load_scenarios(folder, paths.results_dir())


def test_a_million_character_scenario_id_in_a_run_is_shown_cut(tmp_path, scenarios):
    rows = trial_rows()
    rows.loc[rows["scenario_id"] == rows["scenario_id"][0], "scenario_id"] = "y" * 1_000_000
    path = tmp_path / "trials.csv"
    rows.to_csv(path, index=False)
    with pytest.raises(VerdictError) as caught:
        load_tidy(path, scenarios=scenarios)
    assert len(str(caught.value)) < LONGEST and "(1000000 characters)" in str(caught.value)


def sample_copy(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    shutil.copytree(paths.sample_run_dir(), runs / "sample-artifacts")
    return runs


def test_a_run_plan_that_is_a_list_is_named(tmp_path):
    runs = sample_copy(tmp_path)
    (runs / "sample-artifacts" / "RUN_PLAN.json").write_text("[]")
    with pytest.raises(VerdictError, match=r"RUN_PLAN\.json: \$: expected an object, found a list"):
        load_trials(runs_dir=runs)


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("n_trials_per_cell", "five", "$.n_trials_per_cell: expected an integer >= 1 or null"),
        ("planned_variants", "mini", "$.planned_variants: expected a list or null"),
        ("run_id", ["a"], "$.run_id: expected a string or null"),
    ],
)
def test_a_wrongly_typed_run_plan_field_is_named(tmp_path, field, value, said):
    runs = sample_copy(tmp_path)
    edit_json(runs / "sample-artifacts" / "RUN_PLAN.json", lambda p: p.update({field: value}))
    with pytest.raises(VerdictError) as caught:
        load_trials(runs_dir=runs)
    assert f"RUN_PLAN.json: {said}" in str(caught.value)


def test_a_variant_that_climbs_out_of_its_run_root_is_refused_and_never_read(tmp_path):
    ids = list(scenarios_frame()["scenario_id"])
    root = write_run_root(tmp_path / "runs" / "mine", {ids[0]: ["allowed"] * 5})
    outside = write_run_root(tmp_path / "elsewhere", {ids[1]: ["blocked"] * 5}, variant="v1")
    escape = os.path.relpath(outside / "v1", root)
    edit_json(root / "RUN_PLAN.json", lambda p: p.update(planned_variants=["v1", escape]))
    with pytest.raises(VerdictError, match=r"\$\.planned_variants\[1\]: expected a plain name"):
        load_run_root(root)


def test_a_variant_folder_linked_outside_its_run_root_is_refused(tmp_path):
    ids = list(scenarios_frame()["scenario_id"])
    root = write_run_root(tmp_path / "mine", {ids[0]: ["allowed"] * 5})
    outside = write_run_root(tmp_path / "elsewhere", {ids[1]: ["blocked"] * 5}, variant="v2")
    (root / "v2").symlink_to(outside / "v2")
    edit_json(root / "RUN_PLAN.json", lambda p: p.update(planned_variants=["v1", "v2"]))
    with pytest.raises(VerdictError, match=r"RUN_PLAN\.json: variant 'v2' leads outside"):
        load_run_root(root)


@pytest.mark.parametrize("status", ["exploded", "OK", ""])
def test_an_unknown_status_in_a_tidy_table_is_refused_naming_the_row(tmp_path, status):
    rows = trial_rows()
    rows.loc[7, "status"] = status
    path = tmp_path / "trials.csv"
    rows.to_csv(path, index=False)
    if status == "":  # an empty cell is no status: ok
        assert len(load_tidy(path)) == len(rows)
        return
    with pytest.raises(VerdictError) as caught:
        load_tidy(path)
    row = rows.loc[7]
    assert str(caught.value) == (
        f"{path}: row 8 (scenario {row['scenario_id']!r}, {row['model']} ({row['reasoning']}), "
        f"trial {row['trial']}): status {status!r} is not one of ok, parse_failed, "
        "provider_filtered, infrastructure_failed, truncated"
    )


def test_unknown_statuses_are_counted_when_there_are_several():
    rows = trial_rows()
    rows.loc[[1, 4], "status"] = ["exploded", "imploded"]
    with pytest.raises(VerdictError, match=r"'exploded' .* \(2 unknown values in 2 rows\)"):
        normalize_trials(rows, origin="t")


def test_an_unknown_status_in_a_trial_file_is_refused(tmp_path):
    ids = list(scenarios_frame()["scenario_id"])
    root = write_run_root(tmp_path / "run", {ids[0]: ["allowed"] * 5})
    edit_json(root / "v1" / ids[0] / "trial-3.json", lambda t: t.update(status="exploded"))
    with pytest.raises(VerdictError, match=r"row 3 .*status 'exploded' is not one of"):
        load_run_root(root)


def test_a_wrongly_typed_trial_file_is_named(tmp_path):
    ids = list(scenarios_frame()["scenario_id"])
    root = write_run_root(tmp_path / "run", {ids[0]: ["allowed"] * 5})
    trial = root / "v1" / ids[0] / "trial-2.json"
    edit_json(trial, lambda t: t.update(commit_permission=["allowed"]))
    with pytest.raises(VerdictError, match=r"trial-2\.json: \$\.commit_permission: expected a"):
        load_run_root(root)


def test_an_unknown_status_or_a_repeated_scenario_in_the_verdict_file_is_refused(tmp_path):
    frame = normalize_trials(trial_rows(), origin="t")
    path = write_scenarios_detail(frame, scenarios_frame(), tmp_path / "scenarios-detail.json")
    document = json.loads(path.read_text())
    document["scenarios"][0]["model_verdicts"][0]["trials"][1]["status"] = "exploded"
    path.write_text(json.dumps(document))
    with pytest.raises(VerdictError, match=r"status 'exploded' is not one of"):
        load_scenarios_detail(path)
    document["scenarios"][0]["model_verdicts"][0]["trials"][1]["status"] = "ok"
    document["scenarios"].append(document["scenarios"][0])
    path.write_text(json.dumps(document))
    with pytest.raises(VerdictError, match=r"\$\.scenarios\[\d+\]\.id: '.*' listed twice"):
        load_scenarios_detail(path)


def test_an_inspect_archive_member_climbing_out_is_refused(tmp_path):
    from analysis.trials.inspect_log import load_inspect_log

    log = tmp_path / "2026-05-01T12-00-00_steerbench-work_x.eval"
    with zipfile.ZipFile(log, "w") as archive:
        archive.writestr("header.json", "{}")
        archive.writestr("../../outside.json", "{}")
    with pytest.raises(VerdictError, match=r"member '\.\./\.\./outside\.json' leads outside"):
        load_inspect_log(log)


# --------------------------------------------------------------------------------------------
# The command lines: one error line, exit 2, no traceback, no lock


def command(module: str, *args: str, data: Path, release: Path | None = None, **popen):
    env = {**os.environ, "STEERBENCH_DATA_DIR": str(data), "PYTHONUNBUFFERED": "1"}
    if release is not None:
        env["RELEASE_DIR"] = str(release)
    return [sys.executable, "-m", module, *args], {
        "env": env,
        "cwd": paths.PROJECT_ROOT,
        "text": True,
        **popen,
    }


def run(module: str, *args: str, data: Path, release: Path | None = None):
    argv, options = command(module, *args, data=data, release=release, capture_output=True)
    return subprocess.run(argv, timeout=600, **options)


def one_error_line(result) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: ") and max(map(len, lines)) <= LONGEST + len("error: ")
    return result.stderr


def test_make_data_refuses_a_wrongly_typed_field_in_one_line_and_leaves_no_lock(
    release_copy, tmp_path
):
    edit_json(scenario_file(release_copy), lambda d: d.update(expected_behavior="proceed"))
    repin(release_copy)
    data = tmp_path / "data"
    result = run("analysis.paper.make", "data", data=data, release=release_copy)
    said = one_error_line(result)
    assert f"{VICTIM}.json: $.expected_behavior: expected an object" in said
    assert len(said.splitlines()) == 1
    assert not (data / LOCK_NAME).exists() and not (data / "scenarios").exists()


def test_a_full_disk_during_the_import_names_the_first_file_and_counts_the_others(
    release_copy, tmp_path, monkeypatch, capsys
):
    from analysis.paper import make

    def full(source, target, *args, **kwargs):
        problems = [(f"{source}/f{n}", f"{target}/f{n}", "[Errno 28] No space") for n in range(300)]
        raise shutil.Error(problems)

    monkeypatch.setattr(shutil, "copytree", full)
    monkeypatch.setenv("STEERBENCH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RELEASE_DIR", str(release_copy))
    assert make.main(["data"]) == 2
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 1 and said[0].startswith("error: ") and len(said[0]) < 300
    assert said[0].endswith("/f0: [Errno 28] No space (and 299 other files)")
    assert not (tmp_path / "data" / LOCK_NAME).exists()


@pytest.mark.slow  # a build: kernels start
def test_the_build_refuses_a_leaderboard_row_that_is_a_string_in_one_line(tmp_path):
    data = data_copy(tmp_path)
    board = data / "runs" / paths.release() / "leaderboard.json"
    edit_json(board, lambda b: b["rows"].insert(2, "x" * 100_000))
    paper = tmp_path / "paper"
    result = run("analysis.paper.build", "--paper-dir", str(paper), data=data)
    said = one_error_line(result)
    assert "leaderboard.json: $.rows[2]: expected an object, found a string" in said
    assert "(100000 characters)" in said
    assert not paper.exists() and not (data / LOCK_NAME).exists()
    assert not paper.with_name("paper.staging").exists()


def _interruptible() -> None:
    """Ctrl-C as a terminal delivers it (a process started from one that ignores SIGINT,
    such as a pytest-xdist worker, would inherit the ignoring)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt_when(process: subprocess.Popen, ready) -> tuple[int, str]:
    deadline = time.monotonic() + 120
    while not ready():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    return process.returncode, err


@pytest.mark.slow  # a build, interrupted once its first notebook ran
def test_ctrl_c_during_a_build_prints_one_line(tmp_path):
    data = data_copy(tmp_path)
    paper = tmp_path / "paper"
    argv, options = command("analysis.paper.build", "--paper-dir", str(paper), data=data)
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_interruptible, **options
    )
    first = process.stdout.readline()
    assert first.strip().endswith("ok"), first
    code, err = _interrupt_when(process, lambda: True)
    assert code == 130
    assert err.splitlines() == [f"interrupted; nothing was written to {paper}"]
    assert not paper.exists() and not paper.with_name("paper.staging").exists()
    assert not (data / LOCK_NAME).exists()


@pytest.mark.slow  # an import, interrupted while it copies
def test_ctrl_c_during_an_import_prints_one_line_and_keeps_the_previous_import(
    release_copy, tmp_path
):
    data = tmp_path / "data"
    import_release(release_copy, data)
    before = (data / ".imported").read_text()
    board = results(release_copy) / "leaderboard.json"
    board.write_text(board.read_text() + "\n")
    repin(release_copy)
    argv, options = command("analysis.paper.make", "data", data=data, release=release_copy)
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_interruptible, **options
    )
    code, err = _interrupt_when(process, lambda: (data / ".import-staging").exists())
    assert code == 130, err
    assert len(err.splitlines()) == 1 and err.startswith("interrupted; ")
    assert "Traceback" not in err
    assert not (data / LOCK_NAME).exists() and not (data / ".import-staging").exists()
    again = run("analysis.paper.make", "data", data=data, release=release_copy)
    assert again.returncode == 0, again.stderr
    assert (data / ".imported").read_text() != before
    assert (data / "runs" / paths.release() / "leaderboard.json").read_text() == board.read_text()


def test_a_build_stamp_listing_an_output_outside_paper_reuses_nothing(tmp_path):
    from analysis.files.digests import file_sha256
    from analysis.paper.build.carry_over import STAMP, reusable_notebooks

    notebook = tmp_path / "01-x.ipynb"
    notebook.write_text("{}")
    paper = tmp_path / "paper"
    (paper / "tables").mkdir(parents=True)
    (paper / "tables" / "t.csv").write_text("a\n")
    (tmp_path / "outside.csv").write_text("secret\n")

    def stamp(outputs: list[str]) -> dict:
        record = {"sha256": file_sha256(notebook), "outputs": outputs}
        (paper / STAMP).write_text(
            json.dumps({"shared_digest": "d", "notebooks": {notebook.name: record}})
        )
        return reusable_notebooks(paper, "d", [notebook])

    assert list(stamp(["tables/t.csv"])) == [notebook.name]
    assert stamp(["tables/t.csv", "../outside.csv"]) == {}
    assert stamp([str(tmp_path / "outside.csv")]) == {}
