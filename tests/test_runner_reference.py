"""Reference policies through the run-root writer: layout, scores, shards, cells, tidy export."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import published
import pytest

from analysis import paths
from analysis.runner.cells import modal_permission, score_cell
from analysis.runner.cli import main
from analysis.runner.gate_run import run_gate
from analysis.runner.gates import REFERENCE_POLICIES
from analysis.runner.identity import config_hash
from analysis.runner.runroot import RunRootError
from analysis.runner.shards import parse_shard, shard_scenarios
from analysis.runner.tidy import TIDY_COLUMNS, export_tidy
from analysis.scoring.ratio import Ratio

SAMPLE_TRIAL = (
    paths.sample_run_dir() / "mini" / "patient-records-employer-disclosure-002" / "trial-1.json"
)
TOP_LEVEL = (
    "RUN_PLAN.json",
    "PROMPT.txt",
    "SCENARIO_MANIFEST.json",
    "VARIANT_CONFIGS.json",
    "SCORING_RULE.json",
)


@pytest.fixture(scope="module")
def reference_root(inputs, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("reference")
    for gate in REFERENCE_POLICIES.values():
        run_gate(gate(), root, inputs=inputs, run_id="reference-policies", progress=False)
    return root


def _accuracy(root: Path, variant: str) -> tuple[int, int]:
    cells = [json.loads(p.read_text()) for p in (root / variant).glob("*/cell.json")]
    return sum(c["modal_correct"] for c in cells), len(cells)


def test_degenerate_gates_score_the_label_shares(reference_root: Path) -> None:
    labels, total = published.LABELS, published.LABELS["scenarios"]
    assert _accuracy(reference_root, "always-hold") == (labels["hold"], total)
    assert _accuracy(reference_root, "always-proceed") == (labels["proceed"], total)
    assert Ratio(*_accuracy(reference_root, "always-hold")).text() == f"{published.ALWAYS_HOLD}%"


def test_run_root_layout_and_field_names(reference_root: Path, inputs) -> None:
    for name in TOP_LEVEL:
        assert (reference_root / name).exists()
    assert (reference_root / "PROMPT.txt").read_text(encoding="utf-8") == inputs.system_prompt
    configs = json.loads((reference_root / "VARIANT_CONFIGS.json").read_text())["variants"]
    plan = json.loads((reference_root / "RUN_PLAN.json").read_text())
    for key, config in configs.items():
        assert config["config_hash"] == config_hash(config) == plan["variant_config_hashes"][key]
    trial_dir = reference_root / "surface-flag" / "patient-records-employer-disclosure-002"
    assert sorted(p.name for p in trial_dir.iterdir()) == [
        "cell.json",
        *(f"trial-{t}.json" for t in range(1, 6)),
    ]
    ours = json.loads((trial_dir / "trial-1.json").read_text())
    if SAMPLE_TRIAL.exists():
        published = json.loads(SAMPLE_TRIAL.read_text())
        assert set(published) <= set(ours)
        published_cell = json.loads((SAMPLE_TRIAL.parent / "cell.json").read_text())
        ours_cell = json.loads((trial_dir / "cell.json").read_text())
        assert set(published_cell) == set(ours_cell)
    assert ours["request_body"]["messages"][1]["content"].startswith("scenario_id: patient-")


def test_surface_flag_reads_the_flag_lines(inputs) -> None:
    gate = REFERENCE_POLICIES["surface-flag"]()
    for scenario in inputs.scenarios:
        flags = set(scenario.flag_line("risk_flags") + scenario.flag_line("integrity_flags"))
        expected = "blocked" if flags - {"commit_point"} else "allowed"
        assert gate.permission(scenario) == expected
    derived = [s for s in inputs.scenarios if "success_criterion_change" in s.user_input]
    assert len(derived) == published.DERIVED_FLAG_ROWS
    assert all(gate.permission(s) == "blocked" for s in derived)


def test_rerun_reuses_every_trial(reference_root: Path, inputs) -> None:
    gate = REFERENCE_POLICIES["always-hold"]()
    summary = run_gate(gate, reference_root, inputs=inputs, progress=False)
    assert summary.run_id == "reference-policies"
    on_disk = len(list((reference_root / "always-hold").glob("*/trial-*.json")))
    assert (summary.n_calls_made, summary.n_trials_reused) == (0, on_disk)


def test_a_different_run_id_is_refused(inputs, tmp_path: Path) -> None:
    gate = REFERENCE_POLICIES["always-proceed"]()
    ids = [s.id for s in inputs.scenarios[:2]]
    run_gate(gate, tmp_path, inputs=inputs, run_id="a", scenario_ids=ids, trials=2, progress=False)
    with pytest.raises(RunRootError, match=r"run id .* is 'b' but the root records 'a'"):
        run_gate(
            gate, tmp_path, inputs=inputs, run_id="b", scenario_ids=ids, trials=2, progress=False
        )


def test_shards_partition_the_sorted_scenarios(inputs) -> None:
    assert parse_shard("2/3") == (2, 3)
    with pytest.raises(ValueError):
        parse_shard("4/3")
    shards = [shard_scenarios(inputs.scenarios, (i, 3)) for i in (1, 2, 3)]
    ids = sorted(s.id for shard in shards for s in shard)
    assert ids == [s.id for s in inputs.scenarios]
    assert [s.id for s in shards[1][:2]] == [inputs.scenarios[1].id, inputs.scenarios[4].id]


def test_modal_ties_go_to_the_first_value_seen() -> None:
    assert modal_permission(["allowed", "blocked", "blocked", "allowed"]) == ("allowed", 2)
    assert modal_permission([None, "blocked", "allowed"]) == ("blocked", 1)
    assert modal_permission([None, None]) == (None, 0)
    cell = score_cell([None, None, None], "blocked")
    assert cell["modal_commit_permission"] is None and cell["modal_correct"] is None
    cell = score_cell(["blocked", None, "blocked", "allowed", "blocked"], "blocked")
    assert (cell["n_correct_trials"], cell["pass_all_trials"], cell["modal_correct"]) == (
        3,
        False,
        True,
    )


@pytest.mark.parametrize(
    "permissions",
    [
        ["allowed", "blocked", "blocked", "allowed"],
        ["blocked", "allowed", None, "allowed", "blocked"],
        [None, None, "allowed"],
        [None, None],
    ],
)
def test_modal_agrees_with_the_project_scoring_rules(permissions: list) -> None:
    import numpy as np

    from analysis.scoring import rules as scoring

    def first(value: str) -> int:
        return permissions.index(value) if value in permissions else len(permissions)

    code = scoring.modal_decision(
        np.array([permissions.count("allowed")]),
        np.array([permissions.count("blocked")]),
        np.array([first("allowed")]),
        np.array([first("blocked")]),
    )[0]
    expected = None if code == scoring.NO_DECISION else ("allowed", "blocked")[code]
    assert modal_permission(permissions)[0] == expected


@pytest.mark.slow  # six runner passes over the corpus: about 2.5 s of CPU
def test_tidy_export_merges_shards_and_matches_committed_data(inputs, tmp_path: Path) -> None:
    roots = []
    for i in (1, 2):
        root = tmp_path / f"shard-{i}"
        for name in REFERENCE_POLICIES:
            args = ["--gate", name, "--out", str(root), "--shard", f"{i}/2", "--no-progress"]
            assert main([*args, "--run-id", "reference-policies"]) == 0
        roots.append(root)
    out = tmp_path / "trials.csv"
    assert main(["export-tidy", *map(str, roots), str(out)]) == 0
    with out.open() as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0]) == TIDY_COLUMNS
    assert len(rows) == sum(len(list(root.glob("*/*/trial-*.json"))) for root in roots)
    assert {(r["reasoning"], r["source"]) for r in rows} == {("policy", "reference-policy")}
    committed = paths.reference_runs_dir() / "trials.csv"
    assert out.read_bytes() == committed.read_bytes()
    half = len(list(roots[0].glob("*/*/trial-*.json")))
    assert 0 < half < len(rows)
    assert export_tidy([roots[0]], tmp_path / "half.csv") == half
