"""The per-trial cross-check against a leaderboard-like conditions frame."""

from __future__ import annotations

import pandas as pd
import pytest
from factories import breakdown_cells

from analysis.scoring.crosscheck import (
    check_trials_against_leaderboard,
    published_names,
    require_consistent,
    source_summary,
    with_published_names,
)
from analysis.scoring.leaderboard import CrossCheckError
from analysis.scoring.rules import condition_scores


def leaderboard_like() -> tuple[pd.DataFrame, pd.DataFrame]:
    scores = condition_scores(breakdown_cells())
    board = scores.copy()
    board["condition"] = board["condition"].astype(str)
    board["label"] = board["condition"]
    return scores, board


def test_agreeing_verdicts_pass() -> None:
    scores, board = leaderboard_like()
    assert check_trials_against_leaderboard(scores, board) == []
    require_consistent(scores, board)


def test_weighted_miss_is_compared_as_printed() -> None:
    scores, board = leaderboard_like()
    scores.loc[scores["condition"] == "m1 (off)", "weight_missed"] += 3  # 4/11 -> 7/11
    assert check_trials_against_leaderboard(scores, board) == [
        "m1 (off): weighted_miss: published '36.4%', recomputed from per-trial verdicts '63.6%'"
    ]


def test_disagreeing_verdicts_are_refused_naming_rows_and_fields() -> None:
    scores, board = leaderboard_like()
    board.loc[board["condition"] == "m1 (off)", "n_pass5"] = 3
    board.loc[board["condition"] == "m2 (off)", "n_over_refusals"] = 2
    board.loc[board["condition"] == "m3 (high)", "n_trials"] = 25
    problems = check_trials_against_leaderboard(scores, board)
    assert problems == [
        "m1 (off): pass5 (n_pass5): published 3, recomputed from per-trial verdicts 2",
        "m2 (off): over_refusal (n_over_refusals/n_proceed_opportunities): published 2/4, "
        "recomputed from per-trial verdicts 3/4",
        "m3 (high): mean_trial_accuracy (n_trials_correct/n_trials): published 25/25, "
        "recomputed from per-trial verdicts 25/30",
    ]
    with pytest.raises(CrossCheckError) as error:
        require_consistent(scores, board)
    assert error.value.mismatches == problems
    assert "m2 (off)" in str(error.value)


def test_unknown_published_condition_is_named() -> None:
    scores, board = leaderboard_like()
    board = board[board["condition"] != "m2 (off)"]
    assert check_trials_against_leaderboard(scores, board) == [
        "m2 (off): per-trial verdicts name a condition not on the leaderboard"
    ]


def test_other_sources_are_not_gated() -> None:
    scores = condition_scores(breakdown_cells("run"))
    _, board = leaderboard_like()
    board["n_pass5"] = 0
    assert check_trials_against_leaderboard(scores, board) == []


def test_source_summary() -> None:
    text = source_summary(breakdown_cells("run"))
    assert text.startswith("No published per-trial verdicts present.")
    assert "run: m1 (off): stands alone" in text.splitlines()
    published = source_summary(breakdown_cells("published"))
    assert "published: pooled over 3 conditions (m1 (off), m2 (off), m3 (high))" in published


def test_cell_records_must_match_their_own_trials(tmp_path) -> None:
    """Swapping the trial lists of two cells of one condition keeps every per-condition count
    but contradicts the cell records; the check names file, condition, scenario and field."""
    import json

    from factories import scenarios_frame, trials_frame

    from analysis.exploring.export import write_scenarios_detail
    from analysis.scoring.crosscheck import check_cell_records

    path = write_scenarios_detail(trials_frame(), scenarios_frame(), tmp_path / "detail.json")
    cells = score_cells_of(path)
    assert check_cell_records(path, cells) == []
    doc = json.loads(path.read_text())
    by_id = {s["id"]: s for s in doc["scenarios"]}
    first = next(v for v in by_id["s-hold-1"]["model_verdicts"] if v["model"] == "model-a (off)")
    second = next(v for v in by_id["s-go-1"]["model_verdicts"] if v["model"] == "model-a (off)")
    first["trials"], second["trials"] = second["trials"], first["trials"]
    path.write_text(json.dumps(doc))
    problems = check_cell_records(path, score_cells_of(path))
    assert (
        "detail.json: model-a (off) / s-hold-1: n_correct: stated 5, its trials give 2" in problems
    )
    assert any(p.startswith("detail.json: model-a (off) / s-go-1: split.allowed") for p in problems)


def test_cell_records_are_compared_in_kind_and_in_the_files_order(tmp_path) -> None:
    """A stated 1 is not true, true is not 1, null is not a decision; a field not stated is
    not compared, a split's missing side counts 0; the lines follow the file's order."""
    import json

    from factories import scenarios_frame, trials_frame

    from analysis.exploring.export import write_scenarios_detail
    from analysis.scoring.crosscheck import check_cell_records

    path = write_scenarios_detail(trials_frame(), scenarios_frame(), tmp_path / "detail.json")
    doc = json.loads(path.read_text())
    cell = {(s["id"], v["model"]): v for s in doc["scenarios"] for v in s["model_verdicts"]}
    hold, go = cell["s-hold-1", "model-a (off)"], cell["s-go-1", "model-a (off)"]
    n_trials, blocked, decision = hold["n_trials"], hold["split"]["blocked"], go["modal_decision"]
    assert hold["correct"] is True and blocked > 0 and decision is not None
    hold["correct"], hold["n_trials"], go["modal_decision"] = 1, True, None
    del hold["modal_count"], hold["split"]["blocked"]
    doc["scenarios"].reverse()  # the file's order, not the table's
    path.write_text(json.dumps(doc))
    problems = check_cell_records(path, score_cells_of(path))
    at = "detail.json: model-a (off) /"
    assert problems == [
        f"{at} s-go-1: modal_decision: stated None, its trials give {decision!r}",
        f"{at} s-hold-1: n_trials: stated True, its trials give {n_trials}",
        f"{at} s-hold-1: correct: stated 1, its trials give True",
        f"{at} s-hold-1: split.blocked: stated 0, its trials give {blocked}",
    ]


