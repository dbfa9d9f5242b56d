"""The documentation runs as written: every ```python and ```sh block of README.md and
docs/*.md (not the API reference, whose examples run as doctests in test_public_api.py, nor
the changelog), read from the pages as the test runs, on the imported release.

A page's Python blocks run in order in one fresh interpreter, from the project root. Each
shell command runs on its own, its placeholders (:data:`PLACEHOLDERS`) replaced by files and
values the test makes, some rewritten by a reviewed rule (:data:`RULES`: the build and the
tests are not re-entered, Inspect runs offline); a command that cannot run here is listed in
:data:`NOT_RUNNABLE` with the reason and what is checked instead. A block in another
language, or untagged, fails; so does a listing no page uses any more. A failure names the
page, the block's first line and the command.

Papermill, Inspect and ``make compare`` run in the slow tier (``make test-all``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import doc_blocks
import pytest
import release_copies
from conftest import BUSY
from doc_blocks import PYTHON, ROOT, SHELL, TEXT, Block, Command
from fake_openai_server import FakeOpenAIServer

from analysis import paths

#: The model name the fake server answers as (it answers any name).
MODEL_NAME = "docs-model"


class Placeholders:
    """What each placeholder of the pages stands for, made under ``tmp`` when first used."""

    def __init__(self, tmp: Path, base_url: str) -> None:
        self.tmp, self.base_url = tmp, base_url

    def release(self, name: str) -> str:
        copy = self.tmp / "releases" / name
        if not copy.exists():
            copy.parent.mkdir(parents=True, exist_ok=True)
            release_copies.copy_release(copy)
        return str(copy)

    def text(self, text: str, shell: bool = False) -> str:
        """``text`` (a shell token, or a Python block) with its placeholders replaced, in
        one pass: what replaced one is never read as another."""
        table = [entry for entry in PLACEHOLDERS if shell or not entry[3]]
        either = re.compile("|".join(f"(?:{pattern})" for pattern, *_ in table))

        def replace(found: re.Match) -> str:
            for pattern, _, make, _ in table:
                if inner := re.fullmatch(pattern, found[0]):
                    return make(self, inner)
            raise AssertionError(found)

        return either.sub(replace, text)

    def argv(self, argv: list[str]) -> list[str]:
        out = [self.text(token, shell=True) for token in argv]
        for i, token in enumerate(out[:-1]):
            if token == "--log-dir":
                out[i + 1] = str(self.tmp / "logs" / Path(out[i + 1]).name)
        return out


_START = r"(?<![\w/.-])"  # a path starting here, not inside another
#: Placeholder, what it becomes, how, and whether in shell commands only (else in Python
#: blocks too). ``--log-dir DIR`` becomes ``tmp/logs/DIR``.
PLACEHOLDERS: list[tuple[str, str, Callable[[Placeholders, re.Match], str], bool]] = [
    (
        r"/path/to/(steerbench-work[\w.-]*)",
        "a copy of the release under tmp, same folder name (tests/release_copies.py)",
        lambda p, m: p.release(m[1]),
        False,
    ),
    (
        r"http://127\.0\.0\.1:8000/v1",
        "the fake OpenAI-compatible server on 127.0.0.1 (tests/fake_openai_server.py)",
        lambda p, m: p.base_url,
        False,
    ),
    (r"\bMODEL\b", f"{MODEL_NAME}, a name that server answers", lambda p, m: MODEL_NAME, True),
    (
        _START + r"data/runs/local/",
        "tmp/runs/local/: a run of the tests never lands in the project's data/",
        lambda p, m: f"{p.tmp}/runs/local/",
        False,
    ),
    (_START + r"/tmp/", "tmp/", lambda p, m: f"{p.tmp}/", True),
    (_START + r"out\.ipynb\b", "tmp/out.ipynb", lambda p, m: f"{p.tmp}/out.ipynb", True),
]


@dataclass(frozen=True)
class Rule:
    """How commands of one kind run here, and why."""

    what: str
    matches: Callable[[list[str]], bool]
    why: str
    rewrite: Callable[[list[str], Placeholders], list[str]] = lambda argv, _: argv
    env: dict[str, str] = field(default_factory=dict)
    slow: bool = False
    check: Callable[[list[str], Placeholders], None] | None = None
    needs: str | None = None  # a module of an optional extra; skipped without it


def _target(argv: list[str]) -> str | None:
    """The first target of a ``make`` command (None for another command)."""
    if Path(argv[0]).name != "make":
        return None
    return next((a for a in argv[1:] if "=" not in a and not a.startswith("-")), "all")


def _is_inspect(argv: list[str]) -> bool:
    return Path(argv[0]).name == "inspect" and argv[1:2] in (["eval"], ["eval-set"])


INSPECT_TASK, OFFLINE_TASK = "analysis/runner/inspect_task.py", "tests/inspect_offline_task.py"


def _offline_inspect(argv: list[str], _: Placeholders) -> list[str]:
    out, skip = [], False
    for token in argv:
        if skip:
            skip = False
        elif token in ("--model", "--model-base-url"):
            skip = True
        else:
            out.append(OFFLINE_TASK if token == INSPECT_TASK else token)
    return [*out, "--epochs", "1", "--display", "none"]


def _logs_load_as_runs(argv: list[str], _: Placeholders) -> None:
    """Each log the command wrote reads as a condition (``load_trials``), as the page says."""
    logs = sorted(Path(argv[argv.index("--log-dir") + 1]).glob("*.eval"))
    assert logs, f"no log written by {argv}"
    code = (
        "import sys\nfrom analysis import load_trials\nfor log in sys.argv[1:]: load_trials([log])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *map(str, logs)], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-3000:]


def _releases_made_by_the_page(argv: list[str], p: Placeholders) -> list[str]:
    """A BASE or HEAD under tmp that a page's Python block makes (under /tmp/, as the page
    says) is made first, by that block with /tmp/ replaced by tmp."""
    for value in (a.split("=", 1)[1] for a in argv if a.startswith(("BASE=", "HEAD="))):
        folder = Path(value)
        if folder.exists() or not folder.is_relative_to(p.tmp):
            continue
        (block,) = [
            b for b in _code_blocks() if b.language in PYTHON and f"/tmp/{folder.name}" in b.text
        ]
        done = subprocess.run(
            [sys.executable, "-c", p.text(block.text, shell=True)],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        assert done.returncode == 0, f"{block.page}:{block.line}: {done.stderr[-3000:]}"
    return argv


def _removes_new_comparisons(argv: list[str], _: Placeholders) -> None:
    """The comparison folders the command wrote under compare/ (its builds are kept)."""
    names = [a.split("=", 1)[1] for a in argv if a.startswith(("BASE=", "HEAD="))]
    written = paths.COMPARE_DIR / f"{Path(names[0]).name}..{Path(names[1]).name}"
    assert (written / "index.html").is_file(), f"{written}/index.html not written"
    shutil.rmtree(written)


def _is_python_gate(argv: list[str]) -> bool:
    return Path(argv[0]).name == "steerbench-run" and any(
        argv[i] == "--gate" and ":" in argv[i + 1] for i in range(len(argv) - 1)
    )


def _python_gate(argv: list[str], p: Placeholders) -> list[str]:
    """The page's gate (its Python block defining ``decide``) saved as tmp/mygate.py, named
    by its path; ``--out ...`` a folder under tmp."""
    gate = p.tmp / "mygate.py"
    if not gate.exists():
        page = next(
            b
            for b in doc_blocks.blocks("docs/running.md")
            if b.language in PYTHON and "def decide(" in b.text
        )
        gate.write_text(page.text, encoding="utf-8")
    out = []
    for i, token in enumerate(argv):
        if i and argv[i - 1] == "--gate":
            token = f"{gate}:{token.rsplit(':', 1)[1]}"
        elif i and argv[i - 1] == "--out" and token == "...":
            token = f"{p.tmp}/runs/local/gate"
        out.append(token)
    return out


#: Commands that run otherwise than as written; the first rule matching a command applies.
#: Any other command runs as written, its placeholders replaced.
RULES = [
    Rule(
        "make paper / test / test-all / docs / lab",
        lambda argv: _target(argv) in {"paper", "test", "test-all", "docs", "lab"},
        "make paper is the shared build the paper tests read (conftest.py's paper_dir runs "
        "it); the test targets and docs would run the tests from inside the tests; lab is a "
        "server that runs until stopped. `make -n` checks the target and its arguments",
        rewrite=lambda argv, _: [argv[0], "-n", *argv[1:]],
    ),
    Rule(
        "make run",
        lambda argv: _target(argv) == "run",
        "writes its run root to data/runs/local/GATE: OUT= puts it under tmp; its `data` "
        "step would wait for the project's lock while the shared build runs: `-o data` "
        "skips it (the release is imported)",
        rewrite=lambda argv, p: [argv[0], "-o", "data", *argv[1:], f"OUT={p.tmp}/runs/local/run"],
    ),
    Rule(
        "make compare",
        lambda argv: _target(argv) == "compare",
        "builds each release in compare/.builds/ (kept, reused by the next run) and writes "
        "compare/BASE..HEAD/, removed after the check",
        rewrite=_releases_made_by_the_page,
        slow=True,
        check=_removes_new_comparisons,
    ),
    Rule(
        "python -m pytest",
        lambda argv: argv[1:3] == ["-m", "pytest"],
        "would run the tests from inside the tests: --collect-only checks the files and the "
        "marker expression",
        rewrite=lambda argv, _: [*argv, "--collect-only"],
    ),
    Rule(
        "inspect eval / eval-set of the task",
        lambda argv: _is_inspect(argv) and INSPECT_TASK in argv,
        "hosted APIs need keys, Inspect's openai-api provider the openai package, and its "
        "plain mockllm/model downloads tiktoken's encoding: the task runs on "
        f"{OFFLINE_TASK} (mockllm answering from a script, offline), one epoch, the "
        "command's other options as written",
        rewrite=_offline_inspect,
        env={"PYTHONPATH": str(ROOT / "tests")},
        slow=True,
        check=_logs_load_as_runs,
        needs="inspect_ai",
    ),
    Rule(
        "steerbench-run --gate MODULE:FUNCTION",
        _is_python_gate,
        "the page's gate is saved under tmp (as mygate.py, which the page saves in the "
        "project folder) and named by its path; `--out ...` is a folder under tmp",
        rewrite=_python_gate,
    ),
    Rule(
        "papermill",
        lambda argv: Path(argv[0]).name == "papermill",
        "runs a notebook (about 25 s each)",
        slow=True,
    ),
]


def _extra_is_declared(argv: list[str], _: Placeholders) -> None:
    """The extras named are the project's, and the constraints file is there."""
    from importlib.metadata import metadata

    extras = set(metadata("steerbench-analysis").get_all("Provides-Extra") or [])
    named = {e for a in argv for e in re.findall(r"\.\[([\w,-]+)\]", a) for e in e.split(",")}
    assert named and named <= extras, (named, extras)
    assert (ROOT / argv[argv.index("-c") + 1]).is_file()


