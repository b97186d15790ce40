"""The serve-mode snippet cache (hooks/snippet_cache.py) is fast and never stale.

A small site in ``tmp_path`` uses the real hooks (the cache included), markdown-exec and
mkdocs-jupyter. Its page runs blocks that import a tiny fake library (``tmp/lib/fakelib``, given to
the hook with ``PARALLELSEL_SNIPPET_CACHE_LIB``) and append a line to ``runs.txt`` each time they
really execute; the notebook does the same. The builds then show: a second build runs nothing, a
prose edit runs nothing, editing an included snippet file re-runs exactly its block, a library
change re-runs everything and the page shows the new value, a cached page is byte-identical to a
cold one, and with the variable unset nothing is cached. A last case rebuilds several times inside
one process, as ``mkdocs serve`` does: edited library modules are re-imported, and the in-memory
memos (search index, link check, Jinja bytecode, the API page's griffe collection) give the same
pages as a cold build.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.build

REPO = Path(__file__).resolve().parent.parent
HOOKS = ["snippet_errors.py", "math.py", "notebook.py", "linkcheck.py", "snippet_cache.py"]
sys.path.insert(0, str(REPO / "hooks"))
try:
    import snippet_cache  # noqa: E402
finally:
    sys.path.pop(0)

from fixture_site import mkdocs_yml  # noqa: E402  (tests/fixture_site.py)

PLUGINS = """\
  - mkdocstrings:
      handlers:
        python:
          paths: [{lib}]
  - mkdocs-jupyter:
      include: ["*.ipynb"]
      execute: true
      allow_errors: false
      cache: false
"""

LIB = """\
\"\"\"Fake library, documented value {value}.\"\"\"

from pathlib import Path

VALUE = {value!r}
RUNS = Path(__file__).resolve().parent.parent.parent / "runs.txt"


def record(name):
    with open(RUNS, "a", encoding="utf-8") as fh:
        fh.write(name + "\\n")
"""

SNIPPET = """\
import fakelib

fakelib.record("included")
print(f"included says {{fakelib.VALUE}} ({tag})")
"""

PAGE = """\
# Cache fixture

Some prose.

```python exec="on" id="inline-block"
import fakelib

fakelib.record("inline")
print(f"the value is **{fakelib.VALUE}**")
```

```python exec="on" source="tabbed-left" id="included-block"
--8<-- "snippets/included.py"
```

A block without an id, with its source in tabs: its ids carry markdown-exec's counter.

```python exec="on" html="true" source="tabbed-left"
import fakelib

fakelib.record("no-id")
print(f'<p id="raw">raw {fakelib.VALUE}</p>')
```

A block that prints a heading: markdown-exec adds it to the page's TOC, so it is never cached.

