"""Three reads of the same trials, ranked (``stability``), and how each pool's cells split
their trials (``split_distribution``): pure functions of scored cells
(``analysis.scoring.rules.score_cells``), pooled as :func:`analysis.scoring.breakdowns.pool_cells`
pools them.
"""

from __future__ import annotations

import pandas as pd

from analysis.scoring.breakdowns import pool_cells
from analysis.scoring.ranking import table2_order_key
from analysis.scoring.rules import condition_scores


def stability(cells: pd.DataFrame) -> pd.DataFrame:
    """Three reads of the same trials per (pool, condition), each ranked within its pool.

    Parameters
    ----------
    cells : DataFrame
        Scored cells (:func:`score_cells`, :func:`load_checked_cells`); each source's
        conditions form pools as :func:`~analysis.scoring.breakdowns.pool_cells` forms them.

    Returns
    -------
    DataFrame
        One row per (source, condition): the counts (``n_trials``, ``n_trials_correct``,
        ``n_cells``, ``n_modal_correct``, ``n_pass5``), the three reads
        ``mean_trial_accuracy`` (correct / all trials), ``modal_accuracy`` (modal-correct /
        cells) and ``pass5`` (cells with every trial correct / cells), and their ranks within
        the pool (1 = best). ``rank_mean_trial_accuracy`` is Table 2's order (mean trial
        accuracy, then pass5 count, then label: no ties); ``rank_modal_accuracy`` and
        ``rank_pass5`` share the lowest rank on a tie (``method="min"``);
        ``modal_vs_pass5_differ`` flags a condition whose modal rank and reliability (pass5)
        rank differ. A condition with no scored cell gets no rank.

    See Also
    --------
    rank_conditions : Table 2's order, on conditions' counts.
    analysis.inference.pass_hat_k : pass^k, the chance that k trials all succeed.

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, _ = simulated_cells(n_models=1, n_scenarios=8, seed=0)
    >>> stability(cells)[["condition", "n_cells", "n_modal_correct", "n_pass5"]]
           condition  n_cells  n_modal_correct  n_pass5
    0  sim-01 (high)        8                5        1
    1   sim-01 (off)        8                5        0
    """
    scores = condition_scores(pool_cells(cells))
    table = scores[
        [
            "source",
            "condition",
            "n_trials",
            "n_trials_correct",
            "n_cells",
            "n_modal_correct",
            "n_pass5",
        ]
    ].copy()
    for column in ("source", "condition"):
        table[column] = table[column].astype(str)
    return _three_reads(table)


def leaderboard_stability(conditions: pd.DataFrame) -> pd.DataFrame:
    """:func:`stability` for the published conditions, from the counts in
    ``leaderboard.json`` (``analysis.scoring.leaderboard.load_conditions``); source
    ``published``."""
    columns = ["n_trials", "n_trials_correct", "n_cells", "n_modal_correct", "n_pass5"]
    table = conditions[["label", *columns]].rename(columns={"label": "condition"})
    table.insert(0, "source", "published")
    return _three_reads(table.astype({"condition": str}).reset_index(drop=True))


def _three_reads(table: pd.DataFrame) -> pd.DataFrame:
    """Add the three reads, their ranks within each source and the modal/pass5 flag."""
    table = table.copy()
    empty = table["n_cells"] == 0
    table["mean_trial_accuracy"] = table["n_trials_correct"] / table["n_trials"].where(~empty)
    table["modal_accuracy"] = table["n_modal_correct"] / table["n_cells"].where(~empty)
    table["pass5"] = table["n_pass5"] / table["n_cells"].where(~empty)
    columns = ("source", "n_trials_correct", "n_trials", "n_pass5", "condition")
    rows = zip(table.index, *(table[c].tolist() for c in columns), strict=True)
    keyed = {i: (s, *table2_order_key(k, n, p, c)) for i, s, k, n, p, c in rows}
    order = sorted(table.index[~empty], key=keyed.__getitem__)
    table["rank_mean_trial_accuracy"] = pd.Series(pd.NA, index=table.index, dtype="Int64")
    for _, members in table.loc[order].groupby("source", sort=False):
        table.loc[members.index, "rank_mean_trial_accuracy"] = range(1, len(members) + 1)
    for name in ("modal_accuracy", "pass5"):
        table[f"rank_{name}"] = (
            table.groupby("source")[name].rank(method="min", ascending=False).astype("Int64")
        )
    table["modal_vs_pass5_differ"] = (
        (table["rank_modal_accuracy"] != table["rank_pass5"]).fillna(False).astype(bool)
    )
    return table.sort_values(
        ["source", "rank_mean_trial_accuracy", "condition"], ignore_index=True, na_position="last"
    )


def split_label(modal_count: int, n_decided: int, n_trials: int) -> str:
    """``"4-1"``: modal-decision trials against the other decision; trials with no decision
    are appended, ``"3-1 +1 none"``; a cell with no decision at all is ``"0-0 +5 none"``."""
    label = f"{modal_count}-{n_decided - modal_count}"
    undecided = n_trials - n_decided
    return f"{label} +{undecided} none" if undecided else label


def split_distribution(cells: pd.DataFrame) -> pd.DataFrame:
    """Cells per trial split (``split_label``) per (source, condition), over modal-scored
    cells; long form with ``n_cells``, sorted by modal count descending."""
    scored = cells.loc[cells["modal_scored"].to_numpy(dtype=bool)]
    table = pd.DataFrame(
        {
            "source": scored["source"].astype(str).to_numpy(),
            "condition": scored["condition"].astype(str).to_numpy(),
            "split": [
                split_label(int(m), int(d), int(t))
                for m, d, t in zip(
                    scored["modal_count"], scored["n_decided"], scored["n_trials"], strict=True
                )
            ],
            "modal_count": scored["modal_count"].to_numpy(dtype="int64"),
            "n_decided": scored["n_decided"].to_numpy(dtype="int64"),
        }
    )
    out = (
        table.groupby(["source", "condition", "split", "modal_count", "n_decided"], sort=True)
        .size()
        .rename("n_cells")
        .reset_index()
    )
    out = out.sort_values(
        ["source", "condition", "modal_count", "n_decided"],
        ascending=[True, True, False, False],
        ignore_index=True,
    )
    return out.drop(columns=["n_decided"])
