"""Layout 2: a raw run root ``<root>/<variant>/<scenario_id>/trial-N.json``.

A run root holds ``RUN_PLAN.json`` (the run's id, variants and trials per cell) and
``VARIANT_CONFIGS.json`` (each variant's model and reasoning); several shard roots of one
run merge into one table.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.files.schemas import CELL, RUN_PLAN, TRIAL, VARIANT_CONFIGS
from analysis.files.typed import inside, read_typed, shown
from analysis.trials.schema import VerdictError, normalize_trials

RUN_PLAN_FILENAME = "RUN_PLAN.json"
VARIANT_CONFIGS_FILENAME = "VARIANT_CONFIGS.json"


def run_condition(
    config: dict[str, Any], variant: str, cell: dict[str, Any] | None = None
) -> tuple[str, str]:
    """How a run's variant is named, by the loader and by ``steerbench-run export-tidy``
    alike: model = the variant's ``label`` (``--label``), else its ``model``, else the
    cell's ``model``, else the variant key; reasoning = ``reasoning_label``, else
    ``reasoning_effort``, else the cell's ``reasoning_label``, else ``off``."""
    cell = cell or {}
    model = config.get("label") or config.get("model") or cell.get("model") or variant
    reasoning = (
        config.get("reasoning_label")
        or config.get("reasoning_effort")
        or cell.get("reasoning_label")
        or "off"
    )
    return str(model), str(reasoning)


def _trial_number(path: Path) -> int | None:
    stem = path.stem.removeprefix("trial-")
    return int(stem) if stem.isdigit() else None


def _cell_trials(scenario_dir: Path, cell: dict[str, Any]) -> list[tuple[Any, Any, Any]]:
    """(trial, commit_permission, status) of one cell folder: its ``trial-N.json`` files,
    else the ``trial_permissions`` its ``cell.json`` lists (status unknown)."""
    trial_files = sorted(scenario_dir.glob("trial-*.json"))
    if not trial_files:
        permissions = cell.get("trial_permissions") or []
        return [(i, permission, None) for i, permission in enumerate(permissions, 1)]
    records = [(f, read_typed(f, TRIAL, error=VerdictError)) for f in trial_files]
    return [
        (r.get("trial", _trial_number(f)), r.get("commit_permission"), r.get("status"))
        for f, r in records
    ]


def _cell_folders(root: Path, variant: str) -> list[Path]:
    """The scenario folders of ``variant`` in ``root`` that hold trials or a ``cell.json``;
    a variant that is not a plain name inside ``root`` is refused."""
    plan = root / RUN_PLAN_FILENAME
    variant_dir = inside(root, variant, plan, "variant", error=VerdictError)
    if not variant_dir.is_dir():
        return []
    return [
        p
        for p in sorted(variant_dir.iterdir())
        if p.is_dir() and (any(p.glob("trial-*.json")) or (p / "cell.json").exists())
    ]


def load_run_root(
    root: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    source: str = "run",
    scenarios: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The trials of a raw run root ``<root>/<variant>/<scenario_id>/trial-N.json``.

    Model and reasoning come from ``VARIANT_CONFIGS.json`` (``model``; ``reasoning_label``,
    else ``reasoning_effort``, else ``off``). Several shard roots of one run (same ``run_id``,
    disjoint scenarios) merge into one table.
    """
    roots = [Path(root)] if isinstance(root, (str, os.PathLike)) else [Path(r) for r in root]
    if not roots:
        raise VerdictError("load_run_root: no run root given")
    origin = ", ".join(str(r) for r in roots)
    run_ids: dict[str, Path] = {}
    n_per_cell: set[int] = set()
    owner: dict[tuple[str, str], Path] = {}
    rows: list[tuple[Any, ...]] = []
    for r in roots:
        plan = read_typed(r / RUN_PLAN_FILENAME, RUN_PLAN, error=VerdictError)
        run_ids.setdefault(str(plan.get("run_id")), r)
        if plan.get("n_trials_per_cell") is not None:
            n_per_cell.add(plan["n_trials_per_cell"])
        config_path = r / VARIANT_CONFIGS_FILENAME
        configs = (
            read_typed(config_path, VARIANT_CONFIGS, error=VerdictError).get("variants", {})
            if config_path.exists()
            else {}
        )
        for variant in plan.get("planned_variants") or list(configs):
            for scenario_dir in _cell_folders(r, variant):
                key = (variant, scenario_dir.name)
                if key in owner:
                    raise VerdictError(
                        f"{origin}: scenario {shown(scenario_dir.name)} of variant "
                        f"{shown(variant)} is in two shards: {owner[key]} and {r}"
                    )
                owner[key] = r
                cell_path = scenario_dir / "cell.json"
                cell = read_typed(cell_path, CELL, error=VerdictError) if cell_path.exists() else {}
                model, reasoning = run_condition(configs.get(variant, {}), variant, cell)
                rows += [
                    (scenario_dir.name, model, reasoning, *trial)
                    for trial in _cell_trials(scenario_dir, cell)
                ]
    if len(run_ids) > 1:
        raise VerdictError(f"{origin}: shards of different runs: {sorted(run_ids)}")
    if len(n_per_cell) > 1:
        raise VerdictError(f"{origin}: shards disagree on trials per cell: {sorted(n_per_cell)}")
    columns = ["scenario_id", "model", "reasoning", "trial", "commit_permission", "status"]
    return normalize_trials(
        pd.DataFrame.from_records(rows, columns=columns).astype(object),
        origin=origin,
        source=source,
        n_trials=next(iter(n_per_cell), None),
        scenarios=scenarios,
    )
