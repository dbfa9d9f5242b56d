"""Warm notebook kernels: one IPython kernel per build worker, reused across notebooks.

A :class:`WarmKernel` starts once, imports what the notebooks import (pandas, matplotlib,
statsmodels, ...), and before each notebook is returned to the state of a fresh kernel by
:mod:`analysis.kernel_state`: an empty namespace, default options, and the ``analysis``
package imported afresh. Papermill executes each notebook on it (parameters, the executed
notebook, failing cells as before). Every wait has a deadline: a kernel that does not start,
hangs or dies raises :class:`KernelError`, and the caller kills it (an immediate shutdown)
and starts another for the next notebook.
"""

from __future__ import annotations

import ast
import contextlib
import os
import threading
import time
from pathlib import Path
from queue import Empty

from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import run_sync
from papermill.clientwrap import PapermillNotebookClient
from papermill.engines import NBClientEngine, papermill_engines
from papermill.iorw import write_ipynb

#: Seconds a kernel may take to start and answer.
START_TIMEOUT = 60
#: Seconds the imports of a new kernel, or the reset between notebooks, may take.
SETUP_TIMEOUT = 300
#: Arguments of every kernel: no kernel warnings on the build's terminal, no history file.
KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=ERROR", "--HistoryManager.hist_file=:memory:"]
#: One BLAS thread per kernel: the build runs one kernel per core already.
KERNEL_ENVIRONMENT = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PYDEVD_DISABLE_FILE_VALIDATION": "1",
}
#: The papermill engine that runs a notebook on a kernel that is already running.
ENGINE = "steerbench-warm"


class KernelError(RuntimeError):
    """A kernel did not start, did not answer in time, or died."""


def notebook_imports(notebooks: list[Path]) -> list[str]:
    """The modules the code cells of ``notebooks`` import (``from a import b`` gives ``a``
    and ``a.b``, which may be a module), in first-seen order."""
    import nbformat

    found: dict[str, None] = {}
    for notebook in notebooks:
        for cell in nbformat.read(notebook, as_version=4).cells:
            if cell.cell_type != "code":
                continue
            try:
                tree = ast.parse(cell.source)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    found.update(dict.fromkeys(alias.name for alias in node.names))
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found.setdefault(node.module)
                    found.update(dict.fromkeys(f"{node.module}.{a.name}" for a in node.names))
    return list(found)


def warm_up_code(modules: list[str]) -> str:
    """Kernel code that imports ``modules`` (those that fail are left to the notebook) and
    records the state every notebook starts from."""
    return (
        "import importlib as _importlib\n"
        f"for _name in {modules!r}:\n"
        "    try:\n"
        "        _importlib.import_module(_name)\n"
        "    except Exception:\n"
        "        pass\n"
        "import matplotlib.pyplot\n"
        "import analysis.kernel_state as _state\n"
        "_state.snapshot()\n"
    )


RESTORE_CODE = "import steerbench_kernel_state as _state\n_state.restore()\n"


class WarmEngine(NBClientEngine):
    """Papermill's nbclient engine on the kernel manager passed as ``km`` and the client
    passed as ``kc``, connected already (see :meth:`WarmKernel.clean`); it leaves both
    running. When execution stops on anything but a failing cell (a timeout, a dead
    kernel), the notebook as far as it ran is written to ``partial_path``."""

    @classmethod
    def execute_managed_notebook(
        cls,
        nb_man,
        kernel_name,
        log_output=False,
        stdout_file=None,
        stderr_file=None,
        start_timeout=START_TIMEOUT,
        execution_timeout=None,
        km=None,
        kc=None,
        partial_path=None,
        **kwargs,
    ):
        if km is None or kc is None:
            raise KernelError("the warm engine needs a running kernel and a client (km=, kc=)")
        client = PapermillNotebookClient(
            nb_man,
            km=km,
            kernel_name=kernel_name,
            timeout=execution_timeout,
            startup_timeout=start_timeout,
            log_output=log_output,
            stdout_file=stdout_file,
            stderr_file=stderr_file,
        )
        client.kc = kc  # connected: nbclient neither connects another nor closes this one
        try:
            return client.execute()
        except Exception:
            if partial_path is not None:
                write_ipynb(nb_man.nb, str(partial_path))
            raise


papermill_engines.register(ENGINE, WarmEngine)


