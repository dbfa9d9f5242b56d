"""Warm kernels: notebooks share a kernel yet each starts from a fresh kernel's state; a
hung cell or a dead kernel fails the build in bounded time, and the next notebook gets a
new kernel; the reset hands the next notebook a client known to receive its output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from queue import Empty

import nbformat
import pytest
from factories import data_copy

from analysis import paths
from analysis.paper.build import cli as builder
from analysis.paper.build import notebook_run, scheduler
from analysis.paper.build.errors import BuildError, InputError, NotebookFailed
from analysis.paper.build.kernels import KernelCodeError, KernelError, WarmKernel


def notebook(folder: Path, name: str, *cells: str) -> Path:
    """A notebook ``name`` with the build's ``output_dir`` parameter and ``cells``."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("output_dir = None", metadata={"tags": ["parameters"]}),
        *(nbformat.v4.new_code_cell(source) for source in cells),
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nb.metadata["language_info"] = {"name": "python"}
    path = folder / name
    nbformat.write(nb, path)
    return path


def build(paper: Path, *notebooks: Path, timeout: float = 300, cell_timeout: float = 60):
    command = [sys.executable, "-m", "analysis.paper.build", "--paper-dir", str(paper)]
    command += ["--workers", "1", "--cell-timeout", str(cell_timeout), *map(str, notebooks)]
    env = {**os.environ, "STEERBENCH_DATA_DIR": str(data_copy(paper.parent))}
    started = time.monotonic()
    result = subprocess.run(
        command, capture_output=True, text=True, cwd=paths.PROJECT_ROOT, env=env, timeout=timeout
    )
    return result, time.monotonic() - started


RECORD = """\
import json, os
from pathlib import Path
Path({folder!r}, "{name}.json").write_text(json.dumps({{"pid": os.getpid(), **{what}}}))
"""

LEAVE_STATE = """\
import os, warnings
import matplotlib as mpl
import numpy as np
import pandas as pd
import analysis.paths
leaked = 1
pd.set_option("display.width", 211)
mpl.rcParams["lines.linewidth"] = 7.5
np.random.seed(1)
np.seterr(all="raise")
warnings.simplefilter("error")
os.environ["STEERBENCH_LEAKED"] = "1"
analysis.paths.LEAKED = True
import tempfile
from pathlib import Path
import matplotlib.pyplot as plt
from analysis.paper.figures import save_figure, use_style
use_style()  # the house style embeds TrueType font subsets in PDFs
figure, axes = plt.subplots()
save_figure(figure, Path(tempfile.mkdtemp()) / "a-figure")
from analysis.files.digests import remembered_sha256
remembered_sha256(Path(analysis.paths.__file__))
"""

FIND_STATE = """\
import os, sys, warnings
import matplotlib as mpl
import numpy as np
import pandas as pd
import analysis.paths
from analysis.paper.pdf_fonts import font_subset
state = {
    "leaked": "leaked" in globals(),
    "width": pd.get_option("display.width"),
    "linewidth": mpl.rcParams["lines.linewidth"],
    "errors": np.geterr()["divide"],
    "error_filter": any(f[0] == "error" and f[2] is Warning for f in warnings.filters),
    "environ": "STEERBENCH_LEAKED" in os.environ,
    "module": hasattr(analysis.paths, "LEAKED"),
    "font_subsets": font_subset.cache_info().currsize,
    "digests": len(sys.modules["analysis.files.digests"]._REMEMBERED),
}
"""


@pytest.mark.slow
def test_notebooks_share_a_kernel_but_not_its_state(tmp_path):
    record_a = RECORD.format(folder=str(tmp_path), name="a", what="{}")
    after_a = f'{{"after_a": Path({str(tmp_path)!r}, "a.json").exists(), **state}}'
    record_b = RECORD.format(folder=str(tmp_path), name="b", what=after_a)
    # never timed, later sections run first (scheduler.longest_first): 02 before 01
    first = notebook(tmp_path, "02-leaves.ipynb", LEAVE_STATE, record_a)
    second = notebook(tmp_path, "01-finds.ipynb", FIND_STATE, record_b)
    paper = tmp_path / "paper"
    result, _ = build(paper, first, second)
    assert result.returncode == 0, result.stderr
    a = json.loads((tmp_path / "a.json").read_text())
    b = json.loads((tmp_path / "b.json").read_text())
    assert a["pid"] == b["pid"] and b["after_a"]  # one kernel ran both, in this order
    assert b["width"] == 80 and b["linewidth"] != 7.5 and b["errors"] == "warn"
    assert not (b["leaked"] or b["error_filter"] or b["environ"] or b["module"])
    assert b["font_subsets"] > 0  # a cache of pure results is kept (kernel_state.KEPT)
    assert b["digests"] > 0  # and so are the digests of unchanged files
    executed = nbformat.read(paper / "notebooks" / "01-finds.ipynb", as_version=4)
    counts = [cell.execution_count for cell in executed.cells if cell.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1))


