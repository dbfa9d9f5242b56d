"""Pinned model inputs: the system prompt and per-scenario user messages, hash-checked.

The runner refuses to start unless the system prompt's sha256 and every scenario's sha256
match the release manifest, so that a run is comparable with the published ones.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis import paths
from analysis.vocabulary import required_gate

DEFAULT_MANIFEST = paths.RESULTS_DIR / "release-manifest.json"
NO_FLAGS = frozenset({"", "none"})


class PinnedInputError(RuntimeError):
    """The inputs differ from what the release pins; the runner must not start."""


def sha256_text(text: str) -> str:
    """The sha256 hex digest of a string's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class PinnedScenario:
    """One scenario as the model sees it, with its scoring key."""

    id: str
    file: str
    sha256: str
    expected_action: str
    required_commit_permission: str
    user_input: str

    def flag_line(self, name: str) -> tuple[str, ...]:
        """The comma-separated values of a ``name:`` line of the user message ('none' dropped)."""
        prefix = f"{name}:"
        for line in self.user_input.splitlines():
            if line.startswith(prefix):
                values = (v.strip() for v in line[len(prefix) :].split(","))
                return tuple(v for v in values if v not in NO_FLAGS)
        return ()


@dataclass(frozen=True)
class PinnedInputs:
    """The pinned system prompt and scenarios (sorted by id)."""

    system_prompt: str
    prompt_sha256: str
    scenarios: tuple[PinnedScenario, ...]

    def by_id(self) -> dict[str, PinnedScenario]:
        """Scenarios keyed by id."""
        return {s.id: s for s in self.scenarios}

    def select(self, ids: list[str] | None) -> tuple[PinnedScenario, ...]:
        """The scenarios named in ``ids`` (all when None); unknown ids are an error."""
        if not ids:
            return self.scenarios
        index = self.by_id()
        unknown = [i for i in ids if i not in index]
        if unknown:
            raise PinnedInputError(f"unknown scenario ids: {', '.join(unknown)}")
        return tuple(index[i] for i in sorted(set(ids)))


def _read_json(path: Path) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PinnedInputError(f"{path} not found; run `make data` first") from None


def load_pinned_inputs(
    parity_vectors: Path = paths.PARITY_VECTORS,
    release_manifest: Path = DEFAULT_MANIFEST,
) -> PinnedInputs:
    """Load ``parity-vectors.json`` and check it against the release manifest's hashes."""
    vectors = _read_json(parity_vectors)
    manifest = _read_json(release_manifest)
    prompt = vectors["system_prompt"]
    prompt_sha = sha256_text(prompt)
    if prompt_sha != manifest["prompt_sha256"]:
        raise PinnedInputError(
            f"system prompt sha256 {prompt_sha} differs from the release manifest's "
            f"prompt_sha256 {manifest['prompt_sha256']}; refusing to run"
        )
    pinned_hashes: dict[str, str] = manifest["scenario_hashes"]
    scenarios = []
    for row in vectors["scenarios"]:
        sid = row["id"]
        if pinned_hashes.get(sid) != row["sha256"]:
            raise PinnedInputError(
                f"scenario {sid}: sha256 {row['sha256']} differs from the release manifest's "
                f"{pinned_hashes.get(sid)}; refusing to run"
            )
        required = required_gate(row["expected_action"])
        if row.get("required_commit_permission", required) != required:
            raise PinnedInputError(f"scenario {sid}: required_commit_permission disagrees")
        scenarios.append(
            PinnedScenario(
                id=sid,
                file=row.get("file", f"{sid}.json"),
                sha256=row["sha256"],
                expected_action=row["expected_action"],
                required_commit_permission=required,
                user_input=row["user_input"],
            )
        )
    missing = sorted(set(pinned_hashes) - {s.id for s in scenarios})
    if missing:
        raise PinnedInputError(f"scenarios pinned by the manifest but absent: {missing}")
    return PinnedInputs(prompt, prompt_sha, tuple(sorted(scenarios, key=lambda s: s.id)))


def scenario_metadata(scenario: PinnedScenario, scenarios_dir: Path = paths.SCENARIOS_DIR) -> dict:
    """The scenario's manifest entry: id, file, hash, key and taxonomy (nulls if unavailable)."""
    path = Path(scenarios_dir) / scenario.file
    raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    taxonomy = raw.get("taxonomy") or {}
    return {
        "id": scenario.id,
        "file": scenario.file,
        "sha256": scenario.sha256,
        "expected_action": scenario.expected_action,
        "direction": taxonomy.get("direction"),
        "functional_category": taxonomy.get("functional_category"),
        "domain": taxonomy.get("domain", raw.get("domain")),
        "source_provenance": taxonomy.get("source_provenance"),
        "irreversibility_class": raw.get("irreversibility_class"),
        "action_verb": raw.get("action_verb"),
        "tags": raw.get("tags", []),
        "license": raw.get("license"),
        "version": raw.get("version"),
    }
