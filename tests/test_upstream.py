"""The oracle harness itself: upstream's scripts run in an assembled tree."""

from __future__ import annotations

import json

from upstream import assemble

from analysis import paths


def test_upstream_renders_the_published_parity_vectors(tmp_path):
    tree = assemble(tmp_path)
    tree.run("scripts/generate-parity-vectors.mjs")
    made = json.loads((tree.root / paths.RELEASE_PARITY_VECTORS).read_text())
    published = json.loads((paths.release_dir() / paths.RELEASE_PARITY_VECTORS).read_text())
    made.pop("generated_at", None)
    published.pop("generated_at", None)
    assert made == published
