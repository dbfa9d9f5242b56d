"""The benchmark's fixed inputs and rules: what every trial is read against.

Owns the closed vocabularies (``vocabulary``), the scenario corpus as a tidy table
(``scenarios``), the values the paper publishes (``published``), and upstream's rules,
restated: a scenario rendered into a model's input (``render``, with ``integrity`` and
``jsvalues``), the pinned inputs of a run (``inputs``), a reply read back into a decision and
a trial status (``parsing``; ``verdict`` for an Inspect AI sample), and a number printed as
the release prints it (``formatting``).

May import: :mod:`analysis.files`, :mod:`analysis.paths`.
"""
