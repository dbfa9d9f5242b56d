"""Opening a notebook section: its inputs, its output writer and its recorded numbers.

Every notebook starts with :func:`open_section`, given its papermill parameters, which loads
what the section reads (:data:`~analysis.paper.sections.reads.READS`). The files read become the
inputs whose sha256 each recorded number carries. The build loads and checks them once
(:func:`~analysis.paper.sections.loading.write_checked_inputs`) and hands the frames to
each section (``checked_inputs``); a notebook run alone loads them itself
(:func:`~analysis.paper.sections.loading.load_inputs`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from analysis import paths
from analysis.files.parts import Part, absence, has_part
from analysis.paper.claims import compare, other_release
from analysis.paper.outputs import YOUR_RUN, Output, show, stand_in_caption, stand_in_title
from analysis.paper.provenance import NumberBook
from analysis.paper.sections.loading import load_inputs, read_checked_inputs
from analysis.paper.sections.reads import READS, Locations, Reads
from analysis.trials import VerdictPaths, verdict_path_list


@dataclass
class Section:
    """One notebook section's inputs and where it writes (:func:`open_section`)."""

    name: str
    out: Output
    scenarios: pd.DataFrame
    locations: Locations
    #: The published conditions as counts (``leaderboard.json``), when the section reads them.
    conditions: pd.DataFrame | None = None
    #: Per-trial verdicts (one row per trial) and their pooled cells, when the section reads them.
    trials: pd.DataFrame | None = None
    cells: pd.DataFrame | None = None
    inputs: list[Path] = field(default_factory=list)

    @property
    def numbers(self) -> NumberBook:
        """The numbers this section records."""
        return self.out.numbers

    @property
    def sources(self) -> list[str]:
        """The pools of the per-trial cells as captions name them (``published``,
        ``reference-policy: ...``, ``run: ...`` for the release's sample cell, ``your run:
        ...`` for each of :attr:`runs`)."""
        if self.cells is None:
            return []
        yours = set(self.runs)
        pools = []
        for pool in self.cells["source"].astype(str).unique():
            origin, _, condition = pool.partition(": ")
            pools.append(
                f"{YOUR_RUN}: {condition}" if origin == "run" and condition in yours else pool
            )
        return sorted(pools)

    @cached_property
    def runs(self) -> list[str]:
        """The conditions of your own runs among the per-trial cells (not the release's
        sample cell: :func:`analysis.paper.sections.your_runs.own_runs`)."""
        from analysis.paper.sections.your_runs import own_runs

        return own_runs(self.cells, self.locations.runs)

    def stand_in(self, caption: str) -> str:
        """``caption``, marked as not the paper's results when no published per-trial
        verdicts are among the pools."""
        return stand_in_caption(caption, self.sources)

    def stand_in_title(self, title: str) -> str:
        """A figure title with the same mark as :meth:`stand_in`."""
        return stand_in_title(title, self.sources)

    def record(self, numbers: pd.DataFrame) -> None:
        """Record a numbers table (:func:`analysis.paper.provenance.numbers_table`)."""
        self.numbers.record(numbers)

    def table(
        self,
        frame: pd.DataFrame,
        name: str,
        caption: str,
        *,
        show_rows: int | None = None,
        columns: list[str] | None = None,
    ) -> None:
        """Write ``frame`` as ``tables/<name>.*`` (the CSV whole, the reader's files with
        ``columns``), shown with ``show_rows`` rows."""
        self.out.table(frame, name, caption, show_rows=show_rows, columns=columns)

    def figure(self, fig: plt.Figure, name: str, caption: str) -> None:
        """Show ``fig`` and write it as ``figures/<name>.pdf`` and ``.png``."""
        self.out.figure(fig, name, caption)

    def show(self, frame: pd.DataFrame, rows: int = 40) -> None:
        """Display ``frame`` for a reader, without writing it."""
        show(frame, rows)

    def compare(self, claims_section: str | None = None) -> None:
        """Show the published claims this section recomputes beside their recomputed values
        (with ``claims_section``, also those of that section needing per-trial verdicts);
        for another release than the paper's, says that there is nothing to compare."""
        data = self.locations.runs.parent
        reason = other_release(paths.release(data), paths.scenario_set(data))
        if reason is not None:
            print(f"No published values to compare: {reason}.")
            return
        show(compare(self.numbers.numbers, claims_section))

    def has(self, part: Part, what: str) -> bool:
        """Whether the release has the optional ``part``; when it has not, ``what`` (the
        tables or numbers that read it) is left out, said here and in the build's report.
        A part the release's checksums pin and that is missing is refused, naming it."""
        if has_part(self.locations.results, part):
            return True
        self.out.left_out(what, absence(self.locations.results, part))
        return False

    def close(self) -> None:
        """Write the section's numbers, catalogue and what it left out."""
        self.out.close()


