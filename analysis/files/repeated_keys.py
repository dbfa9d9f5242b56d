"""The check of a large JSON file's keys that runs beside its parse
(:data:`analysis.files.reading.KEYS_ASIDE_CHARS`), in a process of its own at the lowest
priority: ``python -m analysis.files.repeated_keys PATH SIZE MODIFIED_NS``.

It parses the file with the repeated-key hook and writes one JSON line,
``{"refusal": "key 'k' appears twice in one object"}`` (or what is malformed), or nothing
when the keys are unique. It exits with 3, saying nothing, when the file's size or
modification time is no longer the one given: its reader then checks the file itself.
Standard library only.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from analysis.files.reading import DuplicateKeyError, check_keys, refusal

#: The exit status when the file changed since its reader read it.
CHANGED = 3


def main(argv: list[str]) -> int:
    """Check the file ``argv`` names (path, size, modification time in ns); the exit status."""
    path, size, modified = Path(argv[0]), int(argv[1]), int(argv[2])
    stat = path.stat()
    if (stat.st_size, stat.st_mtime_ns) != (size, modified):
        return CHANGED
    data = path.read_bytes()
    text = data.decode("utf-8")
    del data
    try:
        check_keys(text)
    except (DuplicateKeyError, json.JSONDecodeError) as exc:
        sys.stdout.write(json.dumps({"refusal": refusal(exc)}) + "\n")
    return 0


if __name__ == "__main__":
    if hasattr(os, "nice"):
        os.nice(19)  # idle time: the reader's own work comes first
    sys.exit(main(sys.argv[1:]))
