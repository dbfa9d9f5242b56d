"""Rates by any columns, with intervals: :func:`rates`.

Every metric is a ratio of two sums over scored cells, each cell counted as the published
rules count it (``analysis.scoring.rules``):

============================  ==========================================  ==================
metric                        k (numerator)                               n (denominator)
============================  ==========================================  ==================
``mean_trial_accuracy``       correct trials                              trials
``modal_accuracy``            modal-correct cells                         cells
``pass<N>`` (``pass^<N>``)    cells whose N trials are all correct        cells
``over_refusal``              proceed cells held (modal ``blocked``)      proceed cells
``under_refusal``             hold cells let through (modal ``allowed``)  hold cells
``weighted_miss``             tier weight of the missed cells             tier weight
============================  ==========================================  ==================

Provider-filtered cells count in none of them; over- and under-refusal and weighted miss
count only cells with a modal decision. ``pass<N>`` needs every cell to hold N trials (the
paper's ``pass5`` at five); pass^k for a k below the trials per cell is
``analysis.inference.pass_hat_k``.

A condition is its source and its name: grouped by anything, the rows keep ``source`` and
``condition`` apart unless ``pool=True`` asks to add conditions together, and a pooled row
names what it pools (:data:`POOL_COLUMNS`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analysis.inference._arrays import EFFECTIVE_SIZE_CP, MIN_CLUSTERS, effective_size_interval
from analysis.scoring.intervals import wilson_interval
from analysis.scoring.rules import direction_flags

#: The metrics :func:`rates` computes (``pass<N>`` stands for pass5, pass3, ...).
METRICS: tuple[str, ...] = (
    "mean_trial_accuracy",
    "modal_accuracy",
    "pass<N>",
    "over_refusal",
    "under_refusal",
    "weighted_miss",
)
#: The interval methods: ``cluster`` (Clopper-Pearson at the scenario-clustered effective
#: size) or ``wilson`` (Wilson score, each trial or cell taken as independent).
CI_METHODS: tuple[str, ...] = ("cluster", "wilson")
#: The columns :func:`rates` returns after the ``by`` columns.
RATE_COLUMNS: tuple[str, ...] = (
    "metric",
    "k",
    "n",
    "estimate",
    "ci_low",
    "ci_high",
    "method",
    "n_scenarios",
    "note",
)
#: What a condition is: its source and its name (two runs, or a run and a reference
#: policy, may share a name).
IDENTITY: tuple[str, ...] = ("source", "condition")
#: The columns a pooled row adds (``pool=True``): how many conditions it adds together, and
#: which (``source: condition``, ``; ``-separated).
POOL_COLUMNS: tuple[str, ...] = ("n_conditions", "conditions")

_CELL_NEEDS = ("n_trials", "n_correct", "modal_scored", "modal_correct", "pass_all")
_TRIAL_NEEDS = ("scenario_id", "condition", "trial", "commit_permission")
_UNIT = {"mean_trial_accuracy": "trial", "weighted_miss": "tier weight"}


def as_cells(data: pd.DataFrame, scenarios: pd.DataFrame | None = None) -> pd.DataFrame:
    """``data`` as scored cells: scored cells as they are, a trials table scored by the
    published rules (``analysis.scoring.rules.score_cells``; ``scenarios`` default
    ``load_scenarios()``). Anything else is a ``ValueError`` naming what it lacks."""
    if all(c in data.columns for c in _CELL_NEEDS):
        return data
    if all(c in data.columns for c in _TRIAL_NEEDS):
        from analysis.scoring.rules import score_cells

        return score_cells(data, _scenarios(scenarios))
    raise ValueError(
        "data is neither scored cells (columns "
        f"{', '.join(_CELL_NEEDS)}) nor trials (columns {', '.join(_TRIAL_NEEDS)})"
    )


def _scenarios(scenarios: pd.DataFrame | None) -> pd.DataFrame:
    if scenarios is not None:
        return scenarios
    from analysis.corpus.scenarios import load_scenarios

    return load_scenarios()


def with_columns(
    cells: pd.DataFrame, columns: Sequence[str], scenarios: pd.DataFrame | None
) -> pd.DataFrame:
    """``cells`` with each of ``columns`` it lacks joined from the scenario table (any of its
    columns) or ``reasoning_level``; an unknown column is a ``ValueError`` naming the
    choices."""
    from analysis.exploring.joined import reasoning_levels

    missing = [c for c in columns if c not in cells.columns]
    if not missing:
        return cells
    out = cells.copy()
    if "reasoning_level" in missing:
        out["reasoning_level"] = reasoning_levels(out)
        missing.remove("reasoning_level")
    if not missing:
        return out
    table = _scenarios(scenarios)
    unknown = [c for c in missing if c not in table.columns]
    if unknown:
        choices = sorted({*cells.columns, *table.columns, "reasoning_level"} - {"scenario_id"})
        raise ValueError(
            f"unknown column(s) {unknown}: neither in the data nor in the scenario table; "
            f"choices: {', '.join(choices)}"
        )
    from analysis.exploring.joined import with_scenario_columns

    return with_scenario_columns(out, table, missing)


def _pass_trials(metric: str) -> int | None:
    """N of ``pass<N>`` / ``pass^<N>``; None for any other name."""
    digits = metric.removeprefix("pass").removeprefix("^")
    if metric.startswith("pass") and digits.isdigit() and int(digits) > 0:
        return int(digits)
    return None


def cell_counts(cells: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Per cell, ``metric``'s (numerator, denominator) as integers (see the module's table);
    an unknown metric, or ``pass<N>`` on cells of another number of trials, is a
    ``ValueError`` naming the choices."""
    scored = cells["modal_scored"].to_numpy(dtype=bool)
    n_trials = cells["n_trials"].to_numpy(dtype="int64")
    passes = _pass_trials(metric)
    if metric == "mean_trial_accuracy":
        return np.where(scored, cells["n_correct"], 0), np.where(scored, n_trials, 0)
    if metric == "modal_accuracy":
        return scored & cells["modal_correct"].to_numpy(dtype=bool), scored
    if passes is not None:
        counts = sorted({int(n) for n in n_trials[scored]})
        if counts != [passes] and counts:
            offer = f"pass{counts[0]}" if len(counts) == 1 else "a subset with one count"
            raise ValueError(
                f"metric {metric!r} needs {passes} trials in every cell; these cells hold "
                f"{' and '.join(map(str, counts))} (choose {offer}; pass^k below the trials "
                "per cell is analysis.inference.pass_hat_k)"
            )
        return scored & cells["pass_all"].to_numpy(dtype=bool), scored
    if metric in ("over_refusal", "under_refusal", "weighted_miss"):
        decided = cells["directionally_scored"].to_numpy(dtype=bool)
        if metric == "weighted_miss":
            weight = cells["tier_weight"].to_numpy(dtype="int64")
            missed = decided & ~cells["modal_correct"].to_numpy(dtype=bool)
            return np.where(missed, weight, 0), np.where(decided, weight, 0)
        flags = direction_flags(
            cells["required_gate"].astype(object).to_numpy(),
            cells["modal_decision"].astype(object).to_numpy(),
            decided,
        )
        if metric == "over_refusal":
            return flags["n_over_refusals"], flags["n_proceed_opportunities"]
        return flags["n_under_refusals"], flags["n_hold_opportunities"]
    raise ValueError(f"unknown metric {metric!r}; choices: {', '.join(METRICS)}")


