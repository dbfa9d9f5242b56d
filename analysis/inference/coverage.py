"""Coverage and type-I error of registered methods on releases drawn by
:mod:`analysis.inference.calibration`, with Monte Carlo error, held to the standard.

Measurement (:func:`summarise`): an interval covers when ``low <= truth <= high``; a test
rejects when ``p < 0.05`` (its null true by construction); a set covers as its method says.
A bound (a band claimed only to be no wider than a valid interval, never claimed as an
interval itself) holds in a draw when it is no wider than that valid interval and the valid
interval covers. Refused (NaN) results count apart. The Monte Carlo standard error treats
each simulated release as one cluster (the results of one release share its scenarios).
:func:`verdict` holds each to the standard: a 95% interval, set or bound covers at least
:data:`MIN_COVERAGE` within Monte Carlo error (``coverage + Z_MC * se >= MIN_COVERAGE``), a
5% test rejects a true null at most :data:`MAX_REJECTION` (``rate - Z_MC * se <=
MAX_REJECTION``), a stated power is reached within :data:`POWER_TOLERANCE` and Monte Carlo
error (``|rate - nominal| <= POWER_TOLERANCE + Z_MC * se``), and no interval has zero
width.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd

from analysis.inference.calibration import ESTIMANDS, Draw, Setting, draw

#: The standard: a 95% interval or set covers at least this, a 5% test rejects a true null
#: at most that.
MIN_COVERAGE = 0.94
MAX_REJECTION = 0.06
#: How many Monte Carlo standard errors a result may fall short of the standard.
Z_MC = 1.96
#: How far (in power, either way) the achieved rejection rate may lie from the power the
#: package states, beyond Monte Carlo error: one point, the slack the coverage standard
#: allows a 95% interval (94%). A power row is two-sided and its nominal a point: held to
#: Monte Carlo error alone, an exact power function fails 5% of rows by chance, and any
#: approximation fails once the releases are many enough. Power rows run on many releases
#: (``Method.rep_scale``) so that the Monte Carlo error is itself below a point.
POWER_TOLERANCE = 0.01
#: What a method returns: a 95% interval, a 5% test (its null true), a rank set, a 5%
#: test at a true difference whose power the package states (``nominal``), or a bound on
#: the width of a valid 95% interval (``bound``).
KINDS = ("interval", "test", "set", "power", "bound")


@dataclass(frozen=True)
class Method:
    """One registered method: ``run(draw)`` returns a frame with a ``rep`` column and, by
    ``kind``, ``low, high, truth`` (interval), ``p`` (test: its null true by construction),
    ``covered`` (set: 1/0, NaN refused), ``p, nominal`` (power: the test's p at a true
    difference, and the power the package claims for it) or ``low, high, truth, narrower``
    (bound: a valid 95% interval, and 1 where the method's band is no wider than it, 0 where
    it is wider, NaN where the method gives no band). ``settings`` is its grid;
    ``fast`` the few settings the quick tier measures; ``rep_scale`` multiplies the
    releases a setting draws for it (power rows: many, as they are cheap)."""

    name: str
    kind: str
    quantity: str
    estimand: str
    run: Callable[[Draw], pd.DataFrame]
    settings: tuple[Setting, ...]
    note: str = ""
    fast: tuple[Setting, ...] = field(default=())
    rep_scale: int = 1

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind {self.kind!r}; choices: {', '.join(KINDS)}")
        if self.estimand not in ESTIMANDS:
            raise ValueError(f"estimand {self.estimand!r}; choices: {', '.join(ESTIMANDS)}")
        if self.kind == "test" and any(s.difference for s in self.settings):
            raise ValueError(f"{self.name}: a type-I error needs settings with difference 0")


def outcomes(frame: pd.DataFrame, kind: str) -> pd.DataFrame:
    """``rep, hit, refused, zero_width`` per result: ``hit`` covered (interval, set),
    rejected (test) or, for a bound, no wider than the valid interval which covers; NaN
    where refused."""
    if kind in ("interval", "bound"):
        low = pd.to_numeric(frame["low"], errors="coerce").to_numpy(dtype="float64")
        high = pd.to_numeric(frame["high"], errors="coerce").to_numpy(dtype="float64")
        truth = frame["truth"].to_numpy(dtype="float64")
        refused = np.isnan(low) | np.isnan(high)
        tol = 1e-9  # floating error of a bound equal to the truth
        hit = np.where(refused, np.nan, (low <= truth + tol) & (truth - tol <= high))
        zero = ~refused & (np.nan_to_num(high - low, nan=1.0) <= 1e-12)
        if kind == "bound":
            narrower = pd.to_numeric(frame["narrower"], errors="coerce").to_numpy("float64")
            refused = refused | np.isnan(narrower)
            hit = np.where(refused, np.nan, (hit == 1) & (narrower == 1))
            zero = zero & ~refused
    elif kind in ("test", "power"):
        p = pd.to_numeric(frame["p"], errors="coerce").to_numpy(dtype="float64")
        refused = np.isnan(p)
        hit, zero = np.where(refused, np.nan, p < 0.05), np.zeros(len(p), dtype=bool)
    else:
        hit = pd.to_numeric(frame["covered"], errors="coerce").to_numpy(dtype="float64")
        refused, zero = np.isnan(hit), np.zeros(len(hit), dtype=bool)
    return pd.DataFrame(
        {"rep": frame["rep"].to_numpy(), "hit": hit, "refused": refused, "zero_width": zero}
    )


def cluster_share(hit: np.ndarray, cluster: np.ndarray) -> tuple[float, float]:
    """(share, Monte Carlo SE) of the non-NaN ``hit``, each ``cluster`` (release) one unit:
    the ratio estimator's cluster-robust SE.

    >>> share, se = cluster_share(np.array([1.0, 0.0, 1.0, 1.0]), np.array([0, 1, 2, 3]))
    >>> share, round(se, 4)
    (0.75, 0.25)
    """
    keep = ~np.isnan(hit)
    if not keep.any():
        return np.nan, np.nan
    y = pd.Series(hit[keep]).groupby(cluster[keep]).agg(["sum", "count"])
    share = y["sum"].sum() / y["count"].sum()
    k = len(y)
    if k < 2:
        return float(share), np.nan
    resid = y["sum"] - share * y["count"]
    se = np.sqrt((resid**2).sum() * k / (k - 1)) / y["count"].sum()
    return float(share), float(se)


def summarise(frame: pd.DataFrame, kind: str) -> dict:
    """``share`` (coverage or rejection rate), ``mc_se``, ``results``, ``refused`` (share),
    ``zero_width`` (count) of one method's results on one setting; for power, ``nominal``
    (the mean claimed power)."""
    out = outcomes(frame, kind)
    nominal = float(frame["nominal"].mean()) if kind == "power" else np.nan
    share, se = cluster_share(out["hit"].to_numpy(), out["rep"].to_numpy())
    return {
        "share": share,
        "mc_se": se,
        "results": len(out),
        "refused": float(out["refused"].mean()) if len(out) else np.nan,
        "zero_width": int(out["zero_width"].sum()),
        "nominal": nominal,
    }


def verdict(
    kind: str, share: float, mc_se: float, zero_width: int = 0, nominal: float = np.nan
) -> str:
    """``pass`` or ``fail`` against the standard, ``refused`` where nothing was given.

    An interval, set or bound passes when its coverage reaches :data:`MIN_COVERAGE` within
    :data:`Z_MC` Monte Carlo SEs (and no interval has zero width); a test when its type-I
    error is at most :data:`MAX_REJECTION` within them; a power when the achieved rejection
    rate lies within :data:`POWER_TOLERANCE` (one point) plus :data:`Z_MC` Monte Carlo SEs
    of the ``nominal`` power, either way: the stated tolerance, the coverage standard's one
    point of slack, keeps an exact power function from failing 5% of rows by chance, and
    the power rows' many releases keep the Monte Carlo error below it.

    Parameters
    ----------
    kind : str
        One of :data:`KINDS`.
    share : float
        The coverage, rejection rate or achieved power.
    mc_se : float
        Its Monte Carlo standard error (NaN: taken as 0).
    zero_width : int
        Intervals of no width among the results.
    nominal : float
        The stated power (``kind="power"``).

    Returns
    -------
    str
        ``pass``, ``fail`` or ``refused``.

    Examples
    --------
    >>> verdict("interval", 0.93, 0.006), verdict("interval", 0.93, 0.004)
    ('pass', 'fail')
    >>> verdict("test", 0.07, 0.004), verdict("interval", 0.95, 0.01, zero_width=1)
    ('fail', 'fail')
    >>> verdict("power", 0.77, 0.02, nominal=0.8), verdict("power", 0.7, 0.02, nominal=0.8)
    ('pass', 'fail')
    >>> verdict("power", 0.815, 0.004, nominal=0.8), verdict("power", 0.82, 0.004, nominal=0.8)
    ('pass', 'fail')
    """
    if not np.isfinite(share):
        return "refused"
    se = mc_se if np.isfinite(mc_se) else 0.0
    if kind == "test":
        return "pass" if share - Z_MC * se <= MAX_REJECTION else "fail"
    if kind == "power":
        return "pass" if abs(share - nominal) <= POWER_TOLERANCE + Z_MC * se else "fail"
    return "pass" if share + Z_MC * se >= MIN_COVERAGE and not zero_width else "fail"


def measure(method: Method, setting: Setting, reps: int, seed: int) -> dict:
    """One row: ``method, kind, quantity, estimand, setting``, :func:`summarise`'s values,
    ``verdict``, ``reps``, ``seconds``."""
    started = time.perf_counter()
    result = method.run(draw(setting, reps, seed))
    row = summarise(result, method.kind)
    return {
        "method": method.name,
        "kind": method.kind,
        "quantity": method.quantity,
        "estimand": method.estimand,
        "setting": setting.label(),
        **row,
        "verdict": verdict(
            method.kind, row["share"], row["mc_se"], row["zero_width"], row["nominal"]
        ),
        "reps": reps,
        "seconds": time.perf_counter() - started,
    }


def grid(
    methods: Sequence[Method],
    reps: int,
    seed: int,
    fast: bool = False,
    jobs: int = 1,
    progress: Callable[[list[dict]], None] | None = None,
) -> pd.DataFrame:
    """:func:`measure` for every (method, setting) of ``methods`` (``fast``: their quick
    settings) on ``reps`` releases (times the method's ``rep_scale``), each setting drawn
    from its own seed (the same for every method, so methods
    are compared on the same releases); ``jobs`` > 1 runs the settings in forked processes.
    ``progress`` is called with each setting's rows as they come. Rows come in the order of
    ``methods``, then of each one's settings."""
    tasks: dict[tuple[Setting, int], list[int]] = {}
    for i, method in enumerate(methods):
        for setting in method.fast if fast else method.settings:
            tasks.setdefault((setting, reps * method.rep_scale), []).append(i)
    _TASKS.update(methods=list(methods), seed=seed)
    done = []
    if jobs <= 1:
        results = map(_task, tasks.items())
    else:
        import multiprocessing

        pool = multiprocessing.get_context("fork").Pool(jobs)
        results = pool.imap_unordered(_task, list(tasks.items()), chunksize=1)
    for part in results:
        done.append(part)
        if progress is not None:
            progress(part)
    if jobs > 1:
        pool.close()
        pool.join()
    rows = {(row["index"], row["setting"]): row for part in done for row in part}
    ordered = [
        rows[(i, setting.label())]
        for i, method in enumerate(methods)
        for setting in (method.fast if fast else method.settings)
    ]
    return pd.DataFrame(ordered).drop(columns="index")


_TASKS: dict = {}


def _task(task: tuple[tuple[Setting, int], list[int]]) -> list[dict]:
    """Every method of one setting and number of releases, on the same releases (so an
    adapter may reuse its work between entries of one function)."""
    (setting, reps), indices = task
    seed = _TASKS["seed"] + _setting_seed(setting)
    return [{**measure(_TASKS["methods"][i], setting, reps, seed), "index": i} for i in indices]


def _setting_seed(setting: Setting) -> int:
    """A seed offset fixed by the setting's values (not by the order methods run in)."""
    text = repr(tuple(getattr(setting, f.name) for f in fields(setting)))
    return zlib.crc32(text.encode()) % 1_000_003


def markdown_table(table: pd.DataFrame) -> str:
    """The grid as a Markdown table: method, setting, share with its MC SE, refused share,
    zero-width count and verdict."""
    nominal = table["nominal"] if "nominal" in table else pd.Series(np.nan, index=table.index)
    shown = pd.DataFrame(
        {
            "method": table["method"],
            "quantity (estimand)": table["quantity"] + " (" + table["estimand"] + ")",
            "setting": table["setting"],
            "coverage / type-I": [
                ("" if not np.isfinite(v) else f"{100 * v:.1f}%")
                + {
                    "test": " (type-I)",
                    "power": f" (power; nominal {100 * n:.1f}%)",
                    "bound": " (bound)",
                }.get(k, "")
                for v, k, n in zip(table["share"], table["kind"], nominal, strict=True)
            ],
            "MC SE": table["mc_se"].map(lambda v: "" if not np.isfinite(v) else f"{100 * v:.1f}"),
            "refused": table["refused"].map(lambda v: f"{100 * v:.0f}%"),
            "zero-width": table["zero_width"],
            "verdict": table["verdict"],
        }
    )
    return shown.to_markdown(index=False)


def _worst(given: pd.DataFrame, kind: str):
    """The row index of the worst result: the lowest coverage, the highest type-I error,
    the power furthest from its nominal in Monte Carlo errors."""
    if kind == "test":
        return given["share"].idxmax()
    if kind == "power":
        return ((given["share"] - given["nominal"]).abs() / given["mc_se"]).idxmax()
    return given["share"].idxmin()


def _shown(row: pd.Series, kind: str) -> str:
    text = f"{100 * row['share']:.1f}% ({100 * row['mc_se']:.1f})"
    return text + (f", nominal {100 * row['nominal']:.1f}%" if kind == "power" else "")


def summary_table(table: pd.DataFrame) -> str:
    """Per method, quantity and estimand: settings measured, how many fail the standard,
    the worst coverage (or highest type-I error) with its MC SE and setting, and the
    largest share refused, as a Markdown table."""
    rows = []
    keys = ["method", "kind", "quantity", "estimand"]
    for (method, kind, quantity, estimand), part in table.groupby(keys, sort=False):
        given = part.loc[part["share"].notna()]
        worst = None if given.empty else given.loc[_worst(given, kind)]
        rows.append(
            {
                "method": method,
                "quantity (estimand)": f"{quantity} ({estimand})"
                + {
                    "test": ", type-I error",
                    "power": ", power",
                    "bound": ", no wider than a valid 95% CI that covers",
                }.get(kind, ""),
                "settings": len(part),
                "failing": int((part["verdict"] == "fail").sum()),
                "worst": "" if worst is None else _shown(worst, kind),
                "at": "" if worst is None else worst["setting"],
                "most refused": f"{100 * part['refused'].max():.0f}%",
            }
        )
    return pd.DataFrame(rows).to_markdown(index=False)
