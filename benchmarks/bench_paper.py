"""Time `make paper` beside its floor, side by side in one run, and print the ratios.

Run from the project root: ``.venv/bin/python benchmarks/bench_paper.py``. It measures

- ``make paper`` from a clean ``paper/`` (the full build);
- the no-op ``make paper`` that follows (target: under 1 s);
- the floor: as many trivial notebooks as the paper has (pandas and seaborn imported, one
  PNG saved) executed one after another with the build's own kernel settings;

and prints build / floor (target: at most 0.5), wall and CPU. ``--skip-build`` times only
the floor and the no-op (for a ``paper/`` that is already current).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import nbformat

from analysis import paths
from analysis.identity import default_notebooks

TRIVIAL_SOURCE = """\
import matplotlib
matplotlib.use("Agg")
import pandas as pd
import seaborn as sns
frame = pd.DataFrame({"x": range(10), "y": range(10)})
axes = sns.scatterplot(data=frame, x="x", y="y")
axes.figure.savefig(OUT)
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed_make() -> tuple[float, float]:
    """(wall, CPU) seconds of one ``make paper``, children included."""
    cpu, started = _children_cpu(), time.perf_counter()
    subprocess.run(["make", "paper"], cwd=paths.PROJECT_ROOT, check=True, capture_output=True)
    return time.perf_counter() - started, _children_cpu() - cpu


def trivial_floor(count: int) -> tuple[float, float]:
    """(wall, CPU) seconds of ``count`` trivial notebooks run one after another."""
    import papermill

    from analysis.build import KERNEL_OPTIONS

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
        cpu = _children_cpu() + _self_cpu()
        started = time.perf_counter()
        for n in range(count):
            papermill.execute_notebook(
                str(source),
                str(Path(folder) / f"run-{n}.ipynb"),
                parameters={"OUT": str(Path(folder) / f"out-{n}.png")},
                progress_bar=False,
                kernel_name="python3",
                **KERNEL_OPTIONS,
            )
        return time.perf_counter() - started, _children_cpu() + _self_cpu() - cpu


def main(skip_build: bool = False) -> None:
    count = len(default_notebooks())
    if not skip_build:
        shutil.rmtree(paths.PAPER_DIR, ignore_errors=True)
        full_wall, full_cpu = timed_make()
    else:
        subprocess.run(["make", "paper"], cwd=paths.PROJECT_ROOT, check=True, capture_output=True)
    noop_wall, _ = timed_make()
    floor_wall, floor_cpu = trivial_floor(count)
    print(
        f"{count} trivial notebooks, one after another: {floor_wall:6.1f} s wall, "
        f"{floor_cpu:6.1f} s CPU"
    )
    if not skip_build:
        print(
            f"make paper from a clean paper/:          {full_wall:6.1f} s wall, "
            f"{full_cpu:6.1f} s CPU"
        )
        print(
            f"build / floor: {full_wall / floor_wall:.2f} wall (target <= 0.5), "
            f"{full_cpu / floor_cpu:.2f} CPU"
        )
    print(f"make paper again (no change):            {noop_wall:6.2f} s  (target < 1 s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python benchmarks/bench_paper.py", description=__doc__)
    parser.add_argument("--skip-build", action="store_true", help="time only the floor and no-op")
    main(parser.parse_args().skip_build)
