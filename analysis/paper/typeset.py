"""Compile a Typst source into a PDF the way the build does, from the command line.

The ``typst`` Python package compiles in-process and installs no ``typst`` command, so
``python -m analysis.paper.typeset paper/paper.typ`` is the command that rebuilds
``paper/paper.pdf`` from the folder alone (offline, with Typst's embedded fonts only).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import typst


def compile_typst(source: Path, target: Path | None = None) -> Path:
    """Compile ``source`` into ``target`` (by default beside it, ending ``.pdf``).

    The folder holding ``source`` is Typst's root: the files it reads (``numbers.json``,
    the tables and figures) are found there, and nothing outside it is read. A source that
    does not compile raises :class:`ValueError` naming it and Typst's message.
    """
    source = Path(source)
    target = source.with_suffix(".pdf") if target is None else Path(target)
    if not source.is_file():
        raise ValueError(f"{source}: no such Typst source")
    try:
        typst.compile(
            str(source), output=str(target), root=str(source.parent), ignore_system_fonts=True
        )
    except typst.TypstError as error:
        raise ValueError(f"{source}: Typst could not compile the report: {error}") from None
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m analysis.paper.typeset",
        description="Compile a Typst source (such as paper/paper.typ) into a PDF, offline.",
    )
    parser.add_argument("source", type=Path, help="the .typ file, e.g. paper/paper.typ")
    parser.add_argument("-o", "--output", type=Path, help="the PDF (default: beside the source)")
    args = parser.parse_args(argv)
    try:
        target = compile_typst(args.source, args.output)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
