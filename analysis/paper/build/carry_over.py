"""Carrying over unchanged notebooks: the outputs in ``paper/`` of a notebook whose file and
shared inputs are unchanged since the last build, as its stamp ``.built`` lists them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from analysis.files.digests import file_sha256
from analysis.files.typed import within
from analysis.paper.make import PAPER_STAMP

STAMP = PAPER_STAMP


def last_stamp(paper_dir: Path) -> dict:
    """The stamp of the last build in ``paper_dir`` (empty when absent or unreadable)."""
    try:
        record = json.loads((paper_dir / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def reusable_notebooks(paper_dir: Path, shared: str, notebooks: list[Path]) -> dict[str, dict]:
    """The notebooks whose outputs in ``paper_dir`` still hold: nothing they share with the
    others changed (release, runs, package, dependencies), their own file is unchanged and
    every output the stamp lists is a file inside ``paper_dir``."""
    stamp = last_stamp(paper_dir)
    recorded = stamp.get("notebooks")
    if stamp.get("shared_digest") != shared or not isinstance(recorded, dict):
        return {}
    if set(recorded) != {nb.name for nb in notebooks}:
        return {}
    return {
        nb.name: recorded[nb.name]
        for nb in notebooks
        if recorded[nb.name].get("sha256") == file_sha256(nb)
        and all(
            within(paper_dir, name) and (paper_dir / name).is_file()
            for name in recorded[nb.name].get("outputs", [])
        )
    }


def carry_over(staging: Path, paper_dir: Path, reused: dict[str, dict]) -> None:
    """Copy the outputs of the reused notebooks from ``paper_dir`` into ``staging``."""
    for record in reused.values():
        for name in record["outputs"]:
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(paper_dir / name, target)
