"""The notebook sections' logic, one module per notebook: what each section records, the
tables it shows and the figures it draws, so that a notebook only opens its section, calls,
shows and writes.

A notebook opens with :func:`open_section` (scenarios, published conditions, per-trial
cells, the output writer and the recorded numbers, as :data:`READS` declares for it).
"""

from analysis.sections.opening import READS, Locations, Reads, Section, open_section

__all__ = ["READS", "Locations", "Reads", "Section", "open_section"]
