"""Every command-line entry point answers ``--help`` with a usage text and exit status 0."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from analysis import paths

STEERBENCH_RUN = Path(sys.executable).parent / "steerbench-run"

#: Entry point -> (command, the program name its usage line starts with).
ENTRY_POINTS = {
    "steerbench-run": ([str(STEERBENCH_RUN), "--help"], "steerbench-run"),
    "steerbench-run export-tidy": (
        [str(STEERBENCH_RUN), "export-tidy", "--help"],
        "steerbench-run export-tidy",
    ),
    "python -m analysis.runner.cli": (
        [sys.executable, "-m", "analysis.runner.cli", "--help"],
        "steerbench-run",
    ),
    **{
        f"python -m analysis.{module}": (
            [sys.executable, "-m", f"analysis.{module}", "--help"],
            f"python -m analysis.{module}",
        )
        for module in ("paper.build", "paper.make", "release.importer", "exploring.export")
    },
    **{
        f"benchmarks/{script}": (
            [sys.executable, f"benchmarks/{script}", "--help"],
            f"python benchmarks/{script}",
        )
        for script in ("bench_paper.py", "bench_scoring.py", "bench_compare.py")
    },
    "benchmarks/bench_coverage.py": (
        [sys.executable, "benchmarks/bench_coverage.py", "--help"],
        "bench_coverage.py",
    ),
    "benchmarks/bench_calibration.py": (
        [sys.executable, "benchmarks/bench_calibration.py", "--help"],
        "bench_calibration.py",
    ),
}


#: Entry points that import the scientific stack (pandas at least) before reading their
#: arguments: a second or more each, so their help is checked in the slow tier.
HEAVY = {
    name
    for name in ENTRY_POINTS
    if name.startswith(("benchmarks/", "steerbench-run", "python -m analysis.runner.cli"))
    or name == "python -m analysis.exploring.export"
}


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.slow) if n in HEAVY else n for n in ENTRY_POINTS],
)
def test_help(name: str, tmp_path: Path) -> None:
    command, prog = ENTRY_POINTS[name]
    if command[0] == str(STEERBENCH_RUN) and not STEERBENCH_RUN.exists():
        pytest.skip("steerbench-run is not installed in this environment")
    done = subprocess.run(
        command, cwd=paths.PROJECT_ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {prog} ") and "-h, --help" in done.stdout
    assert done.stderr == ""
    assert not re.search(r"``|:[a-z]+:`", done.stdout), "reST markup in the help"
    assert options_without_help(done.stdout) == []


def options_without_help(text: str) -> list[str]:
    """The arguments listed in an argparse help text with no help beside or under them."""
    lines = text.split("\n")
    headings = ("positional arguments:", "options:")
    start = next(i for i, line in enumerate(lines) if line.startswith(headings))
    bare = []
    for i, line in enumerate(lines[start:], start):
        if not re.match(r"  \S", line):
            continue
        beside = re.match(r"  \S.*?\s{2,}\S", line)
        under = i + 1 < len(lines) and re.match(r"\s{4,}\S", lines[i + 1])
        if not (beside or under):
            bare.append(line.strip())
    return bare


def test_an_option_without_help_is_found():
    text = (
        "usage: x\n\noptions:\n  -h, --help  show this\n  --bare BARE\n  --long LONG\n      said\n"
    )
    assert options_without_help(text) == ["--bare BARE"]
