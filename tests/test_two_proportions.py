"""The two-proportion score test and the interval that inverts it agree on every table of
counts, zeros and full counts included, and agree with statsmodels where statsmodels is
right."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from statsmodels.stats import proportion

from analysis.inference.two_proportions import score_difference, score_statistic


def _tables() -> np.ndarray:
    """Every (k1, n1, k0, n0) on a grid of sizes 1 to 530, with 0, 1, n - 1, n and a spread
    of counts between."""
    rows = []
    for n1 in (1, 2, 3, 5, 10, 56, 112, 530):
        for n0 in (1, 2, 5, 10, 56, 530):
            k1s = np.unique(np.r_[0, 1, n1 - 1, n1, np.linspace(0, n1, 9).round()])
            k0s = np.unique(np.r_[0, 1, n0 - 1, n0, np.linspace(0, n0, 9).round()])
            rows += [(a, n1, b, n0) for a in k1s if a >= 0 for b in k0s if b >= 0]
    return np.array(rows, dtype="float64")


TABLES = _tables()


@pytest.mark.parametrize("correction", [True, False])
@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_p_below_alpha_exactly_when_the_interval_excludes_zero(correction, alpha):
    p, low, high = score_difference(*TABLES.T, alpha=alpha, correction=correction)
    excludes = (low > 0) | (high < 0)
    assert len(TABLES) > 2000
    assert excludes.any() and (~excludes).any()
    assert np.array_equal(p < alpha, excludes)
    estimate = TABLES[:, 0] / TABLES[:, 1] - TABLES[:, 2] / TABLES[:, 3]
    assert ((low <= estimate) & (estimate <= high)).all()
    assert ((low >= -1) & (high <= 1) & (low < high)).all()  # never zero-width


@pytest.mark.parametrize("correction", [True, False])
def test_the_p_value_is_statsmodels_score_test_wherever_it_gives_one(correction):
    p, _, _ = score_difference(*TABLES.T, correction=correction)
    checked = 0
    for row, mine in zip(TABLES, p, strict=True):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            theirs = proportion.test_proportions_2indep(
                *row, method="score", correction=correction
            ).pvalue
        if np.isfinite(theirs):
            checked += 1
            assert mine == pytest.approx(theirs, abs=1e-12)
        else:  # 0 of n against 0 of n, or all against all: no difference seen
            assert row[0] / row[1] == row[2] / row[3] and mine == 1.0
    assert checked > 0.9 * len(TABLES)


@pytest.mark.parametrize("table", [(10, 56, 3, 56), (0, 5, 0, 5), (1, 2, 0, 5), (50, 100, 0, 5)])
def test_each_end_is_where_the_test_at_the_likelihoods_maximum_reaches_alpha(table):
    """The restricted maximum found on a fine grid of the likelihood (independently of the
    bisection) puts |z| at 1.96 at both ends of the interval."""
    k1, n1, k0, n0 = table
    _, low, high = score_difference(*table)
    for end in (low, high):
        if abs(end) == 1:
            continue
        grid = np.linspace(max(0, -end), min(1, 1 - end), 200_001)[1:-1]
        with np.errstate(divide="ignore"):
            loglik = (
                k1 * np.log(grid + end)
                + (n1 - k1) * np.log(1 - grid - end)
                + k0 * np.log(grid)
                + (n0 - k0) * np.log(1 - grid)
            )
        p0 = grid[np.argmax(loglik)]
        p1 = p0 + end
        n = n1 + n0
        z = (k1 / n1 - k0 / n0 - end) / np.sqrt(
            (p1 * (1 - p1) / n1 + p0 * (1 - p0) / n0) * n / (n - 1)
        )
        assert abs(z) == pytest.approx(1.959964, abs=2e-3)


def test_the_statistic_falls_as_the_hypothesised_difference_rises():
    deltas = np.linspace(-0.999, 0.999, 401)
    for row in TABLES[::37]:
        z = score_statistic(*row, deltas)
        assert (np.diff(z) <= 1e-12).all(), row


def test_bad_counts_are_one_clear_error():
    with pytest.raises(ValueError, match="n1 and n0 must be positive"):
        score_difference(0, 0, 1, 5)
    with pytest.raises(ValueError, match="k1 and k0"):
        score_difference(6, 5, 1, 5)
    with pytest.raises(ValueError, match="alpha"):
        score_difference(1, 5, 1, 5, alpha=1.5)


def test_every_built_table_with_a_p_value_beside_an_interval_agrees_row_by_row(built_paper):
    """Wherever the paper prints a test's p beside its 95% interval of a difference, p < .05
    exactly when the interval excludes 0."""
    import pandas as pd

    checked = []
    for path in sorted((built_paper / "tables").glob("*.csv")):
        table = pd.read_csv(path)
        if not {"p", "ci_low", "ci_high"} <= set(table.columns):
            continue
        rows = table.dropna(subset=["p", "ci_low", "ci_high"])
        excludes = (rows.ci_low > 0) | (rows.ci_high < 0)
        disagree = rows.loc[excludes != (rows.p < 0.05), ["contrast", "metric", "p"]]
        assert disagree.empty, f"{path.name}: {disagree.to_dict('records')}"
        checked.append(path.name)
    assert "inference-reasoning-unpaired.csv" in checked


def test_score_test_is_score_differences_p() -> None:
    from analysis.inference.two_proportions import score_difference, score_test

    rng = np.random.default_rng(7)
    n1, n0 = rng.integers(1, 60, 300), rng.integers(1, 60, 300)
    k1, k0 = rng.integers(0, n1 + 1), rng.integers(0, n0 + 1)
    np.testing.assert_array_equal(score_test(k1, n1, k0, n0), score_difference(k1, n1, k0, n0)[0])
    assert isinstance(score_test(3, 5, 1, 5), float)
    with pytest.raises(ValueError, match="between 0 and their n"):
        score_test(6, 5, 1, 5)
