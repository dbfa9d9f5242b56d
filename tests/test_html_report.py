"""The report page (analysis/paper/html_report.py): every element id once, every contents
link to an id of the page, wide tables marked to use the window's width."""

from __future__ import annotations

import collections
import re

import nbformat

from analysis.paper.html_report import WIDE_COLUMNS, render_html

_ID = re.compile(r"\sid=\"([^\"]+)\"")


def _ids(page: str) -> collections.Counter:
    return collections.Counter(_ID.findall(page))


def test_every_id_of_the_built_page_is_unique(built_paper):
    page = (built_paper / "index.html").read_text("utf-8")
    ids = _ids(page)
    assert len(ids) > 50
    assert [name for name, n in ids.items() if n > 1] == []
    links = re.findall(r'<a href="#([^"]+)"', page)
    assert links and set(links) <= set(ids)  # the contents lead to the sections
    assert "02-leaderboard" in links


def test_the_built_table_2_is_marked_wide(built_paper):
    page = (built_paper / "index.html").read_text("utf-8")
    heading = page.index('id="02-leaderboard"')
    table = page.index("<table", heading)
    assert page[table:].startswith('<table class="wide"')


def test_headings_of_the_same_name_get_ids_of_their_own(tmp_path):
    """A notebook whose two level-one headings (and two sub-headings) share a name: each
    gets its own id, and the section holding the notebook none of the heading's."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Results\n\n## Table\n\ntext"),
        nbformat.v4.new_markdown_cell("# Results\n\n## Table"),
    ]
    cells = "".join(f"<th>c{i}</th>" for i in range(WIDE_COLUMNS + 1))
    shown = {"text/html": f"<table><thead><tr>{cells}</tr></thead></table>"}
    output = nbformat.v4.new_output("display_data", data=shown)
    notebook.cells.append(nbformat.v4.new_code_cell("show()", outputs=[output]))
    path = tmp_path / "01-x.ipynb"
    nbformat.write(notebook, path)
    page = render_html([path], tmp_path / "index.html", {"release": "r"}, None).read_text()
    ids = _ids(page)
    assert [name for name, n in ids.items() if n > 1] == []
    assert {"01-x", "01-x-2", "01-x-table", "01-x-table-2"} <= set(ids)
    assert page.count('<table class="wide">') == 1
