"""Serve-mode cache for executed snippets and the notebook: fast rebuilds that are never stale.

markdown-exec has no cache, and ``mkdocs serve`` rebuilds every page on each save, so every
snippet on the site ran again after any edit. This hook is **off unless** ``PARALLELSEL_SNIPPET_CACHE=1``
(``make serve`` sets it); CI, ``make build`` and ``make test`` stay cold and cache-free.

When on, in ``on_config`` (hooks run after plugins, so markdown-exec has already registered its
custom fences in ``mdx_configs["pymdownx.superfences"]["custom_fences"]``) it wraps each of
markdown-exec's fence formatters. A block's rendered HTML is stored in
``.cache/snippets/<env>/<block>.json``, where

* ``<env>`` = sha256 of: every file under the library root (``parallelsel/``; override with
  ``PARALLELSEL_SNIPPET_CACHE_LIB``, several roots separated by ``os.pathsep``), the versions of
  Python, numpy, matplotlib, markdown-exec, Markdown, pymdown-extensions and MkDocs, and the
  Markdown extension configuration; a change to any of them re-runs every block;
* ``<block>`` = sha256 of the block's source *after* ``--8<--`` includes were expanded (so editing a
  snippet file re-runs exactly the blocks that include it), its language and all its options
  (id, html, source, tabs, ...).

The notebook: mkdocs-jupyter's own cache is keyed on the notebook's bytes only, which is why
``mkdocs.yml`` sets ``cache: false``. In cache mode the hook turns it on with
``cache_dir = .cache/mkdocs-jupyter/<env>``, so a library change lands in a fresh directory.

A library change also has to reach the running server's interpreter: markdown-exec runs blocks
in-process and ``import parallelsel`` would return the modules imported by the previous build.
When the library hash differs from the one the previous build in this process saw, the library's
modules are dropped from ``sys.modules`` so the next import reads the edited files.

What is never cached (it runs every time, as without the cache):

* blocks that log a warning or error (a failing snippet must fail the strict build every time);
* blocks with ``session=...`` (they share state with earlier blocks of the session);
* blocks whose output contains headings: markdown-exec passes those to the page's TOC as
  side data keyed by the output, which a cached string does not carry.

Limits (documented, accepted):

* markdown-exec numbers id prefixes (``exec-N--``) with a build-wide counter. A hit replays the
  block's counter increments and renumbers the ``exec-N--`` prefixes in the stored HTML, so ids
  match a cold build's; a snippet that itself prints the text ``exec-N--`` would be renumbered too.
* Anything a snippet depends on outside the key is not seen: files it reads, environment
  variables, the network, installed fonts, the time. Snippets here import only ``parallelsel``.
* Side effects (files written, Python ``warnings`` printed) happen only when the block runs.

Besides snippets, other per-build costs are memoized in cache mode, in memory for the life of the
process (``mkdocs serve``), each keyed on everything its result depends on, so they cannot go stale
either: Material's search indexing of a page (keyed on the page's HTML, TOC, URL, title and meta),
the link-check hook's parse of a built page (keyed on the file's bytes), mkdocs-jupyter's
``should_include`` test (it re-reads every .md file with jupytext; keyed on path, mtime and size),
compiled Jinja templates of the theme and of mkdocstrings (Jinja's bytecode cache checks each
template source's checksum), and the API page's griffe collection of the library (keyed on the
environment hash above, which includes the library hash, and the handler configuration).

``PARALLELSEL_SNIPPET_EXEC=0`` (benchmarks only) switches execution off: no exec block runs (each is
rendered as markdown-exec renders a block that prints nothing, so its highlighted source tab is still
built) and the notebook is converted without executing it: the cost floor of the theme and the rest
of the build.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import os
import re
import shutil
import sys
import tempfile
import types
from functools import partial
from importlib import metadata
from pathlib import Path

from markupsafe import Markup
from mkdocs.exceptions import PluginError

# Sibling modules in hooks/ (MkDocs puts a hook's folder on sys.path while loading it).
from _sibling import sibling_hook
from _switches import cache_on, execution_on

log = logging.getLogger("mkdocs.hooks.snippet_cache")

ENV_LIB = "PARALLELSEL_SNIPPET_CACHE_LIB"
ENV_DIR = "PARALLELSEL_SNIPPET_CACHE_DIR"
FORMAT = "2"  # bump when the entry format or the key changes
KEEP_ENVS = 4  # environment directories kept (the current one and the most recent others)
_VERSIONS = ("numpy", "matplotlib", "markdown-exec", "markdown", "pymdown-extensions", "mkdocs")
_PREFIX = re.compile(r"exec-(\d+)--")

_state: dict = {}


def _memo() -> types.ModuleType:
    """Process-wide state that survives MkDocs re-loading this hook on every serve rebuild."""
    name = "_parallelsel_serve_memo"
    memo = sys.modules.get(name)
    if memo is None:
        memo = types.ModuleType(name)
        memo.loaded_lib = None  # library hash the previous build in this process imported
        memo.search, memo.links, memo.include, memo.bytecode = {}, {}, {}, {}
        memo.griffe = None  # (key, modules collection, lines collection) of the last build
        sys.modules[name] = memo
    return memo


def _lib_roots(config) -> list[Path]:
    spec = os.environ.get(ENV_LIB)
    if spec:
        return [Path(p).resolve() for p in spec.split(os.pathsep) if p]
    return [Path(config.config_file_path).resolve().parent / "parallelsel"]


def library_hash(roots: list[Path]) -> str:
    """sha256 over the relative path and bytes of every file under ``roots`` (bytecode excluded)."""
    h = hashlib.sha256()
    for root in roots:
        h.update(f"root {root}\n".encode())
        if not root.exists():
            continue
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            if "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo"):
                continue
            h.update(f"file {path.relative_to(root.parent).as_posix()} {path.stat().st_size}\n".encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def _stable(value) -> str:
    """A repr without memory addresses (functools.partial of a slugify function, for instance)."""
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))


def environment_hash(config, lib: str) -> str:
    h = hashlib.sha256()
    h.update(f"format {FORMAT}\nlib {lib}\npython {sys.version}\n".encode())
    for dist in _VERSIONS:
        try:
            version = metadata.version(dist)
        except metadata.PackageNotFoundError:
            version = "-"
        h.update(f"{dist} {version}\n".encode())
    mdx = {k: v for k, v in config.mdx_configs.items() if k != "pymdownx.superfences"}
    fences = {k: v for k, v in config.mdx_configs.get("pymdownx.superfences", {}).items() if k != "custom_fences"}
    h.update(_stable([list(config.markdown_extensions), sorted(mdx.items()), sorted(fences.items())]).encode())
    return h.hexdigest()[:20]


def _purge_library_modules(roots: list[Path]) -> int:
    dropped = 0
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not file:
            continue
        path = Path(file).resolve()
        if any(path == r or r in path.parents for r in roots):
            del sys.modules[name]
            dropped += 1
    return dropped


class _WarningCatcher(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.seen = False

    def emit(self, record):
        self.seen = True


def _counter():
    from markdown_exec._internal.rendering import MarkdownConverter

    return MarkdownConverter


def _headings_reported(md, out) -> bool:
    original = getattr(md, "_original_md", md)
    try:
        inserter = original.treeprocessors["markdown_exec_insert_headings"]
    except (KeyError, AttributeError):
        return False
    return bool(getattr(inserter, "headings", {}).get(out))


def _renumber(html: str, start: int, delta: int, now: int) -> str:
    if not delta or start == now:
        return html
    shift = now - start

    def sub(m):
        n = int(m.group(1))
        return f"exec-{n + shift}--" if start < n <= start + delta else m.group(0)

    return _PREFIX.sub(sub, html)


def exec_key(code: str, block_id: str) -> str:
    """Name of the marker saying a Python block with this source and id is cached (see :func:`will_hit`)."""
    return hashlib.sha256(json.dumps([code, block_id]).encode()).hexdigest()


def will_hit(code: str, block_id: str) -> bool:
    """Whether this build will answer the Python block ``(code, id)`` from the cache, so nothing need run it ahead.

    Used by hooks/prefetch.py. A wrong "no" only costs a worker's time; a wrong "yes" only means the
    block runs in-process when the build reaches it (the cache lookup itself is exact).
    """
    cache_dir: Path | None = _state.get("dir")
    if cache_dir is None:
        return False
    try:
        entry = (cache_dir / "exec" / exec_key(code, block_id)).read_text(encoding="utf-8")
    except OSError:
        return False
    return (cache_dir / entry).is_file()


def _silent(*args, **kwargs) -> str:
    return ""


def _unexecuted(fmt, src, language, class_name, options, md, **kwargs):
    """The block rendered as if its code printed nothing, without running it: source tabs and all."""
    from markdown_exec._internal import main as mx_main  # noqa: PLC0415
    from markdown_exec._internal.formatters.base import base_format  # noqa: PLC0415
    from markdown_exec._internal.formatters.pycon import _transform_source  # noqa: PLC0415

    silent = {
        "python": partial(base_format, language="python", run=_silent),
        "pycon": partial(base_format, language="pycon", run=_silent, transform_source=_transform_source),
    }
    if language not in silent:
        return Markup("")
    saved = mx_main.formatters[language]
    mx_main.formatters[language] = silent[language]
    try:
        return fmt(src, language, class_name, options, md, **kwargs)
    finally:
        mx_main.formatters[language] = saved


def _wrap(fmt):
    def cached_format(src, language, class_name, options, md, **kwargs):
        if _state.get("noexec"):
            _state["stats"]["skipped"] += 1
            return _unexecuted(fmt, src, language, class_name, options, md, **kwargs)
        cache_dir: Path | None = _state.get("dir")
        if cache_dir is None or (options or {}).get("session"):
            _state["stats"]["uncacheable"] += cache_dir is not None
            return fmt(src, language, class_name, options, md, **kwargs)
        key = hashlib.sha256(
            json.dumps([language, class_name, src, _stable(sorted((options or {}).items())), _stable(sorted(kwargs.items()))]).encode()
        ).hexdigest()
        path = cache_dir / f"{key}.json"
        converter = _counter()
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            entry = None
        if entry is not None:
            now = converter.counter
            converter.counter = now + entry["delta"]
            _state["stats"]["hits"] += 1
            return Markup(_renumber(entry["html"], entry["start"], entry["delta"], now))

        start = converter.counter
        catcher = _WarningCatcher()
        mkdocs_log = logging.getLogger("mkdocs")
        mkdocs_log.addHandler(catcher)
        try:
            out = fmt(src, language, class_name, options, md, **kwargs)
        finally:
            mkdocs_log.removeHandler(catcher)
        if catcher.seen or _headings_reported(md, out):
            _state["stats"]["uncacheable"] += 1
            return out
        _state["stats"]["runs"] += 1
        entry = {"html": str(out), "start": start, "delta": converter.counter - start, "id": (options or {}).get("id", "")}
        cache_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache_dir, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(entry, fh)
        os.replace(tmp, path)
        if language == "python" and entry["id"]:
            # Tell hooks/prefetch.py this block needs no worker next time (see will_hit).
            marker = cache_dir / "exec" / exec_key(src, entry["id"])
            marker.parent.mkdir(exist_ok=True)
            marker.write_text(path.name, encoding="utf-8")
        return out

    cached_format._ps_snippet_cache = True
    cached_format._ps_wrapped = fmt
    return cached_format


def on_config(config, **kwargs):
    _state.clear()
    cache, noexec = cache_on(), not execution_on()
    if not (cache or noexec):
        return config
    fences = config.mdx_configs.get("pymdownx.superfences", {}).get("custom_fences", [])
    wrapped = 0
    for fence in fences:
        fmt = fence.get("format")
        if getattr(fmt, "_ps_snippet_cache", False):
            wrapped += 1
        elif getattr(fmt, "__module__", "").startswith("markdown_exec"):
            fence["format"] = _wrap(fmt)
            wrapped += 1
    if not wrapped:
        raise PluginError(
            "snippet_cache: no markdown-exec fences in mdx_configs['pymdownx.superfences']['custom_fences']; "
            "the markdown-exec plugin must be enabled (hooks run after plugins)"
        )
    _state["stats"] = {"hits": 0, "runs": 0, "uncacheable": 0, "skipped": 0}
    _state["noexec"] = noexec
    jupyter = config.plugins.get("mkdocs-jupyter")
    if noexec and jupyter is not None:
        jupyter.config["execute"] = False
    if not cache:
        return config

    root = Path(config.config_file_path).resolve().parent
    base = Path(os.environ.get(ENV_DIR) or root / ".cache")
    roots = _lib_roots(config)
    lib = library_hash(roots)
    memo = _memo()
    if memo.loaded_lib not in (None, lib):
        n = _purge_library_modules(roots)
        log.info("snippet_cache: library changed; dropped %d imported library modules", n)
    memo.loaded_lib = lib
    env = environment_hash(config, lib)
    _state.update(roots=roots, lib=lib, env=env, dir=base / "snippets" / env, base=base)
    if jupyter is not None and not noexec:
        jupyter.config["cache"] = True
        jupyter.config["cache_dir"] = str(base / "mkdocs-jupyter" / env)
    _memoize_search(config.plugins.get("material/search") or config.plugins.get("search"), memo)
    _memoize_linkcheck(sibling_hook(config, "linkcheck.py"), memo)
    _memoize_should_include(jupyter, memo)
    _memoize_mkdocstrings(config.plugins.get("mkdocstrings"), memo, env)
    return config


def on_env(env, config, **kwargs):
    if "env" in _state:  # cache mode: compiled theme templates are reused (Jinja checks each source's checksum)
        env.bytecode_cache = _bytecode_cache(_memo())
    return env


# ------------------------------------------------------------------ other per-build costs (serve only)


def _toc_key(items) -> list:
    return [[i.id, i.url, i.title, i.level, _toc_key(i.children)] for i in items]


def _memoize_search(plugin, memo) -> None:
    index = getattr(plugin, "search_index", None)
    add = getattr(index, "add_entry_from_context", None)
    if add is None or getattr(add, "_ps_memo", False):
        return

    def add_entry_from_context(page):
        key = hashlib.sha256(
            json.dumps([page.content, _toc_key(page.toc), page.url, str(page.title), page.meta], default=str, sort_keys=True).encode()
        ).hexdigest()
        hit = memo.search.get(page.url)
        if hit is not None and hit[0] == key:
            index.entries.extend(copy.deepcopy(hit[1]))
            return
        start = len(index.entries)
        add(page)
        memo.search[page.url] = (key, copy.deepcopy(index.entries[start:]))

    add_entry_from_context._ps_memo = True
    index.add_entry_from_context = add_entry_from_context


def _memoize_linkcheck(module, memo) -> None:
    parse = getattr(module, "_parse", None)
    if parse is None or getattr(parse, "_ps_memo", False):
        return

    def _parse(path):
        with open(path, "rb") as fh:
            digest = hashlib.sha256(fh.read()).digest()
        hit = memo.links.get(path)
        if hit is not None and hit[0] == digest:
            return hit[1]
        page = parse(path)
        memo.links[path] = (digest, page)
        return page

    _parse._ps_memo = True
    module._parse = _parse


def _bytecode_cache(memo):
    import jinja2.bccache  # noqa: PLC0415

    class MemoryBytecodeCache(jinja2.bccache.BytecodeCache):
        """Jinja's compiled templates, in memory across rebuilds; a changed source fails Jinja's checksum."""

        def load_bytecode(self, bucket):
            code = memo.bytecode.get(bucket.key)
            if code is not None:
                bucket.bytecode_from_string(code)

        def dump_bytecode(self, bucket):
            memo.bytecode[bucket.key] = bucket.bytecode_to_string()

    return MemoryBytecodeCache()


def _memoize_mkdocstrings(plugin, memo, env: str) -> None:
    """Reuse the API page's griffe collection while the library (and tool versions) are unchanged."""
    handlers = getattr(plugin, "_handlers", None)
    get_handler = getattr(handlers, "get_handler", None)
    if get_handler is None or getattr(get_handler, "_ps_memo", False):
        return

    def patch(name, handler):
        if getattr(handler, "_ps_memo", False):
            return handler
        handler._ps_memo = True
        if getattr(handler, "env", None) is not None:
            handler.env.bytecode_cache = _bytecode_cache(memo)
        if hasattr(handler, "_modules_collection") and hasattr(handler, "_lines_collection"):
            key = (env, name, _stable(handlers.get_handler_config(name)))
            if memo.griffe is not None and memo.griffe[0] == key:
                handler._modules_collection, handler._lines_collection = memo.griffe[1], memo.griffe[2]
            else:
                memo.griffe = (key, handler._modules_collection, handler._lines_collection)
        return handler

    def memoized(name, handler_config=None):
        return patch(name, get_handler(name, handler_config))

    memoized._ps_memo = True
    handlers.get_handler = memoized
    for name, handler in list(getattr(handlers, "_handlers", {}).items()):  # created early, e.g. for inventories
        patch(name, handler)


