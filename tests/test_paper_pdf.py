"""The typeset report's tables (analysis/paper/templates/report.typ), compiled on small folders the
tests write: long tables go on over pages, constant columns are said once, identifiers wrap."""

from __future__ import annotations

import json
import re
from pathlib import Path

import typst

from analysis.paper.pdf import render_pdf

CLAIMS_HEADER = (
    "section,statement,name,published,recomputed,unit,published_counts,recomputed_counts,"
    "status,difference"
)


def _paper(
    folder: Path, rows: list[list[str]], name: str = "t", columns: list[str] | None = None
) -> tuple[int, dict]:
    """Compile a report whose corpus section holds one table ``name`` of ``rows`` (method,
    condition, note) and the claims table; its page count and the first table's figure as
    Typst queries it."""
    (folder / "tables").mkdir(parents=True, exist_ok=True)
    columns = columns or ["method", "condition", "note"]
    lines = [",".join(columns), *(",".join(f'"{c}"' for c in row) for row in rows)]
    (folder / "tables" / f"{name}.csv").write_text("\n".join(lines) + "\n")
    claim = "Corpus,scenarios,corpus.scenarios,106,106,scenarios,,,reproduced,"
    (folder / "tables" / "claims.csv").write_text(f"{CLAIMS_HEADER}\n{claim}\n")
    catalogue = {
        f"tables/{name}": {
            "kind": "table",
            "name": name,
            "caption": "A table.",
            "notebook": "01-corpus",
            "columns": columns,
            "headers": [c.capitalize() for c in columns],
            "cells": rows,
            "rows": len(rows),
        },
        "tables/claims": {
            "kind": "table",
            "name": "claims",
            "caption": "C.",
            "notebook": "the build (analysis.paper.claims)",
        },
    }
    (folder / "catalogue.json").write_text(json.dumps(catalogue))
    (folder / "numbers.json").write_text(json.dumps({"release": "test", "numbers": {}}))
    pdf = render_pdf(folder).read_bytes()
    pages = int(re.findall(rb"/Type/Pages/Count (\d+)", pdf)[0])
    found = typst.query(
        str(folder / "paper.typ"),
        "figure",
        root=str(folder),
        ignore_system_fonts=True,
    )
    return pages, json.loads(found)[0]


def _texts(element) -> list[str]:
    if isinstance(element, dict):
        own = [element["text"]] if isinstance(element.get("text"), str) else []
        return own + [t for value in element.values() for t in _texts(value)]
    if isinstance(element, list):
        return [t for value in element for t in _texts(value)]
    return []


def test_a_table_taller_than_a_page_goes_on_over_the_next(tmp_path):
    """Unbreakable, a 40-row table of long rows took one page and drew its last rows over
    each other at its foot; it now takes as many pages as it needs."""
    long = "words that wrap " * 40
    short, _ = _paper(tmp_path / "short", [["m", f"c{i}", f"{i} {long}"] for i in range(3)])
    tall, _ = _paper(tmp_path / "tall", [["m", f"c{i}", f"{i} {long}"] for i in range(40)])
    assert tall - short >= 3


def test_a_column_the_same_in_every_row_is_said_once(tmp_path):
    rows = [["same method", "detector_conflict", "a"], ["same method", "clean_control", "b"]]
    _, figure = _paper(tmp_path, rows)
    texts = _texts(figure)
    assert any(t.startswith("In every row") for t in texts)
    assert "same method" in texts  # said under the table
    (page,) = [p for p in _page_texts(tmp_path / "paper.pdf") if "In every row" in p]
    lines = [line.strip() for line in page.split("\r\n")]
    assert "Condition Note" in lines  # condition and note; the method under the table
    assert page.count("same method") == 1
    assert "detector_\u200bconflict a" in lines  # free to wrap after its underscore


def _page_texts(pdf: Path) -> list[str]:
    import pypdfium2

    document = pypdfium2.PdfDocument(pdf)
    return [page.get_textpage().get_text_range().replace("\xa0", " ") for page in document]


