"""Every number either build cites (``numbers.json``), its two values and the difference,
with whether its inputs changed; and the claims ledger's verdicts side by side."""

from __future__ import annotations

from numbers import Real
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.compare.inputs import BuildInputs

COLUMNS = ["name", "unit", "description", "base", "head", "difference", "status"]


def _inputs(inputs: BuildInputs, record: dict) -> dict[str, str]:
    """A number's input digests, keyed by their path inside the build's folder."""
    folder = inputs.build.folder
    keyed = {}
    for path, digest in (record.get("inputs") or {}).items():
        where = Path(path)
        keyed[str(where.relative_to(folder)) if where.is_relative_to(folder) else path] = digest
    return keyed


def _numeric(value) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def number_changes(base: BuildInputs, head: BuildInputs) -> pd.DataFrame:
    """One row per number name in either build (sorted). ``status``: ``added``,
    ``removed``, ``unchanged`` (same inputs, same value), ``changed`` (another value),
    ``same value, inputs changed``; ``difference`` is head minus base for numeric values."""
    rows = []
    for name in sorted(set(base.numbers) | set(head.numbers)):
        before, after = base.numbers.get(name), head.numbers.get(name)
        record = after or before
        row = {
            "name": name,
            "unit": record.get("unit"),
            "description": record.get("description"),
            "base": before.get("value") if before else None,
            "head": after.get("value") if after else None,
            "difference": np.nan,
        }
        if before is None or after is None:
            row["status"] = "added" if before is None else "removed"
        else:
            if _numeric(row["base"]) and _numeric(row["head"]):
                row["difference"] = row["head"] - row["base"]
            same_inputs = _inputs(base, before) == _inputs(head, after)
            if row["base"] != row["head"]:
                row["status"] = "changed"
            else:
                row["status"] = "unchanged" if same_inputs else "same value, inputs changed"
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def claim_changes(base: BuildInputs, head: BuildInputs) -> pd.DataFrame:
    """The claims ledger of both builds side by side, by number name: the published value,
    each build's recomputed value and status, and whether the verdict changed."""
    keep = ["section", "statement", "name", "published", "recomputed", "status"]
    joined = base.claims[keep].merge(
        head.claims[keep],
        on=["name"],
        how="outer",
        suffixes=("_base", "_head"),
        sort=False,
    )
    out = pd.DataFrame(
        {
            "section": joined["section_head"].fillna(joined["section_base"]),
            "statement": joined["statement_head"].fillna(joined["statement_base"]),
            "name": joined["name"],
            "published": joined["published_head"].fillna(joined["published_base"]),
            "base_recomputed": joined["recomputed_base"],
            "base_status": joined["status_base"],
            "head_recomputed": joined["recomputed_head"],
            "head_status": joined["status_head"],
        }
    )
    out["verdict_changed"] = out["base_status"].fillna("") != out["head_status"].fillna("")
    return out
