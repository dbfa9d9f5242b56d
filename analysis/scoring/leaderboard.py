"""The published conditions table: ``leaderboard.json`` parsed into counts and checked.

Each published string (``"57.5% (61/106)"``, ``"58.5%"``, ``"[54.2%, 62.6%]"``) becomes
integer counts and denominators, printed back by the release's own rules
(:mod:`analysis.corpus.formatting`). Where the release prints only a percentage the numerator is the
one integer whose string, and Wilson interval, over the known denominator print as published.

Denominators follow the release's scoring, not one release's numbers: a cell the provider
filtered on every trial leaves every denominator (modal accuracy and pass5 count the other
cells, mean trial accuracy their trials), and a cell with no modal decision leaves the
directional denominators. Weighted miss is a count: the tier weights of the modal misses over
the tier weights of the cells with a modal decision, rounded to 4 decimals as a rate before
it is printed. The release prints no weight denominator, so it is found among the totals the
directional counts allow (every weight, less the weights of as many hold and proceed cells as
left the directional denominators): ``weighted_miss_fits`` holds every (missed, decided
weight) that prints as published, ``weighted_miss_counts`` lists them, and ``weight_missed`` /
``weight_scored`` hold each count when all fits agree on it (else NA: the leaderboard does not
say which cell left). ``weighted_miss_from`` says where the count comes from:
:data:`FROM_LEADERBOARD`, or :data:`UNDETERMINED` until the release's per-trial verdicts
settle it (:func:`analysis.scoring.crosscheck.settle_weighted_miss`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from analysis import paths
from analysis.corpus.formatting import (
    count_text,
    interval_bound_text,
    percent_text,
    unsigned_zero,
    weighted_miss_text,
)
from analysis.corpus.vocabulary import ALLOWED, BLOCKED, verdict_file_label
from analysis.files.schemas import LEADERBOARD, SCORING_MANIFEST
from analysis.files.typed import read_typed, shown
from analysis.scoring.intervals import wilson_interval
from analysis.scoring.rules import label_counts

#: Reasoning settings that are a model's floor; every other setting is its "high" row.
FLOOR_SETTINGS = ("off", "minimal", "low", "none")

LEADERBOARD_FILENAME = "leaderboard.json"

#: Where a condition's weighted-miss count comes from (``weighted_miss_from``): one count
#: fits the leaderboard's string, the per-trial verdicts say which of several it is, or
#: several fit and nothing says which.
FROM_LEADERBOARD = "leaderboard"
FROM_VERDICTS = "per-trial verdicts"
UNDETERMINED = "undetermined: no per-trial verdicts"


class CrossCheckError(ValueError):
    """Published numbers disagree with what their counts give; ``mismatches`` lists each."""

    def __init__(self, source: str, mismatches: list[str]):
        self.mismatches = mismatches
        listing = "\n".join(f"  - {line}" for line in mismatches)
        super().__init__(f"{source}: {len(mismatches)} published value(s) do not match:\n{listing}")


@cache
def interval_text(k: int, n: int) -> str:
    """The release's printed Wilson 95% interval, ``"[54.2%, 62.6%]"``."""
    low, high = wilson_interval(k, n)
    return f"[{interval_bound_text(low)}, {interval_bound_text(high)}]"


def reasoning_level(reasoning: str) -> str:
    """``floor`` for a model's lowest reasoning setting, ``high`` for high or "on"."""
    return "floor" if reasoning in FLOOR_SETTINGS else "high"


def floor_and_high(levels: Iterable[str]) -> bool:
    """Whether a model's conditions, by :func:`reasoning_level`, are one floor and one high:
    the pair the floor-vs-high contrasts compare (a model with two settings above its floor,
    say medium and high, has no one pair)."""
    return sorted(map(str, levels)) == ["floor", "high"]


