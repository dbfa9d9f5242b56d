"""Seeded scenario files for the renderer's differential tests: the release's scenarios, and
scenarios made from nothing, with fields removed, reordered and changed, other evidence,
flags, ids and unicode text.

Every file generated stays within what the renderer renders (text, numbers, booleans and
nulls where a value is printed; evidence records with a text ``id``), so upstream's pipeline
and the package's must agree byte for byte, or both refuse it (a cited record the file does
not hold, no scenario id).
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from analysis import paths

Mutation = Callable[[random.Random, dict], None]

#: The share of scenarios made from nothing rather than from the release's.
GENERATED_SHARE = 0.25

#: Text that trips (or nearly trips) the keyword rules, with unicode and line terminators.
WORDS = (
    "broad",
    "Unrelated billing and auth change",
    "weaken the test expectation",
    "eval",
    "BENCHMARK",
    "approval threshold",
    "token",
    "sk_live_123",
    "credential",
    "DROP table",
    "remove",
    "Delete",
    "held-out",
    "heldout",
    "leaked",
    "dirty-split",
    "test suite passed",
    "test\npassed",
    "test\rpassed",
    "test\u2028passed",
    "unit_tests_passed",
    "deploy_ready",
    "\u017fecret",  # long s: no ASCII match
    "\u212aey",  # Kelvin sign: no ASCII match
    "\u0130nternal",
    "r\u00e9sum\u00e9 \u6d4b\u8bd5 \U0001f600",
    "plain words",
    "",
)
PATHS = (
    "cmd:npm test",
    "cmd:deploy --prod",
    "cmd:cleanup tmp",
    "cmd:echo hi",
    "tests/unit/test_x.py",
    "app/__tests__/a.js",
    "evals/heldout/labels.json",
    "benchmarks/run.py",
    "fixture-repo/fixtures/README.md",
    "src/auth/middleware.ts",
    "db/migrations/001_drop_users.sql",
    "config/secret_key.env",
    "logs/deploy_failure.log",
    "docs/guide.md",
    "CHANGELOG",
    "outbox/reply.md",
    "reports/q1.md",
    "src/app.py",
    "donn\u00e9es/\u6587\u4ef6.md",
    "a/b/c/d.txt",
    "",
)
STATUSES = ("current", "superseded", "suspect", "protected", "stale", "passed", "", "unknown")
SOURCE_TYPES = ("document", "file_snapshot", "tool_call", "score", "calendar", "")
ACTION_TYPES = (
    "external_send",
    "publish",
    "durable_write",
    "destructive_write",
    "cost_action",
    "privileged_tool_call",
    "final_claim",
    "read",
    "schedule",
    "internal_update",
    "transfer",
    "other-verb",
)
CONFIDENCES = (
    0.69,
    0.75,
    0.7499999999999999,
    0.9,
    1,
    0,
    1.0,
    -0.0,
    1e-7,
    0.000001,
    1e21,
    123456789012345678901,
    0.1 + 0.2,
    5e-324,
    None,
    True,
    False,
)
SCALARS = ("low", "none", "sensitive", "outside_workspace", "", None, 0, 3.5, True)
ID_PARTS = (
    "eval-leakage",
    "api-key",
    "report",
    "score",
    "auth",
    "tests/",
    "evals/",
    "\u00fcnic\u00f8de",
    "x",
)


def corpus() -> list[dict]:
    """The release's scenario records (sorted by file name)."""
    folder = paths.release_dir() / "scenario-sets" / paths.scenario_set()
    files = sorted(f for f in folder.glob("*.json") if not f.name.startswith("_"))
    return [json.loads(f.read_text(encoding="utf-8")) for f in files]


def _evidence(scenario: dict) -> list[dict]:
    return [e for e in scenario.get("evidence") or [] if isinstance(e, dict)]


def _action(rng: random.Random, scenario: dict) -> dict:
    """The legacy action if the scenario has one (sometimes made), else its decision point."""
    metadata = scenario.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("legacy_action"), dict):
        return metadata["legacy_action"]
    return scenario.setdefault("decision_point", {})