KEEPS_CODE = """\
import importlib.util
from pathlib import Path
spec = importlib.util.spec_from_file_location("steerbench_kernel_state", {state!r})
state = importlib.util.module_from_spec(spec)
spec.loader.exec_module(state)
state.keep_compiled_code()
import analysis
first = analysis.VALUE
state._forget_package()
import analysis
second = analysis.VALUE
Path("analysis", "__init__.py").write_text("VALUE = 22\\n")
state._forget_package()
import analysis
print(first, second, analysis.VALUE, len(state._compiled))
"""


@pytest.mark.slow
def test_a_notebook_running_as_the_build_stops_runs_no_further_cell(tmp_path):
    record = RECORD.format(folder=str(tmp_path), name="after", what="{}")
    slow = notebook(tmp_path, "01-slow.ipynb", "import time\ntime.sleep(3)", record)
    (tmp_path / "staging" / "notebooks").mkdir(parents=True)
    kernel = WarmKernel(paths.PROJECT_ROOT, threading.Event())
    kernel.start([])
    try:
        threading.Timer(1, kernel.stop.set).start()  # during the sleep
        with pytest.raises(KernelError, match="stopped before a cell: the build ended"):
            notebook_run.execute(slow, tmp_path / "staging", kernel, cell_timeout=60)
    finally:
        kernel.kill()
    assert not (tmp_path / "after.json").exists()


def test_a_kernel_compiles_a_module_once_and_again_when_its_file_changes(tmp_path):
    from analysis.paper.build import kernel_state

    (tmp_path / "analysis").mkdir()
    (tmp_path / "analysis" / "__init__.py").write_text("VALUE = 1\n")
    script = KEEPS_CODE.format(state=kernel_state.__file__)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "1", "22", "2"]  # compiled twice: once per content


@pytest.mark.slow
def test_hung_cell_and_dead_kernel_fail_the_build_and_the_next_notebook_runs(tmp_path):
    pid = RECORD.format(folder=str(tmp_path), name="hung", what="{}")
    hangs = notebook(
        tmp_path, "01-hangs.ipynb", pid, "# wait forever\nimport time\ntime.sleep(600)"
    )
    dies = notebook(tmp_path, "02-dies.ipynb", "# leave at once\nimport os\nos._exit(3)")
    fine = notebook(tmp_path, "03-fine.ipynb", "print('fine')")
    paper = tmp_path / "paper"
    paper.mkdir()
    result, seconds = build(paper, hangs, dies, fine, cell_timeout=3)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0].startswith(
        "error: notebook 01-hangs.ipynb: cell index 2 (`# wait forever`) ran past 3 s; "
        "its kernel was stopped"
    ), result.stderr
    assert "also failed: 02-dies.ipynb: the kernel died while running cell index 1 " in (
        result.stderr
    )
    assert "03-fine" in result.stdout and " ok" in result.stdout
    assert seconds < 120
    hung = json.loads((tmp_path / "hung.json").read_text())["pid"]
    for _ in range(50):  # the hung kernel was killed, not left behind
        try:
            os.kill(hung, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"the hung kernel {hung} still runs")
    assert (tmp_path / "paper.failed" / "01-hangs.ipynb").is_file()
    assert list(paper.iterdir()) == []


class ScriptedClient:
    """A kernel client whose shell answers every request ``ok`` and whose IOPub channel
    yields ``iopub`` (then nothing): enough to follow :meth:`WarmKernel.clean`."""

    def __init__(self, iopub: list[dict], shell_status: str = "ok") -> None:
        self.iopub = list(iopub)
        self.shell_status = shell_status
        self.readiness_checked = self.stopped = False

    def start_channels(self, **channels) -> None:
        self.channels = channels

    def stop_channels(self) -> None:
        self.stopped = True

    def execute(self, code: str, **options) -> str:
        return "reset"

    async def get_shell_msg(self, timeout: float) -> dict:
        content = {"status": self.shell_status, "ename": "NameError", "evalue": "no _state"}
        return {"parent_header": {"msg_id": "reset"}, "content": content}

    async def get_iopub_msg(self, timeout: float) -> dict:
        if not self.iopub:
            raise Empty
        return self.iopub.pop(0)

    async def wait_for_ready(self, timeout: float) -> None:
        self.readiness_checked = True


def status(parent: str, state: str) -> dict:
    return {
        "parent_header": {"msg_id": parent},
        "msg_type": "status",
        "content": {"execution_state": state},
    }


