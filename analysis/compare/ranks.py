"""Table 2's ranks in both releases, and the ranks that are compared: those among the
conditions both releases publish (the shared set, re-ranked on each side), with each side's
95% rank sets over that set (``analysis.inference``) and whether they overlap. A condition
added or removed moves the Table 2 ranks below it without any change of theirs: such a
shift is labelled so (``rank_note``), never reported as a change."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.compare.inputs import BuildInputs
from analysis.inference.ranks import rank_uncertainty, rank_uncertainty_from_counts

COLUMNS = [
    "condition",
    "base_rank",
    "head_rank",
    "rank_change",
    "base_shared_rank",
    "head_shared_rank",
    "shared_rank_change",
    "base_rank_low",
    "base_rank_high",
    "head_rank_low",
    "head_rank_high",
    "rank_sets_overlap",
    "rank_note",
    "base_method",
    "head_method",
]

#: ``rank_note``: why a condition's rank is what it is in the comparison.
SAME, MOVED = "same", "moved among shared conditions"
SHIFTED = "shifted by added or removed conditions"
ADDED, REMOVED = "added", "removed"


def table2_ranks(inputs: BuildInputs) -> pd.DataFrame:
    """``condition, rank`` as the build's Table 2 ranks them."""
    table = pd.read_csv(inputs.build.paper / "tables" / "table2-leaderboard.csv", dtype=str)
    return pd.DataFrame({"condition": table["condition"], "rank": table["rank"].astype(int)})


def shared_rank_sets(inputs: BuildInputs, shared: list[str]) -> pd.DataFrame:
    """``condition, rank_low, rank_high, method``: the 95% rank sets of the ``shared``
    conditions among themselves, from a scenario bootstrap of the per-trial verdicts when the
    release has them, else the parametric bootstrap from counts (conditions in ``shared``'s
    order, so that the same counts on both sides draw the same replicates)."""
    columns = ["condition", "rank_low", "rank_high", "method"]
    if not shared:
        return pd.DataFrame(columns=columns)
    if inputs.cells is not None:
        cells = inputs.cells.loc[inputs.cells["condition"].astype(str).isin(shared)]
        sets = rank_uncertainty(cells)
    else:
        conditions = inputs.conditions.set_index("label").loc[shared].reset_index()
        sets = rank_uncertainty_from_counts(conditions)
    return sets[columns]


def rank_changes(base: BuildInputs, head: BuildInputs) -> pd.DataFrame:
    """One row per condition in either release, in the head's order (then the removed):
    both Table 2 ranks and their change (positive: moved up); both ranks among the shared
    conditions, their change and both rank sets over the shared set, whether these overlap,
    and ``rank_note`` (:data:`SAME`, :data:`MOVED`, :data:`SHIFTED`, :data:`ADDED`,
    :data:`REMOVED`). The rank sets are blank for a condition in one release only."""
    before, after = table2_ranks(base), table2_ranks(head)
    joined = after.merge(before, on="condition", how="outer", suffixes=("_head", "_base"))
    joined = joined.sort_values(["rank_head", "rank_base"], na_position="last")
    both = joined["rank_base"].notna() & joined["rank_head"].notna()
    shared = sorted(joined.loc[both, "condition"])
    frame = joined.set_index("condition")
    for side, inputs in (("base", base), ("head", head)):
        frame[f"shared_{side}"] = frame.loc[both.to_numpy(), f"rank_{side}"].rank(method="min")
        sets = shared_rank_sets(inputs, shared).set_index("condition")
        sets.columns = [f"{c}_{side}" for c in sets.columns]
        frame = frame.join(sets)
    overlap = (frame["rank_low_base"] <= frame["rank_high_head"]) & (
        frame["rank_low_head"] <= frame["rank_high_base"]
    )
    has_sets = frame[["rank_low_base", "rank_low_head"]].notna().all(axis=1)
    out = pd.DataFrame(
        {
            "condition": frame.index,
            "base_rank": frame["rank_base"].astype("Int64"),
            "head_rank": frame["rank_head"].astype("Int64"),
            "rank_change": (frame["rank_base"] - frame["rank_head"]).astype("Int64"),
            "base_shared_rank": frame["shared_base"].astype("Int64"),
            "head_shared_rank": frame["shared_head"].astype("Int64"),
            "shared_rank_change": (frame["shared_base"] - frame["shared_head"]).astype("Int64"),
            "base_rank_low": frame["rank_low_base"].astype("Int64"),
            "base_rank_high": frame["rank_high_base"].astype("Int64"),
            "head_rank_low": frame["rank_low_head"].astype("Int64"),
            "head_rank_high": frame["rank_high_head"].astype("Int64"),
            "rank_sets_overlap": np.where(has_sets, overlap, None),
            "base_method": frame["method_base"],
            "head_method": frame["method_head"],
        }
    ).reset_index(drop=True)
    out["rank_note"] = [_note(row) for row in out.itertuples()]
    return out[COLUMNS]


def _note(row) -> str:
    if pd.isna(row.base_rank):
        return ADDED
    if pd.isna(row.head_rank):
        return REMOVED
    if row.shared_rank_change != 0:
        return MOVED
    return SHIFTED if row.rank_change != 0 else SAME


def moved_among_shared(ranks: pd.DataFrame) -> pd.DataFrame:
    """The shared conditions whose rank among the shared conditions changed."""
    return ranks.loc[ranks["rank_note"] == MOVED]


def leaders(ranks: pd.DataFrame) -> tuple[list[str], list[str]]:
    """The conditions ranked first in the base and in the head."""
    return (
        ranks.loc[ranks["base_rank"] == 1, "condition"].tolist(),
        ranks.loc[ranks["head_rank"] == 1, "condition"].tolist(),
    )