def read_leaderboard(path: Path) -> list[dict]:
    """The published rows of ``leaderboard.json`` (:data:`analysis.files.schemas.LEADERBOARD`:
    a condition listed twice is refused, naming both rows)."""
    return read_typed(path, LEADERBOARD)["rows"]


def _field(row: dict, label: str, field: str) -> str:
    value = row.get(field)
    if not isinstance(value, str):
        raise CrossCheckError(LEADERBOARD_FILENAME, [f"{label}: {field}: missing or not a string"])
    return value


def _counted(row: dict, label: str, field: str, whole_bare: bool) -> tuple[int, int]:
    """``"57.5% (61/106)"`` -> (61, 106), refused unless it prints back exactly."""
    text = _field(row, label, field)
    head, _, tail = text.rpartition(" (")
    try:
        k_text, n_text = tail.removesuffix(")").split("/")
        k, n = int(k_text), int(n_text)
    except ValueError:
        raise CrossCheckError(
            LEADERBOARD_FILENAME, [f"{label}: {field}: cannot read {shown(text)}"]
        ) from None
    if not head or not tail.endswith(")") or not 0 <= k <= n or n == 0:
        raise CrossCheckError(
            LEADERBOARD_FILENAME, [f"{label}: {field}: cannot read {shown(text)}"]
        )
    return k, n


def _near(text: str, n: int) -> range:
    """The counts out of ``n`` within a percentage point of the printed percentage ``text``
    (every count, when ``text`` is not a number): those that can print as ``text``."""
    try:
        value = float(text.removesuffix("%"))
    except ValueError:
        return range(n + 1)
    low, high = math.floor((value - 1) * n / 100), math.ceil((value + 1) * n / 100)
    return range(max(0, low), min(n, high) + 1)


def numerator_for(row: dict, label: str, field: str, n: int, of: str = "") -> int:
    """The integer k whose accuracy ``percent_text(k, n)`` prints as ``row[field]`` and, when the
    row has ``<field>_ci95``, whose Wilson interval prints as that; it must be unique. ``of``
    says where ``n`` comes from, for the error."""
    text = _field(row, label, field)
    interval = row.get(f"{field}_ci95")
    if n <= 0:
        raise CrossCheckError(LEADERBOARD_FILENAME, [f"{label}: {field}: no denominator ({n})"])
    candidates = [k for k in _near(text, n) if percent_text(k, n) == text]
    if len(candidates) > 1 and isinstance(interval, str):
        candidates = [k for k in candidates if interval_text(k, n) == unsigned_zero(interval)]
    if len(candidates) != 1:
        raise CrossCheckError(
            LEADERBOARD_FILENAME,
            [
                f"{label}: {field}: {shown(text)} fits {len(candidates)} counts out of {n}"
                f"{f' ({of})' if of else ''}, not one"
            ],
        )
    return candidates[0]


@cache
def _removable_weights(weights: tuple[int, ...], removed: int) -> frozenset[int]:
    """Every total weight of ``removed`` cells drawn from ``weights`` (a multiset)."""
    sums = {(0, 0)}  # (cells taken, weight taken)
    for weight, count in Counter(weights).items():
        sums = {(c + j, w + j * weight) for c, w in sums for j in range(count + 1)}
        sums = {(c, w) for c, w in sums if c <= removed}
    return frozenset(w for c, w in sums if c == removed)


