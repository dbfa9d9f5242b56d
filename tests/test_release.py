"""Importing the release: checksums verified, refusals name the file, nothing half-copied."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from analysis import paths
from analysis.release import ReleaseError, import_release, verify_release


@pytest.fixture()
def release_copy(tmp_path):
    """A writable copy of the release folder."""
    copy = tmp_path / "release"
    shutil.copytree(paths.release_dir(), copy)
    return copy


def test_release_verifies_and_reports_absent_files():
    found = verify_release(paths.release_dir())
    assert found.mismatched == []
    assert "results/v2026-05/scenarios-detail.json" in found.absent
    assert len([v for v in found.verified if v.startswith("scenario-sets/")]) == 106


def test_import_copies_into_data(release_copy, tmp_path):
    data = tmp_path / "data"
    import_release(release_copy, data)
    assert len(list((data / "scenarios").glob("*-*.json"))) == 106 + 1  # + parity vectors
    assert (data / "runs" / "v2026-05" / "leaderboard.json").is_file()
    assert (data / "runs" / "sample-artifacts" / "mini").is_dir()
    assert (data / ".imported").is_file()


def test_corrupt_scenario_is_refused_by_name(release_copy, tmp_path):
    victim = release_copy / paths.RELEASE_SCENARIO_SUBDIR / "bulk-email-001.json"
    victim.write_text(victim.read_text().replace("e", "E", 1))
    with pytest.raises(ReleaseError, match=r"bulk-email-001\.json: sha256") as refused:
        import_release(release_copy, tmp_path / "data")
    assert "nothing was imported" in str(refused.value)
    assert not (tmp_path / "data" / "scenarios").exists()


def test_corrupt_results_file_is_refused_by_name(release_copy, tmp_path):
    board = release_copy / paths.RELEASE_RESULTS_SUBDIR / "leaderboard.json"
    board.write_text(board.read_text() + " ")
    with pytest.raises(ReleaseError, match=r"results/v2026-05/leaderboard\.json: sha256"):
        import_release(release_copy, tmp_path / "data")


def test_missing_release_tells_how_to_set_release_dir(tmp_path):
    missing = tmp_path / "no-such-release"
    result = subprocess.run(
        [sys.executable, "-m", "analysis.release", "import", "--release-dir", str(missing)],
        capture_output=True,
        text=True,
        env={"PATH": "", "STEERBENCH_DATA_DIR": str(tmp_path)},
    )
    assert result.returncode == 2
    assert str(missing) in result.stderr
    assert "RELEASE_DIR=" in result.stderr
