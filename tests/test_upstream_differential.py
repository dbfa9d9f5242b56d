"""The package held to upstream's own pipeline: seeded runs go through upstream's runner,
validator, aggregator, detail builder, leaderboard scripts, fabrication gate and paper emitter
(``upstream_release``); the package, reading the same two files, must give every leaderboard
string, every cell record and trial of ``scenarios-detail.json``, and every value of the
emitter's ``numbers.json``, ``patterns.tex``, ``directional.dat`` and ``anchor-mirror.dat``.
Each disagreement names the seed, the condition, the scenario and the field.

A few seeds run in the fast tier; ``SLOW_SEEDS`` in the slow one. The emitter's
``trials_per_cell`` (hard-coded 5 upstream, see its ``ORACLE.md``) is the one value not
compared.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from upstream import assemble
from upstream_release import Generated, generate

from analysis.corpus.formatting import js_fixed, percent_text, points_text, rate_text
from analysis.paper.claims import NEEDS_VERDICTS, REPRODUCED, ledger
from analysis.paper.provenance import NumberBook, number_name
from analysis.paper.sections.leaderboard import INDEPENDENT_CI, table2_numbers
from analysis.scoring.breakdowns import (
    ANCHOR,
    MIRROR,
    pattern_gradient,
    per_condition_pattern_accuracy,
)
from analysis.scoring.crosscheck import load_checked_cells, per_trial_strings, settle_weighted_miss
from analysis.scoring.leaderboard import (
    FROM_LEADERBOARD,
    FROM_VERDICTS,
    UNDETERMINED,
    CrossCheckError,
    load_conditions,
)
from analysis.scoring.metrics import direction_asymmetry
from analysis.scoring.ranking import leaderboard_table, rank_conditions
from analysis.scoring.rules import condition_scores, record_correct

FAST_SEEDS = (1, 2, 3)
SLOW_SEEDS = tuple(range(1000, 1050))

#: Leaderboard fields the per-trial verdicts print.
STRINGS = (
    "mean_trial_accuracy",
    "mean_trial_accuracy_ci95",
    "modal_accuracy",
    "modal_accuracy_ci95",
    "pass5",
    "pass5_ci95",
    "under_refusal",
    "over_refusal",
    "weighted_miss",
)
#: Cell-record fields and the package's cell column giving each.
RECORD = {
    "modal_decision": "modal_decision",
    "modal_count": "modal_count",
    "n_trials": "n_trials",
    "n_correct": "n_correct",
    "pass_all": "pass_all",
    "correct": "record_correct",
    "modal_scored": "modal_scored",
    "directionally_scored": "directionally_scored",
    "provider_filtered": "provider_filtered",
    "unanimous": "unanimous",
}


@pytest.fixture(scope="module")
def upstream_tree(tmp_path_factory):
    return assemble(tmp_path_factory.mktemp("upstream"))


@pytest.fixture(scope="module")
def made(upstream_tree, keep, tmp_path_factory):
    """``made(seed)``: that seed's upstream-made release, generated once per module."""
    cache: dict[int, Generated] = {}

    def make(seed: int) -> Generated:
        if seed not in cache:
            cache[seed] = generate(
                seed, upstream_tree, tmp_path_factory.mktemp(f"seed-{seed}"), keep
            )
        return cache[seed]

    return make


@pytest.fixture(scope="module")
def keep(scenarios) -> list[str]:
    """One anchor and one mirror scenario, which upstream's emitter needs in any subset."""
    return [
        str(scenarios.loc[scenarios["boundary_pattern"] == p, "scenario_id"].iloc[0])
        for p in (ANCHOR, MIRROR)
    ]


