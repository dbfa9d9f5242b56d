"""The calibration oracle's model: many releases of one design drawn at once (arrays of
releases x conditions x scenarios) from a model with known truth, as scored cells. Where
:mod:`analysis.inference.simulate` draws one release-shaped release (trials, patterns of the
corpus), this one is set by a few numbers (:class:`Setting`) so that a grid can span
designs, and states each quantity's truth under both estimands.

The model. Scenario ``s`` of a release of S scenarios has a fixed design: a required gate
(``allowed`` on every other pair of scenarios, so about half are proceed scenarios) and a
construction pattern (:data:`~analysis.scoring.breakdowns.ANCHOR` and
:data:`~analysis.scoring.breakdowns.MIRROR` alternately) with a logit offset ``b_s``
(``+pattern_effect`` / ``-pattern_effect``). Each of m trials of condition ``j`` on
scenario ``s`` is correct with probability ``p_js = expit(a_j + b_s + u_s + e_js)``: a
scenario effect ``u_s ~ N(0, sd_u)`` shared by every condition and a cell effect
``e_js ~ N(0, sd_e)`` shared by the cell's trials. The latent intraclass correlation of the
trials within a cell is ``icc = (sd_u^2 + sd_e^2) / (sd_u^2 + sd_e^2 + pi^2 / 3)``; the
latent correlation of two conditions' cells on one scenario is ``pair_corr = sd_u^2 /
(sd_u^2 + sd_e^2)``. A wrong trial takes the other gate (no null trial); a cell's modal
decision is its majority, a tie broken by a fair coin (the first-seen rule on trials in
random order). Condition ``j``'s true value of the setting's metric is ``rate + j *
difference``; ``a_j`` is solved to give it.

Two estimands (:data:`ESTIMANDS`):

- ``population`` (the package's :data:`~analysis.inference._arrays.ESTIMAND`, what every
  clustered interval claims): the expectation over new scenario and cell effects, with the
  design (gates, patterns) held: ``mean_s E_Z f(a_j + b_s + sd Z)``, Z standard normal
  (Gauss-Hermite), ``sd^2 = sd_u^2 + sd_e^2``;
- ``these scenarios`` (:data:`~analysis.inference._arrays.FIXED_SCENARIOS`, what an
  interval treating trials as independent claims): the mean over the drawn scenarios of the
  cell-level value, ``mean_s f(p_js)``.

``f`` is ``p`` (mean-trial accuracy), ``P(modal correct | p)`` (modal accuracy; one minus it
on proceed scenarios is over-refusal, on hold scenarios under-refusal) or ``p^k`` (pass^k).

Measuring methods on these releases: :mod:`analysis.inference.coverage`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace

import numpy as np
import pandas as pd
from scipy import optimize, stats

from analysis.corpus.vocabulary import ALLOWED, BLOCKED, GATE_DTYPE
from analysis.inference._arrays import ESTIMAND, FIXED_SCENARIOS
from analysis.scoring.breakdowns import ANCHOR, MIRROR

POPULATION = "population"
SAMPLE = "these scenarios"
#: The estimands a registered method can be measured against.
ESTIMANDS = {POPULATION: ESTIMAND, SAMPLE: FIXED_SCENARIOS}
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(60)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


@dataclass(frozen=True)
class Setting:
    """One point of the grid (see the module docstring for the model).

    ``metric`` names what ``rate`` and ``difference`` are true values of:
    ``mean_trial_accuracy``, ``modal_accuracy`` or ``over_refusal``.
    """

    scenarios: int = 106
    trials: int = 5
    icc: float = 0.3
    rate: float = 0.85
    difference: float = 0.0
    conditions: int = 2
    pair_corr: float = 0.6
    pattern_effect: float = 0.0
    metric: str = "mean_trial_accuracy"

    def __post_init__(self):
        if self.scenarios < 2 or self.trials < 1 or self.conditions < 1:
            raise ValueError(f"setting needs >= 2 scenarios, >= 1 trial, >= 1 condition: {self}")
        if not (0 <= self.icc < 1 and 0 <= self.pair_corr <= 1):
            raise ValueError(f"setting needs icc in [0, 1) and pair_corr in [0, 1]: {self}")
        top = self.rate + (self.conditions - 1) * self.difference
        if not (min(self.rate, top) > 0 and max(self.rate, top) < 1):
            raise ValueError(f"setting's true values leave (0, 1): {self}")

    def label(self) -> str:
        """A short text of the fields that differ from the defaults.

        >>> Setting(scenarios=20, icc=0.5).label()
        'S=20 m=5 icc=0.5 rate=0.85'
        """
        short = {"scenarios": "S", "trials": "m", "conditions": "J", "pattern_effect": "b"}
        always = ("scenarios", "trials", "icc", "rate")
        parts = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in always or value != f.default:
                parts.append(
                    f"{short.get(f.name, f.name)}={value:g}"
                    if not isinstance(value, str)
                    else f"{value}"
                )
        return " ".join(parts)


def latent_sds(icc: float, pair_corr: float) -> tuple[float, float]:
    """(sd_u, sd_e), the scenario and cell effects' SDs on the logit scale.

    >>> [round(x, 3) for x in latent_sds(0.5, 1.0)]
    [1.814, 0.0]
    """
    total = icc / (1 - icc) * np.pi**2 / 3
    return float(np.sqrt(total * pair_corr)), float(np.sqrt(total * (1 - pair_corr)))


def modal_probability(p: np.ndarray, m: int) -> np.ndarray:
    """P(a cell's modal decision is correct) at per-trial probability ``p`` over ``m``
    trials: a majority, or a tie won on a fair coin.

    >>> float(modal_probability(np.array(0.5), 4))
    0.5
    """
    p = np.asarray(p, dtype="float64")
    above = stats.binom.sf(m // 2, m, p)
    if m % 2:
        return above
    return above + 0.5 * stats.binom.pmf(m // 2, m, p)


def cell_value(p: np.ndarray, quantity: str, m: int) -> np.ndarray:
    """The cell-level value ``f(p)`` of ``quantity`` (``pass^k`` written ``pass2`` etc.)."""
    if quantity == "mean_trial_accuracy":
        return p
    if quantity == "modal_accuracy":
        return modal_probability(p, m)
    if quantity in ("over_refusal", "under_refusal"):
        return 1 - modal_probability(p, m)
    if quantity.startswith("pass") and quantity[4:].isdigit():
        return p ** int(quantity[4:])
    raise ValueError(f"unknown quantity {quantity!r}")


class Design:
    """A setting's fixed scenario design and its conditions' logits and true values."""

    def __init__(self, setting: Setting):
        self.setting = setting
        s = np.arange(setting.scenarios)
        self.proceed = (s // 2) % 2 == 0
        self.pattern = np.where(s % 2 == 0, ANCHOR, MIRROR)
        self.offset = np.where(s % 2 == 0, 1.0, -1.0) * setting.pattern_effect
        self.sd_u, self.sd_e = latent_sds(setting.icc, setting.pair_corr)
        self.sd = float(np.hypot(self.sd_u, self.sd_e))
        targets = setting.rate + setting.difference * np.arange(setting.conditions)
        self.logits = np.array([self._solve(t) for t in targets])

    def _members(self, quantity: str) -> np.ndarray:
        if quantity == "over_refusal":
            return self.proceed
        if quantity == "under_refusal":
            return ~self.proceed
        return np.ones(len(self.proceed), dtype=bool)

    def population(
        self, quantity: str, logits: np.ndarray | None = None, members: np.ndarray | None = None
    ) -> np.ndarray:
        """Population values of ``quantity`` per condition (or at ``logits``), over the
        design's scenarios (or the ``members`` among them: a pattern, say)."""
        a = self.logits if logits is None else np.atleast_1d(logits)
        keep = self._members(quantity) & (True if members is None else members)
        offset = self.offset[keep]
        z = a[:, None, None] + offset[None, :, None] + self.sd * _NODES
        value = cell_value(1 / (1 + np.exp(-z)), quantity, self.setting.trials)
        return (value * _WEIGHTS).sum(-1).mean(-1)

    def _solve(self, target: float) -> float:
        metric = self.setting.metric
        f = lambda a: self.population(metric, np.array([a]))[0] - target  # noqa: E731
        return float(optimize.brentq(f, -40.0, 40.0, xtol=1e-12))


@dataclass
class Draw:
    """Simulated releases of one setting: arrays (releases, conditions, scenarios)."""

    design: Design
    p: np.ndarray
    correct: np.ndarray
    modal_correct: np.ndarray
    seed: int

    @property
    def reps(self) -> int:
        return self.p.shape[0]

    def truth(
        self, quantity: str, estimand: str = POPULATION, members: np.ndarray | None = None
    ) -> np.ndarray:
        """(releases, conditions) true values of ``quantity`` under ``estimand`` (over the
        ``members`` among the scenarios, default all)."""
        if estimand == POPULATION:
            value = self.design.population(quantity, members=members)
            return np.broadcast_to(value, self.p.shape[:2])
        if estimand != SAMPLE:
            raise ValueError(f"unknown estimand {estimand!r}; choices: {', '.join(ESTIMANDS)}")
        keep = self.design._members(quantity) & (True if members is None else members)
        value = cell_value(self.p[..., keep], quantity, self.design.setting.trials)
        return value.mean(-1)


def draw(setting: Setting, reps: int, seed: int) -> Draw:
    """``reps`` releases of ``setting``, seeded.

    >>> d = draw(Setting(scenarios=20, conditions=3, difference=0.02), reps=4, seed=1)
    >>> d.correct.shape, d.truth("mean_trial_accuracy")[0].round(2).tolist()
    ((4, 3, 20), [0.85, 0.87, 0.89])
    """
    design = Design(setting)
    rng = np.random.default_rng(seed)
    shape = (reps, setting.conditions, setting.scenarios)
    u = rng.normal(0, 1, (reps, 1, setting.scenarios)) * design.sd_u
    e = rng.normal(0, 1, shape) * design.sd_e
    p = 1 / (1 + np.exp(-(design.logits[None, :, None] + design.offset + u + e)))
    correct = rng.binomial(setting.trials, p)
    tie = 2 * correct == setting.trials
    modal = (2 * correct > setting.trials) | (tie & (rng.random(shape) < 0.5))
    return Draw(design, p, correct, modal, seed)


def condition_name(rep: int, j: int, conditions: int, by_source: bool) -> tuple[str, str]:
    """(model, reasoning) of condition ``j`` of release ``rep``: two conditions are a model's
    floor (``off``) and high; more are models of their own."""
    reasoning = ("off", "high")[j] if conditions == 2 else "off"
    if by_source:
        return (f"c{j:02d}" if conditions != 2 else "m", reasoning)
    return (f"r{rep:04d}" if conditions == 2 else f"r{rep:04d}c{j:02d}", reasoning)


def cells_frame(d: Draw, by_source: bool = False) -> pd.DataFrame:
    """The releases of ``d`` as one scored-cells table (``score_cells``' columns and dtypes),
    with the release ``rep`` and condition ``j`` of each cell.

    ``by_source``: each release is a source (``r0000``, ...) of its own conditions, for
    methods that work on one leaderboard; otherwise one source ``run`` holds every release's
    conditions side by side (named by release), sharing scenario ids.
    """
    conditions = d.p.shape[1]
    r, j, s = (x.ravel() for x in np.indices(d.p.shape))
    names = [condition_name(a, b, conditions, by_source) for a, b in zip(r, j, strict=True)]
    model = np.array([n[0] for n in names])
    reasoning = np.array([n[1] for n in names])
    required = np.where(d.design.proceed, ALLOWED, BLOCKED)[s]
    other = np.where(d.design.proceed, BLOCKED, ALLOWED)[s]
    modal = d.modal_correct.ravel()
    m = d.design.setting.trials
    correct = d.correct.ravel()
    allowed = np.where(required == ALLOWED, correct, m - correct)
    gate = lambda v: pd.Categorical(v, dtype=GATE_DTYPE)  # noqa: E731
    frame = pd.DataFrame(
        {
            "scenario_id": np.char.add("s", np.char.zfill(s.astype(str), 3)),
            "condition": np.char.add(np.char.add(model, " ("), np.char.add(reasoning, ")")),
            "model": model,
            "reasoning": reasoning,
            "source": np.char.add("r", np.char.zfill(r.astype(str), 4)) if by_source else "run",
            "n_trials": m,
            "n_decided": m,
            "n_allowed": allowed,
            "n_blocked": m - allowed,
            "n_correct": correct,
            "modal_decision": gate(np.where(modal, required, other)),
            "modal_count": np.maximum(allowed, m - allowed),
            "required_gate": gate(required),
            "modal_correct": modal,
            "pass_all": correct == m,
            "same_decision": (correct == 0) | (correct == m),
            "unanimous": (correct == 0) | (correct == m),
            "provider_filtered": False,
            "modal_scored": True,
            "directionally_scored": True,
            "tier_weight": 1,
        }
    )
    for column in ("scenario_id", "condition", "model", "reasoning", "source"):
        frame[column] = frame[column].astype("category")
    return frame.assign(rep=r, j=j)


def scenarios_frame(d: Draw) -> pd.DataFrame:
    """The scenario table of ``d``'s design (id, gate, pattern)."""
    n = len(d.design.proceed)
    return pd.DataFrame(
        {
            "scenario_id": [f"s{i:03d}" for i in range(n)],
            "required_gate": np.where(d.design.proceed, ALLOWED, BLOCKED),
            "expected_action": np.where(d.design.proceed, "proceed", "block"),
            "boundary_pattern": d.design.pattern,
            "tier_weight": 1,
        }
    )


def varied(base: Setting, **values: Sequence) -> tuple[Setting, ...]:
    """Settings of ``base`` with each keyword field taking each of its values in turn (one
    field at a time, not their product).

    >>> [s.scenarios for s in varied(Setting(), scenarios=(10, 20))]
    [10, 20]
    """
    return tuple(replace(base, **{name: v}) for name, vs in values.items() for v in vs)
