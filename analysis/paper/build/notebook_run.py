"""One notebook run by papermill on a warm kernel into the staging folder, and how it ended:
ok, or failed, naming the notebook, its cell and why."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from analysis.paper.build.checked_inputs import notebook_parameters


@dataclass
class NotebookRun:
    """One executed notebook: where it went, how long it took, and how it failed."""

    notebook: Path
    executed: Path
    seconds: float
    failure: str | None = None
    kernel_ok: bool = True  # False: the kernel hung, died or did not start


def execute(
    notebook: Path, staging: Path, kernel, cell_timeout: float, checked: Path | None = None
) -> Path:
    """Run one notebook with papermill on the running ``kernel`` (a ``WarmKernel``), reset
    first, its outputs going to ``staging``, given the build's ``checked`` inputs when it
    reads them."""
    import papermill

    from analysis.paper.build.warm_engine import ENGINE

    executed = staging / "notebooks" / notebook.name
    kc = kernel.clean()
    try:
        papermill.execute_notebook(  # no cwd: papermill's chdir is not thread-safe
            str(notebook),
            str(executed),
            parameters=notebook_parameters(notebook, staging, checked),
            engine_name=ENGINE,
            km=kernel.km,
            kc=kc,
            stop=kernel.stop,
            execution_timeout=cell_timeout,
            partial_path=executed,
            request_save_on_cell_execute=False,
            progress_bar=False,
            log_output=False,
            kernel_name="python3",
        )
    finally:
        kc.stop_channels()
    return executed


def failing_cell(notebook: Path, source: str) -> str:
    """'cell index <n> (`first line`)' of the code cell of ``notebook`` whose source is
    ``source``: counted in the notebook as written, without the parameters cell papermill
    injects."""
    import nbformat

    cells = nbformat.read(notebook, as_version=4).cells
    source = (source or "").strip()
    index = next(
        (
            n
            for n, cell in enumerate(cells)
            if cell.cell_type == "code" and cell.source.strip() == source
        ),
        None,
    )
    first = next((line for line in source.splitlines() if line.strip()), "")
    where = f"cell index {index}" if index is not None else "a cell"
    return f"{where} (`{first}`)"


def _running_cell(notebook: Path, executed: Path) -> str:
    """The cell that was running when execution stopped, from papermill's saved copy."""
    import nbformat

    try:
        cells = nbformat.read(executed, as_version=4).cells
    except (OSError, ValueError):
        return "a cell"
    started = [
        cell
        for cell in cells
        if cell.cell_type == "code"
        and cell.get("metadata", {}).get("papermill", {}).get("start_time")
    ]
    return failing_cell(notebook, started[-1].source) if started else "its first cell"


def run_notebook(
    notebook: Path, staging: Path, kernel, cell_timeout: float, checked: Path | None = None
) -> NotebookRun:
    """Execute one notebook into ``staging`` on ``kernel`` (given the ``checked`` inputs) and
    report its outcome without raising; ``kernel_ok`` says whether the kernel can run the
    next notebook."""
    import papermill
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    from analysis.paper.build.kernels import KernelError

    started = time.perf_counter()
    executed = staging / "notebooks" / notebook.name
    executed.parent.mkdir(parents=True, exist_ok=True)
    kernel_ok = False
    try:
        execute(notebook, staging, kernel, cell_timeout, checked)
    except papermill.PapermillExecutionError as error:
        cell = failing_cell(notebook, error.source)
        failure = f"{notebook.name}: {cell} raised {error.ename}: {error.evalue}"
        kernel_ok = True
    except CellTimeoutError:
        cell = _running_cell(notebook, executed)
        failure = f"{notebook.name}: {cell} ran past {cell_timeout:g} s; its kernel was stopped"
    except DeadKernelError:
        cell = _running_cell(notebook, executed)
        failure = f"{notebook.name}: the kernel died while running {cell}"
    except KernelError as error:
        failure = f"{notebook.name}: {error}"
    except Exception as error:  # anything else: the kernel is not trusted again
        failure = f"{notebook.name}: {type(error).__name__}: {error}"
    else:
        failure = None
        kernel_ok = True
    return NotebookRun(notebook, executed, time.perf_counter() - started, failure, kernel_ok)