def _plain(value: Any) -> Any:
    """A cell value as JSON would hold it (NA as None, numpy scalars as Python ones)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    if hasattr(value, "item"):
        return value.item()
    return value


def _same(stated: Any, mine: Any) -> bool:
    return type(stated) is type(mine) and stated == mine


def _pct(k: int, n: int) -> float | None:
    """A one-decimal percentage as a number (None where the emitter divides by zero)."""
    return float(percent_text(k, n).rstrip("%")) if n else None


def _number(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def leaderboard_problems(g: Generated, where: str, scores: pd.DataFrame) -> list[str]:
    rows = json.loads(g.leaderboard.read_text())["rows"]
    by_label = scores.set_index(scores["condition"].astype(str))
    problems = []
    for row in rows:
        label = f"{row['model']} ({row['reasoning']})"
        mine = per_trial_strings(by_label.loc[label])
        for field in STRINGS:
            if row.get(field) != mine.get(field):
                problems.append(
                    f"{where}: {label}: leaderboard {field}: upstream {row.get(field)!r}, "
                    f"package {mine.get(field)!r}"
                )
    return problems


def record_problems(g: Generated, where: str, trials, cells, scenarios) -> list[str]:
    cells = cells.copy()
    cells["record_correct"] = record_correct(cells)
    cells["condition"] = cells["condition"].astype(str)
    detail_names = {c.label: c.detail_label for c in g.conditions}
    cells["written"] = cells["condition"].map(detail_names)
    cell_of = {(str(r["scenario_id"]), r["written"]): r for r in cells.to_dict("records")}
    trial_of = {
        (str(t.scenario_id), detail_names[str(t.condition)], int(t.trial)): t
        for t in trials.itertuples(index=False)
    }
    expected = dict(
        zip(scenarios["scenario_id"].astype(str), scenarios["expected_action"], strict=True)
    )
    problems = []
    doc = json.loads(g.detail.read_text())
    for scenario in doc["scenarios"]:
        sid = scenario["id"]
        for record in scenario["model_verdicts"]:
            at = f"{where}: {record['model']} / {sid}"
            mine = cell_of.get((sid, record["model"]))
            if mine is None:
                problems.append(f"{at}: no such cell in the package's scoring")
                continue
            fields = {f: _plain(mine[c]) for f, c in RECORD.items()}
            fields["expected"] = expected[sid]
            split = {"allowed": int(mine["n_allowed"]), "blocked": int(mine["n_blocked"])}
            fields["split"] = {k: v for k, v in split.items() if v}
            for field, value in fields.items():
                if not _same(record[field], value):
                    problems.append(f"{at}: {field}: upstream {record[field]!r}, package {value!r}")
            for trial in record["trials"]:
                t = trial_of[(sid, record["model"], trial["trial"])]
                permission = _plain(t.commit_permission)
                correct = None if permission is None else permission == mine["required_gate"]
                for field, value in (
                    ("commit_permission", permission),
                    ("status", str(t.status)),
                    ("correct", correct),
                ):
                    if not _same(trial[field], value):
                        problems.append(
                            f"{at}: trial {trial['trial']} {field}: upstream "
                            f"{trial[field]!r}, package {value!r}"
                        )
    return problems


#: What the package reads from a cell record (``load_scenarios_detail_cells``), compared
#: with its own scoring of the record's trials.
READ = (
    "n_trials",
    "n_correct",
    "n_allowed",
    "n_blocked",
    "modal_decision",
    "modal_count",
    "modal_correct",
    "pass_all",
    "unanimous",
    "provider_filtered",
    "modal_scored",
    "directionally_scored",
)


def read_problems(g: Generated, where: str, cells) -> list[str]:
    """The cell fields the package reads from upstream's records against the package's
    scoring of the same trials: a field read with another meaning shows here."""
    from analysis.trials import load_scenarios_detail_cells

    detail_names = {c.label: c.detail_label for c in g.conditions}
    mine = {
        (str(r["scenario_id"]), detail_names[str(r["condition"])]): r
        for r in cells.to_dict("records")
    }
    problems = []
    records = load_scenarios_detail_cells(g.detail).to_dict("records")
    assert len(records) == len(mine)
    for read in records:
        key = (str(read["scenario_id"]), str(read["condition"]))
        for field in READ:
            scored, stated = _plain(mine[key][field]), _plain(read[field])
            if scored != stated:
                problems.append(
                    f"{where}: {key[1]} / {key[0]}: {field}: read from upstream's record "
                    f"{stated!r}, scored from its trials {scored!r}"
                )
    return problems


def _compare(problems: list[str], at: str, field: str, upstream: Any, package: Any) -> None:
    if upstream != package:
        problems.append(f"{at}: {field}: upstream {upstream!r}, package {package!r}")


def numbers_problems(g: Generated, where: str, cells, scores, scenarios) -> list[str]:
    numbers = json.loads((g.artifacts / "numbers.json").read_text())
    problems: list[str] = []
    at = f"{where}: numbers.json"
    _compare(problems, at, "release", numbers["release"], g.release_name)
    _compare(problems, at, "scenario_count", numbers["scenario_count"], len(scenarios))
    _compare(problems, at, "condition_count", numbers["condition_count"], len(scores))
    ranked = rank_conditions(scores.assign(label=scores["condition"].astype(str)))
    leader = ranked.iloc[0]
    mine = per_trial_strings(leader)
    _compare(
        problems,
        at,
        "leader",
        (numbers["leader"]["model"], numbers["leader"]["reasoning"]),
        (str(leader["model"]), str(leader["reasoning"])),
    )
    for field in ("mean_trial_accuracy", "mean_trial_accuracy_ci95", "pass5"):
        _compare(problems, at, f"leader.{field}", numbers["leader"][field], mine.get(field))
    asym = direction_asymmetry(scores, scenarios)
    for name, ratio in (("over_refusal", asym.over), ("under_refusal", asym.under)):
        got = numbers["directional"][name]
        _compare(problems, at, f"directional.{name}.count", got["count"], ratio.k)
        _compare(problems, at, f"directional.{name}.possible", got["possible"], ratio.n)
        rate = float(rate_text(ratio.k, ratio.n).rstrip("%")) if ratio.n else None
        _compare(problems, at, f"directional.{name}.rate_pct", _number(got["rate_pct"]), rate)
    for name in ("raw_ratio", "rate_ratio"):
        try:
            value = float(js_fixed(float(getattr(asym, name)), 1))
        except ZeroDivisionError:
            value = None
        _compare(problems, at, f"directional.{name}", numbers["directional"][name], value)
    table = pattern_gradient(cells, scenarios).set_index("boundary_pattern")
    am = numbers["anchor_mirror"]
    for side, pattern in (("anchor", ANCHOR), ("mirror", MIRROR)):
        k, n = int(table.loc[pattern, "n_correct"]), int(table.loc[pattern, "n_cells"])
        _compare(problems, at, f"anchor_mirror.{side}_counts", am[f"{side}_counts"], f"{k}/{n}")
        _compare(problems, at, f"anchor_mirror.{side}_pct", am[f"{side}_pct"], _pct(k, n))
    anchor, mirror = table.loc[ANCHOR], table.loc[MIRROR]
    gap = float(
        points_text(
            int(anchor["n_correct"]),
            int(anchor["n_cells"]),
            int(mirror["n_correct"]),
            int(mirror["n_cells"]),
        )
    )
    _compare(problems, at, "anchor_mirror.gap_points", am["gap_points"], gap)
    upstream_patterns = {p["pattern"]: p for p in numbers["patterns"]}
    _compare(problems, at, "patterns (which)", sorted(upstream_patterns), sorted(table.index))
    for pattern, row in upstream_patterns.items():
        if pattern not in table.index:
            continue
        mine_row = table.loc[pattern]
        for field, value in (
            ("rows", int((scenarios["boundary_pattern"].astype(str) == pattern).sum())),
            ("cells", int(mine_row["n_cells"])),
            ("correct", int(mine_row["n_correct"])),
            ("modal_pct", _pct(int(mine_row["n_correct"]), int(mine_row["n_cells"]))),
        ):
            _compare(problems, at, f"patterns.{pattern}.{field}", row[field], value)
        scenario_count = int(mine_row["n_scenarios"])
        _compare(problems, at, f"patterns.{pattern}.scenarios", row["rows"], scenario_count)
    problems += tex_problems(g, where, upstream_patterns)
    problems += dat_problems(g, where, ranked, cells, scenarios)
    return problems


def tex_problems(g: Generated, where: str, patterns: dict[str, dict]) -> list[str]:
    """``patterns.tex``: each row the emitter's numbers give (label, scenarios, cells, %)."""
    problems = []
    rows = [
        line.removesuffix(" \\\\").split(" & ")
        for line in (g.artifacts / "patterns.tex").read_text().splitlines()
        if line.endswith(" \\\\") and not line.startswith("Construction pattern")
    ]
    listed = [p for p in json.loads((g.artifacts / "numbers.json").read_text())["patterns"]]
    _compare(problems, f"{where}: patterns.tex", "rows", len(rows), len(listed))
    for row, pattern in zip(rows, listed, strict=False):
        at = f"{where}: patterns.tex: {pattern['pattern']}"
        _compare(problems, at, "scenarios", int(row[1]), patterns[pattern["pattern"]]["rows"])
        _compare(problems, at, "cells", int(row[2]), pattern["cells"])
        _compare(problems, at, "modal accuracy", float(row[3]), pattern["modal_pct"])
    return problems


