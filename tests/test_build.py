"""`make paper` end to end: every published number lands in numbers.json from one shared
build; rebuilds are keyed by content; bad input, a busy lock, a read-only paper/ and a
failing notebook are refused before anything is written, each with one `error:` line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import published
import pytest
from factories import data_copy, shown_warnings
from release_copies import copy_release, rename_version

from analysis import paths
from analysis.corpus.scenarios import load_scenarios
from analysis.paper.make import build_digest, default_notebooks, paper_digest, recover_paper
from analysis.release.identity import LOCK_NAME

PER_TRIAL_OUTPUTS = {
    "table3-pattern-gradient",
    "hardest-scenarios",
    "severity-by-tier",
    "accuracy-by-domain",
    "accuracy-by-action-effect",
    "mirror-vs-anchor",
    "stability-ranks",
    "trial-splits",
    "sensitivity-checks",
}


def run(module, *args, data=None, release_dir=None, timeout=600):
    env = dict(os.environ)
    if data is not None:
        env["STEERBENCH_DATA_DIR"] = str(data)
    if release_dir is not None:
        env["RELEASE_DIR"] = str(release_dir)
    return subprocess.run(
        [sys.executable, "-m", module, *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=paths.PROJECT_ROOT,
        timeout=timeout,
    )


def value(numbers, name):
    return numbers[name]["value"]


def test_headline_numbers(numbers):
    k, n, rate = published.OVER_REFUSAL
    over = numbers["direction.over_refusal"]
    assert (over["numerator"], over["denominator"], over["value"]) == (k, n, rate)
    k, n, rate = published.UNDER_REFUSAL
    under = numbers["direction.under_refusal"]
    assert (under["numerator"], under["denominator"], under["value"]) == (k, n, rate)
    assert value(numbers, "direction.raw_ratio") == published.RAW_RATIO
    assert value(numbers, "direction.rate_ratio") == published.RATE_RATIO
    assert value(numbers, "direction.opportunity_ratio") == published.OPPORTUNITY_RATIO
    assert value(numbers, "direction.undecided_proceed_cells") == (
        published.UNDECIDED_PROCEED_CELLS
    )
    assert value(numbers, "direction.over_refusal_undecided_as_misses") == (
        published.OVER_REFUSAL_UNDECIDED_AS_MISSES
    )
    assert value(numbers, "gates.always-hold.accuracy") == published.ALWAYS_HOLD
    assert value(numbers, "gates.always-proceed.accuracy") == published.ALWAYS_PROCEED
    assert value(numbers, "gates.always-hold.over_refusal") == 100.0
    assert value(numbers, "gates.always-proceed.under_refusal") == 100.0


def test_corpus_numbers(numbers):
    assert value(numbers, "corpus.label.proceed") == published.LABELS["proceed"]
    assert value(numbers, "corpus.label.hold") == published.LABELS["hold"]
    for direction, count in published.DIRECTIONS.items():
        assert value(numbers, f"corpus.direction.{direction}") == count
    for pattern, count in published.PATTERNS.items():
        assert value(numbers, f"corpus.pattern.{pattern}") == count
    for (pattern, direction), count in published.RECONCILIATION.items():
        assert value(numbers, f"corpus.reconciliation.{pattern}.{direction}") == count


def test_leaderboard_numbers(numbers):
    label, mean, pass5 = published.LEADER
    assert value(numbers, "leaderboard.leader") == label
    assert value(numbers, "leaderboard.leader.mean_trial_accuracy") == mean
    assert value(numbers, "leaderboard.leader.pass5") == pass5
    label, modal = published.MODAL_LEADER
    assert value(numbers, "leaderboard.modal_leader") == label
    assert value(numbers, "leaderboard.modal_leader.modal_accuracy") == modal
    assert value(numbers, "leaderboard.conditions_beating_both_gates") == published.CONDITIONS
    nano = published.REASONING["gpt-5.4-nano"]
    assert value(numbers, "table2.gpt-5-4-nano-off.mean_trial_accuracy") == nano[0]


def test_reasoning_and_label_numbers(numbers):
    assert value(numbers, "reasoning.models_with_both") == published.REASONING_MODELS
    _, high_accuracy, floor_over, _ = published.REASONING["gpt-5.4-nano"]
    assert value(numbers, "reasoning.gpt-5-4-nano.mean_trial_accuracy.high") == high_accuracy
    assert value(numbers, "reasoning.gpt-5-4-nano.over_refusal.floor") == floor_over
    _, lite_high, _, _ = published.REASONING["gemini-3.1-flash-lite"]
    assert value(numbers, "reasoning.gemini-3-1-flash-lite.mean_trial_accuracy.high") == lite_high
    k, n, rate = published.HUMAN_MATCH
    match = numbers["labels.human_majority_match"]
    assert (match["numerator"], match["denominator"], match["value"]) == (k, n, rate)
    for label, kappa in published.HUMAN_KAPPAS.items():
        assert value(numbers, f"labels.human.fleiss_kappa.{label}") == kappa
    for name, reported in published.LLM_PANEL.items():
        assert value(numbers, f"labels.llm_panel.{name}") == reported


def test_every_number_names_its_inputs_and_notebook(numbers, paper_dir):
    for name, entry in numbers.items():
        assert entry["inputs"], name
        assert all(len(digest) == 64 for digest in entry["inputs"].values()), name
        assert (paper_dir / "notebooks" / f"{entry['notebook']}.ipynb").is_file(), name


def test_no_executed_notebook_shows_a_warning_or_an_error(paper_dir):
    assert shown_warnings(paper_dir) == []


def test_outputs(paper_dir):
    figures = {p.stem for p in (paper_dir / "figures").glob("*.png")}
    for name in ("table2-leaderboard", "over-vs-under-refusal", "domain-by-action-effect"):
        assert name in figures
        assert (paper_dir / "figures" / f"{name}.pdf").stat().st_size > 0
    tables = {p.stem for p in (paper_dir / "tables").glob("*.csv")}
    for name in ("table2-leaderboard", "direction-asymmetry", "label-agreement"):
        for suffix in ("tex", "md", "csv"):
            assert (paper_dir / "tables" / f"{name}.{suffix}").is_file()
    assert tables | figures >= PER_TRIAL_OUTPUTS
    assert "\\toprule" in (paper_dir / "tables" / "table2-leaderboard.tex").read_text()
    assert "Table 2" in (paper_dir / "index.html").read_text()


def test_build_record_names_release_commit_and_versions(paper_dir):
    record = json.loads((paper_dir / "numbers.json").read_text())["build"]
    imported = paths.imported_release()
    assert record["release_dir"] == imported["release_dir"] == str(paths.release_dir())
    assert record["release_digest"] == imported["release_digest"]
    # The build is keyed by content, so it may predate commits that changed no input.
    ancestor = subprocess.run(
        ["git", "merge-base", "--is-ancestor", record["git_commit"], "HEAD"],
        cwd=paths.PROJECT_ROOT,
    )
    assert len(record["git_commit"]) == 40 and ancestor.returncode == 0
    assert isinstance(record["git_dirty"], bool)
    assert record["python"] == ".".join(map(str, sys.version_info[:3]))
    assert record["packages"]["pandas"] == __import__("pandas").__version__
    assert record["built_at"].endswith("Z")


def test_no_op_is_keyed_by_content_and_fast(paper_dir):
    assert paper_digest(paper_dir) == build_digest(paths.data_dir(), default_notebooks())
    started = time.perf_counter()
    result = run("analysis.paper.make", "paper")
    assert result.returncode == 0, result.stderr
    assert time.perf_counter() - started < 2.0  # < 1 s on a quiet machine; headroom when shared
    assert "is up to date" in result.stdout
    assert "Traceback" not in result.stderr


def test_no_op_check_does_not_import_the_analysis_stack():
    probe = (
        "import sys, analysis.paper.make, analysis.release.importer; "
        "print(sorted({'pandas', 'numpy', 'matplotlib'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stderr


def test_digest_follows_content_not_timestamps(tmp_path):
    data = data_copy(tmp_path)
    notebooks = default_notebooks()
    base = build_digest(data, notebooks)
    run_root = data / "runs" / "reference-policies"
    copied = data / "runs" / "local" / "copied"
    copied.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(run_root, copied)  # copy2: the old timestamps travel along (cp -p)
    added = build_digest(data, notebooks)
    assert added != base
    table = copied / "trials.csv"
    stat = table.stat()
    table.write_text(table.read_text().replace("allowed", "blocked", 1))
    os.utime(table, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size class, same mtime
    assert build_digest(data, notebooks) not in (base, added)
    shutil.rmtree(copied)
    assert build_digest(data, notebooks) == base  # a deleted run disappears
    assert build_digest(data, notebooks[:1]) != base


@pytest.mark.slow
def test_bad_leaderboard_writes_nothing(tmp_path):
    data = data_copy(tmp_path)
    board_path = data / "runs" / paths.release() / "leaderboard.json"
    board = json.loads(board_path.read_text())
    board["rows"][0]["under_refusal"] = "2% (1/50)"
    board_path.write_text(json.dumps(board))
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "keep.txt").write_text("previous build")
    result = run(
        "analysis.paper.build", "--paper-dir", paper, "notebooks/01-corpus.ipynb", data=data
    )
    assert result.returncode == 2
    assert result.stderr.startswith("error: ")
    assert "gpt-5.4-nano (off)" in result.stderr
    assert "Nothing was written" in result.stderr
    assert [p.name for p in paper.iterdir()] == ["keep.txt"]
    assert not paper.with_name("paper.staging").exists()


@pytest.mark.slow
def test_bad_run_file_is_refused_before_any_notebook(tmp_path):
    data = data_copy(tmp_path)
    bad = data / "runs" / "local" / "broken.csv"
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_text("not,a,trials\ntable,at,all\n")
    result = run("analysis.paper.build", "--paper-dir", tmp_path / "paper", data=data)
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and str(bad) in result.stderr
    assert "Traceback" not in result.stderr
    assert " ok" not in result.stdout and "failed" not in result.stdout
    assert not (tmp_path / "paper").exists()


@pytest.mark.slow
def test_a_run_whose_every_cell_was_filtered_builds(tmp_path):
    """The only local run: every trial refused by the provider. Nothing of it can be
    scored, and the paper still builds, citing no rate of it."""
    data = data_copy(tmp_path)
    shutil.rmtree(data / "runs" / "sample-artifacts")
    scenario_ids = sorted(load_scenarios()["scenario_id"].astype(str))[:12]
    rows = ["scenario_id,model,reasoning,trial,commit_permission,status"]
    rows += [
        f"{sid},filtered-model,off,{trial},,provider_filtered"
        for sid in scenario_ids
        for trial in range(1, 6)
    ]
    (data / "runs" / "local").mkdir(parents=True, exist_ok=True)
    (data / "runs" / "local" / "filtered.csv").write_text("\n".join(rows) + "\n")
    paper = tmp_path / "paper"
    result = run("analysis.paper.build", "--paper-dir", paper, data=data)
    assert result.returncode == 0, result.stderr
    numbers = json.loads((paper / "numbers.json").read_text())["numbers"]
    of_it = {name: number for name, number in numbers.items() if "filtered-model" in name}
    assert of_it and not [name for name, number in of_it.items() if "denominator" in number]
    stability = (paper / "tables" / "stability-ranks.csv").read_text()
    assert "filtered-model (off)" in stability
    yours = (paper / "tables" / "your-runs.csv").read_text()  # ranked last, with no rate
    assert "filtered-model (off)" in yours and "of 34" in yours


def test_the_build_runs_on_as_many_kernels_as_asked(tmp_path, monkeypatch):
    from analysis.paper import make

    monkeypatch.setenv("STEERBENCH_DATA_DIR", str(data_copy(tmp_path)))
    started = []

    def exec_build(executable, command):  # in place of the build replacing this process
        started.append(command)
        raise SystemExit(0)

    monkeypatch.setattr(make.os, "execv", exec_build)
    paper = tmp_path / "paper"
    with pytest.raises(SystemExit):
        make.main(["paper", "--paper-dir", str(paper), "--workers", "1"])
    with pytest.raises(SystemExit):
        make.main(["paper", "--paper-dir", str(paper), "--force"])
    asked, default = started
    assert asked[2:] == [
        "analysis.paper.build",
        "--paper-dir",
        str(paper.resolve()),
        "--workers",
        "1",
    ]
    assert default[2:] == ["analysis.paper.build", "--paper-dir", str(paper.resolve())]


def live_pid_lock(data: Path):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    (data / LOCK_NAME).write_text(f"{sleeper.pid}\n")
    return sleeper


def test_second_build_refuses_while_one_runs(tmp_path):
    data = data_copy(tmp_path)
    sleeper = live_pid_lock(data)
    try:
        result = run("analysis.paper.make", "paper", "--paper-dir", tmp_path / "paper", data=data)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {data / LOCK_NAME}: another build")
    assert f"PID {sleeper.pid}" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "paper").exists()


def test_stale_lock_is_taken_over(tmp_path):
    data = data_copy(tmp_path)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    (data / LOCK_NAME).write_text(f"{gone.pid}\n")
    result = run("analysis.paper.make", "data", data=data)
    assert result.returncode == 0, result.stderr
    assert not (data / LOCK_NAME).exists()


def make_read_only(folder: Path) -> bool:
    if os.geteuid() == 0:  # root ignores permissions; the immutable flag still binds it
        done = subprocess.run(["chattr", "+i", str(folder)], capture_output=True)
        return done.returncode == 0
    folder.chmod(0o555)
    return True


def undo_read_only(folder: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(folder)], capture_output=True)
    folder.chmod(0o755)


def test_read_only_paper_is_refused_before_any_notebook(tmp_path):
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "keep.txt").write_text("previous build")
    if not make_read_only(paper):
        pytest.skip("cannot make a folder read-only here")
    try:
        started = time.perf_counter()
        result = run("analysis.paper.build", "--paper-dir", paper, data=data_copy(tmp_path))
        seconds = time.perf_counter() - started
    finally:
        undo_read_only(paper)
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {paper}: not writable")
    assert "Traceback" not in result.stderr and " ok" not in result.stdout
    assert seconds < 30
    assert [p.name for p in paper.iterdir()] == ["keep.txt"]


def test_missing_paper_is_restored_from_previous(tmp_path, paper_dir):
    paper = tmp_path / "paper"
    shutil.copytree(paper_dir, paper.with_name("paper.previous"))
    assert recover_paper(paper)
    assert (paper / "numbers.json").is_file()
    assert not paper.with_name("paper.previous").exists()
    assert not recover_paper(paper)
    shutil.rmtree(paper)
    shutil.copytree(paper_dir, paper.with_name("paper.previous"))
    result = run("analysis.paper.make", "paper", "--paper-dir", paper)
    assert result.returncode == 0, result.stderr
    assert "is up to date" in result.stdout and (paper / "index.html").is_file()


def failing_notebook(folder: Path) -> Path:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# A notebook that fails"),
        nbformat.v4.new_code_cell("output_dir = None", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_code_cell("# divide by nothing\nx / 0"),
        nbformat.v4.new_code_cell("print('never')"),
    ]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    notebook.metadata["language_info"] = {"name": "python"}
    path = folder / "99-fails.ipynb"
    nbformat.write(notebook, path)
    return path


@pytest.mark.slow
def test_failing_notebook_is_named_with_its_cell_and_kept(tmp_path):
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "keep.txt").write_text("previous build")
    notebook = failing_notebook(tmp_path)
    result = run("analysis.paper.build", "--paper-dir", paper, notebook, data=data_copy(tmp_path))
    assert result.returncode == 1
    first = result.stderr.splitlines()[0]
    assert first.startswith("error: notebook 99-fails.ipynb: cell index 3 (`# divide by nothing`)")
    assert "ZeroDivisionError" in first
    kept = tmp_path / "paper.failed" / "99-fails.ipynb"
    assert str(kept) in first
    executed = nbformat.read(kept, as_version=4)
    outputs = [o for cell in executed.cells if cell.cell_type == "code" for o in cell.outputs]
    assert any(o.get("ename") == "ZeroDivisionError" for o in outputs)
    assert "99-fails" in result.stdout and "failed" in result.stdout
    for noise in ("without encryption", "IPKernelApp", "KeyboardInterrupt", "Traceback"):
        assert noise not in result.stdout + result.stderr
    assert [p.name for p in paper.iterdir()] == ["keep.txt"]


@pytest.mark.slow
def test_two_builds_at_once_one_refuses(tmp_path):
    data = data_copy(tmp_path)
    env = {**os.environ, "STEERBENCH_DATA_DIR": str(data)}
    command = [sys.executable, "-m", "analysis.paper.build", "notebooks/09-labels.ipynb"]
    first = subprocess.Popen(
        [*command, "--paper-dir", str(tmp_path / "a")],
        env=env,
        cwd=paths.PROJECT_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (data / LOCK_NAME).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    second = run(
        "analysis.paper.build",
        "--paper-dir",
        tmp_path / "b",
        "notebooks/09-labels.ipynb",
        data=data,
    )
    _, err = first.communicate(timeout=600)
    assert first.returncode == 0, err
    assert second.returncode == 2 and "another build" in second.stderr
    assert (tmp_path / "a" / "numbers.json").is_file() and not (tmp_path / "b").exists()


@pytest.mark.slow
def test_make_paper_switches_releases_a_b_a(tmp_path):
    """Each switch re-imports and rebuilds with no manual step; the paper names its release."""
    a = paths.release_dir()
    b = copy_release(tmp_path / "b")
    rename_version(b, "v2027-01", "steerbench-work-2027-01")
    data = data_copy(tmp_path)
    paper = tmp_path / "paper"
    for root, version in ((a, paths.release()), (b, "v2027-01"), (a, paths.release())):
        result = run(
            "analysis.paper.make", "paper", "--paper-dir", paper, data=data, release_dir=root
        )
        assert result.returncode == 0, result.stderr
        document = json.loads((paper / "numbers.json").read_text())
        assert document["build"]["release_dir"] == str(root)
        assert document["build"]["release"] == version
        assert document["release"] == version


@pytest.mark.slow
def test_touching_one_notebook_reruns_only_it(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    for name in ("03-direction.ipynb", "09-labels.ipynb"):
        shutil.copy2(paths.NOTEBOOKS_DIR / name, folder / name)
    paper = tmp_path / "paper"
    data = data_copy(tmp_path)  # its own lock: the shared build may be running beside it
    first = run(
        "analysis.paper.build", "--paper-dir", paper, *sorted(folder.glob("*.ipynb")), data=data
    )
    assert first.returncode == 0, first.stderr
    check, *_, report, _ = first.stdout.splitlines()  # each step's line, as it ended
    assert check.split()[:2] == ["input", "check"] and check.endswith(" s  ok")
    assert report.split()[:2] == ["numbers.json", "and"] and report.endswith(" s  ok")
    before = json.loads((paper / "numbers.json").read_text())["numbers"]
    figure = next((paper / "figures").glob("*.png"))
    touched = folder / "09-labels.ipynb"
    notebook = nbformat.read(touched, as_version=4)
    notebook.cells.append(nbformat.v4.new_markdown_cell("An added note."))
    nbformat.write(notebook, touched)
    second = run(
        "analysis.paper.build", "--paper-dir", paper, *sorted(folder.glob("*.ipynb")), data=data
    )
    assert second.returncode == 0, second.stderr
    lines = {line.split()[0]: line for line in second.stdout.splitlines() if line.startswith("  ")}
    assert lines["03-direction"].endswith("unchanged")
    assert lines["09-labels"].endswith("ok")
    assert json.loads((paper / "numbers.json").read_text())["numbers"] == before
    assert (paper / "figures" / figure.name).is_file()
    executed = nbformat.read(paper / "notebooks" / "09-labels.ipynb", as_version=4)
    assert executed.cells[-1].source == "An added note."
    (paper / "numbers.json").unlink()
    third = run(
        "analysis.paper.build", "--paper-dir", paper, *sorted(folder.glob("*.ipynb")), data=data
    )
    assert third.returncode == 0, third.stderr  # nothing runs: the report is made in-process
    *notebook_lines, report, built = third.stdout.splitlines()
    assert all(line.endswith("unchanged") for line in notebook_lines)
    assert report.split()[:2] == ["numbers.json", "and"] and report.endswith(" s  ok")
    assert built.startswith("Built ")
    assert json.loads((paper / "numbers.json").read_text())["numbers"] == before


def test_notebooks_startlongest_first(tmp_path: Path) -> None:
    from analysis.paper.build.carry_over import STAMP
    from analysis.paper.build.scheduler import longest_first
    from analysis.paper.make import default_notebooks

    notebooks = default_notebooks()
    # never timed: the sections reading per-trial verdicts and conditions first
    order = [nb.stem for nb in longest_first(notebooks, tmp_path)]
    assert order[:4] == ["11-detectable", "10-inference", "07-stability", "02-leaderboard"]
    assert set(order[4:7]) == {"05-patterns", "06-mirrors", "08-sensitivity"}
    assert order[-2:] == ["09-labels", "01-corpus"]
    # timed: by the seconds the last build took, a notebook never timed before them
    seconds = {nb.name: {"seconds": float(n)} for n, nb in enumerate(notebooks[1:])}
    (tmp_path / STAMP).write_text(json.dumps({"notebooks": seconds}))
    order = [nb.stem for nb in longest_first(notebooks, tmp_path)]
    assert order == [notebooks[0].stem, *(nb.stem for nb in reversed(notebooks[1:]))]


def test_a_new_paper_folder_orders_notebooks_by_the_last_build_on_its_data(tmp_path) -> None:
    from analysis.files.digests import file_sha256
    from analysis.paper.build.scheduler import longest_first, remember_seconds
    from analysis.paper.make import default_notebooks

    notebooks = default_notebooks()
    data, paper = tmp_path / "data", tmp_path / "paper"
    data.mkdir()
    records = {
        nb.name: {"sha256": file_sha256(nb), "seconds": float(n), "outputs": []}
        for n, nb in enumerate(notebooks)
    }
    remember_seconds(data, dict(list(records.items())[:5]))
    remember_seconds(data, dict(list(records.items())[5:]))  # merged with the first
    order = [nb.stem for nb in longest_first(notebooks, paper, data)]
    assert order == [nb.stem for nb in reversed(notebooks)]
    # a notebook whose file changed since is as if never timed: it goes first
    changed = {notebooks[1].name: {**records[notebooks[1].name], "sha256": "0" * 64}}
    remember_seconds(data, changed)
    order = [nb.stem for nb in longest_first(notebooks, paper, data)]
    assert order[0] == notebooks[1].stem
    assert order[1:] == [nb.stem for nb in reversed(notebooks) if nb != notebooks[1]]
    remember_seconds(tmp_path / "absent", records)  # a folder it cannot write: nothing kept
    assert not (tmp_path / "absent").exists()


def test_paper_tests_run_on_the_worker_that_builds(request, paper_dir) -> None:
    # pytest-xdist groups by a suffix of the test id, which some pytest versions drop
    # silently (pytest-xdist issue 1386): then every worker would build the paper
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not under pytest -n --dist loadgroup")
    assert request.node.nodeid.endswith("@paper")
