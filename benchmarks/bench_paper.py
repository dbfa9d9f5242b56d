"""Time the build beside its floor and on a large release, side by side in one run, and
print the ratios.

Run from the project root: ``.venv/bin/python benchmarks/bench_paper.py``. It measures

- the floor: as many trivial notebooks as the paper has (pandas and seaborn imported, one
  PNG saved), run one after another, each on a new kernel shut down at once;
- ``make paper`` from a clean ``paper/`` (the full build; target: at most 0.5 x the floor);
- the no-op ``make paper`` that follows (target: under 1 s);
- the build of a generated release with ``--conditions`` conditions (224: about 120k
  trials, with its ``scenarios-detail.json``; several sizes, ``--conditions 1000 5000``,
  one release each), written by ``tests/release_writer.py`` and imported into a data folder
  of its own (the import is not timed); targets: at 1,000 conditions, at most 2 x the wall
  time of the real release's build; at any size, a peak resident memory under 6 GB;
- the build of a release generated the same way with as many conditions as the real
  release: the like-for-like base of the large one. The real release here has no
  ``scenarios-detail.json``, so its build skips the per-trial analysis of the published
  verdicts that both generated builds run; the ratio of the two generated builds is the
  cost of the conditions alone.

Every build is timed twice: cold, its inputs checked in the build
(``STEERBENCH_CHECK_INPUTS=always``), and warm, reusing the check an earlier build kept
(:mod:`analysis.paper.input_cache`: what a rebuild after a change to a notebook or to the
analysis code past the loaders does); the ratios compare cold with cold and warm with warm.

Wall and CPU seconds (children included) for each, in ``--rounds`` rounds (default 3) that
each time everything one after another, so that each ratio compares runs made side by side;
the median of each ratio over the rounds comes last (on a shared machine a single run can
be 30% off). Beside each build, its peak resident memory: the largest sum over the build's
processes alive at once, sampled every 0.2 s. ``--skip-large`` leaves out the generated releases.
"""

from __future__ import annotations

import contextlib
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from analysis import paths
from analysis.help_text import parser as help_parser
from analysis.paper.input_cache import ALWAYS_CHECK
from analysis.paper.make import default_notebooks
from analysis.release.identity import LOCK_NAME

TRIVIAL_SOURCE = """\
import matplotlib
matplotlib.use("Agg")
import pandas as pd
import seaborn as sns
frame = pd.DataFrame({"x": range(10), "y": range(10)})
axes = sns.scatterplot(data=frame, x="x", y="y")
axes.figure.savefig(OUT)
"""

#: The trivial notebooks' kernels: no warnings on the terminal, shut down at once.
TRIVIAL_KERNEL = {
    "shutdown_kernel": "immediate",
    "extra_arguments": ["--IPKernelApp.log_level=ERROR"],
}
SEED = 20260224
#: A release of :data:`RATIO_TARGET_CONDITIONS` conditions' build against the real
#: release's, at most (wall).
RATIO_TARGET = 2.0
RATIO_TARGET_CONDITIONS = 1000
#: A large release's peak resident memory, under (bytes).
RSS_TARGET = 6 * 2**30


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(
    command: list[str], env: dict | None = None, show: bool = False, cwd: Path | None = None
) -> tuple[float, float]:
    """(wall, CPU) seconds of ``command`` run from ``cwd`` (default the project root),
    children included; ``show`` prints its per-notebook lines. The peak resident memory of
    its process tree (summed over the processes alive at once, sampled every 0.2 s) is
    kept in :data:`PEAK_RSS`."""
    cpu, started = _cpu(), time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(
            command, cwd=cwd or paths.PROJECT_ROOT, env=env, stdout=out, stderr=err, text=True
        )
        peak = 0
        while process.poll() is None:
            peak = max(peak, _tree_rss(process.pid))
            time.sleep(0.2)
        PEAK_RSS[0] = peak
        out.seek(0), err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode != 0:
        sys.exit(f"error: {' '.join(command)} failed:\n{stdout}{stderr}")
    if show:
        print("".join(f"  {line}\n" for line in stdout.splitlines() if line.startswith("  ")))
    return time.perf_counter() - started, _cpu() - cpu


#: The peak resident memory (bytes) of the last :func:`timed` command's process tree.
PEAK_RSS = [0]