def _dat(path: Path) -> list[list[str]]:
    return [line.split(" ") for line in path.read_text().splitlines() if line and line[0] != "#"]


def _dat_value(text: str) -> float | None:
    return None if text == "NaN" else float(text)


def dat_problems(g: Generated, where: str, ranked, cells, scenarios) -> list[str]:
    """``directional.dat`` and ``anchor-mirror.dat``: one row per condition in Table 2's
    order, each rate as the package computes it."""
    problems = []
    name = {re.sub(r"\s+", "", c.label): c.label for c in g.conditions}
    order = list(ranked["label"].astype(str))
    by = ranked.set_index("label")
    directional = _dat(g.artifacts / "directional.dat")
    _compare(
        problems,
        f"{where}: directional.dat",
        "order",
        [name.get(r[0], r[0]) for r in directional],
        order,
    )
    for label_text, over, under, mean in directional:
        label = name.get(label_text, label_text)
        if label not in by.index:
            continue
        row = by.loc[label]
        at = f"{where}: directional.dat: {label}"
        for field, text, k, n in (
            ("over", over, "n_over_refusals", "n_proceed_opportunities"),
            ("under", under, "n_under_refusals", "n_hold_opportunities"),
            ("mean", mean, "n_trials_correct", "n_trials"),
        ):
            _compare(problems, at, field, _dat_value(text), _pct(int(row[k]), int(row[n])))
    accuracy = per_condition_pattern_accuracy(cells, scenarios)
    accuracy = accuracy.set_index(accuracy["condition"].astype(str))
    mirror_rows = _dat(g.artifacts / "anchor-mirror.dat")
    _compare(
        problems,
        f"{where}: anchor-mirror.dat",
        "order",
        [name.get(r[0], r[0]) for r in mirror_rows],
        order,
    )
    for label_text, anchor, mirror in mirror_rows:
        label = name.get(label_text, label_text)
        at = f"{where}: anchor-mirror.dat: {label}"
        for field, text, pattern in (("anchor", anchor, ANCHOR), ("mirror", mirror, MIRROR)):
            k = n = 0
            if label in accuracy.index:
                k = int(accuracy.loc[label, f"{pattern}_correct"])
                n = int(accuracy.loc[label, f"{pattern}_cells"])
            _compare(problems, at, field, _dat_value(text), _pct(k, n))
    return problems


