"""Run the site's exec blocks in worker processes ahead of the pages that show them.

markdown-exec runs each block in the build process, one after another, while the page is being
converted; on a machine with several cores the others sit idle. This hook, before any page is
converted (``on_files``), reads every Markdown page, expands its ``--8<--`` includes with the
site's own pymdownx.snippets settings, and queues each Python exec block for a small pool of
worker processes (hooks/prefetch_worker.py, which runs it through markdown-exec's own runner).
When the build reaches a block, markdown-exec's runner (wrapped here) takes the worker's output
if it is done, waits if a worker is on it, and runs the block in-process as before if no worker
has started it yet. So the build never does less than it did: it only does it earlier and on
more cores.

A worker keeps the build's working directory, environment, stdin, stdout and stderr, so a block
prints the same bytes there as in-process, provided it does not lean on state another block left
in the process (which blocks share a process differs); tests/test_build_checks.py builds the real
site with and without workers and compares. A block is taken from a worker only when it is an
exact match: same source after includes, same ``id``, no ``session`` (a session shares state
between blocks), only options that do not change how it runs, each written ``key="value"`` or
``key='value'``. Anything else, and any block that failed in a worker, runs in-process, so errors
are reported exactly as before (hooks/snippet_errors.py names the page). Blocks without an ``id``
are not queued: markdown-exec names them by a build-wide counter.

With the serve-mode cache on (hooks/snippet_cache.py), blocks the cache will answer are not
queued, so a prose edit under ``make serve`` starts no workers.

``PARALLELSEL_SNIPPET_WORKERS``: the number of worker processes (default: the CPUs this process
may use; ``0`` turns the hook off). Fewer than ``JOBS_PER_WORKER`` queued blocks per worker are
not worth a worker's start-up (it imports matplotlib and the library), so small sites run
in-process. Execution off (``PARALLELSEL_SNIPPET_EXEC=0``) queues nothing.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import Future
from pathlib import Path, PurePath

import markdown
from mkdocs.exceptions import PluginError

# Sibling modules in hooks/ (MkDocs puts a hook's folder on sys.path while loading it).
from _sibling import sibling_hook
from _switches import cache_on, execution_on

log = logging.getLogger("mkdocs.hooks.prefetch")

ENV_WORKERS = "PARALLELSEL_SNIPPET_WORKERS"
JOBS_PER_WORKER = 4
WORKER = Path(__file__).resolve().with_name("prefetch_worker.py")
PRELOAD = ("matplotlib.pyplot", "parallelsel.render")  # what nearly every block here imports: workers load it while MkDocs starts

# An opening code fence (any language, any indent: folds and tabs), e.g. ```python exec="on" id="x".
_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*)$")
_PYTHON = re.compile(r"^\{?[ \t]*\.?python(?=[ \t}]|$)")
_OPTION = re.compile(r"""[ \t]+([A-Za-z][\w-]*)=(?:"([^"]*)"|'([^']*)')""")  # superfences quotes values with " or '
_TRUE = {"1", "on", "true", "yes"}
_PLAIN = {"exec", "html", "source", "tabs", "id", "result", "title", "idprefix", "update_toc"}  # options that do not change how the code runs

_state: dict = {}


def _workers_wanted() -> int:
    raw = os.environ.get(ENV_WORKERS, "").strip()
    if raw:
        try:
            n = int(raw)
        except ValueError:
            raise PluginError(f"{ENV_WORKERS}={raw!r}: must be a whole number of worker processes (0 = off)") from None
        if n < 0:
            raise PluginError(f"{ENV_WORKERS}={raw!r}: must be >= 0 (0 = off)")
        return n
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _options(rest: str) -> dict[str, str] | None:
    """``key="value"`` options of a fence's info string, or None if anything else is there (left to the build).

    >>> _options(" exec='on' width='40'")
    {'exec': 'on', 'width': '40'}
    >>> _options(' exec="on" linenums') is None
    True
    """
    options: dict[str, str] = {}
    pos = 0
    while pos < len(rest.rstrip()):
        m = _OPTION.match(rest, pos)
        if not m:
            return None
        options[m.group(1)] = m.group(2) if m.group(2) is not None else m.group(3)
        pos = m.end()
    return options


