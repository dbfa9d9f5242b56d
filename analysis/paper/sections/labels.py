"""Section ``09-labels``: the human majority against the key, and the agreement the release
reports (its agreement reports carry no per-rater votes, so the statistics are read, not
recomputed)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pandas as pd

from analysis.corpus.formatting import rounded
from analysis.corpus.scenarios import has_human_labels
from analysis.files.parts import HUMAN_AGREEMENT, LLM_AUDIT, has_part
from analysis.files.reading import read_json
from analysis.paper.provenance import numbers_table, ratio_number, value_number
from analysis.scoring.ratio import Ratio

HUMAN_REPORT = Path(HUMAN_AGREEMENT.file)
AUDIT_REPORT = Path(LLM_AUDIT.file)
#: The human panel's agreement fields: (report field, name segment).
HUMAN_FIELDS = (
    ("gate_state", "gate"),
    ("irreversibility_tier", "irreversibility"),
    ("functional_category", "mechanism"),
)
DISAGREEMENT_COLUMNS = ["scenario_id", "boundary_pattern", "required_gate", "human_gate"]


class AgreementReportError(ValueError):
    """An agreement report that cannot be read or lacks a field; the message names it."""


def human_key_numbers(scenarios: pd.DataFrame) -> pd.DataFrame:
    """``labels.human_majority_match``: scenarios whose three-rater majority gate equals the
    key, out of every scenario (a scenario with no majority does not match)."""
    matches = int((scenarios["human_gate"].astype(object) == scenarios["required_gate"]).sum())
    return numbers_table(
        [
            ratio_number(
                "labels.human_majority_match",
                matches,
                len(scenarios),
                "scenarios whose three-rater majority gate equals the key",
            )
        ]
    )


def disagreements(scenarios: pd.DataFrame) -> pd.DataFrame:
    """The scenarios whose human majority gate differs from the key (or is missing)."""
    differs = scenarios["human_gate"].astype(object) != scenarios["required_gate"].astype(object)
    return scenarios.loc[differs.to_numpy(dtype=bool), DISAGREEMENT_COLUMNS].reset_index(drop=True)


def _report(path: Path) -> dict:
    return read_json(path, error=AgreementReportError)


def _field(report: dict, path: Path, *keys: str):
    value = report
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            raise AgreementReportError(f"{path}: field {'.'.join(keys)} missing")
        value = value[key]
    return value


def _number(report: dict, path: Path, *keys: str, low: float, high: float) -> Fraction:
    """A reported number in [low, high], exactly as written (JSON numbers only)."""
    value = _field(report, path, *keys)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise AgreementReportError(
            f"{path}: field {'.'.join(keys)}: {value!r} is not a number from {low} to {high}"
        )
    return Fraction(str(value))


def _count(report: dict, path: Path, *keys: str, most: int | None = None) -> int:
    """A reported count: a whole number from 0 to ``most``."""
    value = _field(report, path, *keys)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise AgreementReportError(f"{path}: field {'.'.join(keys)}: {value!r} is not a count")
    if most is not None and value > most:
        raise AgreementReportError(
            f"{path}: field {'.'.join(keys)}: {value} is more than the {most} items"
        )
    return value


def reported_agreement(
    results_dir: Path, scenarios: pd.DataFrame | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(numbers, table) of the agreement the release reports: the three human raters' Fleiss
    kappa per field, and the LLM audit panel's kappa, exact agreement and majority match on
    the gate, each with the report it comes from; a report the release lacks (an optional
    part, :mod:`analysis.files.parts`) gives none. With ``scenarios`` carrying human gates,
    the human report's own count of majority gates matching the key, where it gives one,
    must be what the gold labels give (:func:`human_key_numbers`)."""
    results_dir = Path(results_dir)
    numbers: list[dict] = []
    rows: list[tuple[str, str, str, str]] = []
    if has_part(results_dir, HUMAN_AGREEMENT):
        _human_agreement(results_dir, scenarios, numbers, rows)
    if has_part(results_dir, LLM_AUDIT):
        _audit_agreement(results_dir, numbers, rows)
    table = pd.DataFrame(rows, columns=["panel", "statistic", "reported", "source_file"])
    return numbers_table(numbers), table


