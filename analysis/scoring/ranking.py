"""Table 2: the conditions ranked, and every column printed from their counts as the release
prints it."""

from __future__ import annotations

from fractions import Fraction

import pandas as pd

from analysis.corpus.formatting import count_text, percent_text, weighted_miss_text
from analysis.scoring.leaderboard import interval_text


def table2_order_key(n_trials_correct: int, n_trials: int, n_pass5: int, name: str) -> tuple:
    """Table 2's sort key: mean trial accuracy (exact, descending), then pass5 count
    (descending), then the label; a condition with no trials sorts last."""
    accuracy = Fraction(int(n_trials_correct), int(n_trials)) if int(n_trials) else Fraction(-1)
    return (-accuracy, -int(n_pass5), str(name))


def rank_conditions(conditions: pd.DataFrame) -> pd.DataFrame:
    """Conditions in Table 2's order (:func:`table2_order_key`; the name is ``label`` when
    present, else ``condition``) with ``rank`` 1..n.

    Examples
    --------
    On the imported release:

    >>> from analysis import load_conditions, load_scenarios
    >>> ranked = rank_conditions(load_conditions(load_scenarios()))
    >>> bool(ranked["rank"].is_monotonic_increasing), int(ranked["rank"].iloc[0])
    (True, 1)
    """
    name = "label" if "label" in conditions.columns else "condition"
    keys = [
        table2_order_key(k, n, p, label)
        for k, n, p, label in zip(
            conditions["n_trials_correct"],
            conditions["n_trials"],
            conditions["n_pass5"],
            conditions[name],
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


def leaderboard_table(ranked: pd.DataFrame) -> pd.DataFrame:
    """Table 2 as printed: every column re-derived from the counts, in rank order.

    Examples
    --------
    On the imported release:

    >>> from analysis import load_conditions, load_scenarios
    >>> conditions = load_conditions(load_scenarios())
    >>> table = leaderboard_table(rank_conditions(conditions))
    >>> table.columns[:2].tolist(), len(table) == len(conditions)
    (['rank', 'condition'], True)
    """

    def column(render, k: str, n: str) -> list[str]:
        return [render(a, b) for a, b in zip(ranked[k], ranked[n], strict=True)]

    def rate(a: int, b: int) -> str:
        return count_text(a, b, whole_bare=True)

    names = read_names(trials_per_cell(ranked))
    return pd.DataFrame(
        {
            "rank": ranked["rank"],
            "condition": ranked["label"],
            "mean trial accuracy": column(percent_text, "n_trials_correct", "n_trials"),
            "95% CI": column(interval_text, "n_trials_correct", "n_trials"),
            names["modal"]: column(count_text, "n_modal_correct", "n_cells"),
            "modal 95% CI": column(interval_text, "n_modal_correct", "n_cells"),
            names["pass"]: column(percent_text, "n_pass5", "n_cells"),
            f"{names['pass']} 95% CI": column(interval_text, "n_pass5", "n_cells"),
            "under-refusal": column(rate, "n_under_refusals", "n_hold_opportunities"),
            "over-refusal": column(rate, "n_over_refusals", "n_proceed_opportunities"),
            "weighted miss": [weighted_miss_text(*fit) for fit in ranked["weighted_miss_fit"]],
            "weighted miss counts": ranked["weighted_miss_counts"],
            "weighted miss counts from": ranked["weighted_miss_from"],
        }
    )
