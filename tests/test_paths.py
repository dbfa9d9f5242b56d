"""Locations are worked out when asked: an argument, then the environment, then data/."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from analysis import paths
from analysis.trials import NoPublishedVerdictsWarning, load_trials


def test_the_data_folder_follows_the_environment_at_each_call(monkeypatch, tmp_path):
    monkeypatch.setenv("STEERBENCH_DATA_DIR", str(tmp_path / "elsewhere"))
    assert paths.runs_dir() == tmp_path / "elsewhere" / "runs"
    monkeypatch.delenv("STEERBENCH_DATA_DIR")
    assert paths.runs_dir() == paths.PROJECT_ROOT / "data" / "runs"
    assert paths.runs_dir(tmp_path) == tmp_path / "runs"


def test_the_release_version_comes_from_the_import_stamp(tmp_path):
    assert paths.results_dir(tmp_path) == tmp_path / "runs" / paths.DEFAULT_RELEASE
    stamp = {"release": "v2099-01", "scenario_set": "other-set"}
    paths.import_stamp(tmp_path).parent.mkdir(parents=True, exist_ok=True)
    paths.import_stamp(tmp_path).write_text(json.dumps(stamp), encoding="utf-8")
    assert paths.results_dir(tmp_path) == tmp_path / "runs" / "v2099-01"
    assert paths.release_scenario_subdir(tmp_path).name == "other-set"


def test_load_trials_reads_the_runs_folder_named_at_the_call(monkeypatch, tmp_path):
    rows = pd.DataFrame(
        {
            "scenario_id": ["s-1", "s-1"],
            "model": ["m", "m"],
            "reasoning": ["off", "off"],
            "trial": [1, 2],
            "commit_permission": ["allowed", "blocked"],
        }
    )
    (tmp_path / "mine").mkdir()
    rows.to_csv(tmp_path / "mine" / "trials.csv", index=False)
    with pytest.warns(NoPublishedVerdictsWarning, match="no published per-trial verdicts"):
        given = load_trials(runs_dir=tmp_path)
    assert list(given["trial"]) == [1, 2]
    monkeypatch.setenv("STEERBENCH_DATA_DIR", str(tmp_path / "empty"))
    with pytest.warns(NoPublishedVerdictsWarning):
        assert load_trials().empty
