"""Time clean builds of the working tree against those of another revision, alternating, and
print the ratios.

Run from the project root: ``.venv/bin/python benchmarks/bench_compare.py REV``. It checks
``REV`` out into a temporary git worktree, then in each of ``--rounds`` rounds (default 6)
times a clean ``python -m analysis.paper.build`` of each, both on the project's imported release
(or, with ``--conditions N``, on a generated release of N conditions, as
``bench_paper.py`` writes it), in the order A B, then B A, and so on, so that neither side
always runs first. It prints each build's wall and CPU seconds (children included), the
ratio working tree / ``REV`` of each round, and the medians. With ``--tests``, each round
instead times ``make test`` in each checkout (this project's ``.venv``, ``paper/`` removed
first, so its shared build is included; the environment is used as it is, never
reinstalled); the working tree's ``paper/`` is left built.

On a shared machine a build's time moves by a quarter from one minute to the next; a change
is measured only by ratios of builds run side by side, over several rounds. Both revisions
run in this project's virtual environment: compare revisions with the same
``requirements.lock``.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_paper import large_release, timed

from analysis import paths
from analysis.help_text import parser as help_parser


def clean_build(root: Path, paper: Path, env: dict) -> tuple[float, float]:
    """(wall, CPU) seconds of a build of the checkout at ``root`` into an empty ``paper``."""
    shutil.rmtree(paper, ignore_errors=True)
    # the build's module before the package had subpackages was analysis.build
    module = "analysis.paper.build" if (root / "analysis" / "paper").is_dir() else "analysis.build"
    command = [sys.executable, "-m", module, "--paper-dir", str(paper)]
    return timed(command, env, cwd=root)


def clean_test_run(root: Path, env: dict) -> tuple[float, float]:
    """(wall, CPU) seconds of ``make test`` in the checkout at ``root``, ``paper/`` removed
    first, on this project's virtual environment."""
    shutil.rmtree(root / "paper", ignore_errors=True)
    venv = paths.PROJECT_ROOT / ".venv"
    # -o: a checkout's files are newer than the environment's install stamps; reinstalling
    # would point the project's editable install at the other checkout
    stamps = [f"-o{venv / stamp}" for stamp in (".installed", ".installed-inspect")]
    command = ["make", "--no-print-directory", *stamps, "test", f"VENV={venv}"]
    return timed(command, env, cwd=root)


def main(
    revision: str, rounds: int = 6, n_conditions: int | None = None, tests: bool = False
) -> None:
    project = paths.PROJECT_ROOT
    with tempfile.TemporaryDirectory() as folder:
        other = Path(folder) / "other"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "--quiet", str(other), revision],
            cwd=project,
            check=True,
        )
        try:
            if tests:  # each checkout imports the release into its own data/
                env = {k: v for k, v in os.environ.items() if k != "STEERBENCH_DATA_DIR"}
                env["RELEASE_DIR"] = str(paths.release_dir())
            elif n_conditions is None:
                env = {**os.environ, "STEERBENCH_DATA_DIR": str(paths.data_dir())}
            else:
                env, _, n_trials = large_release(Path(folder), n_conditions)
                print(f"a generated release of {n_conditions} conditions ({n_trials:,} trials)")
            sides = {"working tree": project, revision: other}
            seconds: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
            paper = Path(folder) / "paper"
            for round_ in range(rounds):
                order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
                for name in order:
                    if tests:
                        wall, cpu = clean_test_run(sides[name], env)
                    else:
                        wall, cpu = clean_build(sides[name], paper, env)
                    seconds[name].append((wall, cpu))
                    print(f"  round {round_ + 1}: {name:<14} {wall:6.2f} s wall {cpu:6.2f} s CPU")
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(other)], cwd=project, check=False
            )
    ours, theirs = seconds["working tree"], seconds[revision]
    ratios = [a[0] / b[0] for a, b in zip(ours, theirs, strict=True)]
    for name, values in seconds.items():
        print(
            f"{name}: median {statistics.median(v[0] for v in values):.2f} s wall, "
            f"{statistics.median(v[1] for v in values):.2f} s CPU"
        )
    print(
        f"working tree / {revision}, each round: {', '.join(f'{r:.2f}' for r in ratios)}; "
        f"median {statistics.median(ratios):.2f}"
    )


if __name__ == "__main__":
    parser = help_parser("python benchmarks/bench_compare.py", __doc__)
    parser.add_argument("revision", help="the revision to compare with (a commit, tag, branch)")
    parser.add_argument("--rounds", type=int, default=6, help="rounds, one build of each")
    parser.add_argument("--conditions", type=int, help="build a generated release this large")
    parser.add_argument("--tests", action="store_true", help="time `make test`, not builds")
    arguments = parser.parse_args()
    if arguments.tests and arguments.conditions:
        parser.error("--tests runs on the project's release: leave out --conditions")
    main(arguments.revision, max(1, arguments.rounds), arguments.conditions, arguments.tests)