```python exec="on" id="heading-block"
print("## Printed heading")
```
"""


def _notebook() -> str:
    cells = [
        {"cell_type": "markdown", "id": "c0", "metadata": {}, "source": "# Notebook\n"},
        {
            "cell_type": "code",
            "id": "c1",
            "metadata": {},
            "execution_count": None,
            "outputs": [],
            "source": 'import fakelib\nfakelib.record("notebook")\nprint("notebook says", fakelib.VALUE)',
        },
    ]
    meta = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}
    return json.dumps({"cells": cells, "metadata": meta, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


class Site:
    def __init__(self, root: Path, *, notebook: bool = True):
        self.root = root
        self.notebook = notebook
        (root / "docs").mkdir(parents=True)
        (root / "snippets").mkdir()
        (root / "lib" / "fakelib").mkdir(parents=True)
        pages = ["index.md", "api.md"] + (["notebook.ipynb"] if notebook else [])
        plugins = PLUGINS.format(lib=json.dumps(str(root / "lib")))
        config = mkdocs_yml(root, name="cache fixture", hooks=HOOKS, pages=pages, plugins=plugins)
        (root / "mkdocs.yml").write_text(config, encoding="utf-8")
        (root / "docs" / "index.md").write_text(PAGE, encoding="utf-8")
        (root / "docs" / "api.md").write_text("# API\n\n::: fakelib\n", encoding="utf-8")
        if notebook:
            (root / "docs" / "notebook.ipynb").write_text(_notebook(), encoding="utf-8")
        self.set_library(41)
        self.set_snippet("v1")

    def set_library(self, value) -> None:
        (self.root / "lib" / "fakelib" / "__init__.py").write_text(LIB.format(value=value), encoding="utf-8")

    def set_snippet(self, tag: str) -> None:
        (self.root / "snippets" / "included.py").write_text(SNIPPET.format(tag=tag), encoding="utf-8")

    def env(self, cache: bool) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PARALLELSEL_SNIPPET")}
        env |= {"NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(self.root / "lib")}
        env["PARALLELSEL_SNIPPET_CACHE_LIB"] = str(self.root / "lib" / "fakelib")
        if cache:
            env["PARALLELSEL_SNIPPET_CACHE"] = "1"
        return env

    def runs(self) -> list[str]:
        path = self.root / "runs.txt"
        runs = path.read_text(encoding="utf-8").split() if path.exists() else []
        path.unlink(missing_ok=True)
        return sorted(runs)

    def build(self, *, cache: bool, site: str = "site") -> tuple[str, list[str], str]:
        """Build; return (index.html, the sorted list of what really executed, build log)."""
        result = subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(self.root / "mkdocs.yml"), "-d", str(self.root / site)],
            cwd=self.root,
            env=self.env(cache),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert result.returncode == 0, result.stderr[-6000:]
        html = (self.root / site / "index.html").read_text(encoding="utf-8")
        html += (self.root / site / "api" / "index.html").read_text(encoding="utf-8")
        if self.notebook:
            html += (self.root / site / "notebook" / "index.html").read_text(encoding="utf-8")
        return html, self.runs(), result.stderr


ALL = ["inline", "included", "no-id", "notebook"]


@pytest.fixture
def site(tmp_path) -> Site:
    return Site(tmp_path / "site-src")


@pytest.fixture
def small_site(tmp_path) -> Site:
    """Without the notebook (a kernel start per build) for the cases that do not need it."""
    return Site(tmp_path / "site-src", notebook=False)


def test_cache_hits_and_is_never_stale(site: Site):
    cold, runs, log = site.build(cache=False, site="cold")
    assert runs == sorted(ALL)
    assert "snippet_cache" not in log and not (site.root / ".cache").exists(), "without the variable the hook is inert"
    assert "the value is <strong>41</strong>" in cold and "included says 41 (v1)" in cold and "notebook says 41" in cold

    first, runs, _ = site.build(cache=True)
    assert runs == sorted(ALL), "the first cached build executes everything"
    assert (site.root / ".cache" / "snippets").is_dir() and (site.root / ".cache" / "mkdocs-jupyter").is_dir()

    second, runs, log = site.build(cache=True)
    assert runs == [], f"a second build with nothing changed must execute nothing:\n{log[-3000:]}"
    assert second == first
    assert "3 cached, 0 run and stored, 1 run uncached" in log
    assert 'href="#heading-block-printed-heading"' in second, "the printed heading must stay in the TOC"

    # A cached page equals a cold build's, byte for byte (markdown-exec's exec-N-- ids included).
    assert second == cold
    assert re.search(r'id="exec-\d+--', second), "the fixture should exercise counter-numbered ids"

    # Prose-only edit: nothing executes, the new prose is there.
    with open(site.root / "docs" / "index.md", "a", encoding="utf-8") as fh:
        fh.write("\nA new sentence of prose.\n")
    html, runs, _ = site.build(cache=True)
    assert runs == [] and "A new sentence of prose." in html

    # Editing an included snippet file re-runs exactly the block that includes it.
    site.set_snippet("v2")
    html, runs, _ = site.build(cache=True)
    assert runs == ["included"] and "included says 41 (v2)" in html

    # A library change re-runs every block and the notebook: the pages show the new value.
    site.set_library(42)
    html, runs, _ = site.build(cache=True)
    assert runs == sorted(ALL)
    assert "the value is <strong>42</strong>" in html and "included says 42 (v2)" in html and "notebook says 42" in html
    assert 'raw 42</p>' in html
    assert not re.search(r"(says|is <strong>|raw) 41", html), "no output of the old library may survive"

    # With the variable unset, a build with a warm cache on disk still executes everything.
    html, runs, log = site.build(cache=False, site="cold")
    assert runs == sorted(ALL) and "snippet_cache" not in log


def test_failing_block_is_not_cached(small_site: Site):
    site = small_site
    with open(site.root / "docs" / "index.md", "a", encoding="utf-8") as fh:
        fh.write('\n```python exec="on" id="boom"\nraise ValueError("boom")\n```\n')
    for _ in range(2):
        result = subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(site.root / "mkdocs.yml"), "-d", str(site.root / "site")],
            cwd=site.root, env=site.env(True), capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert result.returncode != 0 and "boom" in result.stderr


def test_long_running_process_is_never_stale(small_site: Site):
    """Several builds in one interpreter, like ``mkdocs serve`` (which re-loads the config and hooks
    on each rebuild): the edited library is re-imported, the memoized link check still fails the
    build, and the memoized search index equals a cold build's."""
    site = small_site
    script = textwrap.dedent(
        f"""
        import pathlib, shutil
        from mkdocs.commands.build import build
        from mkdocs.config import load_config
        from mkdocs.exceptions import Abort

        root = pathlib.Path({str(site.root)!r})
        page = root / "docs" / "index.md"
        lib = root / "lib" / "fakelib" / "__init__.py"
        def once():
            build(load_config(str(root / "mkdocs.yml"), site_dir=str(root / "site")))
            return (root / "site" / "index.html").read_text(encoding="utf-8") + (root / "site" / "api" / "index.html").read_text(encoding="utf-8")

        html = once()
        assert "the value is <strong>41</strong>" in html and "documented value 41" in html
        assert "documented value 41" in once(), "second build, griffe collection reused"
        lib.write_text(lib.read_text().replace("VALUE = 41", "VALUE = 42").replace("value 41", "value 42"))
        html = once()
        assert "the value is <strong>42</strong>" in html, "stale library module in a long-running process"
        assert "documented value 42" in html and "documented value 41" not in html, "stale API page"

        original = page.read_text()
        page.write_text(original + "\\n[broken](#no-such-anchor)\\n")
        try:
            once()
        except Abort:
            pass
        else:
            raise AssertionError("the memoized link check missed a broken anchor")
        page.write_text(original + "\\nSecond prose.\\n")
        assert "Second prose." in once()
        shutil.copytree(root / "site", root / "warm")
        print("OK")
        """
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=site.root, env=site.env(True), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "OK" in result.stdout, result.stderr[-6000:]
    cold, _, _ = site.build(cache=False, site="cold")
    assert "the value is <strong>42</strong>" in cold and "Second prose." in cold
    for page in ("index.html", "api/index.html", "search/search_index.json"):
        warm = (site.root / "warm" / page).read_text(encoding="utf-8")
        assert warm == (site.root / "cold" / page).read_text(encoding="utf-8"), f"{page}: warm in-process build differs from a cold one"
    assert "Second prose." in (site.root / "warm" / "search" / "search_index.json").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("start", "delta", "now", "expected"),
    [
        (3, 1, 3, 'id="exec-4--x" href="#exec-4--x"'),  # same position: unchanged
        (3, 1, 7, 'id="exec-8--x" href="#exec-8--x"'),  # shifted
    ],
)
def test_renumber(start, delta, now, expected):
    html = 'id="exec-4--x" href="#exec-4--x"'
    assert snippet_cache._renumber(html, start, delta, now) == expected
    assert snippet_cache._renumber('id="exec-2--y"', start, delta, now) == 'id="exec-2--y"'  # not this block's
