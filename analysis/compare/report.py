"""The comparison's outputs: a one-paragraph summary, ``changes.json``, CSV tables and one
self-contained HTML page."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis.compare.bounds import BOUND_METHOD
from analysis.compare.inputs import BuildInputs
from analysis.compare.ranks import leaders
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


def _named(things: list[str], noun: str) -> str:
    if not things:
        return f"no {noun}s"
    shown = ", ".join(things[:5]) + (f" and {len(things) - 5} more" if len(things) > 5 else "")
    return f"{len(things)} {noun}{'s' if len(things) != 1 else ''} ({shown})"


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


def summary(comparison: Comparison) -> str:
    """The paragraph at the top of the page: what changed, ready for release notes."""
    c = comparison
    base, head = c.base.build, c.head.build
    parts = [f"Comparing {base.name} ({base.version}) with {head.name} ({head.version}):"]
    changed = c.scenarios.loc[c.scenarios["change"] == "changed"]
    described = [
        f"{r.scenario_id} ({r.fields_changed or 'file only'})" for r in changed.itertuples()
    ]
    added = _ids(c.scenarios, "change", "added", "scenario_id")
    removed = _ids(c.scenarios, "change", "removed", "scenario_id")
    parts.append(
        f"scenarios: {_named(added, 'added scenario')}, "
        f"{_named(removed, 'removed scenario')}, "
        f"{_named(described, 'changed scenario')};"
    )
    if not (c.scenarios["change"] == "unchanged").any():
        parts.append("the releases share no unchanged scenario;")
    status = c.conditions
    words = []
    for name, noun in (
        ("added", "added condition"),
        ("removed", "removed condition"),
        ("re-run", "re-run condition"),
        ("rescored", "rescored condition"),
        ("changed", "condition with changed counts"),
    ):
        labels = _ids(status, "status", name, "condition")
        if name in ("re-run", "rescored", "changed"):
            labels = [
                f"{label}: mean trial accuracy {_mean_change(c, label, 'all scenarios')}"
                + (
                    f", {_mean_change(c, label, 'unchanged scenarios')} on unchanged scenarios"
                    if _mean_change(c, label, "unchanged scenarios")
                    else ""
                )
                for label in labels
            ]
        if labels or name in ("added", "removed"):
            words.append(_named(labels, noun))
    unchanged = len(_ids(status, "status", "unchanged", "condition"))
    parts.append(f"conditions ({c.basis}): {', '.join(words)}, {unchanged} unchanged;")
    before, after = leaders(c.ranks)
    if before == after:
        parts.append(f"the leader is {' and '.join(after) or 'none'} in both;")
    else:
        parts.append(f"the leader changed from {' and '.join(before)} to {' and '.join(after)};")
    moved = c.ranks.loc[c.ranks["rank_change"].fillna(0) != 0]
    apart = int((moved["rank_sets_overlap"] == False).sum())  # noqa: E712 (object column)
    among = int((c.ranks["shared_rank_change"].fillna(0) != 0).sum())
    parts.append(
        f"{len(moved)} shared condition{'s' if len(moved) != 1 else ''} changed Table 2 rank"
        + (f" ({apart} with 95% rank sets that do not overlap)" if len(moved) else "")
        + f", {among} among the conditions in both releases;"
    )
    status = c.numbers["status"]
    parts.append(
        f"of {len(status)} cited numbers, {(status == 'changed').sum()} changed value, "
        f"{(status == 'added').sum()} are new, {(status == 'removed').sum()} are gone, "
        f"{(status == 'same value, inputs changed').sum()} kept their value on changed inputs "
        f"and {(status == 'unchanged').sum()} are unchanged; "
        f"{int(c.claims['verdict_changed'].sum())} claim verdicts changed."
    )
    if nothing_changed(c):
        parts = [parts[0], "nothing changed."]
    return " ".join(parts)


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


#: The clustered bound's columns as the page heads them (the CSV keeps the full names).
SHORT_BOUND_COLUMNS = {
    "design_effect_min_base": "deff_min_base",
    "design_effect_min_head": "deff_min_head",
    "clustered_bound_low": "bound_low",
    "clustered_bound_high": "bound_high",
    "clustered_bound_note": "bound",
}

STATUS_NOTE = (
    "re-run: its per-trial verdicts on the shared scenarios (or its trials per cell) differ; "
    "rescored: the same verdicts, scored on changed scenarios; changed: only counts are "
    "published, so the two cannot be told apart."
)

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:75em;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}
th,td{border-bottom:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f4f4f4}
div.wide{overflow-x:auto}
p.summary{background:#f6f8fa;border-left:4px solid #36c;padding:.8em 1em}
.note{color:#555}
"""


