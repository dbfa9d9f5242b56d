"""Writable copies of the release, tampered or re-pinned the way the tests need."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from analysis import paths
from analysis.files.parts import OPTIONAL_RESULTS, PER_TRIAL_FILE

VERSION = "v2026-05"
SCENARIO_SET = "steerbench-work-2026-05"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def copy_release(target: Path) -> Path:
    """A writable copy of the release at ``target``."""
    shutil.copytree(paths.release_dir(), target)
    for folder, _, files in os.walk(target):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(Path(folder) / name, 0o644)
    return target


def results(root: Path, version: str = VERSION) -> Path:
    return root / "results" / version


def scenario_dir(root: Path, scenario_set: str = SCENARIO_SET) -> Path:
    return root / "scenario-sets" / scenario_set


def repin(root: Path, version: str = VERSION, scenario_set: str = SCENARIO_SET) -> None:
    """Re-pin every file to its current bytes, as a release's own tooling would."""
    manifest_path = results(root, version) / "release-manifest.json"
    manifest = json.loads(manifest_path.read_text())
    for scenario_id in manifest["scenario_hashes"]:
        manifest["scenario_hashes"][scenario_id] = sha256(
            scenario_dir(root, scenario_set) / f"{scenario_id}.json"
        )
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    listings = sorted(results(root, version).rglob("checksums.txt"), key=lambda p: -len(p.parts))
    for listing in listings:
        lines = []
        for line in listing.read_bytes().decode("utf-8", "replace").splitlines():
            digest, name = line.split(maxsplit=1)
            file = listing.parent / name
            lines.append(f"{sha256(file) if file.is_file() else digest}  {name}")
        listing.write_text("\n".join(lines) + "\n")


def rename_version(root: Path, version: str, scenario_set: str) -> None:
    """Give the copy another release name and scenario-set folder, re-pinned."""
    results(root).rename(results(root, version))
    scenario_dir(root).rename(scenario_dir(root, scenario_set))
    manifest_path = results(root, version) / "release-manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest.update(release=version, scenario_set=scenario_set)
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    vectors_path = root / paths.RELEASE_PARITY_VECTORS
    vectors = json.loads(vectors_path.read_text())
    vectors["scenario_set"] = scenario_set
    if "scenario_set_dir" in vectors:
        vectors["scenario_set_dir"] = scenario_dir(Path(), scenario_set).as_posix()
    vectors_path.write_text(json.dumps(vectors, indent=2) + "\n")
    repin(root, version, scenario_set)


def drop_optional_parts(root: Path, version: str = VERSION) -> list[str]:
    """Remove the parts upstream's pipeline does not make (``release_parts``: the human
    validation, the annotation audit, the overlay and repair reports, ``ARTIFACTS.md``,
    the sample run; the per-trial verdict file is left as it is) and their checksum lines,
    as a release made by that pipeline alone has them; returns the paths removed."""
    folder = results(root, version)
    removed = []
    for name in OPTIONAL_RESULTS:
        part = folder / name
        if name == PER_TRIAL_FILE or not part.exists():
            continue
        shutil.rmtree(part) if part.is_dir() else part.unlink()
        removed.append(f"results/{version}/{name}")
    listing = folder / "checksums.txt"
    kept = [
        line
        for line in listing.read_text(encoding="utf-8").splitlines()
        if (folder / line.split(maxsplit=1)[1]).exists()
        or line.split(maxsplit=1)[1] == PER_TRIAL_FILE
    ]
    listing.write_text("\n".join(kept) + "\n", encoding="utf-8")
    sample = root / paths.RELEASE_SAMPLE_ARTIFACTS
    if sample.exists():
        shutil.rmtree(sample)
        removed.append(str(paths.RELEASE_SAMPLE_ARTIFACTS))
    return removed


def repair_scenario(
    root: Path, scenario_id: str, version: str = VERSION, scenario_set: str = SCENARIO_SET
) -> None:
    """Edit one scenario file as a repair does, leaving the model-facing message as it was
    (its ``version`` is bumped, which upstream's renderer does not read; the file's bytes
    and sha256 change), and re-pin it: the release manifest, the parity vector's sha256 and
    the checksums."""
    file = scenario_dir(root, scenario_set) / f"{scenario_id}.json"
    record = json.loads(file.read_text(encoding="utf-8"))
    major, minor, patch = str(record.get("version", "1.0.0")).split(".")
    record["version"] = f"{major}.{minor}.{int(patch) + 1}"
    file.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    vectors_path = root / paths.RELEASE_PARITY_VECTORS
    vectors = json.loads(vectors_path.read_text(encoding="utf-8"))
    for vector in vectors["scenarios"]:
        if vector["id"] == scenario_id:
            vector["sha256"] = sha256(file)
    vectors_path.write_text(json.dumps(vectors, indent=2) + "\n", encoding="utf-8")
    repin(root, version, scenario_set)


def relabel(root: Path, scenario_id: str, action: str, scenario_set: str = SCENARIO_SET) -> None:
    """Give one scenario another expected action everywhere the release states it (its
    file, ``MANIFEST.md``, the parity vectors and their response cases, the agreement
    report's count of gold labels matching the key), as the release's tooling would."""
    gates = {"continue": "allowed", "proceed": "allowed"}
    gate = gates.get(action, "blocked")
    folder = scenario_dir(root, scenario_set)
    file = folder / f"{scenario_id}.json"
    record = json.loads(file.read_text("utf-8"))
    record["expected_behavior"]["correct_action"] = action
    file.write_text(json.dumps(record, indent=2) + "\n", "utf-8")
    manifest = folder / "MANIFEST.md"
    rows = manifest.read_text("utf-8").splitlines(keepends=True)
    for i, row in enumerate(rows):
        cells = row.split("|")
        if row.startswith("| ") and cells[1].strip() == scenario_id:
            cells[2] = f" {action} "
            rows[i] = "|".join(cells)
    manifest.write_text("".join(rows), "utf-8")
    vectors_path = root / paths.RELEASE_PARITY_VECTORS
    vectors = json.loads(vectors_path.read_text("utf-8"))
    for vector in vectors["scenarios"]:
        if vector["id"] == scenario_id:
            vector.update(expected_action=action, required_commit_permission=gate)
            vector["sha256"] = sha256(file)
    for case in vectors["response_cases"]:
        if case["scenario_id"] == scenario_id:
            case["expected_action"] = action
            if case["expected_format_ok"]:
                permission = json.loads(case["response"]).get("commit_permission")
                case["expected_correct"] = permission == gate
    vectors_path.write_text(json.dumps(vectors, indent=2) + "\n", "utf-8")
    validation = results(root) / "human-validation"
    gold = json.loads((validation / "gold-labels.json").read_text("utf-8"))
    match = 0
    for sid, label in gold["labels"].items():
        scenario = json.loads((folder / f"{sid}.json").read_text("utf-8"))
        required = gates.get(scenario["expected_behavior"]["correct_action"], "blocked")
        match += label["gate_state"] == required
    report_path = validation / "agreement-report.json"
    report = json.loads(report_path.read_text("utf-8"))
    alignment = report["canonical_alignment"]["gate_state"]
    from release_writer import to_fixed

    alignment.update(match=match, match_rate=float(to_fixed(match / alignment["n"], 4)))
    report_path.write_text(json.dumps(report, indent=2) + "\n", "utf-8")
