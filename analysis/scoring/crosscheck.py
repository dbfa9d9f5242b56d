"""The per-trial cross-check: published per-trial verdicts must reproduce the leaderboard and their
own cell records.

Two checks, both stopping the build on any difference:

- every leaderboard string the per-trial verdicts determine (mean trial accuracy, modal
  accuracy and pass5 with their Wilson intervals, under- and over-refusal, weighted miss) is
  printed again from the per-trial counts and compared, with the counts behind it;
- every cell record of ``scenarios-detail.json`` (``n_trials``, ``n_correct``, ``correct``,
  ``modal_decision``, ``modal_count``, ``split``, ``pass_all``, ``unanimous``,
  ``provider_filtered``, ``modal_scored``, ``directionally_scored``) is
  compared with what its own trials give.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from operator import itemgetter
from pathlib import Path
from typing import Any

import pandas as pd

from analysis import paths
from analysis.corpus.formatting import count_text, percent_text, weighted_miss_text
from analysis.corpus.vocabulary import as_text, condition_label, verdict_file_labels
from analysis.files.reading import collector_paused, json_read_once
from analysis.files.schemas import SCENARIOS_DETAIL_CELLS
from analysis.files.typed import read_typed
from analysis.scoring.breakdowns import POOL_OF, pool_cells, pool_summary
from analysis.scoring.leaderboard import (
    FROM_VERDICTS,
    UNDETERMINED,
    CrossCheckError,
    expected_strings,
    interval_text,
    weighted_miss_listing,
)
from analysis.scoring.rules import condition_scores, record_correct, score_cells
from analysis.trials import discover_runs, load_trials, split_condition_label
from analysis.trials.discovery import NoPublishedVerdictsWarning

PUBLISHED = "published"

#: Each compared count: (leaderboard field, numerator column, denominator column or None).
FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("mean_trial_accuracy", "n_trials_correct", "n_trials"),
    ("modal_accuracy", "n_modal_correct", "n_cells"),
    ("pass5", "n_pass5", None),
    ("under_refusal", "n_under_refusals", "n_hold_opportunities"),
    ("over_refusal", "n_over_refusals", "n_proceed_opportunities"),
)


def _shown(row: Mapping[str, Any], k: str, n: str | None) -> str:
    return f"{int(row[k])}/{int(row[n])}" if n else f"{int(row[k])}"


def per_trial_strings(row: Mapping[str, Any]) -> dict[str, str]:
    """The leaderboard strings one condition's per-trial counts print as (a row of
    :func:`condition_scores`, by column); fields whose denominator is empty (a condition
    with no decisions) are left out."""
    out: dict[str, str] = {}
    if row["n_trials"]:
        out["mean_trial_accuracy"] = percent_text(row["n_trials_correct"], row["n_trials"])
        out["mean_trial_accuracy_ci95"] = interval_text(row["n_trials_correct"], row["n_trials"])
    if row["n_cells"]:
        out["modal_accuracy"] = count_text(row["n_modal_correct"], row["n_cells"])
        out["modal_accuracy_ci95"] = interval_text(row["n_modal_correct"], row["n_cells"])
        out["pass5"] = percent_text(row["n_pass5"], row["n_cells"])
        out["pass5_ci95"] = interval_text(row["n_pass5"], row["n_cells"])
    for field, k, n in (
        ("under_refusal", "n_under_refusals", "n_hold_opportunities"),
        ("over_refusal", "n_over_refusals", "n_proceed_opportunities"),
    ):
        if row[n]:
            out[field] = count_text(row[k], row[n], whole_bare=True)
    if row["weight_scored"]:
        out["weighted_miss"] = weighted_miss_text(row["weight_missed"], row["weight_scored"])
    return out


def _rows_by_condition(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """``frame``'s rows as dicts of Python values, ``condition`` as text (a dict per row:
    a leaderboard of 1,000 conditions is compared without pandas boxing each value)."""
    columns = {column: frame[column].tolist() for column in frame.columns}
    columns["condition"] = _texts(frame["condition"])
    rows = zip(*columns.values(), strict=True)
    return [dict(zip(columns, values, strict=True)) for values in rows]


def check_trials_against_leaderboard(scores: pd.DataFrame, conditions: pd.DataFrame) -> list[str]:
    """Compare per-trial condition scores of source ``published`` with the leaderboard rows
    of the same ``condition``: each count (mean trial accuracy, modal accuracy, pass5, under-
    and over-refusal) and each printed string, weighted miss included; one line per differing
    field naming the row and both values. A published per-trial condition absent from the
    leaderboard, or a leaderboard row absent from the per-trial verdicts, is one line too."""
    published = _rows_by_condition(scores.loc[as_text(scores["source"]) == PUBLISHED])
    board = {row["condition"]: row for row in _rows_by_condition(conditions)}
    printed_from = expected_strings if "weighted_miss_fit" in conditions.columns else None
    problems = []
    for row in sorted(published, key=lambda row: row["condition"]):
        name = row["condition"]
        if name not in board:
            problems.append(f"{name}: per-trial verdicts name a condition not on the leaderboard")
            continue
        expected = board[name]
        label = expected.get("label", name)
        flagged = set()
        for field, k, n in FIELDS:
            columns = [k] if n is None else [k, n]
            if any(int(row[c]) != int(expected[c]) for c in columns):
                flagged.add(field)
                problems.append(
                    f"{label}: {field} ({'/'.join(columns)}): published "
                    f"{_shown(expected, k, n)}, recomputed from per-trial verdicts "
                    f"{_shown(row, k, n)}"
                )
        printed = (printed_from or per_trial_strings)(expected)
        for field, recomputed in per_trial_strings(row).items():
            if field.removesuffix("_ci95") in flagged:
                continue
            if field in printed and printed[field] != recomputed:
                problems.append(
                    f"{label}: {field}: published {printed[field]!r}, recomputed from "
                    f"per-trial verdicts {recomputed!r}"
                )
    if published:
        for name in sorted(set(board) - {row["condition"] for row in published}):
            label = board[name].get("label", name)
            problems.append(f"{label}: on the leaderboard but not in the per-trial verdicts")
    return problems


def require_consistent(
    scores: pd.DataFrame, conditions: pd.DataFrame, source: str = "per-trial verdicts"
) -> None:
    """Raise :class:`CrossCheckError` when ``check_trials_against_leaderboard`` finds any
    difference."""
    problems = check_trials_against_leaderboard(scores, conditions)
    if problems:
        raise CrossCheckError(source, problems)


def settle_weighted_miss(conditions: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """``conditions`` (:func:`analysis.scoring.leaderboard.load_conditions`) with each weighted-miss
    count the leaderboard leaves open (several counts print as its string) taken from the
    published per-trial verdicts in ``cells``: ``weight_missed``, ``weight_scored``,
    ``weighted_miss_fit`` and ``weighted_miss_counts`` become that count and
    ``weighted_miss_from`` says :data:`~analysis.scoring.leaderboard.FROM_VERDICTS`. A condition
    with no published per-trial verdicts keeps its candidates. The verdicts' count must be one of
    the candidates (:class:`CrossCheckError` naming the condition otherwise)."""
    published = cells.loc[cells["source"].astype(str) == PUBLISHED]
    open_rows = conditions["weighted_miss_from"].astype(str) == UNDETERMINED
    if published.empty or not open_rows.any():
        return conditions
    scores = condition_scores(published)
    counts = {
        str(c): (int(m), int(t))
        for c, m, t in zip(
            scores["condition"], scores["weight_missed"], scores["weight_scored"], strict=True
        )
    }
    out = conditions.copy()
    out["weighted_miss_from"] = out["weighted_miss_from"].astype(object)
    problems = []
    for index in out.index[open_rows.to_numpy()]:
        row = out.loc[index]
        count = counts.get(str(row["condition"]))
        if count is None:
            continue
        if count not in row["weighted_miss_fits"]:
            problems.append(
                f"{row['label']}: weighted_miss: the per-trial verdicts give {count[0]}/"
                f"{count[1]}, not one of the counts the leaderboard's string fits "
                f"({row['weighted_miss_counts']})"
            )
            continue
        out.at[index, "weight_missed"], out.at[index, "weight_scored"] = count
        out.at[index, "weighted_miss_fit"] = count
        out.at[index, "weighted_miss_fits"] = (count,)
        out.at[index, "weighted_miss_counts"] = weighted_miss_listing([count])
        out.at[index, "weighted_miss_from"] = FROM_VERDICTS
    if problems:
        raise CrossCheckError("per-trial verdicts against leaderboard.json", problems)
    return out


# --------------------------------------------------------------------------------------------
# Cell records of scenarios-detail.json against their own trials
# --------------------------------------------------------------------------------------------


#: The cell-level fields a verdict record states, and the ``score_cells`` column of each
#: (``record_correct``: :func:`analysis.scoring.rules.record_correct`, null without a modal
#: decision).
_STATED = {
    "n_trials": "n_trials",
    "n_correct": "n_correct",
    "correct": "record_correct",
    "modal_decision": "modal_decision",
    "modal_count": "modal_count",
    "pass_all": "pass_all",
    "unanimous": "unanimous",
    "provider_filtered": "provider_filtered",
    "modal_scored": "modal_scored",
    "directionally_scored": "directionally_scored",
}
#: The sides of a record's ``split`` object (a missing side counts as 0), and their columns.
_STATED_SPLIT = {"allowed": "n_allowed", "blocked": "n_blocked"}


#: A field a record does not state (a missing field is not compared; null is a value).
_ABSENT = object()
#: The kinds of stated value equal to a computed one of the same kind and value.
_KINDS = frozenset({int, bool, str, type(None)})


def _stated_columns(records: list[dict[str, Any]]) -> list[tuple[str, str, list[Any]]]:
    """The cell-level fields ``records`` state, one column each: (field, score_cells
    column, the value each record states or ``_ABSENT``)."""
    fields = list(_STATED)
    try:  # every record states every field, as the release writes them: read once each
        stated = zip(*map(itemgetter(*fields), records), strict=True)
        by_field = [list(values) for values in stated]
    except KeyError:
        by_field = [[record.get(field, _ABSENT) for record in records] for field in fields]
    by_field = by_field or [[] for _ in fields]
    columns = [
        (field, column, stated)
        for (field, column), stated in zip(_STATED.items(), by_field, strict=True)
    ]
    splits = [record.get("split") for record in records]
    for side, column in _STATED_SPLIT.items():
        stated = [s.get(side, 0) if isinstance(s, dict) else _ABSENT for s in splits]
        columns.append((f"split.{side}", column, stated))
    return columns


def _same(stated: Any, computed: Any) -> bool:
    """Equal in value and kind: a stated ``1`` is not ``True``, a stated ``None`` only null."""
    if computed is None or isinstance(computed, (bool, str)):
        return stated is computed if not isinstance(computed, str) else stated == computed
    return not isinstance(stated, bool) and isinstance(stated, int) and stated == int(computed)


def _texts(column: pd.Series) -> list[str]:
    """A column's values as Python strings (converted in one step, not one at a time)."""
    return as_text(column).to_numpy(dtype=object).tolist()


