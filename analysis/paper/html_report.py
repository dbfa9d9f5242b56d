"""``paper/index.html``: one self-contained page of every executed notebook.

Images are embedded, nothing is fetched over the network (no scripts or fonts from
elsewhere), a table of contents leads to each section, the build's identity heads the page,
code is folded away under each cell (one button unfolds it all), and the claims ledger
closes the page.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from pathlib import Path

import mistune
import nbformat
import pandas as pd

from analysis.paper.claims import readable
from analysis.paper.presentation import presented

TITLE = "SteerBench-Work: reproduction report"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_HEADING = re.compile(r"<h([1-3])>(.*?)</h\1>", re.DOTALL)

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0;
       color: #1a1a1a; line-height: 1.45; }
main { max-width: 980px; margin: 0 auto; padding: 1.5rem 2rem 4rem; }
nav.toc { background: #f5f7fa; border: 1px solid #dde3ea; padding: .6rem 1.2rem;
          margin: 1rem 0 2rem; }
nav.toc ol { margin: .2rem 0; } nav.toc li { margin: .1rem 0; }
nav.toc ul { margin: 0; padding-left: 1.2rem; list-style: circle; font-size: .92rem; }
h1 { font-size: 1.8rem; margin-bottom: .2rem; }
h2 { border-top: 2px solid #0072B2; padding-top: .8rem; margin-top: 2.5rem; }
h3 { margin-top: 1.6rem; }
table { border-collapse: collapse; font-size: .85rem; margin: .6rem 0; display: block;
        max-width: 100%; overflow-x: auto; }
th, td { padding: .2rem .6rem; border-bottom: 1px solid #e3e3e3; text-align: left;
         overflow-wrap: normal; word-break: normal; hyphens: none; }
th { border-bottom: 2px solid #999; }
.nw { white-space: nowrap; }
/* A wide table uses the window's width (centred on the text), wraps its headers and keeps
   its first column in view while it scrolls. */
table.wide { width: max-content; max-width: calc(100vw - 2rem); position: relative;
             left: 50%; transform: translateX(-50%); }
table.wide { font-size: .8rem; }
table.wide th { vertical-align: bottom; }
table.wide th, table.wide td { padding: .2rem .4rem; }
table.wide th:first-child, table.wide td:first-child { position: sticky; left: 0;
             background: #fff; z-index: 1; }
img { max-width: 100%; height: auto; display: block; margin: .6rem 0; }
pre { background: #f6f6f6; padding: .5rem .8rem; overflow-x: auto; font-size: .8rem; }
pre.stream { background: none; padding: 0 .2rem; }
details.code > summary { cursor: pointer; color: #0072B2; font-size: .8rem; }
.identity td:first-child { color: #555; }
.status-reproduced { color: #009E73; font-weight: 600; }
.status-differs, .status-not { color: #D55E00; font-weight: 600; }
.status-needs { color: #8a6d00; }
button#toggle-code { float: right; }
"""

SCRIPT = """
document.getElementById('toggle-code').addEventListener('click', function () {
  var all = document.querySelectorAll('details.code');
  var open = !Array.prototype.every.call(all, function (d) { return d.open; });
  all.forEach(function (d) { d.open = open; });
  this.textContent = open ? 'Hide code' : 'Show code';
});
"""


#: A table cell's text (no markup inside) and, in it, a word holding a hyphen.
_CELL = re.compile(r"(<t[dh]\b[^>]*>)([^<]*)(</t[dh]>)")
_HYPHENATED = re.compile(r"[^\s<>]*-[^\s<>]*")


def whole_words(table_html: str) -> str:
    """``table_html`` with each hyphenated word of a table cell kept on one line (a
    browser breaks after a hyphen: "claude-" / "opus-4.8"); cells still wrap between words.

    Examples
    --------
    >>> whole_words("<td>claude-opus-4.8 (off)</td>")
    '<td><span class="nw">claude-opus-4.8</span> (off)</td>'
    """

    def cell(match: re.Match) -> str:
        text = _HYPHENATED.sub(lambda w: f'<span class="nw">{w.group(0)}</span>', match[2])
        return f"{match[1]}{text}{match[3]}"

    return _CELL.sub(cell, table_html)


