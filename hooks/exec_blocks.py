"""Run the pages' Python blocks through markdown-exec's public API, loudly and (under ``make serve``) cached.

In ``on_config`` this hook swaps the ``python`` superfence's ``format`` (a public pymdownx setting) for one that calls
the public ``markdown_exec.base_format`` with a ``run`` of its own; base_format still renders (tabs, Markdown, id
prefixes, TOC). Each block's HTML is wrapped in ``<div class="ps-exec" data-block="<id>">`` so the post-build check can
name it. It differs from markdown-exec's own runner in three ways:

* a block that raises **or exits** (markdown-exec catches only ``Exception``; MkDocs would end silently) logs a warning
  naming page and block, which ``strict: true`` turns into a failed build;
* with ``PARALLELSEL_SNIPPET_CACHE=1`` (``make serve``) a successful block's HTML is stored in ``.cache/exec/<key>.html``,
  key = sha256 of its expanded source, options, every ``parallelsel`` file, mkdocs.yml and the tool versions (not
  stored: blocks without an id, with ``session=``, that failed, or with headings); a library edit changes every key;
* ``PARALLELSEL_SNIPPET_EXEC=0`` runs nothing (the floor build of ``make bench``).

The notebook follows the same switches through mkdocs-jupyter's public options (its cache under
``.cache/mkdocs-jupyter/<library and versions hash>``). ``make serve`` runs ``mkdocs serve --dirty``; ``on_files`` drops
every page's HTML when ``parallelsel/``, ``snippets/`` or ``hooks/`` changed since the last build, so all re-render.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import linecache
import logging
import os
import re
import sys
import traceback
import types
from contextlib import redirect_stdout
from importlib import metadata
from pathlib import Path

import markdown_exec

log = logging.getLogger("mkdocs.hooks.exec_blocks")
_PACKAGES = ("numpy", "matplotlib", "markdown-exec", "markdown", "pymdown-extensions", "pygments", "mkdocs-jupyter", "nbconvert", "ipykernel")
_state = {"page": "?", "env": "", "lib": None, "hits": 0, "runs": 0, "cache": Path(".cache/exec"), "dirty": False, "inputs": None}


def _on(name: str, default: str) -> bool:
    return os.environ.get(name, default).strip().lower() not in {"", "0", "no", "off", "false"}


def env_hash(library: Path) -> str:
    """sha256 of the library's files and the tool versions: what a block's output depends on besides its source."""
    h = hashlib.sha256(sys.version.encode())
    for name in _PACKAGES:
        h.update(f"{name}={metadata.version(name)}".encode())
    return tree_hash(library, h)


def tree_hash(folder: Path, h=None) -> str:
    """sha256 of every file under ``folder`` (path and bytes), ``__pycache__`` aside."""
    h = h or hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def _execute(code: str, block: str) -> str:
    """Run ``code`` as a fresh module; return what it printed. Raises ExecutionError with the traceback."""
    name = f"_exec_{block.replace('-', '_')}"
    module = types.ModuleType(name)
    sys.modules[name] = module  # dataclasses and pickling look their module up
    filename = f"<block {block}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)  # tracebacks show the lines
    out = io.StringIO()
    try:
        with redirect_stdout(out):
            exec(compile(code, filename, "exec"), module.__dict__)  # noqa: S102 - running the site's own snippets is the point
    except Exception as error:  # noqa: BLE001
        _fail(block, error, "")
    except SystemExit as error:  # markdown-exec lets it through, and MkDocs would end with no site
        _fail(block, error, " (sys.exit/exit/quit or raise SystemExit: a snippet must print, never exit the build)")
    finally:
        sys.modules.pop(name, None)
        linecache.cache.pop(filename, None)
    return out.getvalue()


def _fail(block: str, error: BaseException, note: str):
    _state["failed"] = True
    text = "".join(traceback.format_exception(error))
    log.warning(f"[page docs/{_state['page']}] block '{block}' raised {type(error).__name__}{note}:\n{text}")
    raise markdown_exec.ExecutionError(markdown_exec.code_block("python", text)) from None


def _run(code: str, returncode: int = 0, session: str | None = None, id: str = "", **extra) -> str:  # noqa: A002, ARG001
    if not _on("PARALLELSEL_SNIPPET_EXEC", "1"):
        return ""
    _state["runs"] += 1
    return _execute(code, id or "unnamed")


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
    _state.update(page="?", hits=0, runs=0)
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
    if _on("PARALLELSEL_SNIPPET_CACHE", ""):
        log.info(f"exec blocks: {_state['runs']} ran, {_state['hits']} from .cache/exec")


def on_startup(command, dirty=False, **kwargs):
    _state["dirty"] = bool(dirty)


def on_files(files, config, **kwargs):
    if _state["dirty"]:  # `make serve`: what the pages run changed, so every page re-renders
        root = Path(config.config_file_path).resolve().parent
        now = "".join(tree_hash(root / name) for name in ("parallelsel", "snippets", "hooks"))
        if _state["inputs"] not in (None, now):
            for f in files.documentation_pages():
                if os.path.isfile(f.abs_dest_path):
                    os.remove(f.abs_dest_path)
        _state["inputs"] = now
    return files
