"""SteerBench-Work analysis: the release's scenarios, conditions and per-trial verdicts as
tidy tables, and the paper's tables computed from them.

The public API, re-exported here from the modules that hold it; every location defaults to
the project's ``data/`` folder, worked out when a function is called::

    from analysis import (
        condition_scores, flips, load_scenarios, load_trials, rates, score_cells, standings,
    )

    scenarios = load_scenarios()                       # one row per scenario
    trials = load_trials(scenarios=scenarios)          # one row per (scenario, condition, trial)
    cells = score_cells(trials, scenarios)             # one row per (scenario, condition)
    conditions = condition_scores(cells)               # one row per condition
    rates(cells, by="domain", metric=["over_refusal", "under_refusal"])   # tidy rates
    flips(cells, model="gpt-5.4-mini")     # floor against high (with the per-trial verdicts)
    standings()                                        # your runs beside Table 2, ranked

Names are imported on first use, so ``import analysis`` stays cheap (the no-op check of
``make paper`` imports no pandas).
"""

from __future__ import annotations

from analysis.lazy import lazy_exports

#: Each public name and the module that holds it.
_HOMES: dict[str, str] = {
    # the release: import, scenarios, published conditions, per-trial verdicts
    "import_release": "analysis.release.importer",
    "load_scenarios": "analysis.corpus.scenarios",
    "load_conditions": "analysis.scoring.leaderboard",
    "load_trials": "analysis.trials",
    "load_checked_cells": "analysis.scoring.crosscheck",
    # the published scoring rules
    "score_cells": "analysis.scoring.rules",
    "condition_scores": "analysis.scoring.rules",
    # the paper's tables
    "rank_conditions": "analysis.scoring.ranking",
    "leaderboard_table": "analysis.scoring.ranking",
    "direction_asymmetry": "analysis.scoring.metrics",
    "reasoning_contrasts": "analysis.scoring.metrics",
    "pattern_gradient": "analysis.scoring.breakdowns",
    "mirror_gap": "analysis.scoring.breakdowns",
    "stability": "analysis.scoring.reads",
    "hardest_scenarios": "analysis.scoring.breakdowns",
    "severity_by_tier": "analysis.scoring.breakdowns",
    "sensitivity_table": "analysis.scoring.sensitivity",
    # slicing: one joined table, rates by any column, two conditions paired by scenario
    "with_metadata": "analysis.exploring.joined",
    "rates": "analysis.exploring.rate_table",
    "flips": "analysis.exploring.pairing",
    "flip_test": "analysis.exploring.pairing",
    "plot_rates": "analysis.exploring.interval_figure",
    "browse": "analysis.exploring.interactive_table",
    # where a gate stands: published conditions, reference policies and runs in one table
    "standings": "analysis.exploring.standings",
    # intervals
    "wilson_interval": "analysis.scoring.intervals",
    # what a release can detect, and the scenarios a difference needs
    "detectable_effect": "analysis.inference.detectable",
    "scenarios_needed": "analysis.inference.detectable",
    # two releases side by side (make compare)
    "compare_releases": "analysis.compare",
    # running a gate (a Python function, a reference policy) into a run root
    "run_gate": "analysis.runner.gate_run",
    # a notebook section: its inputs, output writer and recorded numbers in one call
    "open_section": "analysis.paper.sections",
}

__all__ = sorted(_HOMES)
__getattr__, __dir__ = lazy_exports(globals(), _HOMES)