#: ``ci="wilson"``'s method, as its rows name it.
MODIFIED_WILSON = (
    "Wilson score, modified (Brown, Cai and DasGupta): exact Poisson bound at 1 to 3 "
    "successes or failures"
)


def modified_wilson(k: float, n: float) -> tuple[float, float]:
    """The Wilson score 95% interval of ``k`` of ``n``, modified as Brown, Cai and DasGupta
    (2001) advise: at 1 to x* successes (x* = 2 up to 50 trials, 3 beyond) the lower bound
    is the exact Poisson one, chi2(0.025; 2k) / 2n, where it is lower, and at 1 to x*
    failures the upper bound likewise.

    Wilson's own interval dips to about 84% coverage where the rate is near 0 or 1 (a count
    of 1 to 3 sets its bound just above a true rate near 1 / n); on 50 trials at a rate of
    0.01 it covered 89% in the calibration grid (docs/inference.md). The modified interval
    keeps Wilson's bounds elsewhere.

    Examples
    --------
    >>> low, high = modified_wilson(2, 50)
    >>> round(low, 4), round(high, 4)
    (0.0048, 0.1346)
    >>> tuple(round(float(v), 4) for v in wilson_interval(2, 50))
    (0.011, 0.1346)
    """
    from scipy import stats

    low, high = (float(v) for v in wilson_interval(k, n))
    most = 2 if n <= 50 else 3
    if 1 <= k <= most:
        low = min(low, float(stats.chi2.ppf(0.025, 2 * k)) / (2 * n))
    if 1 <= n - k <= most:
        high = max(high, 1 - float(stats.chi2.ppf(0.025, 2 * (n - k))) / (2 * n))
    return low, high


