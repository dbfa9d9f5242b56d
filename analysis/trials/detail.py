"""Layout 1: the release's per-scenario verdict file, ``scenarios-detail.json``.

An object with a ``scenarios`` list; each scenario's ``model_verdicts`` hold one cell each
(``model`` is the condition label) with its ``trials``. ``analysis.exploring.export`` writes
the same format.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.corpus.vocabulary import GATE_DTYPE, condition_label
from analysis.files.reading import check_once
from analysis.files.schemas import SCENARIOS_DETAIL, SCENARIOS_DETAIL_CELLS, TRIAL
from analysis.files.typed import check, read_typed, shown
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
    """The trials of a release-format ``scenarios-detail.json`` as a trials table.

    The file is held to its whole schema (:data:`~analysis.files.schemas.SCENARIOS_DETAIL`):
    down to its cells as read, its trials on the columns read from them, and, when a column
    does not fit or the rows cannot be read, the whole document again, which names the first
    value that is wrong, before anything else is said about the file."""
    path = Path(path)
    doc = read_typed(path, SCENARIOS_DETAIL_CELLS, error=VerdictError)

    def check_whole() -> None:
        check_once(
            doc, SCENARIOS_DETAIL, lambda: check(doc, SCENARIOS_DETAIL, path, error=VerdictError)
        )

    try:
        labels, rows = _trial_rows(doc, path)
    except (VerdictError, AttributeError, TypeError):
        check_whole()  # a value of the wrong type is what is wrong, if there is one
        raise
    if not all(TRIAL.optional[field].all_fit(rows[field]) for field in _TRIAL_FIELDS):
        check_whole()  # a trial that is not as its schema says is refused by name
    frame = pd.DataFrame(rows, dtype=object)
    for position, (column, values) in enumerate(labels.items()):
        frame.insert(position, column, values)
    return normalize_trials(frame, origin=str(path), source=source, scenarios=scenarios)


#: The fields of each trial a trials table holds (:data:`~analysis.files.schemas.TRIAL`).
_TRIAL_FIELDS = ("trial", "commit_permission", "status")


def _trial_rows(doc: Any, path: Path) -> tuple[dict[str, pd.Categorical], dict[str, list[Any]]]:
    """Each trial's cell labels (scenario_id, model, reasoning: categoricals of the texts,
    made once per cell, not once per trial) and fields (one list per field, None where a
    trial leaves one out), one item per trial."""
    cells: dict[str, list[str]] = {c: [] for c in ("scenario_id", "model", "reasoning")}
    sizes: list[int] = []
    rows: dict[str, list[Any]] = {field: [] for field in _TRIAL_FIELDS}
    in_order: dict[int, list] = {}  # n: trials 1 to n, in order (a cell found complete)
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
            numbers = [t.get("trial") for t in trials]
            n_expected = verdict.get("n_trials")
            counted = isinstance(n_expected, int) and not isinstance(n_expected, bool)
            if counted and numbers != in_order.get(n_expected):  # else 1 to n, seen before
                missing = sorted(set(range(1, int(n_expected) + 1)) - set(numbers))
                if missing:
                    raise VerdictError(
                        f"{path}: cell {sid} / {label} (n_trials {n_expected}) "
                        f"missing trials {missing}"
                    )
                if len(numbers) == n_expected and numbers == sorted(numbers):
                    in_order[n_expected] = numbers
            cells["scenario_id"].append(sid)
            cells["model"].append(model)
            cells["reasoning"].append(reasoning)
            sizes.append(len(trials))
            rows["trial"] += numbers
            for field in _TRIAL_FIELDS[1:]:
                rows[field] += [t.get(field) for t in trials]
    repeats = np.asarray(sizes, dtype="int64")
    labels = {}
    for column, values in cells.items():
        per_cell = pd.Categorical(values)
        labels[column] = pd.Categorical.from_codes(
            np.repeat(per_cell.codes, repeats), dtype=per_cell.dtype
        )
    return labels, rows


def load_scenarios_detail_cells(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The cell-level fields a ``scenarios-detail.json`` states, named as ``score_cells`` names
    them (scenario_id, condition, model, reasoning, n_trials, n_correct, n_allowed, n_blocked,
    modal_decision, modal_count, modal_correct, pass_all, unanimous, provider_filtered,
    modal_scored, directionally_scored)."""
    path = Path(path)
    records = []
    document = read_typed(path, SCENARIOS_DETAIL_CELLS, error=VerdictError)
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
