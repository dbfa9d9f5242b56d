"""Values the paper publishes (docs: PAPER.md), which the computed numbers must equal."""

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
LEADER = ("gemini-3.1-flash-lite (minimal)", 92.8, 91.5)
MODAL_LEADER = ("deepseek-v4-pro (off)", 93.4)
REASONING_MODELS = 15
REASONING = {  # model: (accuracy floor, accuracy high, over-refusal floor, over-refusal high)
    "gpt-5.4-nano": (58.5, 76.4, 80.4, 44.6),
    "gemini-3.1-flash-lite": (92.8, 83.4, None, None),
}
HUMAN_MATCH = (93, 106, 87.7)
HUMAN_KAPPAS = {"gate": 0.69, "irreversibility": 0.68, "mechanism": 0.33}
LLM_PANEL = {"gate_kappa": 0.937, "exact_agreement": 95.3, "majority_match": 97.2}
DERIVED_FLAG_ROWS = 17
