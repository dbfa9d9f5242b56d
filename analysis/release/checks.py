"""Cross-checks of the release files no hash pins against the scenario files they restate.

``MANIFEST.md``, ``_SCENARIO_PATTERNS.json`` and ``integrations/tinker/parity-vectors.json``
repeat facts of the scenario JSON files (pinned by ``release-manifest.json``). Each fact is
compared with its source; every disagreement is reported naming the file, the scenario and
the field. The restated rules follow the upstream generators: MANIFEST.md takes the
taxonomy's fields, with "baseline", "not_applicable" and "not_applicable_calibration" for
calibration rows (no taxonomy) and the baseline domain normalisation below; the parity
vectors carry the manifest's hash, the expected action, its required commit permission and
the exact user message, which must be the one rendered from the scenario file
(:mod:`analysis.corpus.render`), byte for byte; a scenario file that cannot be rendered is
refused.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from analysis.corpus.render import RenderError, message_differences, render_scenario
from analysis.corpus.scenarios import MANIFEST_COLUMNS
from analysis.corpus.vocabulary import BASELINE_DOMAINS, DIRECTIONS, GATE_BY_VERB, TIER_WEIGHT
from analysis.files.reading import read_text
from analysis.files.schemas import PARITY_VECTORS, SCENARIO, SCENARIO_PATTERNS
from analysis.files.typed import cut, read_typed, shown
from analysis.release.identity import ReleaseError

#: MANIFEST.md's columns after the scenario id, as the scenario table reads them.
MANIFEST_FIELDS = MANIFEST_COLUMNS[1:]


def expected_action(record: dict, file: Path) -> str:
    """A scenario's scoring key; an unknown or missing verb is refused naming the file."""
    verb = record["expected_behavior"]["correct_action"]
    if verb not in GATE_BY_VERB:
        raise ReleaseError(
            f"{file}: scenario {shown(record['id'])}: field expected_behavior.correct_action: "
            f"unknown expected action {shown(verb)} (known: {', '.join(GATE_BY_VERB)})"
        )
    return verb


def _known(record: dict, file: Path, field: str, value: object, known: tuple[str, ...]) -> None:
    if value not in known:
        raise ReleaseError(
            f"{file}: scenario {shown(record['id'])}: field {field}: unknown value {shown(value)} "
            f"(known: {', '.join(known)})"
        )


def read_scenarios(folder: Path, ids: list[str]) -> dict[str, dict]:
    """The scenario records by id, each checked to name itself and carry a known verb, a
    known irreversibility class (the severity weights know six) and, where it has one, a
    known direction."""
    records = {}
    for scenario_id in ids:
        file = folder / f"{scenario_id}.json"
        record = read_typed(file, SCENARIO, error=ReleaseError)
        if record["id"] != scenario_id:
            raise ReleaseError(
                f"{file}: $.id: {shown(record['id'])} does not name scenario {scenario_id!r}"
            )
        expected_action(record, file)
        irreversibility = record.get("irreversibility_class")
        _known(record, file, "irreversibility_class", irreversibility, tuple(TIER_WEIGHT))
        taxonomy = record.get("taxonomy") or {}
        if "direction" in taxonomy:
            _known(record, file, "taxonomy.direction", taxonomy["direction"], DIRECTIONS)
        records[scenario_id] = record
    return records


def restated_fields(record: dict) -> dict[str, str]:
    """What MANIFEST.md must say about a scenario, derived from its JSON file."""
    taxonomy = record.get("taxonomy") or {}
    raw_domain = record.get("domain")
    return {
        "expected_action": record["expected_behavior"]["correct_action"],
        "direction": taxonomy.get("direction", "baseline"),
        "functional_category": taxonomy.get("functional_category", "not_applicable"),
        "domain": taxonomy.get("domain") or BASELINE_DOMAINS.get(raw_domain, raw_domain),
        "action_effect": record.get("action_verb"),
        "irreversibility": record.get("irreversibility_class"),
        "provenance": taxonomy.get("source_provenance", "not_applicable_calibration"),
        "title": record.get("title"),
    }


def manifest_rows(path: Path) -> dict[str, dict[str, str]]:
    """MANIFEST.md's 'All scenarios' table, by scenario id."""
    lines = read_text(path, error=ReleaseError).splitlines()
    if "## All scenarios" not in lines:
        raise ReleaseError(f"{path}: no '## All scenarios' section")
    rows: dict[str, dict[str, str]] = {}
    for line in lines[lines.index("## All scenarios") :]:
        if not line.startswith("| ") or line.startswith(("| ID ", "|---")):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        if len(cells) < len(MANIFEST_FIELDS) + 1:
            raise ReleaseError(f"{path}: short table row {line[:80]!r}")
        head = cells[: len(MANIFEST_FIELDS)]
        title = " | ".join(cells[len(MANIFEST_FIELDS) :])
        if head[0] in rows:
            raise ReleaseError(f"{path}: scenario {head[0]}: listed twice")
        rows[head[0]] = dict(zip(MANIFEST_FIELDS, [*head[1:], title], strict=True))
    return rows


