"""`make serve` re-renders only the edited page (``mkdocs serve --dirty``) unless what pages run has changed.

``--dirty`` alone rebuilds a page only when its own Markdown is newer than its HTML, so an edit of the library, a
snippet or a hook would leave every page stale. Here, in a dirty serve, each build hashes the files pages run
(``parallelsel/``, ``snippets/``, ``hooks/``); when the hash differs from the previous build's, the HTML of every page is
removed from the served site, so MkDocs renders them all again (and hooks/exec_blocks.py's cache, keyed on each
block's source and the library's bytes, re-runs exactly the blocks whose inputs changed). A prose edit re-renders
one page. ``make build`` and ``make test`` never pass ``--dirty``: they stay strict and full.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.dirty_serve")
WATCHED = ("parallelsel", "snippets", "hooks")
_state: dict = {"dirty": False, "inputs": None}


def inputs_hash(root: Path) -> str:
    """sha256 of every file under :data:`WATCHED` (path and bytes): what the pages' blocks run."""
    h = hashlib.sha256()
    for name in WATCHED:
        for path in sorted((root / name).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def on_startup(command, dirty=False, **kwargs):
    _state["dirty"] = bool(dirty)


def on_files(files, config, **kwargs):
    if not _state["dirty"]:
        return files
    now = inputs_hash(Path(config.config_file_path).resolve().parent)
    if _state["inputs"] not in (None, now):
        stale = [f for f in files.documentation_pages() if os.path.isfile(f.abs_dest_path)]
        for f in stale:
            os.remove(f.abs_dest_path)
        log.info(f"dirty serve: {', '.join(WATCHED)} changed, so all {len(stale)} pages re-render")
    _state["inputs"] = now
    return files
