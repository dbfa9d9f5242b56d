"""A table of strings as a Markdown pipe table, exactly as ``DataFrame.to_markdown(index=False,
disable_numparse=True)`` (tabulate's ``pipe`` format) writes it.

tabulate infers a type and strips ANSI codes cell by cell; on a table of 10,000 rows (a
1,000-condition release's accuracy by domain) that took over a second. A table of plain
strings needs none of it: every column is left-aligned, each cell stripped of surrounding
whitespace (headers are kept as they are) and padded to the column's display width (wide
characters count two, as tabulate counts them with ``wcwidth``), at least its header's width
plus two. Anything else (no rows, a value that is not a string or None, a newline, tab or
escape character) is left to tabulate. ``tests/test_outputs.py`` holds the two to the same text.
"""

from __future__ import annotations

import pandas as pd
from wcwidth import wcswidth

#: Characters tabulate treats specially (multiline cells, tabs, ANSI escapes).
_SPECIAL = frozenset("\n\r\t\x1b")
#: tabulate's least padding of a header in the pipe format.
_HEADER_PADDING = 2


def _width(text: str) -> int:
    return len(text) if text.isascii() else wcswidth(text)


def _plain(column: list) -> bool:
    texts = [value for value in column if value is not None]
    return all(isinstance(value, str) for value in texts) and _SPECIAL.isdisjoint("".join(texts))


def markdown_table(frame: pd.DataFrame) -> str:
    """``frame`` (strings) as a Markdown pipe table without its index,
    the text ``frame.to_markdown(index=False, disable_numparse=True)`` gives.

    Examples
    --------
    >>> print(markdown_table(pd.DataFrame({"model": ["a", "longer"], "rate": ["1.0%", "–"]})))
    | model   | rate   |
    |:--------|:-------|
    | a       | 1.0%   |
    | longer  | –      |
    """
    headers = [str(name) for name in frame.columns]
    columns = [frame[name].tolist() for name in frame.columns]
    if not len(frame) or not _plain(headers) or not all(map(_plain, columns)):
        return frame.to_markdown(index=False, disable_numparse=True)
    cells = [["" if value is None else value.strip() for value in column] for column in columns]
    lines = []
    widths = []
    for header, column in zip(headers, cells, strict=True):
        ascii_only = "".join(column).isascii()  # each character one column wide
        shown = list(map(len, column)) if ascii_only else [_width(value) for value in column]
        widths.append((max(max(shown), _width(header) + _HEADER_PADDING), shown, ascii_only))
    lines.append(
        "| "
        + " | ".join(
            h + " " * (w - _width(h)) for h, (w, _, _) in zip(headers, widths, strict=True)
        )
        + " |"
    )
    lines.append("|" + "|".join(":" + "-" * (w + 1) for w, _, _ in widths) + "|")
    padded = [
        [value.ljust(w) for value in column]
        if ascii_only
        else [value + " " * (w - shown[row]) for row, value in enumerate(column)]
        for column, (w, shown, ascii_only) in zip(cells, widths, strict=True)
    ]
    lines.extend("| " + " | ".join(row) + " |" for row in zip(*padded, strict=True))
    return "\n".join(lines)
