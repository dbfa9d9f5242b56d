"""The sha256 of a file's bytes, and the same remembered for as long as the file is unchanged.

:func:`remembered_sha256` keeps each digest by the file's resolved path, inode, size and
modification and status-change times, which a rewrite changes. Every notebook of a build
names the same inputs (a release's verdict file is 120 MB at 1,000 conditions): a build
kernel keeps this module across its notebooks
(``analysis.paper.build.kernel_state.KEPT``), so that a file is hashed once per kernel, not
once per notebook; the build's own digests (:func:`analysis.release.identity.tree_digest`)
hash each file once too. A file changed in the last two seconds is not remembered (see
:func:`remembered_sha256`).
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

#: How long ago a file must have changed for its digest to be remembered (2 s: the
#: coarsest time stamps in common use, FAT's, are 2 s apart).
SETTLED_NS = 2_000_000_000
#: Digests by (resolved path, inode, size, modification and status-change times in ns).
_REMEMBERED: dict[tuple[str, int, int, int], str] = {}


def file_sha256(path: Path) -> str:
    """The hex sha256 of a file's bytes."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def remembered_sha256(path: Path) -> str:
    """:func:`file_sha256`, computed once for as long as the file keeps its path, inode, size,
    modification time and status-change time (which every write sets, and which no tool
    that restores a modification time can set back).

    A file changed less than :data:`SETTLED_NS` before it is hashed is hashed again each
    time: a file system stamps times at a coarse tick, so a rewrite of the same size within
    that tick would keep every part of the key."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
    if key in _REMEMBERED:
        return _REMEMBERED[key]
    digest = file_sha256(path)
    if time.time_ns() - max(stat.st_mtime_ns, stat.st_ctime_ns) >= SETTLED_NS:
        _REMEMBERED[key] = digest
    return digest
