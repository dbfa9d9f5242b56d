"""The paper's published values for the tests: one source, :mod:`analysis.corpus.published`."""

from analysis.corpus.published import *  # noqa: F403
