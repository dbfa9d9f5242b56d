"""The errors the build stops with: it could not start, an input is bad, a notebook failed."""

from __future__ import annotations


class BuildError(RuntimeError):
    """The build cannot start or did not finish; nothing was written to ``paper/``."""


class InputError(BuildError):
    """An input the notebooks read is malformed or inconsistent (the message names it)."""


class NotebookFailed(BuildError):
    """A notebook raised, hung or lost its kernel (the message names it and its cell)."""
