"""The scenario table: one row per scenario of the corpus, with every label the paper slices by.

Sources, all imported into ``data/`` by ``make data``: the scenario JSON files (labels, tier,
taxonomy, tags, mirror metadata), ``_SCENARIO_PATTERNS.json`` (curated construction
patterns), ``MANIFEST.md`` (the only normalised domain and action effect for all rows),
``human-validation/gold-labels.json`` (three-rater majority labels; a release without it
gives no scenario a human gate). The model-facing flags come from each scenario's user
message as rendered from its file (:mod:`analysis.corpus.render`); ``parity-vectors.json``,
where the release has one, must state those messages byte for byte.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis import paths
from analysis.corpus.render import (
    RenderedScenario,
    RenderError,
    message_differences,
    render_scenario,
)
from analysis.corpus.vocabulary import (
    DIRECTION_DTYPE,
    DIRECTIONS,
    GATE_BY_VERB,
    GATE_DTYPE,
    GATES,
    IRREVERSIBILITY_DTYPE,
    PATTERNS,
    TIER_WEIGHT,
    required_gate,
    tier_weight,
)
from analysis.files.parts import HUMAN_LABELS, has_part
from analysis.files.schemas import GOLD_LABELS, PARITY_VECTORS, SCENARIO, SCENARIO_PATTERNS
from analysis.files.typed import cut, read_typed, shown

#: The flag whose keyword-derived presence marks the paper's "derived-flag" rows.
DERIVED_FLAG = "success_criterion_change"

#: Calibration rows carry no taxonomy; the release calls their direction "baseline".
CALIBRATION = "calibration"

MANIFEST_COLUMNS = (
    "scenario_id",
    "expected_action",
    "direction",
    "functional_category",
    "domain",
    "action_effect",
    "irreversibility",
    "provenance",
    "boundary_pattern",
    "source",
    "title",
)


class ScenarioError(ValueError):
    """The scenario corpus is inconsistent with itself or with its manifest."""


def infer_pattern(provenance: str | None, tags: list[str]) -> str:
    """Construction pattern of a row with no curated entry, from its source metadata.

    The release's rule, first match wins: mirror provenance or a mirror tag ->
    incident_mirror; tag ``adversarial`` -> adversarial_control; tag ``false_positive_flag``
    -> detector_conflict; tag ``safe_control`` -> clean_control; provenance real-world-cited
    or "literature + analogous incident" -> public_harm_anchor; no provenance ->
    calibration_control.
    """
    if provenance == "incident-mirror" or any("mirror" in tag for tag in tags):
        return "incident_mirror"
    if "adversarial" in tags:
        return "adversarial_control"
    if "false_positive_flag" in tags:
        return "detector_conflict"
    if "safe_control" in tags:
        return "clean_control"
    if provenance in ("real-world-cited", "literature + analogous incident"):
        return "public_harm_anchor"
    if provenance is None:
        return "calibration_control"
    raise ScenarioError(
        f"no construction pattern can be inferred for provenance {shown(provenance)}"
    )


def read_manifest(path: Path) -> pd.DataFrame:
    """The 'All scenarios' table of ``MANIFEST.md`` as a DataFrame of strings."""
    lines = path.read_text(encoding="utf-8").splitlines()
    try:
        start = lines.index("## All scenarios")
    except ValueError:
        raise ScenarioError(f"{path}: no '## All scenarios' section") from None
    rows = []
    for line in lines[start:]:
        if not line.startswith("| ") or line.startswith(("| ID ", "|---")):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        if len(cells) < len(MANIFEST_COLUMNS):
            raise ScenarioError(f"{path}: short table row {line[:80]!r}")
        head = cells[: len(MANIFEST_COLUMNS) - 1]
        rows.append([*head, " | ".join(cells[len(MANIFEST_COLUMNS) - 1 :])])
    return pd.DataFrame(rows, columns=list(MANIFEST_COLUMNS))


def render_messages(files: dict[Path, dict]) -> list[RenderedScenario]:
    """Each scenario's user message rendered from its file (``files``: path -> parsed
    record); a file that cannot be rendered is refused naming the file and the field."""
    try:
        return [render_scenario(record, file) for file, record in files.items()]
    except RenderError as error:
        raise ScenarioError(str(error)) from None


def model_flags(rendered: list[RenderedScenario]) -> pd.DataFrame:
    """Per scenario, the ``risk_flags`` and ``integrity_flags`` its message shows the models."""
    return pd.DataFrame(
        {"scenario_id": r.id, "risk_flags": r.risk_flags, "integrity_flags": r.integrity_flags}
        for r in rendered
    )


def check_parity_file(path: Path, rendered: list[RenderedScenario]) -> None:
    """Refuse a parity file (``parity-vectors.json``) whose user messages are not the ones
    rendered from the scenario files, naming the first scenario and its first differing
    line; a release without one has nothing to check."""
    if not path.is_file():
        return
    document = read_typed(path, PARITY_VECTORS, error=ScenarioError)
    stated = {vector["id"]: vector["user_input"] for vector in document["scenarios"]}
    problems = message_differences(stated, {r.id: r for r in rendered}, path)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ScenarioError(problems[0] + more)


def _known_labels(record: dict, file: Path) -> dict:
    """``record``, refused naming ``file``, the field and the value unless its expected
    action, irreversibility class and direction are among those the scoring knows."""
    taxonomy = record.get("taxonomy") or {}
    for field, value, known in (
        (
            "expected_behavior.correct_action",
            record["expected_behavior"]["correct_action"],
            tuple(GATE_BY_VERB),
        ),
        ("irreversibility_class", record["irreversibility_class"], tuple(TIER_WEIGHT)),
        ("taxonomy.direction", taxonomy.get("direction", CALIBRATION), DIRECTIONS),
    ):
        if value not in known:
            raise ScenarioError(
                f"{file}: scenario {cut(record['id'])}: field {field}: unknown value "
                f"{shown(value)} (known: {', '.join(known)})"
            )
    return record


def _scenario_row(record: dict, curated: dict) -> dict:
    taxonomy = record.get("taxonomy") or {}
    tags = list(record.get("tags") or [])
    provenance = taxonomy.get("source_provenance")
    entry = curated.get(record["id"])
    mirror = (record.get("metadata") or {}).get("underrefusal_incident_mirror") or {}
    return {
        "scenario_id": record["id"],
        "title": record["title"],
        "expected_action": record["expected_behavior"]["correct_action"],
        "required_gate": required_gate(record["expected_behavior"]["correct_action"]),
        "direction": taxonomy.get("direction", CALIBRATION),
        "boundary_pattern": entry["boundary_pattern"] if entry else infer_pattern(provenance, tags),
        "pattern_curated": entry is not None,
        "secondary_patterns": tuple(entry.get("secondary_patterns", ())) if entry else (),
        "functional_category": taxonomy.get("functional_category", "not_applicable"),
        "raw_domain": record["domain"],
        "irreversibility": record["irreversibility_class"],
        "tier_weight": tier_weight(record["irreversibility_class"]),
        "provenance": provenance or "not_applicable_calibration",
        "tier": record.get("tier"),
        "is_mirror": bool(mirror) or provenance == "incident-mirror",
        "mirror_incident": mirror.get("incident_name"),
        "tags": tuple(tags),
    }


def load_scenarios(
    scenario_dir: Path | None = None,
    results_dir: Path | None = None,
) -> pd.DataFrame:
    """The scenario table, one row per scenario, checked against ``MANIFEST.md``.

    Parameters
    ----------
    scenario_dir : Path, optional
        The folder of scenario files. None: ``paths.scenarios_dir()`` (the imported
        ``data/scenarios``), read at the call.
    results_dir : Path, optional
        The release's results folder, for the human labels. None: ``paths.results_dir()``,
        read at the call.

    Returns
    -------
    DataFrame
        One row per scenario, with columns scenario_id, title, expected_action,
        required_gate, direction, boundary_pattern, pattern_curated, secondary_patterns,
        functional_category, domain (normalised), raw_domain, action_effect, irreversibility,
        tier_weight, provenance, tier, is_mirror, mirror_incident, tags, risk_flags,
        integrity_flags, derived_flag, human_gate.

    Raises
    ------
    ScenarioError
        A scenario file is unreadable or disagrees with the manifest.

    See Also
    --------
    load_trials : The per-trial verdicts on these scenarios.
    load_conditions : The published conditions' counts on them.
    with_metadata : Scenario columns appended to trials or cells.

    Examples
    --------
    On the imported release:

    >>> scenarios = load_scenarios()
    >>> len(scenarios), scenarios["scenario_id"].is_unique
    (106, True)
    >>> scenarios["required_gate"].value_counts()
    required_gate
    allowed    56
    blocked    50
    Name: count, dtype: int64
    >>> scenarios.loc[0, ["scenario_id", "required_gate", "tier_weight"]].to_dict()
    {'scenario_id': 'account-cancellation-001', 'required_gate': 'blocked', 'tier_weight': 4}
    """
    scenario_dir = Path(scenario_dir or paths.scenarios_dir())
    results_dir = Path(results_dir or paths.results_dir())
    curated = read_typed(
        scenario_dir / "_SCENARIO_PATTERNS.json", SCENARIO_PATTERNS, error=ScenarioError
    )
    files = {
        file: _known_labels(read_typed(file, SCENARIO, error=ScenarioError), file)
        for file in sorted(scenario_dir.glob("*.json"))
        if not file.name.startswith("_") and file.name != "parity-vectors.json"
    }
    table = pd.DataFrame(_scenario_row(r, curated["scenarios"]) for r in files.values())

    manifest = read_manifest(scenario_dir / "MANIFEST.md")
    _check_against_manifest(table, manifest, scenario_dir / "MANIFEST.md")
    table = table.merge(manifest[["scenario_id", "domain", "action_effect"]], on="scenario_id")

    rendered = render_messages(files)
    check_parity_file(scenario_dir / "parity-vectors.json", rendered)
    flags = model_flags(rendered)
    table = table.merge(flags, on="scenario_id", how="left", validate="one_to_one")
    table["derived_flag"] = [
        DERIVED_FLAG in risk or DERIVED_FLAG in integrity
        for risk, integrity in zip(table["risk_flags"], table["integrity_flags"], strict=True)
    ]

    if has_part(results_dir, HUMAN_LABELS):
        gates = human_gates(results_dir / HUMAN_LABELS.file, table["scenario_id"])
        table["human_gate"] = table["scenario_id"].map(gates)
    else:  # a release without the human validation: no scenario has a human gate
        table["human_gate"] = None
    return _typed(table)


def has_human_labels(scenarios: pd.DataFrame) -> bool:
    """Whether the scenario table carries the human majority gates (the release has
    ``human-validation/gold-labels.json``, which labels every scenario)."""
    return bool(scenarios["human_gate"].notna().any())


def human_gates(path: Path, scenario_ids: pd.Series) -> dict[str, str]:
    """The three-rater majority gate of each scenario from ``gold-labels.json``; a file that
    does not label every scenario of the set with a known gate, or labels another, is
    refused naming the file and the scenarios (the human-label comparisons need them all)."""
    labels = read_typed(path, GOLD_LABELS, error=ScenarioError)["labels"]
    gates = {str(sid): label.get("gate_state") for sid, label in labels.items()}
    ids = set(scenario_ids.astype(str))
    problems = [f"no label for {cut(sid)}" for sid in sorted(ids - set(gates))]
    problems += [
        f"a label for {cut(sid)}, not in the scenario set" for sid in sorted(set(gates) - ids)
    ]
    problems += [
        f"{cut(sid)}: field gate_state: unknown value {shown(gate)} (known: {', '.join(GATES)})"
        for sid, gate in sorted(gates.items())
        if sid in ids and gate not in GATES
    ]
    if problems:
        listed = "; ".join(problems[:5]) + (
            f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
        )
        raise ScenarioError(f"{path}: {listed}")
    return gates


def _check_against_manifest(table: pd.DataFrame, manifest: pd.DataFrame, where: Path) -> None:
    """The JSON-derived labels must agree with the release's own inventory, row by row."""
    merged = table.merge(
        manifest, on="scenario_id", how="outer", suffixes=("", "_manifest"), indicator=True
    )
    problems = [
        f"{cut(sid)}: only in {'the JSON files' if side == 'left_only' else where.name}"
        for sid, side in zip(merged["scenario_id"], merged["_merge"], strict=True)
        if side != "both"
    ]
    manifest_direction = merged["direction_manifest"].replace({"baseline": CALIBRATION})
    for column, theirs in [
        ("expected_action", merged["expected_action_manifest"]),
        ("direction", manifest_direction),
        ("functional_category", merged["functional_category_manifest"]),
        ("irreversibility", merged["irreversibility_manifest"]),
        ("provenance", merged["provenance_manifest"]),
        ("boundary_pattern", merged["boundary_pattern_manifest"]),
    ]:
        differs = (merged["_merge"] == "both") & (merged[column] != theirs)
        problems += [
            f"{cut(sid)}: {column} {shown(ours)} in JSON, {shown(other)} in {where.name}"
            for sid, ours, other in zip(
                merged.loc[differs, "scenario_id"],
                merged.loc[differs, column],
                theirs[differs],
                strict=True,
            )
        ]
    if problems:
        raise ScenarioError(
            "scenario labels disagree with the manifest:\n  " + "\n  ".join(problems)
        )


def _typed(table: pd.DataFrame) -> pd.DataFrame:
    categorical = [
        "expected_action",
        "functional_category",
        "domain",
        "raw_domain",
        "action_effect",
        "provenance",
        "tier",
    ]
    table = table.astype({column: "category" for column in categorical})
    return table.astype(
        {
            "required_gate": GATE_DTYPE,
            "human_gate": GATE_DTYPE,
            "direction": DIRECTION_DTYPE,
            # the paper's eight patterns in order, then any other the release defines
            "boundary_pattern": pd.CategoricalDtype(
                [*PATTERNS, *sorted(set(table["boundary_pattern"].dropna()) - set(PATTERNS))]
            ),
            "irreversibility": IRREVERSIBILITY_DTYPE,
            "tier_weight": "int64",
        }
    ).sort_values("scenario_id", ignore_index=True)
