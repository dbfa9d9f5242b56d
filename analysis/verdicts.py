"""Per-trial verdicts from every layout, as one tidy trials table.

The trials table (``TRIAL_COLUMNS``) has one row per (scenario, condition, trial):

``scenario_id`` (category)
    The scenario's id.
``condition`` (category)
    The condition label as per-trial verdicts write it, ``condition_label(model, reasoning)``,
    for example ``"gpt-5.4-nano (off)"`` or ``"kimi-k2.6 (on)"``.
``model``, ``reasoning`` (category)
    The model and its reasoning setting.
``trial`` (int64)
    The trial number, 1..n within the cell.
``commit_permission`` (``GATE_DTYPE``)
    ``allowed`` / ``blocked``; NaN when the trial gave no decision.
``status`` (category)
    ``ok``, ``parse_failed``, ``provider_filtered``, ``infrastructure_failed``, ``truncated``
    (``ok`` when the layout records none).
``source`` (category)
    ``published`` (the release's verdict file), ``reference-policy`` or ``run``.

Layouts: the release's ``scenarios-detail.json`` (``load_scenarios_detail``), a raw run root
``<root>/<variant>/<scenario_id>/trial-N.json`` (``load_run_root``) and tidy Parquet / CSV /
JSON Lines tables (``load_tidy``) and Inspect AI logs (``analysis.inspect_logs``).
``load_trials`` finds them all under ``paths.RUNS_DIR``.
``write_scenarios_detail`` writes a trials table back in the release's verdict file format.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis import paths as project_paths
from analysis.files import read_json
from analysis.vocabulary import GATE_DTYPE, GATES, condition_label

TRIAL_COLUMNS: tuple[str, ...] = (
    "scenario_id",
    "condition",
    "model",
    "reasoning",
    "trial",
    "commit_permission",
    "status",
    "source",
)
CELL_KEYS: tuple[str, ...] = ("source", "scenario_id", "condition")

STATUSES: tuple[str, ...] = (
    "ok",
    "parse_failed",
    "provider_filtered",
    "infrastructure_failed",
    "truncated",
)
PROVIDER_FILTERED = "provider_filtered"

SOURCES: tuple[str, ...] = ("published", "reference-policy", "run")
SOURCE_DTYPE = pd.CategoricalDtype(list(SOURCES))

DETAIL_FILENAME = "scenarios-detail.json"
RUN_PLAN_FILENAME = "RUN_PLAN.json"
VARIANT_CONFIGS_FILENAME = "VARIANT_CONFIGS.json"
TIDY_SUFFIXES: tuple[str, ...] = (".parquet", ".csv", ".jsonl")
REFERENCE_TIDY_FILENAME = "trials.csv"

_REQUIRED_TIDY = ("scenario_id", "model", "reasoning", "trial", "commit_permission")
_SHOW = 5


class VerdictError(ValueError):
    """A verdict file or table that cannot be read as trials; the message names the file."""


# --------------------------------------------------------------------------------------------
# Normalisation and validation shared by every loader
# --------------------------------------------------------------------------------------------


def split_condition_label(label: str) -> tuple[str, str]:
    """``"kimi-k2.6 (on)"`` -> ``("kimi-k2.6", "on")``: the reasoning is the last balanced
    parenthesised group, so ``"kimi-k2.6 (on (provider default))"`` -> ``("kimi-k2.6",
    "on (provider default)")`` and ``"x (y) (minimal)"`` -> ``("x (y)", "minimal")``."""
    depth = 0
    opening = -1
    if label.endswith(")"):
        for index in range(len(label) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(label[index], 0)
            if depth == 0:
                opening = index
                break
    model = label[: opening - 1] if opening > 0 else ""
    if opening <= 0 or label[opening - 1] != " " or not model.strip():
        raise ValueError(f"condition label {label!r} is not of the form '<model> (<reasoning>)'")
    return model, label[opening + 1 : -1]


def _status_dtype(values: Iterable[str]) -> pd.CategoricalDtype:
    extra = sorted(set(values) - set(STATUSES))
    return pd.CategoricalDtype([*STATUSES, *extra])


def _cell_name(key: Sequence[Any]) -> str:
    source, scenario, condition = key
    return f"{scenario} / {condition} [{source}]"


def _check_permissions(df: pd.DataFrame, origin: str) -> pd.Categorical:
    perm = df["commit_permission"]
    if isinstance(perm.dtype, pd.CategoricalDtype) and list(perm.cat.categories) == list(GATES):
        return perm.array
    values = perm.astype(object)
    null = values.isna().to_numpy()
    present = values[~null].astype(str)
    bad = ~present.isin(GATES).to_numpy()
    if bad.any():
        bad_values = sorted(present[bad].unique())[:_SHOW]
        where = df.loc[present.index[bad][0]]
        raise VerdictError(
            f"{origin}: unknown commit_permission value(s) {bad_values} "
            f"(allowed: {', '.join(GATES)} or null), first at scenario {where['scenario_id']!r}, "
            f"trial {where['trial']}"
        )
    out = values.where(~null, None)
    return pd.Categorical(out, dtype=GATE_DTYPE)


def _check_trial_numbers(df: pd.DataFrame, origin: str) -> np.ndarray:
    trial = pd.to_numeric(df["trial"], errors="coerce")
    as_float = trial.to_numpy(dtype="float64", na_value=np.nan)
    bad = np.isnan(as_float) | (as_float < 1) | (as_float != np.floor(as_float))
    if bad.any():
        raw = df["trial"].iloc[int(np.flatnonzero(bad)[0])]
        raise VerdictError(f"{origin}: trial numbers must be integers >= 1; found {raw!r}")
    return as_float.astype("int64")


def _conditions(model: pd.Series, reasoning: pd.Series) -> pd.Series:
    key = model + "\x1f" + reasoning
    labels = {}
    for k in key.unique():
        m, r = k.split("\x1f", 1)
        labels[k] = condition_label(m, r)
    return key.map(labels)


def _check_duplicates(df: pd.DataFrame, origin: str) -> None:
    keys = [*CELL_KEYS, "trial"]
    dup = df.duplicated(subset=keys, keep=False)
    if dup.any():
        rows = df.loc[dup, keys].drop_duplicates().head(_SHOW)
        named = "; ".join(
            f"{_cell_name((r.source, r.scenario_id, r.condition))} trial {r.trial}"
            for r in rows.itertuples(index=False)
        )
        n = int(df.loc[dup, keys].drop_duplicates().shape[0])
        raise VerdictError(f"{origin}: {n} duplicate (scenario, condition, trial) row(s): {named}")


def _check_completeness(df: pd.DataFrame, origin: str, n_trials: int | None) -> None:
    if df.empty:
        return
    stats = df.groupby(list(CELL_KEYS), observed=True, sort=False)["trial"].agg(
        ["size", "max", "min"]
    )
    if n_trials is not None:
        over = stats[stats["max"] > n_trials]
        if len(over):
            key, row = next(iter(over.iterrows()))
            raise VerdictError(
                f"{origin}: cell {_cell_name(key)} has trial {row['max']} but the layout "
                f"runs {n_trials} trials per cell"
            )
        expected = pd.Series(n_trials, index=stats.index)
    else:
        expected = stats["max"]
    incomplete = stats[stats["size"] != expected]
    if len(incomplete):
        named = []
        for key in incomplete.head(_SHOW).index:
            have = set(df_trials_of(df, key))
            missing = sorted(set(range(1, int(expected.loc[key]) + 1)) - have)
            named.append(f"{_cell_name(key)} (of {int(expected.loc[key])}) missing {missing}")
        raise VerdictError(
            f"{origin}: {len(incomplete)} cell(s) with missing trials: " + "; ".join(named)
        )
    counts = expected.value_counts()
    if len(counts) > 1:
        parts = []
        for count, n_cells in counts.items():
            example = expected[expected == count].index[0]
            parts.append(f"{n_cells} cell(s) with {count} (e.g. {_cell_name(example)})")
        raise VerdictError(f"{origin}: mixed trial counts per cell: " + "; ".join(parts))


def df_trials_of(df: pd.DataFrame, key: Sequence[Any]) -> list[int]:
    """The trial numbers present in one (source, scenario_id, condition) cell."""
    source, scenario, condition = key
    mask = (
        (df["source"] == source) & (df["scenario_id"] == scenario) & (df["condition"] == condition)
    )
    return [int(t) for t in df.loc[mask, "trial"]]


def _check_scenarios(df: pd.DataFrame, scenarios: pd.DataFrame | None, origin: str) -> None:
    if scenarios is None:
        return
    known = set(scenarios["scenario_id"].astype(str))
    unknown = sorted(set(df["scenario_id"].astype(str).unique()) - known)
    if unknown:
        raise VerdictError(
            f"{origin}: {len(unknown)} scenario id(s) not in the scenarios table: {unknown[:_SHOW]}"
        )


_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no", "", "nan", "none"}


def _flag_values(column: pd.Series, origin: str, df: pd.DataFrame) -> np.ndarray:
    """A boolean ``provider_filtered`` column read from any tidy format (bools, 0/1, text)."""
    text = column.astype(object).where(column.notna(), "").astype(str).str.strip().str.lower()
    bad = ~text.isin(_TRUE | _FALSE)
    if bad.any():
        first = df.loc[bad[bad].index[0]]
        raise VerdictError(
            f"{origin}: scenario {first['scenario_id']!r}, {first['model']} "
            f"({first['reasoning']}), trial {first['trial']}: provider_filtered: "
            f"{column[bad].iloc[0]!r} is not true or false"
        )
    return text.isin(_TRUE).to_numpy()


def _with_filter_flag(df: pd.DataFrame, status: pd.Series, origin: str) -> pd.Series:
    """Trials marked by a boolean ``provider_filtered`` column get that status; a trial whose
    ``status`` and flag disagree is refused."""
    flag = _flag_values(df["provider_filtered"], origin, df)
    if "status" in df.columns:
        clash = (status == PROVIDER_FILTERED).to_numpy() != flag
        if clash.any():
            first = df.loc[np.flatnonzero(clash)[0]]
            raise VerdictError(
                f"{origin}: scenario {first['scenario_id']!r}, {first['model']} "
                f"({first['reasoning']}), trial {first['trial']}: provider_filtered "
                f"{first['provider_filtered']!r} contradicts status {first['status']!r}"
            )
    return status.where(~flag, PROVIDER_FILTERED)


def _categorical(values: pd.Series) -> pd.Categorical:
    return pd.Categorical(values.astype(str))


def normalize_trials(
    frame: pd.DataFrame,
    *,
    origin: str,
    source: str | None = None,
    n_trials: int | None = None,
    scenarios: pd.DataFrame | None = None,
    check_counts: bool = True,
) -> pd.DataFrame:
    """Validate a frame of trial rows and return it as a trials table (``TRIAL_COLUMNS``).

    ``source`` fills the source column when the frame has none (default ``run``); ``n_trials``
    is the layout's trials per cell (otherwise each cell's highest trial number). Raises
    ``VerdictError`` naming ``origin`` for unknown permission labels, duplicate rows, cells
    with missing trials, mixed trial counts and scenario ids not in ``scenarios``.
    """
    df = frame.reset_index(drop=True)
    if "condition" in df.columns and not {"model", "reasoning"} <= set(df.columns):
        split = [split_condition_label(c) for c in df["condition"].astype(str)]
        df["model"] = [m for m, _ in split]
        df["reasoning"] = [r for _, r in split]
    missing = [c for c in _REQUIRED_TIDY if c not in df.columns]
    if missing:
        raise VerdictError(f"{origin}: missing column(s) {missing}")
    for column in ("scenario_id", "model", "reasoning"):
        if df[column].isna().any():
            raise VerdictError(f"{origin}: column {column!r} has empty values")

    if "source" in df.columns and source is None:
        src = df["source"].astype(object).where(df["source"].notna(), "run")
    else:
        src = pd.Series(source or "run", index=df.index)
    unknown_sources = sorted(set(src.astype(str).unique()) - set(SOURCES))
    if unknown_sources:
        raise VerdictError(
            f"{origin}: unknown source(s) {unknown_sources}; known: {', '.join(SOURCES)}"
        )
    status = (
        df["status"].astype(object).where(df["status"].notna(), "ok")
        if "status" in df.columns
        else pd.Series("ok", index=df.index)
    )
    if "provider_filtered" in df.columns:
        status = _with_filter_flag(df, status.astype(str), origin)
    trial = _check_trial_numbers(df, origin)
    df["trial"] = trial
    permission = _check_permissions(df, origin)
    model = df["model"].astype(str)
    reasoning = df["reasoning"].astype(str)
    status = status.astype(str)

    out = pd.DataFrame(
        {
            "scenario_id": _categorical(df["scenario_id"]),
            "condition": pd.Categorical(_conditions(model, reasoning)),
            "model": pd.Categorical(model),
            "reasoning": pd.Categorical(reasoning),
            "trial": trial,
            "commit_permission": permission,
            "status": pd.Categorical(status, dtype=_status_dtype(status.unique())),
            "source": pd.Categorical(src.astype(str), dtype=SOURCE_DTYPE),
        }
    )
    _check_scenarios(out, scenarios, origin)
    _check_duplicates(out, origin)
    if check_counts:
        _check_completeness(out, origin, n_trials)
    return out.sort_values([*CELL_KEYS, "trial"], ignore_index=True)


def empty_trials() -> pd.DataFrame:
    """A trials table with no rows and the right dtypes."""
    return normalize_trials(
        pd.DataFrame({c: pd.Series([], dtype=object) for c in _REQUIRED_TIDY}), origin="empty"
    )


def combine_trials(frames: Sequence[pd.DataFrame], origin: str = "trials") -> pd.DataFrame:
    """Stack trials tables (categories merged); duplicate rows across them are an error."""
    frames = [f for f in frames if len(f)]
    if not frames:
        return empty_trials()
    if len(frames) == 1:
        return frames[0]
    plain = pd.concat(
        [f.astype({c: object for c in TRIAL_COLUMNS if c != "trial"}) for f in frames],
        ignore_index=True,
    )
    return normalize_trials(plain, origin=origin, check_counts=False)


# --------------------------------------------------------------------------------------------
# JSON helpers
# --------------------------------------------------------------------------------------------


def _read_json(path: Path) -> Any:
    return read_json(path, error=VerdictError)


# --------------------------------------------------------------------------------------------
# Layout 1: the release's per-scenario verdict file
# --------------------------------------------------------------------------------------------


def _detail_scenarios(doc: Any, path: Path) -> list[dict[str, Any]]:
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
    doc = _read_json(path)
    rows: dict[str, list[Any]] = {c: [] for c in ("scenario_id", "model", "reasoning")}
    rows |= {"trial": [], "commit_permission": [], "status": []}
    for s_index, scenario in enumerate(_detail_scenarios(doc, path)):
        sid = scenario.get("id")
        if not isinstance(sid, str):
            raise VerdictError(f"{path}: scenarios[{s_index}] has no string 'id'")
        for verdict in scenario.get("model_verdicts") or []:
            label = verdict.get("model")
            try:
                model, reasoning = split_condition_label(str(label))
            except ValueError as exc:
                raise VerdictError(f"{path}: scenario {sid!r}: {exc}") from None
            trials = verdict.get("trials") or []
            n_expected = verdict.get("n_trials")
            if n_expected is not None:
                have = {t.get("trial") for t in trials}
                missing = sorted(set(range(1, int(n_expected) + 1)) - have)
                if missing:
                    raise VerdictError(
                        f"{path}: cell {sid} / {label} (n_trials {n_expected}) "
                        f"missing trials {missing}"
                    )
            for t in trials:
                rows["scenario_id"].append(sid)
                rows["model"].append(model)
                rows["reasoning"].append(reasoning)
                rows["trial"].append(t.get("trial"))
                rows["commit_permission"].append(t.get("commit_permission"))
                rows["status"].append(t.get("status"))
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
    for scenario in _detail_scenarios(_read_json(path), path):
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


def write_scenarios_detail(
    trials: pd.DataFrame,
    scenarios: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    built_from: str | None = None,
) -> Path:
    """Write a trials table as a release-format ``scenarios-detail.json`` (cells scored by
    ``analysis.scoring.score_cells``); every scenario of ``scenarios`` gets an entry."""
    from analysis.scoring import score_cells

    path = Path(path)
    clash = trials.duplicated(subset=["scenario_id", "condition", "trial"], keep=False)
    if clash.any():
        first = trials.loc[clash].iloc[0]
        raise VerdictError(
            f"{path}: the release format has no source; trials of {first['scenario_id']} / "
            f"{first['condition']} come from more than one source"
        )
    cells = score_cells(trials, scenarios)
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
        for t in group.itertuples(index=False):
            permission = None if pd.isna(t.commit_permission) else str(t.commit_permission)
            trial_records.append(
                {
                    "trial": int(t.trial),
                    "commit_permission": permission,
                    "policy_action": None,
                    "human_required": None,
                    "confidence": None,
                    "reason": None,
                    "status": str(t.status),
                    "correct": permission == required,
                }
            )
        cell_rows.setdefault(str(cell["scenario_id"]), []).append(
            {
                "model": str(cell["condition"]),
                "expected": required,
                "modal_decision": None if pd.isna(modal) else str(modal),
                "modal_count": int(cell["modal_count"]),
                "n_trials": int(cell["n_trials"]),
                "n_correct": int(cell["n_correct"]),
                "pass_all": bool(cell["pass_all"]),
                "correct": bool(cell["modal_correct"]),
                "modal_scored": bool(cell["modal_scored"]),
                "directionally_scored": bool(cell["directionally_scored"]),
                "provider_filtered": bool(cell["provider_filtered"]),
                "split": {"allowed": int(cell["n_allowed"]), "blocked": int(cell["n_blocked"])},
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
        "models": sorted({str(c) for c in trials["condition"]}),
        "scenario_count": len(scenario_entries),
        "scenarios": scenario_entries,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return path


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (np.ndarray, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (list, dict, str, int, float, bool)) or value is None:
        return value
    if pd.isna(value):
        return None
    return str(value)


# --------------------------------------------------------------------------------------------
# Layout 2: a raw run root (possibly several shards of one run)
# --------------------------------------------------------------------------------------------


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
    rows: dict[str, list[Any]] = {
        c: [] for c in ("scenario_id", "model", "reasoning", "trial", "commit_permission")
    }
    rows["status"] = []
    for r in roots:
        plan = _read_json(r / RUN_PLAN_FILENAME)
        run_ids.setdefault(str(plan.get("run_id")), r)
        if plan.get("n_trials_per_cell") is not None:
            n_per_cell.add(int(plan["n_trials_per_cell"]))
        config_path = r / VARIANT_CONFIGS_FILENAME
        configs = _read_json(config_path).get("variants", {}) if config_path.exists() else {}
        variants = plan.get("planned_variants") or list(configs)
        for variant in variants:
            variant_dir = r / variant
            if not variant_dir.is_dir():
                continue
            config = configs.get(variant, {})
            for scenario_dir in sorted(p for p in variant_dir.iterdir() if p.is_dir()):
                trial_files = sorted(scenario_dir.glob("trial-*.json"))
                cell_path = scenario_dir / "cell.json"
                if not trial_files and not cell_path.exists():
                    continue
                key = (variant, scenario_dir.name)
                if key in owner:
                    raise VerdictError(
                        f"{origin}: scenario {scenario_dir.name!r} of variant {variant!r} "
                        f"is in two shards: {owner[key]} and {r}"
                    )
                owner[key] = r
                cell = _read_json(cell_path) if cell_path.exists() else {}
                model, reasoning = run_condition(config, variant, cell)
                if trial_files:
                    records = []
                    for f in trial_files:
                        record = _read_json(f)
                        records.append(
                            (
                                record.get("trial", _trial_number(f)),
                                record.get("commit_permission"),
                                record.get("status"),
                            )
                        )
                else:
                    records = [
                        (i, permission, None)
                        for i, permission in enumerate(cell.get("trial_permissions") or [], 1)
                    ]
                for trial, permission, status in records:
                    rows["scenario_id"].append(scenario_dir.name)
                    rows["model"].append(model)
                    rows["reasoning"].append(reasoning)
                    rows["trial"].append(trial)
                    rows["commit_permission"].append(permission)
                    rows["status"].append(status)
    if len(run_ids) > 1:
        raise VerdictError(f"{origin}: shards of different runs: {sorted(run_ids)}")
    if len(n_per_cell) > 1:
        raise VerdictError(f"{origin}: shards disagree on trials per cell: {sorted(n_per_cell)}")
    return normalize_trials(
        pd.DataFrame(rows, dtype=object),
        origin=origin,
        source=source,
        n_trials=next(iter(n_per_cell), None),
        scenarios=scenarios,
    )


# --------------------------------------------------------------------------------------------
# Layout 3: tidy tables
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Everything under data/runs
# --------------------------------------------------------------------------------------------


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


def _hidden(path: Path, base: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(base).parts)


def discover_runs(runs_dir: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
    """What ``load_trials`` reads under ``runs_dir`` (default ``paths.RUNS_DIR``).

    Returns entries ``{kind, paths, source}``: the release verdict file
    (``<results>/scenarios-detail.json``, source ``published``); raw run roots (folders with a
    ``RUN_PLAN.json``; shards grouped by ``run_id``; source ``reference-policy`` under the
    reference-policies folder, else ``run``); tidy ``*.parquet``/``*.csv``/``*.jsonl`` tables
    outside the results folder and outside run roots; Inspect logs (``*.eval``, timestamped
    ``*.json``; ``analysis.inspect_logs``) there too, one condition each. Raw roots under the
    reference-policies folder are skipped when the runner's tidy ``trials.csv`` is there (it
    holds the same trials).
    """
    base = Path(runs_dir) if runs_dir is not None else project_paths.RUNS_DIR
    results = base / project_paths.RESULTS_DIR.relative_to(project_paths.RUNS_DIR)
    reference = base / project_paths.REFERENCE_RUNS_DIR.relative_to(project_paths.RUNS_DIR)
    found: list[dict[str, Any]] = []
    if not base.is_dir():
        return found
    detail = results / DETAIL_FILENAME
    if detail.is_file():
        found.append({"kind": "detail", "paths": [detail], "source": "published"})

    roots = sorted(
        p.parent
        for p in base.rglob(RUN_PLAN_FILENAME)
        if not _inside(p, results) and not _hidden(p, base)
    )
    reference_tidy = (reference / REFERENCE_TIDY_FILENAME).is_file()
    groups: dict[tuple[str, str], list[Path]] = {}
    for root in roots:
        is_reference = _inside(root, reference)
        if is_reference and reference_tidy:
            continue
        run_id = str(_read_json(root / RUN_PLAN_FILENAME).get("run_id"))
        source = "reference-policy" if is_reference else "run"
        groups.setdefault((run_id, source), []).append(root)
    for (_, source), members in sorted(groups.items()):
        found.append({"kind": "run_root", "paths": members, "source": source})

    for suffix in TIDY_SUFFIXES:
        for table in sorted(base.rglob(f"*{suffix}")):
            if (
                _inside(table, results)
                or _hidden(table, base)
                or any(_inside(table, root) for root in roots)
            ):
                continue
            found.append({"kind": "tidy", "paths": [table], "source": None})

    from analysis.inspect_logs import is_inspect_log

    for log in sorted(p for p in base.rglob("*") if p.is_file() and is_inspect_log(p)):
        if _inside(log, results) or _hidden(log, base) or any(_inside(log, r) for r in roots):
            continue
        found.append({"kind": "inspect", "paths": [log], "source": "run"})
    return found


def _load_entry(entry: dict[str, Any], scenarios: pd.DataFrame | None) -> pd.DataFrame:
    kind, members, source = entry["kind"], entry["paths"], entry["source"]
    if kind == "detail":
        return load_scenarios_detail(members[0], source=source, scenarios=scenarios)
    if kind == "run_root":
        return load_run_root(members, source=source, scenarios=scenarios)
    if kind == "inspect":
        from analysis.inspect_logs import load_inspect_log

        return load_inspect_log(members[0], source=source, scenarios=scenarios)
    return load_tidy(members[0], source=source, scenarios=scenarios)


def _classify(path: Path) -> dict[str, Any]:
    if path.is_dir():
        if (path / RUN_PLAN_FILENAME).is_file():
            return {"kind": "run_root", "paths": [path], "source": "run"}
        raise VerdictError(f"{path}: a folder without {RUN_PLAN_FILENAME} is not a run root")
    from analysis.inspect_logs import is_inspect_log

    if is_inspect_log(path):
        return {"kind": "inspect", "paths": [path], "source": "run"}
    if path.suffix.lower() == ".json":
        return {"kind": "detail", "paths": [path], "source": "published"}
    if path.suffix.lower() in (*TIDY_SUFFIXES, ".ndjson"):
        return {"kind": "tidy", "paths": [path], "source": None}
    raise VerdictError(f"{path}: not a verdict file, run root or tidy table")


def load_trials(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
    *,
    scenarios: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Every trial as one trials table.

    With ``paths`` None, everything ``discover_runs()`` finds under ``paths.RUNS_DIR``;
    otherwise the given verdict files (``*.json``), run roots (folders), tidy tables and
    Inspect logs (``*.eval``, timestamped ``*.json``).
    ``scenarios``, when given, must contain every scenario id.
    """
    if paths is None:
        entries = discover_runs()
    else:
        given = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
        entries = [_classify(Path(p)) for p in given]
    frames = [_load_entry(entry, scenarios) for entry in entries]
    return combine_trials(_once_each(entries, frames))


def _trial_set(frame: pd.DataFrame) -> pd.DataFrame:
    columns = ["scenario_id", "trial", "commit_permission", "status"]
    return frame[columns].astype(str).sort_values(columns[:2], ignore_index=True)


def _once_each(entries: list[dict[str, Any]], frames: list[pd.DataFrame]) -> list[pd.DataFrame]:
    """Each (source, condition) from one place: a run found twice with the same trials (its
    raw root and its tidy export) is counted once; with different trials it is refused,
    naming both places."""
    seen: dict[tuple[str, str], tuple[str, pd.DataFrame]] = {}
    kept = []
    for entry, frame in zip(entries, frames, strict=True):
        where = ", ".join(str(p) for p in entry["paths"])
        parts = []
        for (source, condition), part in frame.groupby(["source", "condition"], observed=True):
            key = (str(source), str(condition))
            if key not in seen:
                seen[key] = (where, _trial_set(part))
                parts.append(part)
                continue
            first, trials = seen[key]
            if not trials.equals(_trial_set(part)):
                raise VerdictError(
                    f"{where}: condition {condition} ({source}) is also in {first} with "
                    "different trials; a run must be read from one place"
                )
        if parts:
            kept.append(pd.concat(parts, ignore_index=True))
    return kept
