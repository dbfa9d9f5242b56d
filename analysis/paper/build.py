"""Build the paper: run every notebook, then move all outputs into ``paper/`` at once.

``python -m analysis.paper.build`` (``make paper``, when its inputs changed) holds the project
lock, restores ``paper.previous`` if a crash left no ``paper/``, checks that ``paper/`` can
be written, and starts its warm kernels (one per worker, the notebooks' imports done once,
reset to a fresh kernel's state before each notebook). The first kernel to answer checks
every input, before its own imports and while the others import: the scenario table, the
published conditions (leaderboard cross-check) and the per-trial verdicts under
``data/runs``, keeping the checked frames for the notebooks that read them (papermill
parameter ``checked_inputs``), which start once the check passed; the notebooks that read
none of them run meanwhile on the other kernels. It executes ``notebooks/*.ipynb`` with
papermill into a staging folder on the kernels (a cell that runs too long or a kernel that
dies fails the build), printing one line per notebook, merges their numbers into
``numbers.json`` with a ``build`` record (release, git commit, versions, time), renders the
HTML report (``index.html``) and the PDF, writes the stamp ``.built`` keyed by the digest
of every input, and replaces ``paper/`` only when every step succeeded. A failing notebook
is named with its cell, and its partly executed copy is kept in ``paper.failed/``. When
only some notebooks changed (nothing else they read did), only those run again; the
others' outputs are carried over from ``paper/``, whose ``.built`` lists each notebook's
outputs, and ``numbers/`` keeps each one's numbers.
"""

from __future__ import annotations

import contextlib
import gc
import json
import shutil
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from queue import Empty, Queue

from analysis import paths
from analysis.files.lock import LockedError
from analysis.files.typed import error_text
from analysis.help_text import parser as help_parser
from analysis.paper.build_errors import BuildError, InputError, NotebookFailed
from analysis.paper.checked_inputs import CHECKED_INPUTS, reads_checked
from analysis.paper.failed_notebooks import raise_on_failure
from analysis.paper.make import (
    build_digest,
    default_notebooks,
    recover_paper,
    shared_digest,
)
from analysis.paper.notebook_run import NotebookRun, run_notebook
from analysis.paper.reports import write_reports
from analysis.paper.unchanged_notebooks import STAMP, carry_over, last_stamp, reusable_notebooks
from analysis.release.identity import ReleaseError, file_sha256, lock_for

# The analysis stack and the notebook machinery are imported where they are first needed,
# so that a refusal (busy lock, read-only paper/, bad input) comes within a second or two.

#: Seconds one cell may run before the build stops its kernel and fails.
CELL_TIMEOUT = 900


def _report(run: NotebookRun) -> None:
    status = "ok" if run.failure is None else "failed"
    print(f"  {run.notebook.stem:<24} {run.seconds:5.1f} s  {status}", flush=True)


@dataclass(frozen=True)
class _Call:
    """A job: call a function on a kernel; its failure, or None, goes to ``outcome`` (raised
    as ``error`` when the function raised)."""

    code: str
    doing: str
    outcome: Queue
    error: type[BuildError] = BuildError


@dataclass(frozen=True)
class _Notebook:
    """A job: execute a notebook into ``staging``, given the ``checked`` inputs if any."""

    notebook: Path
    staging: Path
    checked: Path | None


