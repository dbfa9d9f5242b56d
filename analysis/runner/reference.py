"""The reference policies' per-trial verdicts, made for the imported release.

The three model-free gates (:data:`analysis.runner.gates.REFERENCE_POLICIES`) run over every
scenario of the imported release, with as many trials per cell as its manifest pins, into a
temporary run root whose tidy export (:func:`analysis.runner.tidy.export_tidy`) is
``data/runs/reference-policies/trials.csv``: the table the per-trial notebooks read beside
the published verdicts. The gates are deterministic, so the same inputs give the same table
byte for byte. The committed table is the one v2026-05 gives; importing a release whose
inputs give another table (other scenarios, other flags, other trials per cell) remakes it
(:func:`remake_reference_policies`), and importing v2026-05 again gives back the committed
bytes.

``python -m analysis.runner.reference [OUT]`` (``make reference-runs``) writes the table
for the imported release to ``OUT`` (default: the committed table's place).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from analysis import paths
from analysis.files.reading import InputFileError
from analysis.files.schemas import RELEASE_MANIFEST
from analysis.files.typed import read_typed

#: The run id every reference policy's run root carries.
RUN_ID = "reference-policies"
#: The tidy table of the reference policies, in ``data/runs/reference-policies/``.
TABLE_NAME = "trials.csv"
#: Trials per cell when the release manifest pins none (v2026-05 pins 5).
DEFAULT_TRIALS = 5

PathLike = str | os.PathLike[str]


class ReferencePolicyError(RuntimeError):
    """The reference policies cannot be made from the imported release's inputs."""


def reference_table(data: PathLike | None = None) -> Path:
    """The reference policies' tidy table: ``data/runs/reference-policies/trials.csv``."""
    return paths.reference_runs_dir(data) / TABLE_NAME


def release_trials_per_cell(data: PathLike | None = None) -> int:
    """The trials per cell the imported release manifest pins (``n_trials_per_cell``), or
    :data:`DEFAULT_TRIALS` when it pins none."""
    manifest = read_typed(paths.release_manifest(data), RELEASE_MANIFEST)
    return manifest.get("n_trials_per_cell", DEFAULT_TRIALS)


def make_reference_policies(out: PathLike, data: PathLike | None = None) -> int:
    """Run every reference policy over the release imported in ``data`` and write their tidy
    table to ``out`` (atomically); returns the number of rows. Inputs that cannot be read
    (no system prompt, say) raise :class:`ReferencePolicyError`."""
    from analysis.corpus.inputs import PROMPT_FILE, PinnedInputError, load_pinned_inputs
    from analysis.runner.gate_run import run_gate
    from analysis.runner.gates import REFERENCE_POLICIES
    from analysis.runner.tidy import export_tidy

    scenarios = paths.scenarios_dir(data)
    try:
        inputs = load_pinned_inputs(
            None, paths.release_manifest(data), scenarios, paths.sample_run_dir(data) / PROMPT_FILE
        )
        trials = release_trials_per_cell(data)
    except (InputFileError, PinnedInputError) as error:
        raise ReferencePolicyError(str(error)) from None
    with tempfile.TemporaryDirectory(prefix="steerbench-reference-") as root:
        for policy in REFERENCE_POLICIES.values():
            gate = policy()
            try:
                run_gate(
                    gate,
                    Path(root),
                    inputs=inputs,
                    trials=trials,
                    run_id=RUN_ID,
                    scenarios_dir=scenarios,
                    progress=False,
                )
            finally:
                gate.close()
        return export_tidy([Path(root)], Path(out))


def remake_reference_policies(data: PathLike | None = None) -> bool:
    """Make the reference policies' table afresh for the release imported in ``data``, where
    ``data`` holds one (:func:`reference_table`), and replace it if the new one differs;
    returns whether it did."""
    table = reference_table(data)
    if not table.is_file():
        return False
    fresh = table.with_name(f".{table.name}.new")
    try:
        make_reference_policies(fresh, data)
        if fresh.read_bytes() == table.read_bytes():
            return False
        fresh.replace(table)
        return True
    finally:
        fresh.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m analysis.runner.reference [OUT]``."""
    parser = argparse.ArgumentParser(
        prog="python -m analysis.runner.reference",
        description="Write the reference policies' per-trial verdicts for the imported release.",
    )
    parser.add_argument(
        "out", nargs="?", type=Path, help=f"tidy CSV to write (default: {reference_table()})"
    )
    args = parser.parse_args(argv)
    out = args.out or reference_table()
    try:
        rows = make_reference_policies(out)
    except (ReferencePolicyError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {rows} rows to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
