"""Two conditions side by side, scenario by scenario: :func:`flips` and its paired test.

:func:`flips` pairs a model's floor and high conditions (or any two conditions of one
source) by scenario: each side's modal decision and whether it is correct, and which way
the scenario moved. :func:`flip_test` runs the paired test of ``analysis.inference`` on that
table: McNemar's score test and Tango's score interval (one statistic, so the interval
excludes 0 exactly when p < .05) for the difference in modal accuracy (second minus first),
on the scenarios both sides decided.
"""

from __future__ import annotations

import functools
from pathlib import Path

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


def _published() -> pd.DataFrame:
    """The release's published conditions (``model``, ``condition``), or none when the
    release cannot be read here: only to say what is missing."""
    from analysis import paths

    return _published_in(str(paths.results_dir()), str(paths.scenarios_dir()))


@functools.cache
def _published_in(results_dir: str, scenario_dir: str) -> pd.DataFrame:
    try:
        from analysis.corpus.scenarios import load_scenarios
        from analysis.scoring.leaderboard import load_conditions

        scenarios = load_scenarios(Path(scenario_dir), Path(results_dir))
        table = load_conditions(scenarios, Path(results_dir))
    except Exception:  # no release to name here: the plain message stands
        return pd.DataFrame(columns=["model", "condition"])
    return table[["model", "condition"]].astype(str)


def _where_verdicts_come_from(model: str) -> str:
    """What provides the per-trial verdicts of ``model``'s published conditions."""
    from analysis import paths
    from analysis.trials.detail import DETAIL_FILENAME

    detail = paths.release_dir() / "results" / paths.release() / DETAIL_FILENAME
    return (
        f"the public release leaves them out; they come from the release's per-scenario "
        f"verdict file ({DETAIL_FILENAME}: put it at {detail} and run `make data`) or from a "
        f"run of the model over the release (steerbench-run --gate endpoint --label {model} "
        "...; docs/running.md)"
    )


def _held(cells: pd.DataFrame, mask: pd.Series) -> str:
    """``condition (source, N scenarios)`` for each condition ``mask`` selects."""
    part = cells.loc[mask.to_numpy()]
    counts = part.groupby([part["condition"].astype(str), part["source"].astype(str)], sort=True)[
        "scenario_id"
    ].nunique()
    return ", ".join(f"{c} ({s}, {n} scenario(s))" for (c, s), n in counts.items())


def _pair_of_model(cells: pd.DataFrame, model: str) -> tuple[str, str, str]:
    """(source, floor, high) of ``model``'s one floor-and-high pair in ``cells``."""
    from analysis.inference.paired import reasoning_pairs_of

    pairs = reasoning_pairs_of(cells)
    mine = pairs.loc[pairs["model"] == model]
    if len(mine) == 1:
        row = mine.iloc[0]
        return str(row["source"]), str(row["floor"]), str(row["high"])
    if len(mine) > 1:
        raise ValueError(
            f"model {model!r} has a floor-and-high pair in several sources "
            f"({', '.join(sorted(mine['source'].astype(str)))}); name the two conditions "
            "and the source: flips(data, first, second, source=...)"
        )
    is_model = cells["model"].astype(str) == model
    published = _published()
    from_release = cells.loc[(cells["source"].astype(str) == "published").to_numpy()]
    names = sorted(published.loc[published["model"] == model, "condition"])
    if set(names) - set(from_release["condition"].astype(str)):
        held = _held(cells, is_model)
        raise ValueError(
            f"no per-trial verdicts here for the published conditions of model {model!r} "
            f"({', '.join(names)})"
            + (f"; these data hold only {held}" if held else "")
            + f": {_where_verdicts_come_from(model)}"
        )
    if not is_model.any():
        models = sorted(cells["model"].astype(str).unique())
        raise ValueError(f"unknown model {model!r}; choices: {', '.join(models)}")
    held = sorted(cells.loc[is_model.to_numpy(), "condition"].astype(str).unique())
    advice = (
        f"name two of them: flips(data, {held[0]!r}, {held[1]!r})"
        if len(held) > 1
        else "a paired comparison needs a second condition of it (a run at another setting)"
    )
    raise ValueError(
        f"model {model!r} has no one floor and one high condition (it has: "
        f"{', '.join(held)}); {advice}"
    )


def _resolve(cells: pd.DataFrame, name: str, source: str | None) -> tuple[str, list[str]]:
    """(condition, sources holding it) of ``name``: a condition's label, or
    ``"source: condition"``; unknown names are a ``ValueError`` saying what is missing."""
    conditions = cells["condition"].astype(str)
    sources = cells["source"].astype(str)
    if (conditions == name).any():
        held = sorted(sources[conditions == name].unique())
        return name, [source] if source is not None and source in held else held
    prefix, _, rest = name.partition(": ")
    if rest and ((sources == prefix) & (conditions == rest)).any():
        return rest, [prefix]
    published = _published()
    mine = published.loc[published["condition"] == name]
    if len(mine):
        model = str(mine["model"].iloc[0])
        raise ValueError(
            f"no per-trial verdicts here for the published condition {name!r}: "
            f"{_where_verdicts_come_from(model)}"
        )
    choices = sorted(conditions.unique())
    raise ValueError(f"unknown condition {name!r}; choices: {', '.join(choices)}")


