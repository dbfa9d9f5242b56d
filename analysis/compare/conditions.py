"""Conditions added, removed and re-run between two releases, and each shared condition's
Table 2 values in both with the change and an interval for it: paired by scenario
(``analysis.inference``) where both releases publish per-trial verdicts, otherwise from the
counts (Newcombe, independent proportions: about these scenarios held fixed, trial noise
only), labelled so, with mean-trial accuracy's clustered bound (:mod:`analysis.compare.bounds`,
a floor on a clustered interval's width) where the counts allow one. The change over all
scenarios is reported apart from the change on the scenarios neither release changed (model
change without scenario drift)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.compare.bounds import BOUND_COLUMNS, clustered_change_bound
from analysis.compare.inputs import BuildInputs
from analysis.inference._arrays import EFFECTIVE_SIZE_DIFFERENCE, effective_size_difference
from analysis.inference.paired import paired_accuracy_difference, paired_binary_difference
from analysis.scoring.intervals import difference_interval
from analysis.scoring.ranking import RANKED_COUNTS
from analysis.scoring.rules import condition_scores

#: Counts whose change marks a condition as changed.
COUNTS = [*RANKED_COUNTS, "weight_missed", "weight_scored"]


@dataclass(frozen=True)
class Metric:
    """A Table 2 value as the ratio of two counts; ``paired``: the paired method, if any."""

    name: str
    k: str
    n: str
    paired: str | None
    binomial: bool = True  # False: a weighted ratio, no interval from counts


METRICS = (
    Metric("mean_trial_accuracy", "n_trials_correct", "n_trials", "mean_trial_accuracy"),
    Metric("modal_accuracy", "n_modal_correct", "n_cells", "modal_accuracy"),
    Metric("pass_all", "n_pass5", "n_cells", None),
    Metric("under_refusal", "n_under_refusals", "n_hold_opportunities", None),
    Metric("over_refusal", "n_over_refusals", "n_proceed_opportunities", "over_refusal"),
    Metric("weighted_miss", "weight_missed", "weight_scored", None, binomial=False),
)

COUNTS_METHOD = (
    "Newcombe difference of independent proportions, from counts: trials (or cells) taken as "
    "independent, so about these scenarios held fixed (trial noise only); ignores pairing and "
    "clustering"
)
NO_INTERVAL = "no interval: a tier-weighted ratio"
ALL, UNCHANGED = "all scenarios", "unchanged scenarios"
#: Conditions' names in the paired frame: ``<label> (base)`` and ``<label> (head)``.
BASE, HEAD = "base", "head"
SOURCE = "compare"


def _verdict_key(trials: pd.DataFrame, label: str, ids: set[str]) -> pd.DataFrame:
    columns = ["scenario_id", "trial", "commit_permission", "status"]
    mine = trials.loc[trials["condition"].astype(str) == label, columns].astype(str)
    mine = mine.loc[mine["scenario_id"].isin(ids)]
    return mine.sort_values(columns[:2], ignore_index=True)


def _counts(conditions: pd.DataFrame, label: str) -> pd.Series:
    return conditions.loc[label, COUNTS].astype(object).reset_index(drop=True)


def condition_status(base: BuildInputs, head: BuildInputs, shared_ids: list[str]) -> pd.DataFrame:
    """One row per condition in either release: ``condition, status, basis``.

    ``status``: ``added``, ``removed``, ``unchanged``; for a condition whose counts changed,
    ``re-run`` when its per-trial verdicts on the shared scenarios differ (or its trials
    per cell), ``rescored`` when they are the same (scenario changes moved it), and
    ``changed`` when only counts are published and the two cannot be told apart."""
    before = base.conditions.set_index("label")
    after = head.conditions.set_index("label")
    verdicts = base.trials is not None and head.trials is not None and bool(shared_ids)
    ids = set(shared_ids)
    rows = []
    for label in [*before.index, *(x for x in after.index if x not in before.index)]:
        if label not in after.index:
            rows.append({"condition": label, "status": "removed"})
            continue
        if label not in before.index:
            rows.append({"condition": label, "status": "added"})
            continue
        counts_same = _counts(before, label).equals(_counts(after, label))
        if verdicts:
            same = _verdict_key(base.trials, label, ids).equals(
                _verdict_key(head.trials, label, ids)
            )
            status = "unchanged" if same and counts_same else "rescored" if same else "re-run"
        else:
            status = "unchanged" if counts_same else "changed"
        rows.append({"condition": label, "status": status})
    frame = pd.DataFrame(rows, columns=["condition", "status"])
    frame["basis"] = "per-trial verdicts" if verdicts else "counts only"
    return frame


def _rate(counts: pd.Series, metric: Metric) -> float:
    k, n = counts[metric.k], counts[metric.n]
    return float(k / n) if pd.notna(k) and pd.notna(n) and n > 0 else np.nan


def _from_counts(before: pd.Series, after: pd.Series, metric: Metric) -> dict:
    k1, n1, k0, n0 = after[metric.k], after[metric.n], before[metric.k], before[metric.n]
    if not metric.binomial or pd.isna([k1, n1, k0, n0]).any() or min(n1, n0) <= 0:
        method = NO_INTERVAL if not metric.binomial else "no interval: no count to compare"
        return {"ci_low": np.nan, "ci_high": np.nan, "method": method, "n_paired": np.nan}
    low, high = difference_interval(int(k1), int(n1), int(k0), int(n0))
    return {"ci_low": low, "ci_high": high, "method": COUNTS_METHOD, "n_paired": np.nan}


def _per_scenario(cells: pd.DataFrame, label: str, ids: set[str] | None) -> pd.DataFrame:
    """The condition ``label``'s counts per scenario (each scenario's cells scored as a
    condition of its own, so every count is the one Table 2 sums)."""
    mine = cells.loc[cells["condition"].astype(str) == label].copy()
    if ids is not None:
        mine = mine.loc[mine["scenario_id"].astype(str).isin(ids)]
    mine["condition"] = mine["scenario_id"].astype(str)
    return condition_scores(mine)


def _clustered(
    base: BuildInputs, head: BuildInputs, label: str, metric: Metric, ids: list[str] | None
) -> dict | None:
    """The change's scenario-clustered, unpaired interval from both releases' per-trial
    verdicts (:func:`analysis.inference._arrays.effective_size_difference`), on the
    scenarios ``ids`` (None: each release's own); None where it gives none (a side on fewer
    than 10 scenarios, or no binomial count)."""
    if not metric.binomial:
        return None
    keep = None if ids is None else set(ids)
    before, after = (_per_scenario(x.cells, label, keep) for x in (base, head))
    if not len(before) or not len(after):
        return None
    low, high = effective_size_difference(
        after[metric.k], after[metric.n], before[metric.k], before[metric.n]
    )
    if np.isnan([low, high]).any():
        return None
    return {"ci_low": low, "ci_high": high, "method": EFFECTIVE_SIZE_DIFFERENCE, "n_paired": np.nan}


def _paired_cells(base: BuildInputs, head: BuildInputs, label: str, ids: list[str]) -> pd.DataFrame:
    frames = []
    for side, inputs in ((BASE, base), (HEAD, head)):
        cells = inputs.cells
        mine = cells.loc[
            (cells["condition"].astype(str) == label) & cells["scenario_id"].astype(str).isin(ids)
        ].copy()
        mine["condition"] = f"{label} ({side})"
        mine["model"], mine["reasoning"], mine["source"] = label, side, SOURCE
        frames.append(mine)
    return pd.concat(frames, ignore_index=True)


def _paired(cells: pd.DataFrame, label: str, metric: Metric) -> dict:
    pairs = pd.DataFrame(
        [
            {
                "source": SOURCE,
                "model": label,
                "floor": f"{label} ({BASE})",
                "high": f"{label} ({HEAD})",
            }
        ]
    )
    if metric.paired == "mean_trial_accuracy":
        out = paired_accuracy_difference(cells, pairs)
    else:
        out = paired_binary_difference(cells, metric.paired, pairs)
    row = out.iloc[0]
    return {
        "estimate": row["estimate"],
        "ci_low": row["ci_low"],
        "ci_high": row["ci_high"],
        "method": f"{row['method']}, {row['pairing']}",
        "n_paired": row["n_clusters"],
    }


def _scores(cells: pd.DataFrame, ids: list[str]) -> pd.DataFrame:
    mine = cells.loc[cells["scenario_id"].astype(str).isin(ids)]
    scores = condition_scores(mine)
    scores["condition"] = scores["condition"].astype(str)
    return scores.set_index("condition")


def table2_changes(
    base: BuildInputs,
    head: BuildInputs,
    status: pd.DataFrame,
    shared: list[str],
    unchanged: list[str],
) -> pd.DataFrame:
    """Per shared condition and Table 2 metric, for ``scope`` all scenarios and the
    unchanged scenarios: ``base, head, change`` (head minus base), ``estimate, ci_low,
    ci_high`` of the change, ``method`` (paired or from counts, and how many scenarios
    were paired), ``n_paired``, and for mean-trial accuracy compared from counts its
    clustered bound (a floor on a clustered interval's width, not a 95% interval:
    :data:`analysis.compare.bounds.BOUND_COLUMNS`, blank elsewhere). Without per-trial
    verdicts in both, the unchanged-scenario scope is given only when every scenario of both
    releases is unchanged (it is then the whole set)."""
    both = base.cells is not None and head.cells is not None
    verdicts = both and bool(shared)
    whole = (
        set(base.scenarios["scenario_id"]) == set(head.scenarios["scenario_id"]) == set(unchanged)
    )
    before = base.conditions.set_index("label")
    after = head.conditions.set_index("label")
    shared_labels = status.loc[~status["status"].isin(["added", "removed"]), "condition"]
    scopes = {ALL: (before, after, shared)}
    if verdicts:
        scopes[UNCHANGED] = (
            _scores(base.cells, unchanged),
            _scores(head.cells, unchanged),
            unchanged,
        )
    elif whole:
        scopes[UNCHANGED] = (before, after, unchanged)
    rows = []
    for label in shared_labels:
        for scope, (b, h, ids) in scopes.items():
            if label not in b.index or label not in h.index:
                continue
            paired = _paired_cells(base, head, label, ids) if verdicts else None
            for metric in METRICS:
                value_b, value_h = _rate(b.loc[label], metric), _rate(h.loc[label], metric)
                row = {
                    "condition": label,
                    "metric": metric.name,
                    "scope": scope,
                    "base": value_b,
                    "head": value_h,
                    "change": value_h - value_b,
                    "estimate": value_h - value_b,
                }
                on = ids if scope == UNCHANGED else None  # all: each release's own
                if paired is not None and metric.paired and len(paired):
                    row.update(_paired(paired, label, metric))
                elif both and (clustered := _clustered(base, head, label, metric, on)):
                    row.update(clustered)
                else:
                    row.update(_from_counts(b.loc[label], h.loc[label], metric))
                    if metric.name == "mean_trial_accuracy" and row["method"] == COUNTS_METHOD:
                        row.update(clustered_change_bound(b.loc[label], h.loc[label]))
                rows.append(row)
    columns = ["condition", "metric", "scope", "base", "head", "change", "estimate"]
    columns += ["ci_low", "ci_high", "method", "n_paired", *BOUND_COLUMNS]
    return pd.DataFrame(rows, columns=columns)
