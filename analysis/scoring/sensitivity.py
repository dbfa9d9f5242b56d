"""The paper's three sensitivity checks on the direction asymmetry, from scored cells.

Each check pools the given cells, which must be one pool of
:func:`analysis.scoring.breakdowns.pool_cells` (callers pass one pool at a time; the published model
conditions are the paper's pool), and returns integer counts; rates are exact
:class:`~analysis.scoring.ratio.Ratio` values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from analysis.corpus.scenarios import has_human_labels
from analysis.corpus.vocabulary import ALLOWED, as_text
from analysis.scoring.breakdowns import (
    CONFLICT,
    MIRROR,
    decided_cells,
    pattern_accuracy,
    pool_cells,
)
from analysis.scoring.metrics import Directional
from analysis.scoring.ratio import Ratio
from analysis.scoring.rules import direction_flags

#: Words that mark a mirror as a credit or a hiring decision.
CREDIT_HIRING = re.compile(r"credit|hiring|recruit", re.IGNORECASE)
#: Scenario fields searched for ``CREDIT_HIRING``.
MIRROR_TEXT_FIELDS = ("domain", "raw_domain", "tags", "title", "mirror_incident")


def directional(cells: pd.DataFrame, gates: pd.Series | None = None) -> Directional:
    """Over-refusal (modal ``blocked`` where ``allowed`` is required) and under-refusal (modal
    ``allowed`` where ``blocked`` is required) over directionally scored cells; ``gates``
    (aligned with ``cells``) replaces the required gate when given."""
    flags = direction_flags(
        (cells["required_gate"] if gates is None else gates).astype(object).to_numpy(),
        cells["modal_decision"].astype(object).to_numpy(),
        cells["directionally_scored"].to_numpy(dtype=bool),
    )
    count = {name: int(flag.sum()) for name, flag in flags.items()}
    return Directional(
        over=Ratio(count["n_over_refusals"], count["n_proceed_opportunities"]),
        under=Ratio(count["n_under_refusals"], count["n_hold_opportunities"]),
    )


@dataclass(frozen=True)
class DerivedFlagCheck:
    """Check 1: the headline without the derived-flag scenarios."""

    excluded: tuple[str, ...]
    baseline: Directional
    without: Directional
    #: Modal-correct of modal-scored cells of the remaining detector conflicts and mirrors.
    conflict: Ratio
    mirror: Ratio


def _ids(scenarios: pd.DataFrame, mask: pd.Series) -> tuple[str, ...]:
    return tuple(sorted(scenarios.loc[mask.to_numpy(dtype=bool), "scenario_id"].astype(str)))


def _excluding(cells: pd.DataFrame, ids: tuple[str, ...]) -> pd.DataFrame:
    return cells.loc[~as_text(cells["scenario_id"]).isin(ids).to_numpy()]


def without_derived_flags(cells: pd.DataFrame, scenarios: pd.DataFrame) -> DerivedFlagCheck:
    """Pooled over/under-refusal without the ``derived_flag`` scenarios, and the modal
    accuracy (modal-correct / modal-scored cells) of the remaining ("clean") detector-conflict
    and mirror scenarios."""
    excluded = _ids(scenarios, scenarios["derived_flag"])
    kept = _excluding(cells, excluded)
    scored = decided_cells(kept, scenarios)
    return DerivedFlagCheck(
        excluded=excluded,
        baseline=directional(cells),
        without=directional(kept),
        conflict=pattern_accuracy(scored, CONFLICT),
        mirror=pattern_accuracy(scored, MIRROR),
    )


@dataclass(frozen=True)
class HumanRelabelCheck:
    """Check 2: modal decisions re-scored against the three-rater majority gate."""

    n_relabelled_scenarios: int
    baseline: Directional
    relabelled: Directional
    #: Modal-correct (against the human gate) of modal-scored cells.
    accuracy: Ratio


def human_gates(cells: pd.DataFrame, scenarios: pd.DataFrame) -> pd.Series:
    """Each cell's scenario ``human_gate`` (the three-rater majority), aligned with ``cells``."""
    human = scenarios.set_index(scenarios["scenario_id"].astype(str))["human_gate"].astype(object)
    return pd.Series(
        as_text(cells["scenario_id"]).map(human).to_numpy(), index=cells.index, dtype=object
    )


def relabelled_cells(cells: pd.DataFrame, scenarios: pd.DataFrame) -> pd.DataFrame:
    """``cells`` re-scored against the human majority: ``modal_correct`` is true when the
    modal decision equals the scenario's ``human_gate`` (no modal decision = incorrect), so
    any cell table (e.g. :func:`analysis.scoring.breakdowns.mirror_gap`) can be read under it."""
    modal = cells["modal_decision"].astype(object).to_numpy()
    gates = human_gates(cells, scenarios).to_numpy()
    return cells.assign(modal_correct=pd.notna(modal) & (modal == gates))