class NotebookRunner:
    """Warm kernels, one per worker, started at once and reused; they run all the analysis
    code: :meth:`run` checks the inputs on the first one to answer (before its warm-up,
    while the others warm up and run the notebooks that need nothing checked), then
    executes the other notebooks; :meth:`call` runs any other step (the report), and
    :meth:`close` stops them. The build process itself imports no part of the analysis
    stack."""

    def __init__(
        self, notebooks: list[Path], workers: int, cell_timeout: float = CELL_TIMEOUT
    ) -> None:
        from analysis.paper.kernels import notebook_imports

        self.cell_timeout = cell_timeout
        self.modules = notebook_imports(notebooks)
        self.stop = threading.Event()
        self.jobs: Queue = Queue()  # _Call or _Notebook jobs; None: no more
        self.runs: Queue = Queue()  # each notebook's NotebookRun, as it ends
        self.threads = [
            threading.Thread(target=self._work, name=f"notebook-worker-{n}", daemon=True)
            for n in range(max(1, min(workers, len(notebooks))))
        ]
        for thread in self.threads:
            thread.start()

    def check_inputs(self, path: Path) -> Path:
        """Load and cross-check every input the notebooks read and store the checked frames
        at ``path`` (:func:`analysis.paper.sections.opening.write_checked_inputs`), on the first
        kernel to answer; bad input raises :class:`InputError`, naming the file and the
        problem."""
        self._wait(self._check(path))
        return path

    def call(
        self, function: str, doing: str, error: type[BuildError] = BuildError, **arguments
    ) -> None:
        """Call ``function`` (``"module.name"``) with ``arguments`` (plain values) on the
        first kernel free, reset first. What it raises becomes ``error`` with its message; a
        kernel that hangs, dies or never starts, a :class:`BuildError` saying so."""
        self._wait(self._queue_call(function, doing, error, arguments))

    def run(
        self, notebooks: list[Path], parts: Path, checked: Path | None = None
    ) -> list[NotebookRun]:
        """Execute ``notebooks`` (longest first is best), each into ``parts / stem``, printing
        one line for each as it ends. With ``checked``, the inputs are checked into it first
        (:meth:`check_inputs`) and handed to the notebooks that read them, which start once
        the check passed; those that read none of them start first, while it runs, on the
        other kernels (a failed check raises before any notebook's line is printed)."""
        early = [nb for nb in notebooks if checked is None or not reads_checked(nb)]
        check = self._check(checked) if checked is not None else None
        for notebook in early:
            self.jobs.put(_Notebook(notebook, parts / notebook.stem, None))
        if check is not None:
            self._wait(check)
            for notebook in notebooks:
                if notebook not in early:
                    self.jobs.put(_Notebook(notebook, parts / notebook.stem, checked))
        runs = []
        for _ in notebooks:
            runs.append(self.runs.get())
            _report(runs[-1])
        order = {nb: n for n, nb in enumerate(notebooks)}
        return sorted(runs, key=lambda run: order[run.notebook])

    def _check(self, path: Path) -> _Call:
        function = "analysis.paper.sections.opening.write_checked_inputs"
        return self._queue_call(function, "checking the inputs", InputError, {"path": str(path)})

    def _queue_call(
        self, function: str, doing: str, error: type[BuildError], arguments: dict
    ) -> _Call:
        module, name = function.rsplit(".", 1)
        code = f"from {module} import {name}\n{name}(**{arguments!r})\n"
        job = _Call(code, doing, Queue(), error)
        self.jobs.put(job)
        return job

    def _wait(self, job: _Call) -> None:
        """Wait for ``job`` to end; raise what it failed with, as its ``error``."""
        from analysis.paper.kernels import KernelCodeError

        failure = job.outcome.get()
        if isinstance(failure, KernelCodeError):
            raise job.error(failure.evalue or failure.ename)
        if failure is not None:
            raise BuildError(f"{job.doing}: {failure}")

    def close(self) -> None:
        """Stop every kernel (whatever ran)."""
        self.stop.set()
        for _ in self.threads:
            self.jobs.put(None)
        for thread in self.threads:
            thread.join()

    def _start(self, warm: bool = True):
        """A kernel and None, or None and the :class:`KernelError` it failed with; ``warm``:
        with the notebooks' imports done, else only answering."""
        from analysis.paper.kernels import KernelError, WarmKernel

        kernel = WarmKernel(paths.PROJECT_ROOT, self.stop)
        try:
            kernel.start(self.modules if warm else None)
        except KernelError as failed:
            kernel.kill()
            return None, failed
        except Exception:
            kernel.kill()
            raise
        return kernel, None

    def _warm(self, kernel):
        """``kernel`` warmed up and None, or None and the :class:`KernelError` it failed with."""
        from analysis.paper.kernels import KernelError

        try:
            kernel.warm_up(self.modules)
        except KernelError as failed:
            kernel.kill()
            return None, failed
        return kernel, None

    def _work(self) -> None:
        # A new kernel runs a call already waiting (the input check, queued as the kernels
        # start) before its warm-up: the check imports a fraction of the stack, and the
        # other kernels need not wait for it to import the rest.
        kernel, error = self._start(warm=False)
        taken = []  # a job taken before the warm-up that is not such a call
        try:
            if kernel is not None:
                with contextlib.suppress(Empty):
                    taken.append(self.jobs.get_nowait())
                if taken and isinstance(taken[0], _Call):
                    kernel = self._call(kernel, taken.pop())
                if kernel is not None:
                    kernel, error = self._warm(kernel)
            while (job := taken.pop() if taken else self.jobs.get()) is not None:
                if self.stop.is_set():
                    break
                if kernel is None and error is None:  # the last one was stopped: a new one
                    kernel, error = self._start()
                if kernel is None:  # this job fails with why; the next tries a new kernel
                    self._not_run(job, error)
                    error = None
                elif isinstance(job, _Call):
                    kernel = self._call(kernel, job)
                else:
                    kernel = self._execute(kernel, job)
        finally:
            if kernel is not None:
                kernel.kill()

    def _not_run(self, job: _Call | _Notebook, error: Exception | None) -> None:
        if isinstance(job, _Call):
            job.outcome.put(error)
            return
        run = NotebookRun(job.notebook, job.staging / "notebooks" / job.notebook.name, 0.0)
        run.failure, run.kernel_ok = f"{job.notebook.name}: {error}", False
        self.runs.put(run)

    def _call(self, kernel, job: _Call):
        """Run ``job`` on ``kernel``, its failure (or None) to its outcome; the kernel, or
        None when it hung or died (it is then stopped)."""
        from analysis.paper.kernels import KernelCodeError

        try:
            kernel.run(job.code, job.doing)
        except Exception as failed:  # the caller raises it
            job.outcome.put(failed)
            if not isinstance(failed, KernelCodeError):
                kernel.kill()
                return None
        else:
            job.outcome.put(None)
        return kernel

    def _execute(self, kernel, job: _Notebook):
        """Execute ``job``'s notebook on ``kernel``; the kernel, or None when it cannot run
        another (it is then stopped)."""
        run = run_notebook(job.notebook, job.staging, kernel, self.cell_timeout, job.checked)
        self.runs.put(run)
        if run.kernel_ok:
            return kernel
        kernel.kill()
        return None


