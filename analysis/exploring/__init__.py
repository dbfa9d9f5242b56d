"""Exploring: the functions a researcher calls in JupyterLab to ask what the paper did not.

Owns one joined trials-and-scenarios table (``joined``: ``with_metadata``), rates with
intervals by any column (``rate_table``: ``rates``), two conditions paired by scenario
(``pairing``: ``flips``, ``flip_test``), precomputed intervals drawn (``interval_figure``:
``plot_rates``), the published conditions, reference policies and runs ranked in one
table (``standings``), a long frame to sort and filter (``interactive_table``: ``browse``), and
the tidy tables as Parquet and CSV for other tools (``export``: ``make export``).

Public names: ``with_metadata``, ``rates``, ``flips``, ``flip_test``, ``plot_rates``,
``standings``, ``browse``, imported from :mod:`analysis` (``from analysis import rates``)
and documented there, each on its page of the API reference. The package has no
``__all__`` of its own: ``standings`` names both a module and its function here, so a
name re-exported by this package would become the module once that is imported.

May import: :mod:`analysis.files`, :mod:`analysis.paths`, :mod:`analysis.help_text`,
:mod:`analysis.corpus`, :mod:`analysis.trials`, :mod:`analysis.scoring`,
:mod:`analysis.inference`, :mod:`analysis.paper` (the house figure style).
"""
