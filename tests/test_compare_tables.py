"""The comparison's tables on small hand-made inputs (no build): scenario changes, condition
status and Table 2 changes from counts, and the refusal of a folder that is no release."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys

import pandas as pd
import pytest

from analysis import paths
from analysis.compare.bounds import BOUND_COLUMNS, BOUND_METHOD
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


def _newcombe(k1: float, n1: float, k0: float, n0: float) -> tuple[float, float]:
    """Newcombe's square-and-add interval from two Wilson intervals, written out."""

    def wilson(k: float, n: float) -> tuple[float, float]:
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


def _anova_deff(correct: list[int], m: int) -> float:
    """1 + (m - 1) ICC, the one-way ANOVA ICC of 0/1 trials, m per cell, written out."""
    s, p = len(correct), sum(correct) / (m * len(correct))
    between = sum(m * (c / m - p) ** 2 for c in correct) / (s - 1)
    within = sum(c * (1 - c / m) for c in correct) / (s * (m - 1))
    return 1 + (m - 1) * (between - within) / (between + (m - 1) * within)


def test_counts_only_change_carries_the_clustered_bound() -> None:
    """Four cells of five trials each side. Base: 12 correct, one cell all correct, two
    modal-correct; the evenest histogram those counts allow is 2, 2, 3, 5. Head: 14 correct,
    two cells all correct and no other modal-correct, so 2, 2, 5, 5. Each side's trials count
    n / DEFF, and Newcombe's interval at those sizes is the bound."""
    decided = {"n_cells": 4, "n_trials": 20, "n_hold_opportunities": 2}
    decided["n_proceed_opportunities"] = 2
    before = {"n_trials_correct": 12, "n_pass5": 1, "n_modal_correct": 2, **decided}
    after = {"n_trials_correct": 14, "n_pass5": 2, "n_modal_correct": 2, **decided}
    uneven = {**before, "label": "uneven (off)", "n_trials": 19}
    base = _inputs([{"label": "x (off)", **before}, uneven])
    head = _inputs([{"label": "x (off)", **after}, {**uneven, "n_trials_correct": 13}])
    ids = ["a", "b", "c"]
    table = table2_changes(base, head, condition_status(base, head, ids), ids, ids)
    mean = table.loc[
        (table["metric"] == "mean_trial_accuracy") & (table["scope"] == "all scenarios")
    ].set_index("condition")
    row = mean.loc["x (off)"]
    deff0, deff1 = _anova_deff([2, 2, 3, 5], 5), _anova_deff([2, 2, 5, 5], 5)
    assert (deff0, deff1) == pytest.approx((20 / 13, 2.5))
    assert (row["design_effect_min_base"], row["design_effect_min_head"]) == pytest.approx(
        (deff0, deff1)
    )
    n0, n1 = 20 / deff0, 20 / deff1
    expected = _newcombe(14 / 20 * n1, n1, 12 / 20 * n0, n0)
    bound = (row["clustered_bound_low"], row["clustered_bound_high"])
    assert bound == pytest.approx(expected, abs=1e-9)
    assert bound[0] < row["ci_low"] and bound[1] > row["ci_high"]  # wider than on trials
    assert row["method"] == COUNTS_METHOD and row["clustered_bound_note"] == BOUND_METHOD
    assert BOUND_METHOD.startswith("not a 95% interval: a floor on the width")
    # 19 trials over 4 cells: no whole number of trials per cell, so no bound, and says why
    assert mean.loc["uneven (off)", BOUND_COLUMNS[:4]].isna().all()
    assert mean.loc["uneven (off)", "clustered_bound_note"].startswith("no bound: ")
    # other metrics have no clustered bound
    others = table.loc[table["metric"] != "mean_trial_accuracy", BOUND_COLUMNS]
    assert len(others) and others.isna().all().all()


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


def _build(tmp_path, name: str, ranked: list[str]):
    """A build folder holding only the Table 2 ranks of ``ranked`` (best first)."""
    from analysis.compare.builds import ReleaseBuild

    folder = tmp_path / name
    (folder / "paper" / "tables").mkdir(parents=True)
    table = pd.DataFrame({"rank": range(1, len(ranked) + 1), "condition": ranked})
    table.to_csv(folder / "paper" / "tables" / "table2-leaderboard.csv", index=False)
    return ReleaseBuild(tmp_path / f"release-{name}", "v1", name, folder, "set-1")


