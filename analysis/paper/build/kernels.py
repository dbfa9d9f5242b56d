"""Warm notebook kernels: one IPython kernel per build worker, reused across notebooks.

A :class:`WarmKernel` starts once, imports what the notebooks import (pandas, matplotlib,
statsmodels, ...), and before each notebook is returned to the state of a fresh kernel by
:mod:`analysis.paper.build.kernel_state`: an empty namespace, default options, and the
``analysis`` package imported afresh. Papermill executes each notebook on it through
:mod:`analysis.paper.build.warm_engine` (parameters, the executed notebook, failing cells as
before). A kernel can also start cold and run code before its warm-up (the build's input
check, which needs a fraction of the imports, runs so while the other kernels import). Every
wait has a deadline: a kernel that does not start, hangs or dies raises
:class:`KernelError`, and the caller kills it (an immediate shutdown) and starts another for
the next notebook."""

from __future__ import annotations

import ast
import contextlib
import json
import os
import signal
import threading
import time
from pathlib import Path
from queue import Empty

from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import run_sync

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


class KernelError(RuntimeError):
    """A kernel did not start, did not answer in time, or died."""


class KernelCodeError(KernelError):
    """Code the build ran in a kernel raised: the exception's name and message."""

    def __init__(self, doing: str, ename: str, evalue: str) -> None:
        super().__init__(f"{doing} failed: {ename}: {evalue}")
        self.ename, self.evalue = ename, evalue


def notebook_imports(notebooks: list[Path]) -> list[str]:
    """The modules the code cells of ``notebooks`` import (``from a import b`` gives ``a``
    and ``a.b``, which may be a module), in first-seen order."""
    found: dict[str, None] = {}
    for notebook in notebooks:
        for cell in json.loads(notebook.read_text(encoding="utf-8")).get("cells", []):
            if cell.get("cell_type") != "code":
                continue
            source = cell.get("source", "")
            try:
                tree = ast.parse("".join(source) if isinstance(source, list) else source)
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
        "import analysis.paper.build.kernel_state as _state\n"
        "_state.snapshot()\n"
    )


RESTORE_CODE = "import steerbench_kernel_state as _state\n_state.restore()\n"


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
        self.warm = False

    def start(self, modules: list[str] | None = None) -> None:
        """Start the kernel and, given ``modules``, :meth:`warm_up` it; without, it only
        answers (nothing imported). :class:`KernelError` on failure."""
        environment = {**os.environ, **KERNEL_ENVIRONMENT}
        try:
            run_sync(self.km.start_kernel)(
                extra_arguments=KERNEL_ARGUMENTS, env=environment, cwd=str(self.cwd)
            )
        except (RuntimeError, TimeoutError, OSError) as error:
            raise KernelError(f"the kernel did not start: {error}") from None
        if modules is None:
            run_sync(self._client_after)("", "starting", new_kernel=True).stop_channels()
        else:
            self.warm_up(modules, new_kernel=True)

    def warm_up(self, modules: list[str], new_kernel: bool = False) -> None:
        """Import ``modules`` and record the state every notebook starts from."""
        doing = "importing the notebooks' modules"
        code = warm_up_code(modules)
        run_sync(self._client_after)(code, doing, new_kernel=new_kernel).stop_channels()
        self.warm = True

    def run(self, code: str, doing: str) -> None:
        """Run ``code`` on the kernel: once warm, from the state of a fresh one (reset by
        :meth:`clean` first); before its warm-up, as it started. :class:`KernelCodeError`
        when it raises."""
        if not self.warm:  # nothing has run here yet: nothing to reset
            run_sync(self._client_after)(code, doing).stop_channels()
            return
        kc = self.clean()
        try:
            run_sync(self._run)(kc, code, doing)
        finally:
            kc.stop_channels()

    def clean(self):
        """Return the kernel to the state it had after :meth:`start`, and return a client
        connected to it for the next notebook (the caller stops its channels)."""
        return run_sync(self._client_after)(RESTORE_CODE, "resetting the kernel between notebooks")

    async def _client_after(self, code: str, doing: str, new_kernel: bool = False):
        """A new client, once it has run ``code`` (:meth:`_run`) and is known to receive
        IOPub: from the idle status that follows ``code``, else from jupyter_client's
        readiness check (which a ``new_kernel``, not yet answering, gets first)."""
        kc = self.km.client()
        # No heartbeat channel: whether the kernel lives is asked of its manager (the
        # process), and jupyter_client's heartbeat thread, stopped before it has started
        # (a client closed at once when the build stops), loops creating sockets until the
        # process runs out of them.
        kc.start_channels(hb=False)
        try:
            if new_kernel:
                await self._ready(kc, doing)
            msg_id = await self._run(kc, code, doing)
            if not await _seen_idle(kc, msg_id):
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
                raise KernelCodeError(doing, content.get("ename", ""), content.get("evalue", ""))
            return msg_id

    def kill(self) -> None:
        """Stop the kernel at once (no graceful shutdown: it costs seconds): SIGKILL first,
        then the manager's shutdown, which cleans up. The shutdown alone interrupts the
        kernel before it kills it, and a kernel interrupted between cells logs
        "KeyboardInterrupt caught in kernel" on the build's terminal, before its error."""
        with contextlib.suppress(Exception):  # already gone: nothing left to stop
            run_sync(self.km.signal_kernel)(signal.SIGKILL)
        with contextlib.suppress(Exception):
            run_sync(self.km.shutdown_kernel)(now=True)


#: Seconds to wait, once a request is answered, for its idle status on IOPub (the kernel
#: publishes it as it answers).
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
