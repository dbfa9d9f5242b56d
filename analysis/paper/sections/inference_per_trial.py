"""Section ``10-inference`` on per-trial verdicts: every per-trial method on each source of
verdicts present, and on a simulated release-sized input, with the numbers each source records.

Each source writes one set of tables and figures (their number depends on the verdicts
found), so the functions here show and write through the section.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from analysis import inference as inf
from analysis.paper.presentation import reader_columns
from analysis.paper.provenance import numbers_table, points, slug, value_number
from analysis.paper.sections.inference_pass_k import pass_k_checks, pass_k_figure
from analysis.paper.sections.inference_ranks import rank_figure
from analysis.paper.sections.inference_reasoning import paired_contrasts
from analysis.scoring.breakdowns import POOL_OF
from analysis.scoring.ranking import read_names

if TYPE_CHECKING:
    from analysis.paper.sections.opening import Section

#: Where each source's numbers live (the simulated input records none).
NAMESPACE = {
    "published": "inference",
    "reference-policy": "reference.inference",
    "run": "runs.inference",
}
#: Columns of the pooled table a reader does not need (every interval's method and note are
#: shown: a fallback or a refusal is named in its row).
POOLED_HIDDEN: list[str] = []


def per_trial_numbers(accuracy: pd.DataFrame, passk: pd.DataFrame, namespace: str) -> pd.DataFrame:
    """Under ``namespace``: each condition's mean trial accuracy with its scenario-clustered
    and Wilson bounds and design effect (``accuracy``: clustered and GEE beside), and its
    pass^k for every k."""
    rows = []
    for row in accuracy.itertuples():
        base = f"{namespace}.accuracy.{slug(row.condition)}"
        note = f"mean trial accuracy of {row.condition} ({row.source})"
        rows.append(value_number(f"{base}.estimate", points(row.estimate), note, unit="%"))
        for name, value, what in (
            ("cluster_ci_low", row.ci_low, "scenario-clustered 95% lower"),
            ("cluster_ci_high", row.ci_high, "scenario-clustered 95% upper"),
            ("wilson_low", row.wilson_low, "Wilson 95% lower"),
            ("wilson_high", row.wilson_high, "Wilson 95% upper"),
        ):
            if pd.notna(value):
                rows.append(
                    value_number(f"{base}.{name}", points(value), f"{what}, {note}", unit="%")
                )
        if pd.notna(row.design_effect):
            rows.append(
                value_number(
                    f"{base}.design_effect",
                    float(row.design_effect),
                    f"design effect 1 + (m - 1) ICC, {note}",
                    unit="ratio",
                    digits=2,
                )
            )
    rows += [
        value_number(
            f"{namespace}.pass_k.{slug(row.condition)}.k{row.k}",
            points(row.estimate),
            f"pass^{row.k} of {row.condition} ({row.source})",
            unit="%",
        )
        for row in passk.itertuples()
        if pd.notna(row.estimate)
    ]
    return numbers_table(rows)


def per_trial_inference(
    section: Section,
    cells: pd.DataFrame,
    scenarios: pd.DataFrame,
    tag: str,
    namespace: str | None,
    *,
    pools: pd.DataFrame | None = None,
) -> None:
    """Run, show and write every per-trial method on ``cells`` (tables and figures named
    ``inference-<tag>-...``); record numbers under ``namespace`` (None: none). Pooled
    quantities run on ``pools`` (default ``cells``), whose ``source`` names the pools. When
    every cell was provider-filtered, it says so and writes nothing."""
    if not cells["modal_scored"].to_numpy(dtype=bool).any():
        print(f"No per-trial inference ({tag}): every cell was provider-filtered.")
        return
    pools = cells if pools is None else pools.assign(source=pools["source"].astype(str))
    clustered = inf.clustered_accuracy(cells)
    gee = inf.gee_accuracy(cells)[["source", "condition", "ci_low", "ci_high", "icc", "note"]]
    accuracy = clustered.merge(gee, on=["source", "condition"], suffixes=("", "_gee"))
    estimand = clustered.estimand.iloc[0] if len(clustered) else ""
    section.table(
        accuracy,
        f"inference-{tag}-clustered-accuracy",
        "Mean trial accuracy per condition: 95% intervals by Clopper-Pearson at the "
        "scenario-clustered effective size, of the rate and of the GEE (exchangeable) fit, "
        "beside the Wilson interval on trials; ICC and design effect. "
        f"Estimand: {estimand}.",
        show_rows=40,
        columns=reader_columns(accuracy, ["estimand"]),
    )

    passk = inf.pass_hat_k(cells)
    top = int(passk["k"].max()) if len(passk) else None
    section.table(
        passk,
        f"inference-{tag}-pass-k",
        "pass^k: mean over cells of C(c,k)/C(n,k); filtered cells left out, null trials wrong; "
        "95% Clopper-Pearson interval at the scenario-clustered effective size (none on fewer "
        "than 10 scenarios). "
        + (
            f"pass^1 is mean trial accuracy and pass^{top} is {read_names(top)['pass']}."
            if top
            else ""
        ),
        show_rows=40,
    )
    print(pass_k_checks(passk, clustered, cells))
    section.figure(
        pass_k_figure(passk, f"pass^k ({tag})"),
        f"inference-{tag}-pass-k",
        f"pass^k against k per condition ({tag} verdicts).",
    )

    ranks = inf.rank_uncertainty(cells)
    section.table(
        ranks,
        f"inference-{tag}-ranks",
        "Rank by mean trial accuracy, scenarios resampled: marginal 95% rank sets (one "
        "condition alone) and simultaneous 95% rank sets (every condition at once) from "
        "studentised max-T bootstrap intervals of all pairwise differences, and P(first), "
        "ties shared ('< 1/B': no resample ranked it first).",
        show_rows=40,
        columns=reader_columns(ranks, ["p_first"]),
    )
    if ranks["rank_low"].isna().all():
        print(f"No rank figure ({tag}): {ranks['note'].iloc[0]}.")
    else:
        section.figure(
            rank_figure(ranks, f"Rank uncertainty ({tag}), scenario bootstrap"),
            f"inference-{tag}-ranks",
            f"Rank by mean trial accuracy with scenario-bootstrap marginal 95% rank sets "
            f"(thick) and simultaneous 95% rank sets (thin) ({tag} verdicts).",
        )

    pooled = pd.concat(
        [
            inf.pooled_pattern_accuracy(pools, scenarios),
            inf.pooled_mirror_gap(pools, scenarios),
            inf.pooled_direction_asymmetry(pools, scenarios),
        ],
        ignore_index=True,
    )
    section.table(
        pooled,
        f"inference-{tag}-pooled",
        "Pooled quantities (Table 3 per pattern, mirror-vs-anchor gap, headline asymmetry): 95% "
        "intervals by Clopper-Pearson at the scenario-clustered effective size (the gap: "
        "MOVER of its two patterns' intervals; the rate ratio: scenario bootstrap within "
        "required gate; method and note name each, and a refusal) beside an interval on "
        "cells that ignores clustering (independent_method names it).",
        show_rows=40,
        columns=reader_columns(pooled, POOLED_HIDDEN),
    )

    try:
        difficulty = inf.pattern_difficulty(cells, scenarios)
    except (ValueError, np.linalg.LinAlgError) as error:
        print(f"Pattern difficulty not estimable here: {error}")
    else:
        section.table(
            difficulty,
            f"inference-{tag}-pattern-difficulty",
            f"Odds ratio of a correct trial against {difficulty.reference.iloc[0]}, adjusted "
            f"for condition, scenarios as clusters ({difficulty.method.iloc[0]}).",
            show_rows=40,
            columns=reader_columns(difficulty, ["method", "reference"]),
        )

    paired_contrasts(section, cells, tag)
    if namespace is not None:
        section.record(per_trial_numbers(accuracy, passk, namespace))


def by_source(cells: pd.DataFrame):
    """(source, cells of that source) for each verdict source (``published``,
    ``reference-policy``, ``run``), before pooling; conditions are compared within a source."""
    origin = cells[POOL_OF] if POOL_OF in cells.columns else cells["source"]
    origin = origin.astype(str)
    for source in sorted(origin.unique()):
        yield source, cells[origin == source]


def per_trial_by_source(section: Section) -> None:
    """:func:`per_trial_inference` on each source of per-trial verdicts, numbers under the
    source's namespace; pooled quantities keep the loader's pools."""
    for source, part in by_source(section.cells):
        print(
            f"### {source}: {part.condition.nunique()} condition(s), "
            f"{part.scenario_id.nunique()} scenario(s)"
        )
        per_trial_inference(
            section,
            part.assign(source=source),
            section.scenarios,
            slug(source),
            NAMESPACE.get(source),
            pools=part,
        )


def simulated_inference(section: Section, n_models: int = 15) -> str:
    """Every per-trial method on a simulated release (``n_models`` models at two settings,
    the release's number of scenarios, known truth); no number recorded. Returns how often
    the truth falls inside the scenario-clustered and the Wilson intervals."""
    from analysis.scoring.rules import score_cells

    trials, scenarios, truth = inf.simulate_release(
        n_models=n_models, n_scenarios=len(section.scenarios), seed=inf.SEED
    )
    cells = score_cells(trials, scenarios)
    per_trial_inference(section, cells, scenarios, "simulated", None)
    checked = inf.clustered_accuracy(cells).merge(truth, on="condition")
    true = checked.true_accuracy
    covered = int(((checked.ci_low <= true) & (true <= checked.ci_high)).sum())
    wilson = int(((checked.wilson_low <= true) & (true <= checked.wilson_high)).sum())
    return (
        f"Simulated truth inside the scenario-clustered interval for {covered} of "
        f"{len(checked)} conditions; inside the Wilson interval for {wilson}. "
        "Coverage over many replications: benchmarks/bench_coverage.py (README)."
    )
