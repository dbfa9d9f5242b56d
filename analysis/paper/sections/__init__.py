"""The notebook sections' logic, one module per notebook (``10-inference``: one per question,
``inference_*``): what each section records, the tables it shows and the figures it draws, so
that a notebook only opens its section, calls, shows and writes.

A notebook opens with :func:`open_section` (scenarios, published conditions, per-trial
cells, the output writer and the recorded numbers, as :data:`READS` declares for it).
Names are imported on first use: the build reads :data:`READS` without the analysis stack.
"""

from __future__ import annotations

from analysis.lazy import lazy_exports

#: Each public name and the module that holds it.
_HOMES: dict[str, str] = {
    "READS": "analysis.paper.sections.reads",
    "Locations": "analysis.paper.sections.reads",
    "Reads": "analysis.paper.sections.reads",
    "Section": "analysis.paper.sections.opening",
    "open_section": "analysis.paper.sections.opening",
}

__all__ = sorted(_HOMES)
__getattr__, __dir__ = lazy_exports(globals(), _HOMES)
