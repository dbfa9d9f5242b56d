"""environment.yml installs what the Makefile's targets install: the same extras, the same
lock."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]


def extras(text: str) -> set[str]:
    """Every extra named in an editable install of the project (``-e '.[dev,docs]'``)."""
    found = re.findall(r"-e\s+'?\.\[([^\]]+)\]", text)
    return {name.strip() for group in found for name in group.split(",")}


def test_extras_are_read_from_an_install_line():
    assert extras("pip install -c requirements.lock -e '.[dev,inspect]'") == {"dev", "inspect"}
    assert extras("      - -e .[dev, docs]") == {"dev", "docs"}


def test_environment_file_installs_every_extra_the_makefile_does():
    makefile = extras((ROOT / "Makefile").read_text("utf-8"))
    environment = (ROOT / "environment.yml").read_text("utf-8")
    assert makefile, "the Makefile installs no extra: the pattern no longer fits it"
    assert extras(environment) == makefile
    assert "-c requirements.lock" in environment
