"""Run the ``>>>`` examples in every library docstring, so the documented examples cannot drift."""

import doctest
import importlib
import pkgutil

import pytest

import parallelsel

MODULES = sorted(
    name for _, name, _ in pkgutil.walk_packages(parallelsel.__path__, prefix="parallelsel.")
    if not name.endswith("__main__")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"