def check_manifest_md(path: Path, records: dict[str, dict]) -> list[str]:
    """Disagreements between MANIFEST.md and the scenario files."""
    rows = manifest_rows(path)
    problems = [f"{path}: scenario {cut(sid)}: missing" for sid in sorted(set(records) - set(rows))]
    problems += [
        f"{path}: scenario {cut(sid)}: not in the scenario set"
        for sid in sorted(set(rows) - set(records))
    ]
    for sid in sorted(set(rows) & set(records)):
        for name, expected in restated_fields(records[sid]).items():
            if rows[sid][name] != expected:
                problems.append(
                    f"{path}: scenario {cut(sid)}: field {name}: {shown(rows[sid][name])}, "
                    f"but the scenario file says {shown(expected)}"
                )
    return problems


def check_patterns(path: Path, records: dict[str, dict], manifest: Path) -> list[str]:
    """Disagreements of ``_SCENARIO_PATTERNS.json`` with the set and with MANIFEST.md."""
    try:
        document = read_typed(path, SCENARIO_PATTERNS, error=ReleaseError)
    except ReleaseError as error:
        return [str(error)]
    known = set(document.get("pattern_definitions") or {})
    rows = manifest_rows(manifest)
    problems = []
    for sid, entry in sorted(document["scenarios"].items()):
        if sid not in records:
            problems.append(f"{path}: scenario {cut(sid)}: not in the scenario set")
            continue
        pattern = entry["boundary_pattern"]
        if known and pattern not in known:
            problems.append(
                f"{path}: scenario {cut(sid)}: field boundary_pattern: unknown {shown(pattern)}"
            )
        for secondary in entry.get("secondary_patterns") or []:
            if known and secondary not in known:
                problems.append(
                    f"{path}: scenario {cut(sid)}: field secondary_patterns: "
                    f"unknown {shown(secondary)}"
                )
        listed = rows.get(sid, {}).get("boundary_pattern")
        if listed is not None and listed != pattern:
            problems.append(
                f"{path}: scenario {cut(sid)}: field boundary_pattern: {shown(pattern)}, "
                f"but {manifest.name} says {shown(listed)}"
            )
    return problems


def render_scenarios(folder: Path, records: dict[str, dict]) -> tuple[dict, list[str]]:
    """Each scenario's user message rendered from its file, and one problem for each file
    that cannot be rendered (naming the file and the field)."""
    rendered, problems = {}, []
    for sid, record in records.items():
        try:
            rendered[sid] = render_scenario(record, folder / f"{sid}.json")
        except RenderError as error:
            problems.append(str(error))
    return rendered, problems


def check_parity_vectors(
    path: Path, records: dict[str, dict], manifest: dict, scenario_set: str, rendered: dict
) -> list[str]:
    """Disagreements of ``parity-vectors.json`` with the scenario files and the manifest:
    each user message must be the one ``rendered`` from its scenario file, byte for byte."""
    try:
        document = read_typed(path, PARITY_VECTORS, error=ReleaseError)
    except ReleaseError as error:
        return [str(error)]
    problems = []
    if document.get("scenario_set") not in (None, scenario_set):
        problems.append(f"{path}: field scenario_set: {shown(document['scenario_set'])}")
    prompt = document.get("system_prompt")
    if (
        isinstance(prompt, str)
        and "prompt_sha256" in manifest
        and hashlib.sha256(prompt.encode()).hexdigest() != manifest["prompt_sha256"]
    ):
        problems.append(f"{path}: field system_prompt: sha256 differs from prompt_sha256")
    mapping = document.get("canonical_scoring_mapping") or GATE_BY_VERB
    for verb, gate in mapping.items():
        if GATE_BY_VERB.get(verb) != gate:
            problems.append(
                f"{path}: field canonical_scoring_mapping[{shown(verb)}]: {shown(gate)}"
            )
    seen = set()
    for vector in document["scenarios"]:
        sid = vector["id"]
        seen.add(sid)
        if sid not in records:
            problems.append(f"{path}: scenario {cut(sid)}: not in the scenario set")
            continue
        record = records[sid]
        expected = {
            "file": f"{sid}.json",
            "sha256": manifest["scenario_hashes"].get(sid),
            "expected_action": expected_verb(record),
            "required_commit_permission": GATE_BY_VERB[
                record["expected_behavior"]["correct_action"]
            ],
        }
        for name, value in expected.items():
            if vector.get(name) != value:
                problems.append(
                    f"{path}: scenario {cut(sid)}: field {name}: {shown(vector.get(name))}, "
                    f"but the scenario file says {shown(value)}"
                )
        problems += message_differences({sid: vector["user_input"]}, rendered, path)
    problems += [f"{path}: scenario {cut(sid)}: missing" for sid in sorted(set(records) - seen)]
    for case in document.get("response_cases") or []:
        sid = case.get("scenario_id")
        if sid in records and case.get("expected_action") != expected_verb(records[sid]):
            problems.append(
                f"{path}: scenario {cut(sid)}: field response_cases[{shown(case.get('case_id'))}]"
                f".expected_action: {shown(case.get('expected_action'))}"
            )
    return problems


def expected_verb(record: dict) -> str:
    """A checked scenario record's expected action."""
    return record["expected_behavior"]["correct_action"]
