"""The per-trial gate: published per-trial verdicts must reproduce the leaderboard's counts.

Weighted miss is not compared: the release prints no weight denominator and its values are
not counts over the current tier weights (see :mod:`analysis.leaderboard`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from analysis import paths
from analysis.leaderboard import ConsistencyError
from analysis.scoring import condition_scores, score_cells
from analysis.verdicts import discover_runs, load_trials

PUBLISHED = "published"

#: Each compared field: (name, numerator column, denominator column or None).
FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("mean_trial_accuracy", "n_trials_correct", "n_trials"),
    ("modal_accuracy", "n_modal_correct", "n_cells"),
    ("pass5", "n_pass5", None),
    ("under_refusal", "n_under_refusals", "n_hold_opportunities"),
    ("over_refusal", "n_over_refusals", "n_proceed_opportunities"),
)


def _shown(row: pd.Series, k: str, n: str | None) -> str:
    return f"{int(row[k])}/{int(row[n])}" if n else f"{int(row[k])}"


def check_trials_against_leaderboard(scores: pd.DataFrame, conditions: pd.DataFrame) -> list[str]:
    """Compare per-trial condition scores of source ``published`` with the leaderboard rows
    of the same ``condition``; one line per differing field (mean trial accuracy, modal
    accuracy, pass5, under- and over-refusal, each as counts), naming the row and both values.
    A published per-trial condition absent from the leaderboard is one line too."""
    published = scores.loc[scores["source"].astype(str) == PUBLISHED].copy()
    published["condition"] = published["condition"].astype(str)
    board = conditions.copy()
    board["condition"] = board["condition"].astype(str)
    board = board.set_index("condition")
    problems = []
    for _, row in published.sort_values("condition").iterrows():
        name = row["condition"]
        if name not in board.index:
            problems.append(f"{name}: per-trial verdicts name a condition not on the leaderboard")
            continue
        expected = board.loc[name]
        label = expected["label"] if "label" in board.columns else name
        for field, k, n in FIELDS:
            columns = [k] if n is None else [k, n]
            if any(int(row[c]) != int(expected[c]) for c in columns):
                problems.append(
                    f"{label}: {field} ({'/'.join(columns)}): published "
                    f"{_shown(expected, k, n)}, recomputed from per-trial verdicts "
                    f"{_shown(row, k, n)}"
                )
    return problems


def require_consistent(
    scores: pd.DataFrame, conditions: pd.DataFrame, source: str = "per-trial verdicts"
) -> None:
    """Raise :class:`ConsistencyError` when ``check_trials_against_leaderboard`` finds any
    difference."""
    problems = check_trials_against_leaderboard(scores, conditions)
    if problems:
        raise ConsistencyError(source, problems)


def verdict_inputs(verdict_paths: Sequence[str | Path] | None) -> list[Path]:
    """The verdict files and folders ``load_trials(verdict_paths)`` reads."""
    if verdict_paths is None:
        return [p for entry in discover_runs() for p in entry["paths"]]
    return [Path(p) for p in verdict_paths]


def load_checked_cells(
    scenarios: pd.DataFrame,
    verdict_paths: Sequence[str | Path] | None = None,
    results_dir: Path = paths.RESULTS_DIR,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(trials, cells) of every verdict found (``verdict_paths`` None: auto-detected under
    ``paths.RUNS_DIR``); when published per-trial verdicts are among them, they must pass
    :func:`require_consistent` against the published leaderboard first."""
    trials = load_trials(
        None if verdict_paths is None else [str(p) for p in verdict_paths], scenarios=scenarios
    )
    cells = score_cells(trials, scenarios)
    if (cells["source"].astype(str) == PUBLISHED).any():
        from analysis.leaderboard import load_conditions

        conditions = load_conditions(scenarios, results_dir)
        require_consistent(condition_scores(cells), conditions)
    return trials, cells


def source_summary(cells: pd.DataFrame) -> str:
    """Which conditions the analysis runs on, by source, as one sentence."""
    pairs = cells[["source", "condition"]].astype(str).drop_duplicates()
    named = {
        source: sorted(group["condition"]) for source, group in pairs.groupby("source", sort=True)
    }
    words = {"reference-gate": "reference gates", "run": "run", PUBLISHED: "published"}
    parts = [f"{words.get(s, s)} {', '.join(c)}" for s, c in named.items()]
    listing = " and ".join(parts) if parts else "nothing"
    if PUBLISHED in named:
        return f"Published per-trial verdicts present (gate passed): running on {listing}."
    return f"No published per-trial verdicts present: running on {listing}."
