"""A long frame (trials, cells) as a table to sort and filter in JupyterLab: :func:`browse`.

It uses itables (DataTables) offline: the first call in a kernel shows the library's
JavaScript and CSS inline (keep that output, as itables says), so the notebook opens
without a network; each table's HTML id comes from its content, so a notebook run twice on
the same data is written the same.
"""

from __future__ import annotations

import hashlib

import pandas as pd

#: Largest table (bytes of its data) shown whole; a larger one is downsampled by itables,
#: which says so under the table.
MAX_BYTES = 8_000_000

_initialised = False


def table_html(frame: pd.DataFrame, caption: str | None = None) -> str:
    """``frame`` as an offline itables table (the HTML :func:`browse` displays): sortable,
    searchable, a filter box under each column, no index."""
    from itables import to_html_datatable

    content = pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes()
    table_id = "itables_" + hashlib.sha256(content).hexdigest()[:12]
    return to_html_datatable(
        frame,
        caption=caption,
        table_id=table_id,
        connected=False,
        showIndex=False,
        column_filters="footer",
        maxBytes=MAX_BYTES,
        display_logo_when_loading=False,
    )


def browse(frame: pd.DataFrame, caption: str | None = None) -> None:
    """Show ``frame`` in a notebook as a table to sort, search and filter, offline.

    Click a header to sort; a box under each column filters it. Outside a notebook,
    nothing is shown.

    Parameters
    ----------
    frame : DataFrame
        Any table, such as :func:`rates` or :func:`flips` returns.
    caption : str, optional
        A caption above the table.

    Returns
    -------
    None
        The table is displayed (IPython's ``display``), not returned.

    See Also
    --------
    rates : Rates with intervals, a long table to browse.
    flips : Two conditions paired by scenario, one row per scenario.

    Examples
    --------
    In a notebook, this shows the frame as a table to sort and filter; in plain Python the
    display objects print as their names:

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"condition": ["a (off)", "b (off)"], "estimate": [0.8, 0.6]})
    >>> browse(frame, caption="Two conditions")  # doctest: +ELLIPSIS
    <IPython.core.display.HTML object>
    ...

    The table it shows, with its caption and the values of every row:

    >>> from analysis.exploring.interactive_table import table_html
    >>> html = table_html(frame, caption="Two conditions")
    >>> "Two conditions" in html, "b (off)" in html, "0.6" in html
    (True, True, True)
    """
    global _initialised
    from IPython.display import HTML, display

    if not _initialised:
        from itables import init_notebook_mode

        init_notebook_mode(all_interactive=False, connected=False)
        _initialised = True
    display(HTML(table_html(frame, caption)))
