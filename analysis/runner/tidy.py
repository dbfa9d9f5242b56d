"""The compact export: one CSV row per trial of one or more run roots (e.g. shards).

Roots holding the same condition (model label and reasoning) must be the same run: equal
variant config hash, prompt hash and trials per cell, else the export is refused. A trial
present in two roots is kept once when both copies agree, and refused when they differ.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from analysis.files.atomic_write import atomic_write_text
from analysis.files.reading import read_json
from analysis.runner.gates import REFERENCE_KIND
from analysis.trials import TRIAL_COLUMNS, run_condition

#: The trials table's columns less ``condition``, which the loader derives.
TIDY_COLUMNS = tuple(column for column in TRIAL_COLUMNS if column != "condition")
#: Trial fields two copies of one trial must agree on.
AGREEING_FIELDS = (
    "commit_permission",
    "status",
    "scenario_sha256",
    "prompt_sha256",
    "variant_config_hash",
    "expected_action",
)


class TidyExportError(ValueError):
    """A run root cannot be exported; the message names the file."""


def _read_object(path: Path) -> dict[str, Any]:
    if not path.exists():
        raise TidyExportError(f"{path}: not found; is this a run root?")
    value = read_json(path, error=TidyExportError)
    if not isinstance(value, dict):
        raise TidyExportError(f"{path}: not a JSON object")
    return value


def _trial_rows(root: Path) -> Iterator[tuple[dict[str, Any], dict[str, Any], Path]]:
    """(tidy row, run identity, trial file) for every trial of ``root``."""
    plan = _read_object(root / "RUN_PLAN.json")
    configs_path = root / "VARIANT_CONFIGS.json"
    configs = _read_object(configs_path).get("variants")
    if not isinstance(configs, dict):
        raise TidyExportError(f"{configs_path}: no 'variants' object")
    for variant_key, config in configs.items():
        reference = config.get("kind") == REFERENCE_KIND
        model, reasoning = run_condition(config, variant_key)
        identity = {
            "variant_config_hash": config.get("config_hash"),
            "prompt_sha256": plan.get("prompt_sha256"),
            "n_trials_per_cell": plan.get("n_trials_per_cell"),
        }
        for path in sorted((root / variant_key).glob("*/trial-*.json")):
            trial = _read_object(path)
            try:
                row = {
                    "scenario_id": trial["scenario_id"],
                    "model": model,
                    "reasoning": reasoning,
                    "trial": int(trial["trial"]),
                    "commit_permission": trial["commit_permission"] or "",
                    "status": trial["status"],
                    "source": "reference-policy" if reference else "run",
                }
            except (KeyError, TypeError, ValueError) as exc:
                raise TidyExportError(f"{path}: missing or invalid field {exc}") from None
            yield row, {**identity, **{k: trial.get(k) for k in AGREEING_FIELDS}}, path


def tidy_rows(roots: Iterable[Path]) -> list[dict[str, Any]]:
    """Every trial of the roots, one row each; a (model, reasoning, scenario, trial) seen
    in two roots (overlapping shards) is kept once when the copies agree.

    Raises ``TidyExportError`` when two roots hold one condition under a different run
    identity, or two copies of a trial disagree.
    """
    rows: dict[tuple, tuple[dict[str, Any], dict[str, Any], Path]] = {}
    runs: dict[tuple[str, str], tuple[dict[str, Any], Path]] = {}
    for root in roots:
        for row, identity, path in _trial_rows(Path(root)):
            condition = (row["model"], row["reasoning"])
            run = {k: identity[k] for k in ("variant_config_hash", "prompt_sha256")}
            run["n_trials_per_cell"] = identity["n_trials_per_cell"]
            first_run = runs.setdefault(condition, (run, path))
            if first_run[0] != run:
                differs = sorted(k for k in run if run[k] != first_run[0][k])
                raise TidyExportError(
                    f"{path}: condition {condition[0]} ({condition[1]}) differs from "
                    f"{first_run[1]} in {', '.join(differs)}: not shards of one run"
                )
            key = (*condition, row["scenario_id"], row["trial"])
            seen = rows.setdefault(key, (row, identity, path))
            if seen[2] != path and seen[1] != identity:
                differs = sorted(k for k in identity if identity[k] != seen[1][k])
                raise TidyExportError(
                    f"{path}: trial {row['trial']} of scenario {row['scenario_id']} disagrees "
                    f"with {seen[2]} in {', '.join(differs)}"
                )
    return [rows[k][0] for k in sorted(rows)]


def export_tidy(roots: Iterable[Path], out: Path) -> int:
    """Write the tidy CSV atomically (empty permission = null); returns the number of rows."""
    rows = tidy_rows(roots)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=TIDY_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write_text(Path(out), buffer.getvalue())
    return len(rows)
