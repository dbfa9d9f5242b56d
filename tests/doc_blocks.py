"""The code blocks of the documentation, read as a reader runs them.

``blocks(page)`` gives every fenced block of a Markdown page with its language and the line
its first code line is on; ``commands(block)`` splits a shell block into the commands a
shell would run (continued lines joined, comments dropped), each with its line. Python
blocks run through :data:`DRIVER`, which names the page and line of a failing statement.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The pages whose blocks are run: the README and the site's pages. The API reference's
#: examples run as doctests (tests/test_public_api.py); the changelog includes CHANGELOG.md.
PAGES = ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob("docs/*.md"))]
SKIPPED_PAGES = {"docs/changelog.md"}

SHELL = {"sh", "bash", "shell"}
PYTHON = {"python", "py"}
#: Blocks that show text, not code: output, a folder tree.
TEXT = {"text"}
#: MyST directives that hold no code block to run.
INERT_DIRECTIVES = {"{toctree}", "{include}"}
#: MyST directives whose content is code in the language they name.
CODE_DIRECTIVES = {"{code-block}", "{code}", "{code-cell}"}

_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
#: What a shell runs as more than one command, or redirects: a block holds one command a line.
_OPERATORS = re.compile(r"^[;&|<>()]+$")


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # the line of the block's first code line, 1-based
    language: str  # the fence's info string, e.g. "sh", "python", "{toctree}", ""
    text: str


@dataclass(frozen=True)
class Command:
    block: Block
    line: int  # the line the command starts on
    written: str  # as written, continued lines joined, its comment dropped
    argv: list[str]

    @property
    def where(self) -> str:
        return f"{self.block.page}:{self.line}"


def blocks(page: str) -> list[Block]:
    """Every fenced block of ``page`` (relative to the project); a directive holding
    Markdown (a note, a tab) gives the blocks inside it instead."""
    return _blocks(page, (ROOT / page).read_text(encoding="utf-8").splitlines(), 0)


def _blocks(page: str, lines: list[str], offset: int) -> list[Block]:
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence = opening["fence"]
        end = i + 1
        while end < len(lines):
            closing = _FENCE.match(lines[end])
            if (
                closing
                and closing["fence"][0] == fence[0]
                and len(closing["fence"]) >= len(fence)
                and not closing["info"].strip()
            ):
                break
            end += 1
        words = opening["info"].split()
        language = words[0] if words else ""
        inner = [line.removeprefix(opening["indent"]) for line in lines[i + 1 : end]]
        if language in CODE_DIRECTIVES:
            language = words[1] if len(words) > 1 else ""
        if language.startswith("{") and language not in INERT_DIRECTIVES | CODE_DIRECTIVES:
            found += _blocks(page, inner, offset + i + 1)
        else:
            found.append(Block(page, offset + i + 2, language, "\n".join(inner)))
        i = end + 1
    return found


def strip_comment(line: str) -> str:
    """``line`` without its shell comment: a ``#`` starting a word, outside quotes."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def commands(block: Block) -> list[Command]:
    """The commands of a shell block: continued lines joined, comments dropped.

    A command a shell would split (``;``, ``&&``, a pipe or a redirection) raises
    ``ValueError``: a documentation block holds one command a line."""
    found: list[Command] = []
    pending, start = "", None
    for offset, raw in enumerate(block.text.splitlines()):
        line = strip_comment(raw)
        if start is None:
            if not line.strip():
                continue
            start = block.line + offset
        if line.endswith("\\"):
            pending += line[:-1].rstrip() + " "
            continue
        written = (pending + line.strip()).strip()
        pending = ""
        lexer = shlex.shlex(written, posix=True, punctuation_chars=True)
        lexer.whitespace_split, lexer.commenters = True, ""
        argv = list(lexer)
        if any(_OPERATORS.match(token) for token in argv):
            raise ValueError(
                f"{block.page}:{start}: `{written}` is more than one command or redirects: "
                "write one command a line"
            )
        found.append(Command(block, start, written, argv))
        start = None
    return found


#: Runs one page's Python blocks in order in one namespace: ``python -c DRIVER page blocks.json``.
#: Each block is compiled as the page at its own lines, so a traceback shows the page's line;
#: a failure ends with one ``docs-block-failed:`` line naming the block and the line.
DRIVER = r"""
import json, sys, traceback
page, blocks = sys.argv[1], json.load(open(sys.argv[2], encoding="utf-8"))
namespace = {"__name__": "__main__"}
for first, source in blocks:
    try:
        exec(compile("\n" * (first - 1) + source, page, "exec"), namespace)
    except BaseException as error:
        traceback.print_exc()
        at = [f.lineno for f in traceback.extract_tb(error.__traceback__) if f.filename == page]
        print(f"docs-block-failed: {first} {at[-1] if at else first}", file=sys.stderr)
        sys.exit(1)
"""
