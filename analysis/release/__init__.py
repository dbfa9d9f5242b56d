"""The release: located, verified against its own pins, and imported into ``data/``.

Owns what identifies a release and its import (``identity``: content digests, never
timestamps), the checks of everything the release restates (``checks``: scenario files
against the manifest, the parity vectors against the renderer, the per-trial verdicts
against the leaderboard) and the import itself, all-or-nothing (``importer``: ``make data``,
which also remakes the reference policies' table through :mod:`analysis.runner`).

May import: :mod:`analysis.files`, :mod:`analysis.paths`, :mod:`analysis.help_text`,
:mod:`analysis.lazy`, :mod:`analysis.corpus`, :mod:`analysis.trials`, :mod:`analysis.scoring`,
:mod:`analysis.runner`.
"""

from analysis.lazy import lazy_exports

_HOMES: dict[str, str] = {
    name: "analysis.release.importer"
    for name in ("ensure_imported", "import_release", "recover_import", "verify_release")
}

__all__ = sorted(_HOMES)
__getattr__, __dir__ = lazy_exports(globals(), _HOMES)