def open_section(
    notebook: str,
    *,
    output_dir: str | os.PathLike[str] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    verdict_paths: VerdictPaths = None,
    checked_inputs: str | os.PathLike[str] | None = None,
    reads: Reads | None = None,
) -> Section:
    """Open the section of ``notebook``: load what it reads and open its output writer.

    The frames a section reads are :data:`~analysis.paper.sections.READS` declares for it
    (or ``reads``); the pools the per-trial cells form are printed.

    Parameters
    ----------
    notebook : str
        The section's notebook name, e.g. ``"05-patterns"``.
    output_dir : str or PathLike, optional
        Where the section writes its tables, figures and numbers. None: ``scratch/``.
    data_dir : str or PathLike, optional
        The data folder to read. None: the project's ``data/``.
    verdict_paths : str, PathLike or sequence of them, optional
        The per-trial verdicts to read (as :func:`load_trials` reads them). None: every
        verdict found under the runs folder.
    checked_inputs : str or PathLike, optional
        A file :func:`~analysis.paper.sections.loading.write_checked_inputs` wrote for the same
        ``data_dir`` (the build passes one): the frames already loaded and checked, used
        instead of loading them again.
    reads : Reads, optional
        What to load, instead of the section's entry in ``READS``.

    Returns
    -------
    Section
        ``name``; ``scenarios`` (:func:`load_scenarios`); ``conditions``
        (:func:`load_conditions`), ``trials`` and ``cells`` (:func:`load_checked_cells`)
        when the section reads them, else None; ``locations`` and ``inputs`` (the files
        read); ``out``, the :class:`~analysis.paper.outputs.Output` writing into
        ``output_dir``, and ``numbers``, the numbers it records.

    See Also
    --------
    load_checked_cells : The checked trials and cells a section reads.
    load_conditions : The published conditions a section reads.

    Examples
    --------
    On the imported release, writing into a temporary folder:

    >>> import tempfile
    >>> section = open_section("01-corpus", output_dir=tempfile.mkdtemp())
    >>> section.name, len(section.scenarios), section.conditions is None
    ('01-corpus', 106, True)
    >>> section.scenarios["boundary_pattern"].value_counts().head(3)
    boundary_pattern
    detector_conflict      33
    calibration_control    25
    public_harm_anchor     24
    Name: count, dtype: int64
    """
    what = reads if reads is not None else READS.get(notebook)
    if what is None:
        known = ", ".join(READS)
        raise ValueError(f"unknown section {notebook!r}; known: {known} (or pass reads=)")
    where = Locations.of(data_dir)
    listed = verdict_path_list(verdict_paths)
    if checked_inputs is None:
        loaded = load_inputs(what, where, listed)
    elif listed is not None:
        raise ValueError("give verdict_paths or checked_inputs, not both")
    else:
        loaded = read_checked_inputs(checked_inputs, where, what)
    inputs: list[Path] = []
    if what.conditions:
        from analysis.scoring.leaderboard import LEADERBOARD_FILENAME

        inputs += [where.results / LEADERBOARD_FILENAME, where.results / paths.RELEASE_MANIFEST]
    inputs.append(where.scenarios)
    files = (where.results / name for name in what.results_files)
    inputs += [file for file in files if file.exists()]  # not the optional parts it lacks
    if what.verdicts:
        from analysis.scoring.crosscheck import source_summary, verdict_inputs

        inputs += verdict_inputs(listed, where.runs)
        print(source_summary(loaded.cells))
    out = Output(output_dir, notebook, inputs)
    return Section(
        name=notebook,
        out=out,
        scenarios=loaded.scenarios,
        locations=where,
        conditions=loaded.conditions,
        trials=loaded.trials,
        cells=loaded.cells,
        inputs=inputs,
    )