def test_the_papers_tables_keep_their_names_and_the_reports_own_count_apart(tmp_path):
    _paper(tmp_path, [["m", "gpt-5.4-mini (off)", "n"]], name="table2-leaderboard")
    text = "\n".join(_page_texts(tmp_path / "paper.pdf"))
    assert "Table 2: A table." in text  # the paper's number, from the table's name
    assert "Report table 1: Claims ledger" in text or "Report table 1: C." in text
    assert not re.search(r"(?<!Report )Table 1:", text)


def test_a_condition_name_stays_whole_in_a_crowded_table(tmp_path):
    """Twelve columns, as Table 2 has: Typst's automatic columns squeezed the condition
    below its name's width, breaking it after its hyphens ("gemini-3.1-" / "flash-lite")."""
    columns = ["condition", *(f"interval {i}" for i in range(11))]
    names = ["gemini-3.1-flash-lite (minimal)", "deepseek-v4-flash (off)"]
    rows = [[name, *(f"[8{i}.{r}%, 9{i}.3%]" for i in range(11))] for r, name in enumerate(names)]
    _paper(tmp_path, rows, columns=columns)
    page = next(p for p in _page_texts(tmp_path / "paper.pdf") if "Interval 10" in p)
    lines = [line.strip() for line in page.split("\r\n")]
    for whole in ("gemini-3.1-flash-lite", "deepseek-v4-flash"):
        assert any(line.startswith(whole) for line in lines), lines


def test_the_report_lists_what_was_left_out_and_has_no_ledger_when_it_was(tmp_path):
    import pypdfium2

    (tmp_path / "catalogue.json").write_text("{}")
    left_out = [
        {"notebook": "09-labels", "what": "the human agreement", "reason": "no report here"},
        {
            "notebook": "the build (analysis.paper.claims)",
            "what": "the claims ledger",
            "reason": "r",
        },
    ]
    document = {"release": "v-other", "numbers": {}, "left_out": left_out}
    (tmp_path / "numbers.json").write_text(json.dumps(document))
    pdf = pypdfium2.PdfDocument(render_pdf(tmp_path))
    text = " ".join(page.get_textpage().get_text_range() for page in pdf).replace("\r\n", " ")
    assert "Left out of this build." in text
    assert "the human agreement (09-labels): no report here." in text
    assert "Claims ledger" not in text and "claims ledger at the end" not in text
    assert "This release holds none of the inputs of this section" in text  # 09-labels


def _ledger_text(folder: Path, n_rows: int, differing: int) -> str:
    """The text of a report whose claims ledger has ``n_rows`` rows, row ``differing``
    (counting from 0) not reproduced."""
    folder.mkdir(parents=True)
    (folder / "tables").mkdir()
    rows = [
        f"Table 2,statement {i:03d},x.{i},1,{2 if i == differing else 1},,,,"
        + ("differs,(+1)" if i == differing else "reproduced,")
        for i in range(n_rows)
    ]
    (folder / "tables" / "claims.csv").write_text("\n".join([CLAIMS_HEADER, *rows]) + "\n")
    claims = {"kind": "table", "name": "claims", "caption": "C.", "notebook": "the build"}
    (folder / "catalogue.json").write_text(json.dumps({"tables/claims": claims}))
    (folder / "numbers.json").write_text(json.dumps({"release": "test", "numbers": {}}))
    return " ".join(" ".join(_page_texts(render_pdf(folder))).split())


def test_a_long_claims_ledger_shows_its_first_rows_and_every_one_not_reproduced(tmp_path):
    """A release of 1,000 conditions adds a ledger row for each one's weighted miss: the PDF
    shows the first 100 rows and every later row that was not reproduced, and says where
    the others are; a ledger of 100 rows shows them all."""
    text = _ledger_text(tmp_path / "long", 150, differing=130)
    assert "statement 099" in text and "statement 130" in text
    assert "statement 100" not in text and "statement 149" not in text
    assert "the other 49 rows, all reproduced, are in tables/claims.csv" in text
    text = _ledger_text(tmp_path / "whole", 100, differing=-1)
    assert "statement 000" in text and "statement 099" in text
    assert "the other" not in text