def check_writable(paper_dir: Path) -> None:
    """Refuse before any notebook runs when ``paper/`` or its parent cannot be written."""
    for folder in (paper_dir.parent, paper_dir):
        if not folder.is_dir():
            continue
        probe = folder / f".write-probe-{id(folder)}"
        try:
            probe.touch()
            probe.unlink()
        except OSError as error:
            raise BuildError(f"{folder}: not writable ({error.strerror})") from None


def _swap(staging: Path, paper_dir: Path) -> None:
    previous = paper_dir.with_name(paper_dir.name + ".previous")
    shutil.rmtree(previous, ignore_errors=True)
    if paper_dir.exists():
        paper_dir.rename(previous)
    staging.rename(paper_dir)
    shutil.rmtree(previous, ignore_errors=True)


def _collect(part: Path, staging: Path) -> list[str]:
    """Move one notebook's own output folder into ``staging``; its files, relative."""
    outputs = []
    for file in sorted(p for p in part.rglob("*") if p.is_file()):
        name = file.relative_to(part)
        target = staging / name
        target.parent.mkdir(parents=True, exist_ok=True)
        file.replace(target)
        outputs.append(str(name))
    shutil.rmtree(part)
    return outputs


def _longest_first(notebooks: list[Path], paper_dir: Path) -> list[Path]:
    """``notebooks`` ordered by the seconds each took in the last build, longest first (so
    that the longest does not start last). Notebooks never timed go first, those reading
    more first (per-trial verdicts, then the published conditions; see
    ``analysis.paper.sections.READS``), later sections before earlier ones."""
    from analysis.paper.sections.reads import READS

    recorded = last_stamp(paper_dir).get("notebooks")
    recorded = recorded if isinstance(recorded, dict) else {}

    def cost(notebook: Path) -> tuple[float, int, str]:
        record = recorded.get(notebook.name)
        value = record.get("seconds") if isinstance(record, dict) else None
        reads = READS.get(notebook.stem)
        weight = 2 * reads.verdicts + reads.conditions if reads is not None else 0
        if isinstance(value, int | float):
            return float(value), 0, ""
        return float("inf"), weight, notebook.stem

    return sorted(notebooks, key=cost, reverse=True)