def upstream_weighted_miss(g: Generated) -> dict[str, tuple[int, int]]:
    """Each condition's (missed, decided) tier weight as upstream's runner summed it."""
    out = {}
    for c in g.conditions:
        summary = json.loads((g.run_root / c.key / "summary.json").read_text())
        out[c.label] = (summary["weighted_miss_total"], summary["weighted_possible_total"])
    return out


def weighted_miss_problems(g: Generated, where: str, conditions, cells) -> list[str]:
    """The leaderboard's weighted-miss counts, settled by the per-trial verdicts where it
    leaves them open, against the weights upstream's runner summed."""
    settled = settle_weighted_miss(conditions, cells)
    by_label = settled.set_index(settled["condition"].astype(str))
    problems = []
    for label, upstream in upstream_weighted_miss(g).items():
        row = by_label.loc[label]
        mine = (_plain(row["weight_missed"]), _plain(row["weight_scored"]))
        source = row["weighted_miss_from"]
        if source not in (FROM_LEADERBOARD, FROM_VERDICTS) or mine != upstream:
            problems.append(
                f"{where}: {label}: weighted miss counts: upstream {upstream[0]}/{upstream[1]}, "
                f"package {row['weighted_miss_counts']} (from {source})"
            )
    return problems


def disagreements(g: Generated, scenarios: pd.DataFrame) -> list[str]:
    """Every place where the package and upstream's pipeline disagree on seed ``g``."""
    where = f"seed {g.seed}"
    subset = scenarios.loc[scenarios["scenario_id"].astype(str).isin(g.scenario_ids)]
    subset = subset.reset_index(drop=True)
    try:
        conditions = load_conditions(subset, g.results)
        trials, cells = load_checked_cells(subset, [g.detail], g.results, conditions=conditions)
    except CrossCheckError as refused:
        return [f"{where}: the package refuses upstream's release: {refused}"]
    scores = condition_scores(cells)
    return (
        leaderboard_problems(g, where, scores)
        + record_problems(g, where, trials, cells, subset)
        + read_problems(g, where, cells)
        + numbers_problems(g, where, cells, scores, subset)
        + weighted_miss_problems(g, where, conditions, cells)
    )


