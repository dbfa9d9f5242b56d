"""A condition is its source and its name: a user's run named like a reference policy
(``steerbench-run --gate surface-flag``, as ``make run GATE=surface-flag`` writes it) stays
apart from the policy in ``rates``, ``plot_rates``, ``with_metadata`` and ``flips``."""

from __future__ import annotations

import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from analysis import paths
from analysis.exploring.interval_figure import plot_rates
from analysis.exploring.joined import with_metadata
from analysis.exploring.pairing import flip_test, flips
from analysis.exploring.rate_table import rates
from analysis.scoring.rules import score_cells
from analysis.trials import NoPublishedVerdictsWarning, load_trials

POLICY = "surface-flag (policy)"


@pytest.fixture(scope="module")
def cells(scenarios, tmp_path_factory):
    """The release's per-trial data and a run of the surface-flag gate beside them, found
    as the loaders find ``data/runs/local/surface-flag`` after ``make run``."""
    runs = tmp_path_factory.mktemp("data") / "runs"
    shutil.copytree(paths.runs_dir(), runs, ignore=shutil.ignore_patterns("local"))
    runner = Path(sys.executable).parent / "steerbench-run"
    out = runs / "local" / "surface-flag"
    done = subprocess.run(
        [str(runner), "--gate", "surface-flag", "--out", str(out)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoPublishedVerdictsWarning)
        trials = load_trials(runs_dir=runs, scenarios=scenarios)
    return score_cells(trials, scenarios)


def test_the_run_and_the_policy_are_two_rows_of_56_never_112(cells):
    out = rates(cells, by="condition", metric="over_refusal")
    mine = out.loc[out["condition"] == POLICY]
    assert sorted(mine["source"].astype(str)) == ["reference-policy", "run"]
    assert mine["n"].tolist() == [56, 56]
    first, second = mine.iloc[0], mine.iloc[1]
    assert (first["k"], first["ci_low"]) == (second["k"], second["ci_low"])  # one gate
    assert not (out["n"] > 56).any()


def test_by_domain_keeps_each_condition_unless_pooled(cells, scenarios):
    metrics = ["over_refusal", "under_refusal"]
    by_domain = rates(cells, by="domain", metric=metrics)
    by_condition = rates(cells, by="condition", metric=metrics)
    summed = by_domain.groupby(["source", "condition", "metric"], observed=True)["n"].sum()
    expected = by_condition.set_index(["source", "condition", "metric"])["n"]
    assert summed.sort_index().tolist() == expected.sort_index().tolist()
    assert by_domain.duplicated(["domain", "source", "condition", "metric"]).sum() == 0
    pooled = rates(cells, by="domain", metric=metrics, pool=True)
    joined = with_metadata(cells, scenarios)
    held = joined.groupby("domain", observed=True)["condition_label"].nunique()
    assert pooled["n_conditions"].tolist() == held.reindex(pooled["domain"]).tolist()
    assert (pooled["n_conditions"] >= 4).all()
    assert pooled["conditions"].str.contains(f"run: {POLICY}", regex=False).all()
    assert pooled["conditions"].str.contains(f"reference-policy: {POLICY}", regex=False).all()


def test_figures_and_the_joined_table_label_the_source_where_names_collide(cells, scenarios):
    out = rates(cells, by="condition", metric="over_refusal")
    fig = plot_rates(out, y="condition")
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    plt.close(fig)
    assert f"run: {POLICY}" in labels and f"reference-policy: {POLICY}" in labels
    assert POLICY not in labels and "always-hold (policy)" in labels
    joined = with_metadata(cells, scenarios)
    assert len(joined) == len(cells)
    assert set(joined.loc[joined["condition"] == POLICY, "condition_label"].astype(str)) == {
        f"run: {POLICY}",
        f"reference-policy: {POLICY}",
    }


def test_flips_pairs_the_run_with_the_policy_by_source(cells):
    table = flips(cells, f"run: {POLICY}", f"reference-policy: {POLICY}")
    assert len(table) == 106
    test = flip_test(table).iloc[0]
    assert (test["fixed"], test["broke"], test["n_clusters"]) == (0, 0, 106)
    with pytest.raises(ValueError, match="several sources"):
        flips(cells, POLICY, "always-hold (policy)")
