"""Every interval, test and rank set the package gives, held to simulated truth.

Draws releases from the model of ``analysis.inference.calibration`` (scenario and cell
random effects on the logit scale, known true rates, differences and ranks) over a grid of
settings, runs each registered method (:data:`REGISTRY`, one entry per method, quantity and
estimand) through its public function, and measures its coverage (intervals, rank sets) or
type-I error (tests) with the Monte Carlo standard error and the share it refused (NaN).
Each row is held to the standard: a 95% interval covers at least 94% and a 5% test rejects
a true null at most 6% of the time, within 1.96 Monte Carlo standard errors, and no
interval has zero width. The table goes to ``docs/_generated/calibration.md`` (included by
``docs/inference.md``), and the raw rows beside it as CSV.

Run: ``.venv/bin/python benchmarks/bench_calibration.py [--reps 400] [--boot 1000]
[--method NAME ...] [--fast]``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
import time
import warnings
from dataclasses import replace
from itertools import product
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import optimize, stats

from analysis import paths
from analysis.compare.bounds import clustered_change_bound
from analysis.exploring.pairing import flip_test, flips
from analysis.exploring.rate_table import rates
from analysis.inference import (
    clustered_accuracy,
    design_effect_bound,
    gee_accuracy,
    minimum_detectable_difference,
    paired_accuracy_difference,
    paired_binary_difference,
    pass_hat_k,
    pooled_direction_asymmetry,
    pooled_mirror_gap,
    pooled_pattern_accuracy,
    rank_uncertainty,
    rank_uncertainty_from_counts,
    unpaired_reasoning,
)
from analysis.inference._arrays import effective_size_difference
from analysis.inference.calibration import (
    POPULATION,
    SAMPLE,
    Draw,
    Setting,
    cells_frame,
    draw,
    scenarios_frame,
)
from analysis.inference.coverage import (
    POWER_TOLERANCE,
    Z_MC,
    Method,
    grid,
    markdown_table,
    summary_table,
)
from analysis.inference.design_bound import NULLS_ALLOWED
from analysis.inference.paired import effective_df
from analysis.scoring.breakdowns import ANCHOR, MIRROR
from analysis.scoring.intervals import difference_interval
from analysis.scoring.leaderboard import reasoning_level
from analysis.scoring.rules import condition_scores

SEED = 20261204
#: Bootstrap resamples per interval in the grid (the package's default is 4000: the
#: percentile interval's coverage hardly moves between the two).
N_BOOT = 1000
TABLE = paths.PROJECT_ROOT / "docs" / "_generated" / "calibration.md"
ROWS = TABLE.with_suffix(".csv")
MEAN = "mean_trial_accuracy"


# --- adapters: a public function's rows matched to their truth -------------------------


def _public(cells: pd.DataFrame) -> pd.DataFrame:
    return cells.drop(columns=["rep", "j"])


def _keys(cells: pd.DataFrame, on: list[str]) -> pd.DataFrame:
    return cells.drop_duplicates(on)[[*on, "rep", "j"]]


def _intervals(out, keys, on, truth, low="ci_low", high="ci_high") -> pd.DataFrame:
    rows = out.merge(keys, on=on, how="inner", validate="many_to_one")
    return pd.DataFrame(
        {
            "rep": rows["rep"].to_numpy(),
            "low": rows[low].to_numpy(dtype="float64"),
            "high": rows[high].to_numpy(dtype="float64"),
            "truth": truth[rows["rep"].to_numpy(), rows["j"].to_numpy()],
        }
    )


def per_condition(call, quantity, estimand=POPULATION, low="ci_low", high="ci_high"):
    """An adapter for a function of scored cells giving one row per condition."""

    def run(d: Draw) -> pd.DataFrame:
        cells = cells_frame(d)
        out = call(_public(cells), d)
        truth = d.truth(quantity, estimand)
        return _intervals(out, _keys(cells, ["condition"]), ["condition"], truth, low, high)

    return run


def _rep_of_contrast(out: pd.DataFrame) -> np.ndarray:
    return out["contrast"].str.split(":").str[0].str[1:].astype(int).to_numpy()


def contrast(call, quantity, estimand=POPULATION, column=None):
    """An adapter for a floor-vs-high function: its interval of high minus floor (or, with
    ``column="p"``, its test's p)."""

    def run(d: Draw) -> pd.DataFrame:
        out = call(_public(cells_frame(d)), d)
        rep = _rep_of_contrast(out)
        if column:
            return pd.DataFrame({"rep": rep, "p": out[column].to_numpy(dtype="float64")})
        truth = d.truth(quantity, estimand)
        return pd.DataFrame(
            {
                "rep": rep,
                "low": out["ci_low"].to_numpy(dtype="float64"),
                "high": out["ci_high"].to_numpy(dtype="float64"),
                "truth": (truth[:, 1] - truth[:, 0])[rep],
            }
        )

    return run


def _counts(cells: pd.DataFrame) -> pd.DataFrame:
    counts = condition_scores(cells)
    counts["reasoning_level"] = counts["reasoning"].astype(str).map(reasoning_level)
    return counts


def _unpaired(metric, verdicts: bool = False):
    """``unpaired_reasoning`` on the counts alone, or (``verdicts``) with the cells too."""

    def call(cells, d):
        out = unpaired_reasoning(_counts(cells), cells if verdicts else None)
        out = out.loc[out["metric"] == metric]
        return out.assign(contrast=out["model"].astype(str) + ":")

    return call


def _flip_tests(cells, d):
    return pd.concat(
        [
            flip_test(flips(cells, model=f"r{rep:04d}")).assign(contrast=f"r{rep:04d}:")
            for rep in range(d.reps)
        ],
        ignore_index=True,
    )


def _compare(cells, d):
    """Newcombe's change interval ``make compare`` gives from counts: base = floor, head =
    high."""
    counts = condition_scores(cells).set_index("condition")
    rows = []
    for rep in range(d.reps):
        base, head = counts.loc[f"r{rep:04d} (off)"], counts.loc[f"r{rep:04d} (high)"]
        low, high = difference_interval(
            int(head["n_trials_correct"]),
            int(head["n_trials"]),
            int(base["n_trials_correct"]),
            int(base["n_trials"]),
        )
        rows.append({"contrast": f"r{rep:04d}:", "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows)


def _no_wider(band_low, band_high, low, high) -> np.ndarray:
    """1 where the band is no wider than the interval, 0 where wider, NaN where either is
    missing (no band, or no valid interval to hold it to)."""
    band = np.asarray(band_high, dtype="float64") - np.asarray(band_low, dtype="float64")
    width = np.asarray(high, dtype="float64") - np.asarray(low, dtype="float64")
    missing = np.isnan(band) | np.isnan(width)
    return np.where(missing, np.nan, (band <= width + 1e-12).astype("float64"))


def change_clustered(d: Draw) -> pd.DataFrame:
    """``make compare``'s unpaired clustered change interval from per-trial verdicts
    (``effective_size_difference``; base = floor, head = high)."""
    m = np.full(d.design.setting.scenarios, float(d.design.setting.trials))
    truth = d.truth(MEAN)
    bounds = [effective_size_difference(c[1], m, c[0], m) for c in d.correct]
    low, high = (np.array(x, dtype="float64") for x in zip(*bounds, strict=True))
    return pd.DataFrame(
        {"rep": np.arange(d.reps), "low": low, "high": high, "truth": truth[:, 1] - truth[:, 0]}
    )


def table2_band(d: Draw) -> pd.DataFrame:
    """Table 2's band (``design_effect_bound`` from counts, null trials allowed) against the
    package's clustered 95% interval from the per-trial verdicts (``rates(ci='cluster')``):
    the band holds in a draw when it is no wider than that interval and the interval covers
    the population truth."""
    cells = cells_frame(d)
    public = _public(cells)
    band = design_effect_bound(condition_scores(public), d.design.setting.trials, NULLS_ALLOWED)
    valid = rates(public, by="condition", ci="cluster")
    valid = valid.assign(condition=valid["condition"].astype(str))
    band = band.assign(condition=band["condition"].astype(str))
    both = valid[["condition", "ci_low", "ci_high"]].merge(
        band[["condition", "ci_low", "ci_high"]], on="condition", suffixes=("", "_band")
    )
    keys = _keys(cells, ["condition"]).astype({"condition": str})
    out = _intervals(both, keys, ["condition"], d.truth(MEAN))
    rows = both.merge(keys, on="condition", validate="one_to_one")
    out["narrower"] = _no_wider(rows["ci_low_band"], rows["ci_high_band"], out["low"], out["high"])
    return out


def change_band(d: Draw) -> pd.DataFrame:
    """``make compare``'s clustered bound from counts (``clustered_change_bound``) against a
    valid unpaired clustered 95% interval of the change from the per-trial verdicts
    (``effective_size_difference``): it holds in a draw when it is no wider than that
    interval and the interval covers the population truth."""
    counts = condition_scores(_public(cells_frame(d))).set_index("condition")
    m = np.full(d.design.setting.scenarios, float(d.design.setting.trials))
    truth = d.truth(MEAN)
    rows = []
    for rep in range(d.reps):
        base, head = counts.loc[f"r{rep:04d} (off)"], counts.loc[f"r{rep:04d} (high)"]
        bound = clustered_change_bound(base, head)
        low, high = effective_size_difference(d.correct[rep, 1], m, d.correct[rep, 0], m)
        rows.append(
            {
                "rep": rep,
                "low": low,
                "high": high,
                "truth": truth[rep, 1] - truth[rep, 0],
                "narrower": float(
                    _no_wider(
                        bound["clustered_bound_low"], bound["clustered_bound_high"], low, high
                    )
                ),
            }
        )
    return pd.DataFrame(rows)


def _pass_k(which):
    def call(cells, d):
        k = d.design.setting.trials if which == "m" else which
        out = pass_hat_k(cells, k_max=k, n_boot=N_BOOT)
        return out.loc[out["k"] == k]

    return call


def pass_k_truth(which):
    def run(d):
        k = d.design.setting.trials if which == "m" else which
        return per_condition(_pass_k(which), f"pass{k}")(d)

    return run


def rank_sets(joint: bool, from_counts: bool):
    """Coverage of the true ranks (condition j's true rank is J - j): marginal per condition,
    or simultaneous per release."""

    def run(d: Draw) -> pd.DataFrame:
        key = (from_counts, d.design.setting, d.reps, d.seed, N_BOOT)
        if key not in _RANKS:
            _RANKS.clear()  # the marginal and simultaneous entries of one setting share it
            _RANKS[key] = _rank_rows(d, from_counts)
        return _rank_coverage(d, _RANKS[key], joint)

    return run


_RANKS: dict = {}


def _rank_rows(d: Draw, from_counts: bool) -> pd.DataFrame:
    """The rank sets of every release of ``d`` (each a source), with ``rep`` and ``j``."""
    cells = cells_frame(d, by_source=True)
    if from_counts:
        counts = condition_scores(_public(cells))
        out = pd.concat(
            [
                rank_uncertainty_from_counts(part, n_boot=N_BOOT, label="condition")
                for _, part in counts.groupby("source", sort=True)
            ],
            ignore_index=True,
        )
    else:
        out = rank_uncertainty(_public(cells), n_boot=N_BOOT)
    return out.merge(_keys(cells, ["source", "condition"]), on=["source", "condition"])


def _rank_coverage(d: Draw, rows: pd.DataFrame, joint: bool) -> pd.DataFrame:
    """Per condition (marginal) or per release (``joint``), whether the sets hold the truth."""
    true = d.design.setting.conditions - rows["j"].to_numpy()
    low_c, high_c = ("rank_low_joint", "rank_high_joint") if joint else ("rank_low", "rank_high")
    low = pd.to_numeric(rows[low_c], errors="coerce").to_numpy(dtype="float64")
    high = pd.to_numeric(rows[high_c], errors="coerce").to_numpy(dtype="float64")
    inside = np.where(np.isnan(low) | np.isnan(high), np.nan, (low <= true) & (true <= high))
    frame = pd.DataFrame({"rep": rows["rep"].to_numpy(), "covered": inside})
    if joint:  # a release covers when every condition's set holds its true rank
        frame = frame.groupby("rep", as_index=False)["covered"].agg(
            lambda v: np.nan if v.isna().any() else float(v.all())
        )
    return frame


def pooled(call, quantity: str, name: str, members_of=None, ratio_of=None):
    """A pooled quantity over a release's conditions (each release a source): its truth is
    the mean over conditions (equal cells each) on the scenarios it pools."""

    def run(d: Draw) -> pd.DataFrame:
        cells = cells_frame(d, by_source=True)
        out = call(_public(cells), scenarios_frame(d))
        out = out.loc[out["quantity"] == name]
        rep = out["source"].str[1:].astype(int).to_numpy()
        pattern = d.design.pattern
        if ratio_of:
            over, under = (d.truth(q).mean(1) for q in ratio_of)
            truth = over / under
        elif members_of:
            parts = [d.truth(quantity, members=pattern == p).mean(1) for p in members_of]
            truth = parts[0] - parts[1] if len(parts) == 2 else parts[0]
        else:
            truth = d.truth(quantity).mean(1)
        return pd.DataFrame(
            {
                "rep": rep,
                "low": out["ci_low"].to_numpy(dtype="float64"),
                "high": out["ci_high"].to_numpy(dtype="float64"),
                "truth": np.asarray(truth)[rep],
            }
        )

    return run


def mdd_power(metric: str):
    """Achieved power of the paired test against the power ``minimum_detectable_difference``
    states for the setting's true difference: the power at which its detectable difference
    (from the true spread, skewness and kurtosis of per-scenario differences, the kurtosis
    also as the effective df the paired t runs at, or the true discordance, measured on
    200,000 scenarios of the setting) equals the true difference."""

    def run(d: Draw) -> pd.DataFrame:
        setting = d.design.setting
        big = draw(replace(setting, scenarios=200_000), reps=1, seed=d.seed + 1)
        truth = d.truth(metric)
        delta = float(truth[0, 1] - truth[0, 0])
        if metric == MEAN:
            diff = (big.correct[0, 1] - big.correct[0, 0]) / setting.trials
            kurtosis = float(stats.kurtosis(diff, fisher=False))
            basis = {
                "sd_diff": float(diff.std(ddof=1)),
                "df": effective_df(setting.scenarios, kurtosis),
                "skewness": float(stats.skew(diff)) * np.sign(delta),
                "kurtosis": kurtosis,
            }
            out = paired_accuracy_difference(_public(cells_frame(d)))
        else:
            basis = {
                "discordance": float((big.modal_correct[0, 1] != big.modal_correct[0, 0]).mean())
            }
            out = paired_binary_difference(_public(cells_frame(d)), metric)
        delta = abs(delta)

        def gap(power: float) -> float:
            found = minimum_detectable_difference(setting.scenarios, power=power, **basis)
            return (np.inf if np.isnan(found) else found) - delta

        p = out["p"].to_numpy(dtype="float64")
        try:
            nominal = optimize.brentq(gap, 0.06, 0.995) if gap(0.06) < 0 < gap(0.995) else np.nan
        except (TypeError, ValueError):  # the package failed to state a power: refused
            nominal, p = np.nan, np.full(len(p), np.nan)
        return pd.DataFrame({"rep": _rep_of_contrast(out), "p": p, "nominal": nominal})

    return run


def clopper_pearson(d: Draw) -> pd.DataFrame:
    """A known-good interval: exact Clopper-Pearson on trials; on independent trials
    (icc 0, no pattern effect) it covers at least 95%."""
    k, n = d.correct.sum(-1).ravel(), d.design.setting.trials * d.design.setting.scenarios
    low = np.nan_to_num(stats.beta.ppf(0.025, k, n - k + 1), nan=0.0)
    high = np.nan_to_num(stats.beta.ppf(0.975, k + 1, n - k), nan=1.0)
    rep = np.repeat(np.arange(d.reps), d.p.shape[1])
    return pd.DataFrame({"rep": rep, "low": low, "high": high, "truth": d.truth(MEAN).ravel()})


def too_narrow(d: Draw) -> pd.DataFrame:
    """A deliberately wrong interval: the Wald interval at z = 1.0 (a 68% interval)
    labelled 95%; the harness must find it failing."""
    k, n = d.correct.sum(-1).ravel(), d.design.setting.trials * d.design.setting.scenarios
    p = k / n
    half = 1.0 * np.sqrt(p * (1 - p) / n)
    rep = np.repeat(np.arange(d.reps), d.p.shape[1])
    return pd.DataFrame(
        {"rep": rep, "low": p - half, "high": p + half, "truth": d.truth(MEAN).ravel()}
    )


# --- the grid -----------------------------------------------------------------------


def _settings(**axes) -> tuple[Setting, ...]:
    """Every combination of ``axes`` (field -> values)."""
    names = list(axes)
    return tuple(Setting(**dict(zip(names, v, strict=True))) for v in product(*axes.values()))


RATES = _settings(
    conditions=(1,),
    scenarios=(5, 10, 20, 50, 106),
    icc=(0.0, 0.3, 0.75),
    rate=(0.01, 0.06, 0.5, 0.85, 0.97),
) + _settings(conditions=(1,), scenarios=(20, 106), trials=(1, 10), rate=(0.06, 0.5))
RATES_FAST = (
    Setting(conditions=1, scenarios=106, icc=0.5, rate=0.85),
    Setting(conditions=1, scenarios=10, icc=0.3, rate=0.5),
)
STRATA = _settings(
    conditions=(1,),
    scenarios=(10, 20, 50, 106),
    icc=(0.3, 0.75),
    rate=(0.5, 0.85),
    pattern_effect=(0.8,),
)
#: Power rows draw this many times the releases of the others (10,000 at the default 400):
#: they are cheap, and their verdict allows one point of power beyond Monte Carlo error
#: (``analysis.inference.coverage.POWER_TOLERANCE``), so the error must be well below it.
POWER_REPS = 25
POWER = _settings(
    scenarios=(20, 50, 106),
    icc=(0.3, 0.75),
    pair_corr=(0.6,),
    rate=(0.8,),
    difference=(0.1,),
)
REFUSALS = _settings(
    conditions=(1,),
    metric=("over_refusal",),
    scenarios=(20, 50, 106),
    icc=(0.3, 0.75),
    rate=(0.01, 0.06, 0.3),
)
PASS_K = _settings(conditions=(1,), scenarios=(20, 106), icc=(0.3, 0.75), rate=(0.5, 0.85, 0.97))
PAIRS = _settings(
    scenarios=(10, 20, 50, 106),
    icc=(0.3, 0.75),
    pair_corr=(0.0, 0.6, 0.9),
    rate=(0.5, 0.9),
    difference=(0.05,),
)
NULLS = tuple(replace(s, difference=0.0) for s in PAIRS)
PAIRS_FAST = (Setting(scenarios=50, icc=0.5, pair_corr=0.6, rate=0.85, difference=0.05),)
NULLS_FAST = (Setting(scenarios=50, icc=0.5, pair_corr=0.6, rate=0.85),)
MODAL = tuple(replace(s, metric="modal_accuracy") for s in PAIRS)
MODAL_NULLS = tuple(replace(s, difference=0.0) for s in MODAL)
OVER = _settings(
    metric=("over_refusal",),
    scenarios=(20, 106),
    icc=(0.3, 0.75),
    pair_corr=(0.6,),
    rate=(0.1, 0.3),
    difference=(-0.05,),
)
OVER_NULLS = tuple(replace(s, difference=0.0) for s in OVER)
RANKS = _settings(
    conditions=(5, 15, 30),
    scenarios=(20, 106),
    icc=(0.3, 0.75),
    rate=(0.55,),
    difference=(0.01,),
) + _settings(
    conditions=(15,), scenarios=(106,), icc=(0.3,), rate=(0.55,), difference=(0.005, 0.02)
)
RANKS_FAST = (Setting(conditions=15, scenarios=106, icc=0.3, rate=0.6, difference=0.01),)
POOLED = _settings(
    conditions=(4,),
    scenarios=(20, 50, 106),
    icc=(0.3, 0.75),
    rate=(0.6, 0.9),
    difference=(0.02,),
    pattern_effect=(0.5,),
)

REGISTRY: tuple[Method, ...] = (
    Method(
        "rates(ci='cluster')",
        "interval",
        MEAN,
        POPULATION,
        per_condition(lambda c, d: rates(c, by="condition", ci="cluster"), MEAN),
        RATES,
        fast=RATES_FAST,
    ),
    Method(
        "rates(ci='wilson')",
        "interval",
        MEAN,
        SAMPLE,
        per_condition(lambda c, d: rates(c, by="condition", ci="wilson"), MEAN, SAMPLE),
        RATES,
        fast=RATES_FAST,
    ),
    Method(
        "rates(ci='cluster')",
        "interval",
        "over_refusal",
        POPULATION,
        per_condition(
            lambda c, d: rates(c, by="condition", metric="over_refusal"),
            "over_refusal",
        ),
        REFUSALS,
    ),
    Method(
        "rates(ci='wilson')",
        "interval",
        "over_refusal",
        SAMPLE,
        per_condition(
            lambda c, d: rates(c, by="condition", metric="over_refusal", ci="wilson"),
            "over_refusal",
            SAMPLE,
        ),
        REFUSALS,
    ),
    Method(
        "clustered_accuracy",
        "interval",
        MEAN,
        POPULATION,
        per_condition(lambda c, d: clustered_accuracy(c, n_boot=N_BOOT), MEAN),
        RATES,
    ),
    Method(
        "clustered_accuracy(strata=pattern)",
        "interval",
        MEAN,
        POPULATION,
        per_condition(
            lambda c, d: clustered_accuracy(
                c,
                n_boot=N_BOOT,
                strata=scenarios_frame(d).set_index("scenario_id")["boundary_pattern"],
            ),
            MEAN,
        ),
        STRATA,
    ),
    Method(
        "gee_accuracy",
        "interval",
        MEAN,
        POPULATION,
        per_condition(lambda c, d: gee_accuracy(c), MEAN),
        RATES,
    ),
    Method(
        "design_effect_bound (Table 2)",
        "bound",
        MEAN,
        POPULATION,
        table2_band,
        RATES,
        note="Table 2's band claims only to be no wider than a valid clustered 95% interval: "
        "measured as the share of draws where it is no wider than rates(ci='cluster') on the "
        "per-trial verdicts and that interval covers (refused where either gives none: below "
        "10 scenarios, or at one trial per cell)",
    ),
    Method("pass_hat_k (k=2)", "interval", "pass2", POPULATION, pass_k_truth(2), PASS_K),
    Method("pass_hat_k (k=m)", "interval", "pass^m", POPULATION, pass_k_truth("m"), PASS_K),
    Method(
        "paired_accuracy_difference",
        "interval",
        MEAN,
        POPULATION,
        contrast(lambda c, d: paired_accuracy_difference(c), MEAN),
        PAIRS,
        fast=PAIRS_FAST,
    ),
    Method(
        "paired_accuracy_difference",
        "test",
        MEAN,
        POPULATION,
        contrast(lambda c, d: paired_accuracy_difference(c), MEAN, column="p"),
        NULLS,
        fast=NULLS_FAST,
    ),
    Method(
        "paired_binary_difference",
        "interval",
        "modal_accuracy",
        POPULATION,
        contrast(lambda c, d: paired_binary_difference(c, "modal_accuracy"), "modal_accuracy"),
        MODAL,
    ),
    Method(
        "paired_binary_difference",
        "test",
        "modal_accuracy",
        POPULATION,
        contrast(lambda c, d: paired_binary_difference(c, "modal_accuracy"), "", column="p"),
        MODAL_NULLS,
    ),
    Method(
        "paired_binary_difference",
        "interval",
        "over_refusal",
        POPULATION,
        contrast(lambda c, d: paired_binary_difference(c, "over_refusal"), "over_refusal"),
        OVER,
    ),
    Method(
        "paired_binary_difference",
        "test",
        "over_refusal",
        POPULATION,
        contrast(lambda c, d: paired_binary_difference(c, "over_refusal"), "", column="p"),
        OVER_NULLS,
    ),
    Method(
        "flips + flip_test",
        "interval",
        "modal_accuracy",
        POPULATION,
        contrast(_flip_tests, "modal_accuracy"),
        MODAL[::16],
        note="flips() pairs by scenario, one call per pair: 3 settings of the grid",
    ),
    Method(
        "flips + flip_test",
        "test",
        "modal_accuracy",
        POPULATION,
        contrast(_flip_tests, "", column="p"),
        MODAL_NULLS[::16],
    ),
    Method(
        "unpaired_reasoning",
        "interval",
        MEAN,
        POPULATION,
        contrast(_unpaired(MEAN), MEAN),
        PAIRS,
        note="from counts alone: each scenario counted once (the largest design effect)",
    ),
    Method(
        "unpaired_reasoning",
        "test",
        MEAN,
        POPULATION,
        contrast(_unpaired(MEAN), "", column="p"),
        NULLS,
    ),
    Method(
        "unpaired_reasoning",
        "interval",
        "over_refusal",
        POPULATION,
        contrast(_unpaired("over_refusal"), "over_refusal"),
        OVER,
    ),
    Method(
        "unpaired_reasoning",
        "test",
        "over_refusal",
        POPULATION,
        contrast(_unpaired("over_refusal"), "", column="p"),
        OVER_NULLS,
    ),
    Method(
        "unpaired_reasoning(cells=...)",
        "interval",
        MEAN,
        POPULATION,
        contrast(_unpaired(MEAN, verdicts=True), MEAN),
        PAIRS,
        note="the design effect estimated from per-trial verdicts (Rao-Scott)",
    ),
    Method(
        "unpaired_reasoning(cells=...)",
        "test",
        MEAN,
        POPULATION,
        contrast(_unpaired(MEAN, verdicts=True), "", column="p"),
        NULLS,
    ),
    Method(
        "make compare: Newcombe from counts",
        "interval",
        MEAN,
        SAMPLE,
        contrast(_compare, MEAN, SAMPLE),
        PAIRS,
        note="from counts, trials taken as independent: it claims the change on these "
        "scenarios held fixed, and is measured against that (against the population it "
        "covered down to 70% at icc 0.75)",
    ),
    Method(
        "make compare: effective_size_difference",
        "interval",
        MEAN,
        POPULATION,
        change_clustered,
        PAIRS,
        note="from per-trial verdicts where no paired method applies; unpaired, so "
        "conservative where the two share scenarios",
    ),
    Method(
        "make compare: clustered_change_bound",
        "bound",
        MEAN,
        POPULATION,
        change_band,
        PAIRS[::2],
        note="a bound on the width from counts: measured as the share of draws where it is no "
        "wider than effective_size_difference (unpaired, clustered) on the per-trial "
        "verdicts and that interval covers",
    ),
    Method(
        "rank_uncertainty (marginal)",
        "set",
        "rank",
        POPULATION,
        rank_sets(joint=False, from_counts=False),
        RANKS,
        fast=RANKS_FAST,
    ),
    Method(
        "rank_uncertainty (simultaneous)",
        "set",
        "ranks",
        POPULATION,
        rank_sets(joint=True, from_counts=False),
        RANKS,
        fast=RANKS_FAST,
    ),
    Method(
        "rank_uncertainty_from_counts (marginal)",
        "set",
        "rank",
        POPULATION,
        rank_sets(joint=False, from_counts=True),
        RANKS,
    ),
    Method(
        "rank_uncertainty_from_counts (simultaneous)",
        "set",
        "ranks",
        POPULATION,
        rank_sets(joint=True, from_counts=True),
        RANKS,
    ),
    Method(
        "pooled_pattern_accuracy",
        "interval",
        "modal_accuracy",
        POPULATION,
        pooled(
            lambda c, s: pooled_pattern_accuracy(c, s, n_boot=N_BOOT),
            "modal_accuracy",
            f"modal accuracy: {ANCHOR}",
            members_of=(ANCHOR,),
        ),
        POOLED,
    ),
    Method(
        "pooled_mirror_gap",
        "interval",
        "modal_accuracy",
        POPULATION,
        pooled(
            lambda c, s: pooled_mirror_gap(c, s, n_boot=N_BOOT),
            "modal_accuracy",
            "mirror-vs-anchor gap (anchor - mirror)",
            members_of=(ANCHOR, MIRROR),
        ),
        POOLED,
    ),
    Method(
        "pooled_direction_asymmetry",
        "interval",
        "over_refusal",
        POPULATION,
        pooled(
            lambda c, s: pooled_direction_asymmetry(c, s, n_boot=N_BOOT),
            "over_refusal",
            "over-refusal rate",
        ),
        POOLED,
    ),
    Method(
        "pooled_direction_asymmetry",
        "interval",
        "over / under ratio",
        POPULATION,
        pooled(
            lambda c, s: pooled_direction_asymmetry(c, s, n_boot=N_BOOT),
            "",
            "over / under rate ratio",
            ratio_of=("over_refusal", "under_refusal"),
        ),
        POOLED,
    ),
)
REGISTRY += (
    Method(
        "minimum_detectable_difference (paired t)",
        "power",
        MEAN,
        POPULATION,
        mdd_power(MEAN),
        POWER,
        rep_scale=POWER_REPS,
        note="the noncentral t at the effective df of the true kurtosis, corrected for the "
        "true skewness and kurtosis of the differences (uncorrected it stated 60.0% and "
        "90.9% at S=50 and 106, icc 0.75, where the test reaches 61-62% and 92.5%); at 20 "
        "scenarios, icc 0.3, the test runs at the df of each release's sample kurtosis, on "
        "average above the true one's, and reaches 1.6 points more than stated",
    ),
    Method(
        "minimum_detectable_difference (McNemar, exact)",
        "power",
        "modal_accuracy",
        POPULATION,
        mdd_power("modal_accuracy"),
        tuple(replace(s, metric="modal_accuracy", difference=0.15) for s in POWER),
        rep_scale=POWER_REPS,
        note="the test's exact power: within 0.5 points of the achieved power in every "
        "setting (the 25.5% at S=20 icc 0.3 that failed at 400 releases was the draw's: "
        "31.2% on 10,000)",
    ),
)
#: The harness's own checks: an interval that must pass and one that must fail.
CONTROLS: tuple[Method, ...] = (
    Method(
        "control: Clopper-Pearson on independent trials",
        "interval",
        MEAN,
        POPULATION,
        clopper_pearson,
        (Setting(conditions=1, icc=0.0, scenarios=50, rate=0.3),),
        note="the harness's check: it must pass",
    ),
    Method(
        "control: 68% Wald interval called 95%",
        "interval",
        MEAN,
        POPULATION,
        too_narrow,
        (Setting(conditions=1, icc=0.0, scenarios=50, rate=0.3),),
        note="the harness's check: it must fail",
    ),
)


def run(
    names=None,
    reps: int = 400,
    fast: bool = False,
    seed: int = SEED,
    jobs: int = 1,
    progress=None,
) -> pd.DataFrame:
    """The grid for the registered methods (``names``: those whose name contains one)."""
    chosen = [m for m in (*REGISTRY, *CONTROLS) if not names or any(n in m.name for n in names)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return grid(chosen, reps, seed, fast=fast, jobs=jobs, progress=progress)


def render(table: pd.DataFrame) -> str:
    """The page's text below its first line: the standard, the summary per method and the
    full grid (the docs include it; the tests hold it to the CSV rows)."""
    failing = int((table["verdict"] == "fail").sum())
    noted = {m.name: m.note for m in (*REGISTRY, *CONTROLS) if m.note}
    notes = "; ".join(f"`{name}`: {note}" for name, note in noted.items()) + "."
    return (
        f"{len(table)} rows (method x setting), {failing} failing the standard. A setting reads "
        "S scenarios, m trials per cell, icc the latent intraclass correlation, rate the true "
        "value, J conditions, pair_corr the latent correlation of paired cells, b the pattern "
        "effect. Coverage (or type-I error) in %, MC SE in points, refused the share of NaN "
        "results, zero-width the intervals of no width. A power row (a stated minimum "
        "detectable difference, simulated at that design and difference) passes when the "
        f"achieved power lies within {100 * POWER_TOLERANCE:.0f} point of the nominal plus "
        f"{Z_MC} MC SE, either way (the one point of slack the coverage standard allows a 95% "
        "interval, so that an exact power all but never fails a row by chance), on "
        f"{POWER_REPS} times the releases of the other rows.\n\n"
        "### Summary\n\n" + summary_table(table) + "\n\n" + notes + "\n\n"
        "### Full grid\n\n" + markdown_table(table) + "\n"
    )


def write(table: pd.DataFrame, command: str, seconds: float) -> None:
    """The Markdown page (its first line: the command and its wall time) and the rows as
    CSV beside it."""
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    head = f"Generated by `{command}` in {seconds / 60:.1f} min wall.\n\n"
    TABLE.write_text(head + render(table), "utf-8")
    table.to_csv(ROWS, index=False)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--reps", type=int, default=400, help="simulated releases per setting (default 400)"
    )
    parser.add_argument(
        "--method", nargs="+", default=None, help="only methods whose name contains one of these"
    )
    parser.add_argument("--boot", type=int, default=None, help="bootstrap resamples (default 1000)")
    parser.add_argument(
        "--fast", action="store_true", help="only the quick settings the tests measure"
    )
    parser.add_argument(
        "--jobs", type=int, default=1, help="processes to run the settings in (default 1)"
    )
    parser.add_argument(
        "--render",
        action="store_true",
        help="rewrite the docs' page from the rows of the last run (no simulation)",
    )
    parser.add_argument(
        "--update",
        action="store_true",
        help="replace only the chosen methods' rows in the last run's table",
    )
    parser.add_argument(
        "--no-write", action="store_true", help="print the table; leave the docs' table as is"
    )
    args = parser.parse_args(argv)
    if args.render:
        head = TABLE.read_text("utf-8").split("\n\n", 1)[0]
        TABLE.write_text(head + "\n\n" + render(pd.read_csv(ROWS)), "utf-8")
        return
    if args.boot:
        globals()["N_BOOT"] = args.boot
    started = time.perf_counter()
    partial = Path(tempfile.gettempdir()) / f"calibration-{os.getpid()}.partial.csv"
    print(f"rows so far: {partial}", flush=True)

    def progress(rows: list[dict]) -> None:
        frame = pd.DataFrame(rows)
        frame.to_csv(partial, mode="a", header=not partial.exists(), index=False)
        print(f"{time.perf_counter() - started:6.0f} s  {rows[0]['setting']}", flush=True)

    table = run(args.method, args.reps, args.fast, jobs=args.jobs, progress=progress)
    partial.unlink(missing_ok=True)
    seconds = time.perf_counter() - started
    print(markdown_table(table))
    print(f"\n{len(table)} rows in {seconds:.0f} s; failing: {(table.verdict == 'fail').sum()}")
    if args.no_write:
        return
    command = shlex.join(["python", "benchmarks/bench_calibration.py", *sys.argv[1:]])
    if args.update:  # the chosen methods' rows replace theirs in the last run's
        keys = ["method", "kind", "quantity", "estimand"]
        old = pd.read_csv(ROWS)
        mine = old.set_index(keys).index.isin(table.set_index(keys).index)
        table = pd.concat([old.loc[~mine], table], ignore_index=True)
        head = TABLE.read_text("utf-8").split("\n\n", 1)[0].removesuffix(".")
        TABLE.write_text(
            f"{head}; then `{command}` in {seconds / 60:.1f} min.\n\n" + render(table), "utf-8"
        )
        table.to_csv(ROWS, index=False)
        return
    write(table, command, seconds)


if __name__ == "__main__":
    main()
