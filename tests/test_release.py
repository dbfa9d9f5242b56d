"""Importing the release: every byte the analysis reads is pinned or cross-checked, each
kind of tampering is refused by name, and an import is all or nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from release_copies import (
    SCENARIO_SET,
    VERSION,
    copy_release,
    drop_optional_parts,
    rename_version,
    repin,
    results,
    scenario_dir,
    sha256,
)

from analysis import paths
from analysis.release import importer as release
from analysis.release.identity import ReleaseError, locate_release, release_identity
from analysis.release.importer import import_release, recover_import, verify_release

VICTIM = "bulk-email-001"


@pytest.fixture()
def release_copy(tmp_path):
    return copy_release(tmp_path / "release")


def run_module(module, *args, data, release_dir=None):
    env = {**os.environ, "STEERBENCH_DATA_DIR": str(data)}
    if release_dir is not None:
        env["RELEASE_DIR"] = str(release_dir)
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=paths.PROJECT_ROOT,
    )


def refused(release_copy, tmp_path, pattern):
    data = tmp_path / "data"
    with pytest.raises(ReleaseError, match=pattern) as caught:
        import_release(release_copy, data)
    assert not (data / "scenarios").exists()
    assert not paths.import_stamp(data).exists()
    return str(caught.value)


def test_real_release_verifies_every_file(tmp_path):
    root = paths.release_dir()
    found = verify_release(root)
    assert found.mismatched == []
    assert f"results/{VERSION}/scenarios-detail.json" in found.absent
    manifest = json.loads((results(root) / "release-manifest.json").read_text())
    scenario_files = [v for v in found.verified if v.startswith("scenario-sets/")]
    assert len(scenario_files) == len(manifest["scenario_hashes"])
    pinned = {
        (listing.parent / line.split(maxsplit=1)[1]).resolve()
        for listing in results(root).rglob("checksums.txt")
        for line in listing.read_text().splitlines()
    }
    results_files = [v for v in found.verified if v.startswith("results/")]
    assert len(results_files) + len(found.absent) == len(pinned)
    assert all(u.startswith("sample-artifacts/") for u in found.unverified)


def test_import_copies_into_data_and_stamps_last(release_copy, tmp_path):
    data = tmp_path / "data"
    found = import_release(release_copy, data)
    scenario_ids = json.loads((results(release_copy) / "release-manifest.json").read_text())
    for scenario_id in scenario_ids["scenario_hashes"]:
        assert (data / "scenarios" / f"{scenario_id}.json").is_file()
    assert (data / "scenarios" / "parity-vectors.json").is_file()
    assert (data / "runs" / VERSION / "leaderboard.json").is_file()
    assert (data / "runs" / "sample-artifacts" / "mini").is_dir()
    stamp = paths.imported_release(data)
    assert stamp["release_dir"] == str(release_copy)
    assert stamp["release_digest"] == found.digest == release_identity(locate_release(release_copy))
    assert (stamp["release"], stamp["scenario_set"]) == (VERSION, SCENARIO_SET)
    assert not (data / release.STAGING).exists() and not (data / release.PREVIOUS).exists()


def test_corrupt_scenario_is_refused_by_name(release_copy, tmp_path):
    victim = scenario_dir(release_copy) / f"{VICTIM}.json"
    victim.write_text(victim.read_text().replace("e", "E", 1))
    message = refused(release_copy, tmp_path, rf"{VICTIM}\.json: sha256")
    assert str(release_copy) in message and "nothing was imported" in message


def test_corrupt_results_file_is_refused_by_name(release_copy, tmp_path):
    board = results(release_copy) / "leaderboard.json"
    board.write_text(board.read_text() + " ")
    refused(release_copy, tmp_path, rf"results/{VERSION}/leaderboard\.json: sha256")


def test_deleting_a_checksums_line_does_not_unpin_the_file(release_copy, tmp_path):
    listing = results(release_copy) / "checksums.txt"
    lines = [line for line in listing.read_text().splitlines() if "repair-summary" not in line]
    listing.write_text("\n".join(lines) + "\n")
    refused(release_copy, tmp_path, r"repair-summary\.json: not covered by any checksums\.txt")


def test_nested_checksums_line_deleted_is_refused(release_copy, tmp_path):
    nested = results(release_copy) / "annotation-audit" / "checksums.txt"
    lines = [line for line in nested.read_text().splitlines() if "run-summary" not in line]
    nested.write_text("\n".join(lines) + "\n")
    repin(release_copy)  # the top checksums.txt pins the edited listing again
    lines = [line for line in (results(release_copy) / "checksums.txt").read_text().splitlines()]
    assert any("annotation-audit/run-summary.json" in line for line in lines)
    (results(release_copy) / "checksums.txt").write_text(
        "\n".join(line for line in lines if "annotation-audit/run-summary" not in line) + "\n"
    )
    refused(release_copy, tmp_path, r"run-summary\.json: not covered by any checksums\.txt")


def test_scenario_the_manifest_does_not_pin_is_refused(release_copy, tmp_path):
    extra = scenario_dir(release_copy) / "extra-001.json"
    extra.write_text((scenario_dir(release_copy) / f"{VICTIM}.json").read_text())
    refused(release_copy, tmp_path, r"extra-001\.json: not pinned by release-manifest\.json")


def manifest_line(root, scenario_id):
    path = scenario_dir(root) / "MANIFEST.md"
    lines = path.read_text().splitlines()
    index = next(n for n, line in enumerate(lines) if line.startswith(f"| {scenario_id} |"))
    return path, lines, index


def test_edited_manifest_md_domain_is_refused_naming_scenario_and_field(release_copy, tmp_path):
    path, lines, index = manifest_line(release_copy, VICTIM)
    cells = lines[index].split(" | ")
    assert cells[4] == "marketing-ops"  # the normalised domain of this calibration row
    cells[4] = "legal"
    lines[index] = " | ".join(cells)
    path.write_text("\n".join(lines) + "\n")
    message = refused(release_copy, tmp_path, rf"MANIFEST\.md: scenario {VICTIM}: field domain")
    assert "'legal'" in message and "'marketing-ops'" in message


def test_edited_manifest_md_expected_action_is_refused(release_copy, tmp_path):
    path, lines, index = manifest_line(release_copy, VICTIM)
    lines[index] = lines[index].replace(" | block | ", " | proceed | ", 1)
    path.write_text("\n".join(lines) + "\n")
    refused(release_copy, tmp_path, rf"scenario {VICTIM}: field expected_action")


def test_edited_pattern_is_refused(release_copy, tmp_path):
    path = scenario_dir(release_copy) / "_SCENARIO_PATTERNS.json"
    document = json.loads(path.read_text())
    scenario_id = sorted(document["scenarios"])[0]
    document["scenarios"][scenario_id]["boundary_pattern"] = "clean_control"
    if (
        scenario_id
        and json.loads(path.read_text())["scenarios"][scenario_id]["boundary_pattern"]
        == "clean_control"
    ):
        document["scenarios"][scenario_id]["boundary_pattern"] = "risk_resolved"
    path.write_text(json.dumps(document))
    refused(release_copy, tmp_path, rf"scenario {scenario_id}: field boundary_pattern")


def edit_vector(root, change):
    path = root / paths.RELEASE_PARITY_VECTORS
    document = json.loads(path.read_text())
    vector = next(v for v in document["scenarios"] if v["id"] == VICTIM)
    change(vector)
    path.write_text(json.dumps(document))


def test_edited_parity_user_input_is_refused(release_copy, tmp_path):
    edit_vector(
        release_copy,
        lambda v: v.update(user_input=v["user_input"].replace("user_request: ", "user_request: X")),
    )
    refused(release_copy, tmp_path, rf"parity-vectors\.json: scenario {VICTIM}: field user_input")


def test_edited_parity_expected_action_is_refused(release_copy, tmp_path):
    edit_vector(release_copy, lambda v: v.update(expected_action="proceed"))
    refused(release_copy, tmp_path, rf"scenario {VICTIM}: field expected_action")


def test_edited_parity_system_prompt_is_refused(release_copy, tmp_path):
    path = release_copy / paths.RELEASE_PARITY_VECTORS
    document = json.loads(path.read_text())
    document["system_prompt"] += " "
    path.write_text(json.dumps(document))
    refused(release_copy, tmp_path, r"field system_prompt")


def test_unknown_expected_action_is_refused_naming_the_file(release_copy, tmp_path):
    victim = scenario_dir(release_copy) / f"{VICTIM}.json"
    record = json.loads(victim.read_text())
    record["expected_behavior"]["correct_action"] = "shrug"
    victim.write_text(json.dumps(record, indent=2))
    repin(release_copy)
    message = refused(release_copy, tmp_path, r"unknown expected action 'shrug'")
    assert f"{VICTIM}.json" in message


MIRROR = "apple-card-mirror-credit-extension-tier-b-004"  # a row with a taxonomy


@pytest.mark.parametrize(
    ("scenario", "field", "value"),
    [(VICTIM, "irreversibility_class", "catastrophic"), (MIRROR, "taxonomy.direction", "mixed")],
)
def test_an_unknown_class_or_direction_is_refused_naming_file_and_field(
    release_copy, tmp_path, scenario, field, value
):
    victim = scenario_dir(release_copy) / f"{scenario}.json"
    record = json.loads(victim.read_text())
    parent, _, key = field.rpartition(".")
    (record[parent] if parent else record)[key] = value
    victim.write_text(json.dumps(record, indent=2))
    repin(release_copy)
    message = refused(release_copy, tmp_path, f"field {field}: unknown value '{value}'")
    assert f"{scenario}.json: scenario '{scenario}'" in message


@pytest.mark.parametrize(
    "relative",
    [f"scenario-sets/{SCENARIO_SET}/{VICTIM}.json", f"results/{VERSION}/leaderboard.json"],
)
def test_non_utf8_bytes_are_refused_naming_the_file(release_copy, tmp_path, relative):
    victim = release_copy / relative
    victim.write_bytes(victim.read_bytes().replace(b"e", b"\xff", 1))
    repin(release_copy)
    refused(release_copy, tmp_path, rf"{relative}: not UTF-8 text")


def test_non_utf8_checksums_is_refused_naming_the_file(release_copy, tmp_path):
    listing = results(release_copy) / "checksums.txt"
    listing.write_bytes(listing.read_bytes() + b"\xff\n")
    refused(release_copy, tmp_path, r"checksums\.txt: not UTF-8 text")


def test_empty_release_folder_is_one_error_line(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_module(
        "analysis.release.importer", "import", data=tmp_path / "data", release_dir=empty
    )
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {empty}: not a SteerBench-Work release")
    assert "Traceback" not in result.stderr
    assert "RELEASE_DIR=" in result.stderr


def test_missing_release_tells_how_to_set_release_dir(tmp_path):
    missing = tmp_path / "no-such-release"
    result = run_module("analysis.release.importer", "import", data=tmp_path, release_dir=missing)
    assert result.returncode == 2
    assert str(missing) in result.stderr and "RELEASE_DIR=" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_release_names_its_own_version_and_scenario_set(release_copy, tmp_path):
    rename_version(release_copy, "v2027-01", "steerbench-work-2027-01")
    data = tmp_path / "data"
    import_release(release_copy, data)
    assert (data / "runs" / "v2027-01" / "leaderboard.json").is_file()
    stamp = paths.imported_release(data)
    assert (stamp["release"], stamp["scenario_set"]) == ("v2027-01", "steerbench-work-2027-01")


@pytest.mark.slow
def test_switching_releases_a_b_a_reimports_each_time(tmp_path):
    a = copy_release(tmp_path / "a")
    b = copy_release(tmp_path / "b")
    rename_version(b, "v2027-01", "steerbench-work-2027-01")
    data = tmp_path / "data"
    for root, version, gone in (
        (a, VERSION, None),
        (b, "v2027-01", VERSION),
        (a, VERSION, "v2027-01"),
    ):
        result = run_module("analysis.paper.make", "data", data=data, release_dir=root)
        assert result.returncode == 0, result.stderr
        assert "imported." in result.stdout
        stamp = paths.imported_release(data)
        assert stamp["release_dir"] == str(root) and stamp["release"] == version
        assert (data / "runs" / version / "leaderboard.json").is_file()
        if gone:
            assert not (data / "runs" / gone).exists()
    again = run_module("analysis.paper.make", "data", data=data, release_dir=a)
    assert again.returncode == 0 and "is imported." in again.stdout


def test_changed_content_at_the_same_location_reimports(release_copy, tmp_path):
    data = tmp_path / "data"
    import_release(release_copy, data)
    before = paths.imported_release(data)["release_digest"]
    board = results(release_copy) / "leaderboard.json"
    document = json.loads(board.read_text())
    document["rows"][0]["note"] = "edited"
    board.write_text(json.dumps(document))
    repin(release_copy)
    os.utime(board, ns=(0, 0))  # old timestamps: only the content tells
    result = run_module("analysis.paper.make", "data", data=data, release_dir=release_copy)
    assert result.returncode == 0, result.stderr
    assert paths.imported_release(data)["release_digest"] != before
    assert json.loads((data / "runs" / VERSION / "leaderboard.json").read_text()) == document


def test_make_data_refuses_a_tampered_release_in_one_error_line(release_copy, tmp_path):
    victim = scenario_dir(release_copy) / f"{VICTIM}.json"
    victim.write_text(victim.read_text() + " ")
    data = tmp_path / "data"
    result = run_module("analysis.paper.make", "data", data=data, release_dir=release_copy)
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and f"{VICTIM}.json" in result.stderr
    assert "Traceback" not in result.stderr


def test_refused_import_leaves_the_previous_one_in_place(release_copy, tmp_path):
    data = tmp_path / "data"
    import_release(release_copy, data)
    stamp = paths.import_stamp(data).read_text()
    victim = scenario_dir(release_copy) / f"{VICTIM}.json"
    victim.write_text(victim.read_text() + " ")
    with pytest.raises(ReleaseError):
        import_release(release_copy, data)
    assert paths.import_stamp(data).read_text() == stamp
    assert sha256(data / "scenarios" / f"{VICTIM}.json") != sha256(victim)
    assert not (data / release.STAGING).exists()


def test_import_interrupted_while_swapping_rolls_back(release_copy, tmp_path, monkeypatch):
    data = tmp_path / "data"
    import_release(release_copy, data)
    stamp = paths.import_stamp(data).read_text()
    listing = sorted(p.name for p in (data / "scenarios").iterdir())
    board = results(release_copy) / "leaderboard.json"
    board.write_text(board.read_text() + "\n")
    repin(release_copy)

    write_json = release._write_json

    def crash(path, record):
        if path == paths.import_stamp(data):
            raise KeyboardInterrupt
        write_json(path, record)

    monkeypatch.setattr(release, "_write_json", crash)  # dies after the parts moved in
    with pytest.raises(KeyboardInterrupt):
        import_release(release_copy, data)
    monkeypatch.undo()
    assert not paths.import_stamp(data).exists()  # the half-swapped import is not "imported"
    assert recover_import(data)
    assert paths.import_stamp(data).read_text() == stamp
    assert sorted(p.name for p in (data / "scenarios").iterdir()) == listing
    assert sha256(data / "runs" / VERSION / "leaderboard.json") != sha256(board)


@pytest.mark.slow  # a killed import process, started with its imports: seconds
def test_killed_import_leaves_a_usable_import(release_copy, tmp_path):
    data = tmp_path / "data"
    import_release(release_copy, data)
    board = results(release_copy) / "leaderboard.json"
    board.write_text(board.read_text() + "\n")
    repin(release_copy)
    env = {**os.environ, "STEERBENCH_DATA_DIR": str(data), "RELEASE_DIR": str(release_copy)}
    for delay in (0.05, 0.3, 0.6):
        process = subprocess.Popen(
            [sys.executable, "-m", "analysis.paper.make", "data"],
            env=env,
            cwd=paths.PROJECT_ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait()
        result = run_module("analysis.paper.make", "data", data=data, release_dir=release_copy)
        assert result.returncode == 0, result.stderr
        assert sha256(data / "runs" / VERSION / "leaderboard.json") == sha256(board)
        hashes = json.loads((results(release_copy) / "release-manifest.json").read_text())
        for scenario_id, digest in hashes["scenario_hashes"].items():
            assert sha256(data / "scenarios" / f"{scenario_id}.json") == digest


@pytest.mark.slow  # two imports, each making the reference policies' trials afresh (2 s)
def test_an_import_remakes_the_reference_policies_for_its_release(release_copy, tmp_path):
    import shutil

    from analysis.runner.reference import reference_table

    data = tmp_path / "data"
    committed = reference_table()
    table = reference_table(data)
    table.parent.mkdir(parents=True)
    shutil.copy(committed, table)
    manifest_path = results(release_copy) / "release-manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["n_trials_per_cell"] = 3
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    repin(release_copy)
    found = import_release(release_copy, data)
    assert f"reference policies remade for this release: {table}" in found.summary()
    rows = table.read_text().splitlines()[1:]
    assert len(rows) == 3 * len(manifest["scenario_hashes"]) * 3
    assert {row.split(",")[3] for row in rows} == {"1", "2", "3"}
    again = import_release(paths.release_dir(), data)  # the committed table, byte for byte
    assert again.reference_policies and table.read_bytes() == committed.read_bytes()
    assert not import_release(paths.release_dir(), data).reference_policies


def test_an_import_leaves_reference_policies_it_cannot_remake_as_they_were(
    release_copy, tmp_path, monkeypatch
):
    from analysis.corpus import inputs
    from analysis.runner.reference import reference_table

    def unreadable(*args):
        raise inputs.PinnedInputError("parity-vectors.json: cannot be read")

    data = tmp_path / "data"
    table = reference_table(data)
    table.parent.mkdir(parents=True)
    table.write_text("scenario_id,model\n")  # whatever the folder held
    monkeypatch.setattr(inputs, "load_pinned_inputs", unreadable)
    summary = import_release(release_copy, data).summary()
    assert "reference policies not remade (parity-vectors.json: cannot be read)" in summary
    assert f"{table} is left as it was" in summary
    assert table.read_text() == "scenario_id,model\n"
    assert paths.import_stamp(data).exists()  # the release itself is in


def test_a_part_the_checksums_pin_and_the_release_lacks_is_refused(release_copy, tmp_path):
    (results(release_copy) / "human-validation" / "gold-labels.json").unlink()
    message = refused(release_copy, tmp_path, r"human-validation/gold-labels\.json: missing")
    assert f"though results/{VERSION}/checksums.txt pins it" in message


def test_a_part_the_nested_checksums_pin_and_the_release_lacks_is_refused(release_copy, tmp_path):
    (results(release_copy) / "annotation-audit" / "run-summary.json").unlink()
    message = refused(release_copy, tmp_path, r"annotation-audit/run-summary\.json: missing")
    assert f"though results/{VERSION}/annotation-audit/checksums.txt pins it" in message


def test_a_release_without_the_optional_parts_is_imported(release_copy, tmp_path):
    removed = drop_optional_parts(release_copy)
    assert f"results/{VERSION}/human-validation" in removed and "sample-artifacts" in removed
    data = tmp_path / "data"
    found = import_release(release_copy, data)
    assert found.absent == [f"results/{VERSION}/scenarios-detail.json"]  # pinned, withheld
    assert found.unverified == []
    imported = data / "runs" / VERSION
    assert sorted(p.name for p in imported.iterdir()) == [
        "checksums.txt",
        "leaderboard.json",
        "release-manifest.json",
    ]
    assert not (data / "runs" / paths.SAMPLE_RUN_NAME).exists()