#: Commands that do not run here: (what, matches, why, what is checked instead).
NOT_RUNNABLE = [
    (
        "pip install of an extra",
        lambda argv: Path(argv[0]).name.startswith("pip") and "install" in argv,
        "installs into the environment the tests run in (make test installs the same extra)",
        _extra_is_declared,
    ),
]


def _listing(argv: list[str]):
    return next((entry for entry in NOT_RUNNABLE if entry[1](argv)), None)


def _rule(argv: list[str]) -> Rule | None:
    return next((rule for rule in RULES if rule.matches(argv)), None)


def _code_blocks() -> list[Block]:
    return [
        block
        for page in doc_blocks.PAGES
        if page not in doc_blocks.SKIPPED_PAGES
        for block in doc_blocks.blocks(page)
    ]


def _commands() -> tuple[list, list]:
    """The shell commands to run and those listed, as pytest parameters."""
    run, listed = [], []
    for block in _code_blocks():
        if block.language not in SHELL:
            continue
        try:
            found = doc_blocks.commands(block)
        except ValueError:  # reported by test_every_block_is_run_or_listed
            continue
        for command in found:
            if _listing(command.argv):
                listed.append(pytest.param(command, id=command.where))
                continue
            rule = _rule(command.argv)
            marks = [pytest.mark.slow, pytest.mark.spread] if rule and rule.slow else []
            run.append(pytest.param(command, id=command.where, marks=marks))
    return run, listed


