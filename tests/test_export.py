"""``python -m analysis.export`` with small inputs (no imported release needed)."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pandas as pd
import pytest
from factories import (
    HAND_CELLS,
    HAND_CONDITION_SCORES,
    HAND_SCENARIOS,
    LABEL_A,
    scenarios_frame,
    trials_frame,
)

from analysis import export
from analysis.scoring import CONDITION_COLUMNS
from analysis.trials import TRIAL_COLUMNS

#: Every trial of the hand-worked cells, counted from the fixture.
N_TRIALS = sum(len(permissions) for permissions in HAND_CELLS.values())


@pytest.fixture
def small_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.ModuleType("analysis.scenarios")
    fake.load_scenarios = scenarios_frame  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "analysis.scenarios", fake)
    monkeypatch.setattr(export, "load_trials", lambda scenarios=None: trials_frame())


def test_main_writes_every_table_in_both_formats(small_inputs: None, tmp_path: Path) -> None:
    out = tmp_path / "processed"
    assert export.main([str(out)]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(f"{t}.{f}" for t in export.TABLES for f in export.FORMATS)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]

    conditions = pd.read_parquet(out / "conditions.parquet")
    assert tuple(conditions.columns) == CONDITION_COLUMNS
    row = conditions.set_index("condition").loc[LABEL_A]
    assert {k: row[k] for k in HAND_CONDITION_SCORES[LABEL_A]} == HAND_CONDITION_SCORES[LABEL_A]
    assert len(pd.read_parquet(out / "trials.parquet")) == N_TRIALS
    assert len(pd.read_csv(out / "cells.csv")) == len(HAND_CELLS)
    assert len(pd.read_csv(out / "scenarios.csv")) == len(HAND_SCENARIOS)
    cells = pd.read_parquet(out / "cells.parquet")
    assert isinstance(cells["modal_decision"].dtype, pd.CategoricalDtype)


def test_export_replaces_old_files_and_keeps_others(small_inputs: None, tmp_path: Path) -> None:
    out = tmp_path / "processed"
    out.mkdir()
    (out / "trials.csv").write_text("stale\n")
    (out / "unrelated.txt").write_text("keep\n")
    export.export(out)
    assert (out / "unrelated.txt").read_text() == "keep\n"
    trials = pd.read_csv(out / "trials.csv")
    assert (len(trials), tuple(trials.columns)) == (N_TRIALS, TRIAL_COLUMNS)


def test_failed_export_leaves_previous_files(
    small_inputs: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "processed"
    out.mkdir()
    (out / "trials.csv").write_text("previous\n")

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_csv", broken)
    with pytest.raises(OSError, match="disk full"):
        export.export(out)
    assert (out / "trials.csv").read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["processed"]