class WarmKernel:
    """One running kernel with the notebooks' imports done; see the module docstring.

    Only one client talks to the kernel at a time: clients of one kernel manager share a
    session identity, and the kernel answers the last one connected. Each notebook gets a
    new client from :meth:`clean`, which resets the kernel through it: the reset's own
    status message on IOPub shows that the client receives the notebook's output, which
    spares jupyter_client's readiness check (a ``kernel_info`` request, then a wait of up
    to 0.2 s for an IOPub message).
    """

    def __init__(self, cwd: Path, stop: threading.Event | None = None) -> None:
        self.cwd = cwd
        self.stop = stop or threading.Event()
        self.km = AsyncKernelManager(kernel_name="python3")

    def start(self, modules: list[str]) -> None:
        """Start the kernel and import ``modules`` in it; :class:`KernelError` on failure."""
        environment = {**os.environ, **KERNEL_ENVIRONMENT}
        try:
            run_sync(self.km.start_kernel)(
                extra_arguments=KERNEL_ARGUMENTS, env=environment, cwd=str(self.cwd)
            )
        except (RuntimeError, TimeoutError, OSError) as error:
            raise KernelError(f"the kernel did not start: {error}") from None
        kc = run_sync(self._connected)("importing the notebooks' modules")
        try:
            run_sync(self._run)(kc, warm_up_code(modules), "importing the notebooks' modules")
        finally:
            kc.stop_channels()

    def clean(self):
        """Return the kernel to the state it had after :meth:`start`, and return a client
        connected to it for the next notebook (the caller stops its channels)."""
        return run_sync(self._clean)()

    async def _clean(self):
        doing = "resetting the kernel between notebooks"
        kc = self.km.client()
        kc.start_channels()
        try:
            msg_id = await self._run(kc, RESTORE_CODE, doing)
            if not await _seen_idle(kc, msg_id):
                await self._ready(kc, doing)
        except BaseException:
            kc.stop_channels()
            raise
        return kc

    async def _connected(self, doing: str):
        kc = self.km.client()
        kc.start_channels()
        try:
            await self._ready(kc, doing)
        except BaseException:
            kc.stop_channels()
            raise
        return kc

    async def _ready(self, kc, doing: str) -> None:
        try:
            await kc.wait_for_ready(timeout=START_TIMEOUT)
        except RuntimeError as error:
            raise KernelError(f"the kernel did not answer while {doing}: {error}") from None

    async def _run(self, kc, code: str, doing: str) -> str:
        """Execute ``code`` quietly through ``kc`` and wait for its reply; its message id."""
        msg_id = kc.execute(code, silent=True, store_history=False)
        deadline = time.monotonic() + SETUP_TIMEOUT
        while True:
            if self.stop.is_set():
                raise KernelError(f"stopped while {doing}: the build ended")
            if time.monotonic() > deadline:
                raise KernelError(f"no answer after {SETUP_TIMEOUT} s while {doing}")
            try:
                reply = await kc.get_shell_msg(timeout=1)
            except (TimeoutError, Empty):
                if not await self.km.is_alive():
                    raise KernelError(f"the kernel died while {doing}") from None
                continue
            if reply["parent_header"].get("msg_id") != msg_id:
                continue
            content = reply["content"]
            if content.get("status") != "ok":
                raise KernelError(
                    f"{doing} failed: {content.get('ename')}: {content.get('evalue')}"
                )
            return msg_id

    def kill(self) -> None:
        """Stop the kernel at once (no graceful shutdown: it costs seconds)."""
        with contextlib.suppress(Exception):  # already gone: nothing left to stop
            run_sync(self.km.shutdown_kernel)(now=True)


#: Seconds to wait for the IOPub status that follows a reply (it is sent just before it).
IDLE_WAIT = 0.5


async def _seen_idle(kc, msg_id: str) -> bool:
    """Whether ``kc`` receives, on IOPub, the kernel's ``idle`` status after request
    ``msg_id``: proof that its subscription was live before the request ran."""
    deadline = time.monotonic() + IDLE_WAIT
    while (left := deadline - time.monotonic()) > 0:
        try:
            message = await kc.get_iopub_msg(timeout=left)
        except (TimeoutError, Empty):
            return False
        if (
            message["parent_header"].get("msg_id") == msg_id
            and message["msg_type"] == "status"
            and message["content"].get("execution_state") == "idle"
        ):
            return True
    return False
