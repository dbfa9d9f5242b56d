"""Every per-trial layout under ``data/runs`` (or any folder), read as one trials table."""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from analysis import paths as project_paths
from analysis.files.schemas import RUN_PLAN
from analysis.files.typed import read_typed
from analysis.trials.detail import DETAIL_FILENAME, load_scenarios_detail
from analysis.trials.run_root import RUN_PLAN_FILENAME, load_run_root
from analysis.trials.schema import VerdictError, combine_trials
from analysis.trials.tidy import TIDY_SUFFIXES, load_tidy

#: The runner's tidy export inside the reference-policies folder.
REFERENCE_TIDY_FILENAME = "trials.csv"


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


def _hidden(path: Path, base: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(base).parts)


def discover_runs(runs_dir: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
    """What ``load_trials`` reads under ``runs_dir`` (default ``paths.runs_dir()``).

    Returns entries ``{kind, paths, source}``: the release verdict file
    (``<results>/scenarios-detail.json``, source ``published``); raw run roots (folders with a
    ``RUN_PLAN.json``; shards grouped by ``run_id``; source ``reference-policy`` under the
    reference-policies folder, else ``run``); tidy ``*.parquet``/``*.csv``/``*.jsonl`` tables
    outside the results folder and outside run roots; Inspect logs (``*.eval``, timestamped
    ``*.json``; ``analysis.trials.inspect_log``) there too, one condition each. Raw roots under the
    reference-policies folder are skipped when the runner's tidy ``trials.csv`` is there (it
    holds the same trials). A ``runs_dir`` given that is no folder is an error.
    """
    base = Path(runs_dir) if runs_dir is not None else project_paths.runs_dir()
    results = base / project_paths.release()
    reference = base / project_paths.REFERENCE_RUNS_NAME
    found: list[dict[str, Any]] = []
    if not base.is_dir():
        if runs_dir is not None:  # a folder asked for by name: a typo is not an empty run
            raise FileNotFoundError(f"{base}: no such folder of runs")
        return found
    detail = results / DETAIL_FILENAME
    if detail.is_file():
        found.append({"kind": "detail", "paths": [detail], "source": "published"})

    roots = sorted(
        p.parent
        for p in base.rglob(RUN_PLAN_FILENAME)
        if not _inside(p, results) and not _hidden(p, base)
    )
    reference_tidy = (reference / REFERENCE_TIDY_FILENAME).is_file()
    groups: dict[tuple[str, str], list[Path]] = {}
    for root in roots:
        is_reference = _inside(root, reference)
        if is_reference and reference_tidy:
            continue
        plan = read_typed(root / RUN_PLAN_FILENAME, RUN_PLAN, error=VerdictError)
        run_id = str(plan.get("run_id"))
        source = "reference-policy" if is_reference else "run"
        groups.setdefault((run_id, source), []).append(root)
    for (_, source), members in sorted(groups.items()):
        found.append({"kind": "run_root", "paths": members, "source": source})

    for suffix in TIDY_SUFFIXES:
        for table in sorted(base.rglob(f"*{suffix}")):
            if (
                _inside(table, results)
                or _hidden(table, base)
                or any(_inside(table, root) for root in roots)
            ):
                continue
            found.append({"kind": "tidy", "paths": [table], "source": None})

    from analysis.trials.inspect_log import is_inspect_log

    for log in sorted(p for p in base.rglob("*") if p.is_file() and is_inspect_log(p)):
        if _inside(log, results) or _hidden(log, base) or any(_inside(log, r) for r in roots):
            continue
        found.append({"kind": "inspect", "paths": [log], "source": "run"})
    return found


def _load_entry(entry: dict[str, Any], scenarios: pd.DataFrame | None) -> pd.DataFrame:
    kind, members, source = entry["kind"], entry["paths"], entry["source"]
    if kind == "detail":
        return load_scenarios_detail(members[0], source=source, scenarios=scenarios)
    if kind == "run_root":
        return load_run_root(members, source=source, scenarios=scenarios)
    if kind == "inspect":
        from analysis.trials.inspect_log import load_inspect_log

        return load_inspect_log(members[0], source=source, scenarios=scenarios)
    return load_tidy(members[0], source=source, scenarios=scenarios)


def _classify(path: Path) -> list[dict[str, Any]]:
    """What ``load_trials`` reads for one path given: a run root; any other folder, as
    :func:`discover_runs` finds in it (run roots, Inspect logs, tidy tables, such as the
    reference-policies folder or a folder of logs); a file by its kind."""
    if not path.exists():
        raise VerdictError(f"{path}: no such file or folder")
    if path.is_dir():
        if (path / RUN_PLAN_FILENAME).is_file():
            return [{"kind": "run_root", "paths": [path], "source": "run"}]
        if (path / DETAIL_FILENAME).is_file():  # a release's results folder
            return [{"kind": "detail", "paths": [path / DETAIL_FILENAME], "source": "published"}]
        if (path / project_paths.RELEASE_MANIFEST).is_file():
            raise VerdictError(
                f"{path}: a release's results folder without {DETAIL_FILENAME} (the public "
                "release leaves the per-trial verdicts out)"
            )
        found = discover_runs(path)
        if not found:
            raise VerdictError(
                f"{path}: holds no run root ({RUN_PLAN_FILENAME}), no Inspect log (*.eval, "
                f"*.json) and no tidy table ({', '.join('*' + s for s in TIDY_SUFFIXES)})"
            )
        return found
    from analysis.trials.inspect_log import is_inspect_log

    if is_inspect_log(path):
        return [{"kind": "inspect", "paths": [path], "source": "run"}]
    if path.suffix.lower() == ".json":
        return [{"kind": "detail", "paths": [path], "source": "published"}]
    if path.suffix.lower() in (*TIDY_SUFFIXES, ".ndjson"):
        return [{"kind": "tidy", "paths": [path], "source": None}]
    raise VerdictError(f"{path}: not a verdict file, run root or tidy table")


class NoPublishedVerdictsWarning(UserWarning):
    """The runs folder holds no published per-trial verdicts (``scenarios-detail.json``)."""


_SAID: set[str] = set()


def missing_verdicts_notice(base: Path) -> str:
    """One line: the runs folder ``base`` lacks the release's per-trial verdicts, and where
    ``scenarios-detail.json`` goes."""
    results = base / project_paths.release()  # where discover_runs looks for it
    release = project_paths.release_dir() / "results" / project_paths.release() / DETAIL_FILENAME
    return (
        f"no published per-trial verdicts: {results / DETAIL_FILENAME} is absent (the public "
        f"release leaves it out), so only the reference policies and local runs are loaded; "
        f"to add them, put the release's {DETAIL_FILENAME} at {release} and run `make data`, "
        f"or pass its path: load_trials([...path...])"
    )


def _say_once_if_unpublished(entries: list[dict[str, Any]], base: Path) -> None:
    """Warn, once per runs folder and process, that no published verdicts were found."""
    if any(entry["kind"] == "detail" for entry in entries) or str(base) in _SAID:
        return
    _SAID.add(str(base))
    warnings.warn(missing_verdicts_notice(base), NoPublishedVerdictsWarning, stacklevel=3)


VerdictPaths = str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None


def verdict_path_list(paths: VerdictPaths) -> list[str] | None:
    """``paths`` as :func:`load_trials` reads them: None stays None (discover), one path or
    several become a list of strings."""
    if paths is None:
        return None
    return [str(paths)] if isinstance(paths, (str, os.PathLike)) else [str(p) for p in paths]


def load_trials(
    paths: VerdictPaths = None,
    *,
    runs_dir: str | os.PathLike[str] | None = None,
    scenarios: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Every trial as one trials table.

    A run given twice (its raw root and its tidy export) is read once. Discovering a runs
    folder without the published per-trial verdicts warns once
    (``NoPublishedVerdictsWarning``), naming where ``scenarios-detail.json`` goes.

    Parameters
    ----------
    paths : str, PathLike or sequence of them, optional
        What to read: verdict files (``*.json``), run roots, tidy tables, Inspect logs
        (``*.eval``, timestamped ``*.json``) and folders holding any of them (the
        reference-policies folder, a folder of logs; read as ``discover_runs`` reads one).
        None: everything ``discover_runs(runs_dir)`` finds.
    runs_dir : str or PathLike, optional
        The runs folder discovered when ``paths`` is None. None: ``paths.runs_dir()`` (the
        imported ``data/runs``), resolved at the call.
    scenarios : DataFrame, optional
        The scenario table (:func:`load_scenarios`); when given, it must contain every
        scenario id the trials name.

    Returns
    -------
    DataFrame
        One row per (source, scenario, condition, trial): ``scenario_id``, ``condition``
        (``"model (reasoning)"``), ``model``, ``reasoning``, ``trial`` (1, 2, ...),
        ``commit_permission`` (the decision: ``allowed``, ``blocked`` or missing),
        ``status`` (``ok``, or why there is no decision) and ``source`` (``published``,
        ``reference-policy`` or ``run``).

    Raises
    ------
    VerdictError
        A file that is not a verdict file, run root or tidy table, or a scenario id that
        ``scenarios`` lacks.

    See Also
    --------
    score_cells : These trials scored by the published rules.
    load_checked_cells : Trials and cells, checked against the published counts.
    with_metadata : Scenario columns appended to the trials.

    Examples
    --------
    On the imported release (its reference policies and runs, when present):

    >>> from analysis import load_scenarios
    >>> scenarios = load_scenarios()
    >>> trials = load_trials(scenarios=scenarios)
    >>> trials.columns.tolist()
    ['scenario_id', 'condition', 'model', 'reasoning', 'trial', 'commit_permission', 'status',
     'source']
    >>> trials[["scenario_id", "condition", "trial", "commit_permission"]].head(3)
                    scenario_id             condition  trial commit_permission
    0  account-cancellation-001  always-hold (policy)      1           blocked
    1  account-cancellation-001  always-hold (policy)      2           blocked
    2  account-cancellation-001  always-hold (policy)      3           blocked
    >>> bool(trials["scenario_id"].isin(scenarios["scenario_id"]).all())
    True
    """
    given = verdict_path_list(paths)
    if given is None:
        entries = discover_runs(runs_dir)
    else:
        entries = [entry for p in given for entry in _classify(Path(p))]
    if given is None:
        base = Path(runs_dir) if runs_dir is not None else project_paths.runs_dir()
        _say_once_if_unpublished(entries, base)
    frames = [_load_entry(entry, scenarios) for entry in entries]
    return combine_trials(_once_each(entries, frames))


def _trial_set(frame: pd.DataFrame, key: tuple[str, str]) -> pd.DataFrame:
    """The trials of ``key`` = (source, condition) in ``frame``, as comparable strings."""
    columns = ["scenario_id", "trial", "commit_permission", "status"]
    mine = (frame["source"].astype(str) == key[0]) & (frame["condition"].astype(str) == key[1])
    return frame.loc[mine, columns].astype(str).sort_values(columns[:2], ignore_index=True)


def _once_each(entries: list[dict[str, Any]], frames: list[pd.DataFrame]) -> list[pd.DataFrame]:
    """Each (source, condition) from one place: a run found twice with the same trials (its
    raw root and its tidy export) is counted once; with different trials it is refused,
    naming both places."""
    seen: dict[tuple[str, str], tuple[str, pd.DataFrame]] = {}
    kept = []
    for entry, frame in zip(entries, frames, strict=True):
        where = ", ".join(str(p) for p in entry["paths"])
        pairs = frame[["source", "condition"]].drop_duplicates().astype(str)
        again = []
        for key in pairs.itertuples(index=False, name=None):
            if key not in seen:
                seen[key] = (where, frame)
                continue
            first, other = seen[key]
            if not _trial_set(other, key).equals(_trial_set(frame, key)):
                raise VerdictError(
                    f"{where}: condition {key[1]} ({key[0]}) is also in {first} with "
                    "different trials; a run must be read from one place"
                )
            again.append(key)
        if again:
            keys = pd.MultiIndex.from_frame(frame[["source", "condition"]].astype(str))
            frame = frame.loc[~keys.isin(again)]
        if len(frame):
            kept.append(frame.reset_index(drop=True))
    return kept
