"""The paper: every table, figure and number, built from the imported release into ``paper/``.

Owns ``make paper`` (``make``: the content-keyed no-op check; ``build``: the build's command
line; ``staged_build``: the notebooks' outputs staged and moved into ``paper/`` only when all
succeeded, with ``unchanged_notebooks`` carried over, ``failed_notebooks`` kept and named,
and ``build_errors``; ``notebook_runner``: the notebooks scheduled over warm kernels, each
run by ``notebook_run``, given what the input check hands on by ``checked_inputs``, with
``kernels``, ``kernel_state`` and ``warm_engine``; ``reports``: ``numbers.json`` with its
build record, the report and the PDF), each notebook's logic (``sections``), what a
notebook writes (``outputs``: figures, tables, numbers; ``figures``, ``presentation``,
``latex``, ``provenance`` for ``numbers.json``, ``claims`` for the claims ledger) and the
reports made from it all (``html_report``, ``pdf`` with ``pdf_fonts`` and ``templates/``),
and the notebooks as committed (``notebooks``: ``make strip``).

May import: :mod:`analysis.files`, :mod:`analysis.paths`, :mod:`analysis.help_text`,
:mod:`analysis.lazy`, :mod:`analysis.corpus`, :mod:`analysis.trials`, :mod:`analysis.scoring`,
:mod:`analysis.inference`, :mod:`analysis.release`.
"""
