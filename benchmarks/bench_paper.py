"""Time `make paper` from a clean paper/ and the no-op rebuild that follows.

Run from the project root after `make data`: ``.venv/bin/python benchmarks/bench_paper.py``.
Targets on a 2-core machine: full build under 60 s, no-op rebuild under 2 s.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import time

from analysis import paths


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=paths.PROJECT_ROOT, check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    shutil.rmtree(paths.PAPER_DIR, ignore_errors=True)
    full = timed(["make", "paper"])
    noop = timed(["make", "paper"])
    print(f"make paper from a clean paper/: {full:6.1f} s  (target < 60 s)")
    print(f"make paper again (no change):   {noop:6.2f} s  (target < 2 s)")


if __name__ == "__main__":
    argparse.ArgumentParser(
        prog="python benchmarks/bench_paper.py", description=__doc__
    ).parse_args()
    main()
