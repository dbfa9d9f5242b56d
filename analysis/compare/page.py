"""The comparison's files: one self-contained HTML page, ``changes.json`` and the CSV tables.

The page heads each table with the CSV's own column names (free to wrap after an
underscore), keeps the first column in view while a wide table scrolls, and says a long
text that repeats down a column (how an interval was computed) once, under the table, each
row pointing to it by number.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import pandas as pd

from analysis.compare.numbers import SAME_VALUE
from analysis.compare.ranks import SHIFTED
from analysis.compare.report import TABLES, Comparison, changes_document, summary_lines
from analysis.corpus.formatting import fraction_texts

STATUS_NOTE = (
    "re-run: its per-trial verdicts on the shared scenarios (or its trials per cell) differ; "
    "rescored: the same verdicts, scored on changed scenarios; changed: only counts are "
    "published, so the two cannot be told apart."
)

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:75em;padding:0 1em;color:#222}
table{border-collapse:separate;border-spacing:0;margin:.5em 0 .5em;font-size:13px}
th,td{border-bottom:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top;
background:#fff}
th{background:#f4f4f4;vertical-align:bottom;min-width:3.5em}
th:first-child,td:first-child{position:sticky;left:0;z-index:1;border-right:1px solid #ddd}
td:first-child{white-space:nowrap}
div.wide{overflow-x:auto;margin-bottom:1.2em}
div.summary{background:#f6f8fa;border-left:4px solid #36c;padding:.6em 1em}
div.summary p{margin:.15em 0}
div.summary p.detail{margin-left:1.5em}
.note{color:#555}
ol.legend{font-size:13px;color:#444;margin:.2em 0 1.5em}
"""

#: Columns whose long text is said once under the table, numbered.
LEGEND_COLUMNS = ("method", "clustered_bound_note")


def _percent_columns(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    shown = frame.copy()
    for column in columns:
        shown[column] = fraction_texts(shown[column].astype(float), 1, scale=100)
    return shown


def _legend(frame: pd.DataFrame, columns: tuple[str, ...]) -> tuple[pd.DataFrame, list[str]]:
    """``frame`` with each long text of ``columns`` replaced by its number in the legend,
    and the legend's entries (``column [n]: text``), each text once."""
    shown, entries = frame.copy(), []
    for column in columns:
        if column not in shown or shown[column].isna().all():
            continue
        texts = [t for t in dict.fromkeys(shown[column].dropna().astype(str)) if t]
        if not texts:
            continue
        keys = {text: f"[{len(entries) + i + 1}]" for i, text in enumerate(texts)}
        entries += [f"{column} {keys[text]}: {text}" for text in texts]
        shown[column] = shown[column].map(lambda v, k=keys: k.get(str(v), v))
    return shown, entries


def _header(name: str) -> str:
    """A CSV column name as a header, free to wrap after each underscore."""
    return "_<wbr>".join(html.escape(part) for part in str(name).split("_"))


def _table(frame: pd.DataFrame, empty: str, legend: tuple[str, ...] = ()) -> str:
    if frame.empty:
        return f'<p class="note">{html.escape(empty)}</p>'
    shown, entries = _legend(frame, legend)
    shown = shown.astype(object).where(shown.notna(), "–")  # nullable integers print <NA>
    head = "".join(f"<th>{_header(c)}</th>" for c in shown.columns)
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
        for row in shown.itertuples(index=False)
    )
    notes = "".join(f"<li>{html.escape(e)}</li>" for e in entries)
    return (
        f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody>'
        f"</table></div>" + (f'<ol class="legend">{notes}</ol>' if notes else "")
    )


def _summary_html(lines: list[str]) -> str:
    return (
        '<div class="summary">'
        + "".join(
            f'<p class="detail">{html.escape(line.strip())}</p>'
            if line.startswith(" ")
            else f"<p>{html.escape(line)}</p>"
            for line in lines
        )
        + "</div>"
    )


