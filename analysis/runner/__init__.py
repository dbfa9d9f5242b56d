"""The gate runner: runs a gate over the pinned scenarios and writes a raw run root.

Modules, one job each: ``inputs`` (pinned, hash-checked inputs), ``render`` (each
scenario's user message rendered from its file as upstream renders it, with ``integrity``
and ``jsvalues``), ``parsing`` (the published response parser), ``client``
(OpenAI-compatible endpoint calls with retries),
``gates`` (reference policies and the endpoint gate), ``cells`` (per-cell scoring),
``runroot`` (the run-root writer with resume and shards), ``tidy`` (the compact CSV
export), ``reference`` (the reference policies' table for the imported release) and ``cli``
(the ``steerbench-run`` command).
"""
