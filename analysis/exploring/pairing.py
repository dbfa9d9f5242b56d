"""Two conditions side by side, scenario by scenario: :func:`flips` and its paired test.

:func:`flips` pairs a model's floor and high conditions (or any two conditions of one
source) by scenario: each side's modal decision and whether it is correct, and which way
the scenario moved. :func:`flip_test` runs the paired test of ``analysis.inference`` on that
table: McNemar's score test and Tango's score interval (one statistic, so the interval
excludes 0 exactly when p < .05) for the difference in modal accuracy (second minus first),
on the scenarios both sides decided.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.inference._arrays import MIN_CLUSTERS
from analysis.inference.paired import MCNEMAR_SCORE, TANGO, mcnemar_score_p, tango_interval

#: What happened to a scenario from the first condition to the second.
CHANGES: tuple[str, ...] = ("fixed", "broke", "both correct", "both wrong", "unpaired")
CHANGE_DTYPE = pd.CategoricalDtype(list(CHANGES))

#: The columns :func:`flips` returns.
FLIP_COLUMNS: tuple[str, ...] = (
    "source",
    "first",
    "second",
    "scenario_id",
    "required_gate",
    "first_decision",
    "second_decision",
    "first_correct",
    "second_correct",
    "first_accuracy",
    "second_accuracy",
    "change",
)


def _pair_of_model(cells: pd.DataFrame, model: str) -> tuple[str, str, str]:
    """(source, floor, high) of ``model``'s one floor-and-high pair in ``cells``."""
    from analysis.inference.paired import reasoning_pairs_of

    pairs = reasoning_pairs_of(cells)
    mine = pairs.loc[pairs["model"] == model]
    if len(mine) == 1:
        row = mine.iloc[0]
        return str(row["source"]), str(row["floor"]), str(row["high"])
    held = sorted(cells.loc[cells["model"].astype(str) == model, "condition"].astype(str).unique())
    if not held:
        models = sorted(cells["model"].astype(str).unique())
        raise ValueError(f"unknown model {model!r}; choices: {', '.join(models)}")
    if len(mine) > 1:
        raise ValueError(f"model {model!r} has a floor-and-high pair in several sources")
    raise ValueError(
        f"model {model!r} has no one floor and one high condition (it has: {', '.join(held)}); "
        "name the two conditions instead: flips(data, first, second)"
    )


def _source_of(cells: pd.DataFrame, first: str, second: str, source: str | None) -> str:
    conditions = cells["condition"].astype(str)
    for name in (first, second):
        if not (conditions == name).any():
            raise ValueError(
                f"unknown condition {name!r}; choices: {', '.join(sorted(conditions.unique()))}"
            )
    sources = cells["source"].astype(str)
    both = sorted(
        set(sources[conditions == first].unique()) & set(sources[conditions == second].unique())
    )
    if source is not None:
        if source not in both:
            raise ValueError(f"source {source!r} holds not both {first!r} and {second!r}")
        return source
    if len(both) != 1:
        where = "no one source" if not both else f"several sources ({', '.join(both)})"
        raise ValueError(f"{first!r} and {second!r} are in {where}; choose one with source=")
    return both[0]


