"""Seeded releases made by upstream's own pipeline, for the differential tests.

A seed chooses conditions (odd model names, every kind of reasoning setting, ``on (provider
default)`` among them), trials per cell (3, 4, 5 or 10), a scenario subset or the whole corpus,
and one scripted reply per trial: decisions, decisions upstream infers from the policy action,
replies it parses but that name no gate, truncated replies (parsed, recovered or cut),
unparseable and empty replies, and provider content-filter refusals; cells of ties, of no
decision, filtered on every trial or on some. Nothing here scores or prints anything:

- upstream's runner (``src/canonical-runner.mjs``: ``writeRunPlan``, ``initRunState``,
  ``runVariant``, driven by ``upstream_node/drive_runs.mjs``) writes the run root, its cells and
  trials, its ``fetch`` answered in-process by ``upstream_node/fake_fetch.mjs``;
- ``validate-run`` and ``aggregate-canonical`` accept the run root;
- ``build-scenarios-detail`` writes ``scenarios-detail.json``;
- ``verify-published-numbers`` (a copy with this run root as its publication root) prints the
  leaderboard strings a row must carry, read from its mismatch report; after
  ``update-site-leaderboard-stats`` fills in the mean-trial and interval strings, the same
  gate must pass;
- ``emit-paper-artifacts`` writes ``numbers.json``, ``patterns.tex``, ``directional.dat`` and
  ``anchor-mirror.dat`` from the two files.

:func:`generate` makes all of that for one seed in an assembled tree; :func:`write_release`
lays it out as a release folder (a copy of a release whose results are replaced) that the
package imports and builds.
"""

from __future__ import annotations

import json
import random
import re
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import release_copies
import release_writer
from upstream import UpstreamTree

HARNESS = Path(__file__).parent / "upstream_node"
#: Where the harness sits inside a tree (beside ``src/``, so its imports resolve).
HARNESS_IN_TREE = "test-harness"
RUNS = Path("runs") / "canonical-multi-trial"
SCENARIO_SET = "steerbench-work-2026-05"

MODELS = (
    "acme-1.5",
    "zeta_x",
    "Ω-mini",
    "m2+b",
    "nova pro",
    "gpt-oss-20b",
    "kimi-k2.6",
    "q.7-b",
)
REASONING = ("off", "high", "low", "minimal", "medium", "none", "on", "on (provider default)")
VENDORS = ("openai", "anthropic", "google", "openweight")

DECIDED = (
    "allowed",
    "blocked",
    "inferred_allowed",
    "inferred_blocked",
    "prose_allowed",
    "truncated_allowed",
    "truncated_blocked",
    "truncated_recovered",
)
UNDECIDED = ("ungated", "unparseable", "empty", "truncated_cut")
ALLOWS = {
    "allowed",
    "inferred_allowed",
    "prose_allowed",
    "truncated_allowed",
    "truncated_recovered",
}

#: The leaderboard fields the fabrication gate prints from a run root's summary.
GATE_FIELDS = ("modal_accuracy", "pass5", "under_refusal", "over_refusal", "weighted_miss")
_MISMATCH = re.compile(
    r"^\s+x (?P<key>.+) (?P<field>" + "|".join(GATE_FIELDS) + r'): published ".*" != disk '
    r'"(?P<value>.*)" \('
)


@dataclass(frozen=True)
class Condition:
    """One planned variant: its key in the run root and the leaderboard's model/reasoning."""

    key: str
    vendor: str
    model: str
    reasoning: str

    @property
    def label(self) -> str:
        """The leaderboard's ``model (reasoning)``."""
        return f"{self.model} ({self.reasoning})"

    @property
    def detail_label(self) -> str:
        """How upstream's detail builder and emitter name it (a setting "on..." is "on")."""
        return f"{self.model} ({'on' if self.reasoning.startswith('on') else self.reasoning})"


@dataclass(frozen=True)
class Generated:
    """One seed's release as upstream's pipeline made it."""

    seed: int
    release_name: str
    trials_per_cell: int
    scenario_ids: tuple[str, ...]
    conditions: tuple[Condition, ...]
    results: Path  # leaderboard.json, scenarios-detail.json
    artifacts: Path  # emit-paper-artifacts' output
    run_root: Path

    @property
    def leaderboard(self) -> Path:
        return self.results / "leaderboard.json"

    @property
    def detail(self) -> Path:
        return self.results / "scenarios-detail.json"


def choose_conditions(rng: random.Random) -> tuple[Condition, ...]:
    """Two to five conditions; one model may have several settings, never two written "on"."""
    conditions: list[Condition] = []
    taken: set[tuple[str, str]] = set()
    for index in range(rng.randint(2, 5)):
        for _ in range(50):
            model, reasoning = rng.choice(MODELS), rng.choice(REASONING)
            written = (model, "on" if reasoning.startswith("on") else reasoning)
            if written not in taken:
                break
        else:  # pragma: no cover - 8 x 7 settings leave room
            continue
        taken.add(written)
        conditions.append(
            Condition(f"v{index}-{rng.randrange(10**6)}", rng.choice(VENDORS), model, reasoning)
        )
    return tuple(conditions)


