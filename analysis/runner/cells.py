"""Per-cell scoring of one (variant, scenario) cell's trials, as the release's cell.json."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

FIRST_K_LEVELS = (1, 3, 5)


def modal_permission(permissions: Sequence[str | None]) -> tuple[str | None, int]:
    """The most common non-null permission and its count; ties go to the first seen."""
    counts = Counter(p for p in permissions if p is not None)
    if not counts:
        return None, 0
    best = max(counts.values())
    first = next(p for p in permissions if p is not None and counts[p] == best)
    return first, best


def score_cell(permissions: Sequence[str | None], required: str) -> dict[str, Any]:
    """Modal, pass-all and per-trial correctness of one cell's trial permissions."""
    correctness = [p is not None and p == required for p in permissions]
    modal, modal_count = modal_permission(permissions)
    n = len(permissions)
    return {
        "n_trials": n,
        "n_correct_trials": sum(correctness),
        "trial_permissions": list(permissions),
        "trial_correctness": correctness,
        "modal_commit_permission": modal,
        "modal_count": modal_count,
        "modal_correct": modal is not None and modal == required,
        "pass_all_trials": n > 0 and all(correctness),
        "first_k_all_correct": {str(k): all(correctness[:k]) for k in FIRST_K_LEVELS if k <= n},
    }
