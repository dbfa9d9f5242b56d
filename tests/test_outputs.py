"""What a reader opens: figures inline, a self-contained HTML report, the PDF, the ledger."""

from __future__ import annotations

import json
import re

import nbformat
import pandas as pd
import pytest
from factories import run_papermill

from analysis import paths
from analysis.corpus.published import CLAIMS, Claim
from analysis.paper.claims import DIFFERS, NEEDS_VERDICTS, NOT_COMPUTED, REPRODUCED, judge, ledger
from analysis.paper.outputs import REPORT_ROWS, Output, show
from analysis.paper.presentation import human_header, presented


@pytest.fixture(scope="module")
def catalogue(built_paper):
    return json.loads((built_paper / "catalogue.json").read_text())


def images_in(notebook) -> int:
    return sum(
        "image/png" in output.get("data", {})
        for cell in nbformat.read(notebook, as_version=4).cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )


def test_every_figure_is_saved_and_shown_in_its_notebook(built_paper, catalogue):
    figures = [e for e in catalogue.values() if e["kind"] == "figure"]
    assert figures
    per_notebook: dict[str, int] = {}
    for entry in figures:
        for suffix in ("pdf", "png"):
            assert (built_paper / "figures" / f"{entry['name']}.{suffix}").stat().st_size > 0
        assert entry["caption"], entry["name"]
        per_notebook[entry["notebook"]] = per_notebook.get(entry["notebook"], 0) + 1
    for notebook, count in per_notebook.items():
        assert images_in(built_paper / "notebooks" / f"{notebook}.ipynb") >= count, notebook


def test_every_table_prints_its_fractions_rounded(built_paper, catalogue):
    """What the typeset report and the Markdown print is rounded: the report's cells are the
    Markdown's first rows, and no Markdown cell shows an unrounded number. An object column
    holding numbers was printed unrounded."""
    unrounded = re.compile(r"^[-+]?\d+\.\d{4,}(e-?\d+)?$")
    tables = [e for e in catalogue.values() if e["kind"] == "table" and "columns" in e]
    assert tables
    for entry in tables:
        markdown = (built_paper / "tables" / f"{entry['name']}.md").read_text()
        rows = [line for line in markdown.splitlines() if line.startswith("|")][2:]
        cells = [[c.strip() for c in line.split("|")[1:-1]] for line in rows]
        assert not any(unrounded.match(c) for row in cells for c in row), entry["name"]
        assert entry["cells"] == cells[: len(entry["cells"])], entry["name"]
        assert len(entry["cells"]) == min(entry["rows"], REPORT_ROWS), entry["name"]


def test_rates_and_fractions_print_rounded_half_up_from_their_exact_value(tmp_path):
    """13/16 is 81.25% and 51/80 63.75% exactly (the double of 51/80 lies just below): the
    tables print 81.3% and 63.8%, as numbers.json rounds counts, not the doubles' 81.2 and
    63.7; 1/16 to three decimals is 0.063."""
    frame = pd.DataFrame(
        {
            "condition": ["a", "b", "c"],
            "modal_accuracy": [13 / 16, 51 / 80, float("nan")],
            "estimate": [1 / 16, 0.0004999, -1 / 3],
        }
    )
    shown = presented(frame)
    assert shown["Modal accuracy"].tolist() == ["81.3%", "63.8%", "–"]
    assert shown["Estimate"].tolist() == ["0.063", "0.000", "-0.333"]
    out = Output(tmp_path, "00-test", [])
    out.table(frame, "t", "A table.")
    out.close()
    markdown = (tmp_path / "tables" / "t.md").read_text()
    assert "81.3%" in markdown and "63.8%" in markdown and "0.063" in markdown
    assert "81.2%" not in markdown and "0.062" not in markdown
    assert "81.3\\%" in (tmp_path / "tables" / "t.tex").read_text()


def test_html_report_is_self_contained(built_paper, catalogue):
    page = (built_paper / "index.html").read_text()
    assert re.search(r"<title>[^<]*SteerBench-Work[^<]*</title>", page)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<script src" not in page and "@import" not in page
    figures = sum(e["kind"] == "figure" for e in catalogue.values())
    assert page.count('src="data:image/png;base64,') >= figures
    assert 'class="toc"' in page and 'href="#claims-ledger"' in page
    assert "PosixPath(" not in page
    assert '<details class="code">' in page and '<details class="code" open' not in page