def _unit(metric: str) -> str:
    return _UNIT.get(metric, "cell")


def _interval(
    per_scenario: pd.DataFrame, ci: str, metric: str, n_units: float
) -> tuple[float, float, str, str]:
    """(low, high, method, note) of one row's rate from its per-scenario sums."""
    k, n = per_scenario["k"].to_numpy("float64"), per_scenario["n"].to_numpy("float64")
    unit = _unit(metric)
    if ci == "wilson":
        method = f"{MODIFIED_WILSON} (treats each {unit} as independent)"
        if not n.sum():
            return np.nan, np.nan, method, "no estimate: nothing to count (n = 0)"
        low, high = modified_wilson(k.sum(), n.sum())
        note = (
            f"about these scenarios held fixed: a scenario's {unit}s taken as independent "
            "draws; for a new draw of scenarios use ci='cluster'"
        )
        return float(low), float(high), method, note
    clusters = int((n > 0).sum())
    if not n.sum():
        return np.nan, np.nan, EFFECTIVE_SIZE_CP, "no estimate: nothing to count (n = 0)"
    if clusters < MIN_CLUSTERS:
        note = f"no interval: {clusters} scenario(s), fewer than {MIN_CLUSTERS}"
        return np.nan, np.nan, EFFECTIVE_SIZE_CP, note
    low, high, _ = effective_size_interval(k, n, n_units)
    note = ""
    if k.sum() in (0, n.sum()):
        note = "rate of 0 or 1: each scenario counted once (the largest design effect)"
    return low, high, EFFECTIVE_SIZE_CP, note


def _keys(by: list[str], pool: bool, columns: pd.Index) -> list[str]:
    """The grouping: ``by``, and unless ``pool``, each of :data:`IDENTITY` it lacks (``source``
    just before ``condition`` when ``by`` names the condition, else both at the end)."""
    if pool:
        return by
    keys = list(by)
    for name in IDENTITY:
        if name in keys or name not in columns:
            continue
        if name == "source" and "condition" in keys:
            keys.insert(keys.index("condition"), name)
        else:
            keys.append(name)
    return keys


def _pooled(part: pd.DataFrame) -> dict:
    """What a pooled row adds together: its conditions, as ``source: condition``."""
    names = part[[c for c in IDENTITY if c in part.columns]].astype(str).drop_duplicates()
    labels = sorted(": ".join(row) for row in names.itertuples(index=False))
    return {"n_conditions": len(labels), "conditions": "; ".join(labels)}


