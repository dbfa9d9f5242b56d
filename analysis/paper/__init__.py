"""The paper: every table, figure and number, built from the imported release into ``paper/``.

Owns ``make paper`` (``make``: the content-keyed no-op check; ``build/``: the notebooks run
on warm kernels, staged and moved into ``paper/`` only when all succeeded, and the reports
made from them), each notebook's logic (``sections/``), what a notebook writes (``outputs``:
figures, tables, numbers; ``figures`` with ``pdf_fonts``, ``presentation`` and ``latex`` for
tables, ``provenance`` for ``numbers.json``, ``claims`` for the claims ledger), the reports
(``html_report``, ``pdf`` with ``templates/``) and the notebooks as committed
(``notebooks``: ``make strip``).

May import: :mod:`analysis.files`, :mod:`analysis.paths`, :mod:`analysis.help_text`,
:mod:`analysis.lazy`, :mod:`analysis.corpus`, :mod:`analysis.trials`, :mod:`analysis.scoring`,
:mod:`analysis.inference`, :mod:`analysis.release`.
"""
