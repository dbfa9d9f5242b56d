"""Table 2: the conditions ranked, and every column printed from their counts as the release
prints it."""

from __future__ import annotations

from fractions import Fraction

import pandas as pd

from analysis.corpus.formatting import count_text, percent_text, weighted_miss_text
from analysis.scoring.leaderboard import FROM_VERDICTS, interval_text

#: The counts Table 2 is ranked and printed from (``load_conditions`` or ``condition_scores``).
RANKED_COUNTS = (
    "n_trials",
    "n_trials_correct",
    "n_cells",
    "n_modal_correct",
    "n_pass5",
    "n_hold_opportunities",
    "n_under_refusals",
    "n_proceed_opportunities",
    "n_over_refusals",
)
#: What a table holding no count stands for in a printed column (no scored cell, no
#: opportunity, no decided weight): the release prints no rate there.
EMPTY = "–"


def require_counts(conditions: pd.DataFrame, argument: str, columns=RANKED_COUNTS) -> None:
    """Refuse ``conditions`` unless it holds condition counts: one line naming the argument
    and what it lacks (counts come from ``load_conditions`` or ``condition_scores``)."""
    if not isinstance(conditions, pd.DataFrame):
        raise TypeError(f"{argument}: a DataFrame of condition counts, not {type(conditions)}")
    missing = [c for c in columns if c not in conditions.columns]
    if "condition" not in conditions.columns and "label" not in conditions.columns:
        missing.insert(0, "condition")
    if missing:
        raise ValueError(
            f"{argument}: not condition counts (no column {', '.join(missing)}); pass "
            "load_conditions(...) for the published conditions or condition_scores(cells) "
            "for per-trial verdicts, or both joined with pd.concat"
        )
    counts = conditions[list(columns)]
    if counts.isna().any().any():
        gaps = [c for c in columns if conditions[c].isna().any()]
        raise ValueError(f"{argument}: counts missing in column(s) {', '.join(gaps)}")


def condition_names(conditions: pd.DataFrame) -> pd.Series:
    """Each condition's name: its ``label`` where it has one (published conditions), else
    its ``condition`` (conditions scored from per-trial verdicts)."""
    if "condition" not in conditions.columns:
        return conditions["label"].astype(str)
    names = conditions["condition"].astype(object)
    if "label" in conditions.columns:
        names = conditions["label"].astype(object).where(conditions["label"].notna(), names)
    return names.astype(str)


def table2_order_key(n_trials_correct: int, n_trials: int, n_pass5: int, name: str) -> tuple:
    """Table 2's sort key: mean trial accuracy (exact, descending), then pass5 count
    (descending), then the label; a condition with no trials sorts last."""
    accuracy = Fraction(int(n_trials_correct), int(n_trials)) if int(n_trials) else Fraction(-1)
    return (-accuracy, -int(n_pass5), str(name))


def rank_conditions(conditions: pd.DataFrame) -> pd.DataFrame:
    """Conditions in Table 2's order, with ``rank`` 1..n.

    The order is :func:`~analysis.scoring.ranking.table2_order_key`: mean trial accuracy,
    then pass5 count, then name (``label`` where present, else ``condition``), so no two
    conditions tie. Published conditions (``load_conditions``) and conditions scored from
    per-trial verdicts (``condition_scores``) may be ranked together (``pd.concat``).

    Parameters
    ----------
    conditions : DataFrame
        One row per condition with its counts, as :func:`load_conditions` or
        :func:`condition_scores` returns them (or both concatenated).

    Returns
    -------
    DataFrame
        ``conditions`` sorted in Table 2's order, with a ``rank`` column (1 = best).

    Raises
    ------
    ValueError
        A frame without the counts, naming what it lacks.

    See Also
    --------
    leaderboard_table : Table 2 as printed from these ranks.
    standings : Your runs ranked beside Table 2, with rank sets.
    analysis.inference.rank_uncertainty_from_counts : Rank sets for these ranks.

    Examples
    --------
    On the imported release:

    >>> from analysis import load_conditions, load_scenarios
    >>> ranked = rank_conditions(load_conditions(load_scenarios()))
    >>> ranked[["rank", "condition", "n_trials_correct", "n_pass5"]].head(3)
       rank                        condition  n_trials_correct  n_pass5
    0     1  gemini-3.1-flash-lite (minimal)               492       97
    1     2               gpt-5.4-mini (off)               487       95
    2     3              gpt-5.4-mini (high)               487       93
    """
    require_counts(conditions, "conditions", RANKED_COUNTS[:5])
    keys = [
        table2_order_key(k, n, p, label)
        for k, n, p, label in zip(
            conditions["n_trials_correct"],
            conditions["n_trials"],
            conditions["n_pass5"],
            condition_names(conditions),
            strict=True,
        )
    ]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    return conditions.iloc[order].reset_index(drop=True).assign(rank=lambda t: range(1, len(t) + 1))


def trials_per_cell(conditions: pd.DataFrame) -> int | None:
    """The trials per cell behind condition counts (``n_trials`` over ``n_cells``; None when
    no condition has a scored cell). Conditions run with different counts are an error."""
    counts = {
        int(t) // int(c)
        for t, c in zip(conditions["n_trials"], conditions["n_cells"], strict=True)
        if int(c)
    }
    if len(counts) > 1:
        raise ValueError(f"conditions run with different trials per cell: {sorted(counts)}")
    return counts.pop() if counts else None