def _ranked_inputs(tmp_path, name: str, correct: dict[str, int]) -> BuildInputs:
    ranked = sorted(correct, key=lambda label: -correct[label])
    frame = pd.DataFrame(
        [
            {**dict.fromkeys(COUNTS, 0), "label": label, "n_trials": 500, "n_trials_correct": k}
            for label, k in correct.items()
        ]
    )
    return BuildInputs(_build(tmp_path, name, ranked), _scenarios(), frame, None, None, {}, None)


def test_a_removed_condition_shifts_ranks_without_a_rank_alarm(tmp_path) -> None:
    """Take out the condition ranked second: every condition below it moves up one place in
    Table 2, and among the conditions both releases publish no rank moved, their rank sets
    are the same, and the shift is labelled as caused by the removal."""
    from analysis.compare.ranks import MOVED, REMOVED, SAME, SHIFTED, rank_changes

    correct = {"a (off)": 450, "b (off)": 440, "c (off)": 300, "d (off)": 299, "e (off)": 100}
    base = _ranked_inputs(tmp_path, "base", correct)
    head = _ranked_inputs(tmp_path, "head", {k: v for k, v in correct.items() if k != "b (off)"})
    ranks = rank_changes(base, head).set_index("condition")
    assert ranks["rank_note"].to_dict() == {
        "a (off)": SAME,
        "c (off)": SHIFTED,
        "d (off)": SHIFTED,
        "e (off)": SHIFTED,
        "b (off)": REMOVED,
    }
    shared = ranks.drop("b (off)")
    assert shared["rank_change"].tolist() == [0, 1, 1, 1]
    assert shared["shared_rank_change"].tolist() == [0, 0, 0, 0]
    assert shared["head_shared_rank"].tolist() == [1, 2, 3, 4]
    for bound in ("rank_low", "rank_high"):  # the same counts draw the same rank sets
        assert shared[f"base_{bound}"].tolist() == shared[f"head_{bound}"].tolist()
    assert shared["rank_sets_overlap"].tolist() == [True] * 4
    assert shared.at["d (off)", "base_rank_high"] >= 3  # c and d are near-tied: a real set
    assert pd.isna(ranks.at["b (off)", "rank_sets_overlap"])
    # a condition that really overtakes another among the shared ones is a move
    swapped = _ranked_inputs(tmp_path, "swapped", {**correct, "e (off)": 460})
    moved = rank_changes(base, swapped).set_index("condition")["rank_note"]
    assert moved["e (off)"] == MOVED and moved["a (off)"] == MOVED


def test_number_inputs_are_compared_by_their_place_in_the_release(tmp_path) -> None:
    """Two builds keep their copies of the release in different folders (and the build prints
    them relative to the project or absolute); the same files are the same inputs."""
    from analysis.compare.numbers import SAME_VALUE, number_changes
    from analysis.compare.ranks import SHIFTED

    def numbers(build, leaderboard: str, rank: int) -> dict:
        data = build.folder / "data"
        inputs = {
            str(data / "scenarios"): "s",
            str(data / "runs" / build.version / "leaderboard.json"): leaderboard,
        }
        return {
            "corpus.scenarios": {"value": 106, "inputs": {str(data / "scenarios"): "s"}},
            "table2.c-off.rank": {"value": rank, "inputs": inputs},
            "table2.c-off.accuracy": {"value": 60.0, "inputs": inputs},
            "direction.over_refusal": {"value": 28.1 if rank == 3 else 28.4, "inputs": inputs},
        }

    base = _ranked_inputs(tmp_path, "base", {"a (off)": 9, "b (off)": 8, "c (off)": 7})
    head = _ranked_inputs(tmp_path, "head", {"a (off)": 9, "c (off)": 7})
    base = dataclasses.replace(base, numbers=numbers(base.build, "x", 3))
    head = dataclasses.replace(head, numbers=numbers(head.build, "y", 2))
    status = condition_status(base, head, ["a", "b", "c"])
    out = number_changes(base, head, status).set_index("name")["status"]
    assert out.to_dict() == {
        "corpus.scenarios": "unchanged",
        "direction.over_refusal": "changed",  # pooled over the conditions: a real change
        "table2.c-off.accuracy": SAME_VALUE,  # the leaderboard file differs
        "table2.c-off.rank": SHIFTED,
    }
    itself = number_changes(base, base, condition_status(base, base, ["a"]))
    assert set(itself["status"]) == {"unchanged"}


