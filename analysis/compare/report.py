"""What a comparison says: every table of it (:class:`Comparison`), the summary in short
lines and ``changes.json`` (the page and the files: :mod:`analysis.compare.page`)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd

from analysis.compare.conditions import ALL, UNCHANGED
from analysis.compare.inputs import BuildInputs
from analysis.compare.numbers import SAME_VALUE
from analysis.compare.ranks import SHIFTED, leaders, moved_among_shared
from analysis.corpus.formatting import fraction_texts

#: Table name -> CSV file name.
TABLES = {
    "scenarios": "scenarios.csv",
    "conditions": "conditions.csv",
    "table2": "table2-changes.csv",
    "ranks": "ranks.csv",
    "numbers": "numbers.csv",
    "claims": "claims.csv",
}


@dataclass(frozen=True)
class Comparison:
    """Every table of one comparison, and what it rests on."""

    base: BuildInputs
    head: BuildInputs
    scenarios: pd.DataFrame
    conditions: pd.DataFrame
    table2: pd.DataFrame
    ranks: pd.DataFrame
    numbers: pd.DataFrame
    claims: pd.DataFrame
    basis: str  # how the conditions were compared

    def tables(self) -> dict[str, pd.DataFrame]:
        return {name: getattr(self, name) for name in TABLES}


def _ids(frame: pd.DataFrame, column: str, value: str, key: str) -> list[str]:
    return frame.loc[frame[column] == value, key].astype(str).tolist()


def _named(things: list[str], status: str) -> str:
    """``2 removed (a, b)``: how many ``things`` have ``status`` (the CSV's word), the first
    five named."""
    if not things:
        return f"0 {status}"
    shown = ", ".join(things[:5]) + (f" and {len(things) - 5} more" if len(things) > 5 else "")
    return f"{len(things)} {status} ({shown})"


def _points(value: float) -> str:
    return fraction_texts([value], 1, scale=100)[0]


def _mean_change(comparison: Comparison, label: str, scope: str) -> str | None:
    table = comparison.table2
    row = table.loc[
        (table["condition"] == label)
        & (table["metric"] == "mean_trial_accuracy")
        & (table["scope"] == scope)
    ]
    if row.empty:
        return None
    r = row.iloc[0]
    return f"{_points(r['change'])} points [{_points(r['ci_low'])}, {_points(r['ci_high'])}]"


def _count(series: pd.Series, value: str) -> int:
    return int((series == value).sum())


def summary_lines(comparison: Comparison) -> list[str]:
    """The summary at the top of the page, one short line per part (ready for release
    notes), in the CSV files' words (``added``, ``removed``, ``changed``, ``unchanged``)."""
    c = comparison
    base, head = c.base.build, c.head.build
    lines = [f"Comparing {base.name} ({base.version}) with {head.name} ({head.version})."]
    if nothing_changed(c):
        return [*lines, "Nothing changed."]
    change = c.scenarios["change"]
    changed = c.scenarios.loc[change == "changed"]
    described = [
        f"{r.scenario_id} ({r.fields_changed or 'file only'})" for r in changed.itertuples()
    ]
    lines.append(
        f"Scenarios: {_named(_ids(c.scenarios, 'change', 'added', 'scenario_id'), 'added')}, "
        f"{_named(_ids(c.scenarios, 'change', 'removed', 'scenario_id'), 'removed')}, "
        f"{_named(described, 'changed')}, {_count(change, 'unchanged')} unchanged."
    )
    status = c.conditions
    parts = [
        _named(_ids(status, "status", name, "condition"), name) for name in ("added", "removed")
    ]
    moved = []
    for name in ("re-run", "rescored", "changed"):
        labels = _ids(status, "status", name, "condition")
        if labels:
            parts.append(f"{len(labels)} {name}")
        for label in labels:
            line = f"  {label} ({name}): mean trial accuracy {_mean_change(c, label, ALL)}"
            on_unchanged = _mean_change(c, label, UNCHANGED)
            if on_unchanged:
                line += f", {on_unchanged} on unchanged scenarios"
            moved.append(line)
    parts.append(f"{_count(status['status'], 'unchanged')} unchanged")
    lines.append(f"Conditions: {', '.join(parts)}.")
    lines += moved[:5] + ([f"  and {len(moved) - 5} more"] if len(moved) > 5 else [])
    lines.append(f"Conditions compared by {c.basis}.")
    if not (change == "unchanged").any():
        lines.append("The releases share no unchanged scenario.")
    before, after = leaders(c.ranks)
    if before == after:
        lines.append(f"Leader: {' and '.join(after) or 'none'} in both.")
    else:
        lines.append(f"Leader: {' and '.join(before)} before, {' and '.join(after)} now.")
    ranks = c.ranks
    shared = int(ranks["base_shared_rank"].notna().sum())
    shifted = _count(ranks["rank_note"], SHIFTED)
    moved_ranks = moved_among_shared(ranks)
    apart = int((moved_ranks["rank_sets_overlap"] == False).sum())  # noqa: E712 (object column)
    lines.append(
        f"Ranks among the {shared} shared conditions: {len(moved_ranks)} moved"
        + (f" ({apart} with 95% rank sets that do not overlap)" if len(moved_ranks) else "")
        + "."
    )
    if shifted:
        lines.append(
            f"Table 2 ranks: {shifted} shifted only because conditions were added or removed."
        )
    numbers = c.numbers["status"]
    lines.append(
        f"Cited numbers: {_count(numbers, 'changed')} changed, {_count(numbers, 'added')} added, "
        f"{_count(numbers, 'removed')} removed, {_count(numbers, 'unchanged')} unchanged, "
        f"{_count(numbers, SAME_VALUE)} with the same value on changed inputs."
    )
    if _count(numbers, SHIFTED):
        lines.append(
            f"Cited numbers of unchanged conditions: {_count(numbers, SHIFTED)} moved only "
            "because conditions were added or removed (their ranks and rank sets)."
        )
    lines.append(f"Claims: {int(c.claims['verdict_changed'].sum())} verdicts changed.")
    return lines


def summary(comparison: Comparison) -> str:
    """:func:`summary_lines`, one per line."""
    return "\n".join(summary_lines(comparison))


def nothing_changed(c: Comparison) -> bool:
    """Whether the two releases give the same scenarios, conditions and numbers."""
    return (
        (c.scenarios["change"] == "unchanged").all()
        and (c.conditions["status"] == "unchanged").all()
        and (c.numbers["status"] == "unchanged").all()
        and not c.claims["verdict_changed"].any()
        and not c.ranks["rank_change"].fillna(1).ne(0).any()
    )


def _release(inputs: BuildInputs) -> dict:
    b = inputs.build
    return {
        "release_dir": str(b.release_dir),
        "version": b.version,
        "release_digest": b.digest,
        "build": str(b.folder),
    }


def _records(frame: pd.DataFrame) -> list[dict]:
    return json.loads(frame.to_json(orient="records"))


def changes_document(c: Comparison) -> dict:
    """``changes.json``: the summary and every change, machine-readable."""
    scenarios = c.scenarios
    status = c.conditions
    before, after = leaders(c.ranks)
    return {
        "base": _release(c.base),
        "head": _release(c.head),
        "summary": summary(c),
        "summary_lines": summary_lines(c),
        "nothing_changed": bool(nothing_changed(c)),
        "conditions_compared_by": c.basis,
        "scenarios": {
            "added": _ids(scenarios, "change", "added", "scenario_id"),
            "removed": _ids(scenarios, "change", "removed", "scenario_id"),
            "changed": _records(
                scenarios.loc[scenarios["change"] == "changed", ["scenario_id", "fields_changed"]]
            ),
            "unchanged": int((scenarios["change"] == "unchanged").sum()),
        },
        "conditions": {
            name: _ids(status, "status", name, "condition")
            for name in ("added", "removed", "re-run", "rescored", "changed", "unchanged")
        },
        "table2": _records(c.table2),
        "leader": {"base": before, "head": after},
        "rank_changes": _records(c.ranks.loc[c.ranks["rank_change"].fillna(1) != 0]),
        "numbers": _records(c.numbers.loc[c.numbers["status"] != "unchanged"]),
        "numbers_unchanged": int((c.numbers["status"] == "unchanged").sum()),
        "claims": _records(c.claims.loc[c.claims["verdict_changed"]]),
    }
