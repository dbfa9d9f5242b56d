"""Import and verify a SteerBench-Work release.

``python -m analysis.release.importer import`` (run by ``make data`` and ``make paper`` whenever the
release's identity differs from the imported one) copies the release into a staging folder
under ``data/``, verifies the copy, and only then swaps it in; the stamp
``data/.imported`` is written last. What is verified:

- every scenario file against the sha256 ``release-manifest.json`` pins, and no scenario
  file the manifest does not list;
- every file under ``results/<version>/`` against a ``checksums.txt`` line (nested
  ``checksums.txt`` files are themselves pinned by the top one): a file no line covers is
  refused, so deleting a line does not unpin a file; a pinned file the release lacks is
  refused, save the per-trial verdict file (``scenarios-detail.json``), which a release
  may pin and withhold: it is reported as absent; the results JSON files must parse as
  UTF-8 JSON, name no key twice in one object, and those the package reads must fit their
  schemas (:mod:`analysis.files.schemas`);
- ``MANIFEST.md``, ``_SCENARIO_PATTERNS.json`` and ``parity-vectors.json`` against the
  scenario files they restate (see :mod:`analysis.release.checks`): each scenario's user
  message is rendered from its file, and the parity file's must be the same bytes.

``sample-artifacts/`` carries no pinned hash in the release; the import says so. A refusal
names the file (and scenario and field) and leaves the previous import in place. Once the
release is in, the reference policies' table, where the data folder holds one, is made again
from its inputs and replaced if it differs (:mod:`analysis.runner.reference`).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from analysis import paths
from analysis.files.digests import file_sha256
from analysis.files.lock import LockedError
from analysis.files.parts import PER_TRIAL_FILE
from analysis.files.reading import read_json, read_text
from analysis.files.schemas import (
    GOLD_LABELS,
    LEADERBOARD,
    RELEASE_MANIFEST,
    SCENARIOS_DETAIL,
)
from analysis.files.typed import Any_, error_text, read_typed, shown
from analysis.help_text import parser as help_parser
from analysis.release.identity import (
    INTERRUPTED_IMPORT,
    ReleaseError,
    ReleaseLayout,
    import_is_current,
    locate_release,
    release_identity,
)
from analysis.runner.reference import (
    ReferencePolicyError,
    reference_table,
    remake_reference_policies,
)

__all__ = ["ReleaseError", "Verification", "import_release", "recover_import", "verify_release"]

#: The results files the package reads, by their path under ``results/<version>/``, and
#: their schemas: checked at import, so a wrongly typed field never reaches ``data/``.
RESULTS_SCHEMAS = {
    paths.RELEASE_MANIFEST: RELEASE_MANIFEST,
    "leaderboard.json": LEADERBOARD,
    "human-validation/gold-labels.json": GOLD_LABELS,
    "scenarios-detail.json": SCENARIOS_DETAIL,
}

STAGING = ".import-staging"
PREVIOUS = ".import-previous"
JOURNAL = "journal.json"


@dataclass
class Verification:
    """What checking a release found."""

    release_dir: Path
    version: str = ""
    scenario_set: str = ""
    digest: str = ""
    verified: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)
    unverified: list[str] = field(default_factory=list)
    mismatched: list[str] = field(default_factory=list)
    reference_policies: str = ""

    def summary(self) -> str:
        """What the import did, in a few lines."""
        lines = [
            f"Release {self.release_dir} ({self.version}, {self.digest[:12]}): "
            f"{len(self.verified)} files verified, imported."
        ]
        lines += [f"  absent from this release (pinned by its checksums): {a}" for a in self.absent]
        if self.unverified:
            lines.append(
                f"  not pinned by any hash in the release (read as the sample run): "
                f"{len(self.unverified)} files under {paths.RELEASE_SAMPLE_ARTIFACTS}/"
            )
        if self.reference_policies:
            lines.append(f"  reference policies {self.reference_policies}")
        return "\n".join(lines)


def parse_checksums(path: Path) -> dict[str, str]:
    """``checksums.txt`` lines (``<sha256>  <relative path>``) as {path: sha256}."""
    pinned: dict[str, str] = {}
    for number, line in enumerate(read_text(path, error=ReleaseError).splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split(maxsplit=1)
        if len(parts) != 2 or len(parts[0]) != 64:
            raise ReleaseError(f"{path}:{number}: not a '<sha256>  <file>' line: {shown(line)}")
        name = parts[1].strip().removeprefix("*")
        if name in pinned and pinned[name] != parts[0].lower():
            raise ReleaseError(f"{path}:{number}: {name} pinned twice with different hashes")
        pinned[name] = parts[0].lower()
    return pinned


def _check(found: Verification, label: str, file: Path, expected: str) -> None:
    actual = file_sha256(file)
    if actual != expected:
        found.mismatched.append(f"{label}: sha256 {actual} != pinned {expected}")
    else:
        found.verified.append(label)


def _verify_scenarios(layout: ReleaseLayout, found: Verification, manifest: dict) -> None:
    hashes = manifest.get("scenario_hashes")
    if not isinstance(hashes, dict) or not hashes:
        raise ReleaseError(f"{layout.manifest}: no scenario_hashes")
    count = manifest.get("scenario_count", len(hashes))
    if count != len(hashes):
        found.mismatched.append(
            f"{layout.manifest}: scenario_count {count} but {len(hashes)} scenario_hashes"
        )
    where = layout.scenarios.relative_to(layout.root)
    for scenario_id, expected in sorted(hashes.items()):
        file = layout.scenarios / f"{scenario_id}.json"
        label = str(where / file.name)
        if not file.is_file():
            found.mismatched.append(f"{label}: missing (pinned by {paths.RELEASE_MANIFEST})")
        else:
            _check(found, label, file, expected)
    for file in sorted(layout.scenarios.glob("*.json")):
        if not file.name.startswith("_") and file.stem not in hashes:
            found.mismatched.append(
                f"{where / file.name}: not pinned by {paths.RELEASE_MANIFEST} (scenario_hashes)"
            )


def _verify_results(layout: ReleaseLayout, found: Verification) -> None:
    top = layout.results / "checksums.txt"
    if not top.is_file():
        raise ReleaseError(f"{top}: missing; the results files cannot be verified")
    pins: dict[Path, tuple[str, Path]] = {}
    for checksums in sorted(layout.results.rglob("checksums.txt")):
        for name, expected in parse_checksums(checksums).items():
            file = (checksums.parent / name).resolve()
            if not file.is_relative_to(layout.results.resolve()):
                raise ReleaseError(f"{checksums}: {name} lies outside {layout.results}")
            earlier = pins.setdefault(file, (expected, checksums))
            if earlier[0] != expected:
                found.mismatched.append(
                    f"{file.relative_to(layout.root.resolve())}: "
                    f"{checksums.name} files disagree ({earlier[1]} and {checksums})"
                )
    results = layout.results.resolve()
    for file in sorted(p for p in results.rglob("*") if p.is_file()):
        if file == top.resolve():
            continue
        if file not in pins:
            found.mismatched.append(
                f"{file.relative_to(layout.root.resolve())}: not covered by any checksums.txt"
            )
    for file, (expected, _) in sorted(pins.items()):
        label = str(file.relative_to(layout.root.resolve()))
        if file.is_file():
            _check(found, label, file, expected)
            if file.suffix == ".json":
                schema = RESULTS_SCHEMAS.get(file.relative_to(results).as_posix(), Any_())
                read_typed(file, schema, error=ReleaseError)
        elif file == results / PER_TRIAL_FILE:  # a release may pin it and withhold it
            found.absent.append(label)
        else:
            listing = pins[file][1].relative_to(layout.root)
            found.mismatched.append(f"{label}: missing, though {listing} pins it")
    for required in (paths.RELEASE_MANIFEST, "leaderboard.json"):
        if (results / required).resolve() not in pins:
            found.mismatched.append(f"{layout.results / required}: not pinned by checksums.txt")


def _cross_check(layout: ReleaseLayout, found: Verification, manifest: dict) -> None:
    from analysis.release import checks as release_checks  # the vocabulary it reads imports pandas

    records = release_checks.read_scenarios(layout.scenarios, sorted(manifest["scenario_hashes"]))
    manifest_md = layout.scenarios / "MANIFEST.md"
    found.mismatched += release_checks.check_manifest_md(manifest_md, records)
    found.mismatched += release_checks.check_patterns(
        layout.scenarios / "_SCENARIO_PATTERNS.json", records, manifest_md
    )
    rendered, unrenderable = release_checks.render_scenarios(layout.scenarios, records)
    found.mismatched += unrenderable
    found.mismatched += release_checks.check_parity_vectors(
        layout.parity_vectors, records, manifest, layout.scenario_set, rendered
    )


def verify_release(release_dir: Path, cross_check: bool = True) -> Verification:
    """Check a release folder against its own pins; return what was found.

    Raises ``ReleaseError`` for a release that cannot be read at all; lists every other
    problem in ``mismatched``.
    """
    layout = locate_release(Path(release_dir).resolve())
    found = Verification(layout.root, layout.version, layout.scenario_set)
    manifest = read_typed(layout.manifest, RELEASE_MANIFEST, error=ReleaseError)
    _verify_results(layout, found)
    _verify_scenarios(layout, found, manifest)
    if not found.mismatched and cross_check:
        _cross_check(layout, found, manifest)
    if layout.sample.is_dir():
        found.unverified = [
            str(p.relative_to(layout.root)) for p in sorted(layout.sample.rglob("*")) if p.is_file()
        ]
    found.digest = release_identity(layout)
    return found


def _stage(layout: ReleaseLayout, staging: Path, data_dir: Path) -> Path:
    """Copy the release's parts into ``staging`` with the release's own layout."""
    shutil.rmtree(staging, ignore_errors=True)
    copy = staging / "release"
    for part in (layout.scenarios, layout.results, layout.parity_vectors, layout.sample):
        if not part.exists():
            continue
        target = copy / part.relative_to(layout.root)
        target.parent.mkdir(parents=True, exist_ok=True)
        if part.is_dir():
            shutil.copytree(part, target)
        else:
            shutil.copy2(part, target)
    for folder, _, _ in os.walk(copy):  # the release may be read-only; its copy is ours
        os.chmod(folder, 0o755)
    readme = data_dir / "scenarios" / "README.md"
    if readme.is_file():
        shutil.copy2(readme, staging / "README.md")
    return copy


def _placements(layout: ReleaseLayout, copy: Path, data_dir: Path) -> list[tuple[Path, Path]]:
    """(staged part, its place under data/) pairs."""
    staged = ReleaseLayout(copy, layout.version, layout.scenario_set)
    pairs = [
        (staged.scenarios, data_dir / "scenarios"),
        (staged.results, data_dir / "runs" / layout.version),
    ]
    if staged.sample.is_dir():
        pairs.append((staged.sample, data_dir / "runs" / paths.SAMPLE_RUN_NAME))
    return pairs


def _write_json(path: Path, record: dict) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def _swap_in(pairs: list[tuple[Path, Path]], data_dir: Path, stamp: dict) -> None:
    """Move the staged parts into place; a journal lets an interrupted swap roll back."""
    previous = data_dir / PREVIOUS
    shutil.rmtree(previous, ignore_errors=True)
    previous.mkdir()
    old_version = paths.imported_release(data_dir).get("release")
    targets = [target for _, target in pairs]
    for stale in (old_version, paths.SAMPLE_RUN_NAME):
        if stale and data_dir / "runs" / stale not in targets:
            targets.append(data_dir / "runs" / stale)
    targets.append(paths.import_stamp(data_dir))
    journal = [(f"slot-{n}", str(t)) for n, t in enumerate(targets) if t.exists()]
    _write_json(previous / JOURNAL, {"moved": journal})
    for slot, target in journal:
        Path(target).rename(previous / slot)
    for source, target in pairs:
        target.parent.mkdir(parents=True, exist_ok=True)
        source.rename(target)
    _write_json(paths.import_stamp(data_dir), stamp)
    shutil.rmtree(previous)


def recover_import(data_dir: Path | None = None) -> bool:
    """Finish or roll back an import interrupted while swapping; True if one was found.

    Before the new stamp is written, the previous import is moved back into place; after
    it, only the leftovers are removed. A stale staging folder is always removed.
    """
    data_dir = data_dir or paths.data_dir()
    shutil.rmtree(data_dir / STAGING, ignore_errors=True)
    previous = data_dir / PREVIOUS
    if not previous.is_dir():
        return False
    journal_path = previous / JOURNAL
    if journal_path.is_file() and not paths.import_stamp(data_dir).exists():
        for slot, target in read_json(journal_path, error=ReleaseError)["moved"]:
            target = Path(target)
            if not (previous / slot).exists():
                continue
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
            (previous / slot).rename(target)
    shutil.rmtree(previous)
    return True


def import_release(release_dir: Path | None = None, data_dir: Path | None = None) -> Verification:
    """Verify the release and swap its copy into ``data_dir``: all or nothing.

    Every file the release pins (``CHECKSUMS.sha256``) is copied and its sha256 checked; only
    when all match does the copy replace what ``data_dir`` held (``scenarios/``,
    ``runs/<version>/``, the sample run), and the reference policies' table is remade for
    the release's scenarios. A refused release leaves ``data_dir`` as it was.

    Parameters
    ----------
    release_dir : Path, optional
        The release folder (a checkout of ``steerbench-work``). None: ``$RELEASE_DIR``, else
        ``../shared/steerbench-work`` (``paths.release_dir``).
    data_dir : Path, optional
        The folder to import into. None: the project's ``data/`` (or
        ``$STEERBENCH_DATA_DIR``), read at the call.

    Returns
    -------
    Verification
        What the check found: ``version`` and ``scenario_set`` of the release, its
        ``digest``, the files ``verified``, those pinned but ``absent``, those ``unverified``
        (read as the sample run), and ``reference_policies`` (what became of their table);
        ``summary()`` says it in a few lines, as ``make data`` prints it.

    Raises
    ------
    ReleaseError
        The folder holds no release, or a file does not match its pinned hash (every
        mismatch listed); nothing is imported then.

    See Also
    --------
    load_scenarios : The imported scenarios as a table.
    load_trials : The imported per-trial verdicts as a table.
    compare_releases : Two releases imported, built and compared.

    Examples
    --------
    The release imported into a temporary folder (the project's ``data/`` is left alone):

    >>> import tempfile
    >>> from pathlib import Path
    >>> from analysis import paths
    >>> data = Path(tempfile.mkdtemp())
    >>> found = import_release(paths.release_dir(), data)
    >>> found.version, found.scenario_set, len(found.verified)
    ('v2026-05', 'steerbench-work-2026-05', 120)
    >>> found.absent
    ['results/v2026-05/scenarios-detail.json']
    >>> sorted(folder.name for folder in (data / "runs").iterdir())
    ['sample-artifacts', 'v2026-05']

    A folder that holds no release is refused, and nothing is written:

    >>> import_release(Path("/no/such/release"), Path("/no/such/data"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    analysis.release.identity.ReleaseError: /no/such/release: no release folder there.
    ...
    """
    release_dir = paths.release_dir(release_dir)
    data_dir = data_dir or paths.data_dir()
    data_dir.mkdir(parents=True, exist_ok=True)
    recover_import(data_dir)
    layout = locate_release(release_dir)
    staging = data_dir / STAGING
    try:
        copy = _stage(layout, staging, data_dir)
        found = verify_release(copy)
        if found.mismatched:
            raise _refusal(found.mismatched, copy, layout.root)
        pairs = _placements(layout, copy, data_dir)
        readme = staging / "README.md"
        if readme.is_file():
            readme.rename(pairs[0][0] / "README.md")
        parity = copy / paths.RELEASE_PARITY_VECTORS
        if parity.is_file():
            parity.rename(pairs[0][0] / "parity-vectors.json")
        found.release_dir = layout.root
        found.digest = release_identity(layout)
        stamp = {
            "release_dir": str(layout.root),
            "release_digest": found.digest,
            "release": layout.version,
            "scenario_set": layout.scenario_set,
            "verified": len(found.verified),
            "absent": found.absent,
            "unverified": found.unverified,
            "imported_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        _swap_in(pairs, data_dir, stamp)
    except ReleaseError as error:
        raise _refusal([str(error)], staging / "release", layout.root) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    table = reference_table(data_dir)
    try:
        if remake_reference_policies(data_dir):
            found.reference_policies = f"remade for this release: {table}"
    except ReferencePolicyError as error:  # the release is in; the build checks the table
        found.reference_policies = f"not remade ({error}): {table} is left as it was"
    return found


def _refusal(problems: list[str], copy_root: Path, root: Path) -> ReleaseError:
    """One refusal naming the release's own files (not the staged copies)."""

    def original(problem: str) -> str:
        for staged in (str(copy_root.resolve()), str(copy_root)):
            problem = problem.replace(staged, str(root))
        return problem if problem.startswith("/") else f"{root}/{problem}"

    named = [original(p) for p in problems]
    if named[0].endswith("nothing was imported") or "; nothing was imported" in named[0]:
        return ReleaseError(named[0])
    more = "".join(f"\n  - {p}" for p in named[1:])
    extra = f" ({len(named) - 1} more problems below){more}" if len(named) > 1 else ""
    return ReleaseError(f"{named[0]}; nothing was imported{extra}")


def ensure_imported(release: Path | None = None, data: Path | None = None) -> str:
    """Import the release unless exactly it is imported already; return what was done."""
    data = data or paths.data_dir()
    root = paths.release_dir(release)
    recover_import(data)
    layout = locate_release(root)
    identity = release_identity(layout)
    if import_is_current(layout, identity, data):
        return f"Release {root} ({layout.version}, {identity[:12]}) is imported."
    found = import_release(root, data)
    return found.summary()


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m analysis.release.importer import|verify [--release-dir DIR]``."""
    parser = help_parser("python -m analysis.release.importer", __doc__)
    parser.add_argument(
        "command",
        choices=["import", "verify"],
        help="import: verify a copy and swap it into data/; verify: check the release only",
    )
    parser.add_argument("--release-dir", help="release folder (default: $RELEASE_DIR)")
    args = parser.parse_args(argv)
    from analysis.release.identity import lock_for

    try:
        if args.command == "verify":
            root = paths.release_dir(args.release_dir)
            found = verify_release(root)
            if found.mismatched:
                raise _refusal(found.mismatched, root, root)
            print(f"Release {root} ({found.version}): {len(found.verified)} files verified.")
            return 0
        with lock_for(paths.data_dir()):
            found = import_release(args.release_dir)
    except (ReleaseError, LockedError, OSError, ValueError) as error:
        print(f"error: {error_text(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"interrupted; {INTERRUPTED_IMPORT}", file=sys.stderr)
        return 130
    print(found.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
