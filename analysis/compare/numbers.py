"""Every number either build cites (``numbers.json``), its two values and the difference,
with whether its inputs changed; and the claims ledger's verdicts side by side."""

from __future__ import annotations

from numbers import Real

import numpy as np
import pandas as pd

from analysis.compare.builds import release_key
from analysis.compare.inputs import BuildInputs
from analysis.compare.ranks import SHIFTED
from analysis.paper.provenance import slug

COLUMNS = ["name", "unit", "description", "base", "head", "difference", "status"]
#: ``status`` of a number whose value is the same and whose inputs are not.
SAME_VALUE = "same value, inputs changed"


def _inputs(inputs: BuildInputs, record: dict) -> dict[str, str]:
    """A number's input digests, keyed by the input's place in the release
    (:func:`~analysis.compare.builds.release_key`), not by where the build keeps its copy:
    the same files in two releases are the same inputs."""
    digests = record.get("inputs") or {}
    return {release_key(path, inputs.build): digest for path, digest in digests.items()}


def _numeric(value) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def _set_shifted(conditions: pd.DataFrame | None) -> set[str]:
    """The name segments (:func:`~analysis.paper.provenance.slug`) of the shared conditions
    when the only change among conditions is some added or removed: a number of one of
    them that changed value (its rank, its rank set) moved with the set of conditions."""
    if conditions is None:
        return set()
    status = conditions["status"]
    if not status.isin(["added", "removed"]).any():
        return set()
    if not status.isin(["added", "removed", "unchanged"]).all():
        return set()
    return {slug(c) for c in conditions.loc[status == "unchanged", "condition"]}


def number_changes(
    base: BuildInputs, head: BuildInputs, conditions: pd.DataFrame | None = None
) -> pd.DataFrame:
    """One row per number name in either build (sorted). ``status``: ``added``,
    ``removed``, ``unchanged`` (same inputs by content, same value), ``changed`` (another
    value), ``same value, inputs changed``, or :data:`~analysis.compare.ranks.SHIFTED`: a
    number of an unchanged condition that changed value only because conditions were added
    or removed (``conditions``: :func:`~analysis.compare.conditions.condition_status`);
    ``difference`` is head minus base for numeric values."""
    shifted = _set_shifted(conditions)
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
                row["status"] = SHIFTED if shifted & set(name.split(".")) else "changed"
            else:
                row["status"] = "unchanged" if same_inputs else SAME_VALUE
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def claim_changes(base: BuildInputs, head: BuildInputs) -> pd.DataFrame:
    """The claims ledger of both builds side by side, by number name: the published value,
    each build's recomputed value, status and ``difference`` (why a claim is not
    reproduced), and whether the verdict changed."""
    keep = ["section", "statement", "name", "published", "recomputed", "status", "difference"]
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
            "base_difference": joined["difference_base"],
            "head_recomputed": joined["recomputed_head"],
            "head_status": joined["status_head"],
            "head_difference": joined["difference_head"],
        }
    )
    out["verdict_changed"] = out["base_status"].fillna("") != out["head_status"].fillna("")
    return out
