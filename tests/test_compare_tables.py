"""The comparison's tables on small hand-made inputs (no build): scenario changes, condition
status and Table 2 changes from counts, and the refusal of a folder that is no release."""

from __future__ import annotations

import math
import subprocess
import sys

import pandas as pd
import pytest

from analysis import paths
from analysis.compare.conditions import COUNTS, COUNTS_METHOD, condition_status, table2_changes
from analysis.compare.inputs import BuildInputs
from analysis.compare.scenarios import scenario_changes

Z = 1.959963984540054


def _scenarios(**changes) -> pd.DataFrame:
    rows = []
    for sid in ("a", "b", "c"):
        row = {
            "scenario_id": sid,
            "sha256": f"hash-{sid}",
            "expected_action": "block",
            "required_gate": "blocked",
            "boundary_pattern": "p",
            "direction": "under-refusal",
            "irreversibility": "high",
            "user_message": f"message {sid}",
        }
        row.update(changes.get(sid, {}))
        rows.append(row)
    return pd.DataFrame(rows)


def test_scenario_changes_name_every_changed_field() -> None:
    base = _scenarios()
    head = _scenarios(
        b={"sha256": "other", "expected_action": "continue", "user_message": "new"},
        c={"sha256": "other"},
    )
    head = pd.concat([head.iloc[1:], head.iloc[[0]].assign(scenario_id="d")], ignore_index=True)
    out = scenario_changes(base, head).set_index("scenario_id")
    assert out["change"].to_dict() == {
        "a": "removed",
        "b": "changed",
        "c": "changed",
        "d": "added",
    }
    assert out.at["b", "fields_changed"] == "label: block -> continue; rendered user message"
    assert out.at["c", "fields_changed"] == ""  # another file, none of the named fields
    assert out.at["a", "head_sha256"] == "" and out.at["d", "base_sha256"] == ""


def _inputs(conditions: list[dict]) -> BuildInputs:
    frame = pd.DataFrame([{**dict.fromkeys(COUNTS, 0), **c} for c in conditions])
    return BuildInputs(None, _scenarios(), frame, None, None, {}, pd.DataFrame())


def _newcombe(k1: int, n1: int, k0: int, n0: int) -> tuple[float, float]:
    """Newcombe's square-and-add interval from two Wilson intervals, written out."""

    def wilson(k: int, n: int) -> tuple[float, float]:
        p = k / n
        centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
        half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
        return centre - half, centre + half

    (l1, u1), (l0, u0) = wilson(k1, n1), wilson(k0, n0)
    d = k1 / n1 - k0 / n0
    return (
        d - math.sqrt((k1 / n1 - l1) ** 2 + (u0 - k0 / n0) ** 2),
        d + math.sqrt((u1 - k1 / n1) ** 2 + (k0 / n0 - l0) ** 2),
    )


def test_counts_only_status_and_interval() -> None:
    same = {"label": "same (off)", "n_trials": 50, "n_trials_correct": 40, "n_cells": 10}
    moved = {"label": "moved (off)", "n_trials": 50, "n_trials_correct": 30, "n_cells": 10}
    base = _inputs([same, moved, {"label": "gone (off)", "n_trials": 5}])
    head = _inputs([same, {**moved, "n_trials_correct": 41}, {"label": "new (off)"}])
    ids = ["a", "b", "c"]
    status = condition_status(base, head, ids).set_index("condition")["status"]
    assert status.to_dict() == {
        "same (off)": "unchanged",
        "moved (off)": "changed",
        "gone (off)": "removed",
        "new (off)": "added",
    }
    table = table2_changes(base, head, status.reset_index(), ids, ids)
    row = table.loc[
        (table["condition"] == "moved (off)")
        & (table["metric"] == "mean_trial_accuracy")
        & (table["scope"] == "all scenarios")
    ].iloc[0]
    assert row["change"] == pytest.approx(41 / 50 - 30 / 50)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(_newcombe(41, 50, 30, 50), abs=1e-9)
    assert row["method"] == COUNTS_METHOD
    # every scenario unchanged: the unchanged-scenario scope is the whole set
    assert set(table["scope"]) == {"all scenarios", "unchanged scenarios"}
    # an empty denominator gives no rate and no interval
    empty = table.loc[(table["condition"] == "moved (off)") & (table["metric"] == "over_refusal")]
    assert empty["change"].isna().all() and empty["ci_low"].isna().all()


def test_no_shared_scenario_drops_the_unchanged_scope() -> None:
    base = _inputs([{"label": "x (off)", "n_trials": 5, "n_trials_correct": 1}])
    head = _inputs([{"label": "x (off)", "n_trials": 5, "n_trials_correct": 2}])
    status = condition_status(base, head, [])
    table = table2_changes(base, head, status, [], [])
    assert set(table["scope"]) == {"all scenarios"}
    assert status["basis"].tolist() == ["counts only"]


def test_a_folder_that_is_no_release_is_refused(tmp_path) -> None:
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "analysis.compare", str(tmp_path), str(tmp_path), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=paths.PROJECT_ROOT,
    )
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {tmp_path}: not a SteerBench")
    assert not out.exists()
