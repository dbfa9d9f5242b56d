"""``make compare``: two generated releases that differ in known ways (a scenario relabelled,
one condition re-run with other trials, one added) are built in their own folders and every
reported change is checked; a release compared with itself reports no change; a release
that fails its own verification is refused as ``make paper`` refuses it."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import release_copies
import release_writer

from analysis import paths
from analysis.compare.bounds import BOUND_METHOD
from analysis.compare.conditions import COUNTS_METHOD
from analysis.files.parts import PER_TRIAL_FILE
from analysis.paper.provenance import number_name

pytestmark = pytest.mark.slow

RELABELLED = "identity-change-001"  # a hold scenario (block) made a proceed one
RERUN, ADDED = "delta (off)", "added (off)"


def _trials(scenarios: dict[str, dict], seed: int) -> list[dict]:
    """Four of the seeded conditions; ``seed`` moves only the re-run one."""
    keep = {"alpha (off)", "gamma (on)", "tie-a (off)", "never (off)"}
    rows = [
        r
        for r in release_writer.seeded_trials(scenarios)
        if release_writer.condition_of(r["model"], r["reasoning"]) in keep
    ]
    noisy = release_writer.noisy_trials(scenarios, release_writer.TRIALS_PER_CELL, seed=seed)
    first = (noisy[0]["model"], noisy[0]["reasoning"])
    return rows + [{**r, "model": "delta"} for r in noisy if (r["model"], r["reasoning"]) == first]


@pytest.fixture(scope="module")
def releases(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("compare-releases")
    source = paths.release_dir()
    scenarios = release_writer.read_scenarios(source)
    release_writer.write_release(source, root / "base", _trials(scenarios, seed=3))
    relabelled = release_copies.copy_release(root / "relabelled")
    release_copies.relabel(relabelled, RELABELLED, "continue")
    head_trials = _trials(scenarios, seed=11)
    added = [r for r in head_trials if r["model"] == "alpha" and r["reasoning"] == "off"]
    head_trials += [{**r, "model": "added"} for r in added]
    release_writer.write_release(relabelled, root / "head", head_trials)
    return root / "base", root / "head"


@pytest.fixture(scope="module")
def compared(releases, tmp_path_factory) -> Path:
    from analysis.compare import compare_releases

    out = tmp_path_factory.mktemp("compare-out")
    return compare_releases(*releases, out_root=out)


def _csv(folder: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(folder / name, keep_default_na=False)


def test_scenarios_one_relabelled(compared) -> None:
    scenarios = _csv(compared, "scenarios.csv")
    changed = scenarios.loc[scenarios["change"] != "unchanged"]
    assert changed["scenario_id"].tolist() == [RELABELLED]
    assert changed["change"].tolist() == ["changed"]
    fields = changed["fields_changed"].iloc[0].split("; ")
    assert fields == ["label: block -> continue", "gate: blocked -> allowed"]


def test_conditions_added_rerun_and_rescored(compared) -> None:
    status = _csv(compared, "conditions.csv").set_index("condition")["status"]
    assert status[ADDED] == "added" and status[RERUN] == "re-run"
    others = status.drop([ADDED, RERUN])
    # the relabel moves every other condition on the very same verdicts
    assert set(others) == {"rescored"}, others


def test_drift_apart_from_model_change(compared) -> None:
    table = _csv(compared, "table2-changes.csv")
    table["change"] = pd.to_numeric(table["change"])
    unchanged = table.loc[table["scope"] == "unchanged scenarios"]
    rescored = unchanged.loc[unchanged["condition"] != RERUN]
    assert len(rescored) and (rescored["change"] == 0).all()  # no model change
    everywhere = table.loc[(table["scope"] == "all scenarios") & (table["condition"] != RERUN)]
    accuracy = everywhere.loc[everywhere["metric"] == "modal_accuracy", "change"]
    assert (accuracy != 0).all()  # the relabelled scenario moves every condition
    rerun = unchanged.loc[unchanged["condition"] == RERUN].set_index("metric")
    assert rerun.at["mean_trial_accuracy", "change"] != 0
    method = rerun.at["mean_trial_accuracy", "method"]
    assert method.endswith(", paired") and method != COUNTS_METHOD
    low, high = (float(rerun.at["mean_trial_accuracy", c]) for c in ("ci_low", "ci_high"))
    assert low <= float(rerun.at["mean_trial_accuracy", "estimate"]) <= high


def test_paired_change_against_an_independent_computation(compared, releases) -> None:
    """The re-run condition's mean trial accuracy change on the unchanged scenarios is the
    mean over those scenarios of the difference of its two cells' trial accuracies."""
    base, head = releases
    per_cell = {}
    for side, root in (("base", base), ("head", head)):
        detail = json.loads((root / release_writer.RESULTS / "scenarios-detail.json").read_text())
        per_cell[side] = _cell_accuracy(detail, RERUN)
    ids = [s for s in per_cell["base"] if s in per_cell["head"] and s != RELABELLED]
    expected = sum(per_cell["head"][s] - per_cell["base"][s] for s in ids) / len(ids)
    table = _csv(compared, "table2-changes.csv")
    row = table.loc[
        (table["condition"] == RERUN)
        & (table["scope"] == "unchanged scenarios")
        & (table["metric"] == "mean_trial_accuracy")
    ]
    assert float(row["estimate"].iloc[0]) == pytest.approx(expected, abs=1e-12)


