"""The state a reused notebook kernel gives every notebook: as if the kernel had just started.

The build imports the analysis stack once per kernel, calls :func:`snapshot`, and calls
:func:`restore` before each notebook. ``restore`` empties the user namespace (execution
counts start at 1 again), closes every figure, puts back matplotlib's rcParams, pandas' and
numpy's options, the random states, warnings filters, environment, working directory and
``sys.path``, and forgets every ``analysis`` module, so that the next notebook imports the
package afresh (module-level state included) while pandas, matplotlib, statsmodels and the
rest stay imported. The modules in :data:`KEPT` stay too: their only state is a cache of
results that depend on their arguments alone (the figures' embedded font subsets, the
digests of input files by their path, inode, size and modification time). The
package's compiled code is kept as well (:func:`keep_compiled_code`): each notebook runs
its modules afresh without compiling them again.

The objects alive at the snapshot (the imported stack, some 360,000 of them) are put out of
the garbage collector's reach with :func:`gc.freeze`: they live as long as the kernel, and
every full collection (two in each reset, more while a notebook runs) would otherwise walk
them all again, about 0.3 s each. Each reset freezes what outlives a notebook too, and
drops the notebook's names before IPython's own reset collects, so that its collection
frees the notebook's objects rather than walking them.
"""

from __future__ import annotations

import gc
import importlib
import importlib.machinery
import os
import random
import sys
import warnings
from types import CodeType

#: The name this module stays importable under once ``analysis`` is forgotten.
ALIAS = "steerbench_kernel_state"
#: The package whose modules every notebook imports afresh.
PACKAGE = "analysis"
#: The package's modules kept across notebooks, whose only state is a cache of pure results.
KEPT = ("analysis.paper.pdf_fonts", "analysis.files.digests")

_saved: dict = {}
#: The package's code objects by source file, modification time and size.
_compiled: dict[tuple[str, int, int], CodeType] = {}


def _forget_package() -> None:
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        if name not in KEPT:
            del sys.modules[name]


def keep_compiled_code() -> None:
    """Compile each module of the package once per kernel: a module imported afresh runs
    the code compiled the first time, as long as its file is unchanged. Without it, and
    without a ``.pyc`` (``PYTHONDONTWRITEBYTECODE``, as on the build machine), every
    notebook compiled the package again, about 0.07 s each; nothing is written to disk."""
    loader = importlib.machinery.SourceFileLoader
    compile_module = loader.get_code
    if getattr(compile_module, "keeps_compiled_code", False):
        return

    def get_code(self, fullname: str) -> CodeType | None:
        if fullname != PACKAGE and not fullname.startswith(PACKAGE + "."):
            return compile_module(self, fullname)
        path = self.get_filename(fullname)
        stat = os.stat(path)
        key = (path, stat.st_mtime_ns, stat.st_size)
        if key not in _compiled:
            _compiled[key] = compile_module(self, fullname)
        return _compiled[key]

    get_code.keeps_compiled_code = True  # type: ignore[attr-defined]
    loader.get_code = get_code  # type: ignore[method-assign]


def snapshot() -> None:
    """Record the state :func:`restore` returns to (call once the stack is imported)."""
    import matplotlib as mpl
    import numpy as np

    sys.modules[ALIAS] = sys.modules[__name__]
    keep_compiled_code()
    for name in KEPT:
        importlib.import_module(name)
    _forget_package()
    _saved.update(
        rc={key: value for key, value in mpl.rcParams.items() if key != "backend"},
        numpy_errors=np.geterr(),
        numpy_print=np.get_printoptions(),
        numpy_random=np.random.get_state(),
        random=random.getstate(),
        warnings=list(warnings.filters),
        environ=dict(os.environ),
        cwd=os.getcwd(),
        path=list(sys.path),
    )
    gc.collect()  # the forgotten package and the imports' garbage go before the freeze
    gc.freeze()


def restore() -> None:
    """Return the kernel to the recorded state (see the module docstring)."""
    import matplotlib as mpl
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd
    from IPython import get_ipython

    if not _saved:
        raise RuntimeError("kernel state: restore() before snapshot()")
    shell = get_ipython()
    _forget_package()
    if shell is not None:
        _clear_namespace(shell)
        shell.reset(new_session=True)
    plt.close("all")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mpl.rcParams.update(_saved["rc"])
        pd.reset_option("all")
    np.seterr(**_saved["numpy_errors"])
    np.set_printoptions(**_saved["numpy_print"])
    np.random.set_state(_saved["numpy_random"])
    random.setstate(_saved["random"])
    warnings.filters[:] = _saved["warnings"]
    warnings._filters_mutated()  # type: ignore[attr-defined]  # drop cached decisions
    os.environ.clear()
    os.environ.update(_saved["environ"])
    os.chdir(_saved["cwd"])
    sys.path[:] = _saved["path"]
    gc.collect()  # the figures closed since, and whatever the reset's collection left
    gc.freeze()  # what lives on (caches, the shell's own state) is walked no more


def _clear_namespace(shell) -> None:
    """Drop the notebook's names before IPython's reset, which clears them too but only
    after the full collection its output cache's flush runs: that collection then frees
    the notebook's objects (and the package's forgotten modules) instead of walking them
    while they are still held, and the one :func:`restore` runs after it has little left
    to walk."""
    for name in [n for n in shell.user_ns if n not in ("__builtin__", "__builtins__", "__name__")]:
        del shell.user_ns[name]