def _memoize_should_include(plugin, memo) -> None:
    should_include = getattr(plugin, "should_include", None)
    if should_include is None or getattr(should_include, "_ps_memo", False):
        return
    settings = _stable([plugin.config.get("include"), plugin.config.get("ignore")])

    def memoized(file):
        path = file.abs_src_path
        try:
            st = os.stat(path)
        except (OSError, TypeError):
            return should_include(file)
        key = (settings, st.st_mtime_ns, st.st_size)
        hit = memo.include.get(path)
        if hit is not None and hit[0] == key:
            return hit[1]
        result = should_include(file)
        memo.include[path] = (key, result)
        return result

    memoized._ps_memo = True
    plugin.should_include = memoized


def _prune(parent: Path, keep: str) -> None:
    if not parent.is_dir():
        return
    dirs = sorted((d for d in parent.iterdir() if d.is_dir() and d.name != keep), key=lambda d: d.stat().st_mtime, reverse=True)
    for old in dirs[KEEP_ENVS - 1 :]:
        shutil.rmtree(old, ignore_errors=True)


def on_post_build(config, **kwargs):
    stats = _state.get("stats")
    if stats is None:
        return
    log.info("snippet_cache: %(hits)d cached, %(runs)d run and stored, %(uncacheable)d run uncached, %(skipped)d skipped", stats)
    if "env" not in _state:
        return
    env, base = _state["env"], _state["base"]
    if library_hash(_state["roots"]) != _state["lib"]:
        # The library changed while this build ran: its entries may mix old and new code. Drop them.
        log.info("snippet_cache: library changed during the build; discarding this build's entries")
        shutil.rmtree(base / "snippets" / env, ignore_errors=True)
        shutil.rmtree(base / "mkdocs-jupyter" / env, ignore_errors=True)
        memo = _memo()
        memo.loaded_lib, memo.griffe = None, None
        return
    for kind in ("snippets", "mkdocs-jupyter"):
        current = base / kind / env
        if current.is_dir():
            os.utime(current)
        _prune(base / kind, env)
