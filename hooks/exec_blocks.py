"""Run the pages' Python blocks through markdown-exec's public API: loudly, in parallel, and under ``make serve`` cached.

``on_config`` swaps the ``python`` superfence's ``format`` (a public pymdownx setting) for one calling the public
``markdown_exec.base_format`` with a ``run`` of its own, wrapping each block in ``<div class="ps-exec" data-block="<id>">``
so the post-build check can name it. Unlike markdown-exec's own runner:

* a block that raises **or exits** logs a warning naming page and block (``strict: true``: a failed build);
* ``mkdocs build`` starts every page's blocks at ``on_files`` in worker processes (``concurrent.futures`` over ``fork``,
  one per CPU up to 4; ``PARALLELSEL_EXEC_WORKERS=N``, 0 for none), a block takes its worker's output keyed on its source,
  and one that failed there or was not foreseen runs in the build process (reported as above). Snippets are
  independent modules: where one runs does not change what it prints (the tests' double build is byte-identical);
* ``PARALLELSEL_SNIPPET_CACHE=1`` (``make serve --dirty``) caches a block's HTML in ``.cache/exec`` by its source, options,
  the library's files, mkdocs.yml and tool versions (not a failed block, nor one with ``session=`` or headings), the notebook
  in mkdocs-jupyter's cache; ``on_files`` re-renders every page when ``parallelsel/``, ``snippets/`` or ``hooks/`` changed.
* ``PARALLELSEL_SNIPPET_EXEC=0`` runs nothing (bench's floor).
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import linecache
import logging
import multiprocessing
import os
import re
import sys
import traceback
import types
from concurrent.futures import ProcessPoolExecutor
from contextlib import redirect_stdout
from importlib import metadata
from pathlib import Path

import markdown
import markdown_exec

log = logging.getLogger("mkdocs.hooks.exec_blocks")
_PACKAGES = ("numpy", "matplotlib", "markdown-exec", "markdown", "pymdown-extensions", "pygments", "mkdocs-jupyter", "nbconvert", "ipykernel")
_state = {"page": "?", "env": "", "lib": None, "hits": 0, "runs": 0, "cache": Path(".cache/exec"), "dirty": False, "inputs": None,
          "command": "", "pool": None, "futures": {}, "pooled": 0}
_FENCE = re.compile(r"^([ \t]*)```python[ \t]+([^\n]*)\n(.*?)^\1```[ \t]*$", re.M | re.S)


def _on(name: str, default: str) -> bool:
    return os.environ.get(name, default).strip().lower() not in {"", "0", "no", "off", "false"}


def env_hash(library: Path) -> str:
    """sha256 of the library's files and the tool versions: what a block's output depends on besides its source."""
    return tree_hash(library, hashlib.sha256(repr([sys.version] + [metadata.version(n) for n in _PACKAGES]).encode()))


def tree_hash(folder: Path, h=None) -> str:
    """sha256 of every file under ``folder`` (path and bytes), ``__pycache__`` aside."""
    h = h or hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def _execute(code: str, block: str, pooled: bool = False) -> str | None:
    """Run ``code`` as a fresh module and return what it printed. A raise or an exit becomes a logged warning and an
    ExecutionError with the traceback; in a worker (``pooled``) None, and the build process reruns it to report."""
    name, filename, out = f"_exec_{block.replace('-', '_')}", f"<block {block}>", io.StringIO()
    sys.modules[name] = module = types.ModuleType(name)  # dataclasses and pickling look their module up
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)  # tracebacks show the lines
    try:
        with redirect_stdout(out):
            exec(compile(code, filename, "exec"), module.__dict__)  # noqa: S102 - running the site's own snippets is the point
    except (Exception, SystemExit) as error:  # markdown-exec lets SystemExit through, and MkDocs would end with no site
        if pooled:
            return None
        _state["failed"] = True
        text = "".join(traceback.format_exception(error))
        note = " (sys.exit/exit/quit or raise SystemExit: a snippet must print, never exit the build)" * isinstance(error, SystemExit)
        log.warning(f"[page docs/{_state['page']}] block '{block}' raised {type(error).__name__}{note}:\n{text}")
        raise markdown_exec.ExecutionError(markdown_exec.code_block("python", text)) from None
    finally:
        sys.modules.pop(name, None)
        linecache.cache.pop(filename, None)
    return out.getvalue()


def _start_pool(config, pages) -> None:
    """``mkdocs build`` only (``make serve`` has its cache; forking a server with live threads is unsafe): each page's
    ``exec="on"`` python fences (indent, options, body: ``_FENCE``), includes expanded by pymdownx.snippets' own
    preprocessor, go to the workers in the order MkDocs renders the pages; a block not foreseen runs in place."""
    n = int(os.environ.get("PARALLELSEL_EXEC_WORKERS") or min(4, os.cpu_count() or 1))  # (a host's count in a container)
    if _state["command"] != "build" or n < 1 or not _on("PARALLELSEL_SNIPPET_EXEC", "1") or _on("PARALLELSEL_SNIPPET_CACHE", ""):
        return
    snippets = markdown.Markdown(extensions=["pymdownx.snippets"], extension_configs={
        "pymdownx.snippets": config.mdx_configs.get("pymdownx.snippets", {})}).preprocessors["snippet"]
    codes = {}
    for page in (p for p in pages if p.src_uri.endswith(".md")):
        try:
            text = "\n".join(snippets.run(Path(page.abs_src_path).read_text(encoding="utf-8").splitlines()))
        except Exception:  # noqa: BLE001 - e.g. a missing file: the page's own render reports it
            continue
        for indent, options, body in _FENCE.findall(text):
            if 'exec="on"' in options and "session=" not in options:
                codes.setdefault("\n".join(line[len(indent):] for line in body.splitlines()).strip(), None)
    pool = _state["pool"] = ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("fork"))
    # Pickle cannot import a hook by its path-like module name; a forked worker finds this one in its sys.modules.
    call = "__import__('sys').modules[hook]._execute(code, 'pooled', True)"
    _state["futures"] = {code: pool.submit(eval, call, {"hook": __name__, "code": code}) for code in codes}


def _stop_pool(*args, **kwargs) -> None:
    if _state["pool"] is not None:
        _state["pool"].shutdown(wait=True, cancel_futures=True)
    _state.update(pool=None, futures={})


on_build_error = on_shutdown = _stop_pool


def _run(code: str, returncode: int = 0, session: str | None = None, id: str = "", **extra) -> str:  # noqa: A002, ARG001
    if not _on("PARALLELSEL_SNIPPET_EXEC", "1"):
        return ""
    _state["runs"] += 1
    future = _state["futures"].get(code.strip())  # None if no worker ran it, or one failed (died: BrokenProcessPool)
    out = None if future is None or future.exception() is not None else future.result()
    _state["pooled"] += out is not None
    return _execute(code, id or "unnamed") if out is None else out


def _format(source, language, css_class, options, md, **kwargs):
    block = options.get("id") or ""
    cached = bool(block) and not options.get("session") and _on("PARALLELSEL_SNIPPET_CACHE", "")
    if cached:
        key = hashlib.sha256(json.dumps([_state["env"], source, repr(sorted(options.items()))]).encode()).hexdigest()
        path = _state["cache"] / f"{key}.html"
        if path.is_file():
            _state["hits"] += 1
            return path.read_text(encoding="utf-8")
    _state["failed"] = False
    html = markdown_exec.base_format(language="python", run=_run, code=source, md=md, **options)
    html = f'<div class="ps-exec" data-block="{block}">{html}</div>' if block else str(html)
    # Never stored: a failed block (it must fail every build) and output with headings (markdown-exec adds them to the TOC).
    if cached and not _state["failed"] and not re.search(r"<h[1-6]\b", html):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(html, encoding="utf-8")
        tmp.replace(path)  # atomic: a second server never reads half a file
    return html


def on_config(config, **kwargs):
    _stop_pool()
    _state.update(page="?", hits=0, runs=0, pooled=0)
    cache = _on("PARALLELSEL_SNIPPET_CACHE", "")
    root = Path(config.config_file_path).resolve().parent
    _state["cache"] = root / ".cache" / "exec"
    if cache:
        spec = importlib.util.find_spec("parallelsel")  # the copy blocks will import, wherever it is installed from
        _state["env"] = env_hash(Path(next(iter(spec.submodule_search_locations)))) + hashlib.sha256(
            Path(config.config_file_path).read_bytes()  # Markdown extensions and their options shape the HTML
        ).hexdigest()
        if _state["lib"] not in (None, _state["env"]):  # the library changed under `make serve`: import it afresh
            for name in [m for m in sys.modules if m == "parallelsel" or m.startswith("parallelsel.")]:
                del sys.modules[name]
        _state["lib"] = _state["env"]
    for fence in config.mdx_configs.get("pymdownx.superfences", {}).get("custom_fences", []):
        if fence.get("name") == "python" and fence.get("format") is markdown_exec.formatter:
            fence["format"] = _format
    notebook = config.plugins.get("mkdocs-jupyter")
    if notebook is not None:
        notebook.config["execute"] = notebook.config["execute"] and _on("PARALLELSEL_SNIPPET_EXEC", "1")
        if cache:
            notebook.config["cache"] = True
            notebook.config["cache_dir"] = str(root / ".cache" / "mkdocs-jupyter" / hashlib.sha256(_state["env"].encode()).hexdigest()[:16])
    return config


def on_page_markdown(markdown, page, **kwargs):
    _state["page"] = page.file.src_uri
    return markdown


def on_post_build(config, **kwargs):
    _stop_pool()
    log.info(f"exec blocks: {_state['runs']} ran, {_state['pooled']} in worker processes, {_state['hits']} from .cache/exec")


def on_startup(command, dirty=False, **kwargs):
    _state.update(dirty=bool(dirty), command=command)


def on_files(files, config, **kwargs):
    if _state["dirty"]:  # `make serve`: what the pages run changed, so every page re-renders
        root = Path(config.config_file_path).resolve().parent
        now = "".join(tree_hash(root / name) for name in ("parallelsel", "snippets", "hooks"))
        if _state["inputs"] not in (None, now):
            for f in files.documentation_pages():
                if os.path.isfile(f.abs_dest_path):
                    os.remove(f.abs_dest_path)
        _state["inputs"] = now
    _start_pool(config, files.documentation_pages())  # the order MkDocs renders them in
    return files
