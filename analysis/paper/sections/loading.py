"""Loading and cross-checking what the notebook sections read (:data:`READS`), and the
build's checked inputs: every input loaded and checked once, stored for the notebooks
(:func:`write_checked_inputs`).

The build runs the check on a kernel of its own before the notebooks that read it start,
so this module imports only what the loaders need (no plotting, no report): at 1,000
conditions the check is the longest step before those notebooks can start.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis import paths
from analysis.corpus.scenarios import load_scenarios
from analysis.files.parts import PER_TRIAL_FILE
from analysis.paper.provenance import require_distinct_slugs
from analysis.paper.sections.reads import Locations, Reads

#: How a refusal of reference policies made for another corpus ends.
REMAKE_REFERENCE = "; remake the reference policies for it with `make reference-runs`"

#: What :func:`write_checked_inputs` stores: everything any section reads from the data
#: folder, loaded and cross-checked once.
ALL_READS = Reads(conditions=True, verdicts=True)


@dataclass(frozen=True)
class Loaded:
    """A section's loaded and checked frames (None where it does not read them)."""

    scenarios: pd.DataFrame
    conditions: pd.DataFrame | None = None
    trials: pd.DataFrame | None = None
    cells: pd.DataFrame | None = None


def load_inputs(what: Reads, where: Locations, verdict_paths: list[str] | None) -> Loaded:
    """Load and cross-check what ``what`` reads from ``where``."""
    scenarios = load_scenarios(where.scenarios, where.results)
    conditions = trials = cells = None
    if what.conditions:
        from analysis.scoring.leaderboard import load_conditions

        conditions = load_conditions(scenarios, where.results)
        board = where.results / "leaderboard.json"
        require_distinct_slugs(conditions["label"], "conditions", str(board))
        require_distinct_slugs(conditions["model"], "models", str(board))
    if what.verdicts:
        from analysis.scoring.breakdowns import POOL_OF
        from analysis.scoring.crosscheck import load_checked_cells, settle_weighted_miss
        from analysis.trials.schema import UnknownScenarioError

        try:
            trials, cells = load_checked_cells(
                scenarios, verdict_paths, where.results, runs_dir=where.runs, conditions=conditions
            )
        except UnknownScenarioError as error:
            reference = where.runs / paths.REFERENCE_RUNS_NAME
            if Path(error.origin).parent != reference:
                raise
            raise ValueError(
                f"{reference}: the reference policies hold {len(error.unknown)} scenario(s) this "
                f"release does not ({', '.join(error.unknown[:3])}"
                f"{'...' if len(error.unknown) > 3 else ''}){REMAKE_REFERENCE}"
            ) from None
        if cells.empty and verdict_paths is None:
            raise ValueError(
                f"{where.runs}: no per-trial verdicts (this release has no "
                f"{PER_TRIAL_FILE} and no sample run, and there are no reference policies "
                "or runs of your own); make the reference policies for it with "
                "`make reference-runs`"
            )
        if conditions is not None:
            conditions = settle_weighted_miss(conditions, cells)
        by_origin = dict(tuple(cells.groupby(cells[POOL_OF].astype(str))))
        for source, part in by_origin.items():
            origin = f"{where.runs} ({source} verdicts)"
            require_distinct_slugs(part["condition"], "conditions", origin)
            require_distinct_slugs(part["model"], "models", origin)
        if "reference-policy" in by_origin:
            _require_reference_policies_cover(by_origin["reference-policy"], scenarios, where)
    return Loaded(scenarios, conditions, trials, cells)


def _require_reference_policies_cover(
    reference: pd.DataFrame, scenarios: pd.DataFrame, where: Locations
) -> None:
    """The reference policies' cells stand beside the published conditions on every
    scenario: a set made for another corpus is refused, saying how to remake it (``make
    reference-runs``)."""
    ids = set(scenarios["scenario_id"].astype(str))
    for condition, part in reference.groupby("condition", observed=True):
        have = set(part["scenario_id"].astype(str))
        if have != ids:
            missing, extra = sorted(ids - have), sorted(have - ids)
            raise ValueError(
                f"{where.runs / paths.REFERENCE_RUNS_NAME}: {condition} covers "
                f"{len(have & ids)} of the {len(ids)} scenarios of this release"
                + (
                    f" (none of {', '.join(missing[:3])}{'...' if len(missing) > 3 else ''})"
                    if missing
                    else ""
                )
                + (f" and {len(extra)} it does not hold" if extra else "")
                + REMAKE_REFERENCE
            )


def write_checked_inputs(
    path: str | os.PathLike[str],
    data_dir: str | os.PathLike[str] | None = None,
    reuse: bool = False,
    key: str | None = None,
) -> Path:
    """Load and cross-check every input under ``data_dir`` once (:data:`ALL_READS`, every
    verdict found) and store the frames at ``path`` (a pickle), for :func:`open_section`'s
    ``checked_inputs``: the build does this before its notebooks start, so that each one
    does not load and check the same files again; the release's agreement reports are read
    and checked too (:func:`analysis.paper.sections.labels.reported_agreement`). Bad input raises
    here. With ``reuse`` (the build's choice), the inputs an earlier build checked are
    taken when neither the data nor the code that checked them changed, and a new check
    is kept for the next build (:mod:`analysis.paper.input_cache`); ``key``: the data's
    :func:`~analysis.paper.input_cache.data_key`, when the caller has it (the build
    digests its inputs before its kernels start)."""
    from analysis.paper import input_cache

    where = Locations.of(data_dir)
    data = paths.data_dir(data_dir)
    if reuse and key is None:
        key = input_cache.data_key(data)
    if reuse and input_cache.reuse(data, key, Path(path)):
        return Path(path)
    loaded = load_inputs(ALL_READS, where, None)
    from analysis.paper.sections.labels import reported_agreement

    reported_agreement(where.results, loaded.scenarios)  # the agreement reports read, too
    pd.to_pickle({"locations": where, "loaded": loaded}, path)
    if reuse:
        input_cache.keep(data, key, Path(path))
    return Path(path)


def read_checked_inputs(path: str | os.PathLike[str], where: Locations, what: Reads) -> Loaded:
    """The frames :func:`write_checked_inputs` stored at ``path`` for ``where``, those
    ``what`` reads (the others None)."""
    stored = pd.read_pickle(path)
    if stored["locations"] != where:
        raise ValueError(
            f"{path}: checked inputs of {stored['locations'].runs.parent}, not of "
            f"{where.runs.parent}"
        )
    loaded = stored["loaded"]
    return Loaded(
        loaded.scenarios,
        loaded.conditions if what.conditions else None,
        loaded.trials if what.verdicts else None,
        loaded.cells if what.verdicts else None,
    )