def exec_blocks(text: str) -> list[tuple[str, str]]:
    """``(code, id)`` of every Python exec block in ``text`` (includes already expanded) that a worker may run.

    >>> exec_blocks('a\\n    ```python exec="on" id="b"\\n    print(1)\\n\\n    print(2)\\n    ```\\n')
    [('print(1)\\n\\nprint(2)', 'b')]
    >>> exec_blocks('```python exec="on" session="s" id="c"\\nx = 1\\n```\\n')
    []
    >>> exec_blocks('````markdown\\n```python exec="on" id="shown"\\nx = 1\\n```\\n````\\n')
    []
    """
    lines = text.split("\n")
    found: list[tuple[str, str]] = []
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        i += 1
        if not m:
            continue
        indent, fence, info = m.group("indent"), m.group("fence"), m.group("info")
        close = re.compile(rf"^{re.escape(indent)}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        body: list[str] = []
        while i < len(lines) and not close.match(lines[i]):
            line = lines[i]
            body.append(line[len(indent) :] if line.startswith(indent) else line.lstrip(" \t"))
            i += 1
        i += 1
        lang = _PYTHON.match(info)
        if not lang:  # another language's fence: skip its body, which may show exec blocks as text
            continue
        options = _options(info[lang.end() :].rstrip().removesuffix("}"))
        if options is None or options.get("exec", "").lower() not in _TRUE or not options.get("id") or set(options) - _PLAIN:
            continue
        found.append(("\n".join(body), options["id"]))
    return found


def _expander(config):
    """Markdown's whitespace normalisation and the site's pymdownx.snippets, as one function of the page text."""
    md = markdown.Markdown(
        extensions=["pymdownx.snippets"], extension_configs={"pymdownx.snippets": config.mdx_configs.get("pymdownx.snippets", {})}
    )
    steps = [md.preprocessors[name] for name in ("normalize_whitespace", "snippet") if name in md.preprocessors]

    def expand(text: str) -> str:
        lines = text.split("\n")
        for step in steps:
            lines = step.run(lines)
        return "\n".join(lines)

    return expand


class Pool:
    """Worker processes fed from one ordered queue; the build can take back a block nobody started."""

    def __init__(self, jobs: list[tuple[str, str]], procs: list[subprocess.Popen]):
        self.cond = threading.Condition()
        self.jobs = jobs
        self.index = {job: n for n, job in enumerate(jobs)}
        self.pending = list(range(len(jobs)))[::-1]  # a stack: pop() gives the next in page order
        self.status: dict[int, str] = {}  # n -> "running" | "done" | "failed" | "local"
        self.results: dict[int, str] = {}
        self.counts = {"worker": 0, "local": 0, "failed": 0}
        self.procs = procs
        self.n_workers = len(procs)
        for proc in procs:
            # Each worker's first block is claimed here, before any page is converted, so the first
            # blocks are always a worker's (the tests rely on it to exercise the worker path).
            threading.Thread(target=self._serve, args=(proc, self._next()), daemon=True).start()

    def _next(self) -> int | None:
        with self.cond:
            while self.pending:
                n = self.pending.pop()
                if n not in self.status:
                    self.status[n] = "running"
                    return n
            return None

    def _serve(self, proc: subprocess.Popen, n: int | None) -> None:
        """Feed one worker a block at a time, starting with ``n``, and record its replies (runs in a thread)."""
        try:
            while n is not None:
                code, block_id = self.jobs[n]
                proc.jobs.write(json.dumps({"n": n, "code": code, "id": block_id}, ensure_ascii=False) + "\n")
                proc.jobs.flush()
                line = proc.replies.readline()
                if not line:
                    break
                reply = json.loads(line)
                with self.cond:
                    if reply.get("ok"):
                        self.status[n], self.results[n] = "done", reply["out"]
                    else:
                        self.status[n] = "failed"
                    self.cond.notify_all()
                n = self._next()
        except (OSError, ValueError):
            pass
        if proc.poll() not in (None, 0):
            log.info("prefetch: a worker exited with code %s; its blocks run in-process", proc.returncode)
        with self.cond:  # the worker died or was stopped: what it held runs in-process
            if n is not None and self.status.get(n) == "running":
                self.status[n] = "failed"
            self.cond.notify_all()

    def take(self, code: str, block_id: str) -> str | None:
        """The block's printed output from a worker, or None: then the caller runs it in-process."""
        n = self.index.get((code, block_id))
        if n is None:
            return None
        with self.cond:
            if n not in self.status:
                self.status[n] = "local"  # no worker has it yet: running it here is quicker than waiting
            while self.status[n] == "running":
                self.cond.wait()
            status = self.status[n]
            if status == "done":
                self.counts["worker"] += 1
                return self.results[n]  # not popped: the same block may appear on another page
            self.counts["failed" if status == "failed" else "local"] += 1
            return None

    def close(self) -> None:
        _close(self.procs)
        self.procs = []


def _spawn(n: int) -> list[subprocess.Popen]:
    """Start ``n`` workers, each with its own pair of pipes (``proc.jobs``, ``proc.replies``); they share our stdio."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # import what this process imports
    procs = []
    for _ in range(n):
        job_r, job_w = os.pipe()  # not inheritable (PEP 446): a later worker cannot hold an earlier one's pipe open
        reply_r, reply_w = os.pipe()
        try:
            proc = subprocess.Popen([sys.executable, str(WORKER), str(job_r), str(reply_w), *PRELOAD], pass_fds=(job_r, reply_w), env=env)
        finally:
            os.close(job_r)
            os.close(reply_w)
        proc.jobs = os.fdopen(job_w, "w", encoding="utf-8")
        proc.replies = os.fdopen(reply_r, encoding="utf-8")
        procs.append(proc)
    return procs


def _close(procs: list[subprocess.Popen]) -> None:
    """End workers: closing the job pipe ends their loop once the block in hand is done."""
    for proc in procs:
        try:
            proc.jobs.close()
        except OSError:
            pass
    for proc in procs:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.replies.close()


class Notebooks:
    """Notebooks executed in background threads (each drives its own kernel process), one per notebook."""

    def __init__(self, jupyter, paths: list[str]):
        self.tmp = Path(tempfile.mkdtemp(prefix="parallelsel-nb-"))
        self.lock = threading.Lock()
        self.closed = False
        self.futures: dict[str, Future] = {}
        for i, path in enumerate(paths):
            future: Future = Future()
            self.futures[path] = future
            out = self.tmp / str(i) / Path(path).name  # same file name: nbconvert derives names from it
            threading.Thread(target=self._execute, args=(jupyter, path, out, future), daemon=True).start()

    def _execute(self, jupyter, path: str, out: Path, future: Future) -> None:
        try:
            import nbformat  # noqa: PLC0415  (only when there is a notebook to run)
            from mkdocs_jupyter.nbconvert2 import get_nbconvert_app  # noqa: PLC0415
            from nbconvert.preprocessors import ExecutePreprocessor  # noqa: PLC0415

            # The same execution settings mkdocs-jupyter would use (its nbconvert app's config).
            app = get_nbconvert_app(execute=True, kernel_name=jupyter.config["kernel_name"], allow_errors=jupyter.config["allow_errors"])
            nb = nbformat.read(path, as_version=4)
            ExecutePreprocessor(config=app.config).preprocess(nb, {"metadata": {"path": str(Path(path).parent)}})
            with self.lock:  # a build that ended meanwhile has removed self.tmp: do not create it again
                if self.closed:
                    raise RuntimeError("build ended")
                out.parent.mkdir(parents=True)
                nbformat.write(nb, str(out))
            future.set_result(str(out))
        except BaseException as exc:  # noqa: BLE001  (the page's own conversion re-runs it and reports the error)
            future.set_exception(exc)

    def executed(self, path: str) -> str | None:
        """Path of ``path`` already executed, or None (not ours, or it failed: convert it the usual way)."""
        future = self.futures.pop(path, None)
        if future is None:
            return None
        try:
            return future.result()
        except BaseException:  # noqa: BLE001
            return None

    def close(self) -> None:
        with self.lock:
            self.closed = True
            shutil.rmtree(self.tmp, ignore_errors=True)


def _notebooks_to_run(files, jupyter) -> list[str]:
    if jupyter is None or not jupyter.config.get("execute"):
        return []
    from mkdocs_jupyter import plugin as jupyter_plugin  # noqa: PLC0415

    paths = []
    for file in files.documentation_pages():
        path = file.abs_src_path
        if not path or not path.endswith(".ipynb"):
            continue
        if any(PurePath(path).match(pattern) for pattern in jupyter.config.get("execute_ignore") or []):
            continue
        if jupyter.config.get("cache"):  # serve mode: a cache hit needs no kernel
            key = jupyter_plugin._compute_cache_key(path, jupyter.config, True)
            if jupyter_plugin._get_cache_path(jupyter.config["cache_dir"], key).exists():
                continue
        paths.append(path)
    return paths


def _wrap_nb2html() -> None:
    from mkdocs_jupyter import convert  # noqa: PLC0415

    nb2html = convert.nb2html
    if getattr(nb2html, "_ps_prefetch", False):
        return

    def wrapped(nb_path, execute=False, **kwargs):
        notebooks = _state.get("notebooks")
        done = notebooks.executed(nb_path) if (notebooks is not None and execute) else None
        if done is not None:
            return nb2html(done, execute=False, **kwargs)
        return nb2html(nb_path, execute=execute, **kwargs)

    wrapped._ps_prefetch = True
    convert.nb2html = wrapped


def _wrap_runner() -> None:
    from markdown_exec._internal.formatters import python as mx_python

    run = mx_python._run_python
    if getattr(run, "_ps_prefetch", False):
        return

    def _run_python(code, returncode=None, session=None, id=None, **extra):  # noqa: A002  (markdown-exec's signature)
        pool = _state.get("pool")
        if pool is not None and not session and id and not returncode:
            out = pool.take(code, id)
            if out is not None:
                mx_python._code_block_id(id, session, extra.get("title"))  # keep markdown-exec's block counter as a local run would
                return out
        return run(code, returncode, session, id, **extra)

    _run_python._ps_prefetch = True
    mx_python._run_python = _run_python


def _rough_block_count(docs_dir: str) -> int:
    """Queueable blocks in the pages as written (includes not yet expanded): enough to size the pool early."""
    count = 0
    for path in Path(docs_dir).rglob("*.md"):
        try:
            count += len(exec_blocks(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return count


def on_config(config, **kwargs):
    _stop()
    _state["workers"] = _workers_wanted()
    _state["execute"] = execution_on()
    if _state["workers"] and _state["execute"]:
        _wrap_runner()
        if config.plugins.get("mkdocs-jupyter") is not None:
            _wrap_nb2html()
        if not cache_on():
            # A cold build: start the workers now, so their imports overlap MkDocs' own start-up;
            # a rough count of exec fences keeps small sites (test fixtures) from paying for idle ones.
            # (With the serve cache on, most rebuilds need none: on_files starts what it needs.)
            _state["spawned"] = _spawn(min(_state["workers"], _rough_block_count(config.docs_dir) // JOBS_PER_WORKER))
    return config


def on_files(files, config, **kwargs):
    if not (_state.get("workers") and _state.get("execute")):
        return files
    expand = _expander(config)
    cache = sibling_hook(config, "snippet_cache.py")
    will_hit = getattr(cache, "will_hit", None)
    jobs: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for file in files.documentation_pages():
        if not file.src_uri.endswith(".md"):
            continue
        try:
            text = expand(file.content_string)
        except Exception as exc:  # noqa: BLE001  (e.g. a missing --8<-- file: the page's own conversion reports it)
            log.debug("prefetch: %s not scanned: %s", file.src_uri, exc)
            continue
        for job in exec_blocks(text):
            if job not in seen and not (will_hit and will_hit(*job)):
                seen.add(job)
                jobs.append(job)
    notebooks = _notebooks_to_run(files, config.plugins.get("mkdocs-jupyter"))
    if notebooks:
        _state["notebooks"] = Notebooks(config.plugins.get("mkdocs-jupyter"), notebooks)
    n_workers = min(_state["workers"], len(jobs) // JOBS_PER_WORKER)
    spawned = _state.pop("spawned", [])
    _close(spawned[n_workers:])
    procs = spawned[:n_workers] + _spawn(n_workers - len(spawned[:n_workers]))
    if procs:
        _state["pool"] = Pool(jobs, procs)
    return files


def _stop() -> None:
    _close(_state.pop("spawned", []))
    notebooks = _state.pop("notebooks", None)
    if notebooks is not None:
        notebooks.close()
    pool = _state.pop("pool", None)
    if pool is not None:
        pool.close()
        log.info(
            "prefetch: %d of %d queued blocks ran in %d worker processes (%d in-process before a worker took them, %d failed in a worker and re-ran in-process)",
            pool.counts["worker"], len(pool.jobs), pool.n_workers, pool.counts["local"], pool.counts["failed"],
        )


def on_post_build(config, **kwargs):
    _stop()


def on_build_error(error, **kwargs):
    _stop()
