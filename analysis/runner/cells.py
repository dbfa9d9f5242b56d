"""Per-cell scoring of one (variant, scenario) cell's trials, as the release's cell.json."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from analysis.corpus.vocabulary import ALLOWED, BLOCKED, GATES
from analysis.scoring.rules import NO_DECISION, modal_count, modal_decision

FIRST_K_LEVELS = (1, 3, 5)


def modal_permission(permissions: Sequence[str | None]) -> tuple[str | None, int]:
    """The modal permission and its count, by the published rule of
    :func:`analysis.scoring.rules.modal_decision` (nulls ignored, ties to the value seen first)."""

    def first(value: str) -> int:
        return next((i for i, p in enumerate(permissions) if p == value), len(permissions))

    n_allowed = np.array([sum(p == ALLOWED for p in permissions)])
    n_blocked = np.array([sum(p == BLOCKED for p in permissions)])
    code = int(
        modal_decision(
            n_allowed, n_blocked, np.array([first(ALLOWED)]), np.array([first(BLOCKED)])
        )[0]
    )
    return (None if code == NO_DECISION else GATES[code]), int(modal_count(n_allowed, n_blocked)[0])


def score_cell(permissions: Sequence[str | None], required: str) -> dict[str, Any]:
    """Modal, pass-all and per-trial correctness of one cell's trial permissions, as the
    release's cell records state them: a trial or modal decision without a permission is
    neither correct nor wrong (null), and ``first_k_all_correct`` holds k = 1, 3, 5 (false
    where the cell has fewer than k trials)."""
    correctness = [None if p not in GATES else p == required for p in permissions]
    modal, modal_count = modal_permission(permissions)
    n = len(permissions)
    return {
        "n_trials": n,
        "n_correct_trials": sum(c is True for c in correctness),
        "trial_permissions": list(permissions),
        "trial_correctness": correctness,
        "modal_commit_permission": modal,
        "modal_count": modal_count,
        "modal_correct": None if modal is None else modal == required,
        "pass_all_trials": n > 0 and all(c is True for c in correctness),
        "first_k_all_correct": {
            str(k): n >= k and all(c is True for c in correctness[:k]) for k in FIRST_K_LEVELS
        },
    }
