"""Module paths from before the three folders (``parallelsel.memory``, ``parallelsel.cli``, ...) keep working.

Users' scripts may ``import parallelsel.memory``: an import hook (the standard ``importlib`` meta-path API) hands
back the module at its new home, loaded only when asked for, so the old name and the new one are one module
object. The project itself imports the new paths (``tests/test_layers.py`` checks).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

HOMES = {
    "core": ("hardware", "model", "recipe", "plan", "placement", "memory", "comm", "pipeline", "pipeline_orders",
             "kernels", "estimate", "matrix", "search", "reasons", "stacks", "roofline", "moe", "reliability",
             "calibrate", "launchers"),
    "course": ("lesson", "references", "measured", "comparisons", "zero3_timeline", "frameworks", "steptrace"),
    "render": ("cli", "calculator"),
}
"""folder -> the modules that moved into it (their old path was ``parallelsel.<name>``)."""

NEW_PATH = {name: f"{folder}.{name}" for folder, names in HOMES.items() for name in names}


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, package: str):
        self.package = package

    def find_spec(self, fullname, path=None, target=None):
        head, _, name = fullname.rpartition(".")
        if head != self.package or name not in NEW_PATH:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        name = spec.name.rpartition(".")[2]
        return importlib.import_module(f"{self.package}.{NEW_PATH[name]}")

    def exec_module(self, module):
        pass  # already executed at its new path


def install(package: str) -> None:
    """Put the alias finder on ``sys.meta_path`` once."""
    if not any(isinstance(f, _Alias) and f.package == package for f in sys.meta_path):
        sys.meta_path.append(_Alias(package))