def page(c: Comparison) -> str:
    """The HTML page: the summary, then each table (CSV files hold them whole)."""
    percents = ["base", "head", "change", "estimate", "ci_low", "ci_high"]
    table2 = _percent_columns(c.table2, [*percents, "clustered_bound_low", "clustered_bound_high"])
    for column in ("design_effect_min_base", "design_effect_min_head"):
        table2[column] = [f"{d:.2f}" if pd.notna(d) else d for d in c.table2[column]]
    table2["n_paired"] = table2["n_paired"].astype("Int64")
    scenarios = c.scenarios.loc[c.scenarios["change"] != "unchanged"].copy()
    for column in ("base_sha256", "head_sha256"):  # the CSV holds them whole
        scenarios[column] = scenarios[column].str[:12]
    numbers = c.numbers.loc[c.numbers["status"].isin(["changed", "added", "removed"])]
    claims = c.claims.loc[c.claims["verdict_changed"]]
    ranks = c.ranks.loc[c.ranks["rank_note"] != "same"].drop(columns=["base_method", "head_method"])
    methods = "; ".join(dict.fromkeys(c.ranks[["base_method", "head_method"]].stack().dropna()))
    status = c.numbers["status"]
    title = f"{c.base.build.name} .. {c.head.build.name}"
    sections = [
        (
            "scenarios",
            "Scenarios",
            _table(scenarios, "No scenario added, removed or changed."),
            f"Scenarios added, removed or changed; {(c.scenarios['change'] == 'unchanged').sum()} "
            f"unchanged ones are in {TABLES['scenarios']} too.",
        ),
        (
            "conditions",
            "Conditions",
            _table(c.conditions, "No condition in either release."),
            f"Compared by {c.basis}. {STATUS_NOTE}",
        ),
        (
            "table2",
            "Table 2 values and their change",
            _table(table2, "No condition in both releases.", LEGEND_COLUMNS),
            "Percentages; change is head minus base, with a 95% interval (ci_low, ci_high) "
            "computed as its method says (from counts: about these scenarios held fixed, "
            "trial noise only). Where only counts are compared, mean trial accuracy's change "
            "also carries its clustered bound (clustered_bound_low, clustered_bound_high; "
            "design_effect_min_base and design_effect_min_head the design effects): not a 95% "
            "interval, a floor on the width of a scenario-clustered one. "
            f"All rows: {TABLES['table2']}.",
        ),
        (
            "ranks",
            "Ranks",
            _table(ranks, "No rank changed."),
            "Conditions whose rank changed, or that are in one release only. Ranks are compared "
            "among the conditions both releases publish (base_shared_rank, head_shared_rank, "
            "re-ranked on each side); rank_change is the Table 2 rank's change, positive when "
            "the condition moved up, and a shift caused only by an added or removed condition "
            "is labelled so in rank_note. The 95% rank sets (base_rank_low to base_rank_high, "
            f"head_rank_low to head_rank_high) are over the shared conditions: {methods}. "
            f"All rows: {TABLES['ranks']}.",
        ),
        (
            "numbers",
            "Cited numbers",
            _table(numbers, "No cited number changed, was added or was removed."),
            "Numbers changed, added or removed; "
            f"{(status == 'unchanged').sum()} unchanged (the same inputs, by content, and the "
            f"same value), {(status == SAME_VALUE).sum()} with the same value on changed inputs "
            f"and {(status == SHIFTED).sum()} of unchanged conditions {SHIFTED} (their ranks "
            f"and rank sets) are in {TABLES['numbers']}.",
        ),
        (
            "claims",
            "Claims ledger",
            _table(claims, "No claim's verdict changed."),
            "Claims whose verdict changed (base_difference and head_difference say why); "
            f"every claim side by side: {TABLES['claims']}.",
        ),
    ]
    body = "".join(
        f'<section><h2 id="{anchor}">{html.escape(name)}</h2>'
        f'<p class="note">{html.escape(note)}</p>{table}</section>'
        for anchor, name, table, note in sections
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>{_summary_html(summary_lines(c))}"
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
