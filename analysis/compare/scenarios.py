"""Scenarios added, removed and changed between two releases, by the sha256 of their files,
and for a changed one the fields a reader cares about that changed."""

from __future__ import annotations

import pandas as pd

#: The fields compared for a changed scenario: the scenario table's column and its name.
FIELDS = {
    "expected_action": "label",
    "required_gate": "gate",
    "boundary_pattern": "pattern",
    "direction": "direction",
    "irreversibility": "irreversibility",
    "user_message": "rendered user message",
}

COLUMNS = ["scenario_id", "change", "base_sha256", "head_sha256", "fields_changed"]


def scenario_changes(base: pd.DataFrame, head: pd.DataFrame) -> pd.DataFrame:
    """One row per scenario in either table (``scenario_id, sha256`` and :data:`FIELDS`):
    ``change`` is ``added``, ``removed``, ``changed`` (another sha256) or ``unchanged``;
    ``fields_changed`` names the :data:`FIELDS` that differ, ``; ``-joined, with their two
    values (``label: block -> continue``; the message by name only)."""
    columns = ["scenario_id", "sha256", *FIELDS]
    joined = base[columns].merge(
        head[columns], on="scenario_id", how="outer", suffixes=("_base", "_head")
    )
    rows = []
    for row in joined.sort_values("scenario_id").to_dict("records"):
        in_base, in_head = pd.notna(row["sha256_base"]), pd.notna(row["sha256_head"])
        changed = []
        if in_base and in_head:
            for column, name in FIELDS.items():
                before, after = row[f"{column}_base"], row[f"{column}_head"]
                if before != after:
                    changed.append(
                        name if column == "user_message" else f"{name}: {before} -> {after}"
                    )
        if not in_head:
            change = "removed"
        elif not in_base:
            change = "added"
        else:
            change = "unchanged" if row["sha256_base"] == row["sha256_head"] else "changed"
        rows.append(
            {
                "scenario_id": row["scenario_id"],
                "change": change,
                "base_sha256": row["sha256_base"] if in_base else "",
                "head_sha256": row["sha256_head"] if in_head else "",
                "fields_changed": "; ".join(changed),
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def unchanged_ids(changes: pd.DataFrame) -> list[str]:
    """The scenarios in both releases with identical files."""
    return changes.loc[changes["change"] == "unchanged", "scenario_id"].tolist()
