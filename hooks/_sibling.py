"""Find another of these hooks among MkDocs' plugins, however mkdocs.yml spells its path.

MkDocs registers a hook under the string written in ``hooks:`` (``hooks/linkcheck.py`` here, an
absolute path in the tests' fixture sites), so a lookup by that string misses the fixtures.
Not a hook itself: mkdocs.yml does not list it.
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent


def sibling_hook(config, filename: str):
    """The hook module loaded from this folder's ``filename``, or None if the site does not use it."""
    for plugin in config.plugins.values():
        path = getattr(plugin, "__file__", None)
        if path and Path(path).resolve() == _HERE / filename:
            return plugin
    return None
