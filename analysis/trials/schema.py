"""The trials table: its columns and dtypes, and the checks every reader's rows pass.

The trials table (``TRIAL_COLUMNS``) has one row per (source, scenario, condition, trial):

``scenario_id`` (category)
    The scenario's id.
``condition`` (category)
    The condition's name, ``condition_label(model, reasoning)``, for example
    ``"gpt-5.4-nano (off)"`` or ``"kimi-k2.6 (on (provider default))"``. The release's verdict
    file shortens a reasoning that starts with "on" to ``on``; once its trials are checked
    against the leaderboard (:func:`analysis.scoring.crosscheck.load_checked_cells`), they carry
    the leaderboard's name.
``model``, ``reasoning`` (category)
    The model and its reasoning setting.
``trial`` (int64)
    The trial number, 1..n within the cell.
``commit_permission`` (``GATE_DTYPE``)
    ``allowed`` / ``blocked``; NaN when the trial gave no decision.
``status`` (category)
    One of ``vocabulary.STATUSES`` (``ok`` when the layout records none).
``source`` (``vocabulary.SOURCE_DTYPE``)
    ``published`` (the release's verdict file), ``reference-policy`` or ``run``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from analysis.corpus.vocabulary import (
    GATE_DTYPE,
    GATES,
    PROVIDER_FILTERED,
    SOURCE_DTYPE,
    SOURCES,
    STATUSES,
    condition_label,
)
from analysis.files.typed import cut, shown

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

_REQUIRED_TIDY = ("scenario_id", "model", "reasoning", "trial", "commit_permission")
_SHOW = 5


class VerdictError(ValueError):
    """A verdict file or table that cannot be read as trials; the message names the file."""


class UnknownScenarioError(VerdictError):
    """Trials of ``origin`` name scenarios the scenarios table lacks (``unknown``, sorted)."""

    def __init__(self, origin: str, unknown: list[str]) -> None:
        self.origin, self.unknown = origin, unknown
        super().__init__(
            f"{origin}: {len(unknown)} scenario id(s) not in the scenarios table: "
            + ", ".join(shown(sid) for sid in unknown[:_SHOW])
        )


@functools.lru_cache(maxsize=4096)  # one label per condition, met once per trial
@functools.lru_cache(maxsize=1 << 16)  # a verdict file names each condition in every scenario
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
        raise ValueError(
            f"condition label {shown(label)} is not of the form '<model> (<reasoning>)'"
        )
    return model, label[opening + 1 : -1]


STATUS_DTYPE = pd.CategoricalDtype(list(STATUSES))


def _where(df: pd.DataFrame, position: int) -> str:
    """A row of ``df`` named for a person: ``row n (scenario 'x', model (reasoning), trial
    t)``, counting rows from 1 as a table's reader does."""
    row = df.iloc[position]
    return (
        f"row {position + 1} (scenario {shown(row['scenario_id'])}, {cut(row['model'])} "
        f"({cut(row['reasoning'])}), trial {cut(row['trial'])})"
    )


def _check_statuses(status: pd.Series, df: pd.DataFrame, origin: str) -> pd.Categorical:
    """The statuses as a categorical of ``STATUSES``; any other value is refused, naming the
    first row that has it (a status the scoring does not know cannot be scored)."""
    text = text_categorical(status)
    if set(text.categories) <= set(STATUSES) and not (text.codes < 0).any():
        return pd.Categorical(text, dtype=STATUS_DTYPE)
    values = status.astype(str)
    unknown = ~values.isin(STATUSES).to_numpy()
    if unknown.any():
        first = int(np.flatnonzero(unknown)[0])
        others = sorted(set(values[unknown]))
        more = (
            f" ({len(others)} unknown values in {int(unknown.sum())} rows)"
            if unknown.sum() > 1
            else ""
        )
        raise VerdictError(
            f"{origin}: {_where(df, first)}: status {shown(values.iloc[first])} is not one of "
            f"{', '.join(STATUSES)}{more}"
        )
    return pd.Categorical(values, dtype=STATUS_DTYPE)


def _cell_name(key: Sequence[Any]) -> str:
    source, scenario, condition = key
    return f"{scenario} / {condition} [{source}]"


def _check_permissions(df: pd.DataFrame, origin: str) -> pd.Categorical:
    perm = df["commit_permission"]
    if isinstance(perm.dtype, pd.CategoricalDtype) and list(perm.cat.categories) == list(GATES):
        return perm.array
    values = perm.astype(object)
    null = values.isna().to_numpy()
    found = pd.Categorical(values)
    if set(found.categories) <= set(GATES):  # every value a gate or missing
        return pd.Categorical(found, dtype=GATE_DTYPE)
    present = values[~null].astype(str)
    bad = ~present.isin(GATES).to_numpy()
    if bad.any():
        bad_values = ", ".join(shown(v) for v in sorted(present[bad].unique())[:_SHOW])
        where = df.loc[present.index[bad][0]]
        raise VerdictError(
            f"{origin}: unknown commit_permission value(s) {bad_values} "
            f"(allowed: {', '.join(GATES)} or null), first at scenario "
            f"{shown(where['scenario_id'])}, trial {cut(where['trial'])}"
        )
    out = values.where(~null, None)
    return pd.Categorical(out, dtype=GATE_DTYPE)


def _check_trial_numbers(df: pd.DataFrame, origin: str) -> np.ndarray:
    trial = pd.to_numeric(df["trial"], errors="coerce")
    as_float = trial.to_numpy(dtype="float64", na_value=np.nan)
    bad = np.isnan(as_float) | (as_float < 1) | (as_float != np.floor(as_float))
    if bad.any():
        raw = df["trial"].iloc[int(np.flatnonzero(bad)[0])]
        raise VerdictError(f"{origin}: trial numbers must be integers >= 1; found {shown(raw)}")
    return as_float.astype("int64")


