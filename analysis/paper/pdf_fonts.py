"""The fonts a figure's PDF embeds: lean subsets, each made once per process.

matplotlib embeds a subset of every font a PDF uses (Type 42, ``pdf.fonttype: 42``), made
with fontTools from the whole font file, once for the characters below U+0100 and once
more when a figure prints any other (a minus sign, an en dash). Made afresh for each PDF,
the subsets took about 2.5 s of CPU for the paper's 20 figures, more than any other step
of saving them. Inside :func:`shared_font_subsets`

- a subset leaves out :data:`PDF_UNUSED_FONT_TABLES`;
- a subset holding any printable ASCII character holds them all (:data:`SUBSET_CHARACTERS`),
  so that figures ask for the same subset, which is made once per process and kept
  (:func:`font_subset`); so is the second subset, which holds the few other characters the
  figures print (a minus sign alone, or with an en dash).

The PDF's text, its glyph widths and its ToUnicode map are matplotlib's own, as without
these changes; only the embedded font program carries more glyphs than the figure uses. A
kept subset is embedded byte for byte as made (no new ``head`` timestamp), so a figure's
PDF is the same from one build to the next.
"""

from __future__ import annotations

import contextlib
import functools
import io
import string
from collections.abc import Callable, Iterable, Iterator

#: OpenType layout tables a PDF never uses (viewers do no shaping; matplotlib lays text out
#: itself), left out of the embedded font subsets: subsetting them cost seconds a figure.
PDF_UNUSED_FONT_TABLES = ["GSUB", "GPOS", "GDEF", "JSTF", "BASE", "MATH"]
#: The characters a font subset holds all of once it holds one of them: printable ASCII.
SUBSET_CHARACTERS = string.printable.strip() + " "


@functools.lru_cache(maxsize=16)
def _padding(font_path: str, face_index: int) -> frozenset[int]:
    """The glyph indices of :data:`SUBSET_CHARACTERS` in a font (those it has)."""
    from matplotlib.font_manager import FontPath, get_font

    font = get_font(FontPath(font_path, face_index))
    indices = (font.get_char_index(ord(character)) for character in SUBSET_CHARACTERS)
    return frozenset(index for index in indices if index)


@functools.lru_cache(maxsize=32)
def font_subset(
    make: Callable, font_path: str, face_index: int, glyphs: frozenset[int]
) -> tuple[bytes, dict[int, int]]:
    """The font file of the subset of a font (path and face) to ``glyphs``, made by
    ``make`` (matplotlib's ``get_glyphs_subset``), and its map from the font's glyph
    indices to the subset's; made once per process for each distinct request."""
    from matplotlib.backends import _backend_pdf_ps
    from matplotlib.font_manager import FontPath

    with make(FontPath(font_path, face_index), glyphs) as made:
        data = _backend_pdf_ps.font_as_file(made.font).getvalue()
        return data, dict(made.glyph_index_map)


@contextlib.contextmanager
def shared_font_subsets() -> Iterator[None]:
    """While a PDF is written, its font subsets are lean and shared (module docstring)."""
    from fontTools import subset
    from fontTools.ttLib import TTFont
    from matplotlib.backends import _backend_pdf_ps

    make = _backend_pdf_ps.get_glyphs_subset

    def shared(font_path, glyphs: Iterable[int]):
        face = getattr(font_path, "face_index", 0)
        wanted = frozenset(glyphs)
        padding = _padding(str(font_path), face)
        if wanted & padding:
            wanted |= padding
        data, index_map = font_subset(make, str(font_path), face, wanted)
        font = TTFont(io.BytesIO(data), recalcBBoxes=False, recalcTimestamp=False)
        return _backend_pdf_ps.SubsetResults(font, index_map)._as_cm()

    default = subset.Options._drop_tables_default
    subset.Options._drop_tables_default = default + PDF_UNUSED_FONT_TABLES
    _backend_pdf_ps.get_glyphs_subset = shared
    try:
        yield
    finally:
        _backend_pdf_ps.get_glyphs_subset = make
        subset.Options._drop_tables_default = default