def flips(
    data: pd.DataFrame,
    first: str | None = None,
    second: str | None = None,
    *,
    model: str | None = None,
    source: str | None = None,
    scenarios: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Two conditions paired scenario by scenario.

    Name the conditions (``first``, ``second``: condition labels), or a ``model`` with one
    floor and one high condition (first = floor, second = high).

    Parameters
    ----------
    data : DataFrame
        Scored cells or trials (scored here; ``scenarios`` default ``load_scenarios()``).
    source : str, optional
        The source holding both conditions, when several do.

    Returns
    -------
    DataFrame
        One row per scenario either condition holds (``FLIP_COLUMNS``): each side's modal
        decision (NaN where it has none or the cell is provider-filtered or absent), whether
        it is correct (``boolean``, NA likewise) and its mean-trial accuracy; ``change`` is
        ``fixed`` (wrong, then correct), ``broke`` (correct, then wrong), ``both correct``,
        ``both wrong``, or ``unpaired`` where either side has no modal decision.

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=1, n_scenarios=40, seed=1)
    >>> table = flips(cells, model="sim-01")
    >>> table[["first", "second"]].iloc[0].tolist()
    ['sim-01 (off)', 'sim-01 (high)']
    """
    from analysis.exploring.rate_table import as_cells

    cells = as_cells(data, scenarios)
    if model is not None:
        if first is not None or second is not None:
            raise ValueError("give model or the two conditions, not both")
        source, first, second = _pair_of_model(cells, model)
    elif first is None or second is None:
        raise ValueError("give two conditions (first, second) or a model")
    source = _source_of(cells, first, second, source)
    mine = cells.loc[(cells["source"].astype(str) == source).to_numpy()]
    sides = {}
    for side, name in (("first", first), ("second", second)):
        part = mine.loc[(mine["condition"].astype(str) == name).to_numpy()]
        scored = part["modal_scored"].to_numpy(dtype=bool)
        decision = part["modal_decision"].astype(object).where(scored, None)
        correct = pd.array(part["modal_correct"].to_numpy(dtype=bool), dtype="boolean")
        correct[(~scored) | decision.isna().to_numpy()] = pd.NA
        accuracy = np.where(scored, part["n_correct"] / part["n_trials"].where(scored, 1), np.nan)
        sides[side] = pd.DataFrame(
            {
                "scenario_id": part["scenario_id"].astype(str).to_numpy(),
                "required_gate": part["required_gate"].astype(str).to_numpy(),
                f"{side}_decision": decision.to_numpy(),
                f"{side}_correct": correct,
                f"{side}_accuracy": accuracy,
            }
        )
    table = sides["first"].merge(sides["second"], on=["scenario_id", "required_gate"], how="outer")
    table = table.sort_values("scenario_id", ignore_index=True)
    table.insert(0, "second", second)
    table.insert(0, "first", first)
    table.insert(0, "source", source)
    for side in ("first", "second"):
        table[f"{side}_correct"] = table[f"{side}_correct"].astype("boolean")
        table[f"{side}_decision"] = pd.Categorical(
            table[f"{side}_decision"], dtype=cells["modal_decision"].dtype
        )
    table["change"] = _changes(table["first_correct"], table["second_correct"])
    return table[list(FLIP_COLUMNS)]


def _changes(first: pd.Series, second: pd.Series) -> pd.Categorical:
    a = first.fillna(False).to_numpy(dtype=bool)
    b = second.fillna(False).to_numpy(dtype=bool)
    paired = (first.notna() & second.notna()).to_numpy()
    change = np.select(
        [~paired, ~a & b, a & ~b, a & b],
        ["unpaired", "fixed", "broke", "both correct"],
        "both wrong",
    )
    return pd.Categorical(change, dtype=CHANGE_DTYPE)


def flip_test(table: pd.DataFrame) -> pd.DataFrame:
    """The paired test on a :func:`flips` table: modal accuracy, second minus first, on the
    scenarios both decided; McNemar's score test and Tango's score interval, as
    ``analysis.inference.paired_binary_difference`` computes them (fewer than
    ``MIN_CLUSTERS`` pairs: NaN bounds and p, and a note).

    Returns one row: ``source, first, second, metric, estimate, ci_low, ci_high, p, test,
    method, n_clusters, n_unpaired, both, fixed, broke, neither, note``.

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=1, n_scenarios=40, seed=1)
    >>> test = flip_test(flips(cells, model="sim-01"))
    >>> test[["metric", "n_clusters", "fixed", "broke"]]
               metric  n_clusters  fixed  broke
    0  modal_accuracy          40      3      3
    """
    change = table["change"].astype(str)
    counts = {name: int((change == name).sum()) for name in CHANGES}
    both, fixed, broke, neither = (
        counts["both correct"],
        counts["fixed"],
        counts["broke"],
        counts["both wrong"],
    )
    n = both + fixed + broke + neither
    low, high, p, note = np.nan, np.nan, np.nan, ""
    if n < MIN_CLUSTERS:
        note = f"no test: {n} paired scenario(s), fewer than {MIN_CLUSTERS}"
    else:
        low, high = tango_interval(both, fixed, broke, neither)
        p = mcnemar_score_p(fixed, broke)
        if not fixed + broke:
            note = "no discordant pair: the test has no information"
    one_side = table["first_correct"].notna() ^ table["second_correct"].notna()
    names = table[["source", "first", "second"]].drop_duplicates()
    if len(names) != 1:
        raise ValueError("flip_test takes the table of one pair (one flips() call)")
    return pd.DataFrame(
        [
            {
                **names.iloc[0].to_dict(),
                "metric": "modal_accuracy",
                "estimate": (fixed - broke) / n if n else np.nan,
                "ci_low": low,
                "ci_high": high,
                "p": p,
                "test": MCNEMAR_SCORE,
                "method": TANGO,
                "n_clusters": n,
                "n_unpaired": int(one_side.sum()),
                "both": both,
                "fixed": fixed,
                "broke": broke,
                "neither": neither,
                "note": note,
            }
        ]
    )
