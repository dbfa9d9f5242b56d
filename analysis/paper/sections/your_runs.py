"""Your runs in the report: which per-trial conditions are runs of your own (not the
release's sample cell), and the "Your runs" tables made from ``analysis.standings``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis import paths
from analysis.scoring.breakdowns import POOL_OF
from analysis.trials import load_run_root
from analysis.trials.run_root import RUN_PLAN_FILENAME

#: What the report says when the runs folder holds no run of your own.
NONE = (
    "No runs of your own: put one under data/runs/local/ (steerbench-run ... --out "
    "data/runs/local/NAME) and it is ranked here beside the published conditions and the "
    "reference policies."
)
CAPTION = (
    "Your runs: each run's rank among the published conditions, the reference policies and "
    "the runs, with its simultaneous 95% rank set (from counts, trials independent), mean "
    "trial accuracy with its scenario-clustered 95% interval, and Table 2's columns "
    "(analysis.standings())."
)
DIFFERENCES_CAPTION = (
    "Your runs against the reference policies, paired by scenario: run minus policy, in "
    "points, mean trial accuracy (paired t interval) and modal accuracy (Tango's interval). "
    "standings(differences=True) also compares each run with every published condition, "
    "from counts alone (ignoring the pairing by scenario and the clustering of trials)."
)


def sample_conditions(runs_dir: Path) -> set[str]:
    """The conditions of the release's sample run under ``runs_dir`` (none without it)."""
    root = Path(runs_dir) / paths.SAMPLE_RUN_NAME
    if not (root / RUN_PLAN_FILENAME).is_file():
        return set()
    return set(load_run_root(root)["condition"].astype(str))


def own_runs(cells: pd.DataFrame | None, runs_dir: Path) -> list[str]:
    """The conditions of ``cells`` that are runs of your own: source ``run`` (pooled or
    not), other than the release's sample run's (:func:`sample_conditions`)."""
    if cells is None:
        return []
    origin = cells[POOL_OF] if POOL_OF in cells.columns else cells["source"]
    names = set(cells.loc[(origin.astype(str) == "run").to_numpy(), "condition"].astype(str))
    return sorted(names - sample_conditions(runs_dir))


def _interval(low: float, high: float) -> str:
    if pd.isna(low) or pd.isna(high):
        return "–"
    return f"[{100 * low:.1f}%, {100 * high:.1f}%]"


def runs_table(table: pd.DataFrame, runs: list[str]) -> pd.DataFrame:
    """The rows of ``table`` (``analysis.standings()``) that are your ``runs``, for a
    reader: rank of all rows and rank set, mean trial accuracy with its interval and its
    kind, and Table 2's modal, pass and directional columns."""
    mine = table[(table["source"] == "run") & table["condition"].isin(runs)]
    printed = table.columns[table.columns.get_loc("note") + 1 :]
    keep = [c for c in printed if "95% CI" not in c and not c.startswith("weighted miss count")]
    ranks = zip(mine["rank_low"], mine["rank_high"], strict=True)
    bounds = zip(mine["ci_low"], mine["ci_high"], strict=True)
    out = pd.DataFrame(
        {
            "condition": mine["condition"],
            "rank": [f"{rank} of {len(table)}" for rank in mine["rank"]],
            "rank set": [f"{low}-{high}" for low, high in ranks],
            "mean trial accuracy": mine["mean trial accuracy"],
            "clustered 95% CI": [_interval(low, high) for low, high in bounds],
        }
    )
    rest = mine[[c for c in keep if c != "mean trial accuracy"]]
    return pd.concat([out, rest], axis=1).reset_index(drop=True)


def differences_table(differences: pd.DataFrame, runs: list[str]) -> pd.DataFrame:
    """Your ``runs`` against each reference policy (``standings(differences=True)``), for a
    reader: difference in points with its interval, p and the pairing."""
    mine = differences[
        (differences["versus_source"] == "reference-policy") & differences["run"].isin(runs)
    ]

    def points(value: float) -> str:
        return "–" if pd.isna(value) else f"{100 * value:+.1f}"

    return pd.DataFrame(
        {
            "run": mine["run"],
            "reference policy": mine["versus"],
            "metric": mine["metric"].str.replace("_", " "),
            "difference (points)": [points(v) for v in mine["estimate"]],
            "95% CI": [
                "–" if pd.isna(lo) else f"[{points(lo)}, {points(hi)}]"
                for lo, hi in zip(mine["ci_low"], mine["ci_high"], strict=True)
            ],
            "p": ["–" if pd.isna(p) else "< 0.001" if p < 0.001 else f"{p:.3f}" for p in mine["p"]],
            "scenarios": mine["n_clusters"].astype("Int64"),
            "note": mine["note"],
        }
    ).reset_index(drop=True)
