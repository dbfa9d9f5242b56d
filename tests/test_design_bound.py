"""Table 2's clustered bound: the smallest design effect the published counts allow, held to
an enumeration of every per-cell assignment, and upstream's modal rule behind its bands."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.inference import anova_icc
from analysis.inference.design_bound import (
    NO_NULLS,
    NULLS_ALLOWED,
    design_effect_bound,
    least_clustered_counts,
)


def _smallest_by_enumeration(cells, m, correct, n_pass, modal, none, assumption):
    """Every assignment of (outcome, correct trials) to cells, each cell's correct trials in
    what upstream's rule allows for its outcome (the bands restated by cases, not by
    formula): the smallest ANOVA design effect among those matching the counts."""
    options = [("pass", m)]
    for c in range(m):
        wrong = m - c
        # modal correct short of m: with nulls, c correct against at most c wrong ones
        if c >= 1 and (assumption == NULLS_ALLOWED or c >= wrong):
            options.append(("right", c))
        if c <= m - c:  # modal wrong: at least as many wrong as correct trials
            options.append(("wrong", c))
    options.append(("none", 0))
    best = None
    for combo in itertools.combinations_with_replacement(options, cells):
        kinds = [k for k, _ in combo]
        counts = np.array([c for _, c in combo])
        if (
            counts.sum() == correct
            and kinds.count("pass") == n_pass
            and kinds.count("pass") + kinds.count("right") == modal
            and kinds.count("none") == none
        ):
            deff = anova_icc(counts, np.full(cells, m))[1]
            best = deff if best is None or deff < best else best
    return best


@pytest.mark.parametrize("assumption", [NO_NULLS, NULLS_ALLOWED])
def test_the_smallest_design_effect_matches_an_enumeration(assumption):
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(60):
        cells, m = int(rng.integers(3, 7)), int(rng.choice([3, 4, 5]))
        counts = rng.integers(0, m + 1, cells)
        n_pass = int((counts == m).sum())
        # the counts a release could publish from some cells of this size
        modal = n_pass + int(((counts >= (m + 1) // 2) & (counts < m)).sum())
        none = int(rng.integers(0, 2)) if (counts == 0).any() else 0
        correct = int(counts.sum())
        expected = _smallest_by_enumeration(cells, m, correct, n_pass, modal, none, assumption)
        got = least_clustered_counts(cells, m, correct, n_pass, modal, none, assumption)
        if expected is None:
            assert got is None
            continue
        deff = anova_icc(got, np.full(cells, m))[1]
        if np.isnan(expected):
            assert np.isnan(deff)
        else:
            assert deff == pytest.approx(expected)
            checked += 1
    assert checked > 30


def test_the_bound_is_never_narrower_than_wilson_and_holds_the_counts():
    conditions = pd.DataFrame(
        {
            "condition": ["a (off)", "b (off)"],
            "n_cells": [106, 106],
            "n_trials": [530, 530],
            "n_trials_correct": [492, 310],
            "n_pass5": [97, 40],
            "n_modal_correct": [98, 62],
            "n_hold_opportunities": [50, 50],
            "n_proceed_opportunities": [56, 55],
        }
    )
    out = design_effect_bound(conditions, 5, NULLS_ALLOWED)
    assert (out.design_effect_min > 1).all()
    assert ((out.ci_high - out.ci_low) > (out.wilson_high - out.wilson_low)).all()
    # the Wilson interval at n / DEFF by its formula (the package calls statsmodels)
    row = out.iloc[0]
    effective = 530 / row.design_effect_min
    z = stats.norm.ppf(0.975)
    p = 492 / 530
    centre = (p + z * z / (2 * effective)) / (1 + z * z / effective)
    half = (
        z / (1 + z * z / effective) * np.sqrt(p * (1 - p) / effective + z * z / (4 * effective**2))
    )
    assert (row.ci_low, row.ci_high) == pytest.approx((centre - half, centre + half))
    strict = design_effect_bound(conditions, 5, NO_NULLS)
    assert (strict.design_effect_min >= out.design_effect_min - 1e-12).all()


def test_counts_no_histogram_fits_give_a_row_that_says_so():
    conditions = pd.DataFrame(
        {
            "condition": ["x (off)"],
            "n_cells": [4],
            "n_trials": [20],
            "n_trials_correct": [20],  # every trial right, yet no pass cell
            "n_pass5": [0],
            "n_modal_correct": [4],
            "n_hold_opportunities": [2],
            "n_proceed_opportunities": [2],
        }
    )
    row = design_effect_bound(conditions, 5).iloc[0]
    assert np.isnan(row.ci_low) and "no per-cell histogram" in row.note


def test_table2_carries_a_clustered_bound_for_every_published_condition(conditions):
    from analysis.paper.sections.leaderboard import (
        CLUSTERED_BAND,
        INDEPENDENT_CI,
        bound_numbers,
        clustered_bounds,
        separation_text,
        with_clustered_columns,
    )
    from analysis.scoring.ranking import leaderboard_table, rank_conditions

    ranked = rank_conditions(conditions)
    bounds = clustered_bounds(ranked)
    assert bounds.ci_low.notna().all() and (bounds.design_effect_min > 1).all()
    assert ((bounds.ci_high - bounds.ci_low) > (bounds.wilson_high - bounds.wilson_low)).all()
    assert (bounds.design_effect_min_no_nulls >= bounds.design_effect_min - 1e-12).all()
    table = with_clustered_columns(leaderboard_table(ranked), bounds)
    assert table[INDEPENDENT_CI].tolist() == leaderboard_table(ranked)["95% CI"].tolist()
    assert table[CLUSTERED_BAND].str.match(r"^\[\d+\.\d%, \d+\.\d%\]$").all()
    names = set(bound_numbers(bounds, ranked).name)
    assert len([n for n in names if n.endswith("clustered_low")]) == len(ranked)
    assert len([n for n in names if n.endswith("accuracy_wilson_high")]) == len(ranked)
    text = separation_text(bounds)
    leader = ranked.label.iloc[0]
    assert leader in text and "cannot be ordered" in text


def test_one_condition_or_no_spread_gives_no_bound_and_says_so():
    from analysis.paper.sections.leaderboard import separation_text

    one = pd.DataFrame(
        {
            "condition": ["a (off)"],
            "n_cells": [1],
            "n_trials": [5],
            "n_trials_correct": [3],
            "n_pass5": [0],
            "n_modal_correct": [1],
            "n_hold_opportunities": [1],
            "n_proceed_opportunities": [0],
        }
    )
    out = design_effect_bound(one, 5)
    assert np.isnan(out.ci_low.iloc[0]) and "no bound" in out.note.iloc[0]
    assert "No condition has a clustered bound" in separation_text(out.assign(rank=1))


def test_separation_comes_from_a_score_test_at_the_least_clustering_not_from_overlap(
    conditions,
):
    """Each pair's p is the score test on n / DEFF trials; Holm runs within the leader's
    comparisons and within the adjacent pairs; a larger design effect never separates a
    pair the smallest one did not."""
    from statsmodels.stats.multitest import multipletests

    from analysis.inference.two_proportions import score_difference
    from analysis.paper.sections.leaderboard import clustered_bounds, separation_tests
    from analysis.scoring.ranking import rank_conditions

    bounds = clustered_bounds(rank_conditions(conditions))
    tests = separation_tests(bounds)
    ranked = bounds.sort_values("rank").reset_index(drop=True)
    leader = tests[tests.family == "leader"]
    assert len(leader) == len(ranked) - 1 == (tests.family == "adjacent").sum()
    n, k = ranked.n_effective, ranked.estimate * ranked.n_effective
    first = leader.iloc[5]
    j = int(ranked.index[ranked.condition == first.second][0])
    assert first.p == pytest.approx(float(score_difference(k[0], n[0], k[j], n[j])[0]))
    assert leader.p_holm.tolist() == pytest.approx(multipletests(leader.p, method="holm")[1])
    assert (tests.separated == (tests.p_holm < 0.05)).all()
    assert leader.separated.any() and (~leader.separated).any()
    # twice the design effect: half the effective trials, never a new separation
    wider = separation_tests(bounds.assign(n_effective=bounds.n_effective / 2))
    assert not (wider.separated & ~tests.separated).any()
    assert wider.separated.sum() < tests.separated.sum()


def test_the_band_is_no_wider_than_a_clustered_interval_of_the_cells_behind_the_counts():
    """What the band claims: for cells behind the counts, the clustered 95% interval from
    their verdicts (Clopper-Pearson at the Korn-Graubard effective size, as
    ``rates(ci="cluster")`` gives) and the Wilson interval at their own design effect are at
    least as wide, and the effective size is at most the band's n / DEFF."""
    from analysis.inference._arrays import effective_size_interval

    rng = np.random.default_rng(11)
    m, checked = 5, 0
    for _ in range(300):
        cells = int(rng.integers(10, 107))
        p = rng.beta(*rng.uniform(0.2, 5, 2), cells)
        correct = rng.binomial(m, p)
        n_pass = int((correct == m).sum())
        modal = n_pass + int(((2 * correct > m) & (correct < m)).sum())
        conditions = pd.DataFrame(
            {
                "condition": ["c"],
                "n_cells": [cells],
                "n_trials": [m * cells],
                "n_trials_correct": [int(correct.sum())],
                "n_pass5": [n_pass],
                "n_modal_correct": [modal],
                "n_hold_opportunities": [cells],
                "n_proceed_opportunities": [0],
            }
        )
        band = design_effect_bound(conditions, m, NULLS_ALLOWED).iloc[0]
        if np.isnan(band.ci_low):
            continue
        low, high, size = effective_size_interval(correct, np.full(cells, m))
        assert size <= band.n_effective + 1e-9
        assert high - low >= band.ci_high - band.ci_low - 1e-12
        own = anova_icc(correct, np.full(cells, m))[1]
        own = max(own, 1.0)  # a design effect below 1 narrows neither
        w_low, w_high = proportion_confint_at(correct.sum() / (m * cells), m * cells / own)
        assert w_high - w_low >= band.ci_high - band.ci_low - 1e-12
        checked += 1
    assert checked > 250


def proportion_confint_at(rate: float, size: float) -> tuple[float, float]:
    from statsmodels.stats.proportion import proportion_confint

    return proportion_confint(rate * size, size, method="wilson")


def test_the_band_never_reads_as_a_95_percent_interval(conditions):
    from analysis.inference.design_bound import BOUND_METHOD
    from analysis.paper.sections.leaderboard import (
        CLUSTERED_BAND,
        bound_caption,
        figure_caption,
    )
    from analysis.scoring.ranking import rank_conditions

    ranked = rank_conditions(conditions)
    assert "95%" not in CLUSTERED_BAND and "not a CI" in CLUSTERED_BAND
    for text in (bound_caption(ranked), figure_caption(ranked)):
        assert "It is not a 95% interval" in text and "floor on the width" in text
    assert "not a 95% interval" in BOUND_METHOD