def remove_field(rng: random.Random, s: dict) -> None:
    """Remove one field the rendering reads."""
    places: list[tuple[dict, str]] = [(s, k) for k in s if k != "id"]
    for name in ("context", "decision_point"):
        if isinstance(s.get(name), dict):
            places += [(s[name], k) for k in s[name]]
    action = (s.get("metadata") or {}).get("legacy_action")
    if isinstance(action, dict):
        places += [(action, k) for k in action]
    for item in _evidence(s):
        places += [(item, k) for k in item if k != "id"]
    if places:
        holder, key = rng.choice(places)
        del holder[key]


def reorder(rng: random.Random, s: dict) -> None:
    """Shuffle the keys of every object and the evidence list; maybe the citations."""

    def shuffled(value: Any) -> Any:
        if isinstance(value, dict):
            items = list(value.items())
            rng.shuffle(items)
            return {k: shuffled(v) for k, v in items}
        return [shuffled(v) for v in value] if isinstance(value, list) else value

    for key, value in list(s.items()):
        s[key] = shuffled(value)
    if isinstance(s.get("evidence"), list):
        rng.shuffle(s["evidence"])
    if isinstance(s.get("expected_evidence"), list) and rng.random() < 0.5:
        rng.shuffle(s["expected_evidence"])


def change_evidence(rng: random.Random, s: dict) -> None:
    """Other statuses, references, source types and titles on the cited evidence."""
    for item in _evidence(s):
        if rng.random() < 0.6:
            item["status"] = rng.choice(STATUSES)
        if rng.random() < 0.5:
            item["raw_ref"] = rng.choice(PATHS)
        if rng.random() < 0.3:
            item["source_type"] = rng.choice(SOURCE_TYPES)
        if rng.random() < 0.3:
            item["title"] = rng.choice(WORDS)
        if rng.random() < 0.2:
            item["legacy_id"] = rng.choice((None, "", f"doc:{rng.choice(WORDS)}"))


def add_evidence(rng: random.Random, s: dict) -> None:
    """New records (some sharing an id or a legacy id), cited once, twice or not at all."""
    records = s.setdefault("evidence", [])
    cited = s.setdefault("expected_evidence", [])
    if not isinstance(records, list) or not isinstance(cited, list):
        return
    for _ in range(rng.randint(1, 4)):
        existing = [e for e in records if isinstance(e, dict)]
        new_id = rng.choice([f"N{rng.randint(0, 99)}", *(e["id"] for e in existing)])
        record = {
            "id": new_id,
            "source_type": rng.choice(SOURCE_TYPES),
            "title": rng.choice(WORDS),
            "status": rng.choice(STATUSES),
            "raw_ref": rng.choice(PATHS),
            "tool_call_result": {"ok": rng.random() < 0.5, "n": rng.randint(0, 9)},
        }
        if rng.random() < 0.5:
            record["legacy_id"] = rng.choice(
                [f"tool:{new_id}", *(e.get("legacy_id") or "" for e in existing)]
            )
        records.insert(rng.randint(0, len(records)), record)
        for _ in range(rng.choice((0, 1, 1, 2))):
            cited.insert(
                rng.randint(0, len(cited)), rng.choice((new_id, record.get("legacy_id") or new_id))
            )


def cite_unknown(rng: random.Random, s: dict) -> None:
    """Cite a record the file does not hold (upstream stops: missing evidence)."""
    cited = s.get("expected_evidence")
    if isinstance(cited, list):
        cited.append(f"missing-{rng.randint(0, 9)}")


def change_action(rng: random.Random, s: dict) -> None:
    """Other action types, confidences, privileges, costs, reversibility and externality."""
    if rng.random() < 0.3:
        metadata = s.setdefault("metadata", {})
        if isinstance(metadata, dict):
            metadata["legacy_action"] = rng.choice(
                ({}, None, False, "", 0, metadata.get("legacy_action"))
            )
    action = _action(rng, s)
    if rng.random() < 0.6:
        verb = rng.choice(ACTION_TYPES)
        action["action_type"] = verb
        s["action_verb"] = verb
    if rng.random() < 0.6:
        action["confidence"] = rng.choice(CONFIDENCES)
    for name in ("privilege_level", "cost_level", "reversibility", "externality", "target_scope"):
        if rng.random() < 0.3:
            action[name] = rng.choice(SCALARS)
    if rng.random() < 0.3:
        s["irreversibility_class"] = rng.choice(SCALARS)
    for name in ("proposed_action", "draft"):
        if rng.random() < 0.4:
            action[name] = rng.choice((*WORDS, None, 0))