def _page_boxes(pdf: Path) -> list[tuple[float, float, list[tuple[float, float, float]]]]:
    """Each page's width, height and, per printed character, its left and right edge and its
    size."""
    import pypdfium2
    import pypdfium2.raw as raw

    pages = []
    for page in pypdfium2.PdfDocument(pdf):
        width, height = page.get_size()
        text = page.get_textpage()
        chars = []
        for i in range(text.count_chars()):
            left, _, right, _ = text.get_charbox(i)
            if right > left and text.get_text_range(i, 1).strip():  # not the space a line ends on
                chars.append((left, right, raw.FPDFText_GetFontSize(text, i)))
        pages.append((width, height, chars))
    return pages


def test_table_2_has_a_landscape_page_within_its_margins(tmp_path):
    """Table 2's fifteen columns ran past the right margin at 6.5 pt: a paper table of more
    than eight columns gets a landscape page of its own, where it fits at 8 pt."""
    columns = [
        "rank",
        "condition",
        "mean trial accuracy",
        "95% CI (trials independent)",
        "clustered 95% CI at least",
        "design effect at least",
        "modal-of-5",
        "modal 95% CI",
        "pass5",
        "pass5 95% CI",
        "under-refusal",
        "over-refusal",
        "weighted miss",
        "weighted miss counts",
        "weighted miss counts from",
    ]
    names = ["gemini-3.1-flash-lite (minimal)", "kimi-k2.6 (on (provider default))"]
    rows = [
        [
            str(r + 1),
            names[r % 2],
            f"9{r % 10}.8%",
            f"[90.{r % 10}%, 94.7%]",
            f"[86.{r % 10}%, 96.2%]",
            f"4.2{r % 10}",
            f"92.{r % 10}% (98/106)",
            f"[85.{r % 10}%, 96.1%]",
            f"91.{r % 10}%",
            f"[84.{r % 10}%, 95.5%]",
            f"{r % 3}% ({r % 3}/50)",
            f"14.{r % 10}% (8/56)",
            f"4.{r % 10}%",
            "31/270 or 31/269" if r == 3 else f"1{r % 10}/271",
            "undetermined: no per-trial verdicts" if r == 3 else "leaderboard",
        ]
        for r in range(30)
    ]
    _paper(tmp_path, rows, name="table2-leaderboard", columns=columns)
    texts = _page_texts(tmp_path / "paper.pdf")
    pages = _page_boxes(tmp_path / "paper.pdf")
    table = [i for i, text in enumerate(texts) if "Rank Condition" in text]
    assert table
    margin = 2 / 2.54 * 72  # 2 cm
    for i in table:
        width, height, chars = pages[i]
        assert width > height  # landscape
        assert min(c[0] for c in chars) >= margin - 1
        assert max(c[1] for c in chars) <= width - margin + 1
        sizes = [c[2] for c in chars]
        assert min(sizes) >= 7.9, min(sizes)  # readable: the table at 8 pt, the caption larger
    # the pages around it stay portrait
    assert all(w < h for i, (w, h, _) in enumerate(pages) if i not in table)


def test_every_page_of_the_built_report_keeps_its_text_within_the_margins(built_paper):
    """The built report: no text of any page (tables included) runs into the margins
    (2.2 cm on a portrait page, 2 cm on a landscape one), and Table 2 is on landscape pages."""
    pages = _page_boxes(built_paper / "paper.pdf")
    texts = _page_texts(built_paper / "paper.pdf")
    for number, (width, height, chars) in enumerate(pages, 1):
        if not chars:
            continue
        margin = (2.0 if width > height else 2.2) / 2.54 * 72
        left, right = min(c[0] for c in chars), max(c[1] for c in chars)
        # 3 pt: justified text lets punctuation hang into the margin (Typst's overhang)
        assert left >= margin - 3 and right <= width - margin + 3, (number, left, right)
    table2 = [i for i, text in enumerate(texts) if "Rank Condition" in text]
    assert table2 and all(pages[i][0] > pages[i][1] for i in table2)
