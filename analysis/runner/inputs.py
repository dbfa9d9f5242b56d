"""Pinned model inputs: the system prompt and per-scenario user messages, hash-checked.

The release manifest pins two things: the system prompt's sha256 and each scenario file's
sha256. The runner refuses to start unless the system prompt bytes it sends hash to the
pinned value, and every scenario file hashes to its pinned value and is restated by its user
message: the message's ``scenario_id``, ``user_request``, ``goal``, ``confidence`` and action
lines (``action_type`` ... ``cost_level``) must equal the verified file's fields wherever the
file has them. The rest of a user message (the derived ``risk_flags``, ``evidence`` and
``integrity_*`` lines) is pinned by no release hash; the runner records the sha256 of every
user message it sends (``user_inputs_sha256`` in ``RUN_PLAN.json``, part of a run's identity).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis import paths
from analysis.files import read_json
from analysis.vocabulary import required_gate

NO_FLAGS = frozenset({"", "none"})


class PinnedInputError(RuntimeError):
    """The inputs differ from what the release pins; the runner must not start."""


#: User-message lines that copy a scenario file field verbatim: line name -> field path.
RESTATED_LINES: dict[str, tuple[str, ...]] = {
    "scenario_id": ("id",),
    "user_request": ("user_request",),
    "goal": ("context", "goal"),
    "confidence": ("decision_point", "confidence"),
    **{
        name: ("metadata", "legacy_action", name)
        for name in (
            "action_type",
            "commit_category",
            "target_scope",
            "externality",
            "reversibility",
            "privilege_level",
            "cost_level",
        )
    },
}


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

    @property
    def user_input_sha256(self) -> str:
        """sha256 of the user message's UTF-8 bytes."""
        return sha256_text(self.user_input)

    def line(self, name: str) -> str | None:
        """The value of the user message's ``name:`` line, or None when it has none."""
        prefix = f"{name}: "
        for line in self.user_input.splitlines():
            if line.startswith(prefix):
                return line[len(prefix) :]
        return None

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
    source: str = "parity-vectors.json"

    @property
    def user_inputs_sha256(self) -> str:
        """One digest of every scenario's user-message hash (id-sorted)."""
        return sha256_text("\n".join(f"{s.id} {s.user_input_sha256}" for s in self.scenarios))

    def check_messages(self, scenario: PinnedScenario, messages: list[dict[str, str]]) -> None:
        """Refuse unless the messages about to be sent are the pinned bytes, byte for byte."""
        system, user = messages[0]["content"], messages[1]["content"]
        if sha256_text(system) != self.prompt_sha256:
            raise PinnedInputError(
                f"{self.source}: scenario {scenario.id}: the system prompt about to be sent "
                f"has sha256 {sha256_text(system)}, not the pinned {self.prompt_sha256}; "
                "refusing to run"
            )
        if sha256_text(user) != scenario.user_input_sha256:
            raise PinnedInputError(
                f"{self.source}: scenario {scenario.id}: the user message about to be sent "
                "differs from the verified one; refusing to run"
            )

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
    if not Path(path).exists():
        raise PinnedInputError(f"{path} not found; run `make data` first")
    return read_json(path, error=PinnedInputError)


def _field(raw: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = raw
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def check_scenario_file(
    scenario: PinnedScenario, scenarios_dir: Path, pinned_sha256: str, source: str
) -> None:
    """Refuse unless the scenario file hashes to the pinned value and the user message
    restates it (see ``RESTATED_LINES``)."""
    path = Path(scenarios_dir) / scenario.file
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise PinnedInputError(f"{path}: scenario file not found; run `make data`") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != pinned_sha256:
        raise PinnedInputError(
            f"{path}: scenario {scenario.id}: sha256 {digest} differs from the release "
            f"manifest's {pinned_sha256}; refusing to run"
        )
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise PinnedInputError(f"{path}: scenario {scenario.id}: not UTF-8 JSON: {exc}") from None
    for line, field_path in RESTATED_LINES.items():
        expected = _field(raw, field_path)
        if expected is None:
            continue
        sent = scenario.line(line)
        if sent != str(expected):
            raise PinnedInputError(
                f"{source}: scenario {scenario.id}: user message line {line!r} is {sent!r}, "
                f"but {path.name} says {str(expected)!r}; refusing to run"
            )


def load_pinned_inputs(
    parity_vectors: Path | None = None,
    release_manifest: Path | None = None,
    scenarios_dir: Path | None = None,
) -> PinnedInputs:
    """Load ``parity-vectors.json`` and check it against the release manifest's hashes and
    the verified scenario files (each defaults to the imported copy, read at the call)."""
    parity_vectors = Path(parity_vectors or paths.parity_vectors())
    release_manifest = Path(release_manifest or paths.release_manifest())
    scenarios_dir = Path(scenarios_dir or paths.scenarios_dir())
    vectors = _read_json(parity_vectors)
    manifest = _read_json(release_manifest)
    source = str(parity_vectors)
    prompt = vectors["system_prompt"]
    prompt_sha = sha256_text(prompt)
    if prompt_sha != manifest["prompt_sha256"]:
        raise PinnedInputError(
            f"{source}: system prompt sha256 {prompt_sha} differs from the release manifest's "
            f"prompt_sha256 {manifest['prompt_sha256']}; refusing to run"
        )
    pinned_hashes: dict[str, str] = manifest["scenario_hashes"]
    scenarios = []
    for row in vectors["scenarios"]:
        sid = row["id"]
        if pinned_hashes.get(sid) != row["sha256"]:
            raise PinnedInputError(
                f"{source}: scenario {sid}: sha256 {row['sha256']} differs from the release "
                f"manifest's {pinned_hashes.get(sid)}; refusing to run"
            )
        required = required_gate(row["expected_action"])
        if row.get("required_commit_permission", required) != required:
            raise PinnedInputError(
                f"{source}: scenario {sid}: required_commit_permission disagrees"
            )
        scenario = PinnedScenario(
            id=sid,
            file=row.get("file", f"{sid}.json"),
            sha256=row["sha256"],
            expected_action=row["expected_action"],
            required_commit_permission=required,
            user_input=row["user_input"],
        )
        check_scenario_file(scenario, scenarios_dir, pinned_hashes[sid], source)
        scenarios.append(scenario)
    missing = sorted(set(pinned_hashes) - {s.id for s in scenarios})
    if missing:
        raise PinnedInputError(f"{source}: scenarios pinned by the manifest but absent: {missing}")
    ordered = tuple(sorted(scenarios, key=lambda s: s.id))
    return PinnedInputs(prompt, prompt_sha, ordered, source=source)


def scenario_metadata(scenario: PinnedScenario, scenarios_dir: Path | None = None) -> dict:
    """The scenario's manifest entry: id, file, hash, key and taxonomy (nulls if unavailable)."""
    path = Path(scenarios_dir or paths.scenarios_dir()) / scenario.file
    raw: dict[str, Any] = read_json(path, error=PinnedInputError) if path.exists() else {}
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
