"""Pinned model inputs: the system prompt and each scenario's user message, hash-checked.

The release manifest pins two things: the system prompt's sha256 and each scenario file's
sha256. The runner refuses to start unless the system prompt bytes it sends hash to the
pinned value and every scenario file hashes to its pinned value. Each user message is
rendered from its verified scenario file (:mod:`analysis.corpus.render`), as upstream's
runner renders it, so a scenario set needs no parity file. The system prompt is the run
root's ``PROMPT.txt``, the file upstream's runner reads (the release's sample run carries
it), else the parity file's ``system_prompt``. Where the release has a parity file
(``parity-vectors.json``), it is checked, never trusted: its hashes, expected actions and
user messages must be those of the scenario files, byte for byte. The runner records the
sha256 of every user message it sends (``user_inputs_sha256`` in ``RUN_PLAN.json``, part of
a run's identity).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis import paths
from analysis.corpus.render import RenderError, first_difference, render_scenario
from analysis.corpus.vocabulary import BASELINE_DOMAINS, required_gate
from analysis.files.reading import read_json, read_text

NO_FLAGS = frozenset({"", "none"})

#: The system prompt's file in a run root (upstream's runner sends its bytes).
PROMPT_FILE = "PROMPT.txt"


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
    source: str = "the scenario files"

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


def read_scenario(sid: str, scenarios_dir: Path, pinned_sha256: str) -> PinnedScenario:
    """One scenario, its file checked against the pinned hash and its message rendered."""
    path = Path(scenarios_dir) / f"{sid}.json"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise PinnedInputError(f"{path}: scenario file not found; run `make data`") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != pinned_sha256:
        raise PinnedInputError(
            f"{path}: scenario {sid}: sha256 {digest} differs from the release manifest's "
            f"{pinned_sha256}; refusing to run"
        )
    try:
        record = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise PinnedInputError(f"{path}: scenario {sid}: not UTF-8 JSON: {exc}") from None
    if not isinstance(record, dict) or record.get("id") != sid:
        raise PinnedInputError(f"{path}: field id: does not name scenario {sid!r}")
    verb = (record.get("expected_behavior") or {}).get("correct_action")
    try:
        required = required_gate(verb)
        rendered = render_scenario(record, path)
    except RenderError as exc:
        raise PinnedInputError(str(exc)) from None
    except ValueError as exc:
        raise PinnedInputError(f"{path}: field expected_behavior.correct_action: {exc}") from None
    return PinnedScenario(sid, path.name, digest, verb, required, rendered.user_input)


def read_prompt(
    prompt_file: Path | None, parity: dict | None, parity_path: Path, pinned_sha256: str
) -> str:
    """The system prompt: ``prompt_file`` (the run root's ``PROMPT.txt``) when it exists,
    else the parity file's; it must hash to the pinned sha256."""
    if prompt_file is not None and Path(prompt_file).is_file():
        prompt, source = read_text(prompt_file, error=PinnedInputError), str(prompt_file)
    elif parity is not None and isinstance(parity.get("system_prompt"), str):
        prompt, source = parity["system_prompt"], str(parity_path)
    else:
        raise PinnedInputError(
            f"no system prompt: neither {prompt_file} nor a parity file's system_prompt "
            "(give the release's PROMPT.txt)"
        )
    digest = sha256_text(prompt)
    if digest != pinned_sha256:
        raise PinnedInputError(
            f"{source}: system prompt sha256 {digest} differs from the release manifest's "
            f"prompt_sha256 {pinned_sha256}; refusing to run"
        )
    return prompt


def check_parity_vectors(
    path: Path, parity: dict, scenarios: tuple[PinnedScenario, ...], prompt: str
) -> None:
    """Refuse a parity file that disagrees with the scenario files: another hash, expected
    action or gate, a scenario missing or extra, a system prompt other than the pinned one,
    or a user message other than the rendered one (naming the first differing line)."""
    by_id = {s.id: s for s in scenarios}
    rows = parity.get("scenarios")
    if not isinstance(rows, list):
        raise PinnedInputError(f"{path}: field scenarios: missing or not a list")
    stated = parity.get("system_prompt")
    if stated is not None and stated != prompt:
        raise PinnedInputError(
            f"{path}: system prompt sha256 {sha256_text(str(stated))} differs from the release "
            f"manifest's prompt_sha256 {sha256_text(prompt)}; refusing to run"
        )
    seen = set()
    for i, row in enumerate(rows):
        sid = _typed(_typed(rows, i, dict, path, f"scenarios[{i}]"), "id", str, path,
                     f"scenarios[{i}].id")  # fmt: skip
        if sid in seen:
            raise PinnedInputError(f"{path}: field scenarios[{i}].id: {sid!r} is listed twice")
        scenario = by_id.get(sid)
        if scenario is None:
            raise PinnedInputError(f"{path}: scenario {sid}: not pinned by the release manifest")
        seen.add(sid)
        for name, value in (
            ("sha256", scenario.sha256),
            ("expected_action", scenario.expected_action),
            ("required_commit_permission", scenario.required_commit_permission),
        ):
            if row.get(name, value) != value:
                raise PinnedInputError(
                    f"{path}: scenario {sid}: field {name}: {row.get(name)!r} differs from the "
                    f"release manifest's and scenario file's {value!r}; refusing to run"
                )
        text = row.get("user_input")
        if text != scenario.user_input:
            where = (
                first_difference(text, scenario.user_input) if isinstance(text, str) else "not text"
            )
            raise PinnedInputError(
                f"{path}: scenario {sid}: field user_input: differs from the message rendered "
                f"from {scenario.file}: {where}; refusing to run"
            )
    missing = sorted(set(by_id) - seen)
    if missing:
        raise PinnedInputError(f"{path}: scenarios pinned by the manifest but absent: {missing}")


def _typed(container: Any, key: str | int, kind: type, file: Path, path: str) -> Any:
    """``container[key]``, refused (naming the file and the field) when it is missing or not
    of ``kind``."""
    try:
        value = container[key]
    except (KeyError, IndexError, TypeError):
        raise PinnedInputError(f"{file}: field {path}: missing") from None
    if not isinstance(value, kind) or isinstance(value, bool) is not (kind is bool):
        names = {str: "a string", dict: "an object", list: "a list"}
        raise PinnedInputError(
            f"{file}: field {path}: expected {names.get(kind, kind.__name__)}, "
            f"got {type(value).__name__}"
        )
    return value


def load_pinned_inputs(
    parity_vectors: Path | None = None,
    release_manifest: Path | None = None,
    scenarios_dir: Path | None = None,
    prompt_file: Path | None = None,
) -> PinnedInputs:
    """Render every scenario the release manifest pins from its verified file, read the
    pinned system prompt, and check the parity file against them where there is one. Each
    location defaults to the imported copy, read at the call: ``parity_vectors`` to
    ``parity-vectors.json`` beside the scenario files (none is fine), ``prompt_file`` to the
    sample run's ``PROMPT.txt``; a ``parity_vectors`` named but missing is refused."""
    release_manifest = Path(release_manifest or paths.release_manifest())
    scenarios_dir = Path(scenarios_dir or paths.scenarios_dir())
    prompt_file = Path(prompt_file or paths.sample_run_dir() / PROMPT_FILE)
    parity_path = Path(parity_vectors or scenarios_dir / paths.parity_vectors().name)
    parity = None
    if parity_vectors is not None or parity_path.is_file():
        parity = _read_json(parity_path)
        if not isinstance(parity, dict):
            raise PinnedInputError(f"{parity_path}: not a JSON object")
    manifest = _read_json(release_manifest)
    pinned_hashes = _typed(manifest, "scenario_hashes", dict, release_manifest, "scenario_hashes")
    pinned_prompt = _typed(manifest, "prompt_sha256", str, release_manifest, "prompt_sha256")
    for sid in pinned_hashes:
        _typed(pinned_hashes, sid, str, release_manifest, f"scenario_hashes.{sid}")
    prompt = read_prompt(prompt_file, parity, parity_path, pinned_prompt)
    scenarios = tuple(
        read_scenario(sid, scenarios_dir, pinned_hashes[sid]) for sid in sorted(pinned_hashes)
    )
    if parity is not None:
        check_parity_vectors(parity_path, parity, scenarios, prompt)
    return PinnedInputs(prompt, sha256_text(prompt), scenarios, source=str(scenarios_dir))


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
        "domain": taxonomy.get("domain")
        if taxonomy.get("domain") is not None
        else BASELINE_DOMAINS.get(raw.get("domain")),
        "source_provenance": taxonomy.get("source_provenance"),
        "irreversibility_class": raw.get("irreversibility_class"),
        "action_verb": raw.get("action_verb"),
        "tags": raw.get("tags", []),
        "license": raw.get("license"),
        "version": raw.get("version"),
    }
