"""``python -m analysis.exploring.export`` with small inputs (no imported release needed)."""

from __future__ import annotations

import json
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
    LABEL_B,
    scenarios_frame,
    trials_frame,
)

from analysis.exploring import export
from analysis.scoring.rules import CONDITION_COLUMNS
from analysis.trials import TRIAL_COLUMNS

#: Every trial of the hand-worked cells, counted from the fixture.
N_TRIALS = sum(len(permissions) for permissions in HAND_CELLS.values())


@pytest.fixture
def small_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.ModuleType("analysis.corpus.scenarios")
    fake.load_scenarios = scenarios_frame  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "analysis.corpus.scenarios", fake)
    monkeypatch.setattr(export, "load_trials", lambda scenarios=None: trials_frame())
    published = pd.DataFrame({c: pd.Series([], dtype=object) for c in CONDITION_COLUMNS})
    monkeypatch.setattr(export, "published_conditions", lambda scenarios: published)


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


def test_csv_lists_are_json_and_parquet_keeps_every_dtype(tmp_path: Path) -> None:
    scenarios = scenarios_frame().assign(
        tags=[("a", "b"), (), ["c"], ("d",)],
        level=pd.Categorical(["x", "y", "x", "x"], ["y", "x", "z"], ordered=True),
    )
    tables = export.build_tables(trials_frame(), scenarios, published=PUBLISHED)
    export.write_tables(tables, tmp_path)
    csv = pd.read_csv(tmp_path / "scenarios.csv")
    assert [json.loads(t) for t in csv["tags"]] == [["a", "b"], [], ["c"], ["d"]]
    for name, table in tables.items():
        back = pd.read_parquet(tmp_path / f"{name}.parquet")
        assert back.dtypes.to_dict() == table.dtypes.to_dict(), name
    assert back["level"].dtype == scenarios["level"].dtype  # categories, order and all


#: One published condition, as load_conditions gives its counts.
PUBLISHED = pd.DataFrame(
    [
        {
            **{c: 0 for c in CONDITION_COLUMNS},
            "condition": "pub (off)",
            "model": "pub",
            "reasoning": "off",
            "source": "published",
            "n_trials": 20,
            "n_provider_filtered": None,
        }
    ]
)


def test_the_conditions_table_holds_the_published_conditions(tmp_path: Path) -> None:
    conditions = export.build_tables(trials_frame(), scenarios_frame(), published=PUBLISHED)[
        "conditions"
    ]
    assert tuple(conditions.columns) == CONDITION_COLUMNS
    by_source = conditions.groupby("source", observed=True)["condition"].agg(list).to_dict()
    assert by_source == {"published": ["pub (off)"], "run": [LABEL_A, LABEL_B]}
    published = conditions.set_index("condition").loc["pub (off)"]
    assert published["n_trials"] == 20 and pd.isna(published["n_provider_filtered"])
    # published per-trial verdicts give the published conditions themselves: not twice
    trials = trials_frame(source="published")
    conditions = export.build_tables(trials, scenarios_frame(), published=PUBLISHED)["conditions"]
    assert "pub (off)" not in set(conditions["condition"])
