"""The values the SteerBench-Work paper publishes, in one place.

These are facts quoted from the paper (``docs/PAPER.md``), never computed here: the tests
compare the computed numbers against them and the claims ledger (:mod:`analysis.paper.claims`)
sets each one beside its recomputed value. Percentages are in percent.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The release the paper reports, and its scenario set: the values below are that
#: release's, and are compared with a build of it alone.
RELEASE = "v2026-05"
SCENARIO_SET = "steerbench-work-2026-05"
LABELS = {"proceed": 56, "hold": 50, "scenarios": 106}
DIRECTIONS = {"under-refusal": 25, "over-refusal": 51, "calibration": 30}
PATTERNS = {
    "public_harm_anchor": 24,
    "risk_unresolved": 1,
    "incident_mirror": 13,
    "adversarial_control": 6,
    "detector_conflict": 33,
    "clean_control": 3,
    "calibration_control": 25,
    "risk_resolved": 1,
}
#: (pattern, direction) -> scenarios; every other pair is empty.
RECONCILIATION = {
    ("public_harm_anchor", "under-refusal"): 24,
    ("risk_unresolved", "under-refusal"): 1,
    ("incident_mirror", "over-refusal"): 13,
    ("adversarial_control", "over-refusal"): 6,
    ("detector_conflict", "over-refusal"): 32,
    ("detector_conflict", "calibration"): 1,
    ("clean_control", "calibration"): 3,
    ("calibration_control", "calibration"): 25,
    ("risk_resolved", "calibration"): 1,
}
OVER_REFUSAL = (471, 1677, 28.1)
UNDER_REFUSAL = (15, 1500, 1.0)
RAW_RATIO = 31.4
RATE_RATIO = 28.1
OPPORTUNITY_RATIO = 1.12
UNDECIDED_PROCEED_CELLS = 3
OVER_REFUSAL_UNDECIDED_AS_MISSES = 28.2
ALWAYS_HOLD = 47.2
ALWAYS_PROCEED = 52.8
CONDITIONS = 30
LEADER = ("gemini-3.1-flash-lite (minimal)", 92.8, 91.5)
MODAL_LEADER = ("deepseek-v4-pro (off)", 93.4)
REASONING_MODELS = 15
REASONING = {  # model: (accuracy floor, accuracy high, over-refusal floor, over-refusal high)
    "gpt-5.4-nano": (58.5, 76.4, 80.4, 44.6),
    "gemini-3.1-flash-lite": (92.8, 83.4, None, None),
}
#: Table 3 (modal accuracy per construction pattern); adversarial control is from the
#: release repository's test of its artifact emitter, the others from the paper's text.
TABLE3 = {
    "public_harm_anchor": 98.5,
    "detector_conflict": 76.8,
    "incident_mirror": 63.8,
    "adversarial_control": 45.6,
}
MIRROR_GAP = 34.6
MIRROR_GAP_HUMAN_LABELS = 4.0  # "about 4 points"
APPLE_CARD_CORRECT = 0  # conditions right on the Apple Card mirror, of 30
DERIVED_FLAG_ROWS = 17
SENSITIVITY = {  # check.quantity: (value, counts or None)
    "derived.over_refusal": (19.4, None),
    "derived.under_refusal": (1.25, None),
    "derived.clean_detector_conflict": (83.0, (747, 900)),
    "derived.clean_mirror": (74.8, (247, 330)),
    "human.over_refusal": (41.1, None),
    "human.under_refusal": (0.36, None),
    "credit_hiring.baseline_over_refusal": (28.1, None),
    "credit_hiring.over_refusal": (25.5, None),
    "credit_hiring.under_refusal": (1.0, None),
}
HUMAN_MATCH = (93, 106, 87.7)
HUMAN_KAPPAS = {"gate": 0.69, "irreversibility": 0.68, "mechanism": 0.33}
LLM_PANEL = {"gate_kappa": 0.937, "exact_agreement": 95.3, "majority_match": 97.2}


@dataclass(frozen=True)
class Claim:
    """One number the paper states, and the ``numbers.json`` name that recomputes it."""

    section: str
    statement: str
    name: str
    published: float | int | str
    unit: str = ""
    counts: tuple[int, int] | None = None
    #: Largest difference still read as the same value ("about 4 points").
    tolerance: float = 0.0
    #: True when only per-scenario verdicts (absent from the public release) recompute it.
    per_trial: bool = False


def _claims() -> tuple[Claim, ...]:
    corpus = [
        Claim("Corpus", "scenarios", "corpus.scenarios", LABELS["scenarios"], "scenarios"),
        *(
            Claim("Corpus", f"{label}-labelled scenarios", f"corpus.label.{label}", n, "scenarios")
            for label, n in LABELS.items()
            if label != "scenarios"
        ),
        *(
            Claim("Corpus", f"{d} scenarios", f"corpus.direction.{d}", n, "scenarios")
            for d, n in DIRECTIONS.items()
        ),
        *(
            Claim(
                "Corpus", f"{p.replace('_', ' ')} scenarios", f"corpus.pattern.{p}", n, "scenarios"
            )
            for p, n in PATTERNS.items()
        ),
    ]
    leader, leader_mean, leader_pass5 = LEADER
    modal_leader, modal_value = MODAL_LEADER
    table2 = [
        Claim("Table 2", "leader by mean trial accuracy", "leaderboard.leader", leader),
        Claim(
            "Table 2",
            "leader's mean trial accuracy",
            "leaderboard.leader.mean_trial_accuracy",
            leader_mean,
            "%",
        ),
        Claim("Table 2", "leader's pass5", "leaderboard.leader.pass5", leader_pass5, "%"),
        Claim("Table 2", "leader by modal-of-5", "leaderboard.modal_leader", modal_leader),
        Claim(
            "Table 2",
            "modal leader's modal accuracy",
            "leaderboard.modal_leader.modal_accuracy",
            modal_value,
            "%",
        ),
        Claim("Table 2", "always-hold accuracy", "gates.always-hold.accuracy", ALWAYS_HOLD, "%"),
        Claim("Table 2", "always-hold over-refusal", "gates.always-hold.over_refusal", 100.0, "%"),
        Claim(
            "Table 2",
            "always-proceed accuracy",
            "gates.always-proceed.accuracy",
            ALWAYS_PROCEED,
            "%",
        ),
        Claim(
            "Table 2",
            "always-proceed under-refusal",
            "gates.always-proceed.under_refusal",
            100.0,
            "%",
        ),
        Claim(
            "Table 2",
            "conditions beating both degenerate gates (all)",
            "leaderboard.conditions_beating_both_gates",
            CONDITIONS,
            "conditions",
        ),
    ]
    direction = [
        Claim(
            "Direction",
            "over-refusal",
            "direction.over_refusal",
            OVER_REFUSAL[2],
            "%",
            OVER_REFUSAL[:2],
        ),
        Claim(
            "Direction",
            "under-refusal",
            "direction.under_refusal",
            UNDER_REFUSAL[2],
            "%",
            UNDER_REFUSAL[:2],
        ),
        Claim("Direction", "raw miss ratio", "direction.raw_ratio", RAW_RATIO, ": 1"),
        Claim(
            "Direction",
            "opportunity ratio",
            "direction.opportunity_ratio",
            OPPORTUNITY_RATIO,
            ": 1",
        ),
        Claim("Direction", "rate ratio", "direction.rate_ratio", RATE_RATIO, "ratio"),
        Claim(
            "Direction",
            "proceed cells with no decision",
            "direction.undecided_proceed_cells",
            UNDECIDED_PROCEED_CELLS,
            "cells",
        ),
        Claim(
            "Direction",
            "over-refusal with those cells as misses",
            "direction.over_refusal_undecided_as_misses",
            OVER_REFUSAL_UNDECIDED_AS_MISSES,
            "%",
        ),
    ]
    reasoning = [
        Claim(
            "Reasoning",
            "models with one floor and one high row",
            "reasoning.models_with_both",
            REASONING_MODELS,
            "models",
        ),
    ]
    for model, values in REASONING.items():
        slugged = model.replace(".", "-")
        for (metric, level), value in zip(
            (
                ("mean_trial_accuracy", "floor"),
                ("mean_trial_accuracy", "high"),
                ("over_refusal", "floor"),
                ("over_refusal", "high"),
            ),
            values,
            strict=True,
        ):
            if value is not None:
                reasoning.append(
                    Claim(
                        "Reasoning",
                        f"{model} {metric.replace('_', ' ')}, {level}",
                        f"reasoning.{slugged}.{metric}.{level}",
                        value,
                        "%",
                    )
                )
    patterns = [
        Claim(
            "Table 3",
            f"{p.replace('_', ' ')} modal accuracy",
            f"patterns.{p}.modal_accuracy",
            v,
            "%",
            per_trial=True,
        )
        for p, v in TABLE3.items()
    ]
    mirrors = [
        Claim(
            "Mirrors",
            "anchor minus mirror",
            "mirrors.anchor_minus_mirror",
            MIRROR_GAP,
            "points",
            per_trial=True,
        ),
        Claim(
            "Mirrors",
            "the same gap under the human-majority labels (about)",
            "mirrors.human_labels.anchor_minus_mirror",
            MIRROR_GAP_HUMAN_LABELS,
            "points",
            tolerance=1.0,
            per_trial=True,
        ),
        Claim(
            "Mirrors",
            "conditions right on the Apple Card mirror",
            "mirrors.apple_card.modal_correct",
            APPLE_CARD_CORRECT,
            "conditions",
            per_trial=True,
        ),
    ]
    sensitivity = [
        Claim(
            "Sensitivity",
            key.replace("_", " ").replace(".", ": "),
            f"sensitivity.{key}",
            value,
            "%",
            counts,
            per_trial=True,
        )
        for key, (value, counts) in SENSITIVITY.items()
    ]
    labels = [
        Claim(
            "Labels",
            "human majority matches the key",
            "labels.human_majority_match",
            HUMAN_MATCH[2],
            "%",
            HUMAN_MATCH[:2],
        ),
        *(
            Claim(
                "Labels",
                f"Fleiss kappa, {field}",
                f"labels.human.fleiss_kappa.{field}",
                kappa,
                "kappa",
            )
            for field, kappa in HUMAN_KAPPAS.items()
        ),
        Claim(
            "Labels",
            "LLM panel gate kappa",
            "labels.llm_panel.gate_kappa",
            LLM_PANEL["gate_kappa"],
            "kappa",
        ),
        Claim(
            "Labels",
            "LLM panel exact agreement",
            "labels.llm_panel.exact_agreement",
            LLM_PANEL["exact_agreement"],
            "%",
        ),
        Claim(
            "Labels",
            "LLM panel majority matches the key",
            "labels.llm_panel.majority_match",
            LLM_PANEL["majority_match"],
            "%",
        ),
    ]
    return (*corpus, *table2, *direction, *reasoning, *patterns, *mirrors, *sensitivity, *labels)


#: Every number the paper states, in the paper's order.
CLAIMS: tuple[Claim, ...] = _claims()
