"""Layout 1: the release's per-scenario verdict file, ``scenarios-detail.json``.

An object with a ``scenarios`` list; each scenario's ``model_verdicts`` hold one cell each
(``model`` is the condition label) with its ``trials``. ``analysis.exploring.export`` writes
the same format.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.corpus.vocabulary import GATE_DTYPE, condition_label
from analysis.files.schemas import SCENARIOS_DETAIL
from analysis.files.typed import read_typed, shown
from analysis.trials.schema import VerdictError, normalize_trials, split_condition_label

DETAIL_FILENAME = "scenarios-detail.json"


def detail_scenarios(doc: Any, path: Path) -> list[dict[str, Any]]:
    """The ``scenarios`` list of a verdict file's document ``doc`` read from ``path``."""
    if not isinstance(doc, dict) or not isinstance(doc.get("scenarios"), list):
        raise VerdictError(f"{path}: expected an object with a 'scenarios' list")
    return doc["scenarios"]


def load_scenarios_detail(
    path: str | os.PathLike[str],
    *,
    source: str = "published",
    scenarios: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The trials of a release-format ``scenarios-detail.json`` as a trials table."""
    path = Path(path)
    doc = read_typed(path, SCENARIOS_DETAIL, error=VerdictError)
    rows: dict[str, list[Any]] = {c: [] for c in ("scenario_id", "model", "reasoning")}
    rows |= {"trial": [], "commit_permission": [], "status": []}
    for s_index, scenario in enumerate(detail_scenarios(doc, path)):
        sid = scenario.get("id")
        if not isinstance(sid, str):
            raise VerdictError(f"{path}: scenarios[{s_index}] has no string 'id'")
        seen: set[str] = set()
        for verdict in scenario.get("model_verdicts") or []:
            label = verdict.get("model")
            try:
                model, reasoning = split_condition_label(str(label))
            except ValueError as exc:
                raise VerdictError(f"{path}: scenario {shown(sid)}: {exc}") from None
            if label in seen:
                why = (
                    " (the format writes every reasoning that starts with 'on' as plain 'on', "
                    "so two such settings of one model share this name)"
                    if reasoning == "on"
                    else ""
                )
                raise VerdictError(
                    f"{path}: scenario {shown(sid)}: two verdicts of {shown(label)}{why}"
                )
            seen.add(str(label))
            trials = verdict.get("trials") or []
            n_expected = verdict.get("n_trials")
            if isinstance(n_expected, int) and not isinstance(n_expected, bool):
                have = {t.get("trial") for t in trials}
                missing = sorted(set(range(1, int(n_expected) + 1)) - have)
                if missing:
                    raise VerdictError(
                        f"{path}: cell {sid} / {label} (n_trials {n_expected}) "
                        f"missing trials {missing}"
                    )
            n = len(trials)
            rows["scenario_id"] += [sid] * n
            rows["model"] += [model] * n
            rows["reasoning"] += [reasoning] * n
            for field in ("trial", "commit_permission", "status"):
                rows[field] += [t.get(field) for t in trials]
    return normalize_trials(
        pd.DataFrame(rows, dtype=object), origin=str(path), source=source, scenarios=scenarios
    )


def load_scenarios_detail_cells(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The cell-level fields a ``scenarios-detail.json`` states, named as ``score_cells`` names
    them (scenario_id, condition, model, reasoning, n_trials, n_correct, n_allowed, n_blocked,
    modal_decision, modal_count, modal_correct, pass_all, unanimous, provider_filtered,
    modal_scored, directionally_scored)."""
    path = Path(path)
    records = []
    document = read_typed(path, SCENARIOS_DETAIL, error=VerdictError)
    for scenario in detail_scenarios(document, path):
        for v in scenario.get("model_verdicts") or []:
            model, reasoning = split_condition_label(str(v.get("model")))
            split = v.get("split") or {}
            records.append(
                {
                    "scenario_id": scenario.get("id"),
                    "condition": condition_label(model, reasoning),
                    "model": model,
                    "reasoning": reasoning,
                    "n_trials": v.get("n_trials"),
                    "n_correct": v.get("n_correct"),
                    "n_allowed": split.get("allowed", 0),
                    "n_blocked": split.get("blocked", 0),
                    "modal_decision": v.get("modal_decision"),
                    "modal_count": v.get("modal_count") or 0,
                    "modal_correct": v.get("correct") is True,
                    "pass_all": v.get("pass_all") is True,
                    "unanimous": v.get("unanimous") is True,
                    "provider_filtered": v.get("provider_filtered") is True,
                    "modal_scored": v.get("modal_scored") is True,
                    "directionally_scored": v.get("directionally_scored") is True,
                }
            )
    cells = pd.DataFrame.from_records(records)
    if cells.empty:
        return cells
    for column in ("scenario_id", "condition", "model", "reasoning"):
        cells[column] = pd.Categorical(cells[column].astype(str))
    cells["modal_decision"] = pd.Categorical(
        cells["modal_decision"].astype(object), dtype=GATE_DTYPE
    )
    counts = ["n_trials", "n_correct", "n_allowed", "n_blocked", "modal_count"]
    cells[counts] = cells[counts].astype("int64")
    return cells.sort_values(["scenario_id", "condition"], ignore_index=True)
