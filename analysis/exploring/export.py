"""``make export``: the trials, cells, conditions and scenarios tables as Parquet and CSV.

``python -m analysis.exploring.export [OUT_DIR]`` writes ``<name>.parquet`` and ``<name>.csv`` for
each table under ``paths.processed_dir()`` (or ``OUT_DIR``). Files are written to a temporary folder
beside the destination first and then moved into place, so a failed export leaves the previous files
untouched. Parquet keeps every dtype (categories, nullable integers); in the CSV a list (a
scenario's tags, flags, secondary patterns) is JSON text, ``["a", "b"]``. The conditions table holds
the published conditions (the leaderboard's counts, source ``published``; ``n_provider_filtered``
empty, as the leaderboard does not say) unless the per-trial verdicts give them, beside every
condition scored from trials.

``write_scenarios_detail`` writes a trials table in the release's per-scenario verdict format
(``scenarios-detail.json``), which ``analysis.trials.load_scenarios_detail`` reads.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis import paths as project_paths
from analysis.corpus.vocabulary import SOURCE_DTYPE, verdict_file_labels
from analysis.help_text import parser as help_parser
from analysis.scoring.rules import CONDITION_COLUMNS, condition_scores, record_correct, score_cells
from analysis.trials import VerdictError, load_trials

TABLES: tuple[str, ...] = ("trials", "cells", "conditions", "scenarios")
FORMATS: tuple[str, ...] = ("parquet", "csv")


def published_conditions(scenarios: pd.DataFrame) -> pd.DataFrame:
    """The release's published conditions (``load_conditions``, the leaderboard's counts
    after its cross-check), as rows of :data:`CONDITION_COLUMNS`."""
    from analysis.scoring.leaderboard import load_conditions

    published = load_conditions(scenarios)
    return published.reindex(columns=list(CONDITION_COLUMNS))


def all_conditions(cells: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """Every condition scored from ``cells``, and the ``published`` conditions the cells do
    not hold (source ``published``), as one table of :data:`CONDITION_COLUMNS`."""
    scored = condition_scores(cells)
    have = set(scored["source"].astype(str))
    extra = published.loc[~published["source"].astype(str).isin(have)]
    if extra.empty:
        return scored
    combined = pd.concat(
        [
            scored.astype({c: object for c in ("condition", "model", "reasoning", "source")}),
            extra.astype({c: object for c in ("condition", "model", "reasoning", "source")}),
        ],
        ignore_index=True,
    )
    counts = [c for c in CONDITION_COLUMNS if c.startswith(("n_", "weight_"))]
    combined[counts] = combined[counts].astype("Int64")
    for column in ("condition", "model", "reasoning"):
        combined[column] = combined[column].astype(str).astype("category")
    combined["source"] = pd.Categorical(combined["source"].astype(str), dtype=SOURCE_DTYPE)
    return combined[list(CONDITION_COLUMNS)]


def build_tables(
    trials: pd.DataFrame | None = None,
    scenarios: pd.DataFrame | None = None,
    published: pd.DataFrame | None = None,
) -> dict[str, pd.DataFrame]:
    """The exported tables; ``trials`` / ``scenarios`` / ``published`` default to
    ``load_trials()``, ``analysis.corpus.scenarios.load_scenarios()`` and
    :func:`published_conditions`."""
    if scenarios is None:
        from analysis.corpus.scenarios import load_scenarios

        scenarios = load_scenarios()
    if trials is None:
        trials = load_trials(scenarios=scenarios)
    if published is None:
        published = published_conditions(scenarios)
    cells = score_cells(trials, scenarios)
    return {
        "trials": trials,
        "cells": cells,
        "conditions": all_conditions(cells, published),
        "scenarios": scenarios,
    }


def as_csv_text(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with each list, tuple or array value written as JSON text (``["a", "b"]``),
    so that the CSV reads back with ``json.loads`` rather than as Python's repr."""
    out = table.copy()
    for column in out.columns:
        if out[column].dtype != object:
            continue
        values = out[column]
        listed = values.map(lambda v: isinstance(v, (list, tuple, np.ndarray)))
        if listed.any():
            out[column] = values.map(
                lambda v: (
                    json.dumps(list(v), ensure_ascii=False)
                    if isinstance(v, (list, tuple, np.ndarray))
                    else v
                )
            )
    return out


def write_tables(
    tables: dict[str, pd.DataFrame], out_dir: str | os.PathLike[str] | None = None
) -> list[Path]:
    """Write each table as Parquet and CSV into ``out_dir`` (default ``paths.processed_dir()``)
    via a temporary folder; returns the written paths."""
    out = Path(out_dir) if out_dir is not None else project_paths.processed_dir()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        staged = []
        for name, table in tables.items():
            parquet = staging / f"{name}.parquet"
            csv = staging / f"{name}.csv"
            table.to_parquet(parquet, index=False)
            as_csv_text(table).to_csv(csv, index=False)
            staged += [parquet, csv]
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for path in staged:
            target = out / path.name
            os.replace(path, target)
            written.append(target)
        return written
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def export(
    out_dir: str | os.PathLike[str] | None = None,
    *,
    trials: pd.DataFrame | None = None,
    scenarios: pd.DataFrame | None = None,
) -> list[Path]:
    """Build and write every exported table; returns the written paths."""
    return write_tables(build_tables(trials, scenarios), out_dir)


