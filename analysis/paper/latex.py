"""LaTeX for authors: escaping, and booktabs tables that compile as written and fit a
one-column article with 1-inch margins."""

from __future__ import annotations

import functools
import re

import pandas as pd

from analysis.paper.presentation import presented

#: Text width of a one-column article with 1-inch margins on A4 (the narrower of A4 and
#: US letter), in points.
TEXT_WIDTH_PT = 451.0
#: Line width of a landscape page of that article (A4 height less the margins, the running
#: head and its gap), in points: for a long table too wide for the text even with its
#: repeated texts in a legend.
LANDSCAPE_WIDTH_PT = 650.0
#: More rows than this go in a ``longtable`` that breaks across pages.
LONG_TABLE_ROWS = 30
#: A repeated text longer than this may go to the legend of a table too wide for the page.
KEYED_CHARS = 12
_CAPTION_NUMBERED = re.compile(r"^\s*table\s+\d+\s*[:.]", re.IGNORECASE)

_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "–": "--",
    "—": "---",
    "×": r"\ensuremath{\times}",
    "≥": r"\ensuremath{\geq}",
    "≤": r"\ensuremath{\leq}",
    "→": r"\ensuremath{\rightarrow}",
}


_ASCII_ESCAPES = str.maketrans({ch: tex for ch, tex in _LATEX_SPECIALS.items() if ch.isascii()})


def latex_escape(text: object) -> str:
    """``text`` safe in LaTeX body text: ``\\ & % $ # _ { } ~ ^`` and a few symbols escaped;
    a character beyond Latin (which pdflatex cannot set without extra fonts) becomes ``?``."""
    text = str(text)
    if text.isascii():
        return text.translate(_ASCII_ESCAPES)
    return "".join(_LATEX_SPECIALS.get(ch, ch if ord(ch) < 0x250 else "?") for ch in text)


def _widest(shown: pd.DataFrame) -> list[int]:
    """Characters in the widest cell of each column of ``shown`` (strings), header included."""
    return [max([len(str(c)), *map(len, set(shown[c].tolist()))]) for c in shown.columns]


def _width_pt(widest: list[int], scale: float, colsep: float) -> float:
    """Rough natural width of a table whose columns are ``widest`` characters wide: ~5 pt per
    character at \\small, plus column gaps."""
    return sum(chars * 5.0 * scale + 2 * colsep for chars in widest)


def _breakable(tex: str) -> str:
    """Escaped text that may break after a dot, underscore or slash (long identifiers)."""
    return re.sub(r"(\.(?=[A-Za-z])|\\_(?=\S)|/(?=\S))", r"\1\\allowbreak{}", tex)


def _body(shown: pd.DataFrame, breakable: list[bool]) -> list[str]:
    """The rows of ``shown`` as LaTeX, each cell escaped, and made :func:`_breakable` in the
    ``breakable`` columns; each distinct cell of a column is escaped once (a long table
    repeats its labels and its numbers)."""
    columns = []
    for column, wrap in zip(shown.columns, breakable, strict=True):
        values = shown[column].tolist()
        tex = {v: latex_escape(v) for v in set(values)}
        if wrap:
            tex = {v: _breakable(t) for v, t in tex.items()}
        columns.append([tex[v] for v in values])
    return [" & ".join(row) + r" \\" for row in zip(*columns, strict=True)]


@functools.lru_cache(maxsize=256)
def _longest_word(values: frozenset[str]) -> int:
    """The characters of the longest unbreakable word of ``values`` (text breaks at spaces
    and after ``-._/``); 0 without one. Cached: fitting a table asks again for the columns
    it has not changed."""
    words = [w for v in values for w in re.split(r"(?<=[-._/])|\s+", v) if w]
    return max((len(w) for w in words), default=0)


def _column_widths(
    shown: pd.DataFrame, numeric: list[bool], scale: float
) -> tuple[dict[str, float], dict[str, float]]:
    """Each column's natural width and the least it can take, in points: numbers keep the
    width of their widest cell; text columns wrap, down to their longest unbreakable word;
    headers wrap between words."""

    natural, minimum = {}, {}
    for column, is_numeric in zip(shown.columns, numeric, strict=True):
        values = frozenset(shown[column].tolist())  # each distinct cell once: tables repeat them
        header = 7.0 * max(len(w) for w in column.split()) * scale
        natural[column] = max(header, 5.5 * max(len(v) for v in [column, *values]) * scale)
        minimum[column] = max(header, 6.2 * max(4, _longest_word(values)) * scale)
        if is_numeric:
            widest = 6.2 * max([4, *(len(v) for v in values)]) * scale
            minimum[column] = natural[column] = max(header, widest)
    return natural, minimum


def _room(shown: pd.DataFrame, colsep: float, width: float) -> float:
    return width - 2 * colsep * (len(shown.columns) - 1) - 2.0


def _fits(
    shown: pd.DataFrame, numeric: list[bool], scale: float, colsep: float, width: float
) -> bool:
    """Whether ``shown``'s columns, each at its least width, fit ``width``."""
    return sum(_column_widths(shown, numeric, scale)[1].values()) <= _room(shown, colsep, width)


def _wrapped_spec(
    shown: pd.DataFrame, numeric: list[bool], scale: float, colsep: float, width: float
) -> str:
    """Fixed-width columns that add up to ``width``: each column at least its least width
    (:func:`_column_widths`), the rest shared in proportion to what more each needs."""
    natural, minimum = _column_widths(shown, numeric, scale)
    spare = _room(shown, colsep, width) - sum(minimum.values())
    wanted = sum(natural[c] - minimum[c] for c in shown.columns) or 1.0
    columns = []
    for column, is_numeric in zip(shown.columns, numeric, strict=True):
        extra = max(spare, 0.0) * (natural[column] - minimum[column]) / wanted
        width_pt = min(natural[column], minimum[column] + extra)
        align = r"\raggedleft" if is_numeric else r"\raggedright"
        columns.append(rf">{{{align}\arraybackslash}}p{{{width_pt:.1f}pt}}")
    return "".join(columns)


