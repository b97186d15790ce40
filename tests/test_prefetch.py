"""Exec blocks run ahead in worker processes (hooks/prefetch.py) without changing what the build does.

The scanner is tested on its own (which fences it queues and which it leaves to the build); then a
small site in ``tmp_path`` with the real hooks is built with workers off and on: the pages are the
same bytes, the log says the blocks ran in a worker, a block that fails in a worker fails the build
exactly as an in-process failure does (page and block named), and with the serve cache warm a
rebuild queues nothing. The real site is compared with workers on and off in
tests/test_build_checks.py (``test_real_site_builds_are_reproducible``).
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mkdocs.exceptions import PluginError

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "hooks"))
try:
    import prefetch  # noqa: E402
finally:
    sys.path.pop(0)

from fixture_site import mkdocs_yml  # noqa: E402  (tests/fixture_site.py)

HOOKS = ["snippet_errors.py", "prefetch.py", "math.py", "notebook.py", "linkcheck.py", "search_index.py", "snippet_cache.py"]


BLOCK = """\
```python exec="on" source="tabbed-left" id="{id}"
total = sum(i * i for i in range({n}))
print(f"block {id}: {{total}}")
```
"""


def _fence(info: str, body: str, indent: str = "") -> str:
    lines = [f"```{info}", *body.split("\n"), "```"]
    return "".join(f"{indent}{line}\n" if line else "\n" for line in lines)


# --- the scanner -------------------------------------------------------------------------------


def test_scanner_queues_plain_blocks_with_ids():
    text = (
        _fence('python exec="on" id="a"', "print(1)")
        + "\n=== \"Tab\"\n\n"
        + _fence('python exec="1" source="tabbed-left" tabs="a|b" id="b" title="t"', "x = 1\n\nprint(x)", indent="    ")
        + _fence('{.python exec="true" id="c"}', "print(3)")
    )
    text += _fence("python exec='on' id='d'", "print(4)")  # superfences takes either quote
    assert prefetch.exec_blocks(text) == [("print(1)", "a"), ("x = 1\n\nprint(x)", "b"), ("print(3)", "c"), ("print(4)", "d")]


def test_hook_docstring_examples():
    result = doctest.testmod(prefetch)
    assert result.attempted >= 3 and result.failed == 0


@pytest.mark.parametrize(
    ("info", "why"),
    [
        ('python exec="on"', "no id: markdown-exec numbers it with a build-wide counter"),
        ('python exec="on" id="s" session="x"', "a session shares state between blocks"),
        ('python exec="on" id="r" returncode="1"', "an expected failure is the build's to check"),
        ("python exec=\"on\" id=\"w\" width='40'", "an option that changes how it runs (either quote)"),
        ('python exec="on" id="f" linenums', "anything that is not key=value: the build knows best"),
        ('python3 exec="on" id="p3"', "not the python formatter"),
        ('python exec="off" id="o"', "not executed"),
        ('python id="n"', "not executed"),
        ('pycon exec="on" id="p"', "another language"),
        ('bash exec="on" id="b"', "another language"),
    ],
)
def test_scanner_leaves_other_blocks_to_the_build(info, why):
    assert prefetch.exec_blocks(_fence(info, "print(1)")) == [], why


def test_scanner_skips_blocks_shown_inside_other_fences():
    shown = _fence('python exec="on" id="shown"', "print(1)")
    text = "````markdown\n" + shown + "````\n" + "~~~text\n" + shown + "~~~\n" + _fence('python exec="on" id="real"', "print(2)")
    assert prefetch.exec_blocks(text) == [("print(2)", "real")]


@pytest.mark.parametrize("raw", ["two", "-1", "1.5"])
def test_bad_worker_count_is_a_clear_error(monkeypatch, raw):
    monkeypatch.setenv("PARALLELSEL_SNIPPET_WORKERS", raw)
    with pytest.raises(PluginError, match=rf"PARALLELSEL_SNIPPET_WORKERS={re.escape(repr(raw))}"):
        prefetch._workers_wanted()


def test_worker_count_defaults_to_usable_cpus(monkeypatch):
    monkeypatch.delenv("PARALLELSEL_SNIPPET_WORKERS", raising=False)
    assert prefetch._workers_wanted() == len(os.sched_getaffinity(0))
    monkeypatch.setenv("PARALLELSEL_SNIPPET_WORKERS", "0")
    assert prefetch._workers_wanted() == 0


# --- builds ------------------------------------------------------------------------------------

N_BLOCKS = 8  # distinct (code, id) pairs below; with JOBS_PER_WORKER = 4 that is two workers


class Site:
    def __init__(self, root: Path):
        self.root = root
        (root / "docs").mkdir(parents=True)
        (root / "snippets").mkdir()
        config = mkdocs_yml(root, name="prefetch fixture", hooks=HOOKS, pages=["index.md", "second.md"])
        (root / "mkdocs.yml").write_text(config, encoding="utf-8")
        (root / "snippets" / "inc.py").write_text('print("from an included file")\n', encoding="utf-8")
        first = "# First\n\nProse.\n\n" + BLOCK.format(id="one", n=10) + "\n" + BLOCK.format(id="two", n=20) + "\n"
        first += '```python exec="on" id="three"\n--8<-- "snippets/inc.py"\n```\n'
        second = "# Second\n\n" + "\n".join(BLOCK.format(id=name, n=n) for name, n in (("four", 4), ("five", 5), ("six", 6)))
        second += '\n```python exec="on" id="three"\n--8<-- "snippets/inc.py"\n```\n'  # the same block again: both pages show it
        second += _fence('python exec="on" id="stdin"', 'import sys\n\nprint("stdin holds", len(sys.stdin.read()), "characters")')
        second += _fence('python exec="on" id="zh"', 'print("并行策略：数据并行")')  # non-ASCII, whatever the locale
        (root / "docs" / "index.md").write_text(first, encoding="utf-8")
        (root / "docs" / "second.md").write_text(second, encoding="utf-8")

    def prepend(self, page: str, text: str) -> None:
        path = self.root / "docs" / page
        path.write_text(text + "\n" + path.read_text(encoding="utf-8"), encoding="utf-8")

    def build(self, *, workers: int, cache: bool = False, site: str = "site", **extra: str) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PARALLELSEL_SNIPPET") and k != "PYTHONPATH"}
        env |= {"NO_MKDOCS_2_WARNING": "1", "PARALLELSEL_SNIPPET_WORKERS": str(workers), **extra}
        if cache:
            env["PARALLELSEL_SNIPPET_CACHE"] = "1"
        return subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(self.root / "mkdocs.yml"), "-d", str(self.root / site)],
            cwd=self.root, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, encoding="utf-8", timeout=120, check=False,
        )  # fmt: skip

    def pages(self, site: str = "site") -> dict[str, str]:
        return {p: (self.root / site / p).read_text(encoding="utf-8") for p in ("index.html", "second/index.html")}


STATS = re.compile(r"prefetch: (\d+) of (\d+) queued blocks ran in (\d+) worker processes \((\d+) in-process before a worker took them, (\d+) failed")


def _stats(log: str) -> tuple[int, ...] | None:
    m = STATS.search(log)
    return tuple(int(g) for g in m.groups()) if m else None


@pytest.fixture
def site(tmp_path) -> Site:
    return Site(tmp_path / "src")


@pytest.mark.build
def test_workers_change_nothing_but_where_blocks_run(site: Site):
    # A locale whose encoding cannot hold the page's Chinese: the workers' pipes must not depend on it.
    off = site.build(workers=0, site="off", PYTHONIOENCODING="latin-1")
    assert off.returncode == 0, off.stderr[-6000:]
    assert _stats(off.stderr) is None, "workers=0 turns the hook off"
    on = site.build(workers=2, site="on", PYTHONIOENCODING="latin-1")
    assert on.returncode == 0, on.stderr[-6000:]
    assert site.pages("on") == site.pages("off")
    first, second = site.pages("on").values()
    assert "block two: 2470" in first  # sum of squares below 20
    assert "from an included file" in first and "from an included file" in second
    assert "stdin holds 0 characters" in second and "并行策略：数据并行" in second
    stats = _stats(on.stderr)
    assert stats is not None, on.stderr[-3000:]
    ran, queued, workers, local, failed = stats
    assert queued == N_BLOCKS and workers == 2 and failed == 0, stats
    # Each worker's first block is handed over before any page is converted, so at least those ran
    # there; later ones may be taken back by the build if it gets to them first.
    assert ran >= 2 and ran + local >= N_BLOCKS, stats


@pytest.mark.build
@pytest.mark.parametrize(
    ("body", "message"),
    [('raise ValueError("boom in a worker")', "boom in a worker"), ("import sys\nsys.exit(3)", "SystemExit(3)")],
)
def test_block_failing_in_a_worker_fails_the_build_as_before(site: Site, body, message):
    site.prepend("index.md", _fence('python exec="on" id="bad"', body))  # the first queued block: always a worker's
    result = site.build(workers=1)
    assert result.returncode != 0
    assert message in result.stderr and "[page docs/index.md]" in result.stderr, result.stderr[-4000:]
    stats = _stats(result.stderr)
    assert stats is not None and stats[4] >= 1, f"the failing block should have run in the worker first:\n{result.stderr[-3000:]}"
    off = site.build(workers=0)
    assert off.returncode != 0 and message in off.stderr and "[page docs/index.md]" in off.stderr


@pytest.mark.build
def test_warm_serve_cache_queues_nothing(site: Site):
    first = site.build(workers=2, cache=True)
    assert first.returncode == 0, first.stderr[-6000:]
    assert _stats(first.stderr) is not None and _stats(first.stderr)[1] == N_BLOCKS
    with open(site.root / "docs" / "index.md", "a", encoding="utf-8") as fh:
        fh.write("\nA prose edit.\n")
    second = site.build(workers=2, cache=True)
    assert second.returncode == 0, second.stderr[-6000:]
    assert _stats(second.stderr) is None, f"every block is cached: no worker should start\n{second.stderr[-3000:]}"
    assert "A prose edit." in site.pages()["index.html"]
    site.prepend("second.md", BLOCK.format(id="seven", n=7) + "\n" + BLOCK.format(id="eight", n=8) + "\n"
                 + BLOCK.format(id="nine", n=9) + "\n" + BLOCK.format(id="ten", n=10))  # fmt: skip
    third = site.build(workers=2, cache=True)
    assert third.returncode == 0, third.stderr[-6000:]
    assert _stats(third.stderr) is not None and _stats(third.stderr)[1] == 4, "only the four new blocks are queued"
    assert "block nine: 204" in site.pages()["second/index.html"]


@pytest.mark.build
def test_bad_worker_count_fails_the_build_in_one_line(site: Site):
    result = site.build(workers="two")  # type: ignore[arg-type]
    assert result.returncode != 0
    assert "PARALLELSEL_SNIPPET_WORKERS='two': must be a whole number" in result.stderr
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
