"""Command line: ``python -m analysis.compare BASE HEAD`` (``make compare``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from analysis.compare import CompareError, compare_releases


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
        folder = compare_releases(args.base, args.head, args.out)
    except CompareError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.status
    print(f"Wrote {folder}/index.html, changes.json and the CSV tables.")
    summary = (folder / "changes.json").read_text("utf-8")
    import json

    print(json.loads(summary)["summary"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
