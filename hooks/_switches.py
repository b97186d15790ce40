"""The environment switches that more than one hook reads, and how a switch is read.

Not a hook itself: mkdocs.yml does not list it.

* ``PARALLELSEL_SNIPPET_CACHE``: the serve-mode snippet cache (hooks/snippet_cache.py), set by ``make serve``;
* ``PARALLELSEL_SNIPPET_EXEC``: ``0`` builds with execution off (the floor ``make bench`` measures).
"""

from __future__ import annotations

import os

ENV_CACHE = "PARALLELSEL_SNIPPET_CACHE"
ENV_EXEC = "PARALLELSEL_SNIPPET_EXEC"
_OFF = {"", "0", "no", "off", "false"}


def flag(name: str, default: str = "") -> bool:
    """Whether the switch ``name`` is on (anything but empty, 0, no, off or false; any case)."""
    return os.environ.get(name, default).strip().lower() not in _OFF


def cache_on() -> bool:
    return flag(ENV_CACHE)


def execution_on() -> bool:
    return flag(ENV_EXEC, "1")