def _tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and its descendants now (0 once it has gone)."""
    import psutil  # a dependency of the Jupyter kernel the build runs

    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            total += process.memory_info().rss
    return total


def _gb(size: int) -> str:
    return f"{size / 2**30:.2f} GB"


def trivial_floor(count: int) -> tuple[float, float]:
    """(wall, CPU) seconds of ``count`` trivial notebooks run one after another."""
    import papermill

    with tempfile.TemporaryDirectory() as folder:
        notebook = nbformat.v4.new_notebook()
        notebook.cells = [
            nbformat.v4.new_code_cell('OUT = "out.png"', metadata={"tags": ["parameters"]}),
            nbformat.v4.new_code_cell(TRIVIAL_SOURCE),
        ]
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
        notebook.metadata["language_info"] = {"name": "python"}
        source = Path(folder) / "trivial.ipynb"
        nbformat.write(notebook, source)
        cpu, started = _cpu(), time.perf_counter()
        for n in range(count):
            papermill.execute_notebook(
                str(source),
                str(Path(folder) / f"run-{n}.ipynb"),
                parameters={"OUT": str(Path(folder) / f"out-{n}.png")},
                progress_bar=False,
                kernel_name="python3",
                **TRIVIAL_KERNEL,
            )
        return time.perf_counter() - started, _cpu() - cpu


def generated_trials(release: Path, n_conditions: int) -> list[dict]:
    """Seeded trials of ``n_conditions`` conditions (models at ``off`` and ``high``) on
    every scenario of ``release``: right with a condition- and scenario-dependent chance,
    2% with no decision."""
    sys.path.insert(0, str(paths.PROJECT_ROOT / "tests"))
    from release_writer import GATE, OTHER, TRIALS_PER_CELL, read_scenarios

    rng = random.Random(SEED)
    scenarios = read_scenarios(release)
    required = {s: GATE[v["expected_behavior"]["correct_action"]] for s, v in scenarios.items()}
    ease = {sid: rng.gauss(0, 0.15) for sid in scenarios}
    rows = []
    for c in range(n_conditions):
        model, reasoning = f"model-{c // 2:03d}", ("off", "high")[c % 2]
        skill = rng.uniform(0.55, 0.92)
        for sid in sorted(scenarios):
            p_right = min(max(skill + ease[sid], 0.02), 0.98)
            for trial in range(1, TRIALS_PER_CELL + 1):
                roll = rng.random()
                permission = (
                    None
                    if roll > 0.98
                    else required[sid]
                    if roll < p_right
                    else OTHER[required[sid]]
                )
                rows.append(
                    {
                        "scenario_id": sid,
                        "model": model,
                        "reasoning": reasoning,
                        "trial": trial,
                        "commit_permission": permission,
                        "status": "ok" if permission else "parse_failed",
                    }
                )
    return rows


def real_condition_count() -> int:
    """The number of published conditions of the real release."""
    from analysis.corpus.scenarios import load_scenarios
    from analysis.scoring.leaderboard import load_conditions

    return int(load_conditions(load_scenarios())["condition"].nunique())


def large_release(folder: Path, n_conditions: int) -> tuple[dict, Path, int]:
    """Write a generated ``n_conditions`` release into ``folder`` and import it into a data
    folder of its own (not timed): the environment that builds it, its paper folder, and
    its number of trials."""
    trials = generated_trials(paths.release_dir(), n_conditions)
    from release_writer import write_release  # on sys.path since generated_trials

    release = folder / "release"
    write_release(paths.release_dir(), release, trials)
    data = folder / "data"
    shutil.copytree(
        paths.data_dir(),
        data,
        ignore=shutil.ignore_patterns("processed", LOCK_NAME, ".import-*"),
    )
    env = {**os.environ, "STEERBENCH_DATA_DIR": str(data), "RELEASE_DIR": str(release)}
    timed([sys.executable, "-m", "analysis.paper.make", "data"], env)
    return env, folder / "paper", len(trials)


def generated_build(
    release: tuple[dict, Path, int], show: bool = False, cold: bool = False
) -> tuple[float, float]:
    """(wall, CPU) seconds of a clean build of a generated ``release``; ``show`` prints its
    per-notebook lines; ``cold`` checks its inputs in the build."""
    env, paper, _ = release
    shutil.rmtree(paper, ignore_errors=True)
    build = [sys.executable, "-m", "analysis.paper.build", "--paper-dir", str(paper)]
    return timed(build, {**env, ALWAYS_CHECK: "always"} if cold else env, show=show)


def real_build(cold: bool, show: bool = False) -> tuple[float, float]:
    """(wall, CPU) seconds of ``make paper`` from a clean ``paper/``; ``cold`` checks its
    inputs in the build."""
    shutil.rmtree(paths.PAPER_DIR, ignore_errors=True)
    env = {**os.environ, ALWAYS_CHECK: "always"} if cold else None
    return timed(["make", "paper"], env, show=show)


KINDS = ("cold", "warm")


def main(skip_large: bool = False, sizes: tuple[int, ...] = (224,), rounds: int = 3) -> None:
    count = len(default_notebooks())
    n_base = 0 if skip_large else real_condition_count()
    floor_ratios, noops = [], []
    large_ratios = {(n, kind): [] for n in sizes for kind in KINDS}
    like_ratios = {(n, kind): [] for n in sizes for kind in KINDS}
    peaks: dict[int, list[int]] = {n: [] for n in sizes}
    with tempfile.TemporaryDirectory() as folder:
        large, base = {}, None
        if not skip_large:
            for n in sizes:
                (Path(folder) / f"large-{n}").mkdir()
                large[n] = large_release(Path(folder) / f"large-{n}", n)
            (Path(folder) / "base").mkdir()
            base = large_release(Path(folder) / "base", n_base)
        for round_ in range(1, rounds + 1):
            print(f"round {round_} of {rounds}")
            floor_wall, floor_cpu = trivial_floor(count)
            print(
                f"  {count} trivial notebooks, one after another: {floor_wall:6.1f} s wall, "
                f"{floor_cpu:6.1f} s CPU"
            )
            for kind in KINDS:
                cold, show = kind == "cold", round_ == 1 and kind == "warm"
                full_wall, full_cpu = real_build(cold, show=show)
                print(
                    f"  make paper from a clean paper/ ({kind}):   {full_wall:6.1f} s wall, "
                    f"{full_cpu:6.1f} s CPU, peak RSS {_gb(PEAK_RSS[0])}"
                )
                if cold:
                    noop_wall, _ = timed(["make", "paper"])
                    floor_ratios.append(full_wall / floor_wall)
                    noops.append(noop_wall)
                    print(
                        f"  build / floor: {full_wall / floor_wall:.2f} wall, "
                        f"{full_cpu / floor_cpu:.2f} CPU\n"
                        f"  make paper again (no change):            {noop_wall:6.2f} s"
                    )
                if base is None:
                    continue
                base_wall, base_cpu = generated_build(base, show=show, cold=cold)
                print(
                    f"  build of a generated {n_base}-condition release ({base[2]:,} trials, "
                    f"{kind}): {base_wall:6.1f} s wall, {base_cpu:6.1f} s CPU, peak RSS "
                    f"{_gb(PEAK_RSS[0])}"
                )
                for n, release in large.items():
                    wall, cpu = generated_build(release, show=show, cold=cold)
                    peaks[n].append(PEAK_RSS[0])
                    large_ratios[n, kind].append(wall / full_wall)
                    like_ratios[n, kind].append(wall / base_wall)
                    print(
                        f"  build of a generated {n}-condition release ({release[2]:,} "
                        f"trials, {kind}): {wall:6.1f} s wall, {cpu:6.1f} s CPU, peak RSS "
                        f"{_gb(PEAK_RSS[0])}\n"
                        f"  {n} conditions / the real release's build ({kind}): "
                        f"{wall / full_wall:.2f} wall, {cpu / full_cpu:.2f} CPU\n"
                        f"  {n} / {n_base} generated conditions ({kind}): "
                        f"{wall / base_wall:.2f} wall, {cpu / base_cpu:.2f} CPU"
                    )
    print(f"over {rounds} round(s), median:")
    print(f"  build / floor: {statistics.median(floor_ratios):.2f} wall (target <= 0.5)")
    print(f"  no-op make paper: {statistics.median(noops):.2f} s (target < 1 s)")
    for n in large if not skip_large else ():
        for kind in KINDS:
            target = f" (target <= {RATIO_TARGET:g})" if n == RATIO_TARGET_CONDITIONS else ""
            print(
                f"  {n} conditions / the real release's build ({kind}): "
                f"{statistics.median(large_ratios[n, kind]):.2f} wall{target}\n"
                f"  {n} / {n_base} generated conditions (like for like, {kind}): "
                f"{statistics.median(like_ratios[n, kind]):.2f} wall"
            )
        print(f"  {n} conditions: peak RSS {_gb(max(peaks[n]))} (target < {_gb(RSS_TARGET)})")


if __name__ == "__main__":
    parser = help_parser("python benchmarks/bench_paper.py", __doc__)
    parser.add_argument("--skip-large", action="store_true", help="no generated release")
    parser.add_argument(
        "--conditions",
        type=int,
        nargs="+",
        default=[224],
        help="conditions of each large release, e.g. 1000 5000 (default 224)",
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds, each timing everything (default 3)"
    )
    arguments = parser.parse_args()
    main(arguments.skip_large, tuple(arguments.conditions), max(1, arguments.rounds))
