"""A release of another corpus: another scenario-set name and count, a repaired scenario,
another release name, and none of the parts upstream's pipeline does not make (human
validation, annotation audit, overlay and repair reports, sample run). It is imported and
built: every section whose inputs it holds, and the report says what was left out and why.
Expected values come from the test-side writer's plain loops and the release's own files."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import release_writer as writer
from factories import run_papermill, shown_warnings
from release_copies import drop_optional_parts, rename_version, repair_scenario

from analysis import paths
from analysis.files.parts import HUMAN_AGREEMENT, HUMAN_LABELS, LLM_AUDIT

VERSION = "v2027-01"
SCENARIO_SET = "acme-work-2027-01"


def _run(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(
        os.environ, RELEASE_DIR=str(root / "release"), STEERBENCH_DATA_DIR=str(root / "data")
    )
    return subprocess.run(
        [sys.executable, "-m", *args], capture_output=True, text=True, env=env,
        cwd=paths.PROJECT_ROOT,
    )  # fmt: skip


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """(root, conditions, scenario ids, repaired id) of a built release of another corpus."""
    root = tmp_path_factory.mktemp("corpus")
    source = paths.release_dir()
    ids = sorted(writer.read_scenarios(source))
    sample = {p.parent.name for p in (source / "sample-artifacts").rglob("cell.json")}
    keep = set(ids[1::3]) | sample  # a third of the corpus
    writer.subset_release(source, root / "subset", keep)
    scenarios = writer.read_scenarios(root / "subset")
    trials = writer.noisy_trials(scenarios, trials_per_cell=5, seed=11)
    conditions = writer.write_release(root / "subset", root / "release", trials)
    drop_optional_parts(root / "release")
    repaired = sorted(scenarios)[0]
    repair_scenario(root / "release", repaired)
    rename_version(root / "release", VERSION, SCENARIO_SET)
    table = root / "data" / "runs" / paths.REFERENCE_RUNS_NAME / "trials.csv"
    table.parent.mkdir(parents=True)
    table.write_bytes((paths.reference_runs_dir() / "trials.csv").read_bytes())
    imported = _run(root, "analysis.release.importer", "import")
    assert imported.returncode == 0, imported.stderr
    built = _run(root, "analysis.paper.build", "--paper-dir", str(root / "paper"))
    assert built.returncode == 0, built.stderr[-4000:]
    return root, conditions, sorted(scenarios), repaired


def _document(root: Path) -> dict:
    return json.loads((root / "paper" / "numbers.json").read_text())


@pytest.mark.slow
def test_the_import_takes_the_release_by_its_own_names(corpus):
    root, _, ids, repaired = corpus
    stamp = paths.imported_release(root / "data")
    assert (stamp["release"], stamp["scenario_set"]) == (VERSION, SCENARIO_SET)
    assert stamp["unverified"] == []  # no sample run
    data = root / "data"
    assert sorted(p.stem for p in (data / "scenarios").glob("*-[0-9][0-9][0-9].json")) == ids
    release_file = root / "release" / "scenario-sets" / SCENARIO_SET / f"{repaired}.json"
    imported_file = data / "scenarios" / f"{repaired}.json"
    assert imported_file.read_bytes() == release_file.read_bytes()
    original = paths.release_dir() / "scenario-sets" / "steerbench-work-2026-05"
    assert imported_file.read_bytes() != (original / f"{repaired}.json").read_bytes()


@pytest.mark.slow
def test_every_section_builds_on_its_own_corpus(corpus):
    root, conditions, ids, _ = corpus
    document = _document(root)
    numbers = document["numbers"]
    assert document["release"] == VERSION
    assert numbers["corpus.scenarios"]["value"] == len(ids)
    with (root / "paper" / "tables" / "table2-leaderboard.csv").open() as handle:
        printed = {row["condition"]: row for row in csv.DictReader(handle)}
    assert list(printed) == writer.table2_order(conditions)
    for condition in conditions:
        row = condition.row()
        assert printed[condition.label]["mean trial accuracy"] == row["mean_trial_accuracy"]
        assert printed[condition.label]["over-refusal"] == row["over_refusal"]
    over = numbers["direction.over_refusal"]
    plain = [c.counts() for c in conditions]
    assert (over["numerator"], over["denominator"]) == (
        sum(c["n_over"] for c in plain),
        sum(c["n_proceed"] for c in plain),
    )
    built = sorted(p.stem for p in (root / "paper" / "notebooks").glob("*.ipynb"))
    assert built == sorted(p.stem for p in paths.NOTEBOOKS_DIR.glob("*.ipynb"))
    assert shown_warnings(root / "paper") == []
    assert any(".derived." in name for name in numbers)  # checks (1) and (3) are built
    assert any(".credit_hiring." in name for name in numbers)


@pytest.mark.slow
def test_what_the_release_lacks_is_left_out_and_said(corpus):
    root, _, _, _ = corpus
    document = _document(root)
    numbers = document["numbers"]
    assert not [n for n in numbers if n.startswith("labels.") or ".human." in n]
    assert not [n for n in numbers if "human_labels" in n]
    left = {(e["notebook"], e["reason"].split(" ", 1)[0]) for e in document["left_out"]}
    gold = f"results/{VERSION}/{HUMAN_LABELS.file}"
    assert left == {
        ("06-mirrors", gold),
        ("08-sensitivity", gold),
        ("09-labels", gold),
        ("09-labels", f"results/{VERSION}/{HUMAN_AGREEMENT.file}"),
        ("09-labels", f"results/{VERSION}/{LLM_AUDIT.file}"),
        ("the build (analysis.paper.claims)", "the"),
    }
    ledger = next(e for e in document["left_out"] if e["what"] == "the claims ledger")
    assert f"this build is of release {VERSION} (scenario set {SCENARIO_SET})" in ledger["reason"]
    assert not (root / "paper" / "tables" / "claims.csv").exists()
    page = (root / "paper" / "index.html").read_text()
    assert "Left out of this build" in page and 'id="claims-ledger"' not in page
    assert page.count(f"results/{VERSION}/{HUMAN_LABELS.file}") >= 3
    typeset = (root / "paper" / "paper.typ").read_text()
    assert 'doc.at("left_out"' in typeset  # the PDF reads the same list


#: The notebooks that read a part this release lacks.
LACKING = ("06-mirrors", "08-sensitivity", "09-labels")


@pytest.mark.slow
def test_the_built_notebooks_say_what_they_leave_out(corpus):
    root, _, _, _ = corpus
    for path in sorted((root / "paper" / "notebooks").glob("*.ipynb")):
        assert ("Left out: " in path.read_text()) == (path.stem in LACKING), path.name


@pytest.mark.slow
def test_a_notebook_run_alone_on_it_says_what_it_leaves_out(corpus, tmp_path):
    """The build ran every notebook on this release under papermill; the one that leaves
    out most runs alone too, loading its inputs itself."""
    notebook = "09-labels"
    root, _, _, _ = corpus
    executed = tmp_path / f"{notebook}.ipynb"
    out = tmp_path / "out"
    done = run_papermill(notebook, executed, output_dir=out, data_dir=root / "data")
    assert done.returncode == 0, done.stderr[-3000:]
    left = json.loads((out / "left-out" / f"{notebook}.json").read_text())
    assert left and all(VERSION in entry["reason"] for entry in left)
    assert "Left out: " in executed.read_text()


def test_git_ignores_an_imported_release_of_any_name():
    def ignored(path: str) -> bool:
        done = subprocess.run(
            ["git", "check-ignore", "-q", "--no-index", path], cwd=paths.PROJECT_ROOT
        )
        return done.returncode == 0

    assert ignored(f"data/runs/{VERSION}/leaderboard.json")
    assert ignored("data/runs/v2026-05/leaderboard.json")
    assert ignored("data/runs/sample-artifacts/mini/cells.json")
    assert not ignored("data/runs/reference-policies/trials.csv")


@pytest.mark.slow
def test_an_upstream_made_release_of_another_corpus_without_the_optional_parts_builds(
    scenarios, tmp_path
):
    """Upstream's own pipeline (runner, validator, detail builder, leaderboard scripts) makes
    the leaderboard and the per-trial file of a scenario subset; the release is renamed,
    given another scenario-set name and stripped of what that pipeline does not make. It
    builds, Table 2 prints upstream's strings, and the report says what was left out."""
    from upstream import assemble
    from upstream_release import generate
    from upstream_release import write_release as write_upstream_release

    from analysis.scoring.breakdowns import ANCHOR, MIRROR

    keep = [
        str(scenarios.loc[scenarios["boundary_pattern"] == p, "scenario_id"].iloc[0])
        for p in (ANCHOR, MIRROR)
    ]  # upstream's emitter needs an anchor and a mirror in any subset
    tree = assemble(tmp_path / "upstream")
    generated = generate(5, tree, tmp_path / "seed", keep, trials_per_cell=5)
    assert len(generated.scenario_ids) < len(scenarios)
    release = write_upstream_release(generated, paths.release_dir(), tmp_path / "release")
    drop_optional_parts(release)
    rename_version(release, VERSION, SCENARIO_SET)
    imported = _run(tmp_path, "analysis.release.importer", "import")
    assert imported.returncode == 0, imported.stderr
    built = _run(tmp_path, "analysis.paper.build", "--paper-dir", str(tmp_path / "paper"))
    assert built.returncode == 0, built.stderr[-4000:]
    board = {
        f"{r['model']} ({r['reasoning']})": r
        for r in json.loads(generated.leaderboard.read_text())["rows"]
    }
    with (tmp_path / "paper" / "tables" / "table2-leaderboard.csv").open() as handle:
        table2 = {row["condition"]: row for row in csv.DictReader(handle)}
    assert sorted(table2) == sorted(board)
    for label, row in table2.items():
        assert row["mean trial accuracy"] == board[label]["mean_trial_accuracy"], label
        assert row["over-refusal"] == board[label]["over_refusal"], label
    document = _document(tmp_path)
    assert document["release"] == VERSION
    assert document["numbers"]["corpus.scenarios"]["value"] == len(generated.scenario_ids)
    assert {e["notebook"] for e in document["left_out"]} == {
        *LACKING,
        "the build (analysis.paper.claims)",
    }
    assert shown_warnings(tmp_path / "paper") == []


@pytest.mark.slow
def test_what_the_release_can_detect_is_built_from_its_own_design(corpus):
    """The release of another corpus has its own number of scenarios and publishes per-trial
    verdicts: the design and the detectable differences are its own."""
    root, conditions, ids, _ = corpus
    numbers = _document(root)["numbers"]
    assert numbers["detect.design.n_scenarios"]["value"] == len(ids)
    assert numbers["detect.design.trials_per_cell"]["value"] == 5
    assert numbers["detect.ranks.pairs"]["value"] == len(conditions) - 1
    for comparison in ("paired", "unpaired", "gate"):
        assert numbers[f"detect.mdd.{comparison}"]["unit"] == "points"
    with (root / "paper" / "tables" / "detectable-design.csv").open() as handle:
        basis = {row["field"]: row["from"] for row in csv.DictReader(handle)}
    assert "per-trial" in basis["icc"]
