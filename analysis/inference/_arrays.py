"""Cells as condition x scenario arrays, seeded scenario-bootstrap weights, and the pieces
every resampling method shares."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.scoring import direction_flags
from analysis.trials.schema import split_condition_label

#: Default seed and number of bootstrap resamples of every resampling method.
SEED = 20260501
N_BOOT = 4000


@dataclass(frozen=True)
class CellArrays:
    """One source's modal-scored cells as (condition, scenario) arrays; absent cells are 0."""

    conditions: list[str]
    scenarios: list[str]
    n_trials: np.ndarray
    n_correct: np.ndarray
    scored: np.ndarray  # 1 where the cell is modal-scored
    modal_correct: np.ndarray
    decided: np.ndarray  # 1 where the cell has a modal decision
    hold: np.ndarray  # directionally scored, required blocked
    proceed: np.ndarray  # directionally scored, required allowed
    under: np.ndarray  # hold cells with modal allowed
    over: np.ndarray  # proceed cells with modal blocked


def cell_arrays(cells: pd.DataFrame) -> CellArrays:
    """The modal-scored cells of ``cells`` (one source) as :class:`CellArrays`."""
    keep = cells.loc[cells["modal_scored"].to_numpy(dtype=bool)]
    condition = pd.Categorical(keep["condition"].astype(str))
    scenario = pd.Categorical(keep["scenario_id"].astype(str))
    shape = (len(condition.categories), len(scenario.categories))
    rows, cols = condition.codes, scenario.codes

    def fill(values) -> np.ndarray:
        grid = np.zeros(shape)
        grid[rows, cols] = np.asarray(values, dtype="float64")
        return grid

    modal = keep["modal_decision"].astype(object).to_numpy()
    required = keep["required_gate"].astype(object).to_numpy()
    flags = direction_flags(required, modal, keep["directionally_scored"].to_numpy(dtype=bool))
    return CellArrays(
        conditions=[str(c) for c in condition.categories],
        scenarios=[str(s) for s in scenario.categories],
        n_trials=fill(keep["n_trials"]),
        n_correct=fill(keep["n_correct"]),
        scored=fill(np.ones(len(keep))),
        modal_correct=fill(keep["modal_correct"].to_numpy(dtype=bool)),
        decided=fill(~pd.isna(modal)),
        hold=fill(flags["n_hold_opportunities"]),
        proceed=fill(flags["n_proceed_opportunities"]),
        under=fill(flags["n_under_refusals"]),
        over=fill(flags["n_over_refusals"]),
    )


def by_source(cells: pd.DataFrame):
    """``(source, cells of that source)`` pairs, in source order."""
    source = cells["source"].astype(str)
    for name in sorted(source.unique()):
        yield name, cells.loc[(source == name).to_numpy()]


def scenario_weights(
    n_scenarios: int,
    n_boot: int = N_BOOT,
    seed: int | np.random.Generator = SEED,
    strata: np.ndarray | None = None,
) -> np.ndarray:
    """(n_boot, n_scenarios) counts of how often each scenario is drawn in each resample.

    Scenarios are drawn with replacement, ``n_scenarios`` per resample, or, with ``strata``
    (one label per scenario), as many per stratum as it holds. The counts are float64
    (exact), so that ``weights @ values`` runs as one BLAS product: with int64 counts numpy
    multiplies in its own loop, eight times slower.
    """
    rng = np.random.default_rng(seed)
    if strata is None:
        return _draw_counts(rng, n_scenarios, n_boot).astype("float64")
    strata = np.asarray(strata)
    weights = np.zeros((n_boot, n_scenarios), dtype="float64")
    for label in pd.unique(strata):
        members = np.flatnonzero(strata == label)
        weights[:, members] = _draw_counts(rng, len(members), n_boot)
    return weights


def _draw_counts(rng: np.random.Generator, size: int, n_boot: int) -> np.ndarray:
    """(n_boot, size) counts of ``size`` draws with replacement from ``size`` items."""
    draws = rng.integers(0, size, size=(n_boot, size)) + size * np.arange(n_boot)[:, None]
    return np.bincount(draws.ravel(), minlength=n_boot * size).reshape(n_boot, size)


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``numerator / denominator`` with NaN where the denominator is 0."""
    numerator = np.asarray(numerator, dtype="float64")
    denominator = np.asarray(denominator, dtype="float64")
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def percentile_interval(replicates: np.ndarray, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """2.5th and 97.5th percentiles of bootstrap replicates (NaN replicates ignored; without
    any, the same percentiles come from ``np.percentile``, several times faster)."""
    missing = np.isnan(replicates)
    if not missing.any():
        low, high = np.percentile(replicates, [2.5, 97.5], axis=axis)
        return low, high
    if missing.all():  # NaN bounds shaped as np.percentile's: a scalar for a 1-D input
        shape = np.delete(np.array(replicates.shape), axis)
        empty = np.full(tuple(shape), np.nan)[()]
        return empty, empty
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column: NaN bounds
        low, high = np.nanpercentile(replicates, [2.5, 97.5], axis=axis)
    return low, high


def accuracy_replicates(arrays: CellArrays, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, conditions) mean-trial accuracy of each condition in each scenario
    resample (one set of resamples shared by the conditions, so comparisons stay paired)."""
    weights = scenario_weights(len(arrays.scenarios), n_boot, seed)
    return ratio(weights @ arrays.n_correct.T, weights @ arrays.n_trials.T)


def pair_rows(arrays: CellArrays, pairs: pd.DataFrame, source: str, rows: list, **labels):
    """For each floor/high pair of ``source``: ``(row, floor index, high index)``, ``row``
    the contrast's labels (``source``, ``contrast`` and ``labels``). A pair one of whose
    conditions has no scored cell is appended to ``rows`` as such and not yielded."""
    index = {c: i for i, c in enumerate(arrays.conditions)}
    for pair in pairs.loc[pairs["source"] == source].itertuples(index=False):
        high, floor = split_condition_label(pair.high)[1], split_condition_label(pair.floor)[1]
        row = {"source": source, "contrast": f"{pair.model}: {high} - {floor}", **labels}
        if pair.floor not in index or pair.high not in index:
            rows.append({**row, "n_clusters": 0, "n_unpaired": 0, "pairing": "no scored cells"})
            continue
        yield row, index[pair.floor], index[pair.high]