@pytest.mark.parametrize("seed", FAST_SEEDS)
def test_the_package_agrees_with_upstreams_pipeline(seed, made, scenarios):
    assert disagreements(made(seed), scenarios) == []


def _ledger_rows(conditions) -> pd.DataFrame:
    """Table 2's numbers of ``conditions`` recorded, and their weighted-miss ledger rows."""
    book = NumberBook("02-leaderboard", [])
    book.record(table2_numbers(rank_conditions(conditions)))
    rows = ledger(book.numbers, ())
    return book.numbers, rows.set_index("name")


def test_per_trial_verdicts_settle_the_weighted_miss_the_leaderboard_leaves_open(made, scenarios):
    """Seed 2's leaderboard prints weighted misses that several counts fit; with the
    release's per-trial verdicts, Table 2, the numbers and the ledger give upstream's count
    and say it came from the verdicts. Without them the candidates stay, and are said."""
    g = made(2)
    subset = scenarios.loc[scenarios["scenario_id"].astype(str).isin(g.scenario_ids)]
    subset = subset.reset_index(drop=True)
    conditions = load_conditions(subset, g.results)
    open_labels = list(conditions.loc[conditions["weighted_miss_from"] == UNDETERMINED, "label"])
    assert open_labels, "seed 2's leaderboard leaves no weighted miss open"
    _, cells = load_checked_cells(subset, [g.detail], g.results, conditions=conditions)
    upstream = upstream_weighted_miss(g)

    settled = settle_weighted_miss(conditions, cells)
    table = leaderboard_table(rank_conditions(settled)).set_index("condition")
    numbers, rows = _ledger_rows(settled)
    for label in open_labels:
        missed, decided = upstream[label]
        assert table.loc[label, "weighted miss counts"] == f"{missed}/{decided}"
        assert table.loc[label, "weighted miss counts from"] == FROM_VERDICTS
        name = number_name("table2", label, "weighted_miss")
        entry = numbers[name]
        assert (entry["numerator"], entry["denominator"]) == (missed, decided)
        assert entry["counts_from"] == FROM_VERDICTS
        assert "per-trial verdicts" in entry["description"]
        assert rows.loc[name, "status"] == REPRODUCED
        assert rows.loc[name, "recomputed_counts"] == f"{missed}/{decided}"
        assert "per-trial verdicts" in rows.loc[name, "statement"]

    unsettled = settle_weighted_miss(conditions, cells.iloc[0:0])  # no per-trial verdicts
    table = leaderboard_table(rank_conditions(unsettled)).set_index("condition")
    numbers, rows = _ledger_rows(unsettled)
    for label in open_labels:
        fits = conditions.set_index("label").loc[label, "weighted_miss_counts"]
        assert " or " in fits and f"{upstream[label][0]}/{upstream[label][1]}" in fits
        assert table.loc[label, "weighted miss counts"] == fits
        assert table.loc[label, "weighted miss counts from"] == UNDETERMINED
        name = number_name("table2", label, "weighted_miss")
        assert "numerator" not in numbers[name] and numbers[name]["fits"] == fits
        assert str(numbers[name]["value"]) + "%" == numbers[name]["published"]
        assert rows.loc[name, "status"] == NEEDS_VERDICTS
        assert rows.loc[name, "recomputed_counts"] == fits