def check_cell_records(path: str | Path, cells: pd.DataFrame) -> list[str]:
    """Each cell record of the verdict file at ``path`` against the ``published`` cells scored
    from its trials; one line per differing field, in the file's order: ``<file>:
    <condition> / <scenario>: <field>: stated X, its trials give Y``. Compared a field at a
    time: at 224 conditions the file holds some 24,000 records."""
    path = Path(path)
    doc = read_typed(path, SCENARIOS_DETAIL_CELLS)
    mine = cells.loc[as_text(cells["source"]) == PUBLISHED].copy()
    mine["record_correct"] = record_correct(mine)
    keys = zip(*(_texts(mine[column]) for column in ("scenario_id", "condition")), strict=True)
    row_of = {key: row for row, key in enumerate(keys)}
    records, rows, cells_of = [], [], []
    conditions: dict[str, str] = {}  # each label the file writes, as its condition
    for scenario in doc.get("scenarios") or []:
        sid = str(scenario.get("id"))
        for record in scenario.get("model_verdicts") or []:
            label = str(record.get("model"))
            condition = conditions.get(label)
            if condition is None:
                condition = conditions[label] = condition_label(*split_condition_label(label))
            key = (sid, condition)
            row = row_of.get(key)
            if row is not None:
                records.append(record)
                rows.append(row)
                cells_of.append(key)
    found = []
    for order, (field, column, stated) in enumerate(_stated_columns(records)):
        values = mine[column].astype(object)
        computed = values.where(values.notna(), None).tolist()  # a missing value is null
        aligned = list(map(computed.__getitem__, rows))
        kinds = list(map(type, stated))
        if stated == aligned and kinds == list(map(type, aligned)) and set(kinds) <= _KINDS:
            continue  # every record states this field, each the same value of the same kind
        for index, (said, row) in enumerate(zip(stated, rows, strict=True)):
            value, kind = computed[row], type(said)
            if said is _ABSENT or (kind is type(value) and kind in _KINDS and said == value):
                continue  # not stated, or the same value of the same kind
            if not _same(said, value):
                found.append((index, order, field, said, value))
    return [
        f"{path.name}: {cells_of[index][1]} / {cells_of[index][0]}: {field}: stated {said!r}, "
        f"its trials give {value!r}"
        for index, _, field, said, value in sorted(found, key=lambda item: item[:2])
    ]


