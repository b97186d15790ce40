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
import types

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
        module = importlib.import_module(f"{self.package}.{NEW_PATH[name]}")
        spec.loader_state = module.__spec__  # the import system overwrites __spec__ next; exec_module restores it
        return module

    def exec_module(self, module):
        module.__spec__ = module.__spec__.loader_state  # already executed at its new path: keep its own spec


class _Package(types.ModuleType):
    """The package module: importing an old path binds the module as an attribute of the package, and three of
    them (``estimate``, ``search``, ``calibrate``) share their name with a public function, which must keep it."""

    def __setattr__(self, name, value):
        held = self.__dict__.get(name)
        if isinstance(value, types.ModuleType) and callable(held) and not isinstance(held, types.ModuleType):
            return
        super().__setattr__(name, value)


def install(package: str) -> None:
    """Put the alias finder on ``sys.meta_path`` once (and keep the package's public functions bound)."""
    sys.modules[package].__class__ = _Package
    if not any(isinstance(f, _Alias) and f.package == package for f in sys.meta_path):
        sys.meta_path.insert(0, _Alias(package))  # before an editable install's finder, which knows only real files
