"""Table 2's ranks in both releases: the leader, every rank change, and whether each
condition's 95% rank sets (``analysis.inference``) overlap."""

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
    "shared_rank_change",
    "base_rank_low",
    "base_rank_high",
    "head_rank_low",
    "head_rank_high",
    "rank_sets_overlap",
    "base_method",
    "head_method",
]


def table2_ranks(inputs: BuildInputs) -> pd.DataFrame:
    """``condition, rank`` as the build's Table 2 ranks them, with ``rank_low, rank_high``
    (95% rank set) and ``method``: a scenario bootstrap of the per-trial verdicts when the
    release has them, else the parametric bootstrap from counts."""
    table = pd.read_csv(inputs.build.paper / "tables" / "table2-leaderboard.csv", dtype=str)
    ranks = pd.DataFrame({"condition": table["condition"], "rank": table["rank"].astype(int)})
    if inputs.cells is not None:
        sets = rank_uncertainty(inputs.cells)
    else:
        sets = rank_uncertainty_from_counts(inputs.conditions)
    sets = sets[["condition", "rank_low", "rank_high", "method"]]
    return ranks.merge(sets, on="condition", how="left", validate="one_to_one")


def rank_changes(base: BuildInputs, head: BuildInputs) -> pd.DataFrame:
    """One row per condition in either release, in the head's order (then the removed):
    both ranks, the change (positive: moved up), the change among the conditions in both
    releases, both rank sets and whether they overlap
    (empty for a condition in one release only)."""
    before, after = table2_ranks(base), table2_ranks(head)
    joined = after.merge(before, on="condition", how="outer", suffixes=("_head", "_base"))
    joined = joined.sort_values(["rank_head", "rank_base"], na_position="last")
    both = joined["rank_base"].notna() & joined["rank_head"].notna()
    overlap = (joined["rank_low_base"] <= joined["rank_high_head"]) & (
        joined["rank_low_head"] <= joined["rank_high_base"]
    )
    frame = pd.DataFrame(
        {
            "condition": joined["condition"],
            "base_rank": joined["rank_base"].astype("Int64"),
            "head_rank": joined["rank_head"].astype("Int64"),
            "rank_change": (joined["rank_base"] - joined["rank_head"]).astype("Int64"),
            "shared_rank_change": _shared_change(joined, both),
            "base_rank_low": joined["rank_low_base"].astype("Int64"),
            "base_rank_high": joined["rank_high_base"].astype("Int64"),
            "head_rank_low": joined["rank_low_head"].astype("Int64"),
            "head_rank_high": joined["rank_high_head"].astype("Int64"),
            "rank_sets_overlap": np.where(both, overlap, None),
            "base_method": joined["method_base"],
            "head_method": joined["method_head"],
        }
    )
    return frame.reset_index(drop=True)[COLUMNS]


def _shared_change(joined: pd.DataFrame, both: pd.Series) -> pd.Series:
    """The rank change among the conditions in both releases only (an added or removed
    condition moves the others' Table 2 ranks without any change of theirs)."""
    before = joined.loc[both, "rank_base"].rank(method="min")
    after = joined.loc[both, "rank_head"].rank(method="min")
    return (before - after).reindex(joined.index).astype("Int64")


def leaders(ranks: pd.DataFrame) -> tuple[list[str], list[str]]:
    """The conditions ranked first in the base and in the head."""
    return (
        ranks.loc[ranks["base_rank"] == 1, "condition"].tolist(),
        ranks.loc[ranks["head_rank"] == 1, "condition"].tolist(),
    )
