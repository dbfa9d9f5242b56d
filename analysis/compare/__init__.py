"""Compare two releases: ``compare_releases(base, head)`` (``make compare``).

Each release is imported and built in its own folder by the project's own build
(:mod:`analysis.compare.builds`), then the two builds are compared: scenarios, conditions
and their Table 2 values with an interval for each change, ranks, every cited number and
the claims ledger. The outputs go to ``compare/<base>..<head>/``.

May import: :mod:`analysis.files`, :mod:`analysis.paths`, :mod:`analysis.corpus`,
:mod:`analysis.trials`, :mod:`analysis.scoring`, :mod:`analysis.inference`,
:mod:`analysis.release`, :mod:`analysis.paper`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from analysis import paths
from analysis.compare.builds import CompareError, ReleaseBuild, build_release, locate

__all__ = ["CompareError", "compare_releases", "comparison_name"]


def comparison_name(base: ReleaseBuild, head: ReleaseBuild) -> str:
    """``<base>..<head>``, each release named by its folder; when the two folders share a
    name, each name carries its release digest's first 8 characters."""
    if base.name == head.name and base.digest != head.digest:
        return f"{base.name}-{base.digest[:8]}..{head.name}-{head.digest[:8]}"
    return f"{base.name}..{head.name}"


def compare_releases(
    base: str | os.PathLike[str],
    head: str | os.PathLike[str],
    out_root: str | os.PathLike[str] | None = None,
) -> Path:
    """Build (or reuse the builds of) releases ``base`` and ``head`` and write their
    comparison.

    Each release is imported, verified and built by the project's own build in
    ``<out_root>/.builds/<key>/`` (the key names the release's digest and folder), reused
    while nothing it reads changed; the comparison goes to ``<out_root>/<base>..<head>/``,
    each release named by its folder.

    Parameters
    ----------
    base : str or PathLike
        The earlier release's folder.
    head : str or PathLike
        The later release's folder.
    out_root : str or PathLike, optional
        Where the builds and the comparison go. None: the project's ``compare/``.

    Returns
    -------
    Path
        The comparison's folder: ``index.html`` (the page), ``changes.json`` (its summary
        and every change) and the CSV tables ``scenarios.csv``, ``conditions.csv``,
        ``table2-changes.csv`` (each condition's Table 2 values, base and head, with an
        interval for each change), ``ranks.csv``, ``numbers.csv`` (every cited number) and
        ``claims.csv`` (the claims ledger).

    Raises
    ------
    CompareError
        A release that fails its own verification or build; nothing is written then.

    See Also
    --------
    import_release : The import and verification each side goes through.
    standings : Runs ranked beside one release's Table 2.

    Examples
    --------
    The imported release compared with itself, in the project's ``compare/`` folder (a
    build made before, by ``make compare`` or an earlier call, is reused):

    >>> import json
    >>> import pandas as pd
    >>> from analysis import paths
    >>> release = paths.release_dir()
    >>> folder = compare_releases(release, release)  # doctest: +ELLIPSIS
    Building ... in ...
    Building ... in ...
    >>> folder.name
    'steerbench-work..steerbench-work'
    >>> json.loads((folder / "changes.json").read_text())["summary_lines"]
    ['Comparing steerbench-work (v2026-05) with steerbench-work (v2026-05).', 'Nothing changed.']
    >>> table2 = pd.read_csv(folder / "table2-changes.csv")
    >>> table2[["condition", "metric", "base", "head", "change"]].head(3).round(3)
                condition               metric   base   head  change
    0  gpt-5.4-nano (off)  mean_trial_accuracy  0.585  0.585     0.0
    1  gpt-5.4-nano (off)       modal_accuracy  0.575  0.575     0.0
    2  gpt-5.4-nano (off)             pass_all  0.557  0.557     0.0

    A folder that holds no release is refused:

    >>> from analysis.compare import CompareError
    >>> try:
    ...     compare_releases("/no/such/release", "/no/such/release")
    ... except CompareError as error:
    ...     print(error.status, str(error).split(": ")[1])
    2 no release folder there.
    """
    from analysis.compare.conditions import condition_status, table2_changes
    from analysis.compare.inputs import read_build
    from analysis.compare.numbers import claim_changes, number_changes
    from analysis.compare.page import write_comparison
    from analysis.compare.ranks import rank_changes
    from analysis.compare.report import Comparison
    from analysis.compare.scenarios import scenario_changes, unchanged_ids

    root = Path(out_root) if out_root is not None else paths.COMPARE_DIR
    builds = root / ".builds"
    sides = [locate(base, builds), locate(head, builds)]  # both named before either builds
    base_build, head_build = (build_release(side) for side in sides)
    before, after = read_build(base_build), read_build(head_build)
    scenarios = scenario_changes(before.scenarios, after.scenarios)
    shared = scenarios.loc[scenarios["change"].isin(["changed", "unchanged"]), "scenario_id"]
    shared, unchanged = shared.tolist(), unchanged_ids(scenarios)
    status = condition_status(before, after, shared)
    verdicts = before.cells is not None and after.cells is not None
    if not shared:
        basis = "counts only: the releases share no scenario"
    elif verdicts:
        basis = "per-trial verdicts, paired over the shared scenarios"
    else:
        basis = "counts only: per-trial verdicts are not in both releases"
    comparison = Comparison(
        base=before,
        head=after,
        scenarios=scenarios,
        conditions=status,
        table2=table2_changes(before, after, status, shared, unchanged),
        ranks=rank_changes(before, after),
        numbers=number_changes(before, after, status),
        claims=claim_changes(before, after),
        basis=basis,
    )
    folder = root / comparison_name(base_build, head_build)
    staging = folder.with_name(folder.name + ".staging")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        write_comparison(comparison, staging)
        shutil.rmtree(folder, ignore_errors=True)
        staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder
