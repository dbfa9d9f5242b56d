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

    def text(self, text: str) -> str:
        """The path and address placeholders in ``text`` (a token, or a Python block)."""
        for pattern, _, replace in PLACEHOLDERS:
            text = re.sub(pattern, lambda m: replace(self, m), text)
        return text

    def argv(self, argv: list[str]) -> list[str]:
        out = [self.text(token) for token in argv]
        for i, token in enumerate(out[:-1]):
            if token == "--log-dir":
                out[i + 1] = str(self.tmp / "logs" / Path(out[i + 1]).name)
        return out


#: Placeholder pattern, what it becomes, and how. ``--log-dir DIR`` becomes ``tmp/logs/DIR``.
PLACEHOLDERS: list[tuple[str, str, Callable[[Placeholders, re.Match], str]]] = [
    (
        r"/path/to/(steerbench-work[\w.-]*)",
        "a copy of the release under tmp, same folder name (tests/release_copies.py)",
        lambda p, m: p.release(m[1]),
    ),
    (
        r"http://127\.0\.0\.1:8000/v1",
        "the fake OpenAI-compatible server on 127.0.0.1 (tests/fake_openai_server.py)",
        lambda p, m: p.base_url,
    ),
    (r"\bMODEL\b", f"{MODEL_NAME}, a name that server answers", lambda p, m: MODEL_NAME),
    (
        r"^data/runs/local/",
        "tmp/runs/local/: a run of the tests never lands in the project's data/",
        lambda p, m: f"{p.tmp}/runs/local/",
    ),
    (r"^/tmp/", "tmp/", lambda p, m: f"{p.tmp}/"),
    (r"^out\.ipynb$", "tmp/out.ipynb", lambda p, m: f"{p.tmp}/out.ipynb"),
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
    for i, token in enumerate(argv):
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
    code = "import sys\nfrom analysis import load_trials\nfor log in sys.argv[1:]: load_trials([log])"
    done = subprocess.run(
        [sys.executable, "-c", code, *map(str, logs)], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-3000:]


def _removes_new_comparisons(argv: list[str], _: Placeholders) -> None:
    """The comparison folders the command wrote under compare/ (its builds are kept)."""
    names = [a.split("=", 1)[1] for a in argv if a.startswith(("BASE=", "HEAD="))]
    written = paths.COMPARE_DIR / f"{Path(names[0]).name}..{Path(names[1]).name}"
    assert (written / "index.html").is_file(), f"{written}/index.html not written"
    shutil.rmtree(written)


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
        "writes its run root to data/runs/local/GATE: OUT= puts it under tmp",
        rewrite=lambda argv, p: [*argv, f"OUT={p.tmp}/runs/local/run"],
    ),
    Rule(
        "make compare",
        lambda argv: _target(argv) == "compare",
        "builds each release in compare/.builds/ (kept, reused by the next run) and writes "
        "compare/BASE..HEAD/, removed after the check",
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
        "the models are hosted APIs needing keys (or a server with the openai package), and "
        "Inspect's plain mockllm/model downloads tiktoken's encoding: the task runs on "
        f"{OFFLINE_TASK} (mockllm answering from a script, offline), one epoch, the "
        "command's other options as written",
        rewrite=_offline_inspect,
        env={"PYTHONPATH": str(ROOT / "tests")},
        slow=True,
        check=_logs_load_as_runs,
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
            marks = [pytest.mark.slow] if rule and rule.slow else []
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


def test_every_block_is_run_or_listed():
    """Each block is Python, shell or text, its shell lines split into commands, and each
    listed command is still on a page."""
    wrong = []
    for block in _code_blocks():
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
    assert not wrong, "\n".join(wrong)
    commands = [c.values[0] for c in RUN + LISTED]
    assert len(commands) > 10 and PYTHON_PAGES
    for what, matches, _, _ in NOT_RUNNABLE:
        assert any(matches(c.argv) for c in commands), f"no page has a {what} command any more"


@pytest.mark.parametrize("page", PYTHON_PAGES)
def test_python_blocks_run(page: str, placeholders: Placeholders):
    blocks = [b for b in doc_blocks.blocks(page) if b.language in PYTHON]
    source = placeholders.tmp / "blocks.json"
    source.write_text(json.dumps([[b.line, placeholders.text(b.text)] for b in blocks]))
    done = _run(
        [sys.executable, "-c", doc_blocks.DRIVER, page, str(source)], _environment(), 600
    )
    failed = re.search(r"^docs-block-failed: (\d+) (\d+)$", done.stderr, re.M)
    if failed:
        first, line = int(failed[1]), int(failed[2])
        statement = (ROOT / page).read_text("utf-8").splitlines()[line - 1].strip()
        pytest.fail(
            f"{page}, Python block at line {first}: line {line} `{statement}` failed:\n"
            f"{_tail(done.stderr)}"
        )
    output = done.stdout + done.stderr
    assert done.returncode == 0 and "Traceback" not in output, f"{page}:\n{_tail(output)}"


@pytest.mark.parametrize("command", RUN)
def test_shell_command_runs(command: Command, placeholders: Placeholders):
    rule = _rule(command.argv)
    argv = placeholders.argv(command.argv)
    if rule:
        argv = rule.rewrite(argv, placeholders)
    done = _run(argv, _environment(rule.env if rule else None), 1800 if rule and rule.slow else 300)
    output = done.stdout + done.stderr
    where = f"{command.block.page}, block at line {command.block.line}: `{command.written}`"
    ran = f"ran as: {' '.join(argv)}" + (f" ({rule.what}: {rule.why})" if rule else "")
    assert done.returncode == 0, f"{where} exited with {done.returncode}\n{ran}\n{_tail(output)}"
    assert "Traceback" not in output, f"{where} printed a traceback\n{ran}\n{_tail(output)}"
    if rule and rule.check:
        rule.check(argv, placeholders)


@pytest.mark.parametrize("command", LISTED)
def test_listed_command_is_checked(command: Command, placeholders: Placeholders):
    _, _, _, check = _listing(command.argv)
    check(placeholders.argv(command.argv), placeholders)


_COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def test_a_heading_counting_commands_lists_that_many():
    """"The two commands" is followed by a block of two commands."""
    seen = 0
    for page in doc_blocks.PAGES:
        lines = (ROOT / page).read_text("utf-8").splitlines()
        for i, line in enumerate(lines):
            heading = re.match(r"^#+ .*\b(\w+) commands\b", line, re.I)
            if not heading or heading[1].lower() not in _COUNTS:
                continue
            seen += 1
            [block, *_] = [b for b in doc_blocks.blocks(page) if b.line > i + 1]
            listed = doc_blocks.commands(block)
            assert len(listed) == _COUNTS[heading[1].lower()], f"{page}:{i + 1}: {line}"
    assert seen