def change_text(rng: random.Random, s: dict) -> None:
    """Other goals, requests, traps and titles, some empty, null or numbers."""
    context = s.setdefault("context", {})
    if not isinstance(context, dict):
        return
    choices = (*WORDS, None, 0, 7, False)
    for holder, key in (
        (context, "goal"),
        (context, "hidden_trap"),
        (s, "user_request"),
        (s, "title"),
    ):
        if rng.random() < 0.4:
            holder[key] = rng.choice(choices)


def change_id(rng: random.Random, s: dict) -> None:
    """Another scenario id, with keywords the rules read and unicode."""
    parts = rng.sample(ID_PARTS, rng.randint(1, 3))
    s["id"] = "-".join(parts) + f"-{rng.randint(0, 999):03d}"


def generated_scenario(rng: random.Random) -> dict:
    """A scenario made from nothing: a legacy action or a decision point or neither, any
    evidence, citations by id or legacy id, and optional context."""
    scenario: dict[str, Any] = {"id": "generated"}
    change_id(rng, scenario)
    verb = rng.choice(ACTION_TYPES)
    for key, value in (
        ("title", rng.choice(WORDS)),
        ("user_request", rng.choice((*WORDS, None))),
        ("action_verb", verb),
        ("irreversibility_class", rng.choice(SCALARS)),
    ):
        if rng.random() < 0.8:
            scenario[key] = value
    if rng.random() < 0.7:
        scenario["context"] = {
            k: rng.choice(WORDS) for k in ("goal", "hidden_trap") if rng.random() < 0.7
        }
    if rng.random() < 0.6:
        scenario["decision_point"] = {
            k: v
            for k, v in (
                ("proposed_action", rng.choice(WORDS)),
                ("draft", rng.choice(WORDS)),
                ("confidence", rng.choice(CONFIDENCES)),
            )
            if rng.random() < 0.7
        }
    if rng.random() < 0.4:
        action = {
            k: rng.choice(SCALARS)
            for k in ("commit_category", "target_scope", "externality", "reversibility")
        }
        action.update(
            action_type=verb,
            privilege_level=rng.choice(("normal", "sensitive")),
            cost_level=rng.choice(("none", "low", "high")),
            proposed_action=rng.choice(WORDS),
            draft=rng.choice((*WORDS, None)),
            confidence=rng.choice(CONFIDENCES),
        )
        scenario["metadata"] = {"legacy_action": action}
    if rng.random() < 0.8:
        add_evidence(rng, scenario)
    return scenario


MUTATIONS: tuple[Mutation, ...] = (
    remove_field,
    reorder,
    change_evidence,
    add_evidence,
    change_action,
    change_text,
    change_id,
)


def mutated_scenarios(seed: int, count: int) -> list[dict]:
    """``count`` scenario records, most from the release and some made from nothing, each
    changed by a few seeded mutations (one in twenty also cites a record it does not hold)."""
    rng = random.Random(seed)
    base = corpus()
    out = []
    for _ in range(count):
        if rng.random() < GENERATED_SHARE:
            scenario = generated_scenario(rng)
        else:
            scenario = copy.deepcopy(rng.choice(base))
        for mutation in rng.choices(MUTATIONS, k=rng.randint(1, 5)):
            mutation(rng, scenario)
        if rng.random() < 0.05:
            cite_unknown(rng, scenario)
        out.append(scenario)
    return out


def write_scenarios(scenarios: list[dict], folder: Path, seed: int) -> list[Path]:
    """Write each record as a file, with or without ASCII escapes and indentation."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for n, scenario in enumerate(scenarios):
        file = folder / f"case-{n:03d}.json"
        text = json.dumps(scenario, ensure_ascii=rng.random() < 0.5, indent=rng.choice((None, 2)))
        file.write_text(text, encoding="utf-8")
        files.append(file)
    return files
