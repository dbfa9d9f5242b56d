"""A seeded release-shaped generator with known truth and scenario-level random effects.

Trial ``t`` of model condition ``j`` on scenario ``s`` (pattern ``p``) is correct with
probability ``q = expit(a_j + b_p + u_s + e_js)``, with a scenario effect
``u_s ~ N(0, scenario_sd)`` shared by every condition and a cell effect
``e_js ~ N(0, cell_sd)`` shared by the cell's trials. ``null_rate`` does not lower ``q``: a
wrong trial gives no decision with probability ``min(1, null_rate / (1 - q))``, so a trial is
null with probability ``min(null_rate, 1 - q)`` (nulls replace wrong decisions only),
otherwise it names the other gate. The true (population) mean-trial accuracy is E[q], both
effects integrated out (Gauss-Hermite).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.corpus.vocabulary import ALLOWED, BLOCKED, GATE_DTYPE, tier_weight
from analysis.trials import normalize_trials

#: (pattern, share of scenarios, logit effect, required gate) of the generator.
PATTERN_MIX: tuple[tuple[str, float, float, str], ...] = (
    ("detector_conflict", 0.31, -0.6, BLOCKED),
    ("calibration_control", 0.24, 0.0, ALLOWED),
    ("public_harm_anchor", 0.23, 1.2, BLOCKED),
    ("incident_mirror", 0.12, -1.0, BLOCKED),
    ("adversarial_control", 0.06, 0.4, BLOCKED),
    ("clean_control", 0.04, 0.8, ALLOWED),
)


def _patterns(n_scenarios: int) -> np.ndarray:
    shares = np.array([share for _, share, _, _ in PATTERN_MIX])
    counts = np.floor(shares / shares.sum() * n_scenarios).astype(int)
    counts[0] += n_scenarios - counts.sum()
    return np.repeat(np.arange(len(PATTERN_MIX)), counts)


def expected_accuracy(logit: np.ndarray, sd: float, null_rate: float = 0.0) -> np.ndarray:
    """E[(1 - null_rate) expit(logit + sd Z)], Z standard normal (Gauss-Hermite, 60 nodes).

    Examples
    --------
    >>> import numpy as np
    >>> float(expected_accuracy(np.array([0.0]), 2.0)[0])
    0.5
    """
    nodes, weights = np.polynomial.hermite_e.hermegauss(60)
    weights = weights / weights.sum()
    z = np.asarray(logit, dtype="float64")[..., None] + sd * nodes
    return (1 - null_rate) * (weights / (1 + np.exp(-z))).sum(-1)


def simulate_counts(
    rng: np.random.Generator,
    condition_logits: np.ndarray,
    pattern_logits: np.ndarray,
    *,
    n_trials: int = 5,
    scenario_sd: float = 1.2,
    cell_sd: float = 0.8,
) -> np.ndarray:
    """Correct-trial counts, shape (conditions, scenarios), of one simulated release."""
    u = rng.normal(0, scenario_sd, size=len(pattern_logits))
    e = rng.normal(0, cell_sd, size=(len(condition_logits), len(pattern_logits)))
    logit = condition_logits[:, None] + pattern_logits[None, :] + u[None, :] + e
    return rng.binomial(n_trials, 1 / (1 + np.exp(-logit)))


def simulate_release(
    n_models: int = 15,
    n_scenarios: int = 106,
    n_trials: int = 5,
    *,
    scenario_sd: float = 1.2,
    cell_sd: float = 0.8,
    null_rate: float = 0.03,
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """A simulated release with known truth: (trials table, scenarios table, truth), from
    the model of the module's docstring.

    ``n_models`` models each at ``off`` and ``high`` (2 x ``n_models`` conditions named
    ``sim-NN (off|high)``); scenarios are split among the boundary patterns of
    :data:`PATTERN_MIX`, each with its logit effect and required gate.

    Parameters
    ----------
    n_models : int
        Models, each run at two reasoning settings.
    n_scenarios : int
        Scenarios (the release has 106).
    n_trials : int
        Trials of each condition on each scenario.
    scenario_sd : float
        Standard deviation of the scenario effect (logit scale), shared by every condition.
    cell_sd : float
        Standard deviation of the cell effect (logit scale), shared by a cell's trials.
    null_rate : float
        Each trial has no decision with probability min(``null_rate``, 1 - q): nulls
        replace wrong decisions only.
    seed : int
        Seeds every draw.

    Returns
    -------
    (DataFrame, DataFrame, DataFrame)
        The trials table as ``analysis.load_trials`` gives it (one row per trial, source
        ``run``); the scenarios table as ``analysis.load_scenarios`` gives it (one row per
        scenario: ``scenario_id, expected_action, required_gate, irreversibility,
        tier_weight, boundary_pattern``); and the truth, one row per condition:
        ``condition, model, reasoning, true_accuracy`` (population mean-trial accuracy).

    See Also
    --------
    analysis.score_cells : Scores the trials into cells for every inference function.
    simulated_power : The power of each detectable difference in simulated releases.

    Examples
    --------
    >>> trials, scenarios, truth = simulate_release(n_models=2, n_scenarios=10, seed=0)
    >>> len(trials), len(scenarios)
    (200, 10)
    >>> trials[["scenario_id", "condition", "trial", "commit_permission"]].head(3)
            scenario_id      condition  trial commit_permission
    0  sim-scenario-001  sim-01 (high)      1           blocked
    1  sim-scenario-001  sim-01 (high)      2           blocked
    2  sim-scenario-001  sim-01 (high)      3           blocked
    >>> truth.round(3)
           condition   model reasoning  true_accuracy
    0   sim-01 (off)  sim-01       off          0.616
    1  sim-01 (high)  sim-01      high          0.678
    2   sim-02 (off)  sim-02       off          0.594
    3  sim-02 (high)  sim-02      high          0.632
    """
    rng = np.random.default_rng(seed)
    pattern_index = _patterns(n_scenarios)
    names = np.array([name for name, _, _, _ in PATTERN_MIX])[pattern_index]
    pattern_logits = np.array([b for _, _, b, _ in PATTERN_MIX])[pattern_index]
    gates = np.array([g for _, _, _, g in PATTERN_MIX])[pattern_index]
    floor = rng.normal(0.8, 0.5, size=n_models)
    high = floor + rng.normal(0.2, 0.3, size=n_models)
    condition_logits = np.column_stack([floor, high]).ravel()
    models = np.repeat([f"sim-{i:02d}" for i in range(1, n_models + 1)], 2)
    reasoning = np.tile(["off", "high"], n_models)

    u = rng.normal(0, scenario_sd, size=n_scenarios)
    e = rng.normal(0, cell_sd, size=(len(condition_logits), n_scenarios))
    logit = condition_logits[:, None] + pattern_logits[None, :] + u[None, :] + e
    p = 1 / (1 + np.exp(-logit))
    shape = (*p.shape, n_trials)
    correct = rng.random(shape) < p[..., None]
    null = ~correct & (rng.random(shape) < null_rate / np.maximum(1 - p[..., None], 1e-9))
    required = np.broadcast_to(gates[None, :, None], shape)
    other = np.where(required == ALLOWED, BLOCKED, ALLOWED)
    permission = np.where(correct, required, np.where(null, None, other))

    j, s, t = np.indices(shape).reshape(3, -1)
    scenario_ids = np.array([f"sim-scenario-{i:03d}" for i in range(1, n_scenarios + 1)])
    frame = pd.DataFrame(
        {
            "scenario_id": scenario_ids[s],
            "model": models[j],
            "reasoning": reasoning[j],
            "trial": t + 1,
            "commit_permission": permission.ravel(),
            "status": np.where(pd.isna(permission.ravel()), "parse_failed", "ok"),
        }
    )
    trials = normalize_trials(frame, origin="simulated release", source="run")
    scenarios = pd.DataFrame(
        {
            "scenario_id": scenario_ids,
            "expected_action": np.where(gates == ALLOWED, "proceed", "block"),
            "required_gate": pd.Categorical(gates, dtype=GATE_DTYPE),
            "irreversibility": "medium",
            "tier_weight": tier_weight("medium"),
            "boundary_pattern": names,
        }
    )
    total_sd = float(np.hypot(scenario_sd, cell_sd))
    # Effective null rate: wrong trials become null with probability null_rate / (1 - p),
    # so the expected share correct is E[p] (nulls replace wrong decisions only).
    true = expected_accuracy(condition_logits[:, None] + pattern_logits[None, :], total_sd)
    truth = pd.DataFrame(
        {
            "condition": [f"{m} ({r})" for m, r in zip(models, reasoning, strict=True)],
            "model": models,
            "reasoning": reasoning,
            "true_accuracy": true.mean(axis=1),
        }
    )
    return trials, scenarios, truth


def simulated_cells(**settings) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(scored cells, scenarios) of :func:`simulate_release` ``(**settings)``, for examples.

    Examples
    --------
    >>> cells, scenarios = simulated_cells(n_models=1, n_scenarios=10, seed=0)
    >>> len(cells), len(scenarios)
    (20, 10)
    """
    from analysis.scoring.rules import score_cells

    trials, scenarios, _ = simulate_release(**settings)
    return score_cells(trials, scenarios), scenarios
