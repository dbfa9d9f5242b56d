"""``paper/paper.pdf``: the typeset reproduction report, and the files it reads.

After the notebooks ran, :func:`write_documents` merges their catalogue fragments into
``catalogue.json``, writes the claims ledger (``tables/claims.*``; not for another release
than the paper's, see :func:`analysis.paper.claims.other_release`) and one LaTeX macro per
number (``tables/numbers.tex``), renders ``index.html`` and compiles ``paper.pdf`` with
Typst (the ``typst`` package compiles in-process, offline, with its embedded fonts, and
releases the GIL: the PDF compiles in a thread while the HTML renders).

The template ``analysis/paper/templates/report.typ`` is copied to ``paper/paper.typ`` and reads
every number at compile time from ``numbers.json`` or a table CSV: ``python -m
analysis.paper.typeset paper/paper.typ`` rebuilds the PDF from the folder alone (the
``typst`` package installs no ``typst`` command).
"""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from analysis.files.reading import read_json
from analysis.paper.claims import ledger, readable
from analysis.paper.html_report import render_html
from analysis.paper.outputs import merge_catalogue, write_table
from analysis.paper.provenance import write_numbers_tex
from analysis.paper.typeset import compile_typst

TEMPLATE = Path(__file__).parent / "templates" / "report.typ"
#: Who writes the claims ledger, as the catalogue and the left-out list name it.
LEDGER_MAKER = "the build (analysis.paper.claims)"
CLAIMS_CAPTION = (
    "Claims ledger: every number the paper states, its published value, the value this "
    "build recomputes, and whether it was reproduced."
)


def render_pdf(paper_dir: Path) -> Path:
    """Compile ``paper_dir/paper.typ`` (copied from the template) into ``paper.pdf``."""
    source = paper_dir / "paper.typ"
    shutil.copyfile(TEMPLATE, source)
    return compile_typst(source, paper_dir / "paper.pdf")


def write_documents(paper_dir: Path, executed: list[Path], document: dict | None = None) -> None:
    """Catalogue, claims ledger (unless ``numbers.json`` lists it as left out),
    ``numbers.tex``, ``index.html`` and ``paper.pdf``; ``document``: what ``numbers.json``
    holds, when the caller has it (else it is read)."""
    if document is None:
        document = read_json(paper_dir / "numbers.json")
    catalogue = merge_catalogue(paper_dir)
    left_out = document.get("left_out") or []
    claims = None
    if not any(entry["notebook"] == LEDGER_MAKER for entry in left_out):
        claims = ledger(document["numbers"])
        write_table(
            paper_dir / "tables",
            claims,
            "claims",
            CLAIMS_CAPTION,
            for_reader=readable(claims),
        )
        catalogue["tables/claims"] = {
            "kind": "table",
            "name": "claims",
            "caption": CLAIMS_CAPTION,
            "notebook": LEDGER_MAKER,
        }
    (paper_dir / "catalogue.json").write_text(json.dumps(catalogue, indent=2) + "\n", "utf-8")
    with ThreadPoolExecutor(max_workers=1) as pool:
        pdf = pool.submit(render_pdf, paper_dir)  # reads the files above, not those below
        write_numbers_tex(document["numbers"], paper_dir / "tables" / "numbers.tex")
        render_html(executed, paper_dir / "index.html", document, claims)
        pdf.result()
