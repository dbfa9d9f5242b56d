"""Section ``04-reasoning``: reasoning floor against high from the published counts."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from analysis.corpus.formatting import points_text
from analysis.paper.figures import PAIR, first_and_last
from analysis.paper.provenance import number_name, numbers_table, ratio_number, value_number
from analysis.scoring.ratio import Ratio

#: Each contrasted rate: (name, numerator, denominator, description, reader's name).
CONTRASTED = (
    ("mean_trial_accuracy", "n_trials_correct", "n_trials", "mean trial accuracy", "accuracy"),
    (
        "over_refusal",
        "n_over_refusals",
        "n_proceed_opportunities",
        "modal over-refusal",
        "over-refusal",
    ),
)
LEVELS = ("floor", "high")


def reasoning_numbers(contrasts: pd.DataFrame) -> pd.DataFrame:
    """The number of models with both settings, and each model's mean trial accuracy and
    over-refusal at its floor and high setting
    (:func:`analysis.scoring.metrics.reasoning_contrasts`)."""
    rows = [
        value_number(
            "reasoning.models_with_both",
            len(contrasts),
            "models with one floor and one high row",
            unit="models",
            digits=None,
        )
    ]
    for row in contrasts.to_dict("records"):
        for level in LEVELS:
            setting = row[f"reasoning_{level}"]
            rows += [
                ratio_number(
                    number_name("reasoning", row["model"], name, level),
                    row[f"{k}_{level}"],
                    row[f"{n}_{level}"],
                    f"{row['model']} ({setting}): {what}",
                )
                for name, k, n, what, _ in CONTRASTED
            ]
    return numbers_table(rows)


def _points(value: float) -> str:
    return f"{100 * value:+.1f}"


def reasoning_table(contrasts: pd.DataFrame) -> pd.DataFrame:
    """The reader's table: per model, each rate at floor and high (rounded once from the
    counts), high minus floor in points and its unpaired Newcombe 95% interval."""
    table = pd.DataFrame(
        {
            "model": contrasts["model"],
            "floor": contrasts["reasoning_floor"],
            "high": contrasts["reasoning_high"],
        }
    )
    records = contrasts.to_dict("records")
    for name, k, n, _, shown in CONTRASTED:
        for level in LEVELS:
            table[f"{shown} {level}"] = [
                Ratio(r[f"{k}_{level}"], r[f"{n}_{level}"]).text() for r in records
            ]
        table[f"{shown} diff (pts)"] = [
            points_text(r[f"{k}_high"], r[f"{n}_high"], r[f"{k}_floor"], r[f"{n}_floor"])
            for r in records
        ]
        table[f"{shown} 95% CI"] = [
            f"[{_points(r[f'{name}_diff_low'])}, {_points(r[f'{name}_diff_high'])}]"
            for r in records
        ]
    return table


def reasoning_figure(contrasts: pd.DataFrame) -> plt.Figure:
    """High minus floor per model for mean trial accuracy and over-refusal, with the
    unpaired 95% intervals; rows in the table's order (largest accuracy gain first), and
    beyond ``analysis.paper.figures.FIGURE_ROWS`` models the first and the last."""
    contrasts, shown = first_and_last(contrasts)
    fig, axes = plt.subplots(1, 2, figsize=(8, 0.3 * len(contrasts) + 1.4), sharey=True)
    if shown:
        fig.suptitle(shown, fontsize=8)
    y = list(range(len(contrasts)))
    for ax, metric, title, colour in (
        (axes[0], "mean_trial_accuracy", "Mean trial accuracy", PAIR[0]),
        (axes[1], "over_refusal", "Over-refusal", PAIR[1]),
    ):
        diff = 100 * contrasts[f"{metric}_diff"]
        ax.errorbar(
            diff,
            y,
            xerr=[
                diff - 100 * contrasts[f"{metric}_diff_low"],
                100 * contrasts[f"{metric}_diff_high"] - diff,
            ],
            fmt="o",
            color=colour,
            capsize=2,
        )
        if len(contrasts):
            ax.axvline(0, color="0.3", lw=0.8, marker="")
        ax.set(title=title, xlabel="High minus floor (percentage points)")
    axes[0].set_yticks(y, contrasts["model"])
    axes[0].invert_yaxis()
    if contrasts.empty:
        for ax in axes:
            ax.set_xticks([])
            ax.text(
                0.5,
                0.5,
                "no model has one floor\nand one high condition",
                transform=ax.transAxes,
                ha="center",
                va="center",
                fontsize=8,
                color="0.3",
            )
    return fig
