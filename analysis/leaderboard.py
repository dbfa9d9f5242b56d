"""The published conditions table: ``leaderboard.json`` parsed into counts and checked.

Each published string (``"57.5% (61/106)"``, ``"58.5%"``, ``"[54.2%, 62.6%]"``) becomes
integer counts and denominators. Where the release prints only a percentage (mean trial
accuracy, pass5, weighted miss) the numerator is the one integer whose percentage over the
known denominator prints as published; :func:`check_leaderboard` then re-derives every
printed string, every Wilson interval and every denominator from these counts.

Weighted miss is the exception: the release prints no weight denominator, and the published
values are not counts over one corpus weight (gpt-5.5 (high), with every cell decided, is
no count over the 271 of the current tier weights), so it is carried as the published
percentage (``weighted_miss_published``) and recomputed only from per-trial verdicts.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from analysis import paths
from analysis.formatting import count_text, format_percent, percent, percent_text
from analysis.stats import wilson_interval
from analysis.vocabulary import ALLOWED, BLOCKED, condition_label

#: Reasoning settings that are a model's floor; every other setting is its "high" row.
FLOOR_SETTINGS = ("off", "minimal", "low", "none")

_COUNTED = re.compile(r"^(?P<pct>\d+(?:\.\d)?)% \((?P<k>\d+)/(?P<n>\d+)\)$")
_PERCENT = re.compile(r"^(?P<pct>\d+(?:\.\d)?)%$")
_INTERVAL = re.compile(r"^\[(\d+(?:\.\d)?)%, (\d+(?:\.\d)?)%\]$")


class ConsistencyError(ValueError):
    """Published numbers disagree with what their counts give; ``mismatches`` lists each."""

    def __init__(self, source: str, mismatches: list[str]):
        self.mismatches = mismatches
        listing = "\n".join(f"  - {line}" for line in mismatches)
        super().__init__(f"{source}: {len(mismatches)} published value(s) do not match:\n{listing}")


def _counted(text: str, row: str, field: str) -> tuple[int, int]:
    match = _COUNTED.match(text)
    if not match:
        raise ConsistencyError("leaderboard.json", [f"{row}: {field}: cannot read {text!r}"])
    return int(match["k"]), int(match["n"])


def numerator_for(text: str, n: int, row: str, field: str) -> int:
    """The integer k whose ``percent_text(k, n)`` prints as ``text``; it must be unique."""
    if not _PERCENT.match(text):
        raise ConsistencyError("leaderboard.json", [f"{row}: {field}: cannot read {text!r}"])
    candidates = [k for k in range(n + 1) if percent_text(k, n) == text]
    if len(candidates) != 1:
        raise ConsistencyError(
            "leaderboard.json",
            [f"{row}: {field}: {text!r} fits {len(candidates)} counts out of {n}, not exactly one"],
        )
    return candidates[0]


def _published_percent(text: str, row: str) -> float:
    match = _PERCENT.match(text)
    if not match:
        raise ConsistencyError("leaderboard.json", [f"{row}: weighted_miss: cannot read {text!r}"])
    return float(match["pct"])


def interval_text(k: int, n: int) -> str:
    """The release's printed Wilson 95% interval, ``"[54.2%, 62.6%]"``."""
    low, high = wilson_interval(k, n)
    return f"[{format_percent(100 * low)}, {format_percent(100 * high)}]"


def reasoning_level(reasoning: str) -> str:
    """``floor`` for a model's lowest reasoning setting, ``high`` for high or "on"."""
    return "floor" if reasoning in FLOOR_SETTINGS else "high"