def _cell(rng: random.Random, n: int, lean: float) -> list[str]:
    """One cell's reply kinds: mostly decisions leaning ``lean`` towards allowed, sometimes a
    tie, no decision, filtered on every trial or on some."""
    roll = rng.random()
    if roll < 0.1 and n >= 2:  # a tie between decided trials, the rest undecided
        half = rng.randint(1, n // 2)
        kinds = [rng.choice(sorted(ALLOWS)) for _ in range(half)]
        kinds += [rng.choice([k for k in DECIDED if k not in ALLOWS]) for _ in range(half)]
        kinds += [rng.choice((*UNDECIDED, "filtered")) for _ in range(n - 2 * half)]
        rng.shuffle(kinds)
        return kinds
    if roll < 0.17:  # no decision at all (some trials may be filtered, not all)
        kinds = [rng.choice(UNDECIDED) for _ in range(n)]
        for i in range(n - 1):
            if rng.random() < 0.2:
                kinds[i] = "filtered"
        return kinds
    if roll < 0.21:
        return ["filtered"] * n
    partly = roll < 0.3
    kinds = []
    for _ in range(n):
        if partly and rng.random() < 0.4:
            kinds.append("filtered")
        elif rng.random() < 0.08:
            kinds.append(rng.choice(UNDECIDED))
        else:
            allowed = rng.random() < lean
            kinds.append(rng.choice([k for k in DECIDED if (k in ALLOWS) == allowed]))
    return kinds


def choose_replies(
    rng: random.Random, conditions: Sequence[Condition], scenario_ids: Sequence[str], n: int
) -> dict[str, dict[str, list[str]]]:
    """Every trial's reply kind, by variant key and scenario; each condition keeps at least
    one cell that is not filtered on every trial (upstream's leaderboard needs one)."""
    replies = {}
    for condition in conditions:
        lean = rng.choice((0.1, 0.5, 0.9, rng.random()))
        cells = {sid: _cell(rng, n, lean) for sid in scenario_ids}
        if all(kinds == ["filtered"] * n for kinds in cells.values()):
            cells[scenario_ids[0]] = ["allowed"] * n
        replies[condition.key] = cells
    return replies


def choose_scenarios(rng: random.Random, all_ids: Sequence[str], keep: Iterable[str]) -> list[str]:
    """The whole corpus, or a random subset holding ``keep``."""
    if rng.random() < 0.35:
        return list(all_ids)
    keep = set(keep)
    size = rng.randint(max(len(keep), 8), max(len(keep), 8, len(all_ids) // 2))
    others = [sid for sid in all_ids if sid not in keep]
    return sorted(keep | set(rng.sample(others, size - len(keep))))


def _gate_strings(tree: UpstreamTree, script: str) -> dict[tuple[str, str], dict[str, str]]:
    """The strings upstream's fabrication gate says each row must carry (its mismatch report
    on rows that carry none)."""
    done = tree.run(script, check=False)
    strings: dict[tuple[str, str], dict[str, str]] = {}
    for line in done.stdout.splitlines():
        found = _MISMATCH.match(line)
        if found:
            model, _, reasoning = found["key"].rpartition("|")
            strings.setdefault((model, reasoning), {})[found["field"]] = found["value"]
    return strings


def _verify_script(tree: UpstreamTree, run_id: str) -> str:
    """A copy of ``verify-published-numbers.mjs`` whose publication roots are ``run_id``."""
    source = (tree.root / "scripts" / "verify-published-numbers.mjs").read_text()
    start = source.index("const PUBLISHED_ROOTS = [")
    end = source.index("];", start) + 2
    script = f"scripts/verify-published-numbers-{run_id}.mjs"
    patched = source[:start] + f"const PUBLISHED_ROOTS = [{json.dumps(run_id)}];" + source[end:]
    (tree.root / script).write_text(patched)
    return script


def corpus_ids(tree: UpstreamTree) -> list[str]:
    """The scenario ids of the tree's corpus (file names, as upstream's manifest lists them)."""
    folder = tree.root / "scenario-sets" / SCENARIO_SET
    return sorted(p.stem for p in folder.glob("*.json") if not p.name.startswith("_"))


def generate(
    seed: int,
    tree: UpstreamTree,
    workdir: Path,
    keep: Iterable[str] = (),
    *,
    whole_corpus: bool = False,
    trials_per_cell: int | None = None,
    release_name: str | None = None,
) -> Generated:
    """Seed ``seed``'s runs through upstream's pipeline in ``tree``; outputs under
    ``workdir``. A scenario subset always holds ``keep`` (the emitter needs an anchor and a
    mirror scenario); ``whole_corpus``, ``trials_per_cell`` and ``release_name`` fix what the
    seed would otherwise choose."""
    rng = random.Random(seed)
    workdir.mkdir(parents=True, exist_ok=True)
    harness = tree.root / HARNESS_IN_TREE
    if not harness.is_dir():
        shutil.copytree(HARNESS, harness)
    conditions = choose_conditions(rng)
    n = rng.choice((3, 4, 5, 5, 10))
    scenario_ids = choose_scenarios(rng, corpus_ids(tree), keep)
    run_id = f"tm-seed-{seed}"
    name = rng.choice(("v2026-05", f"gen-{seed}", f"r{seed}.b"))
    n = trials_per_cell or n
    scenario_ids = corpus_ids(tree) if whole_corpus else scenario_ids
    release_name = release_name or name
    plan = {
        "run_root": str(RUNS / run_id),
        "run_id": run_id,
        "scenario_set": SCENARIO_SET,
        "scenario_set_dir": f"scenario-sets/{SCENARIO_SET}",
        "scenario_filter": scenario_ids,
        "n_trials_per_cell": n,
        "variants": {
            c.key: {
                "vendor": c.vendor,
                "label": c.model,
                "model": c.model,
                "reasoning_label": c.reasoning,
                "max_output_tokens": 800,
            }
            for c in conditions
        },
    }
    replies = choose_replies(rng, conditions, scenario_ids, n)
    (workdir / "plan.json").write_text(json.dumps(plan, indent=2))
    (workdir / "replies.json").write_text(json.dumps(replies))
    run_root = tree.root / RUNS / run_id
    if run_root.exists():
        shutil.rmtree(run_root)
    tree.run(
        f"{HARNESS_IN_TREE}/drive_runs.mjs",
        workdir / "plan.json",
        preload=f"./{HARNESS_IN_TREE}/fake_fetch.mjs",
        env={"STEERBENCH_REPLIES": str(workdir / "replies.json")},
    )
    tree.run("scripts/validate-run.mjs", "--run", RUNS / run_id, "--quiet")
    tree.run("scripts/aggregate-canonical.mjs", "--run", RUNS / run_id)
    site = tree.site_data
    tree.run(
        "scripts/build-scenarios-detail.mjs",
        site / "scenarios-detail.json",
        *(f"{RUNS / run_id}::{c.key}:{c.detail_label}" for c in conditions),
    )
    rows = [
        {"kind": "model_subset", "model": c.model, "reasoning": c.reasoning, "archived": False}
        for c in conditions
    ]
    (site / "leaderboard.json").write_text(json.dumps({"rows": rows}, indent=2) + "\n")
    verify = _verify_script(tree, run_id)
    strings = _gate_strings(tree, verify)
    for row in rows:
        found = strings.get((row["model"], row["reasoning"]), {})
        missing = sorted(set(GATE_FIELDS) - set(found))
        assert not missing, f"seed {seed}: the gate printed no {missing} for {row}"
        row.update({field: found[field] for field in GATE_FIELDS})
    (site / "leaderboard.json").write_text(json.dumps({"rows": rows}, indent=2) + "\n")
    tree.run("scripts/update-site-leaderboard-stats.mjs")
    tree.run(verify)  # the gate passes on the completed leaderboard
    results = tree.root / "results" / release_name
    results.mkdir(parents=True, exist_ok=True)
    for name in ("leaderboard.json", "scenarios-detail.json"):
        shutil.copyfile(site / name, results / name)
    manifest = {  # the release's own record of what it holds (no count, no rule)
        "release": release_name,
        "scenario_set": SCENARIO_SET,
        "scenario_count": len(scenario_ids),
        "n_trials_per_cell": n,
        "published_rows": [c.label for c in conditions],
        "row_count": len(conditions),
    }
    (results / "release-manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    artifacts = workdir / "artifacts"
    tree.run("scripts/emit-paper-artifacts.mjs", "--out", artifacts, "--release", release_name)
    kept = workdir / "results"
    if kept.exists():
        shutil.rmtree(kept)
    shutil.copytree(results, kept)
    return Generated(
        seed=seed,
        release_name=release_name,
        trials_per_cell=n,
        scenario_ids=tuple(scenario_ids),
        conditions=conditions,
        results=kept,
        artifacts=artifacts,
        run_root=run_root,
    )


def write_release(generated: Generated, source: Path, target: Path) -> Path:
    """A release folder at ``target``: a writable copy of the release at ``source`` (cut to the
    generated scenarios when they are a subset), its results replaced by upstream's
    ``leaderboard.json`` and ``scenarios-detail.json`` and re-pinned."""
    ids = set(generated.scenario_ids)
    if ids != set(release_writer.read_scenarios(source)):
        release_writer.subset_release(source, target, ids)
        release_copies.repin(target)
    else:
        release_copies.copy_release(target)
    results = release_copies.results(target)
    for name in ("leaderboard.json", "scenarios-detail.json"):
        shutil.copyfile(generated.results / name, results / name)
    manifest_path = results / "release-manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["published_rows"] = [c.label for c in generated.conditions]
    manifest["row_count"] = len(generated.conditions)
    manifest["n_trials_per_cell"] = generated.trials_per_cell
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    listing = results / "checksums.txt"
    lines = listing.read_text().splitlines()
    if not any(line.split(maxsplit=1)[1] == "scenarios-detail.json" for line in lines):
        lines.append(f"{'0' * 64}  scenarios-detail.json")
        listing.write_text("\n".join(lines) + "\n")
    release_copies.repin(target)
    return target
