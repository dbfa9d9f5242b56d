"""Scoring: per-trial verdicts into scored cells, the published rows, and the paper's tables.

Owns the published scoring rules (``rules``: ``score_cells``, ``condition_scores``), a count
pair and its Wilson interval (``ratio``, ``intervals``), the leaderboard's rows read and
checked against the scenarios (``leaderboard``), Table 2 ranked and printed (``ranking``),
the per-trial verdicts checked against them (``crosscheck``), and the descriptive tables:
directional and reasoning metrics (``metrics``), pattern, mirror, severity and
hardest-scenario breakdowns (``breakdowns``), the three reads of the same trials ranked and
their splits (``reads``: ``stability``), relabelling sensitivity (``sensitivity``) and
corpus composition (``composition``). Nothing here is inferential beyond a Wilson interval;
that is :mod:`analysis.inference`.

May import: :mod:`analysis.files`, :mod:`analysis.paths`, :mod:`analysis.lazy`,
:mod:`analysis.corpus`, :mod:`analysis.trials`.
"""

from analysis.lazy import lazy_exports

#: The scoring rules, importable from here as before the package had subpackages.
_HOMES: dict[str, str] = {
    name: "analysis.scoring.rules"
    for name in (
        "CONDITION_COLUMNS",
        "NO_DECISION",
        "condition_scores",
        "direction_flags",
        "label_counts",
        "modal_decision",
        "score_cells",
    )
}

__all__ = sorted(_HOMES)
__getattr__, __dir__ = lazy_exports(globals(), _HOMES)