def _keyed(
    shown: pd.DataFrame, numeric: list[bool], scale: float, colsep: float, width: float
) -> tuple[pd.DataFrame, list[str]]:
    """``shown`` with the long texts that repeat down a column (how an interval was computed,
    a note) replaced by a number in a legend, widest column first, until the columns' least
    widths fit ``width`` (or no such column is left); and the legend's entries. The
    first column (what a row is) is never keyed."""
    shown, legend = shown.copy(), []
    while True:
        if _fits(shown, numeric, scale, colsep, width):
            return shown, legend
        _, minimum = _column_widths(shown, numeric, scale)
        candidates = [
            column
            for column, is_numeric in zip(shown.columns[1:], numeric[1:], strict=True)
            if not is_numeric
            and max(map(len, shown[column])) > KEYED_CHARS
            and shown[column].nunique() <= max(3, len(shown) // 4)
        ]
        if not candidates:
            return shown, legend
        column = max(candidates, key=minimum.__getitem__)
        texts = [t for t in dict.fromkeys(shown[column]) if t != "–"]
        keys = {t: f"[{len(legend) + i + 1}]" for i, t in enumerate(texts)}
        legend += [f"{column} {keys[t]}: {t}" for t in texts]
        keyed = shown[column].map(lambda v, k=keys: k.get(v, v))
        shown[column] = keyed.astype(object)  # plain strings, as latex_table made them


def latex_table(
    frame: pd.DataFrame, caption: str, label: str, shown: pd.DataFrame | None = None
) -> str:
    """A booktabs table that compiles as written and fits a one-column article.

    Uses only booktabs, graphicx (and lscape, beside it), longtable, array and caption:
    ``\\small`` always, ``\\resizebox`` for a wide short table, ``longtable`` for a long one:
    smaller type, then wrapped text columns, then the long texts a column repeats said once
    in a legend under the table, then a landscape page, until it fits. The values are never
    changed; the CSV keeps every column. ``shown``: ``presented(frame)``, when the caller
    has it already.
    """
    if _CAPTION_NUMBERED.match(caption):
        raise ValueError(f"table {label}: the caption must not start with 'Table N:'")
    if shown is None:
        shown = presented(frame)
    # Plain Python strings: the fitting below reads every cell many times, and a pandas
    # string column yields its cells one at a time, about twenty times slower.
    shown = shown.astype(object)
    numeric = [
        pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
        for c in frame.columns
    ]
    header = " & ".join(latex_escape(c) for c in shown.columns) + r" \\"
    title = rf"\caption{{{latex_escape(caption)}}}\label{{tab:{label}}}"
    if len(shown) <= LONG_TABLE_ROWS:
        body = _body(shown, [False] * len(numeric))
        spec = "".join("r" if n else "l" for n in numeric)
        tabular = "\n".join(
            [
                rf"\begin{{tabular}}{{@{{}}{spec}@{{}}}}",
                r"\toprule",
                header,
                r"\midrule",
                *body,
                r"\bottomrule",
                r"\end{tabular}",
            ]
        )
        if _width_pt(_widest(shown), 0.9, 6.0) > TEXT_WIDTH_PT:
            tabular = r"\resizebox{\linewidth}{!}{%" + "\n" + tabular + "%\n}"
        return "\n".join(
            [r"\begin{table}[tbp]", r"\centering", r"\small", title, tabular, r"\end{table}", ""]
        )
    # Long: pick the largest type that fits; wrap the text columns if none does, with the
    # long texts a column repeats in a legend, on a landscape page if still too wide.
    sizes = ((r"\small", 0.9, 4.0), (r"\footnotesize", 0.8, 3.0), (r"\scriptsize", 0.7, 2.0))
    widest = _widest(shown)
    fitting = [s for s in sizes if _width_pt(widest, s[1], s[2]) <= TEXT_WIDTH_PT]
    size, scale, colsep = fitting[0] if fitting else sizes[-1]
    spec = "".join("r" if n else "l" for n in numeric)
    legend, width = [], TEXT_WIDTH_PT
    if not fitting:  # text columns wrap, and long identifiers may break
        keyed, legend = _keyed(shown, numeric, scale, colsep, width)
        if not _fits(keyed, numeric, scale, colsep, width):  # landscape, texts in place
            width = LANDSCAPE_WIDTH_PT
            keyed, legend = _keyed(shown, numeric, scale, colsep, width)
        shown = keyed
        spec = _wrapped_spec(shown, numeric, scale, colsep, width)
    body = _body(shown, [not fitting and not n for n in numeric])
    notes = [r"\par\noindent " + latex_escape(entry) for entry in legend]
    lines = [
        "{" + size,
        rf"\setlength{{\tabcolsep}}{{{colsep:g}pt}}",
        rf"\begin{{longtable}}{{@{{}}{spec}@{{}}}}",
        title + r" \\",
        r"\toprule",
        header,
        r"\midrule",
        r"\endfirsthead",
        r"\toprule",
        header,
        r"\midrule",
        r"\endhead",
        r"\bottomrule",
        r"\endfoot",
        *body,
        r"\end{longtable}",
        *notes,
        "}",
    ]
    if width > TEXT_WIDTH_PT:  # lscape: in the graphics bundle, beside graphicx
        lines = [r"\begin{landscape}", *lines, r"\end{landscape}"]
    return "\n".join([*lines, ""])