def _cell_accuracy(detail: dict, condition: str) -> dict[str, float]:
    out = {}
    for scenario in detail["scenarios"]:
        for cell in scenario["model_verdicts"]:
            if cell["model"] == condition and cell["modal_scored"]:
                out[scenario["id"]] = cell["n_correct"] / cell["n_trials"]
    return out


def test_ranks_and_numbers(compared, releases) -> None:
    ranks = _csv(compared, "ranks.csv")
    document = json.loads((compared / "changes.json").read_text())
    board = json.loads((releases[1] / release_writer.RESULTS / "leaderboard.json").read_text())
    first = board["rows"][0]
    assert document["leader"]["head"] == [f"{first['model']} ({first['reasoning']})"]
    assert ranks.loc[ranks["condition"] == ADDED, "base_rank"].tolist() == [""]
    numbers = _csv(compared, "numbers.csv").set_index("name")
    # the scenario folder changed, so no number's inputs are the same; the count is
    assert numbers.at["corpus.scenarios", "status"] == "same value, inputs changed"
    rerun = [n for n in numbers.index if n.startswith("table2.delta-off.")]
    assert rerun and "changed" in set(numbers.loc[rerun, "status"])
    differs = numbers.loc[numbers["status"] == "changed"]
    assert (differs["base"] != differs["head"]).all()
    added = [n for n in numbers.index if ".added-off." in n]
    assert added and set(numbers.loc[added, "status"]) == {"added"}
    assert not document["nothing_changed"]
    assert RELABELLED in document["summary"] and ADDED in document["summary"]
    assert (compared / "index.html").read_text().count("<table") >= 4


def test_a_release_against_itself_changes_nothing(releases, compared) -> None:
    from analysis.compare import compare_releases

    folder = compare_releases(releases[0], releases[0], out_root=compared.parent)
    document = json.loads((folder / "changes.json").read_text())
    assert document["nothing_changed"], document["summary"]
    assert document["summary"].endswith("Nothing changed.")
    assert set(_csv(folder, "numbers.csv")["status"]) == {"unchanged"}
    table = _csv(folder, "table2-changes.csv")
    change = pd.to_numeric(table["change"])
    assert len(table) and (change.dropna() == 0).all()
    assert (table.loc[change.isna(), "base"] == "").all()  # no rate on either side


def test_a_release_failing_its_verification_is_refused(releases, tmp_path) -> None:
    copy = tmp_path / "tampered"
    shutil.copytree(releases[0], copy)
    scenario = copy / release_writer.SCENARIO_SET / f"{RELABELLED}.json"
    scenario.write_text(scenario.read_text().replace("block", "continue", 1))
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "analysis.compare", str(releases[0]), str(copy), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=paths.PROJECT_ROOT,
    )
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("error: ") and RELABELLED in errors[0]
    assert f"{copy}/{release_writer.SCENARIO_SET}/{RELABELLED}.json" in errors[0]  # the user's
    assert not [p for p in out.iterdir() if p.name != ".builds"]


