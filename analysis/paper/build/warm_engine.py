"""The papermill engine of the build: papermill's nbclient engine on a warm kernel.

:class:`WarmEngine` runs a notebook on a kernel that is already running (``km``), through a
client already connected to it (``kc``; see
:meth:`analysis.paper.build.kernels.WarmKernel.clean`), and leaves both running. It lives
apart from :mod:`analysis.paper.build.kernels` so that starting kernels does not wait for
papermill's imports (about a second).
"""

from __future__ import annotations

import functools
import threading

from papermill.clientwrap import PapermillNotebookClient
from papermill.engines import NBClientEngine, papermill_engines
from papermill.iorw import write_ipynb

from analysis.paper.build.kernels import START_TIMEOUT, KernelError

#: The papermill engine that runs a notebook on a kernel that is already running.
ENGINE = "steerbench-warm"


class WarmEngine(NBClientEngine):
    """Papermill's nbclient engine on the kernel manager passed as ``km`` and the client
    passed as ``kc``, connected already (see :meth:`WarmKernel.clean`); it leaves both
    running. When execution stops on anything but a failing cell (a timeout, a dead
    kernel, the event ``stop`` set before a cell starts), the notebook as far as it ran is
    written to ``partial_path``."""

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
        stop=None,
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
        if stop is not None:
            client.on_cell_start = functools.partial(_unless_stopped, stop)
        try:
            return client.execute()
        except Exception:
            if partial_path is not None:
                write_ipynb(nb_man.nb, str(partial_path))
            raise


def _unless_stopped(stop: threading.Event, cell, cell_index: int) -> None:
    if stop.is_set():
        raise KernelError("stopped before a cell: the build ended")


papermill_engines.register(ENGINE, WarmEngine)
