"""What a reader sees: Table 2 on screen, and wide tables that scroll rather than break."""

from __future__ import annotations

import re

import nbformat
import pandas as pd

from analysis.paper.html_report import STYLE, whole_words


def test_table2_every_row_is_shown_in_its_notebook_and_the_report(built_paper):
    table = pd.read_csv(built_paper / "tables" / "table2-leaderboard.csv")
    notebook = nbformat.read(built_paper / "notebooks" / "02-leaderboard.ipynb", as_version=4)
    heading = next(i for i, c in enumerate(notebook.cells) if c.source.strip() == "## Table 2")
    (output,) = notebook.cells[heading + 1].outputs
    shown = output["data"]["text/html"]
    assert shown.count("<tr") == len(table) + 1  # the header and every condition
    page = (built_paper / "index.html").read_text("utf-8")
    section = page.split('id="02-leaderboard-table-2"', 1)[1].split("<h3", 1)[0]
    assert '<span class="nw">gpt-5.4-mini</span> (off)' in section  # kept whole on a line
    text = re.sub(r'</?span( class="nw")?>', "", section)
    for condition in table["condition"]:
        assert f">{condition}<" in text, condition


def test_report_tables_scroll_sideways_and_never_break_inside_a_word():
    rules = {m.group(1).strip(): m.group(2) for m in re.finditer(r"([^{}]+)\{([^}]*)\}", STYLE)}
    assert "overflow-x: auto" in rules["table"]
    assert "overflow-wrap: normal" in rules["th, td"]
    assert "anywhere" not in STYLE and "break-all" not in STYLE
    assert "white-space: nowrap" in rules[".nw"]
    cell = '<td class="x">[-0.0%, 3.5%]</td><td>kimi-k2.6 (on (provider default))</td>'
    assert whole_words(cell) == (
        '<td class="x"><span class="nw">[-0.0%,</span> 3.5%]</td>'
        '<td><span class="nw">kimi-k2.6</span> (on (provider default))</td>'
    )