def _percent_columns(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    shown = frame.copy()
    for column in columns:
        shown[column] = fraction_texts(shown[column].astype(float), 1, scale=100)
    return shown


def _table(frame: pd.DataFrame, empty: str) -> str:
    if frame.empty:
        return f'<p class="note">{html.escape(empty)}</p>'
    shown = frame.astype(object).where(frame.notna(), "–")  # nullable integers print <NA>
    return f'<div class="wide">{shown.to_html(index=False, escape=True, border=0)}</div>'


def page(c: Comparison) -> str:
    """The HTML page: the summary, then each table (CSV files hold them whole)."""
    percents = ["base", "head", "change", "estimate", "ci_low", "ci_high"]
    table2 = _percent_columns(c.table2, [*percents, "clustered_bound_low", "clustered_bound_high"])
    for column in ("design_effect_min_base", "design_effect_min_head"):
        table2[column] = [f"{d:.2f}" if pd.notna(d) else d for d in c.table2[column]]
    notes = table2["clustered_bound_note"].astype(object)  # all blank when every change is paired
    table2["clustered_bound_note"] = notes.where(notes != BOUND_METHOD, "width bound (see above)")
    table2 = table2.rename(columns=SHORT_BOUND_COLUMNS)
    scenarios = c.scenarios.loc[c.scenarios["change"] != "unchanged"].copy()
    for column in ("base_sha256", "head_sha256"):  # the CSV holds them whole
        scenarios[column] = scenarios[column].str[:12]
    table2["n_paired"] = table2["n_paired"].astype("Int64")
    numbers = c.numbers.loc[c.numbers["status"].isin(["changed", "added", "removed"])]
    claims = c.claims.loc[c.claims["verdict_changed"]]
    ranks = c.ranks.drop(columns=["base_method", "head_method"])
    title = f"{c.base.build.name} .. {c.head.build.name}"
    sections = [
        (
            "Scenarios",
            _table(scenarios, "No scenario added, removed or changed."),
            f"{(c.scenarios['change'] == 'unchanged').sum()} scenarios unchanged; "
            f"every one is in {TABLES['scenarios']}.",
        ),
        (
            "Conditions",
            _table(c.conditions, "No condition in either release."),
            f"Compared by {c.basis}. {STATUS_NOTE}",
        ),
        (
            "Table 2 values and their change",
            _table(table2, "No condition in both releases."),
            "Percentages; the change is head minus base, with a 95% interval for it ("
            f"{TABLES['table2']}). Where only counts are compared, mean trial accuracy's "
            f"change also carries its clustered bound (bound_low, bound_high; deff_min_base "
            f"and deff_min_head the design effects): the {BOUND_METHOD}.",
        ),
        (
            "Ranks",
            _table(ranks, "No ranks."),
            "Rank change: positive when the condition moved up; rank sets are 95% rank intervals "
            f"({'; '.join(c.ranks['head_method'].dropna().unique())}).",
        ),
        (
            "Cited numbers",
            _table(numbers, "No cited number changed value."),
            f"Numbers that changed value, are new or are gone; "
            f"{(c.numbers['status'] == 'unchanged').sum()} unchanged (same inputs, same value) "
            f"and {(c.numbers['status'] == 'same value, inputs changed').sum()} with the same "
            f"value on changed inputs are in {TABLES['numbers']}.",
        ),
        (
            "Claims ledger",
            _table(claims, "No claim's verdict changed."),
            f"Every claim side by side: {TABLES['claims']}.",
        ),
    ]
    body = "".join(
        f'<h2 id="{name.split()[0].lower()}">{html.escape(name)}</h2>'
        f'<p class="note">{html.escape(note)}</p>{table}'
        for name, table, note in sections
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>"
        f'<h1>{html.escape(title)}</h1><p class="summary">{html.escape(summary(c))}</p>'
        f"{body}</body></html>\n"
    )


def write_comparison(c: Comparison, folder: Path) -> None:
    """Write the page, ``changes.json`` and the CSV tables into ``folder`` (new)."""
    folder.mkdir(parents=True)
    for name, frame in c.tables().items():
        frame.to_csv(folder / TABLES[name], index=False)
    document = changes_document(c)
    (folder / "changes.json").write_text(json.dumps(document, indent=2) + "\n", "utf-8")
    (folder / "index.html").write_text(page(c), "utf-8")
