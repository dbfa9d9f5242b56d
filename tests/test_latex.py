"""LaTeX for authors: escaping, and every table compiles and fits (pdflatex: CI installs it)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pandas as pd
import pytest

from analysis.paper.latex import latex_escape, latex_table
from analysis.paper.provenance import write_numbers_tex

SPECIALS = "%_&#${}"
PREAMBLE = r"""\documentclass{article}
\usepackage{booktabs,graphicx,lscape,longtable,array,xcolor,tabularx,caption}
% One-column A4 article with 1-inch margins, set without extra packages.
\setlength{\paperwidth}{210mm}\setlength{\paperheight}{297mm}
\setlength{\textwidth}{\paperwidth}\addtolength{\textwidth}{-2in}
\setlength{\oddsidemargin}{0pt}\setlength{\evensidemargin}{0pt}
\setlength{\textheight}{\paperheight}\addtolength{\textheight}{-2in}
\addtolength{\textheight}{-\headheight}\addtolength{\textheight}{-\headsep}
\setlength{\topmargin}{0pt}
\begin{document}
"""
needs_pdflatex = pytest.mark.needs_tool("pdflatex")


def unescaped(text: str) -> list[str]:
    """Special characters in ``text`` not preceded by a backslash (plain loop)."""
    found = []
    for i, ch in enumerate(text):
        if ch in SPECIALS and (i == 0 or text[i - 1] != "\\"):
            found.append(ch)
    return found


@pytest.mark.parametrize("ch", list(SPECIALS))
def test_each_special_character_is_escaped(ch):
    assert latex_escape(f"a{ch}b") == f"a\\{ch}b"


def test_backslash_tilde_and_caret_become_text_commands():
    assert latex_escape("a\\b~c^d") == r"a\textbackslash{}b\textasciitilde{}c\textasciicircum{}d"


def test_text_beyond_ascii_keeps_latin_and_maps_symbols():
    # dashes and maths symbols have LaTeX spellings, Latin letters stay, anything beyond
    # Latin becomes "?", and ASCII specials beside them are escaped as in plain ASCII text
    assert latex_escape("é_1 – 2 ≥ 3 ✓ 50%") == r"é\_1 -- 2 \ensuremath{\geq} 3 ? 50\%"


def test_caption_headers_and_cells_are_escaped():
    frame = pd.DataFrame({"share_%": [0.5], "a & b": ["x_y #1 $2 {z}"], "n_cells": [3]})
    tex = latex_table(frame, "Rates in % & more_{x}", "t")
    caption = re.search(r"\\caption\{(.*)\}\\label", tex).group(1)
    assert unescaped(caption) == []
    rows = [
        line.removesuffix(r"\\").split(" & ") for line in tex.splitlines() if line.endswith(r"\\")
    ]
    assert rows and all(unescaped(cell) == [] for row in rows for cell in row)
    assert "Cells (n)" in tex  # human header, not n_cells


def test_numbered_caption_is_refused():
    with pytest.raises(ValueError, match="Table N"):
        latex_table(pd.DataFrame({"a": [1]}), "Table 2: the leaderboard", "t")


def compile_tex(folder, body: str) -> str:
    """pdflatex ``body`` in the fit-test preamble; the log text (fails the test on error)."""
    (folder / "doc.tex").write_text(PREAMBLE + body + "\n\\end{document}\n", "utf-8")
    result = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = (folder / "doc.log").read_text("utf-8", errors="replace")
    assert result.returncode == 0, log[-2000:]
    return log


def overfull(log: str) -> list[str]:
    """Overfull boxes wider than 1 pt: a table that does not fit the text width."""
    return [
        m.group(0)
        for m in re.finditer(r"Overfull \\hbox \(([\d.]+)pt too wide\)", log)
        if float(m.group(1)) > 1.0
    ]


@needs_pdflatex
@pytest.mark.slow
def test_long_and_wide_tables_compile_and_fit(tmp_path):
    wide = pd.DataFrame({f"column_{i}_with_a_long_name": [f"value-{i}-" * 3] for i in range(12)})
    long = pd.DataFrame(
        {
            "scenario_id": [
                f"some-very-long-scenario-identifier-{i}-tier-b-00{i}" for i in range(80)
            ],
            "condition": ["gemini-3.1-flash-lite (minimal) [reference-policy]"] * 80,
            "boundary_pattern": ["detector_conflict"] * 80,
            "accuracy": [i / 80 for i in range(80)],
            "accuracy_low": [0.0] * 80,
            "accuracy_high": [1.0] * 80,
            "n_cells": list(range(80)),
        }
    )
    body = latex_table(wide, "A wide table", "wide") + latex_table(long, "A long one", "long")
    assert r"\begin{longtable}" in body and r"\resizebox" in body
    assert overfull(compile_tex(tmp_path, body)) == []


def _pooled(rows: int, methods: int) -> pd.DataFrame:
    """A long table like the pooled inference one: twelve columns, of which three hold long
    texts from ``methods`` different ones each."""
    return pd.DataFrame(
        {
            "source": [
                f"reference-policy: always-{'hold' if i % 2 else 'proceed'}" for i in range(rows)
            ],
            "quantity": [f"modal accuracy: pattern_{i % 8}_control" for i in range(rows)],
            "estimate": [i / rows for i in range(rows)],
            "ci_low": [0.0] * rows,
            "ci_high": [1.0] * rows,
            "method": [
                f"scenario-cluster bootstrap (percentile), within pattern {i % methods}"
                for i in range(rows)
            ],
            "note": [f"no interval: {i % methods} scenario(s), fewer than 10" for i in range(rows)],
            "independent_low": [0.1] * rows,
            "independent_high": [0.9] * rows,
            "independent_method": [
                f"Wilson on cells (independent), variant {i % methods}" for i in range(rows)
            ],
            "n_cells": list(range(rows)),
            "n_clusters": list(range(rows)),
        }
    )


def _keyable(rows: int) -> pd.DataFrame:
    """Ten columns whose method text has a long unbreakable word: too wide for the text
    width until that text is said once, in a legend."""
    frame = _pooled(rows, 2).drop(columns=["independent_low", "independent_high"])
    frame["method"] = [f"bootstrap (percentile,within-pattern{i % 2})" for i in range(rows)]
    return frame


def test_a_long_table_too_wide_says_its_repeated_texts_once_in_a_legend():
    tex = latex_table(_keyable(40), "Pooled", "pooled")
    assert r"\begin{landscape}" not in tex
    legend = [line for line in tex.splitlines() if line.startswith(r"\par\noindent ")]
    assert legend == [
        r"\par\noindent Method [1]: bootstrap (percentile,within-pattern0)",
        r"\par\noindent Method [2]: bootstrap (percentile,within-pattern1)",
    ]
    rows = [line for line in tex.splitlines() if line.endswith(r"\\") and "always" in line]
    assert len(rows) == 40 and all("[1]" in row or "[2]" in row for row in rows)
    assert "Reference-policy" not in tex  # the first column is never keyed: it names the row
    assert sum("always-hold" in row for row in rows) == 20


def test_a_long_table_still_too_wide_gets_a_landscape_page():
    """Texts too varied for a legend: the table goes on a landscape page, texts in place."""
    tex = latex_table(_pooled(40, 40), "Pooled", "pooled")
    assert tex.startswith(r"\begin{landscape}") and r"\par\noindent" not in tex


@needs_pdflatex
@pytest.mark.slow
@pytest.mark.parametrize(("methods", "independent"), [(2, False), (2, True), (40, True)])
def test_a_long_wide_table_compiles_and_fits(tmp_path, methods, independent):
    frame = _pooled(40, methods) if independent else _keyable(40)  # landscape, or a legend
    tex = latex_table(frame, "Pooled", "pooled")
    assert overfull(compile_tex(tmp_path, tex)) == []


@needs_pdflatex
@pytest.mark.slow
def test_every_built_table_compiles_and_fits(built_paper, tmp_path):
    tables = sorted((built_paper / "tables").glob("*.tex"))
    tables = [t for t in tables if t.name != "numbers.tex"]
    assert len(tables) > 10
    failures = {}
    for table in tables:
        folder = tmp_path / table.stem
        folder.mkdir()
        text = table.read_text("utf-8")
        assert not re.search(r"\\caption\{Table \d", text), table.name
        wide = overfull(compile_tex(folder, text))
        if wide:
            failures[table.name] = wide
    assert failures == {}


@needs_pdflatex
def test_numbers_tex_defines_every_number(built_paper, tmp_path):
    numbers = json.loads((built_paper / "numbers.json").read_text())["numbers"]
    macros = built_paper / "tables" / "numbers.tex"
    shutil.copy(macros, tmp_path / "numbers.tex")
    body = "\\input{numbers.tex}\n" + "\n\n".join(f"\\sbnum{{{name}}}" for name in numbers)
    compile_tex(tmp_path, body)
    assert len(re.findall(r"\\def\\csname sbnum@", macros.read_text())) == len(numbers)


def test_numbers_tex_escapes_values(tmp_path):
    target = write_numbers_tex(
        {"leaderboard.leader": {"value": "x_y & z"}, "direction.over_refusal": {"value": 28.1}},
        tmp_path / "numbers.tex",
    )
    text = target.read_text()
    assert r"\csname sbnum@leaderboard.leader\endcsname{x\_y \& z}" in text
    assert r"\csname sbnum@direction.over_refusal\endcsname{28.1}" in text
