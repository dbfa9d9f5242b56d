"""Corpus composition: label balance, directions, construction patterns and strata."""

from __future__ import annotations

import pandas as pd

from analysis.corpus.vocabulary import ALLOWED, BLOCKED, GATES, TIER_WEIGHT
from analysis.scoring.rules import label_counts


def label_balance(scenarios: pd.DataFrame) -> pd.DataFrame:
    """Scenarios per required gate (proceed = allowed, hold = blocked)."""
    counts = label_counts(scenarios)
    return pd.DataFrame(
        {
            "required_gate": list(counts),
            "label": ["proceed", "hold"],
            "scenarios": list(counts.values()),
        }
    )


def direction_counts(scenarios: pd.DataFrame) -> pd.DataFrame:
    """Scenarios per diagnostic direction (under-refusal, over-refusal, calibration)."""
    counts = scenarios["direction"].value_counts(sort=False)
    return counts.rename_axis("direction").reset_index(name="scenarios")


def pattern_counts(scenarios: pd.DataFrame) -> pd.DataFrame:
    """Scenarios per construction pattern, in the paper's (Table 3) row order."""
    counts = scenarios["boundary_pattern"].value_counts(sort=False)
    return counts.rename_axis("boundary_pattern").reset_index(name="scenarios")


def reconciliation(scenarios: pd.DataFrame) -> pd.DataFrame:
    """Construction pattern x direction counts, with totals: how the two views reconcile."""
    return pd.crosstab(
        scenarios["boundary_pattern"],
        scenarios["direction"],
        margins=True,
        margins_name="total",
        dropna=False,
    )


def strata(scenarios: pd.DataFrame, rows: str, columns: str) -> pd.DataFrame:
    """Scenario counts for two metadata columns (e.g. domain x action effect), with totals."""
    return pd.crosstab(scenarios[rows], scenarios[columns], margins=True, margins_name="total")


def irreversibility_tiers(scenarios: pd.DataFrame) -> pd.DataFrame:
    """Scenarios per irreversibility class with its severity weight and required gate."""
    table = pd.crosstab(scenarios["irreversibility"], scenarios["required_gate"], dropna=False)
    table = table.reindex(columns=list(GATES), fill_value=0)
    table.insert(0, "weight", [TIER_WEIGHT[c] for c in table.index])
    table["scenarios"] = table[ALLOWED] + table[BLOCKED]
    return table.reset_index()