def clean_with(client: ScriptedClient, monkeypatch) -> ScriptedClient:
    kernel = WarmKernel(paths.PROJECT_ROOT)
    monkeypatch.setattr(kernel.km, "client", lambda: client)
    return kernel.clean()


def test_a_reset_whose_idle_status_arrives_needs_no_readiness_check(monkeypatch):
    messages = [status("earlier", "idle"), status("reset", "busy"), status("reset", "idle")]
    client = clean_with(ScriptedClient(messages), monkeypatch)
    assert not client.readiness_checked and not client.stopped  # handed on, open


def test_a_kernel_client_runs_no_heartbeat_thread(monkeypatch):
    """jupyter_client's heartbeat thread, stopped before it starts, loops opening sockets
    until none are left (a build that stops as a client opens); liveness comes from the
    kernel manager instead."""
    client = clean_with(ScriptedClient([status("reset", "idle")]), monkeypatch)
    assert client.channels == {"hb": False}


def test_a_reset_whose_idle_status_is_missed_checks_readiness(monkeypatch):
    client = clean_with(ScriptedClient([status("earlier", "idle")]), monkeypatch)
    assert client.readiness_checked and not client.stopped


def test_a_failed_reset_closes_its_client_and_says_why(monkeypatch):
    client = ScriptedClient([], shell_status="error")
    with pytest.raises(KernelError, match=r"resetting the kernel.*NameError: no _state"):
        clean_with(client, monkeypatch)
    assert client.stopped


class FakeKernel:
    """A kernel that records what it runs (and whether it was warm then), and raises
    ``raises`` when it runs code."""

    def __init__(self, raises: Exception | None = None) -> None:
        self.raises, self.ran, self.killed, self.warm, self.events = raises, [], False, False, []

    def run(self, code: str, doing: str) -> None:
        self.ran.append(doing)
        self.events.append((doing, "warm" if self.warm else "cold"))
        if self.raises is not None:
            raise self.raises

    def warm_up(self, modules: list[str]) -> None:
        self.warm = True
        self.events.append(("warm-up", "cold"))

    def kill(self) -> None:
        self.killed = True


def runner_with(
    kernels: list,
    monkeypatch,
    workers: int = 1,
    slow_start: bool = False,
    notebooks: list[Path] | None = None,
) -> scheduler.NotebookRunner:
    """A runner of ``workers`` whose kernels are ``kernels`` in turn (a KernelError: it does
    not start); ``slow_start``: a kernel answers once a job is waiting, as a real one takes
    a second to start."""

    def start(self, warm=True):
        deadline = time.monotonic() + 10
        while slow_start and self.jobs.empty() and time.monotonic() < deadline:
            time.sleep(0.01)
        kernel = kernels.pop(0)
        if warm and not isinstance(kernel, Exception):
            kernel.warm_up([])
        return (None, kernel) if isinstance(kernel, Exception) else (kernel, None)

    monkeypatch.setattr(scheduler.NotebookRunner, "_start", start)
    notebooks = notebooks or [paths.NOTEBOOKS_DIR / "01-corpus.ipynb"]
    return scheduler.NotebookRunner(notebooks, workers=workers)


def test_bad_input_found_on_a_kernel_is_an_input_error_naming_the_file(monkeypatch, tmp_path):
    problem = KernelCodeError("checking the inputs", "InputFileError", "/d/broken.csv: no trials")
    kernel = FakeKernel(raises=problem)
    runner = runner_with([kernel], monkeypatch)
    try:
        with pytest.raises(InputError) as raised:
            runner.check_inputs(tmp_path / "checked.pkl")
    finally:
        runner.close()
    assert str(raised.value) == "/d/broken.csv: no trials"
    assert kernel.ran == ["checking the inputs"] and kernel.killed  # stopped with the build


def test_a_kernel_that_hangs_on_code_is_replaced_for_the_next_job(monkeypatch):
    hung, fresh = FakeKernel(raises=KernelError("no answer after 300 s")), FakeKernel()
    runner = runner_with([hung, fresh], monkeypatch)
    try:
        with pytest.raises(BuildError, match="writing the report: no answer after 300 s"):
            runner.call("os.getcwd", "writing the report")
        assert hung.killed
        runner.call("os.getcwd", "writing the report")
    finally:
        runner.close()
    assert fresh.ran == ["writing the report"]


def test_the_input_check_runs_on_a_new_kernel_before_its_warm_up(monkeypatch, tmp_path):
    kernel = FakeKernel()
    runner = runner_with([kernel], monkeypatch, slow_start=True)
    try:
        runner.check_inputs(tmp_path / "checked.pkl")  # queued before the kernel answers
        runner.call("os.getcwd", "writing the report")
    finally:
        runner.close()
    assert kernel.events == [
        ("checking the inputs", "cold"),
        ("warm-up", "cold"),
        ("writing the report", "warm"),
    ]


