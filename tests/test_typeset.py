"""``python -m analysis.paper.typeset``: the command the docs give to rebuild the PDF by hand."""

from __future__ import annotations

import shutil
import subprocess
import sys

from analysis import paths


def run_typeset(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "analysis.paper.typeset", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=paths.PROJECT_ROOT,
    )


def test_the_built_folder_alone_compiles_into_the_pdf(built_paper, tmp_path):
    copy = tmp_path / "paper"
    shutil.copytree(built_paper, copy)
    (copy / "paper.pdf").unlink()
    result = run_typeset(copy / "paper.typ")
    assert result.returncode == 0, result.stderr
    pdf = copy / "paper.pdf"
    assert result.stdout.strip() == str(pdf)
    assert pdf.read_bytes().startswith(b"%PDF-")
    assert pdf.stat().st_size > 10_000


def test_a_missing_source_is_one_error_line(tmp_path):
    result = run_typeset(tmp_path / "nowhere.typ")
    assert result.returncode == 1
    assert result.stderr == f"error: {tmp_path / 'nowhere.typ'}: no such Typst source\n"


def test_a_source_that_does_not_compile_names_it(tmp_path):
    source = tmp_path / "broken.typ"
    source.write_text('#let x = json("absent.json")\n#x\n')
    result = run_typeset(source, "-o", tmp_path / "out.pdf")
    assert result.returncode == 1
    assert result.stderr.startswith(f"error: {source}: Typst could not compile the report:")
    assert not (tmp_path / "out.pdf").exists()
