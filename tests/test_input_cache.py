"""The checked inputs kept between builds (analysis/paper/input_cache.py): reused only when
the data, the code that checked them and the pins are unchanged; bad input is never kept."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis import paths
from analysis.paper import input_cache
from analysis.paper.sections.loading import write_checked_inputs


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A copy of the imported release with its reference policies."""
    data = tmp_path / "data"
    shutil.copytree(paths.data_dir() / "scenarios", data / "scenarios")
    for folder in (paths.release(), paths.REFERENCE_RUNS_NAME):
        shutil.copytree(paths.data_dir() / "runs" / folder, data / "runs" / folder)
    shutil.copy(paths.data_dir() / ".imported", data / ".imported")
    return data


def _checked(path: Path) -> pd.DataFrame:
    return pd.read_pickle(path)["loaded"].cells


def test_a_second_build_reuses_the_check_and_gets_the_same_frames(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = write_checked_inputs(tmp_path / "first.pkl", data, reuse=True)
    kept = sorted(p.suffix for p in (data / input_cache.CACHE_FOLDER).iterdir())
    assert kept == [".json", ".pkl"]
    record = json.loads(next((data / input_cache.CACHE_FOLDER).glob("*.json")).read_text())
    assert "analysis/scoring/crosscheck.py" in record and "requirements.lock" in record

    def no_check(*args, **kwargs):
        raise AssertionError("checked again")

    monkeypatch.setattr("analysis.paper.sections.loading.load_inputs", no_check)
    second = write_checked_inputs(tmp_path / "second.pkl", data, reuse=True)
    pd.testing.assert_frame_equal(_checked(first), _checked(second))
    monkeypatch.setenv(input_cache.ALWAYS_CHECK, "always")
    with pytest.raises(AssertionError, match="checked again"):
        write_checked_inputs(tmp_path / "third.pkl", data, reuse=True)


def test_a_changed_input_file_is_checked_again_and_a_bad_one_never_kept(
    data: Path, tmp_path: Path
) -> None:
    write_checked_inputs(tmp_path / "first.pkl", data, reuse=True)
    before = sorted((data / input_cache.CACHE_FOLDER).iterdir())
    table = data / "runs" / paths.REFERENCE_RUNS_NAME / "trials.csv"
    trials = pd.read_csv(table)
    trials[trials["scenario_id"] != trials["scenario_id"].iloc[0]].to_csv(table, index=False)
    with pytest.raises(ValueError, match="make reference-runs"):
        write_checked_inputs(tmp_path / "second.pkl", data, reuse=True)
    assert sorted((data / input_cache.CACHE_FOLDER).iterdir()) == before


def test_kept_inputs_of_changed_code_are_not_reused(data: Path, tmp_path: Path) -> None:
    write_checked_inputs(tmp_path / "first.pkl", data, reuse=True)
    key = input_cache.data_key(data)
    record_path = data / input_cache.CACHE_FOLDER / f"{key}.json"
    record = json.loads(record_path.read_text())
    assert input_cache.reuse(data, key, tmp_path / "again.pkl")
    for changed in ("analysis/scoring/crosscheck.py", "python"):
        altered = {**record, changed: "0" * 64}
        record_path.write_text(json.dumps(altered))
        assert not input_cache.reuse(data, key, tmp_path / "again.pkl")
    record_path.write_text(json.dumps({**record, "analysis/no_such_module.py": "0" * 64}))
    assert not input_cache.reuse(data, key, tmp_path / "again.pkl")


def test_a_copy_of_the_data_folder_is_checked_anew(data: Path, tmp_path: Path) -> None:
    """The kept frames name the folders they were read from: a copy elsewhere (the kept
    inputs copied with it) has a key of its own."""
    write_checked_inputs(tmp_path / "first.pkl", data, reuse=True)
    copy = tmp_path / "copy"
    shutil.copytree(data, copy)
    assert input_cache.data_key(copy) != input_cache.data_key(data)
    checked = write_checked_inputs(tmp_path / "second.pkl", copy, reuse=True)
    assert pd.read_pickle(checked)["locations"].runs == paths.runs_dir(copy)


def test_the_build_keeps_its_check_under_the_key_a_later_check_looks_for(paper_dir) -> None:
    """The build digests the data before its kernels start and hands the key to the check:
    the entry it keeps is the one a check of the same data finds."""
    data = paths.data_dir()
    key = input_cache.data_key(data)
    assert (data / input_cache.CACHE_FOLDER / f"{key}.pkl").is_file()
    assert (data / input_cache.CACHE_FOLDER / f"{key}.json").is_file()
