"""The compact export: one CSV row per trial of one or more run roots (e.g. shards)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from analysis.runner.gates import REFERENCE_KIND
from analysis.verdicts import TRIAL_COLUMNS, run_condition

#: The trials table's columns less ``condition``, which the loader derives.
TIDY_COLUMNS = tuple(column for column in TRIAL_COLUMNS if column != "condition")


def _trial_rows(root: Path) -> Iterator[dict[str, Any]]:
    configs = json.loads((root / "VARIANT_CONFIGS.json").read_text(encoding="utf-8"))["variants"]
    for variant_key, config in configs.items():
        reference = config.get("kind") == REFERENCE_KIND
        model, reasoning = run_condition(config, variant_key)
        for path in sorted((root / variant_key).glob("*/trial-*.json")):
            trial = json.loads(path.read_text(encoding="utf-8"))
            yield {
                "scenario_id": trial["scenario_id"],
                "model": model,
                "reasoning": reasoning,
                "trial": int(trial["trial"]),
                "commit_permission": trial["commit_permission"] or "",
                "status": trial["status"],
                "source": "reference-gate" if reference else "run",
            }


def tidy_rows(roots: Iterable[Path]) -> list[dict[str, Any]]:
    """Every trial of the roots, one row each; a (model, reasoning, scenario, trial) seen
    twice (overlapping shards) is kept once, from the first root that has it."""
    rows: dict[tuple, dict[str, Any]] = {}
    for root in roots:
        for row in _trial_rows(Path(root)):
            key = (row["model"], row["reasoning"], row["scenario_id"], row["trial"])
            rows.setdefault(key, row)
    return [rows[k] for k in sorted(rows)]


def export_tidy(roots: Iterable[Path], out: Path) -> int:
    """Write the tidy CSV (empty permission = null); returns the number of rows."""
    rows = tidy_rows(roots)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=TIDY_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)
