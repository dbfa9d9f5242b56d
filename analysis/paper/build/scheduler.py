"""Scheduling notebooks over warm kernels: one kernel per worker, the input check on the
first to answer, the notebooks that need it once it passed, the others meanwhile, longest
first."""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty, Queue

from analysis import paths
from analysis.paper.build.carry_over import last_stamp
from analysis.paper.build.checked_inputs import reads_checked
from analysis.paper.build.errors import BuildError, InputError
from analysis.paper.build.notebook_run import NotebookRun, run_notebook

#: Seconds one cell may run before the build stops its kernel and fails.
CELL_TIMEOUT = 900


def report_line(step: str, seconds: float, status: str = "ok") -> None:
    """Print one step of the build as it ended: its name, its seconds, how it ended."""
    print(f"  {step:<24} {seconds:5.1f} s  {status}", flush=True)


def _report(run: NotebookRun) -> None:
    report_line(run.notebook.stem, run.seconds, "ok" if run.failure is None else "failed")


@dataclass(frozen=True)
class _Call:
    """A job: call a function on a kernel; its failure, or None, goes to ``outcome`` (raised
    as ``error`` when the function raised), and the seconds it ran on the kernel to
    ``seconds``."""

    code: str
    doing: str
    outcome: Queue
    error: type[BuildError] = BuildError
    seconds: list[float] = field(default_factory=list)


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
        from analysis.paper.build.kernels import notebook_imports

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

    def check_inputs(self, path: Path, key: str | None = None) -> Path:
        """Load and cross-check every input the notebooks read and store the checked frames
        at ``path`` (:func:`analysis.paper.sections.loading.write_checked_inputs`), on the first
        kernel to answer, reusing an earlier build's check when neither the data nor the code
        changed (:mod:`analysis.paper.input_cache`; ``key``: the data's
        :func:`~analysis.paper.input_cache.data_key`, when the caller has it); bad input
        raises :class:`InputError`, naming the file and the problem."""
        self._wait(self._check(path, key))
        return path

    def call(
        self, function: str, doing: str, error: type[BuildError] = BuildError, **arguments
    ) -> float:
        """Call ``function`` (``"module.name"``) with ``arguments`` (plain values) on the
        first kernel free, reset first, and return the seconds it ran there. What it raises
        becomes ``error`` with its message; a kernel that hangs, dies or never starts, a
        :class:`BuildError` saying so."""
        job = self._queue_call(function, doing, error, arguments)
        self._wait(job)
        return job.seconds[0]

    def run(
        self,
        notebooks: list[Path],
        parts: Path,
        checked: Path | None = None,
        key: str | None = None,
    ) -> list[NotebookRun]:
        """Execute ``notebooks`` (longest first is best), each into ``parts / stem``, printing
        one line for each as it ends. With ``checked``, the inputs are checked into it first
        (:meth:`check_inputs`, with ``key``) and handed to the notebooks that read them,
        which start once the check passed; those that read none of them start first, while
        it runs, on the other kernels (a failed check raises before any notebook's line is
        printed; a passed one prints its own line first)."""
        early = [nb for nb in notebooks if checked is None or not reads_checked(nb)]
        check = self._check(checked, key) if checked is not None else None
        for notebook in early:
            self.jobs.put(_Notebook(notebook, parts / notebook.stem, None))
        if check is not None:
            self._wait(check)
            report_line("input check", check.seconds[0])
            for notebook in notebooks:
                if notebook not in early:
                    self.jobs.put(_Notebook(notebook, parts / notebook.stem, checked))
        runs = []
        for _ in notebooks:
            runs.append(self.runs.get())
            _report(runs[-1])
        order = {nb: n for n, nb in enumerate(notebooks)}
        return sorted(runs, key=lambda run: order[run.notebook])

    def _check(self, path: Path, key: str | None) -> _Call:
        function = "analysis.paper.sections.loading.write_checked_inputs"
        arguments = {"path": str(path), "reuse": True, "key": key}
        return self._queue_call(function, "checking the inputs", InputError, arguments)

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
        from analysis.paper.build.kernels import KernelCodeError

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
        from analysis.paper.build.kernels import KernelError, WarmKernel

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
        from analysis.paper.build.kernels import KernelError

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
        from analysis.paper.build.kernels import KernelCodeError

        started, failure = time.perf_counter(), None
        try:
            kernel.run(job.code, job.doing)
        except Exception as failed:  # the caller raises it
            failure = failed
        job.seconds.append(time.perf_counter() - started)
        job.outcome.put(failure)
        if failure is not None and not isinstance(failure, KernelCodeError):
            kernel.kill()
            return None
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


#: The seconds each notebook took in the last build on a data folder, kept in that folder
#: (a build into a new paper folder orders its notebooks by them too).
SECONDS_RECORD = ".notebook-seconds.json"


def remember_seconds(data: Path, records: dict[str, dict]) -> None:
    """Keep in ``data`` the seconds and sha256 of each notebook the stamp ``records`` list
    (merged with those kept before); a data folder that cannot be written to keeps none."""
    import json

    from analysis.files.atomic_write import atomic_write_text

    kept = {
        **_kept_seconds(data),
        **{
            name: {"sha256": record["sha256"], "seconds": record["seconds"]}
            for name, record in records.items()
            if isinstance(record, dict) and {"sha256", "seconds"} <= record.keys()
        },
    }
    if data.is_dir():
        with contextlib.suppress(OSError):
            text = json.dumps(kept, indent=1, sort_keys=True) + "\n"
            atomic_write_text(data / SECONDS_RECORD, text)


def _kept_seconds(data: Path) -> dict[str, dict]:
    import json

    try:
        kept = json.loads((data / SECONDS_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return kept if isinstance(kept, dict) else {}


def longest_first(notebooks: list[Path], paper_dir: Path, data: Path | None = None) -> list[Path]:
    """``notebooks`` ordered by the seconds each took in the last build, longest first (so
    that the longest does not start last): the build in ``paper_dir``, else the last
    build on the data folder ``data`` of the same notebook file (:func:`remember_seconds`).
    Notebooks never timed go first, those reading more first (per-trial verdicts, then the
    published conditions; see ``analysis.paper.sections.READS``), later sections before
    earlier ones."""
    from analysis.files.digests import file_sha256
    from analysis.paper.sections.reads import READS

    recorded = last_stamp(paper_dir).get("notebooks")
    recorded = recorded if isinstance(recorded, dict) else {}
    kept = _kept_seconds(data) if data is not None else {}

    def seconds(notebook: Path) -> object:
        record = recorded.get(notebook.name)
        if isinstance(record, dict):
            return record.get("seconds")
        record = kept.get(notebook.name)
        if isinstance(record, dict) and record.get("sha256") == file_sha256(notebook):
            return record.get("seconds")
        return None

    def cost(notebook: Path) -> tuple[float, int, str]:
        value = seconds(notebook)
        reads = READS.get(notebook.stem)
        weight = 2 * reads.verdicts + reads.conditions if reads is not None else 0
        if isinstance(value, int | float):
            return float(value), 0, ""
        return float("inf"), weight, notebook.stem

    return sorted(notebooks, key=cost, reverse=True)
