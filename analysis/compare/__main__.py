"""Command line: ``python -m analysis.compare BASE HEAD`` (``make compare``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

#: What Ctrl-C leaves, said in one line.
INTERRUPTED = (
    "interrupted; nothing was compared (a build or import cut short is redone or rolled back "
    "by the next make compare)"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m analysis.compare",
        description="Compare two releases: scenarios, conditions, ranks, cited numbers.",
    )
    parser.add_argument("base", help="the earlier release folder")
    parser.add_argument("head", help="the later release folder")
    parser.add_argument("--out", type=Path, help="where comparisons go (default: compare/)")
    args = parser.parse_args(argv)
    try:
        from analysis.compare import CompareError, compare_releases

        try:
            folder = compare_releases(args.base, args.head, args.out)
        except CompareError as error:
            print(f"error: {error}", file=sys.stderr)
            return error.status
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130
    print(f"Wrote {folder}/index.html, changes.json and the CSV tables.")
    print(json.loads((folder / "changes.json").read_text("utf-8"))["summary"])
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # during argument parsing, before main's own handler
        print(INTERRUPTED, file=sys.stderr)
        sys.exit(130)
