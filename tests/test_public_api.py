"""The public API: every name in ``analysis.__all__`` resolves, lazily."""

from __future__ import annotations

import subprocess
import sys

import pytest

import analysis


def test_every_public_name_resolves_to_a_documented_callable():
    for name in analysis.__all__:
        value = getattr(analysis, name)
        assert callable(value), name
        assert value.__doc__, f"{name} has no docstring"


def test_importing_the_package_imports_no_pandas():
    code = "import sys, analysis; print('pandas' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="not_a_function"):
        analysis.not_a_function  # noqa: B018