#: A table of more columns than this may be wider than the text: it may use the window's
#: width, and keeps its first column in view while it scrolls.
WIDE_COLUMNS = 8
_TABLE = re.compile(r"<table\b([^>]*)>(.*?)</tr>", re.DOTALL)


def marked_wide(table_html: str) -> str:
    """``table_html`` with each table whose first row has more than :data:`WIDE_COLUMNS`
    cells marked ``class="wide"``.

    Examples
    --------
    >>> cells = "".join(f"<th>c{i}</th>" for i in range(9))
    >>> marked_wide(f'<table id="t"><thead><tr>{cells}</tr></thead></table>')[:34]
    '<table class="wide" id="t"><thead>'
    """

    def mark(match: re.Match) -> str:
        if len(re.findall(r"<t[hd]\b", match[2])) <= WIDE_COLUMNS:
            return match[0]
        return f'<table class="wide"{match[1]}>{match[2]}</tr>'

    return _TABLE.sub(mark, table_html)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", re.sub(r"<[^>]+>", "", text).lower()).strip("-")


def _output_html(output: Mapping) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        if output.get("name") == "stderr":
            return ""
        return f'<pre class="stream">{html.escape(_ANSI.sub("", output["text"]))}</pre>'
    if kind == "error":
        trace = _ANSI.sub("", "\n".join(output.get("traceback", [])))
        return f'<pre class="error">{html.escape(trace)}</pre>'
    data = output.get("data", {})
    if "image/png" in data:
        png = "".join(data["image/png"]).replace("\n", "")
        return f'<img alt="figure" src="data:image/png;base64,{png}">'
    if "image/svg+xml" in data:
        return "".join(data["image/svg+xml"])
    if "text/html" in data:
        return marked_wide(whole_words("".join(data["text/html"])))
    if "text/markdown" in data:
        return mistune.html("".join(data["text/markdown"]))
    if "text/plain" in data:
        return f"<pre>{html.escape(''.join(data['text/plain']))}</pre>"
    return ""


def unique_id(anchor: str, taken: set[str]) -> str:
    """``anchor``, or ``anchor-2``, ``anchor-3``... when the page has that id already; the
    one returned is added to ``taken``.

    Examples
    --------
    >>> taken = set()
    >>> [unique_id("results", taken) for _ in range(3)]
    ['results', 'results-2', 'results-3']
    """
    chosen, n = anchor, 1
    while chosen in taken:
        n += 1
        chosen = f"{anchor}-{n}"
    taken.add(chosen)
    return chosen


def _notebook_html(path: Path, toc: list[tuple[int, str, str]], taken: set[str]) -> str:
    """One notebook as HTML; its headings (one level down) are added to ``toc``, each with
    an id of its own (the notebook's first heading: the notebook's name)."""
    notebook = nbformat.read(path, as_version=4)
    prefix = path.stem
    parts = ["<section>"]
    pending: list[str] = []
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            rendered = mistune.html(cell.source)

            def heading(match: re.Match, prefix: str = prefix) -> str:
                level, text = int(match.group(1)) + 1, match.group(2)
                anchor = prefix if level == 2 else f"{prefix}-{_slug(text)}"
                anchor = unique_id(anchor, taken)
                toc.append((level, anchor, re.sub(r"<[^>]+>", "", text)))
                return f'<h{level} id="{anchor}">{text}</h{level}>'

            parts.append(_folded(pending))
            pending = []
            parts.append(_HEADING.sub(heading, rendered))
        elif cell.cell_type == "code" and cell.source.strip():
            pending.append(cell.source)
            shown = [_output_html(o) for o in cell.get("outputs", [])]
            if any(shown):
                parts.append(_folded(pending))
                pending = []
                parts.extend(shown)
    parts.append(_folded(pending))
    parts.append("</section>")
    return "\n".join(p for p in parts if p)


def _folded(sources: list[str]) -> str:
    """Consecutive code cells that show nothing in between, folded under one toggle."""
    if not sources:
        return ""
    code = "\n\n".join(html.escape(s) for s in sources)
    return f'<details class="code"><summary>code</summary><pre><code>{code}</code></pre></details>'