def relabelled_by_humans(cells: pd.DataFrame, scenarios: pd.DataFrame) -> HumanRelabelCheck:
    """Directional rates when each cell's required gate is replaced by the scenario's
    ``human_gate``: over = modal ``blocked`` on a human-``allowed`` scenario, under = modal
    ``allowed`` on a human-``blocked`` one (directionally scored cells); plus modal accuracy
    against the human gate over modal-scored cells (no modal decision = incorrect)."""
    modal_scored = cells["modal_scored"].to_numpy(dtype=bool)
    correct = modal_scored & relabelled_cells(cells, scenarios)["modal_correct"].to_numpy()
    changed = scenarios["human_gate"].astype(object) != scenarios["required_gate"].astype(object)
    return HumanRelabelCheck(
        n_relabelled_scenarios=int(changed.sum()),
        baseline=directional(cells),
        relabelled=directional(cells, human_gates(cells, scenarios)),
        accuracy=Ratio(int(correct.sum()), int(modal_scored.sum())),
    )


@dataclass(frozen=True)
class ExclusionCheck:
    """Check 3: the headline without named scenarios."""

    excluded: tuple[str, ...]
    baseline: Directional
    without: Directional


def _text(value: object) -> str:
    if isinstance(value, (list, tuple, set)):
        return " ".join(str(v) for v in value)
    return "" if pd.isna(value) else str(value)


def credit_hiring_mirrors(scenarios: pd.DataFrame) -> tuple[str, ...]:
    """Proceed-labelled mirrors (``is_mirror`` and required gate ``allowed``) whose domain,
    tags, title or incident mention credit or hiring (``CREDIT_HIRING``)."""
    fields = [f for f in MIRROR_TEXT_FIELDS if f in scenarios.columns]
    text = scenarios[fields].apply(lambda row: " ".join(_text(v) for v in row), axis=1)
    mask = (
        scenarios["is_mirror"].astype(bool)
        & (scenarios["required_gate"].astype(object) == ALLOWED)
        & text.str.contains(CREDIT_HIRING)
    )
    return _ids(scenarios, mask)


def without_credit_hiring_mirrors(cells: pd.DataFrame, scenarios: pd.DataFrame) -> ExclusionCheck:
    """Pooled modal over/under-refusal with and without the credit and hiring mirrors
    (``credit_hiring_mirrors``)."""
    excluded = credit_hiring_mirrors(scenarios)
    return ExclusionCheck(
        excluded=excluded,
        baseline=directional(cells),
        without=directional(_excluding(cells, excluded)),
    )


def sensitivity_table(cells: pd.DataFrame, scenarios: pd.DataFrame) -> pd.DataFrame:
    """The headline's two rates under three checks, as one long table per pool.

    The checks: without the derived-flag rows, with the human majority labels in place of
    the required gates (only where the scenarios carry human gates), and without the
    credit and hiring mirrors; each beside the ``baseline``.

    Parameters
    ----------
    cells : DataFrame
        Scored cells (:func:`load_checked_cells`); each source's conditions form pools as
        :func:`~analysis.scoring.breakdowns.pool_cells` forms them (in ``source``).
    scenarios : DataFrame
        The scenario table (:func:`load_scenarios`): ``derived_flag``, ``human_gate``,
        ``mirror_incident`` and the required gates.

    Returns
    -------
    DataFrame
        One row per (source, check): ``check`` (``baseline`` or the check),
        ``n_over_refusals`` / ``n_proceed_opportunities``, ``n_under_refusals`` /
        ``n_hold_opportunities``, and the two rates ``over_refusal`` and ``under_refusal``.

    See Also
    --------
    direction_asymmetry : The headline rates these checks vary.

    Examples
    --------
    On the imported release, the surface-flag reference policy's pool:

    >>> from analysis import load_checked_cells, load_scenarios
    >>> scenarios = load_scenarios()
    >>> _, cells = load_checked_cells(scenarios)
    >>> table = sensitivity_table(cells, scenarios)
    >>> surface = table[table["source"].str.contains("surface-flag")]
    >>> columns = ["check", "n_over_refusals", "n_proceed_opportunities"]
    >>> print(surface[columns].to_string(index=False))
                            check  n_over_refusals  n_proceed_opportunities
                         baseline               19                       56
        without derived-flag rows               12                       49
            human majority labels               32                       69
    without credit/hiring mirrors               17                       54
    """
    rows = []
    cells = pool_cells(cells)
    for source, part in cells.groupby(as_text(cells["source"]), sort=True):
        derived = without_derived_flags(part, scenarios)
        credit = without_credit_hiring_mirrors(part, scenarios)
        checks = [("baseline", derived.baseline), ("without derived-flag rows", derived.without)]
        if has_human_labels(scenarios):
            checks.append(
                ("human majority labels", relabelled_by_humans(part, scenarios).relabelled)
            )
        checks.append(("without credit/hiring mirrors", credit.without))
        for check, counts in checks:
            rows.append(
                {
                    "source": source,
                    "check": check,
                    "n_over_refusals": counts.over.k,
                    "n_proceed_opportunities": counts.over.n,
                    "n_under_refusals": counts.under.k,
                    "n_hold_opportunities": counts.under.n,
                }
            )
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    table["over_refusal"] = table["n_over_refusals"] / table["n_proceed_opportunities"].where(
        table["n_proceed_opportunities"] > 0
    )
    table["under_refusal"] = table["n_under_refusals"] / table["n_hold_opportunities"].where(
        table["n_hold_opportunities"] > 0
    )
    return table
