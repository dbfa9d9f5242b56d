"""One joined table: trials or scored cells with their scenario's and condition's labels.

:func:`with_metadata` appends, to a trials table (``analysis.trials``) or a scored-cells
table (``analysis.scoring.rules.score_cells``), the columns a question slices by, as Inspect's
``samples_df`` carries a sample's metadata:

``domain``, ``action_effect``, ``boundary_pattern``, ``direction``, ``irreversibility``,
``required_gate`` (category)
    The scenario's labels, as in ``analysis.corpus.scenarios.load_scenarios``.
``reasoning_level`` (category: ``floor``, ``high``; NaN)
    ``floor`` or ``high`` for a condition of a model with exactly one floor and one high
    condition in the table (per source, as ``analysis.inference.reasoning_pairs_of`` pairs
    them); NaN for every other condition (a reference policy, a model run at one setting or
    at three).

``condition_label`` (category)
    The condition, as ``"source: condition"`` where its name is in several sources (a run
    named like a reference policy) and as its name elsewhere (:func:`condition_labels`): a
    column to group or draw by that never adds two conditions together.

``model``, ``reasoning`` and ``source`` are in both tables already. A column the table has
already is left as it is.
"""

from __future__ import annotations

import pandas as pd

#: The scenario columns :func:`with_metadata` appends, in order.
SCENARIO_METADATA: tuple[str, ...] = (
    "domain",
    "action_effect",
    "boundary_pattern",
    "direction",
    "irreversibility",
    "required_gate",
)

#: ``reasoning_level``'s dtype.
LEVEL_DTYPE = pd.CategoricalDtype(["floor", "high"])


def reasoning_levels(frame: pd.DataFrame) -> pd.Series:
    """Per row of ``frame`` (trials or cells): ``floor`` / ``high`` where its condition is one
    side of a model's one floor-and-high pair, else NaN (:data:`LEVEL_DTYPE`)."""
    from analysis.inference.paired import reasoning_pairs_of

    pairs = reasoning_pairs_of(frame)
    level: dict[tuple[str, str], str] = {}
    for pair in pairs.itertuples(index=False):
        level[(pair.source, pair.floor)] = "floor"
        level[(pair.source, pair.high)] = "high"
    keys = zip(frame["source"].astype(str), frame["condition"].astype(str), strict=True)
    return pd.Series(
        pd.Categorical([level.get(key) for key in keys], dtype=LEVEL_DTYPE), index=frame.index
    )


def condition_labels(frame: pd.DataFrame) -> pd.Series:
    """Per row of ``frame`` (with ``condition`` and, optionally, ``source``): its condition's
    name, or ``"source: name"`` where the name is in several sources.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"source": ["run", "reference-policy", "run"],
    ...     "condition": ["surface-flag (policy)", "surface-flag (policy)", "m (off)"]})
    >>> condition_labels(frame).tolist()
    ['run: surface-flag (policy)', 'reference-policy: surface-flag (policy)', 'm (off)']
    """
    names = frame["condition"].astype(str)
    if "source" not in frame.columns:
        return names.rename("condition_label")
    sources = frame["source"].astype(str)
    shared = sources.groupby(names).transform("nunique") > 1
    return (sources + ": " + names).where(shared, names).rename("condition_label")


def with_scenario_columns(
    frame: pd.DataFrame, scenarios: pd.DataFrame, columns: tuple[str, ...] | list[str]
) -> pd.DataFrame:
    """A copy of ``frame`` with each of the scenario table's ``columns`` that it lacks,
    matched by ``scenario_id`` (categorical, numeric and boolean dtypes kept; text becomes
    ``category``; lists stay lists). A scenario id the
    table lacks is a ``ValueError`` naming it."""
    table = scenarios.drop_duplicates("scenario_id")
    table = table.set_index(table["scenario_id"].astype(str))
    ids = frame["scenario_id"].astype(str)
    position = table.index.get_indexer(ids)
    if (position < 0).any():
        unknown = sorted(set(ids[position < 0]))
        raise ValueError(f"{len(unknown)} scenario id(s) not in the scenarios table: {unknown[:5]}")
    out = frame.copy()
    for column in columns:
        if column in out.columns:
            continue
        values = pd.Series(table[column].to_numpy()[position], index=frame.index)
        dtype = table[column].dtype
        if isinstance(dtype, pd.CategoricalDtype) or dtype.kind in "biuf":
            out[column] = values.astype(dtype)
            continue
        try:
            out[column] = values.astype("category")
        except TypeError:  # lists (tags, flags) stay lists
            out[column] = values
    return out


def with_metadata(frame: pd.DataFrame, scenarios: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (trials or scored cells) with the scenario columns, ``reasoning_level`` and
    ``condition_label`` appended.

    Every row stays as it was: nothing is added together. The appended columns'
    dtypes are described in :mod:`analysis.exploring.joined`.

    Parameters
    ----------
    frame : DataFrame
        Trials (:func:`load_trials`) or scored cells (:func:`score_cells`): at least
        ``scenario_id``, ``source``, ``model``, ``reasoning`` and ``condition``.
    scenarios : DataFrame
        The scenario table (:func:`load_scenarios`), holding every scenario id of ``frame``.

    Returns
    -------
    DataFrame
        ``frame``'s rows and columns, then :data:`~analysis.exploring.joined.SCENARIO_METADATA`
        (``domain``, ``action_effect``, ``boundary_pattern``, ``direction``,
        ``irreversibility``, ``required_gate``), ``reasoning_level`` (``floor`` or
        ``high``) and ``condition_label``.

    Raises
    ------
    ValueError
        Naming the scenario ids ``scenarios`` lacks.

    See Also
    --------
    rates : Rates by any of these columns, joined the same way.
    load_scenarios : The scenario table.

    Examples
    --------
    >>> import pandas as pd
    >>> scenarios = pd.DataFrame({"scenario_id": ["a"], "domain": ["ops"],
    ...     "action_effect": ["write"], "boundary_pattern": ["clean_control"],
    ...     "direction": ["baseline"], "irreversibility": ["reversible"],
    ...     "required_gate": ["allowed"]})
    >>> trials = pd.DataFrame({"scenario_id": ["a", "a"], "source": "run",
    ...     "model": "m", "reasoning": ["off", "high"], "condition": ["m (off)", "m (high)"]})
    >>> with_metadata(trials, scenarios)[["domain", "reasoning_level"]].to_dict("list")
    {'domain': ['ops', 'ops'], 'reasoning_level': ['floor', 'high']}
    """
    missing = [c for c in ("scenario_id", *SCENARIO_METADATA) if c not in scenarios.columns]
    if missing:
        raise ValueError(f"scenarios table: missing column(s) {missing}")
    out = with_scenario_columns(frame, scenarios, SCENARIO_METADATA)
    if "reasoning_level" not in out.columns:
        out["reasoning_level"] = reasoning_levels(out)
    if "condition_label" not in out.columns and "condition" in out.columns:
        out["condition_label"] = condition_labels(out).astype("category")
    return out