def read_names(k: int | None) -> dict[str, str]:
    """What the modal read and the all-trials read are called at ``k`` trials per cell: the
    paper's ``modal-of-5`` and ``pass5`` at five (numbers keep the names ``modal_accuracy`` and
    ``pass5`` at any ``k``; their descriptions say how many trials).

    >>> read_names(3)
    {'modal': 'modal-of-3', 'pass': 'pass3', 'trials': '3 trials'}
    """
    if k is None:
        return {"modal": "modal", "pass": "pass-all", "trials": "all trials"}
    return {"modal": f"modal-of-{k}", "pass": f"pass{k}", "trials": f"{k} trials"}


def _weighted_miss(ranked: pd.DataFrame) -> tuple[list, list, list]:
    """Per row: the printed weighted miss, its count and where the count comes from; a
    published row has them (``weighted_miss_fit``), a row scored from per-trial verdicts
    has ``weight_missed / weight_scored``; no decided weight prints :data:`EMPTY`."""
    texts, counts, origins = [], [], []
    for row in ranked.to_dict("records"):
        fit = row.get("weighted_miss_fit")
        if not isinstance(fit, tuple):
            missed, scored = row.get("weight_missed"), row.get("weight_scored")
            fit = None if pd.isna(missed) or pd.isna(scored) else (int(missed), int(scored))
        if fit is None or not int(fit[1]):
            texts.append(EMPTY)
        else:
            texts.append(weighted_miss_text(*fit))
        listed = row.get("weighted_miss_counts")
        counts.append(
            listed if isinstance(listed, str) else EMPTY if fit is None else f"{fit[0]}/{fit[1]}"
        )
        origin = row.get("weighted_miss_from")
        origins.append(origin if isinstance(origin, str) else FROM_VERDICTS)
    return texts, counts, origins


def leaderboard_table(ranked: pd.DataFrame) -> pd.DataFrame:
    """Table 2 as printed: every column re-derived from the counts, in rank order.

    A rate with nothing to count (no scored cell, no opportunity) prints
    :data:`~analysis.scoring.ranking.EMPTY`, as the release prints no rate there; conditions
    run with different trials per cell name their reads without a count (``modal``,
    ``pass-all``: :func:`~analysis.scoring.ranking.read_names`).

    Parameters
    ----------
    ranked : DataFrame
        :func:`rank_conditions` of published conditions, of conditions scored from per-trial
        verdicts, or of both together; then a ``source`` column follows the condition's name
        (a condition is its source and its name).

    Returns
    -------
    DataFrame
        One row per condition in rank order, every value a printed string: ``rank``,
        ``condition``, ``mean trial accuracy`` with its ``95% CI`` (Wilson), ``modal-of-5``
        and ``pass5`` (rate and counts) with theirs, ``under-refusal``, ``over-refusal``,
        ``weighted miss``, and the ``weighted miss counts`` with where they come from.

    See Also
    --------
    rank_conditions : The ranks this table prints.
    wilson_interval : The intervals it prints.

    Examples
    --------
    On the imported release:

    >>> from analysis import load_conditions, load_scenarios
    >>> conditions = load_conditions(load_scenarios())
    >>> table = leaderboard_table(rank_conditions(conditions))
    >>> len(table) == len(conditions)
    True
    >>> table.iloc[:3, :4]
       rank                        condition mean trial accuracy          95% CI
    0     1  gemini-3.1-flash-lite (minimal)               92.8%  [90.3%, 94.7%]
    1     2               gpt-5.4-mini (off)               91.9%  [89.2%, 93.9%]
    2     3              gpt-5.4-mini (high)               91.9%  [89.2%, 93.9%]
    """
    require_counts(ranked, "ranked", RANKED_COUNTS)
    if "rank" not in ranked.columns:
        raise ValueError("ranked: no column rank; pass rank_conditions(conditions)")

    def column(render, k: str, n: str) -> list[str]:
        return [
            render(int(a), int(b)) if int(b) > 0 else EMPTY
            for a, b in zip(ranked[k], ranked[n], strict=True)
        ]

    def rate(a: int, b: int) -> str:
        return count_text(a, b, whole_bare=True)

    try:
        k = trials_per_cell(ranked)
    except ValueError:  # conditions run with different trials per cell: reads without a count
        k = None
    names = read_names(k)
    miss, miss_counts, miss_from = _weighted_miss(ranked)
    sources = ranked["source"].astype(str) if "source" in ranked.columns else None
    mixed = sources is not None and sources.nunique() > 1
    return pd.DataFrame(
        {
            "rank": ranked["rank"],
            "condition": condition_names(ranked),
            **({"source": sources} if mixed else {}),
            "mean trial accuracy": column(percent_text, "n_trials_correct", "n_trials"),
            "95% CI": column(interval_text, "n_trials_correct", "n_trials"),
            names["modal"]: column(count_text, "n_modal_correct", "n_cells"),
            "modal 95% CI": column(interval_text, "n_modal_correct", "n_cells"),
            names["pass"]: column(percent_text, "n_pass5", "n_cells"),
            f"{names['pass']} 95% CI": column(interval_text, "n_pass5", "n_cells"),
            "under-refusal": column(rate, "n_under_refusals", "n_hold_opportunities"),
            "over-refusal": column(rate, "n_over_refusals", "n_proceed_opportunities"),
            "weighted miss": miss,
            "weighted miss counts": miss_counts,
            "weighted miss counts from": miss_from,
        }
    )
