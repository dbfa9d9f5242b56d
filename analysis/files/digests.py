"""The sha256 of a file's bytes, and the same remembered for as long as the file is unchanged.

:func:`remembered_sha256` keeps each digest by the file's resolved path, inode, size and
modification time, which a rewrite changes. Every notebook of a build names the same inputs
(a release's verdict file is 120 MB at 1,000 conditions): a build kernel keeps this module
across its notebooks (``analysis.paper.build.kernel_state.KEPT``), so that a file is hashed
once per kernel, not once per notebook.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

#: Digests by (resolved path, inode, size, modification time in ns).
_REMEMBERED: dict[tuple[str, int, int, int], str] = {}


def file_sha256(path: Path) -> str:
    """The hex sha256 of a file's bytes."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def remembered_sha256(path: Path) -> str:
    """:func:`file_sha256`, computed once for as long as the file keeps its path, inode, size
    and modification time."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_ino, stat.st_size, stat.st_mtime_ns)
    if key not in _REMEMBERED:
        _REMEMBERED[key] = file_sha256(path)
    return _REMEMBERED[key]
