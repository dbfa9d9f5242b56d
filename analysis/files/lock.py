"""One build or import at a time: a lock file holding the owner's PID.

The file is created atomically (``O_EXCL``). A lock whose PID no longer runs is stale and
taken over; a live one makes the second command refuse with a message naming the PID. The
lock is re-entrant within one process, so ``make paper`` can check its inputs under the lock
and then replace itself (``exec``) with the build, which keeps the same PID.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

#: Locks this process holds through a ``ProjectLock`` object (a fresh ``exec`` starts empty,
#: so a lock inherited across ``exec`` is adopted, while a nested one in-process is not).
_HELD: set[Path] = set()


class LockedError(RuntimeError):
    """Another live process holds the lock."""


def _owner(lock: Path) -> int | None:
    try:
        return int(lock.read_text(encoding="utf-8").split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class ProjectLock:
    """``with ProjectLock(path, what):`` holds ``path`` for this process, or refuses."""

    def __init__(self, path: Path, what: str = "build", wait: float = 0.0) -> None:
        self.path = path
        self.what = what
        self.wait = wait
        self._taken = False

    def acquire(self) -> None:
        """Take the lock (re-entrant for this PID); refuse if a live process holds it."""
        deadline = time.monotonic() + self.wait
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            try:
                descriptor = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                owner = _owner(self.path)
                if owner == os.getpid():
                    self._taken = self.path not in _HELD
                    _HELD.add(self.path)
                    return
                if owner is not None and _alive(owner):
                    if time.monotonic() < deadline:
                        time.sleep(0.5)
                        continue
                    raise LockedError(
                        f"{self.path}: another {self.what} is running (PID {owner}); "
                        "wait for it to finish, then run the command again"
                    ) from None
                self._remove_stale(owner)
                continue
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(f"{os.getpid()}\n")
            self._taken = True
            _HELD.add(self.path)
            return

    def _remove_stale(self, owner: int | None) -> None:
        # Rename first, so two processes clearing the same stale lock do not both win.
        aside = self.path.with_name(f"{self.path.name}.stale-{os.getpid()}")
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return
        if _owner(aside) not in (owner, None):  # someone re-took it in between: give it back
            os.rename(aside, self.path)
            return
        aside.unlink(missing_ok=True)

    def release(self) -> None:
        """Give the lock up if this object took it (a nested holder leaves it to the outer)."""
        if self._taken and _owner(self.path) == os.getpid():
            self.path.unlink(missing_ok=True)
            _HELD.discard(self.path)
        self._taken = False

    def __enter__(self) -> ProjectLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