RUN, LISTED = _commands()
PYTHON_PAGES = sorted({b.page for b in _code_blocks() if b.language in PYTHON})


@pytest.fixture(scope="module")
def server():
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
def placeholders(tmp_path, server) -> Placeholders:
    if not (paths.scenarios_dir() / "MANIFEST.md").exists():
        pytest.fail("the release is not imported: run `make data` (make test does it)")
    return Placeholders(tmp_path, server.base_url)


def _environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    return {**os.environ, "MPLBACKEND": "Agg", **(extra or {})}


def _run(argv: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    """Run ``argv`` from the project root, waiting while another build holds the lock."""
    deadline = time.monotonic() + 1800
    while True:
        try:
            done = subprocess.run(
                argv, capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout
            )
        except FileNotFoundError:
            return subprocess.CompletedProcess(argv, 127, "", f"{argv[0]}: command not found")
        if not (BUSY in done.stderr and time.monotonic() < deadline):
            return done
        time.sleep(1)


def _tail(text: str, chars: int = 3000) -> str:
    return text if len(text) <= chars else "..." + text[-chars:]


def unrunnable(blocks: list[Block]) -> list[str]:
    """The blocks neither run nor text: another language, untagged, or a shell line that is
    more than one command."""
    wrong = []
    for block in blocks:
        if block.language in doc_blocks.INERT_DIRECTIVES | PYTHON | TEXT:
            continue
        if block.language not in SHELL:
            kind = f"```{block.language}" if block.language else "an untagged block"
            wrong.append(f"{block.page}:{block.line}: {kind}: tag it sh, python or text")
            continue
        try:
            doc_blocks.commands(block)
        except ValueError as error:
            wrong.append(str(error))
    return wrong


def test_every_block_is_run_or_listed():
    """Each block is Python, shell or text, its shell lines split into commands, and each
    listed command is still on a page."""
    wrong = unrunnable(_code_blocks())
    assert not wrong, "\n".join(wrong)
    commands = [c.values[0] for c in RUN + LISTED]
    assert len(commands) > 10 and PYTHON_PAGES
    for what, matches, _, _ in NOT_RUNNABLE:
        assert any(matches(c.argv) for c in commands), f"no page has a {what} command any more"


def test_a_block_that_would_not_run_is_reported(tmp_path: Path):
    page = tmp_path / "page.md"
    page.write_text(
        "```\nmake paper\n```\n\n```console\n$ make paper\n```\n\n"
        "```sh\nmake data && make paper\n```\n\n```text\ndata/\n```\n",
        encoding="utf-8",
    )
    assert unrunnable(doc_blocks.blocks(str(page))) == [
        f"{page}:2: an untagged block: tag it sh, python or text",
        f"{page}:6: ```console: tag it sh, python or text",
        f"{page}:10: `make data && make paper` is more than one command or redirects: "
        "write one command a line",
    ]


def python_failure(page: str, placeholders: Placeholders) -> str | None:
    """Run ``page``'s Python blocks in order in one fresh interpreter; what failed, if any,
    naming the page, the block's first line and the failing line."""
    blocks = [b for b in doc_blocks.blocks(page) if b.language in PYTHON]
    source = placeholders.tmp / "blocks.json"
    source.write_text(json.dumps([[b.line, placeholders.text(b.text)] for b in blocks]))
    done = _run([sys.executable, "-c", doc_blocks.DRIVER, page, str(source)], _environment(), 600)
    failed = re.search(r"^docs-block-failed: (\d+) (\d+)$", done.stderr, re.M)
    if failed:
        first, line = int(failed[1]), int(failed[2])
        statement = (ROOT / page).read_text("utf-8").splitlines()[line - 1].strip()
        return (
            f"{page}, Python block at line {first}: line {line} `{statement}` failed:\n"
            f"{_tail(done.stderr)}"
        )
    output = done.stdout + done.stderr
    if done.returncode != 0 or "Traceback" in output:
        return f"{page}, Python blocks: exit status {done.returncode}\n{_tail(output)}"
    return None


def shell_failure(command: Command, placeholders: Placeholders) -> str | None:
    """Run one shell command of a page, its placeholders replaced and its rule applied;
    what failed, if any, naming the page, the block's first line and the command."""
    rule = _rule(command.argv)
    argv = placeholders.argv(command.argv)
    if rule:
        argv = rule.rewrite(argv, placeholders)
    done = _run(argv, _environment(rule.env if rule else None), 1800 if rule and rule.slow else 300)
    output = done.stdout + done.stderr
    where = f"{command.block.page}, block at line {command.block.line}: `{command.written}`"
    ran = f"ran as: {' '.join(argv)}" + (f" ({rule.what}: {rule.why})" if rule else "")
    if done.returncode != 0:
        return f"{where} exited with {done.returncode}\n{ran}\n{_tail(output)}"
    if "Traceback" in output:
        return f"{where} printed a traceback\n{ran}\n{_tail(output)}"
    if rule and rule.check:
        rule.check(argv, placeholders)
    return None


@pytest.mark.parametrize("page", PYTHON_PAGES)
def test_python_blocks_run(page: str, placeholders: Placeholders):
    failure = python_failure(page, placeholders)
    assert failure is None, failure


@pytest.mark.parametrize("command", RUN)
def test_shell_command_runs(command: Command, placeholders: Placeholders):
    rule = _rule(command.argv)
    if rule and rule.needs and importlib.util.find_spec(rule.needs) is None:
        pytest.skip(f"needs {rule.needs} (an optional extra)")
    failure = shell_failure(command, placeholders)
    assert failure is None, failure


def test_a_failing_block_is_named_by_page_line_and_command(placeholders: Placeholders):
    page = placeholders.tmp / "page.md"
    page.write_text(
        "# A page\n\n```python\nx = 1\n```\n\n```python\ny = x + 1\nz = y / 0\n```\n\n"
        "```sh\n# a comment\n.venv/bin/steerbench-run --gate always-hold \\\n"
        "    --no-such-option  # a comment\n```\n",
        encoding="utf-8",
    )
    failure = python_failure(str(page), placeholders)
    assert failure and failure.startswith(f"{page}, Python block at line 8: line 9 `z = y / 0`")
    assert "ZeroDivisionError" in failure
    [shell] = [b for b in doc_blocks.blocks(str(page)) if b.language in SHELL]
    [command] = doc_blocks.commands(shell)
    written = ".venv/bin/steerbench-run --gate always-hold --no-such-option"
    assert (shell.line, command.line, command.written) == (13, 14, written)
    failure = shell_failure(command, placeholders)
    assert failure and failure.startswith(f"{page}, block at line 13: `{written}` exited with 2")


@pytest.mark.parametrize("command", LISTED)
def test_listed_command_is_checked(command: Command, placeholders: Placeholders):
    _, _, _, check = _listing(command.argv)
    check(placeholders.argv(command.argv), placeholders)


_COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def test_a_heading_counting_commands_lists_that_many():
    """A heading such as "The two commands" is followed by a block of that many commands."""
    seen = 0
    for page in doc_blocks.PAGES:
        lines = (ROOT / page).read_text("utf-8").splitlines()
        blocks = doc_blocks.blocks(page)
        for i, line in enumerate(lines):
            heading = re.match(r"^#+ .*\b(\w+) commands\b", line, re.I)
            inside = any(b.line <= i + 1 <= b.line + b.text.count("\n") for b in blocks)
            if not heading or inside or heading[1].lower() not in _COUNTS:
                continue
            seen += 1
            [block, *_] = [b for b in blocks if b.line > i + 1]
            listed = doc_blocks.commands(block)
            assert len(listed) == _COUNTS[heading[1].lower()], f"{page}:{i + 1}: {line}"
    assert seen
