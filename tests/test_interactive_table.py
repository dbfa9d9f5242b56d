"""analysis.exploring.interactive_table: long frames as sortable, filterable tables, offline."""

from __future__ import annotations

import json
import re

import pandas as pd
from factories import hand_cells

from analysis.exploring.interactive_table import table_html


def test_a_table_is_sortable_filterable_offline_and_named_by_its_content():
    cells = hand_cells()
    html = table_html(cells, caption="cells")
    assert not re.search(r"<script[^>]*\bsrc=|import [^;]*https?://", html)  # nothing fetched
    assert "unpkg" not in html
    assert '"column_filters": "footer"' in html  # a filter box under each column
    data = json.loads(json.loads(re.search(r'"data_json": ("(?:[^"\\]|\\.)*")', html)[1]))
    assert len(data) == len(cells)  # every row, none downsampled
    assert table_html(cells.copy(), caption="cells") == html
    other = table_html(cells.iloc[:3], caption="cells")
    assert re.search(r'id="(itables_\w+)"', other)[1] != re.search(r'id="(itables_\w+)"', html)[1]


def test_no_index_is_shown():
    frame = pd.DataFrame({"a": [1, 2]}, index=["x", "y"])
    assert ">x<" not in table_html(frame)
