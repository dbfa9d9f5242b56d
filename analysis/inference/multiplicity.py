"""Multiplicity: Holm and Benjamini-Hochberg adjustment within families fixed here, before
any data are read, each with the caveats its claims must carry."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Family:
    """A family of tests adjusted together: what it holds and what its claims must say."""

    name: str
    holds: str
    caveat: str


#: Every family the paper adjusts within (keys name them in tables and numbers). A family is
#: split by metric: one metric's contrasts are adjusted together.
FAMILIES = {
    "reasoning-published": Family(
        "reasoning contrasts, published counts",
        "each model's high minus floor setting, one test per model and metric",
        "tests on counts ignore the pairing by scenario (which a correlation across settings "
        "would sharpen) and count each scenario once for mean-trial accuracy (the largest "
        "design effect, as counts cannot estimate the clustering), so a contrast failing here "
        "may survive with the per-trial verdicts",
    ),
    "reasoning-paired": Family(
        "reasoning contrasts, paired by scenario",
        "each model's high minus floor setting on the per-trial verdicts, per metric",
        "paired by scenario; the scenarios are taken as a sample of scenarios like them",
    ),
}


def adjust_pvalues(
    results: pd.DataFrame,
    family: str | list[str] | None = None,
    alpha: float = 0.05,
    named: str | None = None,
) -> pd.DataFrame:
    """``results`` with Holm (family-wise) and Benjamini-Hochberg (false discovery rate)
    adjusted p-values (pingouin.multicomp) and whether each survives at ``alpha``.

    Tests with no p-value stay out of the family (their adjusted columns are NaN and
    ``family_size`` 0).

    Parameters
    ----------
    results : DataFrame
        One row per test, with its p-value in ``p`` (NaN: not tested), as
        :func:`unpaired_reasoning` or :func:`paired_binary_difference` return.
    family : str or list of str, optional
        The column(s) whose values each make one family, adjusted apart from the others
        (e.g. ``"metric"``). Default: every row is one family.
    alpha : float
        The family-wise error rate (Holm) and false discovery rate (Benjamini-Hochberg) a
        test must survive, in (0, 1).
    named : str, optional
        A key of :data:`FAMILIES`: each row then carries that family's name (followed by
        its ``family`` values) in ``family_name`` and the family's caveat in ``caveat``.

    Returns
    -------
    DataFrame
        ``results`` plus ``p_holm, p_bh`` (the adjusted p-values), ``survives_holm,
        survives_bh`` (adjusted p below ``alpha``) and ``family_size`` (the tests adjusted
        together), and ``family_name, caveat`` with ``named``. One row is one test, as in
        ``results``.

    Raises
    ------
    ValueError
        When ``named`` is not a key of :data:`FAMILIES`.

    See Also
    --------
    correlation_needed : The pairing an unpaired Holm survivor needs.
    unpaired_reasoning : Reasoning contrasts from published counts, one test per row.
    paired_binary_difference : Paired reasoning contrasts, one test per row.

    Examples
    --------
    >>> import pandas as pd
    >>> out = adjust_pvalues(pd.DataFrame({"p": [0.01, 0.02, 0.03, 0.5]}))
    >>> out["p_holm"].round(3).tolist(), out["survives_bh"].tolist()
    ([0.04, 0.06, 0.06, 0.5], [True, True, True, False])

    Two families, split by ``metric``, named for the paired contrasts:

    >>> tests = pd.DataFrame({"metric": list("aaab"), "p": [0.01, 0.02, 0.03, 0.5]})
    >>> out = adjust_pvalues(tests, family="metric", named="reasoning-paired")
    >>> out[["metric", "p_holm", "family_size", "family_name"]].round(3)
      metric  p_holm  family_size                                 family_name
    0      a    0.03            3  reasoning contrasts, paired by scenario: a
    1      a    0.04            3  reasoning contrasts, paired by scenario: a
    2      a    0.04            3  reasoning contrasts, paired by scenario: a
    3      b    0.50            1  reasoning contrasts, paired by scenario: b
    """
    import pingouin as pg  # here, not at import: pingouin loads xarray (a kernel start)

    if named is not None and named not in FAMILIES:
        raise ValueError(f"unknown family {named!r}: one of {sorted(FAMILIES)}")
    out = results.copy()
    out["p_holm"], out["p_bh"] = np.nan, np.nan
    out["survives_holm"], out["survives_bh"] = False, False
    out["family_size"] = 0
    keys = [family] if isinstance(family, str) else list(family or [])
    groups = (
        out.groupby(keys[0] if len(keys) == 1 else keys, sort=False).groups.values()
        if keys
        else [out.index]
    )
    tested = out["p"].notna().to_numpy()
    for index in groups:
        valid = pd.Index(index)[tested[out.index.get_indexer(index)]]
        if not len(valid):
            continue
        p = out.loc[valid, "p"].to_numpy(dtype="float64")
        holm_reject, holm = pg.multicomp(p, alpha=alpha, method="holm")
        bh_reject, bh = pg.multicomp(p, alpha=alpha, method="fdr_bh")
        out.loc[valid, "p_holm"] = holm
        out.loc[valid, "p_bh"] = bh
        out.loc[valid, "survives_holm"] = holm_reject
        out.loc[valid, "survives_bh"] = bh_reject
        out.loc[valid, "family_size"] = len(valid)
    if named is not None:
        spec = FAMILIES[named]
        texts = zip(*(out[key].astype(str).tolist() for key in keys), strict=True)
        split = (
            pd.Series([", ".join(row) for row in texts], index=out.index, dtype="str")
            if keys
            else ""
        )
        out["family_name"] = spec.name + (": " + split if keys else "")
        out["caveat"] = spec.caveat
    return out