def identity_html(build: Mapping | None, release: str) -> str:
    """The build's identity as a small table (or a note that the build recorded none)."""
    if not build:
        return f"<p>Release {html.escape(release)}; this build recorded no identity.</p>"
    packages = build.get("packages") or {}
    rows = [
        ("release", release),
        ("release folder", build.get("release_dir", "")),
        ("release digest (sha256)", build.get("release_digest", "")),
        ("git commit", build.get("git_commit", "")),
        ("uncommitted changes", "yes" if build.get("git_dirty") else "no"),
        ("built at", build.get("built_at", "")),
        ("Python", build.get("python", "")),
        ("packages", ", ".join(f"{k} {v}" for k, v in sorted((packages or {}).items()))),
    ]
    cells = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{html.escape('–' if v is None else str(v))}</td></tr>"
        for k, v in rows
    )
    return f'<table class="identity">{cells}</table>'


def claims_html(claims: pd.DataFrame) -> str:
    """The claims ledger as an HTML table, each status marked."""
    shown = presented(readable(claims))
    head = "".join(f"<th>{html.escape(c)}</th>" for c in shown.columns)
    rows = []
    for row in shown.itertuples(index=False):
        cells = []
        for column, value in zip(shown.columns, row, strict=True):
            css = f' class="status-{value.split()[0]}"' if column == "Status" else ""
            cells.append(f"<td{css}>{html.escape(value)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    counts = claims["status"].value_counts()
    summary = "; ".join(f"{n} {status}" for status, n in counts.items())
    return (
        '<section id="claims"><h2 id="claims-ledger">Claims ledger</h2>'
        "<p>Every number the paper states, beside the value this build recomputes: "
        f"{html.escape(summary)}.</p>"
        + whole_words(
            f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )
        + "</section>"
    )


def left_out_html(left_out: list[Mapping]) -> str:
    """What the build left out and why (``numbers.json``'s ``left_out``), as a table; empty
    when nothing was."""
    if not left_out:
        return ""
    rows = "".join(
        "<tr>"
        + "".join(f"<td>{html.escape(str(entry[key]))}</td>" for key in ("notebook", "what"))
        + f"<td>{html.escape(str(entry['reason']))}</td></tr>"
        for entry in left_out
    )
    return (
        '<section id="left-out"><h2 id="left-out-of-this-build">Left out of this build</h2>'
        "<p>Every section whose inputs the release holds is built; these parts are not, "
        "for the reason given (also in <code>numbers.json</code>, under "
        "<code>left_out</code>).</p>"
        "<table><thead><tr><th>Section</th><th>Left out</th><th>Why</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
    )


def render_html(
    executed: list[Path], target: Path, document: Mapping, claims: pd.DataFrame | None
) -> Path:
    """Write ``target``: the executed notebooks, the build identity, what the build left
    out (if anything) and the claims ledger (None: left out)."""
    toc: list[tuple[int, str, str]] = []
    taken = {"toggle-code", "claims", "claims-ledger", "left-out", "left-out-of-this-build"}
    left_out = list(document.get("left_out") or [])
    if left_out:
        toc.append((2, "left-out-of-this-build", "Left out of this build"))
    sections = [_notebook_html(path, toc, taken) for path in executed]
    if claims is not None:
        toc.append((2, "claims-ledger", "Claims ledger"))
    items: list[str] = []
    for level, anchor, text in toc:
        link = f'<a href="#{anchor}">{html.escape(text)}</a>'
        if level == 2:
            items.append(f"<li>{link}<ul></ul></li>")
        elif items:
            items[-1] = items[-1].replace("</ul></li>", f"<li>{link}</li></ul></li>")
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{TITLE}</title><style>{STYLE}</style></head>
<body><main>
<button id="toggle-code" type="button">Show code</button>
<h1>{TITLE}</h1>
<p>Every table, figure and number of the SteerBench-Work paper, rebuilt from the published
release by the notebooks below. The typeset version is <a href="paper.pdf">paper.pdf</a>;
numbers are cited by name from <a href="numbers.json">numbers.json</a>.</p>
{identity_html(document.get("build"), str(document.get("release", "")))}
<nav class="toc"><strong>Contents</strong><ol>{"".join(items)}</ol></nav>
{left_out_html(left_out)}
{"".join(sections)}
{"" if claims is None else claims_html(claims)}
</main><script>{SCRIPT}</script></body></html>
"""
    target.write_text(page, encoding="utf-8")
    return target
