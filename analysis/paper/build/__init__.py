"""The build behind ``make paper``: every notebook run on warm kernels, staged, and moved into
``paper/`` only when all succeeded.

``python -m analysis.paper.build`` runs it (``cli``). ``staging`` stages the outputs and
replaces ``paper/`` at once, carrying over the outputs of unchanged notebooks
(``carry_over``) and keeping failed ones (``failures``); ``scheduler`` hands the notebooks
to warm kernels (``kernels``, reset between notebooks by ``kernel_state``, run by
papermill through ``warm_engine``), each run by ``notebook_run`` with what the input check
hands on (``checked_inputs``); ``reports`` writes ``numbers.json`` with its build record,
the HTML report and the PDF; ``errors`` holds the build's refusals. Importing this package
imports nothing: the no-op check of ``make paper`` stays lean.
"""