def build(
    notebooks: list[Path],
    paper_dir: Path = paths.PAPER_DIR,
    workers: int = 2,
    cell_timeout: float = CELL_TIMEOUT,
) -> Path:
    """Execute ``notebooks`` and replace ``paper_dir`` with their outputs; all or nothing.

    A notebook whose file is unchanged, when nothing shared with the others changed, is not
    run again: its outputs are carried over from ``paper_dir``; the numbers and the report
    are always made anew from every notebook's outputs. The others run on ``workers`` warm
    kernels (see :class:`NotebookRunner`), the first of which checks the inputs; a cell
    running longer than ``cell_timeout`` seconds fails the build.
    """
    data = paths.data_dir()
    recover_paper(paper_dir)
    check_writable(paper_dir)
    digest = build_digest(data, notebooks)
    shared = shared_digest(data)
    reused = reusable_notebooks(paper_dir, shared, notebooks)
    to_run = [nb for nb in notebooks if nb.name not in reused]
    runner = NotebookRunner(to_run, workers, cell_timeout) if to_run else None
    staging = paper_dir.with_name(paper_dir.name + ".staging")
    try:
        to_run = _longest_first(to_run, paper_dir)
        shutil.rmtree(staging, ignore_errors=True)
        (staging / "notebooks").mkdir(parents=True)
        parts = staging / ".parts"
        parts.mkdir()
        runs = runner.run(to_run, parts, parts / CHECKED_INPUTS) if runner else []
        carry_over(staging, paper_dir, reused)
        for notebook in reused:
            print(f"  {Path(notebook).stem:<24} {'':>7}  unchanged", flush=True)
        raise_on_failure(runs, paper_dir)
        _finish(staging, data, notebooks, reused, runs, digest, shared, runner)
    except BaseException:
        if runner is not None:  # no kernel writes into the staging folder once it is gone
            runner.close()
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        if runner is not None:
            runner.close()
    _swap(staging, paper_dir)
    return paper_dir


def _finish(staging, data, notebooks, reused, runs, digest, shared, runner) -> None:
    """Gather the outputs, write numbers.json, the report and the PDF (on a kernel of
    ``runner``, if any: :func:`write_reports`), then the stamp."""
    records = dict(reused)
    for run in runs:
        outputs = _collect(staging / ".parts" / run.notebook.stem, staging)
        records[run.notebook.name] = {
            "sha256": file_sha256(run.notebook),
            "outputs": outputs,
            "seconds": round(run.seconds, 2),
        }
    shutil.rmtree(staging / ".parts", ignore_errors=True)
    arguments = {
        "staging": str(staging),
        "data": str(data),
        "notebooks": [nb.name for nb in notebooks],
    }
    if runner is None:
        write_reports(**arguments)
    else:
        runner.call(
            "analysis.paper.reports.write_reports",
            "writing numbers.json and the report",
            **arguments,
        )
    stamp = {"inputs_digest": digest, "shared_digest": shared, "notebooks": records}
    (staging / STAMP).write_text(json.dumps(stamp, indent=2) + "\n", "utf-8")


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m analysis.paper.build [--paper-dir DIR] [notebook ...]``."""
    parser = help_parser("python -m analysis.paper.build", __doc__)
    parser.add_argument(
        "notebooks", nargs="*", type=Path, help="notebooks to run (default: notebooks/*.ipynb)"
    )
    parser.add_argument(
        "--paper-dir",
        type=Path,
        default=paths.PAPER_DIR,
        help="where the paper is built (default: paper/)",
    )
    parser.add_argument(
        "--workers", type=int, default=2, help="kernels at once (default 2; at least 1)"
    )
    parser.add_argument(
        "--cell-timeout",
        type=float,
        default=CELL_TIMEOUT,
        help=f"seconds one cell may run before the build fails (default {CELL_TIMEOUT})",
    )
    args = parser.parse_args(argv)
    notebooks = [nb.resolve() for nb in args.notebooks] or default_notebooks()
    paper_dir = args.paper_dir.resolve()
    started = time.perf_counter()
    lock = lock_for(paths.data_dir())
    try:
        lock.acquire()
        build(notebooks, paper_dir, args.workers, args.cell_timeout)
    except LockedError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (BuildError, ReleaseError, ValueError, KeyError, OSError) as error:
        message = error_text(error)
        print(f"error: {message}\nNothing was written to {paper_dir}.", file=sys.stderr)
        return 1 if isinstance(error, NotebookFailed) else 2
    except KeyboardInterrupt:
        print(f"interrupted; nothing was written to {paper_dir}", file=sys.stderr)
        return 130
    finally:
        lock.release()
    seconds = time.perf_counter() - started
    print(f"Built {paper_dir} from {len(notebooks)} notebooks in {seconds:.1f} s.")
    return 0


if __name__ == "__main__":
    status = main()
    # The process ends here: leave its heap out of the interpreter's final garbage
    # collection, which would walk the whole analysis stack (about a second).
    gc.freeze()
    sys.exit(status)