def test_pdf_report_is_written(built_paper):
    pdf = (built_paper / "paper.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and len(pdf) > 50_000
    assert (built_paper / "paper.typ").is_file()


def test_claims_ledger_in_csv_and_html(built_paper):
    claims = pd.read_csv(built_paper / "tables" / "claims.csv", keep_default_na=False)
    paper_claims = claims.loc[~claims["name"].str.endswith(".weighted_miss")]
    assert list(paper_claims["name"]) == [c.name for c in CLAIMS]
    # then Table 2's weighted miss of each condition, as the leaderboard prints it
    misses = claims.loc[claims["name"].str.endswith(".weighted_miss")]
    assert len(misses) and set(misses["section"]) == {"Table 2"}
    assert list(claims["name"][: len(CLAIMS)]) == [c.name for c in CLAIMS]
    # With no per-scenario verdicts in the release, every other claim is recomputed.
    assert NOT_COMPUTED not in set(claims["status"])
    per_trial = {c.name for c in CLAIMS if c.per_trial}
    needing = set(paper_claims.loc[paper_claims["status"] == NEEDS_VERDICTS, "name"])
    assert needing == per_trial
    assert "Claims ledger" in (built_paper / "index.html").read_text()


def test_judge_statuses():
    claim = Claim("S", "rate", "s.rate", 28.1, "%", (471, 1677))
    assert judge(claim, {"value": 28.1, "numerator": 471, "denominator": 1677}) == (
        REPRODUCED,
        "",
    )
    status, difference = judge(claim, {"value": 28.4, "numerator": 476, "denominator": 1677})
    assert status == DIFFERS
    assert difference.startswith("+0.3 points") and "476/1677" in difference
    assert judge(Claim("S", "x", "s.x", 1.0, per_trial=True), None)[0] == NEEDS_VERDICTS
    assert judge(Claim("S", "x", "s.x", 1.0), None)[0] == NOT_COMPUTED
    about = Claim("S", "gap", "s.gap", 4.0, "points", tolerance=1.0)
    assert judge(about, {"value": 3.6})[0] == REPRODUCED
    assert judge(about, {"value": 5.2})[0] == DIFFERS
    assert judge(Claim("S", "who", "s.who", "a (off)"), {"value": "a (off)"})[0] == REPRODUCED


def test_ledger_has_one_row_per_claim():
    table = ledger({})
    assert len(table) == len(CLAIMS)
    assert set(table["status"]) == {NEEDS_VERDICTS, NOT_COMPUTED}


def test_presented_tables_speak_percent_and_words():
    frame = pd.DataFrame({"n_modal_correct": [2], "accuracy": [2 / 3], "ratio": [1.23456]})
    shown = presented(frame)
    assert list(shown.columns) == ["Modal correct (n)", "Accuracy", "Ratio"]
    assert shown.iloc[0].tolist() == ["2", "66.7%", "1.235"]
    assert human_header("mean_trial_accuracy_low") == "Mean trial accuracy (CI low)"


def test_a_readers_columns_leave_the_csv_whole(tmp_path):
    frame = pd.DataFrame({"condition": ["m (off)"], "accuracy": [0.5], "method": ["wilson"]})
    out = Output(tmp_path, "00-test", [])
    out.table(frame, "t", "A table.", columns=["condition", "accuracy"])
    out.close()
    assert list(pd.read_csv(tmp_path / "tables" / "t.csv").columns) == list(frame.columns)
    markdown = (tmp_path / "tables" / "t.md").read_text()
    assert "50.0%" in markdown and "wilson" not in markdown
    entry = json.loads((tmp_path / "catalogue" / "00-test.json").read_text())["tables/t"]
    assert entry["columns"] == ["condition", "accuracy"]
    assert entry["headers"] == ["Condition", "Accuracy"]


def test_counts_with_missing_values_print_as_whole_numbers(tmp_path):
    """A count column with a gap is held as floats; every table file prints it whole (the
    typeset report reads the CSV), while a fraction keeps its decimals."""
    frame = pd.DataFrame(
        {"quantity": ["a", "gap"], "estimate": [0.25, 0.5], "n_cells": [180.0, float("nan")]}
    )
    out = Output(tmp_path, "00-test", [])
    out.table(frame, "t", "A table.")
    out.close()
    tables = tmp_path / "tables"
    assert (tables / "t.csv").read_text().splitlines()[1:] == ["a,0.25,180", "gap,0.5,"]
    rows = [line for line in (tables / "t.md").read_text().splitlines() if "| a " in line]
    assert rows and "| 180 " in rows[0] and "0.250" in rows[0] and "180.0" not in rows[0]
    assert "& 180 \\\\" in (tables / "t.tex").read_text()
    entry = json.loads((tmp_path / "catalogue" / "00-test.json").read_text())["tables/t"]
    assert entry["cells"] == [["a", "0.250", "180"], ["gap", "0.500", "–"]]


def test_a_notebook_alone_writes_to_scratch_not_paper():
    out = Output(None, "00-test", [])
    assert out.root != paths.PAPER_DIR
    assert paths.PAPER_DIR not in out.root.parents


@pytest.mark.slow
def test_a_notebook_run_with_defaults_leaves_paper_alone(tmp_path):
    def snapshot() -> dict[str, int]:
        return {str(p): p.stat().st_mtime_ns for p in paths.PAPER_DIR.rglob("*")}

    before = snapshot()
    executed = tmp_path / "out.ipynb"
    result = run_papermill("09-labels", executed)
    assert result.returncode == 0, result.stderr[-2000:]
    assert snapshot() == before
    assert "scratch" in executed.read_text()


def test_code_cells_that_show_nothing_fold_under_one_toggle(tmp_path):
    from analysis.paper.html_report import render_html

    cells = [
        nbformat.v4.new_markdown_cell("# Section"),
        nbformat.v4.new_code_cell("a = 1"),
        nbformat.v4.new_code_cell("b = 2"),
        nbformat.v4.new_code_cell(
            "print(a + b)", outputs=[nbformat.v4.new_output("stream", text="3\n")]
        ),
        nbformat.v4.new_code_cell("c = 3"),
    ]
    notebook = tmp_path / "01-x.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), notebook)
    page = render_html([notebook], tmp_path / "index.html", {}, ledger({})).read_text()
    # a, b and the print fold together before the output; c folds alone after it
    assert page.count('<details class="code">') == 2
    assert page.index("b = 2") < page.index("print(a + b)") < page.index("3\n</pre>")


def test_a_table_shown_twice_has_the_same_html(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", shown.append)
    frame = pd.DataFrame({"condition": ["a (off)", "b (high)"], "accuracy": [0.5, 0.25]})
    show(frame)
    show(frame.copy())
    show(frame.assign(accuracy=[0.5, 0.75]))
    first, again, other = (styler.to_html() for styler in shown)
    assert first == again and 'id="T_' in first
    assert other != first and other.split('id="T_')[1][:12] != first.split('id="T_')[1][:12]


def test_a_shown_table_escapes_its_cells_and_headers(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", shown.append)
    show(pd.DataFrame({"a<i>": ["m<b>&c (off)"], "accuracy": [0.5]}))
    html = shown[0].to_html()
    assert ">m&lt;b&gt;&amp;c (off)<" in html and "a&lt;i&gt;" in html
    assert "<b>" not in html and "<i>" not in html


LEFT_OUT = [
    {"notebook": "09-labels", "what": "the human <agreement>", "reason": "its report is absent"},
    {
        "notebook": "the build (analysis.paper.claims)",
        "what": "the claims ledger",
        "reason": "r & s",
    },
]


def test_the_html_report_lists_what_was_left_out_and_drops_a_left_out_ledger(tmp_path):
    from analysis.paper.html_report import render_html

    notebook = tmp_path / "09-x.ipynb"
    cells = [nbformat.v4.new_markdown_cell("# Labels")]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), notebook)
    document = {"release": "v-other", "left_out": LEFT_OUT}
    page = render_html([notebook], tmp_path / "index.html", document, None).read_text()
    assert 'href="#left-out-of-this-build"' in page and "claims-ledger" not in page
    assert "<td>the human &lt;agreement&gt;</td><td>its report is absent</td>" in page
    assert "<td>r &amp; s</td>" in page
    plain = render_html([notebook], tmp_path / "plain.html", {}, ledger({})).read_text()
    assert "left-out" not in plain and 'href="#claims-ledger"' in plain


def test_the_published_values_are_compared_with_the_papers_release_alone():
    from analysis.corpus import published
    from analysis.paper.claims import other_release

    assert other_release(published.RELEASE, published.SCENARIO_SET) is None
    reason = other_release("v-other", published.SCENARIO_SET)
    assert reason is not None and "this build is of release v-other" in reason
    assert other_release(published.RELEASE, "another-set") is not None


def test_markdown_tables_are_tabulates_pipe_tables_character_for_character():
    """Random tables of awkward strings (wide, zero-width and combining characters, pipes,
    surrounding spaces, empty cells and headers) and the non-string cases left to tabulate."""
    import random

    from analysis.paper.markdown import markdown_table

    rng = random.Random(7)
    pieces = ["a", "b", " ", "é", "中", "|", "-", "%", "–", "😀", "x y", "", "\u200b", "\u0301"]

    def text(longest: int) -> str:
        return "".join(rng.choice(pieces) for _ in range(rng.randint(0, longest)))

    for _ in range(500):
        rows = rng.randint(0, 5)
        columns: dict[str, list[str]] = {}
        for c in range(rng.randint(1, 4)):
            name = text(6) or f"c{c}"
            while name in columns:
                name += "z"
            columns[name] = [text(8) for _ in range(rows)]
        frame = pd.DataFrame(columns, columns=list(columns)).astype(object)
        assert markdown_table(frame) == frame.to_markdown(index=False, disable_numparse=True)
    for odd in (
        pd.DataFrame({"n": [1, 22], "x": ["a", "b"]}),
        pd.DataFrame({"x": ["two\nlines", "tab\there"]}),
        pd.DataFrame({"x": [None, "y"]}, dtype=object),
    ):
        assert markdown_table(odd) == odd.to_markdown(index=False, disable_numparse=True)