def _shown(results_dir: Path, part: Path) -> str:
    return (Path("results") / results_dir.name / part).as_posix()


def _human_agreement(
    results_dir: Path, scenarios: pd.DataFrame | None, numbers: list[dict], rows: list[tuple]
) -> None:
    human_path = results_dir / HUMAN_REPORT
    human = _report(human_path)
    stated = (human.get("canonical_alignment") or {}).get("gate_state")
    checkable = scenarios is not None and has_human_labels(scenarios)
    if checkable and isinstance(stated, dict) and "match" in stated:
        keys = ("canonical_alignment", "gate_state")
        n = _count(human, human_path, *keys, "n")
        match = _count(human, human_path, *keys, "match", most=n)
        gold = human_key_numbers(scenarios).iloc[0]
        if (match, n) != (gold["numerator"], gold["denominator"]):
            raise AgreementReportError(
                f"{human_path}: field canonical_alignment.gate_state: {match} of {n} majority "
                f"gates match the key, but gold-labels.json gives {gold['numerator']} of "
                f"{gold['denominator']}"
            )
    for field, label in HUMAN_FIELDS:
        kappa = _number(
            human, human_path, "inter_annotator_agreement", field, "value", low=-1, high=1
        )
        numbers.append(
            value_number(
                f"labels.human.fleiss_kappa.{label}",
                kappa,
                f"Fleiss kappa, {label}, as reported in {human_path.name}",
                unit="kappa",
                digits=2,
            )
        )
        rows.append(
            (
                "three human raters",
                f"Fleiss kappa ({label})",
                f"{float(rounded(kappa, 2)):.2f}",
                _shown(results_dir, HUMAN_REPORT),
            )
        )


def _audit_agreement(results_dir: Path, numbers: list[dict], rows: list[tuple]) -> None:
    audit_path = results_dir / AUDIT_REPORT
    audit = _report(audit_path)
    gate = ("inter_annotator_agreement", "gate_state")
    alignment = ("canonical_alignment", "gate_state")
    gate_kappa = _number(audit, audit_path, *gate, "value", low=-1, high=1)
    n_items = _count(audit, audit_path, *gate, "n_items")
    share = _number(audit, audit_path, *gate, "percent_agreement", low=0, high=1)
    agreeing = round(float(share) * n_items)
    n_aligned = _count(audit, audit_path, *alignment, "n")
    matching = _count(audit, audit_path, *alignment, "majority_match_count", most=n_aligned)
    numbers += [
        value_number(
            "labels.llm_panel.gate_kappa",
            gate_kappa,
            "LLM panel Fleiss kappa on the gate, as reported",
            unit="kappa",
            digits=3,
        ),
        ratio_number(
            "labels.llm_panel.exact_agreement",
            agreeing,
            n_items,
            "LLM panel exact agreement on the gate",
        ),
        ratio_number(
            "labels.llm_panel.majority_match",
            matching,
            n_aligned,
            "LLM panel majority matching the key",
        ),
    ]
    panel = "three-model LLM audit"
    rows += [
        (
            panel,
            "Fleiss kappa (gate)",
            f"{rounded(gate_kappa, 3)}",
            _shown(results_dir, AUDIT_REPORT),
        ),
        (
            panel,
            "exact agreement (gate)",
            Ratio(agreeing, n_items).text(),
            _shown(results_dir, AUDIT_REPORT),
        ),
        (
            panel,
            "majority matches key (gate)",
            Ratio(matching, n_aligned).text(),
            _shown(results_dir, AUDIT_REPORT),
        ),
    ]