def _gate_weights(scenarios: pd.DataFrame) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The tier weights of the hold scenarios and of the proceed scenarios, sorted."""
    gate = scenarios["required_gate"].astype(str)
    weight = scenarios["tier_weight"].astype("int64")
    holds = tuple(sorted(int(w) for w in weight[gate == BLOCKED]))
    return holds, tuple(sorted(int(w) for w in weight[gate == ALLOWED]))


@cache
def weight_denominators(
    weights: tuple[tuple[int, ...], tuple[int, ...]],
    hold_opportunities: int,
    proceed_opportunities: int,
) -> tuple[int, ...]:
    """The weight totals a condition's decided cells can have, given the hold and proceed
    scenarios' tier ``weights`` (:func:`_gate_weights`) and how many hold and proceed cells
    are left in the directional denominators (the others were filtered or had no modal
    decision); largest first."""
    holds, proceeds = weights
    full = sum(holds) + sum(proceeds)
    hold_out = _removable_weights(holds, len(holds) - hold_opportunities)
    proceed_out = _removable_weights(proceeds, len(proceeds) - proceed_opportunities)
    return tuple(sorted({full - a - b for a in hold_out for b in proceed_out}, reverse=True))


def weighted_miss_counts(
    text: str, denominators: Sequence[int], misses: int
) -> list[tuple[int, int]]:
    """Every (missed weight, decided weight) that prints as ``text`` with ``misses`` modal
    misses among the decided cells (each weighs 1 to 4: at least ``misses``, at most
    ``4 * misses``)."""
    fits = []
    for total in denominators:
        for missed in range(misses, min(4 * misses, total) + 1):
            if weighted_miss_text(missed, total) == text:
                fits.append((missed, total))
    return fits


def weighted_miss_listing(fits: Sequence[tuple[int, int]]) -> str:
    """Weighted-miss counts as Table 2 lists them: ``"34/271"``, ``"34/271 or 35/279"``."""
    return " or ".join(f"{m}/{t}" for m, t in fits)


def parse_rows(rows: list[dict], trials_per_cell: int, scenarios: pd.DataFrame) -> pd.DataFrame:
    """Published rows as counts: one row per model condition.

    Raises :class:`CrossCheckError` for a string that cannot be read or a percentage that
    fits no count (or several).
    """
    parsed = []
    weights = _gate_weights(scenarios)
    for row in rows:
        label = f"{row.get('model')} ({row.get('reasoning')})"
        modal_k, cells = _counted(row, label, "modal_accuracy", whole_bare=False)
        under_k, under_n = _counted(row, label, "under_refusal", whole_bare=True)
        over_k, over_n = _counted(row, label, "over_refusal", whole_bare=True)
        n_trials = trials_per_cell * cells
        record = {
            "label": label,
            "condition": label,
            "verdict_label": verdict_file_label(str(row["model"]), str(row["reasoning"])),
            "model": row["model"],
            "reasoning": row["reasoning"],
            "reasoning_level": reasoning_level(str(row["reasoning"])),
            "source": "published",
            "n_trials": n_trials,
            "n_trials_correct": numerator_for(
                row,
                label,
                "mean_trial_accuracy",
                n_trials,
                f"{cells} cells x {trials_per_cell} trials, as {paths.RELEASE_MANIFEST} pins",
            ),
            "n_cells": cells,
            "n_modal_correct": modal_k,
            "n_pass5": numerator_for(row, label, "pass5", cells),
            "n_hold_opportunities": under_n,
            "n_under_refusals": under_k,
            "n_proceed_opportunities": over_n,
            "n_over_refusals": over_k,
            "n_no_decision": cells - under_n - over_n,
            "n_left_out": len(scenarios) - cells,
            "archived": bool(row.get("archived", False)),
            "note": row.get("note", ""),
        }
        denominators = weight_denominators(weights, under_n, over_n)
        fits = weighted_miss_counts(
            _field(row, label, "weighted_miss"), denominators, under_k + over_k
        )
        if not fits:
            raise CrossCheckError(
                LEADERBOARD_FILENAME,
                [
                    f"{label}: weighted_miss: {shown(row['weighted_miss'])} is no count over the "
                    f"weights of the decided cells (possible totals: "
                    f"{', '.join(map(str, denominators))})"
                ],
            )
        missed = {m for m, _ in fits}
        totals = {t for _, t in fits}
        record["weight_missed"] = missed.pop() if len(missed) == 1 else pd.NA
        record["weight_scored"] = totals.pop() if len(totals) == 1 else pd.NA
        record["weighted_miss_counts"] = weighted_miss_listing(fits)
        record["weighted_miss_fit"] = fits[0]
        record["weighted_miss_fits"] = tuple(fits)
        record["weighted_miss_from"] = FROM_LEADERBOARD if len(fits) == 1 else UNDETERMINED
        parsed.append(record)
    table = pd.DataFrame(parsed)
    return table.astype({"weight_missed": "Int64", "weight_scored": "Int64"})


def expected_strings(parsed: Mapping[str, Any]) -> dict[str, str]:
    """Every leaderboard string of one parsed row (a row of :func:`load_conditions`, by
    column), printed back from its counts."""
    return {
        "modal_accuracy": count_text(parsed["n_modal_correct"], parsed["n_cells"]),
        "modal_accuracy_ci95": interval_text(parsed["n_modal_correct"], parsed["n_cells"]),
        "mean_trial_accuracy": percent_text(parsed["n_trials_correct"], parsed["n_trials"]),
        "mean_trial_accuracy_ci95": interval_text(parsed["n_trials_correct"], parsed["n_trials"]),
        "pass5": percent_text(parsed["n_pass5"], parsed["n_cells"]),
        "pass5_ci95": interval_text(parsed["n_pass5"], parsed["n_cells"]),
        "under_refusal": count_text(
            parsed["n_under_refusals"], parsed["n_hold_opportunities"], whole_bare=True
        ),
        "over_refusal": count_text(
            parsed["n_over_refusals"], parsed["n_proceed_opportunities"], whole_bare=True
        ),
        "weighted_miss": weighted_miss_text(*parsed["weighted_miss_fit"]),
    }


def check_leaderboard(
    rows: list[dict], conditions: pd.DataFrame, scenarios: pd.DataFrame, trials_per_cell: int
) -> list[str]:
    """Every published string re-derived from the parsed counts; returns the mismatches.

    Checks each string and Wilson interval against its counts, and that the parts add up:
    the scored cells are at most the corpus; hold and proceed opportunities at most the
    scenarios of that label; the cells with no modal decision not negative; every modal miss
    an under-refusal, an over-refusal or a cell with no decision; and no cell passes every
    trial without being modal-correct.
    """
    labels = label_counts(scenarios)
    holds, proceeds = labels[BLOCKED], labels[ALLOWED]
    problems = []
    for row, parsed in zip(rows, conditions.itertuples(index=False), strict=True):
        for field, recomputed in expected_strings(parsed._asdict()).items():
            published = row.get(field)
            if isinstance(published, str):
                published = unsigned_zero(published)
            if field in row and published != recomputed:
                problems.append(
                    f"{parsed.label}: {field}: published {shown(row[field])}, "
                    f"recomputed from counts {shown(recomputed)}"
                )
        bounds = [
            ("modal_accuracy", "scored cells", parsed.n_cells, len(scenarios), "scenarios"),
            (
                "under_refusal",
                "hold opportunities",
                parsed.n_hold_opportunities,
                holds,
                "hold-labelled scenarios",
            ),
            (
                "over_refusal",
                "proceed opportunities",
                parsed.n_proceed_opportunities,
                proceeds,
                "proceed-labelled scenarios",
            ),
        ]
        for field, name, count, limit, what in bounds:
            if count > limit:
                problems.append(
                    f"{parsed.label}: {field}: {name} {count}, but the corpus has {limit} {what}"
                )
        if parsed.n_no_decision < 0:
            problems.append(
                f"{parsed.label}: modal_accuracy: {parsed.n_cells} scored cells, fewer than "
                f"{parsed.n_hold_opportunities} hold + {parsed.n_proceed_opportunities} proceed "
                "opportunities"
            )
        misses = parsed.n_under_refusals + parsed.n_over_refusals + parsed.n_no_decision
        if parsed.n_modal_correct + misses != parsed.n_cells:
            problems.append(
                f"{parsed.label}: modal_accuracy: {parsed.n_modal_correct} correct + "
                f"{parsed.n_under_refusals} under + {parsed.n_over_refusals} over + "
                f"{parsed.n_no_decision} with no decision != {parsed.n_cells} cells"
            )
        if parsed.n_pass5 > parsed.n_modal_correct:
            problems.append(
                f"{parsed.label}: pass5: {parsed.n_pass5} cells pass every trial, more than "
                f"the {parsed.n_modal_correct} modal-correct cells"
            )
        if parsed.n_trials_correct < trials_per_cell * parsed.n_pass5:
            problems.append(
                f"{parsed.label}: mean_trial_accuracy: {parsed.n_trials_correct} correct "
                f"trials, fewer than the {trials_per_cell * parsed.n_pass5} of the pass5 cells"
            )
    return problems


def load_conditions(scenarios: pd.DataFrame, results_dir: Path | None = None) -> pd.DataFrame:
    """The published model conditions as counts, after the cross-check.

    Each published string of the leaderboard (a rate, its counts) is parsed to integer
    counts, and every field is checked against what its counts give.

    Parameters
    ----------
    scenarios : DataFrame
        The scenario table (:func:`load_scenarios`), for the opportunities and tier weights
        the counts are checked against.
    results_dir : Path, optional
        The release's results folder holding ``leaderboard.json``. None:
        ``paths.results_dir()``, read at the call.

    Returns
    -------
    DataFrame
        One row per published condition (``source`` ``published``): its ``label``,
        ``condition``, ``model``, ``reasoning`` and ``reasoning_level``, the integer counts
        ``condition_scores`` gives for scored cells (``n_trials``, ``n_trials_correct``,
        ``n_cells``, ``n_modal_correct``, ``n_pass5``, the hold and proceed opportunities
        and their misses, ``n_no_decision``, ``weight_scored``, ``weight_missed``), and the
        release's ``note`` on the condition.

    Raises
    ------
    CrossCheckError
        Listing every field whose published string is not what its counts give.

    See Also
    --------
    rank_conditions : These conditions in Table 2's order.
    condition_scores : The same counts from per-trial verdicts.
    load_checked_cells : Per-trial verdicts checked against these counts.

    Examples
    --------
    On the imported release:

    >>> from analysis import load_scenarios
    >>> conditions = load_conditions(load_scenarios())
    >>> len(conditions)
    30
    >>> conditions[["condition", "n_trials", "n_trials_correct", "n_over_refusals"]].head(3)
                 condition  n_trials  n_trials_correct  n_over_refusals
    0   gpt-5.4-nano (off)       530               310               45
    1  gpt-5.4-nano (high)       530               405               25
    2   gpt-5.4-mini (off)       530               487                7
    """
    results_dir = Path(results_dir or paths.results_dir())
    manifest_path = results_dir / paths.RELEASE_MANIFEST
    manifest = read_typed(manifest_path, SCORING_MANIFEST)
    trials_per_cell = manifest["n_trials_per_cell"]
    path = results_dir / LEADERBOARD_FILENAME
    rows = read_leaderboard(path)
    try:
        conditions = parse_rows(rows, trials_per_cell, scenarios)
    except CrossCheckError as error:
        raise CrossCheckError(str(path), error.mismatches) from None
    problems = check_leaderboard(rows, conditions, scenarios, trials_per_cell)
    published = list(manifest.get("published_rows", []))
    if published and sorted(published) != sorted(conditions["label"]):
        problems.append(
            f"row labels differ from release-manifest.json published_rows: "
            f"{sorted(set(published) ^ set(conditions['label']))}"
        )
    if problems:
        raise CrossCheckError(str(path), problems)
    return conditions.astype(
        {
            "model": "category",
            "reasoning": "category",
            "reasoning_level": pd.CategoricalDtype(["floor", "high"]),
            "source": "category",
        }
    )
