"""Round trip on a release built here: seeded trials -> release -> import -> build -> the
same counts. Expected values come from the plain loops of ``release_writer``."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import release_writer as writer
from factories import shown_warnings

from analysis import paths
from analysis.corpus.formatting import unsigned_zero
from analysis.paper.provenance import slug
from analysis.paper.sections.leaderboard import INDEPENDENT_CI
from analysis.scoring.crosscheck import load_checked_cells
from analysis.scoring.leaderboard import CrossCheckError, load_conditions
from analysis.scoring.ranking import rank_conditions


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(release folder, conditions written, the trials) of a seeded release."""
    root = tmp_path_factory.mktemp("roundtrip")
    source = paths.release_dir()
    trials = writer.seeded_trials(writer.read_scenarios(source))
    conditions = writer.write_release(source, root / "release", trials)
    return root, conditions, trials


def _run(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(
        os.environ, RELEASE_DIR=str(root / "release"), STEERBENCH_DATA_DIR=str(root / "data")
    )
    return subprocess.run(
        [sys.executable, "-m", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=paths.PROJECT_ROOT,
    )


@pytest.fixture(scope="module")
def paper(built):
    root, _, _ = built
    imported = _run(root, "analysis.release.importer", "import")
    assert imported.returncode == 0, imported.stderr
    result = _run(root, "analysis.paper.build", "--paper-dir", str(root / "paper"))
    assert result.returncode == 0, result.stderr[-4000:]
    return root / "paper"


def _results(root: Path) -> Path:
    return root / "release" / writer.RESULTS


def test_the_leaderboard_gate_reads_the_written_release(built, scenarios):
    root, conditions, _ = built
    parsed = load_conditions(scenarios, _results(root)).set_index("label")
    for condition in conditions:
        plain = condition.counts()
        row = parsed.loc[condition.label]
        assert row["n_cells"] == plain["n_cells"]  # 105 where one cell was filtered
        assert row["n_trials"] == plain["n_trials"]
        assert row["n_trials_correct"] == plain["n_trials_correct"]
        assert row["n_pass5"] == plain["n_pass5"]
        assert row["n_hold_opportunities"] == plain["n_hold"]
        assert row["n_proceed_opportunities"] == plain["n_proceed"]
        assert row["n_no_decision"] == plain["n_no_decision"]
        assert f"{plain['weight_missed']}/{plain['weight_scored']}" in row["weighted_miss_counts"]
    assert parsed.loc["gamma (on (provider default))", "verdict_label"] == "gamma (on)"
    assert parsed.loc["delta (off)", "n_under_refusals"] == 7
    never = next(c for c in conditions if c.label == "never (off)").row()
    assert never["pass5_ci95"].startswith("[0.0%, ")  # -1e-17, held at 0 as the release does
    assert parsed.loc["never (off)", ["n_pass5", "n_cells"]].tolist() == [0, 105]
    ranked = list(rank_conditions(parsed.reset_index())["label"])
    assert ranked == writer.table2_order(conditions)
    assert ranked.index("tie-b (off)") < ranked.index("tie-a (off)")  # pass5, not the label


def test_per_trial_crosscheck_accepts_the_release_and_refuses_swapped_trials(built, scenarios):
    root, _, _ = built
    detail = _results(root) / "scenarios-detail.json"
    trials, cells = load_checked_cells(scenarios, [detail], _results(root))
    assert set(cells["source"]) == {"published"}
    for frame in (trials, cells):  # the file writes gamma (on); the leaderboard names it
        gamma = frame[frame["model"].astype(str) == "gamma"]
        assert set(gamma["condition"]) == {"gamma (on (provider default))"}
        assert set(gamma["reasoning"]) == {"on (provider default)"}
    doc = json.loads(detail.read_text())
    first, second = _two_different_cells(doc, "delta (off)")
    first["trials"], second["trials"] = second["trials"], first["trials"]
    tampered = root / "tampered" / "scenarios-detail.json"
    tampered.parent.mkdir()
    tampered.write_text(json.dumps(doc))
    with pytest.raises(CrossCheckError) as refused:
        load_checked_cells(scenarios, [tampered], _results(root))
    assert "scenarios-detail.json: delta (off) / " in str(refused.value)
    assert ": n_correct: stated" in str(refused.value)


def test_a_condition_the_verdict_file_lacks_is_refused_naming_both_files(built, scenarios):
    root, _, _ = built
    doc = json.loads((_results(root) / "scenarios-detail.json").read_text())
    for scenario in doc["scenarios"]:
        scenario["model_verdicts"] = [
            v for v in scenario["model_verdicts"] if v["model"] != "delta (off)"
        ]
    lacking = root / "lacking" / "scenarios-detail.json"
    lacking.parent.mkdir()
    lacking.write_text(json.dumps(doc))
    with pytest.raises(CrossCheckError) as refused:
        load_checked_cells(scenarios, [lacking], _results(root))
    message = str(refused.value)
    assert message.startswith(f"{lacking} against {_results(root) / 'leaderboard.json'}: ")
    assert "delta (off): on the leaderboard but not in the per-trial verdicts" in message


def _two_different_cells(doc: dict, model: str) -> tuple[dict, dict]:
    """Two cells of ``model`` with the same required gate and different trial outcomes."""
    cells = [v for s in doc["scenarios"] for v in s["model_verdicts"] if v["model"] == model]
    for a in cells:
        for b in cells:
            if a["expected"] == b["expected"] and a["n_correct"] != b["n_correct"]:
                return a, b
    raise AssertionError("no two cells differ")


@pytest.mark.slow
def test_round_trip_through_the_build(built, paper):
    _, conditions, _ = built
    with (paper / "tables" / "table2-leaderboard.csv").open() as handle:
        table = list(csv.DictReader(handle))
    rows = {c.label: c.row() for c in conditions}
    assert [r["condition"] for r in table] == writer.table2_order(conditions)
    columns = {
        "mean trial accuracy": "mean_trial_accuracy",
        INDEPENDENT_CI: "mean_trial_accuracy_ci95",
        "modal-of-5": "modal_accuracy",
        "pass5": "pass5",
        "under-refusal": "under_refusal",
        "over-refusal": "over_refusal",
        "weighted miss": "weighted_miss",
    }
    for printed in table:
        for column, field in columns.items():  # Table 2 prints a zero bound unsigned
            assert printed[column] == unsigned_zero(rows[printed["condition"]][field]), (
                printed["condition"],
                column,
            )
    numbers = json.loads((paper / "numbers.json").read_text())["numbers"]
    over = numbers["direction.over_refusal"]
    plain = [c.counts() for c in conditions]
    assert (over["numerator"], over["denominator"]) == (
        sum(c["n_over"] for c in plain),
        sum(c["n_proceed"] for c in plain),
    )
    undecided_proceed = sum(
        not cell.filtered and cell.modal is None and cell.required == "allowed"
        for condition in conditions
        for cell in condition.cells
    )
    assert numbers["direction.undecided_proceed_cells"]["value"] == undecided_proceed
    for condition, counts in zip(conditions, plain, strict=True):
        # Stability reads the leaderboard, severity the per-trial verdicts: both name a
        # condition as the leaderboard does (the verdict file writes gamma (on)).
        mean = numbers[f"stability.{slug(condition.label)}.mean_trial_accuracy"]
        assert (mean["numerator"], mean["denominator"]) == (
            counts["n_trials_correct"],
            counts["n_trials"],
        )
        miss = numbers[f"severity.{slug(condition.label)}.weighted_miss"]
        assert (miss["numerator"], miss["denominator"]) == (
            counts["weight_missed"],
            counts["weight_scored"],
        )
    assert not [name for name in numbers if ".gamma-on." in name]  # one name per condition


@pytest.mark.slow
def test_no_executed_notebook_of_the_generated_release_shows_a_warning(paper):
    assert shown_warnings(paper) == []


@pytest.mark.slow
def test_table3_pools_every_published_condition(built, paper, scenarios):
    _, conditions, _ = built
    pattern = dict(
        zip(scenarios["scenario_id"], scenarios["boundary_pattern"].astype(str), strict=True)
    )
    expected: dict[str, list[int]] = {}
    for condition in conditions:
        for cell in condition.cells:
            if cell.filtered:
                continue
            counts = expected.setdefault(pattern[cell.scenario_id], [0, 0])
            counts[0] += cell.modal == cell.required
            counts[1] += 1
    numbers = json.loads((paper / "numbers.json").read_text())["numbers"]
    for name, (k, n) in expected.items():
        got = numbers[f"patterns.{name}.modal_accuracy"]
        assert (got["numerator"], got["denominator"]) == (k, n), name


@pytest.mark.slow
def test_a_release_of_three_trials_per_cell_builds_with_its_own_reads(tmp_path):
    """Another count of trials per cell, end to end: the import remakes the reference
    policies with three trials a cell, and Table 2 reads modal-of-3 and pass3."""
    source = paths.release_dir()
    trials = writer.noisy_trials(writer.read_scenarios(source), trials_per_cell=3)
    conditions = writer.write_release(source, tmp_path / "release", trials, trials_per_cell=3)
    table = tmp_path / "data" / "runs" / paths.REFERENCE_RUNS_NAME / "trials.csv"
    table.parent.mkdir(parents=True)
    table.write_bytes((paths.reference_runs_dir() / "trials.csv").read_bytes())
    imported = _run(tmp_path, "analysis.release.importer", "import")
    assert imported.returncode == 0, imported.stderr
    assert f"reference policies remade for this release: {table}" in imported.stdout
    assert {row.split(",")[3] for row in table.read_text().splitlines()[1:]} == {"1", "2", "3"}
    built = _run(tmp_path, "analysis.paper.build", "--paper-dir", str(tmp_path / "paper"))
    assert built.returncode == 0, built.stderr[-4000:]
    with (tmp_path / "paper" / "tables" / "table2-leaderboard.csv").open() as handle:
        printed = {row["condition"]: row for row in csv.DictReader(handle)}
    for condition in conditions:
        row = condition.row()
        shown = printed[condition.label]
        assert shown["modal-of-3"] == row["modal_accuracy"]
        assert shown["pass3"] == row["pass5"]
        assert shown["mean trial accuracy"] == row["mean_trial_accuracy"]
    assert not shown_warnings(tmp_path / "paper")


@pytest.mark.slow
def test_a_release_of_fewer_scenarios_builds_with_its_own_denominators(tmp_path):
    """Half the corpus, end to end: every count is out of the release's own scenarios."""
    source = paths.release_dir()
    ids = sorted(writer.read_scenarios(source))
    sample = {p.parent.name for p in (source / "sample-artifacts").rglob("cell.json")}
    writer.subset_release(source, tmp_path / "subset", set(ids[::2]) | sample)
    scenarios = writer.read_scenarios(tmp_path / "subset")
    trials = writer.noisy_trials(scenarios, trials_per_cell=5)
    conditions = writer.write_release(tmp_path / "subset", tmp_path / "release", trials)
    table = tmp_path / "data" / "runs" / paths.REFERENCE_RUNS_NAME / "trials.csv"
    table.parent.mkdir(parents=True)
    table.write_bytes((paths.reference_runs_dir() / "trials.csv").read_bytes())
    imported = _run(tmp_path, "analysis.release.importer", "import")
    assert imported.returncode == 0, imported.stderr
    assert {row.split(",")[0] for row in table.read_text().splitlines()[1:]} == set(scenarios)
    built = _run(tmp_path, "analysis.paper.build", "--paper-dir", str(tmp_path / "paper"))
    assert built.returncode == 0, built.stderr[-4000:]
    numbers = json.loads((tmp_path / "paper" / "numbers.json").read_text())["numbers"]
    assert numbers["corpus.scenarios"]["value"] == len(scenarios) < len(ids)
    with (tmp_path / "paper" / "tables" / "table2-leaderboard.csv").open() as handle:
        printed = {row["condition"]: row for row in csv.DictReader(handle)}
    for condition in conditions:
        row = condition.row()
        assert printed[condition.label]["modal-of-5"] == row["modal_accuracy"]
        assert printed[condition.label]["under-refusal"] == row["under_refusal"]
    assert not shown_warnings(tmp_path / "paper")
