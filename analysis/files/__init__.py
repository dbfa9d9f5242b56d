"""Reading the release's files, and writing files whole: the bottom of the package, on the
standard library alone.

Owns the one text and JSON reader that names the file on every error (``reading``), the typed
reading of a JSON document that names the field and its JSON path (``typed``), the shape of
each release file (``schemas``), the sha256 of a file (``digests``), which optional parts a
release holds (``parts``), the project's one-process lock (``lock``) and the writing of a
file whole or not at all (``atomic_write``). The no-op check of ``make paper`` imports
these, so none imports pandas.

May import: the standard library only.
"""