def _conditions(model: pd.Categorical, reasoning: pd.Categorical) -> pd.Categorical:
    """Each row's condition label, made once for each (model, reasoning) pair present."""
    pair = model.codes.astype("int64") * len(reasoning.categories) + reasoning.codes
    present, row_pair = np.unique(pair, return_inverse=True)
    models, settings = np.divmod(present, len(reasoning.categories))
    labels = [
        condition_label(model.categories[m], reasoning.categories[r])
        for m, r in zip(models, settings, strict=True)
    ]
    return text_categorical(pd.Series(labels, dtype=object))[row_pair]


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
    unknown = sorted(set(pd.Series(df["scenario_id"].unique()).astype(str)) - known)
    if unknown:
        raise UnknownScenarioError(origin, unknown)


_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no", "", "nan", "none"}


def _flag_values(column: pd.Series, origin: str, df: pd.DataFrame) -> np.ndarray:
    """A boolean ``provider_filtered`` column read from any tidy format (bools, 0/1, text)."""
    text = column.astype(object).where(column.notna(), "").astype(str).str.strip().str.lower()
    bad = ~text.isin(_TRUE | _FALSE)
    if bad.any():
        first = df.loc[bad[bad].index[0]]
        raise VerdictError(
            f"{origin}: scenario {shown(first['scenario_id'])}, {first['model']} "
            f"({first['reasoning']}), trial {first['trial']}: provider_filtered: "
            f"{shown(column[bad].iloc[0])} is not true or false"
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
                f"{origin}: scenario {shown(first['scenario_id'])}, {first['model']} "
                f"({first['reasoning']}), trial {first['trial']}: provider_filtered "
                f"{shown(first['provider_filtered'])} contradicts status {shown(first['status'])}"
            )
    return status.where(~flag, PROVIDER_FILTERED)


def text_categorical(values: pd.Series) -> pd.Categorical:
    """``pd.Categorical(values.astype(str))``, without turning every row into a string: a
    categorical whose categories are texts in order already keeps its codes, and other
    texts are converted once for each distinct value (half a million trials hold a few
    hundred labels). Values other than text go the long way: a number and a text can be
    equal (``1 == 1.0``) and still print differently."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        categories = values.cat.categories
        if categories.dtype == "str" and categories.is_monotonic_increasing:
            return values.cat.remove_unused_categories().array
    array = values.to_numpy(dtype=object)
    if set(map(type, array)) != {str}:
        return pd.Categorical(values.astype(str))
    codes, distinct = pd.factorize(array)
    text = pd.Categorical(pd.Index(distinct, dtype=object).astype(str))
    return pd.Categorical.from_codes(text.codes[codes], dtype=text.dtype)


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
            f"{origin}: unknown source(s) {', '.join(map(shown, unknown_sources))}; "
            f"known: {', '.join(SOURCES)}"
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
    model = text_categorical(df["model"])
    reasoning = text_categorical(df["reasoning"])

    out = pd.DataFrame(
        {
            "scenario_id": text_categorical(df["scenario_id"]),
            "condition": _conditions(model, reasoning),
            "model": model,
            "reasoning": reasoning,
            "trial": trial,
            "commit_permission": permission,
            "status": _check_statuses(status, df, origin),
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
    if all(_is_trials_table(f) for f in frames):
        return _stacked(frames, origin)
    plain = pd.concat(
        [f.astype({c: object for c in TRIAL_COLUMNS if c != "trial"}) for f in frames],
        ignore_index=True,
    )
    return normalize_trials(plain, origin=origin, check_counts=False)


#: The dtypes of a trials table's closed-set columns.
_FIXED_DTYPES = {"commit_permission": GATE_DTYPE, "status": STATUS_DTYPE, "source": SOURCE_DTYPE}
#: A trials table's columns whose categories are the values it holds, sorted.
_OWN_CATEGORIES = ("scenario_id", "condition", "model", "reasoning")


def _is_trials_table(frame: pd.DataFrame) -> bool:
    """Whether ``frame`` is a table :func:`normalize_trials` returns: its columns and dtypes,
    every label present, each condition named from its model and reasoning (what
    normalizing it again would check or make)."""
    if list(frame.columns) != list(TRIAL_COLUMNS) or frame["trial"].dtype != "int64":
        return False
    if any(frame[c].dtype != dtype for c, dtype in _FIXED_DTYPES.items()):
        return False
    for column in _OWN_CATEGORIES:
        values = frame[column]
        if not isinstance(values.dtype, pd.CategoricalDtype) or (values.cat.codes < 0).any():
            return False
        categories = values.cat.categories
        if not categories.is_monotonic_increasing or categories.dtype != "str":
            return False
    if (frame["trial"] < 1).any():
        return False
    named = frame[["condition", "model", "reasoning"]].drop_duplicates()
    return all(
        condition == condition_label(model, reasoning)
        for condition, model, reasoning in named.itertuples(index=False)
    )


def _stacked(frames: Sequence[pd.DataFrame], origin: str) -> pd.DataFrame:
    """Trials tables stacked as :func:`combine_trials` would normalize them, without going
    through their values again: each label column's categories merged and sorted."""
    columns = {}
    for column in TRIAL_COLUMNS:
        parts = [f[column] for f in frames]
        if column in _OWN_CATEGORIES:
            merged = pd.api.types.union_categoricals(parts, sort_categories=True)
            columns[column] = merged
        else:
            columns[column] = pd.concat(parts, ignore_index=True)
    out = pd.DataFrame(columns)
    _check_duplicates(out, origin)
    return out.sort_values([*CELL_KEYS, "trial"], ignore_index=True)