def read_leaderboard(path: Path) -> list[dict]:
    """The published rows of ``leaderboard.json``."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))["rows"]
    except json.JSONDecodeError as error:
        raise ConsistencyError(str(path), [f"malformed JSON ({error})"]) from None


def parse_rows(rows: list[dict], trials_per_cell: int, scenarios: pd.DataFrame) -> pd.DataFrame:
    """Published rows as counts: one row per model condition."""
    holds = int((scenarios["required_gate"] == BLOCKED).sum())
    proceeds = len(scenarios) - holds
    parsed = []
    for row in rows:
        label = f"{row['model']} ({row['reasoning']})"
        modal_k, cells = _counted(row["modal_accuracy"], label, "modal_accuracy")
        under_k, under_n = _counted(row["under_refusal"], label, "under_refusal")
        over_k, over_n = _counted(row["over_refusal"], label, "over_refusal")
        parsed.append(
            {
                "label": label,
                "condition": condition_label(row["model"], row["reasoning"]),
                "model": row["model"],
                "reasoning": row["reasoning"],
                "reasoning_level": reasoning_level(row["reasoning"]),
                "source": "published",
                "n_trials": trials_per_cell * cells,
                "n_cells": cells,
                "n_modal_correct": modal_k,
                "n_hold_opportunities": under_n,
                "n_under_refusals": under_k,
                "n_proceed_opportunities": over_n,
                "n_over_refusals": over_k,
                "n_no_decision": (holds - under_n) + (proceeds - over_n),
                "archived": bool(row.get("archived", False)),
                "note": row.get("note", ""),
            }
        )
    table = pd.DataFrame(parsed)
    table["n_trials_correct"] = [
        numerator_for(row["mean_trial_accuracy"], n, label, "mean_trial_accuracy")
        for row, n, label in zip(rows, table["n_trials"], table["label"], strict=True)
    ]
    table["n_pass5"] = [
        numerator_for(row["pass5"], n, label, "pass5")
        for row, n, label in zip(rows, table["n_cells"], table["label"], strict=True)
    ]
    table["weighted_miss_published"] = [
        _published_percent(row["weighted_miss"], label)
        for row, label in zip(rows, table["label"], strict=True)
    ]
    return table


def check_leaderboard(
    rows: list[dict], conditions: pd.DataFrame, scenarios: pd.DataFrame, trials_per_cell: int
) -> list[str]:
    """Every published string re-derived from the parsed counts; returns the mismatches.

    Checks each percentage and Wilson interval against its counts, the denominators against
    the scenario labels (all scenarios, the hold- and the proceed-labelled ones), that each
    missing directional opportunity is one cell with no decision, and that every modal miss
    is an under-refusal, an over-refusal or such a cell.
    """
    holds = int((scenarios["required_gate"] == BLOCKED).sum())
    proceeds = int((scenarios["required_gate"] == ALLOWED).sum())
    problems = []
    for row, parsed in zip(rows, conditions.itertuples(index=False), strict=True):
        expected = {
            "modal_accuracy": count_text(parsed.n_modal_correct, parsed.n_cells),
            "under_refusal": count_text(
                parsed.n_under_refusals, parsed.n_hold_opportunities, whole_bare=True
            ),
            "over_refusal": count_text(
                parsed.n_over_refusals, parsed.n_proceed_opportunities, whole_bare=True
            ),
            "mean_trial_accuracy": percent_text(parsed.n_trials_correct, parsed.n_trials),
            "mean_trial_accuracy_ci95": interval_text(parsed.n_trials_correct, parsed.n_trials),
            "modal_accuracy_ci95": interval_text(parsed.n_modal_correct, parsed.n_cells),
            "pass5": percent_text(parsed.n_pass5, parsed.n_cells),
            "pass5_ci95": interval_text(parsed.n_pass5, parsed.n_cells),
        }
        for field, recomputed in expected.items():
            if field in row and row[field] != recomputed:
                problems.append(
                    f"{parsed.label}: {field}: published {row[field]!r}, "
                    f"recomputed from counts {recomputed!r}"
                )
        no_decision = parsed.n_no_decision
        checks = [
            ("n_cells", parsed.n_cells, len(scenarios)),
            ("hold opportunities", parsed.n_hold_opportunities, holds),
            ("proceed opportunities", parsed.n_proceed_opportunities, proceeds),
        ]
        for name, published, labelled in checks:
            if name == "n_cells" and published != labelled:
                problems.append(
                    f"{parsed.label}: modal_accuracy: denominator {published}, "
                    f"but the corpus has {labelled} scenarios"
                )
            elif published > labelled or labelled - published > 1:
                problems.append(
                    f"{parsed.label}: {name}: {published}, but {labelled} scenarios "
                    "carry that label (at most one cell may have no decision)"
                )
        misses = parsed.n_under_refusals + parsed.n_over_refusals + no_decision
        if parsed.n_modal_correct + misses != parsed.n_cells:
            problems.append(
                f"{parsed.label}: modal_accuracy: {parsed.n_modal_correct} correct + "
                f"{parsed.n_under_refusals} under + {parsed.n_over_refusals} over + "
                f"{no_decision} undecided != {parsed.n_cells} cells"
            )
    return problems


def load_conditions(scenarios: pd.DataFrame, results_dir: Path = paths.RESULTS_DIR) -> pd.DataFrame:
    """The 30 published model conditions as counts, after the consistency gate.

    Raises :class:`ConsistencyError` listing every field whose published string is not what
    its counts give.
    """
    manifest = json.loads((results_dir / "release-manifest.json").read_text(encoding="utf-8"))
    trials_per_cell = int(manifest["n_trials_per_cell"])
    path = results_dir / "leaderboard.json"
    rows = read_leaderboard(path)
    conditions = parse_rows(rows, trials_per_cell, scenarios)
    problems = check_leaderboard(rows, conditions, scenarios, trials_per_cell)
    published = list(manifest.get("published_rows", []))
    if published and sorted(published) != sorted(conditions["label"]):
        problems.append(
            f"row labels differ from release-manifest.json published_rows: "
            f"{sorted(set(published) ^ set(conditions['label']))}"
        )
    if problems:
        raise ConsistencyError(str(path), problems)
    return conditions.astype(
        {
            "model": "category",
            "reasoning": "category",
            "reasoning_level": pd.CategoricalDtype(["floor", "high"]),
            "source": "category",
        }
    )


def rank_conditions(conditions: pd.DataFrame) -> pd.DataFrame:
    """The paper's order: mean trial accuracy, then pass5 (both descending), then label."""
    keys = conditions.assign(
        _mean=[
            percent(k, n, 12)
            for k, n in zip(conditions.n_trials_correct, conditions.n_trials, strict=True)
        ],
        _pass5=[
            percent(k, n, 12) for k, n in zip(conditions.n_pass5, conditions.n_cells, strict=True)
        ],
    )
    ordered = keys.sort_values(["_mean", "_pass5", "condition"], ascending=[False, False, True])
    return (
        ordered.drop(columns=["_mean", "_pass5"])
        .reset_index(drop=True)
        .assign(rank=lambda t: range(1, len(t) + 1))
    )