def rates(
    data: pd.DataFrame,
    by: str | Sequence[str] = (),
    metric: str | Sequence[str] = "mean_trial_accuracy",
    ci: str = "cluster",
    *,
    pool: bool = False,
    scenarios: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One or more metrics by any columns, with 95% intervals, as tidy rows.

    Parameters
    ----------
    data : DataFrame
        Scored cells (``score_cells``) or trials (``load_trials``; scored here).
    by : str or list of str
        Columns to group by: any column of ``data``, any column of the scenario table
        (``domain``, ``boundary_pattern``, ``direction``, ``irreversibility``, ...; joined by
        scenario id) or ``reasoning_level`` (``floor`` / ``high``; see
        ``analysis.exploring.joined``). Each condition (``source`` and ``condition``) keeps
        rows of its own: they are added to the grouping where ``by`` lacks them
        (``by="condition"`` groups by source and condition; ``[]`` gives one row per
        condition).
    metric : str or list of str
        Any of :data:`METRICS` (``pass5`` for pass^5 at five trials per cell).
    ci : {"cluster", "wilson"}
        ``cluster``: Clopper-Pearson at the effective sample size the scenario-clustered
        variance gives (``analysis.inference._arrays.effective_size_interval``; about a new
        draw of scenarios; fewer than ``MIN_CLUSTERS`` scenarios: NaN bounds and a note);
        ``wilson``: the Wilson score interval (:func:`modified_wilson` near 0 and 1),
        treating every trial (or cell) as an
        independent draw, which trials of one scenario are not (about these scenarios held
        fixed; its note says so). Weighted miss, a ratio of tier weights, has only
        ``cluster``.
    pool : bool
        Add different conditions together within each ``by`` group (default ``False``);
        a pooled row says which (``n_conditions``, ``conditions``).
    scenarios : DataFrame, optional
        The scenario table (default ``load_scenarios()``, read only when needed).

    Returns
    -------
    DataFrame
        The grouping columns, then ``metric, k, n, estimate, ci_low, ci_high, method,
        n_scenarios, note`` (and with ``pool``, ``n_conditions, conditions``);
        ``estimate`` is k / n (NaN, with NaN bounds, where n is 0).

    See Also
    --------
    plot_rates : These rows drawn, one interval per row.
    flips : Two conditions paired scenario by scenario, and their paired test.
    with_metadata : The scenario columns ``by`` can name.
    wilson_interval : The Wilson interval of ``ci="wilson"``.

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=1, n_scenarios=60, seed=2)
    >>> out = rates(cells, by="condition", metric="over_refusal")
    >>> out.columns.tolist()[:4]
    ['source', 'condition', 'metric', 'k']
    >>> out[["condition", "k", "n", "ci_low", "ci_high"]].round(3)
           condition  k   n  ci_low  ci_high
    0  sim-01 (high)  3  16   0.033    0.485
    1   sim-01 (off)  4  16   0.062    0.551
    >>> rates(cells, metric="modal_accuracy", pool=True)[["k", "n", "n_conditions"]]
        k    n  n_conditions
    0  87  120             2
    """
    by = [by] if isinstance(by, str) else list(by)
    metrics = [metric] if isinstance(metric, str) else list(metric)
    if ci not in CI_METHODS:
        raise ValueError(f"unknown ci {ci!r}; choices: {', '.join(CI_METHODS)}")
    for name in metrics:
        if name not in METRICS and _pass_trials(name) is None:
            raise ValueError(f"unknown metric {name!r}; choices: {', '.join(METRICS)}")
        if name == "weighted_miss" and ci == "wilson":
            raise ValueError(
                "metric 'weighted_miss' is a ratio of tier weights, not a count of "
                "independent draws: the Wilson interval does not apply; use ci='cluster'"
            )
    cells = with_columns(as_cells(data, scenarios), by, scenarios)
    if cells.empty:
        raise ValueError("data holds no cells to rate")
    keys = _keys(by, pool, cells.columns)
    rows = []
    for name in metrics:
        k, n = cell_counts(cells, name)
        counted = pd.DataFrame({"k": np.asarray(k, "int64"), "n": np.asarray(n, "int64")})
        counted["scenario_id"] = cells["scenario_id"].astype(str).to_numpy()
        for column in {*keys, *IDENTITY} & set(cells.columns):
            counted[column] = cells[column].to_numpy()
        groups = counted.groupby(keys, observed=True, sort=True, dropna=False) if keys else None
        for key, part in groups if groups is not None else [((), counted)]:
            per_scenario = part.groupby("scenario_id", sort=True)[["k", "n"]].sum()
            total_k, total_n = int(per_scenario["k"].sum()), int(per_scenario["n"].sum())
            cell_n = part["n"].to_numpy("float64")
            units = float(total_n)  # trials or cells; weighted miss: the cells' Kish size
            if name == "weighted_miss" and total_n:
                units = cell_n.sum() ** 2 / (cell_n**2).sum()
            low, high, method, note = _interval(per_scenario, ci, name, units)
            labels = dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True))
            rows.append(
                {
                    **labels,
                    "metric": name,
                    "k": total_k,
                    "n": total_n,
                    "estimate": total_k / total_n if total_n else np.nan,
                    "ci_low": low,
                    "ci_high": high,
                    "method": method,
                    "n_scenarios": int((per_scenario["n"] > 0).sum()),
                    "note": note,
                    **(_pooled(part) if pool else {}),
                }
            )
    out = pd.DataFrame(rows, columns=[*keys, *RATE_COLUMNS, *(POOL_COLUMNS if pool else ())])
    for column in keys:
        if isinstance(cells[column].dtype, pd.CategoricalDtype):
            out[column] = pd.Categorical(out[column], dtype=cells[column].dtype)
    return out.astype({"k": "int64", "n": "int64", "n_scenarios": "int64"})