def main(argv: list[str] | None = None) -> int:
    """Command line entry: ``python -m analysis.exploring.export [OUT_DIR]``."""
    parser = help_parser("python -m analysis.exploring.export", __doc__)
    parser.add_argument("out_dir", nargs="?", help="output folder (default: data/processed)")
    written = export(parser.parse_args(sys.argv[1:] if argv is None else argv).out_dir)
    for path in written:
        print(path)
    return 0


#: Trial fields of the release format the trials table may carry (a column of that name);
#: without one, a trial states what upstream's detail builder writes for a trial without it.
TRIAL_EXTRAS: dict[str, Any] = {
    "policy_action": None,
    "human_required": None,
    "confidence": None,
    "reason": "",
}


def _trial_extra(field: str, value: Any) -> Any:
    """A trial's optional field as the release format states it: a confidence only when a
    number, a reason only when text (else ``""``), the others as they are (NA as null)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return TRIAL_EXTRAS[field]
    value = _jsonable(value)
    if field == "confidence":
        is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
        return value if is_number else None
    if field == "reason":
        return value if isinstance(value, str) else ""
    return value


def write_scenarios_detail(
    trials: pd.DataFrame,
    scenarios: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    built_from: str | None = None,
) -> Path:
    """Write a trials table as a release-format ``scenarios-detail.json`` (cells scored by
    ``analysis.scoring.rules.score_cells``); every scenario of ``scenarios`` gets an entry.

    Each cell record means what upstream's detail builder writes: ``expected`` is the
    scenario's expected action (``block``), ``split`` counts each decision given, in the
    order the trials first give it (a decision no trial gave is left out), ``unanimous`` is
    every trial correct or none, ``correct`` is null without a modal decision. Trials state
    ``policy_action``, ``human_required``, ``confidence`` and ``reason`` from columns of
    those names, when the table has them."""
    path = Path(path)
    clash = trials.duplicated(subset=["scenario_id", "condition", "trial"], keep=False)
    if clash.any():
        first = trials.loc[clash].iloc[0]
        raise VerdictError(
            f"{path}: the release format has no source; trials of {first['scenario_id']} / "
            f"{first['condition']} come from more than one source"
        )
    try:
        written = verdict_file_labels(
            trials[["model", "reasoning"]].drop_duplicates().itertuples(index=False)
        )
    except ValueError as error:
        raise VerdictError(f"{path}: {error}; write one of them to another file") from None
    cells = score_cells(trials, scenarios)
    cells["record_correct"] = record_correct(cells)
    expected_of = dict(
        zip(scenarios["scenario_id"].astype(str), scenarios["expected_action"], strict=True)
    )
    extras = [field for field in TRIAL_EXTRAS if field in trials.columns]
    by_cell = {
        key: group
        for key, group in trials.groupby(["scenario_id", "condition"], observed=True, sort=True)
    }
    cell_rows: dict[str, list[dict[str, Any]]] = {}
    for cell in cells.to_dict("records"):
        group = by_cell[(cell["scenario_id"], cell["condition"])].sort_values("trial")
        required = cell["required_gate"]
        modal = cell["modal_decision"]
        trial_records = []
        for t in group.to_dict("records"):
            permission = None if pd.isna(t["commit_permission"]) else str(t["commit_permission"])
            stated = {
                f: _trial_extra(f, t[f]) if f in extras else v for f, v in TRIAL_EXTRAS.items()
            }
            trial_records.append(
                {
                    "trial": int(t["trial"]),
                    "commit_permission": permission,
                    **stated,
                    "status": str(t["status"]),
                    "correct": None if permission is None else permission == required,
                }
            )
        split: dict[str, int] = {}  # in the order the trials first give each decision
        for trial in trial_records:
            if trial["commit_permission"] is not None:
                side = trial["commit_permission"]
                split[side] = split.get(side, 0) + 1
        expected = expected_of[str(cell["scenario_id"])]
        cell_rows.setdefault(str(cell["scenario_id"]), []).append(
            {
                "model": written[(str(cell["model"]), str(cell["reasoning"]))],
                "expected": None if pd.isna(expected) else str(expected),
                "modal_decision": None if pd.isna(modal) else str(modal),
                "modal_count": int(cell["modal_count"]),
                "n_trials": int(cell["n_trials"]),
                "n_correct": int(cell["n_correct"]),
                "pass_all": bool(cell["pass_all"]),
                "correct": cell["record_correct"],
                "modal_scored": bool(cell["modal_scored"]),
                "directionally_scored": bool(cell["directionally_scored"]),
                "provider_filtered": bool(cell["provider_filtered"]),
                "split": split,
                "unanimous": bool(cell["unanimous"]),
                "trials": trial_records,
            }
        )
    scenario_entries = []
    for record in scenarios.to_dict("records"):
        sid = str(record.pop("scenario_id"))
        meta = {k: _jsonable(v) for k, v in record.items()}
        scenario_entries.append({"id": sid, **meta, "model_verdicts": cell_rows.get(sid, [])})
    doc = {
        "built_from": built_from or ", ".join(sorted({str(s) for s in trials["source"]})),
        "models": sorted(set(written.values())),
        "scenario_count": len(scenario_entries),
        "scenarios": scenario_entries,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    return path


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return _jsonable(value.item())
    if isinstance(value, (np.ndarray, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and value != value:
        return None  # JSON has no NaN: a missing value is null
    if isinstance(value, (list, dict, str, int, float, bool)) or value is None:
        return value
    if pd.isna(value):
        return None
    return str(value)


if __name__ == "__main__":
    raise SystemExit(main())