def test_a_release_of_another_name_has_no_ledger_to_compare(releases, compared) -> None:
    """Another release name gives a build without the claims ledger (the published values
    are v2026-05's); the comparison still runs, and the same scenarios and verdicts under
    another name change no scenario or condition."""
    from analysis.compare import compare_releases

    renamed = compared.parent / "renamed-release"
    shutil.copytree(releases[0], renamed)
    release_copies.rename_version(renamed, "v2099-01", "steerbench-work-2099-01")
    folder = compare_releases(releases[0], renamed, out_root=compared.parent)
    assert set(_csv(folder, "scenarios.csv")["change"]) == {"unchanged"}
    assert set(_csv(folder, "conditions.csv")["status"]) == {"unchanged"}
    claims = _csv(folder, "claims.csv")
    assert len(claims) and (claims["head_status"] == "").all()
    assert (claims["base_status"] != "").all()


def test_counts_only_changes_carry_the_clustered_bound(releases, compared) -> None:
    """The head release without its per-trial verdict file: its conditions are compared by
    counts, and mean trial accuracy's change carries the clustered bound built from each
    build's smallest design effect (the same as the build's own Table 2 reports)."""
    from analysis.compare import compare_releases

    counts_only = compared.parent / "counts-only"
    shutil.copytree(releases[1], counts_only)
    folder = release_copies.results(counts_only)
    (folder / PER_TRIAL_FILE).unlink()
    listing = folder / "checksums.txt"
    lines = listing.read_text(encoding="utf-8").splitlines()
    listing.write_text("\n".join(x for x in lines if not x.endswith(PER_TRIAL_FILE)) + "\n")
    out = compare_releases(releases[0], counts_only, out_root=compared.parent)
    table = pd.read_csv(out / "table2-changes.csv")
    mean = table.loc[
        (table["metric"] == "mean_trial_accuracy") & (table["scope"] == "all scenarios")
    ].set_index("condition")
    assert (mean["method"] == COUNTS_METHOD).all()
    numbers = _csv(out, "numbers.csv").set_index("name")
    bounded = mean.loc[mean["clustered_bound_note"] == BOUND_METHOD]
    assert RERUN in bounded.index
    for label, row in mean.iterrows():
        name = number_name("table2", label, "design_effect_min")
        if label not in bounded.index:  # a side whose counts allow no bound: blank, and why
            assert row["clustered_bound_note"].startswith("no bound: ")
            assert "" in set(numbers.loc[name, ["base", "head"]])
            continue
        for side in ("base", "head"):
            published = numbers.at[name, side]
            assert row[f"design_effect_min_{side}"] == pytest.approx(float(published), abs=0.01)
        # at least as wide as the interval that treats every trial as independent
        assert row["clustered_bound_low"] <= row["ci_low"] <= row["ci_high"]
        assert row["ci_high"] <= row["clustered_bound_high"]
    # a design effect above 1 on either side widens the interval; none leaves it as it is
    widths = bounded["clustered_bound_high"] - bounded["clustered_bound_low"]
    plain = bounded["ci_high"] - bounded["ci_low"]
    clustered = bounded[["design_effect_min_base", "design_effect_min_head"]].max(axis=1) > 1
    assert clustered.any()
    assert (widths[clustered] > plain[clustered] + 1e-9).all()
    assert widths[~clustered].to_numpy() == pytest.approx(plain[~clustered].to_numpy())
    document = json.loads((out / "changes.json").read_text())
    assert {r["condition"] for r in document["table2"] if r["clustered_bound_low"]} == set(
        bounded.index
    )
    page = (out / "index.html").read_text()
    assert "not a 95% interval: a floor on the width" in page
    said = html.escape(BOUND_METHOD)
    assert page.count(said) == 1  # said once, under the table; each row points to it
    (key,) = re.findall(r"clustered_bound_note (\[\d+\]): " + re.escape(said), page)
    assert page.count(f"<td>{key}</td>") >= len(bounded)