def _sources_of(
    cells: pd.DataFrame, first: str, second: str, source: str | None
) -> tuple[tuple[str, str], tuple[str, str]]:
    """((source, condition), (source, condition)) of the two sides: ``source`` when given,
    else the one source holding each name; a name in several sources is never chosen for
    the user (a ``ValueError`` names them)."""
    (a, a_sources), (b, b_sources) = _resolve(cells, first, source), _resolve(cells, second, source)
    if source is not None and not (source in a_sources and source in b_sources):
        raise ValueError(f"source {source!r} holds not both {first!r} and {second!r}")
    if len(a_sources) == 1 and len(b_sources) == 1:  # each name in one source (or source=)
        return (a_sources[0], a), (b_sources[0], b)
    several = [f"{s}: {n}" for n, found in ((a, a_sources), (b, b_sources)) for s in found]
    raise ValueError(
        f"{first!r} and {second!r} are in several sources ({', '.join(several)}); choose "
        "with source=, or name a side as 'source: condition'"
    )


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

    Name the conditions (``first``, ``second``: condition labels, or ``"source: condition"``
    where a name is in several sources, as a run named like a reference policy is), or a
    ``model`` with one floor and one high condition (first = floor, second = high). Where
    these data lack a published condition's per-trial verdicts (the public release leaves
    them out), the error says so and what would provide them.

    Parameters
    ----------
    data : DataFrame
        Scored cells or trials (scored here; ``scenarios`` default ``load_scenarios()``).
    first, second : str, optional
        The two conditions' labels (``"model (reasoning)"``), or ``"source: condition"``
        where a name is in several sources; ``second`` minus ``first`` is the change.
    model : str, optional
        Instead of ``first`` and ``second``: a model with one floor and one high
        condition (first = floor, second = high).
    source : str, optional
        The source holding both conditions, when several do (two sides of two sources:
        name them ``"source: condition"``; ``source`` is then both, comma-separated, and
        ``first`` / ``second`` carry their source).
    scenarios : DataFrame, optional
        The scenario table, to score trials and to name the scenarios (default
        ``load_scenarios()``, read only when needed).

    Returns
    -------
    DataFrame
        One row per scenario either condition holds (``FLIP_COLUMNS``): each side's modal
        decision (NaN where it has none or the cell is provider-filtered or absent), whether
        it is correct (``boolean``, NA likewise) and its mean-trial accuracy; ``change`` is
        ``fixed`` (wrong, then correct), ``broke`` (correct, then wrong), ``both correct``,
        ``both wrong``, or ``unpaired`` where either side has no modal decision.

    See Also
    --------
    flip_test : The paired test on this table.
    rates : Rates with intervals by any column.
    analysis.inference.paired_binary_difference : The paired difference for many models.

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=1, n_scenarios=40, seed=1)
    >>> table = flips(cells, model="sim-01")
    >>> table[["first", "second"]].iloc[0].tolist()
    ['sim-01 (off)', 'sim-01 (high)']
    >>> table["change"].value_counts()
    change
    both correct    29
    both wrong       5
    fixed            3
    broke            3
    unpaired         0
    Name: count, dtype: int64
    """
    from analysis.exploring.rate_table import as_cells

    cells = as_cells(data, scenarios)
    if model is not None:
        if first is not None or second is not None:
            raise ValueError("give model or the two conditions, not both")
        source, first, second = _pair_of_model(cells, model)
    elif first is None or second is None:
        raise ValueError("give two conditions (first, second) or a model")
    keys = _sources_of(cells, first, second, source)
    sides = {}
    for side, (where, name) in zip(("first", "second"), keys, strict=True):
        mine = (cells["source"].astype(str) == where) & (cells["condition"].astype(str) == name)
        part = cells.loc[mine.to_numpy()]
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
    (first_source, first), (second_source, second) = keys
    if first_source != second_source:  # two sources: each side says its own
        first, second = f"{first_source}: {first}", f"{second_source}: {second}"
    table.insert(0, "second", second)
    table.insert(0, "first", first)
    table.insert(0, "source", ", ".join(dict.fromkeys([first_source, second_source])))
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
    """The paired test on a :func:`flips` table: modal accuracy, second minus first.

    Only the scenarios both conditions decided count; McNemar's score test and Tango's score
    interval are computed as ``analysis.inference.paired_binary_difference`` computes them
    (fewer than ``MIN_CLUSTERS`` pairs: NaN bounds and p, and a note).

    Parameters
    ----------
    table : DataFrame
        A :func:`flips` table: two conditions paired scenario by scenario.

    Returns
    -------
    DataFrame
        One row: ``source, first, second, metric`` (``modal_accuracy``), ``estimate``
        (second minus first), its 95% interval ``ci_low, ci_high``, the test's ``p``,
        ``test`` and ``method``, ``n_clusters`` (scenarios paired), ``n_unpaired``, the
        discordance counts ``both, fixed, broke, neither`` and a ``note``.

    See Also
    --------
    flips : The table this tests.
    analysis.inference.paired_binary_difference : The same test for every model at once.

    Examples
    --------
    >>> from analysis.inference.simulate import simulated_cells
    >>> cells, scenarios = simulated_cells(n_models=1, n_scenarios=40, seed=1)
    >>> test = flip_test(flips(cells, model="sim-01"))
    >>> test[["metric", "n_clusters", "fixed", "broke"]]
               metric  n_clusters  fixed  broke
    0  modal_accuracy          40      3      3
    >>> test[["estimate", "ci_low", "ci_high", "p"]].round(3)
       estimate  ci_low  ci_high    p
    0       0.0   -0.14     0.14  1.0
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
        note = (
            f"no test: {n} paired scenario(s), fewer than {MIN_CLUSTERS}; conditions run over "
            "more scenarios give one (a run of the model over the release, or, for the "
            "published conditions, the release's per-scenario verdict file)"
        )
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