def test_no_workers_asked_for_still_means_one_kernel(monkeypatch, tmp_path):
    kernel = FakeKernel()
    runner = runner_with([kernel], monkeypatch, workers=0)
    try:
        runner.check_inputs(tmp_path / "checked.pkl")
    finally:
        runner.close()
    assert kernel.ran == ["checking the inputs"]


def test_no_kernel_to_check_the_inputs_on_is_a_build_error(monkeypatch, tmp_path):
    runner = runner_with([KernelError("the kernel did not start: no python3")], monkeypatch)
    try:
        with pytest.raises(BuildError, match="checking the inputs: the kernel did not"):
            runner.check_inputs(tmp_path / "checked.pkl")
    finally:
        runner.close()


class CheckingKernel(FakeKernel):
    """A kernel whose input check waits for ``release`` and then raises ``raises``."""

    def __init__(self, release: threading.Event, raises: Exception | None = None) -> None:
        super().__init__()
        self.release, self.check_raises = release, raises

    def run(self, code: str, doing: str) -> None:
        super().run(code, doing)
        if doing == "checking the inputs":
            assert self.release.wait(10)
            if self.check_raises is not None:
                raise self.check_raises


def notebooks_run_by(monkeypatch) -> dict[str, Path | None]:
    """Each notebook the runner executes, with the checked inputs it was given."""
    ran = {}

    def run_notebook(notebook, staging, kernel, cell_timeout, checked=None):
        ran[notebook.stem] = checked
        return notebook_run.NotebookRun(notebook, staging / notebook.name, 0.1)

    monkeypatch.setattr(scheduler, "run_notebook", run_notebook)
    return ran


def wait_for(condition, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


SECTIONS = [paths.NOTEBOOKS_DIR / f"{name}.ipynb" for name in ("05-patterns", "01-corpus")]


def test_a_notebook_reading_nothing_checked_runs_while_the_check_does(monkeypatch, tmp_path):
    release = threading.Event()
    kernels = [CheckingKernel(release), CheckingKernel(release)]
    ran = notebooks_run_by(monkeypatch)
    runner = runner_with(list(kernels), monkeypatch, 2, slow_start=True, notebooks=SECTIONS)
    runs = []
    thread = threading.Thread(
        target=lambda: runs.extend(runner.run(SECTIONS, tmp_path, tmp_path / "c.pkl"))
    )
    try:
        thread.start()
        assert wait_for(lambda: "01-corpus" in ran)  # the check has not passed yet
        assert "05-patterns" not in ran and thread.is_alive()
        release.set()
        thread.join(10)
    finally:
        release.set()
        runner.close()
    assert [run.notebook for run in runs] == SECTIONS
    assert ran == {"01-corpus": None, "05-patterns": tmp_path / "c.pkl"}
    checked_at = [k for k in kernels if "checking the inputs" in k.ran]
    assert len(checked_at) == 1 and checked_at[0].events[0] == ("checking the inputs", "cold")


def test_a_failed_check_prints_no_line_of_a_notebook_that_ran_meanwhile(
    monkeypatch, tmp_path, capsys
):
    release = threading.Event()
    problem = KernelCodeError("checking the inputs", "InputFileError", "/d/x.csv: no trials")
    kernels = [CheckingKernel(release, problem), CheckingKernel(release, problem)]
    ran = notebooks_run_by(monkeypatch)
    runner = runner_with(kernels, monkeypatch, 2, slow_start=True, notebooks=SECTIONS)
    threading.Thread(target=lambda: wait_for(lambda: "01-corpus" in ran) and release.set()).start()
    try:
        with pytest.raises(InputError, match=r"/d/x\.csv: no trials"):
            runner.run(SECTIONS, tmp_path, tmp_path / "c.pkl")
    finally:
        release.set()
        runner.close()
    assert set(ran) == {"01-corpus"}
    assert "01-corpus" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (NotebookFailed("notebook 05-patterns.ipynb: cell index 3 raised ValueError"), 1),
        (InputError("/tmp/notebook-tests/runs/x.csv: not a trials table"), 2),
    ],
)
def test_exit_status_follows_the_kind_of_failure(error, status, monkeypatch, tmp_path, capsys):
    def failing(*args, **kwargs):
        raise error

    monkeypatch.setattr(builder, "build", failing)
    monkeypatch.setenv("STEERBENCH_DATA_DIR", str(tmp_path))
    assert builder.main(["--paper-dir", str(tmp_path / "paper")]) == status
    assert capsys.readouterr().err.startswith(f"error: {error}\nNothing was written")