# --------------------------------------------------------------------------------------------
# Loading with the cross-check
# --------------------------------------------------------------------------------------------


def verdict_inputs(
    verdict_paths: Sequence[str | Path] | None, runs_dir: Path | None = None
) -> list[Path]:
    """The verdict files and folders ``load_trials(verdict_paths, runs_dir=runs_dir)`` reads."""
    if verdict_paths is None:
        return [p for entry in discover_runs(runs_dir) for p in entry["paths"]]
    return [Path(p) for p in verdict_paths]


def _detail_files(
    verdict_paths: Sequence[str | Path] | None, runs_dir: Path | None = None
) -> list[Path]:
    """The release-format verdict files among the inputs (not Inspect logs or tidy tables)."""
    if verdict_paths is None:
        found = discover_runs(runs_dir)
        return [p for entry in found if entry["kind"] == "detail" for p in entry["paths"]]
    from analysis.trials.inspect_log import is_inspect_log

    return [
        Path(p)
        for p in verdict_paths
        if Path(p).is_file() and Path(p).suffix.lower() == ".json" and not is_inspect_log(Path(p))
    ]


def load_checked_cells(
    scenarios: pd.DataFrame,
    verdict_paths: Sequence[str | Path] | None = None,
    results_dir: Path | None = None,
    pool: Sequence[str] | None = None,
    runs_dir: Path | None = None,
    conditions: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The trials and scored cells of every verdict found, checked against the release.

    When published per-trial verdicts are among them, their cell records must match their
    trials and their counts the published leaderboard. The cells come pooled by
    :func:`analysis.scoring.breakdowns.pool_cells`: ``source`` names each cell's pool (the
    published conditions together, the conditions named in ``pool`` together, any other
    alone).

    Parameters
    ----------
    scenarios : DataFrame
        The scenario table (:func:`load_scenarios`).
    verdict_paths : sequence of str or Path, optional
        The verdict files, run roots or tidy tables to read (as :func:`load_trials` reads
        them). None: every verdict found under ``runs_dir``.
    results_dir : Path, optional
        The release's results folder, for the published counts. None:
        ``paths.results_dir()``.
    pool : sequence of str, optional
        Conditions (or sources) to pool together, as the published ones are.
    runs_dir : Path, optional
        The runs folder searched when ``verdict_paths`` is None. None: ``paths.runs_dir()``.
    conditions : DataFrame, optional
        The published conditions the counts are checked against, when the caller has
        loaded them already. None: ``load_conditions(scenarios, results_dir)``.

    Returns
    -------
    trials : DataFrame
        Every trial read, as :func:`load_trials` returns them.
    cells : DataFrame
        One row per (source, scenario, condition) cell, as :func:`score_cells` returns them,
        ``source`` naming the cell's pool and ``pool_of`` its original source.

    Raises
    ------
    CrossCheckError
        Published per-trial verdicts whose cells or counts disagree with the release.

    See Also
    --------
    load_trials : The trials alone, unchecked.
    score_cells : The scoring of one trials table.
    mirror_gap, hardest_scenarios, sensitivity_table : Tables read from these cells.

    Examples
    --------
    On the imported release: one row per (source, scenario, condition) cell.

    >>> from analysis import load_scenarios
    >>> trials, cells = load_checked_cells(load_scenarios())
    >>> int(cells.groupby(["source", "scenario_id", "condition"], observed=True).size().max())
    1
    >>> cells.groupby("source", observed=True)["n_correct"].sum()
    source
    reference-policy: always-hold (policy)       250
    reference-policy: always-proceed (policy)    280
    reference-policy: surface-flag (policy)      430
    run: gpt-5.4-mini (off)                        5
    Name: n_correct, dtype: int64
    """
    # A verdict file is parsed once, for its trials and its records, with the collector
    # paused (millions of objects, freed by reference counting; see collector_paused).
    with json_read_once(), collector_paused():
        with warnings.catch_warnings():  # source_summary says so, beside the pools
            warnings.simplefilter("ignore", NoPublishedVerdictsWarning)
            trials = load_trials(verdict_paths, runs_dir=runs_dir, scenarios=scenarios)
        cells = score_cells(trials, scenarios)
        if (as_text(cells["source"]) == PUBLISHED).any():
            from analysis.scoring.leaderboard import load_conditions

            problems = []
            details = _detail_files(verdict_paths, runs_dir)
            for path in details:
                problems += check_cell_records(path, cells)
            if problems:
                raise CrossCheckError(", ".join(map(str, details)), problems)
            if conditions is None:
                conditions = load_conditions(scenarios, results_dir)
            names = published_names(conditions)
            trials, cells = with_published_names(trials, names), with_published_names(cells, names)
            board = Path(results_dir or paths.results_dir()) / "leaderboard.json"
            verdicts = ", ".join(map(str, details)) or "the published per-trial verdicts"
            compared = f"{verdicts} against {board}"
            require_consistent(condition_scores(cells), conditions, compared)
    return trials, pool_cells(cells, pool)


def published_names(conditions: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """The published conditions by the label the verdict file gives them: ``{"kimi-k2.6
    (on)": ("kimi-k2.6 (on (provider default))", "on (provider default)")}`` (the label and
    reasoning of the leaderboard). Two rows the verdict file writes alike are refused: their
    verdicts cannot be told apart."""
    rows = list(
        zip(conditions["model"].astype(str), conditions["reasoning"].astype(str), strict=True)
    )
    try:
        written = verdict_file_labels(rows)
    except ValueError as error:
        raise CrossCheckError("leaderboard.json", [str(error)]) from None
    return {written[row]: (condition_label(*row), row[1]) for row in rows}


def with_published_names(frame: pd.DataFrame, names: dict[str, tuple[str, str]]) -> pd.DataFrame:
    """Trials or cells whose published conditions carry the leaderboard's name and reasoning
    (the verdict file shortens a reasoning that starts with "on"); others are unchanged."""
    published = (as_text(frame["source"]) == PUBLISHED).to_numpy()
    condition = as_text(frame["condition"])
    renamed = {
        written: names[written]
        for written in condition[published].unique()
        if written in names and names[written][0] != written
    }
    if not renamed:
        return frame
    out = frame.copy()
    for column, part in (("condition", 0), ("reasoning", 1)):
        values = as_text(out[column])
        new = condition.map({w: name[part] for w, name in renamed.items()})
        out[column] = pd.Categorical(values.where(~(published & new.notna()), new))
    return out


def source_summary(cells: pd.DataFrame) -> str:
    """Which conditions the analysis runs on, and how they are pooled, in a few lines."""
    pooled = pool_cells(cells)
    published = (as_text(pooled[POOL_OF]) == PUBLISHED).any()
    head = (
        "Published per-trial verdicts present (cross-check passed)."
        if published
        else "No published per-trial verdicts present."
    )
    return f"{head} Pools (each table and figure keeps them apart):\n{pool_summary(pooled)}"
