"""The build record's dirty flag: untracked files the build never reads (``explore/``) and
ignored files leave a build clean; a changed tracked file, or an untracked one elsewhere,
does not."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from analysis.paper.build.reports import uncommitted_changes


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "explore").mkdir(parents=True)
    (root / "analysis").mkdir()
    (root / "analysis" / "module.py").write_text("x = 1\n")
    (root / "explore" / "start-here.ipynb").write_text("{}\n")
    (root / ".gitignore").write_text("/scratch/\n*.log\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    return root


def test_a_clean_checkout_is_not_dirty(checkout):
    assert uncommitted_changes(checkout) is False


def test_untracked_notebooks_in_explore_and_ignored_files_leave_it_clean(checkout):
    (checkout / "explore" / "mine.ipynb").write_text("{}\n")
    (checkout / "explore" / "deeper").mkdir()
    (checkout / "explore" / "deeper" / "more.ipynb").write_text("{}\n")
    (checkout / "scratch").mkdir()
    (checkout / "scratch" / "out.csv").write_text("a\n")
    (checkout / "build.log").write_text("log\n")
    assert uncommitted_changes(checkout) is False


def test_a_modified_tracked_file_makes_it_dirty(checkout):
    (checkout / "explore" / "mine.ipynb").write_text("{}\n")
    (checkout / "analysis" / "module.py").write_text("x = 2\n")
    assert uncommitted_changes(checkout) is True


def test_a_modified_tracked_notebook_in_explore_makes_it_dirty(checkout):
    (checkout / "explore" / "start-here.ipynb").write_text('{"changed": 1}\n')
    assert uncommitted_changes(checkout) is True


def test_an_untracked_file_the_build_may_read_makes_it_dirty(checkout):
    (checkout / "analysis" / "new_module.py").write_text("y = 1\n")
    assert uncommitted_changes(checkout) is True


def test_a_staged_rename_makes_it_dirty(checkout):
    git(checkout, "mv", "analysis/module.py", "analysis/renamed.py")
    assert uncommitted_changes(checkout) is True


def test_outside_a_checkout_it_cannot_say(tmp_path):
    assert uncommitted_changes(tmp_path) is None