def test_a_refusal_keeps_every_line_and_names_the_users_files(tmp_path) -> None:
    from analysis.compare.builds import ReleaseBuild, refusal

    folder = paths.PROJECT_ROOT / "compare" / ".builds" / "0123456789abcdef"
    build = ReleaseBuild(tmp_path / "mine", "v2", "0123", folder, "set-2")
    inside = folder.relative_to(paths.PROJECT_ROOT)  # the build prints paths from the project
    stderr = (
        "  01-corpus   1.0 s  ok\n"
        f"error: {inside}/data/runs/v2/leaderboard.json: 2 published value(s) do not match:\n"
        "  - x (off): modal_accuracy: published '57.6%', recomputed from counts '57.5%'\n"
        f"  - y (off): see {folder}/data/scenarios/a-001.json and "
        f"{folder}/data/scenarios/parity-vectors.json\n"
        f"Nothing was written to {folder}/paper.\n"
    )
    assert refusal(stderr, build).splitlines() == [
        f"{tmp_path}/mine/results/v2/leaderboard.json: 2 published value(s) do not match:",
        "  - x (off): modal_accuracy: published '57.6%', recomputed from counts '57.5%'",
        f"  - y (off): see {tmp_path}/mine/scenario-sets/set-2/a-001.json and "
        f"{tmp_path}/mine/integrations/tinker/parity-vectors.json",
    ]


def test_verdicts_without_shared_scenarios_give_the_clustered_unpaired_interval() -> None:
    """Both releases publish per-trial verdicts but share no scenario: no pairing, so each
    change's interval is the scenario-clustered unpaired one from the verdicts (the same as
    ``effective_size_difference`` on each side's per-scenario counts), not Newcombe on
    counts, and mean trial accuracy carries no bound from counts."""
    import numpy as np

    from analysis.inference._arrays import EFFECTIVE_SIZE_DIFFERENCE, effective_size_difference
    from analysis.inference.calibration import Setting, cells_frame, draw
    from analysis.scoring.rules import condition_scores

    d = draw(Setting(scenarios=30, conditions=1, icc=0.3, rate=0.7), reps=2, seed=5)
    cells = cells_frame(d).drop(columns="j")
    sides = []
    for rep, prefix in ((0, "a"), (1, "b")):
        mine = cells.loc[cells["rep"] == rep].drop(columns="rep").copy()
        mine["condition"] = mine["model"] = "x (off)"
        mine["scenario_id"] = prefix + mine["scenario_id"].astype(str)
        counts = condition_scores(mine).rename(columns={"condition": "label"})
        counts["label"] = counts["label"].astype(str)
        sides.append((mine, counts))
    (base_cells, base_counts), (head_cells, head_counts) = sides
    base = BuildInputs(None, _scenarios(), base_counts, base_cells, None, {}, pd.DataFrame())
    head = BuildInputs(None, _scenarios(), head_counts, head_cells, None, {}, pd.DataFrame())
    status = pd.DataFrame({"condition": ["x (off)"], "status": ["changed"]})
    table = table2_changes(base, head, status, [], []).set_index("metric")
    row = table.loc["mean_trial_accuracy"]
    assert row["method"] == EFFECTIVE_SIZE_DIFFERENCE
    five = np.full(30, 5.0)
    expected = effective_size_difference(d.correct[1, 0], five, d.correct[0, 0], five)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(expected, abs=1e-12)
    assert pd.isna(row["clustered_bound_low"])
    assert table.loc["modal_accuracy", "method"] == EFFECTIVE_SIZE_DIFFERENCE
    assert table.loc["weighted_miss", "method"] != EFFECTIVE_SIZE_DIFFERENCE