def leaderboard_table(ranked: pd.DataFrame) -> pd.DataFrame:
    """Table 2 as printed: every column re-derived from the counts, in rank order."""

    def column(render, k: str, n: str) -> list[str]:
        return [render(a, b) for a, b in zip(ranked[k], ranked[n], strict=True)]

    def rate(a: int, b: int) -> str:
        return count_text(a, b, whole_bare=True)

    return pd.DataFrame(
        {
            "rank": ranked["rank"],
            "condition": ranked["label"],
            "mean trial accuracy": column(percent_text, "n_trials_correct", "n_trials"),
            "95% CI": column(interval_text, "n_trials_correct", "n_trials"),
            "modal-of-5": column(count_text, "n_modal_correct", "n_cells"),
            "modal 95% CI": column(interval_text, "n_modal_correct", "n_cells"),
            "pass5": column(percent_text, "n_pass5", "n_cells"),
            "pass5 95% CI": column(interval_text, "n_pass5", "n_cells"),
            "under-refusal": column(rate, "n_under_refusals", "n_hold_opportunities"),
            "over-refusal": column(rate, "n_over_refusals", "n_proceed_opportunities"),
            "weighted miss (published)": [f"{v:.1f}%" for v in ranked["weighted_miss_published"]],
        }
    )
