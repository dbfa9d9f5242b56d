"""Where a gate stands: the published conditions, the reference policies and the runs under
``data/runs`` in one ranked table, and each run's differences to the others.

A condition is its source and its name: a run named like a reference policy, or like a
published condition, is a row of its own. The published conditions are known by their
counts alone (``leaderboard.json``), every other condition by its per-trial verdicts, so
each row says which interval it carries (``interval``) and each difference says what it
ignores (``ignores``).
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import test_proportions_2indep

from analysis import paths
from analysis.corpus.scenarios import load_scenarios
from analysis.inference import (
    N_BOOT,
    SEED,
    clustered_accuracy,
    design_effect_bound,
    paired_accuracy_difference,
    paired_binary_difference,
    rank_uncertainty_from_counts,
)
from analysis.inference.paired import UNPAIRED_METHOD
from analysis.scoring.breakdowns import POOL_OF
from analysis.scoring.intervals import difference_interval
from analysis.scoring.leaderboard import load_conditions
from analysis.scoring.ranking import (
    condition_names,
    leaderboard_table,
    rank_conditions,
    require_counts,
    trials_per_cell,
)
from analysis.scoring.rules import condition_scores, score_cells
from analysis.trials import NoPublishedVerdictsWarning, load_trials

PUBLISHED = "published"
REFERENCE = "reference-policy"
RUN = "run"
#: What a difference to a published condition ignores: its counts pair no trial.
IGNORED_BY_COUNTS = "the pairing by scenario and the clustering of trials within scenarios"
#: How the rank sets are made: every row's counts, redrawn independently.
RANK_SETS = (
    "simultaneous 95% rank sets from each condition's counts, redrawn independently "
    "(ignores clustering and pairing)"
)
#: The standings' columns before Table 2's printed ones.
COLUMNS = [
    "rank",
    "rank_low",
    "rank_high",
    "source",
    "condition",
    "model",
    "reasoning",
    "estimate",
    "ci_low",
    "ci_high",
    "interval",
    "wilson_low",
    "wilson_high",
    "n_trials",
    "n_cells",
    "rank_sets",
    "note",
]
DIFFERENCE_COLUMNS = [
    "run",
    "versus",
    "versus_source",
    "metric",
    "estimate",
    "ci_low",
    "ci_high",
    "p",
    "method",
    "pairing",
    "ignores",
    "n_clusters",
    "note",
]


def _key(source: pd.Series, name: pd.Series) -> pd.Series:
    return source.astype(str) + ": " + name.astype(str)


def _inputs(conditions, cells, scenarios, data_dir):
    """The published conditions' counts and the other conditions' scored cells, loaded
    from ``data_dir`` where not given."""
    if conditions is None or cells is None:
        if scenarios is None:
            scenarios = load_scenarios(paths.scenarios_dir(data_dir), paths.results_dir(data_dir))
        if conditions is None:
            conditions = load_conditions(scenarios, paths.results_dir(data_dir))
        if cells is None:
            with warnings.catch_warnings():  # the published rows come from their counts
                warnings.simplefilter("ignore", NoPublishedVerdictsWarning)
                trials = load_trials(runs_dir=paths.runs_dir(data_dir), scenarios=scenarios)
            cells = score_cells(trials, scenarios)
    require_counts(conditions, "conditions")
    if "source" in conditions.columns:
        other = sorted(set(conditions["source"].dropna().astype(str)) - {PUBLISHED})
        if other:
            raise ValueError(
                f"conditions: published conditions only (load_conditions), not {other[0]!r} "
                "ones; pass the reference policies' and runs' scored cells as cells"
            )
    missing = {"scenario_id", "condition", "source", "modal_scored"} - set(cells.columns)
    if missing:
        raise ValueError(
            f"cells: not scored cells (no column {', '.join(sorted(missing))}); pass "
            "score_cells(trials, scenarios)"
        )
    if POOL_OF in cells.columns:  # pooled cells (load_checked_cells): their own sources
        cells = cells.assign(source=cells[POOL_OF]).drop(columns=POOL_OF)
    published = conditions.assign(source=PUBLISHED)
    others = cells.loc[cells["source"].astype(str) != PUBLISHED].copy()
    for column in ("condition", "source", "model", "reasoning"):
        others[column] = others[column].astype(str)
    return published, others


def standings(
    conditions: pd.DataFrame | None = None,
    cells: pd.DataFrame | None = None,
    *,
    scenarios: pd.DataFrame | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    differences: bool = False,
    n_boot: int = N_BOOT,
    seed: int = SEED,
) -> pd.DataFrame:
    """The published conditions, the reference policies and every run, ranked together
    (Table 2's order), with intervals and rank sets; or, with ``differences=True``, each
    run's differences to the reference policies and to the published conditions.

    Rows (one per condition: its ``source`` and its name):

    - ``published``: from the counts of ``leaderboard.json``; ``ci_low, ci_high`` is the
      least-clustering band (:func:`analysis.inference.design_effect_bound`: a floor on
      the width of a clustered 95% interval, not a 95% interval), beside the Wilson
      interval on trials (``wilson_low, wilson_high``, the release's own, which treats trials as
      independent);
    - ``reference-policy`` and ``run`` (the release's sample cell and your runs): from
      per-trial verdicts, with the scenario-clustered interval
      (:func:`analysis.inference.clustered_accuracy`) and the Wilson interval on trials.

    ``interval`` names the kind of ``ci_low, ci_high``; ``rank_low, rank_high`` are the
    rank sets (:func:`analysis.inference.rank_uncertainty_from_counts`, from every row's
    counts, so they ignore clustering, as ``rank_sets`` says); Table 2's printed strings
    follow (:func:`analysis.scoring.ranking.leaderboard_table`).

    With ``differences=True``, one row per (run, other condition, metric): mean-trial and
    modal accuracy, run minus the other. To a reference policy, paired by scenario
    (:func:`analysis.inference.paired_accuracy_difference`, the paired t interval;
    :func:`analysis.inference.paired_binary_difference`, Tango's interval); to a published
    condition, from counts (Newcombe's interval for independent proportions), and
    ``ignores`` says what that comparison leaves out.

    Parameters
    ----------
    conditions : DataFrame, optional
        Published condition counts (``load_conditions``); default: the imported release's.
    cells : DataFrame, optional
        Scored cells (``score_cells``) of the reference policies and runs; default: every
        per-trial verdict under ``data_dir``'s runs folder. Cells of published verdicts are
        left out: the published conditions are ranked from their counts.
    scenarios : DataFrame, optional
        The scenario table, when something is loaded (default: the imported one).
    data_dir : path, optional
        The data folder to read (default: the project's ``data/``).
    differences : bool
        Return the differences instead of the standings.
    n_boot, seed : int
        Bootstrap resamples and seed of the clustered intervals and the rank sets.

    Returns
    -------
    DataFrame
        The standings: ``rank, rank_low, rank_high, source, condition, model, reasoning,
        estimate, ci_low, ci_high, interval, wilson_low, wilson_high, n_trials, n_cells,
        rank_sets, note`` and Table 2's printed columns, in rank order. The differences:
        ``run, versus, versus_source, metric, estimate, ci_low, ci_high, p, method,
        pairing, ignores, n_clusters, note``.

    See Also
    --------
    rank_conditions : Table 2's order, on the published conditions alone.
    run_gate : A gate run into a run root, to stand here.
    analysis.inference.rank_uncertainty_from_counts : The rank sets.

    Examples
    --------
    On the imported release (its sample cell is a run):

    >>> table = standings()
    >>> table.groupby("source").size().loc[["published", "reference-policy"]].tolist()
    [30, 3]
    >>> table.loc[table["source"] == "reference-policy", "interval"].unique().tolist()
    ['Clopper-Pearson at the scenario-clustered effective size (Korn-Graubard, Satterthwaite df)']
    >>> diffs = standings(differences=True)
    >>> sample = diffs[diffs["run"] == "gpt-5.4-mini (off)"]
    >>> sample.groupby("versus_source").size().to_dict()
    {'published': 60, 'reference-policy': 6}
    """
    published, others = _inputs(conditions, cells, scenarios, data_dir)
    if differences:
        return _differences(published, others, n_boot, seed)
    counts = condition_scores(others) if len(others) else published.iloc[:0]
    together = pd.concat([published, counts], ignore_index=True)
    together["name"] = condition_names(together)
    together["key"] = _key(together["source"], together["name"])
    ranked = rank_conditions(together)
    printed = leaderboard_table(ranked).drop(columns=["rank", "condition"], errors="ignore")
    printed = printed.drop(columns=["source"], errors="ignore")

    intervals = _intervals(published, others, trials_per_cell(published), n_boot, seed)
    sets = rank_uncertainty_from_counts(
        ranked.assign(source="all"), n_boot=n_boot, seed=seed, label="key"
    ).set_index("condition")
    out = pd.DataFrame(
        {
            "rank": ranked["rank"].to_numpy(),
            "rank_low": ranked["key"].map(sets["rank_low_joint"]).to_numpy(),
            "rank_high": ranked["key"].map(sets["rank_high_joint"]).to_numpy(),
            "source": ranked["source"].astype(str).to_numpy(),
            "condition": ranked["name"].to_numpy(),
            "model": ranked["model"].astype(str).to_numpy(),
            "reasoning": ranked["reasoning"].astype(str).to_numpy(),
            "n_trials": ranked["n_trials"].astype("int64").to_numpy(),
            "n_cells": ranked["n_cells"].astype("int64").to_numpy(),
            "rank_sets": RANK_SETS,
        }
    )
    keyed = intervals.set_index("key")
    for column in ("estimate", "ci_low", "ci_high", "interval", "wilson_low", "wilson_high"):
        out[column] = ranked["key"].map(keyed[column]).to_numpy()
    out["note"] = ranked["key"].map(keyed["note"]).fillna("").to_numpy()
    return pd.concat([out[COLUMNS], printed.reset_index(drop=True)], axis=1)


def _intervals(
    published: pd.DataFrame, others: pd.DataFrame, k: int | None, n_boot: int, seed: int
) -> pd.DataFrame:
    """``key, estimate, ci_low, ci_high, interval, wilson_low, wilson_high, note`` per row."""
    frames = []
    if len(published):
        bound = design_effect_bound(published, trials_per_cell=k or 1)
        frames.append(
            pd.DataFrame(
                {
                    "key": _key(pd.Series(PUBLISHED, index=bound.index), bound["condition"]),
                    "estimate": bound["estimate"],
                    "ci_low": bound["ci_low"],
                    "ci_high": bound["ci_high"],
                    "interval": "clustered bound: " + bound["method"],
                    "wilson_low": bound["wilson_low"],
                    "wilson_high": bound["wilson_high"],
                    "note": bound["note"],
                }
            )
        )
    if len(others):
        clustered = clustered_accuracy(others, n_boot=n_boot, seed=seed)
        frames.append(
            pd.DataFrame(
                {
                    "key": _key(clustered["source"], clustered["condition"]),
                    "estimate": clustered["estimate"],
                    "ci_low": clustered["ci_low"],
                    "ci_high": clustered["ci_high"],
                    "interval": clustered["method"],
                    "wilson_low": clustered["wilson_low"],
                    "wilson_high": clustered["wilson_high"],
                    "note": clustered["note"],
                }
            )
        )
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["key"])


def _differences(
    published: pd.DataFrame, others: pd.DataFrame, n_boot: int, seed: int
) -> pd.DataFrame:
    """Each run against each reference policy (paired) and each published condition
    (from counts)."""
    runs = others.loc[others["source"] == RUN]
    references = others.loc[others["source"] == REFERENCE]
    rows: list[pd.DataFrame] = []
    if len(runs) and len(references):
        rows.append(_paired(pd.concat([runs, references]), n_boot, seed))
    if len(runs) and len(published):
        rows.append(_from_counts(condition_scores(runs), published))
    if not rows:
        return pd.DataFrame(columns=DIFFERENCE_COLUMNS)
    return pd.concat(rows, ignore_index=True)[DIFFERENCE_COLUMNS]


def _paired(cells: pd.DataFrame, n_boot: int, seed: int) -> pd.DataFrame:
    """Run minus reference, paired by scenario: every (run, reference) pair in one pool,
    each condition keyed by its source so that equal names stay apart."""
    pool = cells.assign(condition=_key(cells["source"], cells["condition"]), source="standings")
    runs = sorted(pool.loc[cells["source"] == RUN, "condition"].unique())
    references = sorted(pool.loc[cells["source"] == REFERENCE, "condition"].unique())
    pairs = pd.DataFrame(
        [
            {"source": "standings", "model": run, "floor": reference, "high": run}
            for run in runs
            for reference in references
        ]
    )
    frames = []
    for result in (
        paired_accuracy_difference(pool, pairs, n_boot=n_boot, seed=seed),
        paired_binary_difference(pool, "modal_accuracy", pairs),
    ):
        frames.append(result.assign(pair=list(zip(pairs["high"], pairs["floor"], strict=True))))
    out = pd.concat(frames, ignore_index=True)
    prefix = f"{RUN}: "
    out["run"] = [pair[0].removeprefix(prefix) for pair in out["pair"]]
    out["versus"] = [pair[1].removeprefix(f"{REFERENCE}: ") for pair in out["pair"]]
    out["versus_source"] = REFERENCE
    out["ignores"] = ""
    out["note"] = out["note"].fillna("")
    return out


def _from_counts(runs: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """Run minus published condition from counts: Newcombe's interval and the score test
    for two independent proportions."""
    rows = []
    for run in runs.to_dict("records"):
        for other in published.to_dict("records"):
            for metric, k, n in (
                ("mean_trial_accuracy", "n_trials_correct", "n_trials"),
                ("modal_accuracy", "n_modal_correct", "n_cells"),
            ):
                k1, n1, k0, n0 = (int(x) for x in (run[k], run[n], other[k], other[n]))
                row = {
                    "run": run["condition"],
                    "versus": other.get("label", other["condition"]),
                    "versus_source": PUBLISHED,
                    "metric": metric,
                    "estimate": np.nan,
                    "ci_low": np.nan,
                    "ci_high": np.nan,
                    "p": np.nan,
                    "method": UNPAIRED_METHOD,
                    "pairing": "unpaired: published aggregate counts only",
                    "ignores": IGNORED_BY_COUNTS,
                    "n_clusters": np.nan,
                    "note": "",
                }
                if min(n1, n0) == 0:
                    rows.append({**row, "note": "no estimate: nothing to count"})
                    continue
                low, high = difference_interval(k1, n1, k0, n0)
                row.update(estimate=k1 / n1 - k0 / n0, ci_low=low, ci_high=high)
                row["p"] = _score_p(k1, n1, k0, n0)
                if int(run["n_cells"]) != int(other["n_cells"]):
                    row["note"] = (
                        f"other scenarios: the run scores {int(run['n_cells'])} cells, "
                        f"the condition {int(other['n_cells'])}"
                    )
                rows.append(row)
    return pd.DataFrame(rows, columns=DIFFERENCE_COLUMNS)


def _score_p(k1: int, n1: int, k0: int, n0: int) -> float:
    """The two-proportion score test's p (1 when both rates are 0, or both 1)."""
    if k1 == k0 == 0 or (k1 == n1 and k0 == n0):
        return 1.0
    with np.errstate(divide="ignore", invalid="ignore"):  # its ratio and odds ratio at 0
        return float(test_proportions_2indep(k1, n1, k0, n0, method="score").pvalue)
