"""Multiplicity: Holm and Benjamini-Hochberg adjustment across a family of tests."""

from __future__ import annotations

import numpy as np
import pandas as pd


def adjust_pvalues(
    results: pd.DataFrame, family: str | list[str] | None = None, alpha: float = 0.05
) -> pd.DataFrame:
    """``results`` with Holm (family-wise) and Benjamini-Hochberg (false discovery rate)
    adjusted p-values (pingouin.multicomp) and whether each survives at ``alpha``.

    Tests with no p-value stay out of the family. ``family``: column(s) whose values each
    make one family (default: all rows are one family).

    Returns
    -------
    DataFrame
        ``results`` plus ``p_holm, p_bh, survives_holm, survives_bh, family_size``.

    Examples
    --------
    >>> import pandas as pd
    >>> out = adjust_pvalues(pd.DataFrame({"p": [0.01, 0.02, 0.03, 0.5]}))
    >>> out["p_holm"].round(3).tolist(), out["survives_bh"].tolist()
    ([0.04, 0.06, 0.06, 0.5], [True, True, True, False])
    """
    import pingouin as pg  # here, not at import: pingouin loads xarray (a kernel start)

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
    for index in groups:
        valid = [i for i in index if pd.notna(out.at[i, "p"])]
        if not valid:
            continue
        p = out.loc[valid, "p"].to_numpy(dtype="float64")
        holm_reject, holm = pg.multicomp(p, alpha=alpha, method="holm")
        bh_reject, bh = pg.multicomp(p, alpha=alpha, method="fdr_bh")
        out.loc[valid, "p_holm"] = holm
        out.loc[valid, "p_bh"] = bh
        out.loc[valid, "survives_holm"] = holm_reject
        out.loc[valid, "survives_bh"] = bh_reject
        out.loc[valid, "family_size"] = len(valid)
    return out
