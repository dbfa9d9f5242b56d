"""The gate runner: runs a gate over the pinned scenarios and writes a raw run root.

Modules, one job each: ``client`` (OpenAI-compatible endpoint calls with retries) and
``secrets`` (keys kept out of what is written), ``gates`` (the reference policies and the
endpoint gate), ``python_gate`` (a Python function as a gate, named ``MODULE:FUNCTION``),
``cells`` (each cell scored as upstream's runner scores it), ``summary``
(the run's summary and state files), ``identity`` (what identifies a run and its derived
run id), ``shards`` (which scenarios a shard takes), ``records`` (a trial's and a cell's
record), ``runroot`` (the run root on
disk: its top-level files, state and records), ``workers`` (the threads that call the gate
and write trial files), ``gate_run`` (running a gate into a run root, resuming), ``tidy``
(the compact CSV export), ``reference`` (the reference policies' table for the imported
release), ``inspect_task`` (the same benchmark as an Inspect AI task) and ``cli`` (the
``steerbench-run`` command). What a scenario renders to, what a run pins and how a reply is
parsed are the release's rules, in :mod:`analysis.corpus`.

May import: :mod:`analysis.files`, :mod:`analysis.paths`, :mod:`analysis.help_text`,
:mod:`analysis.corpus`, :mod:`analysis.trials`, :mod:`analysis.scoring`.
"""
