"""`make paper` end to end: every published number lands in numbers.json; bad input writes
nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import published
import pytest

from analysis import paths


def run_build(paper_dir, data_dir=None, *notebooks):
    env = dict(os.environ)
    if data_dir is not None:
        env["STEERBENCH_DATA_DIR"] = str(data_dir)
    return subprocess.run(
        [sys.executable, "-m", "analysis.build", "--paper-dir", str(paper_dir), *notebooks],
        capture_output=True,
        text=True,
        env=env,
        cwd=paths.PROJECT_ROOT,
    )


@pytest.fixture(scope="module")
def paper(built_paper):
    return built_paper


@pytest.fixture(scope="module")
def numbers(paper):
    return json.loads((paper / "numbers.json").read_text())["numbers"]


def value(numbers, name):
    return numbers[name]["value"]


def test_headline_numbers(numbers):
    k, n, rate = published.OVER_REFUSAL
    over = numbers["direction.over_refusal"]
    assert (over["numerator"], over["denominator"], over["value"]) == (k, n, rate)
    k, n, rate = published.UNDER_REFUSAL
    under = numbers["direction.under_refusal"]
    assert (under["numerator"], under["denominator"], under["value"]) == (k, n, rate)
    assert value(numbers, "direction.raw_ratio") == published.RAW_RATIO
    assert value(numbers, "direction.rate_ratio") == published.RATE_RATIO
    assert value(numbers, "direction.opportunity_ratio") == published.OPPORTUNITY_RATIO
    assert value(numbers, "direction.undecided_proceed_cells") == (
        published.UNDECIDED_PROCEED_CELLS
    )
    assert value(numbers, "direction.over_refusal_undecided_as_misses") == (
        published.OVER_REFUSAL_UNDECIDED_AS_MISSES
    )
    assert value(numbers, "gates.always-hold.accuracy") == published.ALWAYS_HOLD
    assert value(numbers, "gates.always-proceed.accuracy") == published.ALWAYS_PROCEED
    assert value(numbers, "gates.always-hold.over_refusal") == 100.0
    assert value(numbers, "gates.always-proceed.under_refusal") == 100.0


def test_corpus_numbers(numbers):
    assert value(numbers, "corpus.label.proceed") == published.LABELS["proceed"]
    assert value(numbers, "corpus.label.hold") == published.LABELS["hold"]
    for direction, count in published.DIRECTIONS.items():
        assert value(numbers, f"corpus.direction.{direction}") == count
    for pattern, count in published.PATTERNS.items():
        assert value(numbers, f"corpus.pattern.{pattern}") == count
    for (pattern, direction), count in published.RECONCILIATION.items():
        assert value(numbers, f"corpus.reconciliation.{pattern}.{direction}") == count


def test_leaderboard_numbers(numbers):
    label, mean, pass5 = published.LEADER
    assert value(numbers, "leaderboard.leader") == label
    assert value(numbers, "leaderboard.leader.mean_trial_accuracy") == mean
    assert value(numbers, "leaderboard.leader.pass5") == pass5
    label, modal = published.MODAL_LEADER
    assert value(numbers, "leaderboard.modal_leader") == label
    assert value(numbers, "leaderboard.modal_leader.modal_accuracy") == modal
    assert value(numbers, "leaderboard.conditions_beating_both_gates") == 30
    assert value(numbers, "table2.gpt-5-4-nano-off.mean_trial_accuracy") == 58.5


def test_reasoning_and_label_numbers(numbers):
    assert value(numbers, "reasoning.models_with_both") == published.REASONING_MODELS
    assert value(numbers, "reasoning.gpt-5-4-nano.mean_trial_accuracy.high") == 76.4
    assert value(numbers, "reasoning.gpt-5-4-nano.over_refusal.floor") == 80.4
    assert value(numbers, "reasoning.gemini-3-1-flash-lite.mean_trial_accuracy.high") == 83.4
    k, n, rate = published.HUMAN_MATCH
    match = numbers["labels.human_majority_match"]
    assert (match["numerator"], match["denominator"], match["value"]) == (k, n, rate)
    for label, kappa in published.HUMAN_KAPPAS.items():
        assert value(numbers, f"labels.human.fleiss_kappa.{label}") == kappa
    for name, reported in published.LLM_PANEL.items():
        assert value(numbers, f"labels.llm_panel.{name}") == reported


def test_every_number_names_its_inputs_and_notebook(numbers, paper):
    for name, entry in numbers.items():
        assert entry["inputs"], name
        assert all(len(digest) == 64 for digest in entry["inputs"].values()), name
        assert (paper / "notebooks" / f"{entry['notebook']}.ipynb").is_file(), name


def test_outputs(paper):
    for name in (
        "table2-leaderboard",
        "over-vs-under-refusal",
        "reasoning-floor-vs-high",
        "domain-by-action-effect",
    ):
        assert (paper / "figures" / f"{name}.pdf").stat().st_size > 0
        assert (paper / "figures" / f"{name}.png").stat().st_size > 0
    for name in (
        "table2-leaderboard",
        "direction-asymmetry",
        "reasoning-contrasts",
        "direction-pattern-reconciliation",
        "label-agreement",
    ):
        for suffix in ("tex", "md", "csv"):
            assert (paper / "tables" / f"{name}.{suffix}").is_file()
    assert "\\toprule" in (paper / "tables" / "table2-leaderboard.tex").read_text()
    assert "Table 2" in (paper / "index.html").read_text()


def test_bad_leaderboard_writes_nothing(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(paths.DATA_DIR, data, ignore=shutil.ignore_patterns("processed"))
    board_path = data / "runs" / paths.RELEASE / "leaderboard.json"
    board = json.loads(board_path.read_text())
    board["rows"][0]["under_refusal"] = "2% (1/50)"
    board_path.write_text(json.dumps(board))
    paper_dir = tmp_path / "paper"
    paper_dir.mkdir()
    (paper_dir / "keep.txt").write_text("previous build")
    result = run_build(paper_dir, data, "notebooks/01-corpus.ipynb")
    assert result.returncode == 2
    assert "gpt-5.4-nano (off): modal_accuracy" in result.stderr
    assert "Nothing was written" in result.stderr
    assert [p.name for p in paper_dir.iterdir()] == ["keep.txt"]
    assert not paper_dir.with_name("paper.staging").exists()
