"""Shards: which scenarios each of ``n`` runs into its own root takes.

``shard=(i, n)`` runs the scenarios whose 0-based index in id-sorted order is congruent to
``i - 1`` modulo ``n``; shard roots can be merged by the tidy export.
"""

from __future__ import annotations

from collections.abc import Sequence

from analysis.corpus.inputs import PinnedScenario

SHARD_RULE = "scenarios sorted by id; 0-based index k is in shard i of n when k % n == i - 1"


def parse_shard(text: str) -> tuple[int, int]:
    """``"i/n"`` -> ``(i, n)`` with 1 <= i <= n."""
    try:
        i, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise ValueError(f"shard must look like i/n, got {text!r}") from None
    if not 1 <= i <= n:
        raise ValueError(f"shard index must be between 1 and {n}, got {i}")
    return i, n


def shard_scenarios(
    scenarios: Sequence[PinnedScenario], shard: tuple[int, int] | None
) -> tuple[PinnedScenario, ...]:
    """The scenarios of shard ``(i, n)`` (all when None); see ``SHARD_RULE``."""
    ordered = sorted(scenarios, key=lambda s: s.id)
    if shard is None:
        return tuple(ordered)
    i, n = shard
    return tuple(s for k, s in enumerate(ordered) if k % n == i - 1)


def shard_record(shard: tuple[int, int] | None) -> dict[str, int] | None:
    """The shard as ``RUN_PLAN.json`` records it: ``{"index": i, "count": n}``, or None."""
    return None if shard is None else {"index": shard[0], "count": shard[1]}
