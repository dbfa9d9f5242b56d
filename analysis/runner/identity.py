"""What identifies a run: the hashed variant config, the run identity and the derived run id.

A run is identified by the release, scenario set, prompt hash, user-messages hash, trials
per cell and the variant's config hash (model, temperature, max tokens, reasoning). Without
``--run-id`` the run id is derived from the identity (``<variant>-<12 hex>``), so shards of
one run share it and load together.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from analysis import paths
from analysis.corpus.inputs import PinnedInputs


def canonical_json(value: Any) -> str:
    """Sorted-key, compact, UTF-8 JSON: the form that is hashed."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def config_hash(config: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a variant config without its ``config_hash``."""
    body = {k: v for k, v in config.items() if k != "config_hash"}
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def run_identity(
    inputs: PinnedInputs, variant_key: str, config: dict[str, Any], trials: int
) -> dict[str, Any]:
    """The fields that make two invocations the same run (and shards of it)."""
    return {
        "release": paths.release(),
        "scenario_set": paths.scenario_set(),
        "prompt_sha256": inputs.prompt_sha256,
        "user_inputs_sha256": inputs.user_inputs_sha256,
        "n_trials_per_cell": trials,
        "variant_key": variant_key,
        "variant_config_hash": config["config_hash"],
    }


def derived_run_id(identity: dict[str, Any]) -> str:
    """``<variant>-<first 12 hex of the identity's sha256>``: equal for every shard of a run."""
    digest = hashlib.sha256(canonical_json(identity).encode("utf-8")).hexdigest()
    return f"{identity['variant_key']}-{digest[:12]}"
