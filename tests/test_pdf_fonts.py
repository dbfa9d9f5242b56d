"""The figures' PDF font subsets: lean, padded to printable ASCII, made once per process, and
matplotlib's own subsetting back in place outside the block."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from fontTools import subset
from matplotlib import font_manager
from matplotlib.backends import _backend_pdf_ps

from analysis.paper.figures import save_figure, use_style
from analysis.paper.pdf_fonts import (
    PDF_UNUSED_FONT_TABLES,
    SUBSET_CHARACTERS,
    font_subset,
    shared_font_subsets,
)


def _subset_of(text: str):
    """The subset (font, glyph map) matplotlib's PDF backend gets for the glyphs of ``text``."""
    path = font_manager.findfont("DejaVu Sans")
    font = font_manager.get_font(path)
    glyphs = {font.get_char_index(ord(character)) for character in text}
    with _backend_pdf_ps.get_glyphs_subset(path, glyphs) as made:
        return set(made.font.getGlyphOrder()), set(made.font.keys()), made.glyph_index_map, glyphs


def test_a_subset_with_ascii_holds_all_of_it_and_is_made_once():
    font_subset.cache_clear()
    with shared_font_subsets():
        names, tables, index_map, asked = _subset_of("ab")
        again = _subset_of("xyz 42")
    assert asked <= set(index_map)
    assert {"a", "b", "x", "z", "four", "asciitilde", "space"} <= names
    assert len(names) >= len(SUBSET_CHARACTERS)
    assert again[0] == names  # the same subset: made once
    assert font_subset.cache_info().misses == 1 and font_subset.cache_info().hits == 1
    assert not tables & set(PDF_UNUSED_FONT_TABLES)


def test_a_subset_without_ascii_holds_only_what_was_asked():
    font_subset.cache_clear()
    with shared_font_subsets():
        names, _, index_map, asked = _subset_of("\u2212\u2013")  # minus sign, en dash
    assert asked <= set(index_map)
    assert {"minus", "endash"} <= names
    assert not names & {"a", "zero", "asciitilde"}  # no printable ASCII beyond a space


def test_outside_the_block_matplotlib_subsets_as_before():
    made, dropped = _backend_pdf_ps.get_glyphs_subset, list(subset.Options._drop_tables_default)
    with shared_font_subsets():
        assert _backend_pdf_ps.get_glyphs_subset is not made
    assert _backend_pdf_ps.get_glyphs_subset is made
    assert subset.Options._drop_tables_default == dropped


def test_a_figure_saved_twice_gives_the_same_pdf(tmp_path, monkeypatch):
    from itertools import count

    from fontTools.ttLib.tables import _h_e_a_d

    clock = count(3_000_000_000)  # a font written later would carry a later timestamp
    monkeypatch.setattr(_h_e_a_d, "timestampNow", lambda: next(clock))
    use_style()
    fig, ax = plt.subplots()
    ax.plot([-1, 0, 1], [0, 1, 0])  # negative ticks print a minus sign: a second subset
    ax.set(title="Rank \u2013 published", xlabel="x")
    first, _ = save_figure(fig, tmp_path / "first")
    second, _ = save_figure(fig, tmp_path / "second")
    plt.close(fig)
    assert first.read_bytes() == second.read_bytes()
    assert first.read_bytes().count(b"/FontFile2") == 2