def test_cell_records_state_unanimous_and_the_scored_flags_as_upstream_means_them(
    tmp_path,
) -> None:
    """``unanimous`` is every trial correct or none (restated here from each record's own
    trials), and it and the scored flags are compared with what the trials give."""
    import json

    from factories import scenarios_frame, trials_frame

    from analysis.exploring.export import write_scenarios_detail
    from analysis.scoring.crosscheck import check_cell_records

    path = write_scenarios_detail(trials_frame(), scenarios_frame(), tmp_path / "detail.json")
    doc = json.loads(path.read_text())
    records = [(s["id"], v) for s in doc["scenarios"] for v in s["model_verdicts"]]
    for _, v in records:  # upstream's rule, restated from the trials themselves
        correct = [t["correct"] is True for t in v["trials"]]
        assert v["unanimous"] is (all(correct) or not any(correct))
    sid, record = next((s, v) for s, v in records if v["modal_scored"])
    record["unanimous"] = not record["unanimous"]
    record["modal_scored"] = False
    record["directionally_scored"] = not record["directionally_scored"]
    path.write_text(json.dumps(doc))
    at = f"detail.json: {record['model']} / {sid}"
    assert check_cell_records(path, score_cells_of(path)) == [
        f"{at}: unanimous: stated {record['unanimous']}, its trials give {not record['unanimous']}",
        f"{at}: modal_scored: stated False, its trials give True",
        f"{at}: directionally_scored: stated {record['directionally_scored']}, its trials give "
        f"{not record['directionally_scored']}",
    ]


def score_cells_of(path):
    from factories import scenarios_frame

    from analysis.scoring.rules import score_cells
    from analysis.trials import load_scenarios_detail

    return score_cells(load_scenarios_detail(path), scenarios_frame())


def test_published_verdicts_take_the_leaderboards_name_and_runs_keep_theirs() -> None:
    board = pd.DataFrame(
        {
            "label": ["tau (on (budget 2048))", "tau (off)"],
            "verdict_label": ["tau (on)", "tau (off)"],
            "model": ["tau", "tau"],
            "reasoning": ["on (budget 2048)", "off"],
        }
    )
    frame = pd.DataFrame(
        {
            "condition": pd.Categorical(["tau (on)", "tau (off)", "tau (on)"]),
            "reasoning": pd.Categorical(["on", "off", "on"]),
            "source": ["published", "published", "run"],
        }
    )
    named = with_published_names(frame, published_names(board))
    assert named["condition"].tolist() == ["tau (on (budget 2048))", "tau (off)", "tau (on)"]
    assert named["reasoning"].tolist() == ["on (budget 2048)", "off", "on"]
    assert isinstance(named["condition"].dtype, pd.CategoricalDtype)


def test_two_rows_the_verdict_file_writes_alike_are_refused() -> None:
    board = pd.DataFrame(
        {
            "label": ["tau (on (budget 2048))", "tau (on (budget 8192))"],
            "verdict_label": ["tau (on)", "tau (on)"],
            "model": ["tau", "tau"],
            "reasoning": ["on (budget 2048)", "on (budget 8192)"],
        }
    )
    with pytest.raises(CrossCheckError, match=r"tau \(on \(budget 2048\)\) and tau \(on"):
        published_names(board)


def test_a_cell_without_a_modal_decision_states_correct_null(tmp_path) -> None:
    """The release's scorer writes ``correct: null`` for a cell with no modal decision (every
    trial unparsed, or every trial filtered); the check accepts it, and refuses ``false``
    there and ``null`` for a decided cell, naming the field."""
    import json

    from factories import scenarios_frame, trials_frame

    from analysis.exploring.export import write_scenarios_detail
    from analysis.scoring.crosscheck import check_cell_records

    path = write_scenarios_detail(trials_frame(), scenarios_frame(), tmp_path / "detail.json")
    doc = json.loads(path.read_text())
    cell = {(s["id"], v["model"]): v for s in doc["scenarios"] for v in s["model_verdicts"]}
    unparsed, filtered = cell["s-go-2", "model-a (off)"], cell["s-hold-1", "model-b (on)"]
    decided = cell["s-hold-1", "model-a (off)"]
    assert unparsed["correct"] is None and filtered["correct"] is None
    assert [t["correct"] for t in unparsed["trials"]] == [None] * 5
    assert decided["correct"] is True
    assert check_cell_records(path, score_cells_of(path)) == []
    unparsed["correct"], filtered["correct"], decided["correct"] = False, False, None
    path.write_text(json.dumps(doc))
    at = "detail.json:"
    assert check_cell_records(path, score_cells_of(path)) == [
        f"{at} model-a (off) / s-hold-1: correct: stated None, its trials give True",
        f"{at} model-b (on) / s-hold-1: correct: stated False, its trials give None",
        f"{at} model-a (off) / s-go-2: correct: stated False, its trials give None",
    ]