def test_per_trial_verdicts_that_fit_no_candidate_are_refused(made, scenarios):
    """A weighted-miss count of the per-trial verdicts that the leaderboard's string does
    not fit is a named refusal, not a silent choice."""
    g = made(2)
    subset = scenarios.loc[scenarios["scenario_id"].astype(str).isin(g.scenario_ids)]
    subset = subset.reset_index(drop=True)
    conditions = load_conditions(subset, g.results)
    _, cells = load_checked_cells(subset, [g.detail], g.results, conditions=conditions)
    label = conditions.loc[conditions["weighted_miss_from"] == UNDETERMINED, "label"].iloc[0]
    shifted = conditions.copy()
    index = shifted.index[shifted["label"] == label][0]
    shifted.at[index, "weighted_miss_fits"] = ((0, 1),)
    with pytest.raises(CrossCheckError, match=re.escape(f"{label}: weighted_miss")):
        settle_weighted_miss(shifted, cells)


#: The slow seeds in chunks, each its own test, so the workers share them (``spread``).
SLOW_CHUNKS = tuple(SLOW_SEEDS[i : i + 10] for i in range(0, len(SLOW_SEEDS), 10))


@pytest.mark.slow
@pytest.mark.spread
@pytest.mark.parametrize("seeds", SLOW_CHUNKS, ids=lambda seeds: f"{seeds[0]}-{seeds[-1]}")
def test_the_package_agrees_with_upstreams_pipeline_on_many_seeds(
    seeds, upstream_tree, keep, scenarios, tmp_path
):
    problems = []
    for seed in seeds:
        generated = generate(seed, upstream_tree, tmp_path / f"seed-{seed}", keep)
        problems += disagreements(generated, scenarios)
        problems += written_problems(
            generated, upstream_tree, scenarios, tmp_path / f"seed-{seed}" / "from-package"
        )
    assert problems == []


@pytest.mark.slow
def test_an_upstream_made_release_of_the_corpus_imports_and_builds(
    upstream_tree, scenarios, tmp_path
):
    """A release of the whole corpus at five trials whose leaderboard and per-trial file
    upstream's pipeline made, cells with no decision and filtered cells among them, is
    imported and built; the build's Table 2 and numbers read upstream's strings."""
    import csv
    import os
    import subprocess
    import sys

    from upstream_release import write_release

    from analysis import paths

    generated = generate(
        7,
        upstream_tree,
        tmp_path / "seed",
        whole_corpus=True,
        trials_per_cell=5,
        release_name="v2026-05",
    )
    records = [
        v
        for s in json.loads(generated.detail.read_text())["scenarios"]
        for v in s["model_verdicts"]
    ]
    assert any(v["provider_filtered"] for v in records)
    assert any(v["modal_decision"] is None and not v["provider_filtered"] for v in records)
    assert any(v["correct"] is None for v in records)
    release = write_release(generated, paths.release_dir(), tmp_path / "release")
    env = dict(os.environ, RELEASE_DIR=str(release), STEERBENCH_DATA_DIR=str(tmp_path / "data"))

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=paths.PROJECT_ROOT,
        )

    imported = run("analysis.release.importer", "import")
    assert imported.returncode == 0, imported.stderr
    built = run("analysis.paper.build", "--paper-dir", str(tmp_path / "paper"))
    assert built.returncode == 0, built.stderr[-4000:]
    board = {
        f"{r['model']} ({r['reasoning']})": r
        for r in json.loads(generated.leaderboard.read_text())["rows"]
    }
    with open(tmp_path / "paper" / "tables" / "table2-leaderboard.csv", newline="") as handle:
        table2 = {row["condition"]: row for row in csv.DictReader(handle)}
    assert sorted(table2) == sorted(board)
    shown = {
        "mean trial accuracy": "mean_trial_accuracy",
        INDEPENDENT_CI: "mean_trial_accuracy_ci95",
        "modal-of-5": "modal_accuracy",
        "pass5": "pass5",
        "under-refusal": "under_refusal",
        "over-refusal": "over_refusal",
        "weighted miss": "weighted_miss",
    }
    for label, row in table2.items():
        for column, field in shown.items():
            assert row[column] == board[label][field], (label, column)
    numbers = json.loads((tmp_path / "paper" / "numbers.json").read_text())["numbers"]
    emitted = json.loads((generated.artifacts / "numbers.json").read_text())["directional"]
    for name in ("over_refusal", "under_refusal"):
        mine = numbers[f"direction.{name}"]
        assert (mine["numerator"], mine["denominator"]) == (
            emitted[name]["count"],
            emitted[name]["possible"],
        )


