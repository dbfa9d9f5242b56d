"""The paper's published values for the tests: one source, :mod:`analysis.published`."""

from analysis.published import *  # noqa: F403
