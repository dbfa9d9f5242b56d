"""Command-line help as plain text: a module's docstring without its reST markup.

Only the standard library: ``python -m analysis.paper.make`` imports this, and its no-op
check stays well under a second.
"""

from __future__ import annotations

import argparse
import re
import textwrap

_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")  # :mod:`analysis.x`, :func:`~x.y`
_LITERAL = re.compile(r"``([^`]+)``")
_WIDTH = 88


def plain(doc: str) -> str:
    """``doc`` (a docstring) as plain text: roles and literals lose their markup, each
    paragraph and each ``- `` list item is wrapped on its own.

    Examples
    --------
    >>> print(plain("Run ``make paper``; see :mod:`analysis.paper.build`.\\n\\n- one\\n- two"))
    Run make paper; see analysis.paper.build.
    <BLANKLINE>
    - one
    - two
    """
    text = _LITERAL.sub(r"\1", _ROLE.sub(r"\1", textwrap.dedent(doc).strip()))
    paragraphs = []
    for block in re.split(r"\n\s*\n", text):
        items = re.split(r"\n(?=\s*- )", block)
        for item in items:
            words = " ".join(item.split())
            bullet = words.startswith("- ")
            paragraphs.append(
                textwrap.fill(
                    words, _WIDTH, subsequent_indent="  " if bullet else "", break_on_hyphens=False
                )
            )
        paragraphs.append("")
    return "\n".join(paragraphs).strip()


def parser(prog: str, doc: str, **options) -> argparse.ArgumentParser:
    """An argument parser whose description is ``doc`` as :func:`plain` text, its
    paragraphs kept."""
    return argparse.ArgumentParser(
        prog=prog,
        description=plain(doc),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        **options,
    )
