"""``make compare`` on the real release: the worked example of docs/comparable-release.md
(one published condition taken out, re-pinned) run as written and compared; the release
compared with itself; a missing side, a refused side, and Ctrl-C while a side builds."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import release_copies

from analysis import paths

pytestmark = pytest.mark.slow

PAGE = paths.PROJECT_ROOT / "docs" / "comparable-release.md"
REMOVED = "kimi-k2.6 (off)"


def _blocks(language: str) -> list[str]:
    text = PAGE.read_text("utf-8")
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)


def _example(copy: Path) -> str:
    """The page's Python example, making its release at ``copy`` from the project's."""
    (script,) = _blocks("python")
    release_line = 'release = Path("../shared/steerbench-work")'
    copy_line = 'copy = Path("/tmp/steerbench-work-without-kimi-off")'
    assert release_line in script and copy_line in script
    script = script.replace(release_line, f"release = Path({str(paths.release_dir())!r})")
    return script.replace(copy_line, f"copy = Path({str(copy)!r})")


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("compare-real")


@pytest.fixture(scope="module")
def without(out) -> Path:
    """The page's comparable release: its example run as written (paths aside)."""
    copy = out.parent / "steerbench-work-without-kimi-off"
    done = subprocess.run(
        [sys.executable, "-c", _example(copy)],
        capture_output=True,
        text=True,
        cwd=paths.PROJECT_ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{copy}: 29 published conditions"
    return copy


@pytest.fixture(scope="module")
def compared(out, without) -> Path:
    from analysis.compare import compare_releases

    return compare_releases(paths.release_dir(), without, out_root=out)


def _csv(folder: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(folder / name, keep_default_na=False)


def test_removing_one_condition_gives_exactly_that(compared) -> None:
    status = _csv(compared, "conditions.csv").set_index("condition")["status"]
    assert status[status != "unchanged"].to_dict() == {REMOVED: "removed"}
    assert len(status) == 30
    assert set(_csv(compared, "scenarios.csv")["change"]) == {"unchanged"}
    table = _csv(compared, "table2-changes.csv")
    assert REMOVED not in set(table["condition"])
    change = pd.to_numeric(table["change"])
    assert len(table) and (change.dropna() == 0).all()  # no shared condition changed


def test_no_false_rank_alarm(compared) -> None:
    from analysis.compare.ranks import REMOVED as GONE
    from analysis.compare.ranks import SAME, SHIFTED

    ranks = _csv(compared, "ranks.csv").set_index("condition")
    shared = ranks.drop(REMOVED)
    assert (shared["shared_rank_change"].astype(int) == 0).all()
    assert set(shared["rank_sets_overlap"].astype(str)) == {"True"}
    assert set(shared["rank_note"]) == {SAME, SHIFTED}
    assert ranks.at[REMOVED, "rank_note"] == GONE
    below = shared.loc[shared["base_rank"].astype(int) > int(ranks.at[REMOVED, "base_rank"])]
    assert len(below) == 24 and set(below["rank_note"]) == {SHIFTED}
    assert (below["rank_change"].astype(int) == 1).all()
    nano = shared.loc["gpt-5.4-nano (off)"]  # ranked last: [30, 30] -> [29, 29] in Table 2
    assert (int(nano["base_rank"]), int(nano["head_rank"])) == (30, 29)
    assert (nano["base_rank_low"], nano["base_rank_high"]) == (
        nano["head_rank_low"],
        nano["head_rank_high"],
    )


def test_corpus_gate_and_label_numbers_are_unchanged(compared) -> None:
    numbers = _csv(compared, "numbers.csv")
    section = numbers["name"].str.split(".").str[0]
    kept = numbers.loc[section.isin(["corpus", "gates", "labels"])]
    assert len(kept) > 30 and set(kept["status"]) == {"unchanged"}
    ranks = numbers["name"].str.contains(r"\.rank(?:\.|_|$)")  # not detect.ranks.pairs
    assert "changed" not in set(numbers.loc[ranks, "status"])


def test_the_summary_is_the_pages(compared) -> None:
    """The lines the page quotes are the summary's; the page uses the CSV's names and says
    each method once; claims.csv keeps why a claim is not reproduced."""
    document = json.loads((compared / "changes.json").read_text())
    (quoted,) = _blocks("text")
    for line in quoted.strip().splitlines():
        assert line in document["summary_lines"], (line, document["summary_lines"])
    assert all(len(line) <= 130 for line in document["summary_lines"])
    assert "gone" not in document["summary"]
    page = (compared / "index.html").read_text()
    for name in ("design_<wbr>effect_<wbr>min_<wbr>base", "clustered_<wbr>bound_<wbr>low"):
        assert name in page
    assert "deff_min" not in page and "bound_low<" not in page
    from analysis.compare.conditions import COUNTS_METHOD

    assert page.count(COUNTS_METHOD) == 1
    claims = _csv(compared, "claims.csv")
    assert {"base_difference", "head_difference"} <= set(claims.columns)
    changed = claims.loc[claims["verdict_changed"].astype(str) == "True"]
    differs = changed.loc[changed["head_status"] == "differs", "head_difference"]
    assert len(differs) and (differs != "").all()


def test_the_release_against_itself_changes_nothing(out, compared) -> None:
    from analysis.compare import compare_releases

    folder = compare_releases(paths.release_dir(), paths.release_dir(), out_root=out)
    document = json.loads((folder / "changes.json").read_text())
    assert document["nothing_changed"], document["summary"]
    assert document["summary_lines"][-1] == "Nothing changed."
    assert set(_csv(folder, "numbers.csv")["status"]) == {"unchanged"}


def _compare(*args: str | Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "analysis.compare", *map(str, args), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=paths.PROJECT_ROOT,
    )


def test_a_missing_side_is_one_error_naming_it(tmp_path) -> None:
    missing = tmp_path / "no-such-release"
    done = _compare(paths.release_dir(), missing, out=tmp_path / "out")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"error: {missing}: no release folder there."]
    assert not (tmp_path / "out").exists()  # named before either side was built


def test_a_refused_side_keeps_every_line_and_names_the_users_file(out, without) -> None:
    """A printed value edited (and re-pinned) so that it no longer fits its counts: the
    build refuses the release; the error names the user's leaderboard.json, not the build's
    copy, and keeps the line saying which value disagrees."""
    bad = out.parent / "steerbench-work-misprinted"
    shutil.copytree(without, bad)
    board_file = release_copies.results(bad) / "leaderboard.json"
    board = json.loads(board_file.read_text("utf-8"))
    row = board["rows"][0]
    printed = row["modal_accuracy"]
    row["modal_accuracy"] = printed.replace(printed.split("%")[0], "12.3", 1)
    board_file.write_text(json.dumps(board, indent=2) + "\n", "utf-8")
    release_copies.repin(bad)
    done = _compare(paths.release_dir(), bad, out=out)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == f"error: {board_file}: 1 published value(s) do not match:"
    condition = f"{row['model']} ({row['reasoning']})"
    assert lines[1].startswith(f"  - {condition}: modal_accuracy: published '12.3%")
    assert ".builds" not in done.stderr and "Traceback" not in done.stderr
    assert len(lines) == 2


def test_ctrl_c_stops_with_one_line_and_leaves_nothing_running(tmp_path, without) -> None:
    """Ctrl-C (SIGINT to the whole foreground process group, as a terminal sends it) while a
    side builds its notebooks: one line, exit status 130, and every process it started gone."""
    import psutil

    command = [sys.executable, "-m", "analysis.compare", str(paths.release_dir()), str(without)]
    process = subprocess.Popen(
        [*command, "--out", str(tmp_path / "out")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=paths.PROJECT_ROOT,
        start_new_session=True,
        # as from a terminal, whatever this process's parent ignores (a background job: SIGINT)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        parent = psutil.Process(process.pid)
        deadline = time.monotonic() + 300
        kernels = []
        while not kernels and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.3)
            try:
                started = parent.children(recursive=True)
                kernels = [p for p in started if "ipykernel" in " ".join(p.cmdline())]
            except psutil.Error:  # a process ended while being listed
                continue
        assert kernels, "no kernel started"
        started = parent.children(recursive=True)
        os.killpg(process.pid, signal.SIGINT)
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    from analysis.compare.__main__ import INTERRUPTED

    assert process.returncode == 130, stderr
    assert stderr.splitlines() == [INTERRUPTED]
    _, alive = psutil.wait_procs(started, timeout=10)
    assert alive == []