#: Trial fields upstream's detail builder writes that the trials table does not carry; given
#: as columns, the package's writer states them.
TRIAL_EXTRAS = ("policy_action", "human_required", "confidence", "reason")


def _trials_with_extras(g: Generated, trials: pd.DataFrame) -> pd.DataFrame:
    """``trials`` with upstream's per-trial ``TRIAL_EXTRAS`` as columns."""
    doc = json.loads(g.detail.read_text())
    extra = {
        (s["id"], v["model"], t["trial"]): t
        for s in doc["scenarios"]
        for v in s["model_verdicts"]
        for t in v["trials"]
    }
    keys = zip(
        trials["scenario_id"].astype(str),
        trials["condition"].astype(str),
        trials["trial"].astype(int),
        strict=True,
    )
    rows = [extra[key] for key in keys]
    return trials.assign(**{f: pd.Series([r[f] for r in rows], dtype=object) for f in TRIAL_EXTRAS})


def writer_problems(g: Generated, written: Path, where: str) -> list[str]:
    """Every cell record of ``written`` against upstream's, field by field, trials included."""

    def records(path: Path) -> dict[tuple[str, str], dict]:
        doc = json.loads(path.read_text())
        return {(s["id"], v["model"]): v for s in doc["scenarios"] for v in s["model_verdicts"]}

    upstream, mine = records(g.detail), records(written)
    problems = [f"{where}: {m} / {s}: no such record written" for s, m in upstream.keys() - mine]
    problems += [
        f"{where}: {m} / {s}: a record upstream has not" for s, m in mine.keys() - upstream
    ]
    for (sid, model), record in sorted(upstream.items()):
        ours = mine.get((sid, model))
        if ours is None:
            continue
        for field in sorted(record.keys() | ours.keys()):
            if json.dumps(record.get(field)) != json.dumps(ours.get(field)):
                problems.append(
                    f"{where}: {model} / {sid}: {field}: upstream {record.get(field)!r}, "
                    f"package {ours.get(field)!r}"
                )
    return problems


