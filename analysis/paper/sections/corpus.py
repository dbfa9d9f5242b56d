"""Section ``01-corpus``: what it records and draws from the scenario table."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from analysis.paper.provenance import number_name, numbers_table, ratio_number, value_number


def _count(name: str, count: int, description: str) -> dict:
    return value_number(name, int(count), description, unit="scenarios", digits=None)


def corpus_size(scenarios: pd.DataFrame) -> pd.DataFrame:
    """``corpus.scenarios``: the number of scenarios."""
    return numbers_table([_count("corpus.scenarios", len(scenarios), "scenarios in the corpus")])


def _counted(frame: pd.DataFrame, kind: str, column: str, describe) -> pd.DataFrame:
    """``corpus.<kind>.<value of column>``: each row's ``scenarios`` count."""
    return numbers_table(
        _count(number_name("corpus", kind, getattr(row, column)), row.scenarios, describe(row))
        for row in frame.itertuples()
    )


def label_numbers(balance: pd.DataFrame) -> pd.DataFrame:
    """``corpus.label.<label>`` per row of :func:`analysis.scoring.composition.label_balance`."""
    return _counted(
        balance, "label", "label", lambda r: f"scenarios whose required gate is {r.required_gate}"
    )


def direction_numbers(directions: pd.DataFrame) -> pd.DataFrame:
    """``corpus.direction.<direction>`` per row of
    :func:`analysis.scoring.composition.direction_counts`."""
    return _counted(directions, "direction", "direction", lambda r: f"{r.direction} scenarios")


def pattern_numbers(patterns: pd.DataFrame) -> pd.DataFrame:
    """``corpus.pattern.<pattern>`` per row of
    :func:`analysis.scoring.composition.pattern_counts`."""
    return _counted(
        patterns, "pattern", "boundary_pattern", lambda r: f"{r.boundary_pattern} scenarios"
    )


def reconciliation_numbers(reconciled: pd.DataFrame) -> pd.DataFrame:
    """``corpus.reconciliation.<pattern>.<direction>`` for every non-empty (pattern,
    direction) of :func:`analysis.scoring.composition.reconciliation` (totals left out)."""
    counts = reconciled.drop(index="total", columns="total")
    long = counts.stack().rename("scenarios").reset_index()
    long.columns = ["pattern", "direction", "scenarios"]
    return numbers_table(
        _count(
            number_name("corpus", "reconciliation", row.pattern, row.direction),
            row.scenarios,
            f"{row.pattern} scenarios in the {row.direction} direction",
        )
        for row in long.itertuples()
        if row.scenarios
    )


def gate_numbers(gates: pd.DataFrame) -> pd.DataFrame:
    """Accuracy, over- and under-refusal of each degenerate gate
    (:func:`analysis.scoring.metrics.degenerate_gates`) scored on the labels."""
    rows = []
    for gate in gates.itertuples():
        rows += [
            ratio_number(
                number_name("gates", gate.condition, "accuracy"),
                gate.n_modal_correct,
                gate.n_cells,
                f"{gate.condition} modal accuracy on the labels",
            ),
            ratio_number(
                number_name("gates", gate.condition, "over_refusal"),
                gate.n_over_refusals,
                gate.n_proceed_opportunities,
                f"{gate.condition} over-refusal",
            ),
            ratio_number(
                number_name("gates", gate.condition, "under_refusal"),
                gate.n_under_refusals,
                gate.n_hold_opportunities,
                f"{gate.condition} under-refusal",
            ),
        ]
    return numbers_table(rows)


GATE_COLUMNS = [
    "condition",
    "n_modal_correct",
    "n_cells",
    "n_over_refusals",
    "n_proceed_opportunities",
    "n_under_refusals",
    "n_hold_opportunities",
]


def gate_table(gates: pd.DataFrame) -> pd.DataFrame:
    """The degenerate gates' counts, for a reader."""
    return gates[GATE_COLUMNS]


def strata_figure(strata: pd.DataFrame, rows: str = "Domain", columns: str = "Action effect"):
    """A count heatmap of :func:`analysis.scoring.composition.strata` (totals left out)."""
    counts = strata.drop(index="total", columns="total")
    fig, ax = plt.subplots(figsize=(8, 4.5))
    sns.heatmap(
        counts,
        annot=True,
        fmt="d",
        cmap="Blues",
        cbar_kws={"label": "scenarios"},
        linewidths=0.5,
        linecolor="white",
        ax=ax,
    )
    ax.set(xlabel=columns, ylabel=rows)
    plt.setp(ax.get_xticklabels(), rotation=35, ha="right", rotation_mode="anchor")
    return fig
