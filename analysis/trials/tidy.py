"""Layout 3: tidy trial tables (Parquet, CSV, JSON Lines), one row per trial."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from analysis.trials.schema import VerdictError, normalize_trials

TIDY_SUFFIXES: tuple[str, ...] = (".parquet", ".csv", ".jsonl")


def _read_jsonl(path: Path) -> pd.DataFrame:
    records = []
    with path.open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise VerdictError(
                    f"{path}: malformed JSON on line {lineno}, column {exc.colno}: {exc.msg}"
                ) from exc
    return pd.DataFrame.from_records(records)


def load_tidy(
    path: str | os.PathLike[str],
    *,
    source: str | None = None,
    scenarios: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """A tidy Parquet, CSV or JSON Lines table with at least ``scenario_id, model, reasoning,
    trial, commit_permission``; ``status`` and ``source`` are optional (``ok``; the ``source``
    argument, else ``run``) and ``condition`` is derived."""
    path = Path(path)
    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            frame = pd.read_parquet(path)
        elif suffix == ".csv":
            frame = pd.read_csv(
                path, dtype={"scenario_id": str, "model": str, "reasoning": str, "status": str}
            )
        elif suffix in (".jsonl", ".ndjson"):
            frame = _read_jsonl(path)
        else:
            raise VerdictError(f"{path}: unknown tidy format {suffix!r}")
    except (OSError, ValueError) as exc:
        if isinstance(exc, VerdictError):
            raise
        raise VerdictError(f"{path}: cannot read as {suffix[1:]}: {exc}") from exc
    if source is not None and "source" in frame.columns:
        frame = frame.drop(columns="source")
    return normalize_trials(frame, origin=str(path), source=source, scenarios=scenarios)