def written_problems(g: Generated, tree, scenarios: pd.DataFrame, out: Path) -> list[str]:
    """The package's verdict writer, given seed ``g``'s trials, against upstream's detail
    builder (every cell record field) and upstream's emitter reading the written file (every
    artifact the same as from upstream's own file)."""
    import shutil

    from analysis.exploring.export import write_scenarios_detail
    from analysis.trials import load_trials

    where = f"seed {g.seed}: package-written scenarios-detail.json"
    subset = scenarios.loc[scenarios["scenario_id"].astype(str).isin(g.scenario_ids)]
    subset = subset.reset_index(drop=True)
    trials = _trials_with_extras(g, load_trials([g.detail], scenarios=subset))
    results = tree.root / "results" / g.release_name
    if results.exists():
        shutil.rmtree(results)
    shutil.copytree(g.results, results)
    written = write_scenarios_detail(trials, subset, results / "scenarios-detail.json")
    problems = writer_problems(g, written, where)
    try:
        tree.run("scripts/emit-paper-artifacts.mjs", "--out", out, "--release", g.release_name)
    except AssertionError as refused:
        return [*problems, f"{where}: upstream's emitter refuses it: {refused}"]
    for name in ("patterns.tex", "directional.dat", "anchor-mirror.dat", "leaderboard.tex"):
        _compare(problems, where, name, (g.artifacts / name).read_text(), (out / name).read_text())
    emitted, upstream = (json.loads((d / "numbers.json").read_text()) for d in (out, g.artifacts))
    emitted.pop("input"), upstream.pop("input")  # the sha256 of each detail file
    for key in sorted(upstream.keys() | emitted.keys()):
        _compare(problems, where, f"numbers.json {key}", upstream.get(key), emitted.get(key))
    return problems


@pytest.mark.parametrize("seed", FAST_SEEDS)
def test_the_package_verdict_writer_writes_what_upstreams_detail_builder_wrote(
    seed, made, upstream_tree, scenarios, tmp_path
):
    """Given the trials of an upstream-made release, ``write_scenarios_detail`` writes every
    cell record as upstream's ``build-scenarios-detail`` did, and upstream's emitter,
    reading the package's file, accepts it and gives the same artifacts."""
    assert written_problems(made(seed), upstream_tree, scenarios, tmp_path / "artifacts") == []


@pytest.mark.parametrize("seed", FAST_SEEDS)
def test_the_test_side_release_writer_prints_what_upstream_printed(seed, made, upstream_tree):
    """``tests/release_writer.py``, which the round-trip tests build releases with, given the
    trials of an upstream-made release, prints upstream's leaderboard strings (Wilson
    intervals and weighted miss included) and writes upstream's cell records: its restated
    rules are held to upstream's code, not only to the package."""
    import release_writer

    g = made(seed)
    named = {c.detail_label: c for c in g.conditions}
    trials = [
        {
            "scenario_id": s["id"],
            "model": named[v["model"]].model,
            "reasoning": named[v["model"]].reasoning,
            "trial": t["trial"],
            "commit_permission": t["commit_permission"],
            "status": t["status"],
        }
        for s in json.loads(g.detail.read_text())["scenarios"]
        for v in s["model_verdicts"]
        for t in v["trials"]
    ]
    scenarios = release_writer.read_scenarios(upstream_tree.root)
    conditions = release_writer.conditions_of(trials, scenarios)
    board = {
        f"{r['model']} ({r['reasoning']})": r for r in json.loads(g.leaderboard.read_text())["rows"]
    }
    problems = []
    for condition in conditions:
        row = condition.row()
        for field in (*STRINGS, "kind"):
            _compare(
                problems,
                f"seed {seed}: {condition.label}",
                field,
                board[condition.label][field],
                row[field],
            )
    detail = release_writer._detail(conditions, {sid: scenarios[sid] for sid in g.scenario_ids})
    written = g.results / "test-writer-detail.json"
    written.write_text(json.dumps(detail))
    for line in writer_problems(g, written, f"seed {seed}: test-side writer"):
        if not any(f": {extra}: " in line for extra in ("trials",)):
            problems.append(line)
    mine = {
        (s["id"], v["model"]): v["trials"] for s in detail["scenarios"] for v in s["model_verdicts"]
    }
    for s in json.loads(g.detail.read_text())["scenarios"]:
        for v in s["model_verdicts"]:
            for up, ours in zip(v["trials"], mine[(s["id"], v["model"])], strict=True):
                for field in ("trial", "commit_permission", "status", "correct"):
                    _compare(
                        problems,
                        f"seed {seed}: {v['model']} / {s['id']} trial {up['trial']}",
                        field,
                        up[field],
                        ours[field],
                    )
    assert problems == []
