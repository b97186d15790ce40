"""The strict build is the site's checker: prove each guard by injecting the fault it must catch.

Each case copies the small site in ``tests/fixtures/minimal`` into a temporary directory, writes a
``mkdocs.yml`` there that INHERITs the project's real ``mkdocs.yml`` (so theme, extensions,
plugins, hooks and validation settings cannot drift from the real site; only ``nav`` is
overridden), injects one fault and runs ``mkdocs build --strict``. The build must fail, and its
output must say what and where. The unfaulted fixture must build, and builds must be reproducible,
byte for byte, for the fixture and for the real site.

All fixture builds a session needs are started together on a small thread pool (each build is a
subprocess), so the cases cost about one build per core rather than one build each.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytestmark = pytest.mark.build

REPO = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "minimal"
NAV = ["index.md", "other.md", "notebook.ipynb"]
# Top-level entries of the repo that a fixture site must NOT share (it brings its own pages and snippets).
_NOT_SHARED = {"docs", "snippets", "site", "mkdocs.yml", "tests", ".git", ".venv", ".cache", ".pytest_cache", ".hypothesis"}


def notebook(*cells: tuple[str, str]) -> str:
    """A minimal nbformat-4 notebook from ``(cell_type, source)`` pairs."""
    out = []
    for i, (kind, source) in enumerate(cells):
        cell = {"cell_type": kind, "id": f"cell{i}", "metadata": {}, "source": source}
        if kind == "code":
            cell |= {"execution_count": None, "outputs": []}
        out.append(cell)
    meta = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}
    return json.dumps({"cells": out, "metadata": meta, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def block(block_id: str, source: str, **options: str) -> str:
    """A markdown-exec block, as pages write them."""
    opts = "".join(f' {k}="{v}"' for k, v in options.items())
    return f'\n\n```python exec="on" id="{block_id}"{opts}\n{source}\n```\n'


@dataclass(frozen=True)
class Fault:
    """Files to append to or (over)write in the fixture, and what the failed build must say."""

    append: dict[str, str] = field(default_factory=dict)
    write: dict[str, str] = field(default_factory=dict)
    says: tuple[str, ...] = ()


TABLE_AND_CHART = """\
print("| n | time |")
print("| -: | ---: |")
print("| 2 | 1.0 s |")
print('<figure class="ps-chart"><svg role="img" aria-label="chart"><text>1.0</text></svg><figcaption>chart</figcaption></figure>')
"""

FAULTS: dict[str, Fault] = {
    # (a) a snippet that raises: the message names the page and the block.
    "snippet-raises": Fault(
        write={"snippets/raises.py": 'print("partial output")\nraise ValueError("fault-a: snippet raised")\n'},
        append={"docs/other.md": block("fault-raise", '--8<-- "snippets/raises.py"')},
        says=("docs/other.md", "fault-raise", "ValueError", "fault-a: snippet raised"),
    ),
    # (b) a snippet that exits: loud, not a silent end of the build with no site.
    "snippet-sys-exit": Fault(
        write={"snippets/exits.py": 'import sys\nprint("before exit")\nsys.exit(0)\n'},
        append={"docs/other.md": block("fault-exit", '--8<-- "snippets/exits.py"')},
        says=("docs/other.md", "fault-exit", "sys.exit"),
    ),
    "snippet-raise-systemexit": Fault(
        append={"docs/other.md": block("fault-systemexit", "raise SystemExit(0)")},
        says=("docs/other.md", "fault-systemexit", "SystemExit"),
    ),
    # (c) a notebook cell that raises.
    "notebook-cell-raises": Fault(
        write={"docs/notebook.ipynb": notebook(("markdown", "# Notebook\n"), ("code", 'raise RuntimeError("fault-c: cell raised")'))},
        says=("notebook.ipynb", "RuntimeError", "fault-c: cell raised"),
    ),
    # (d) broken links and anchors, wherever they are written.
    "markdown-missing-page": Fault(
        append={"docs/index.md": "\n[gone](missing.md)\n"},
        says=("index.md", "missing.md"),
    ),
    "markdown-bad-anchor": Fault(
        append={"docs/index.md": "\n[nope](other.md#no-such-anchor)\n"},
        says=("index.md", "no-such-anchor"),
    ),
    "markdown-bad-anchor-into-notebook": Fault(
        append={"docs/index.md": "\n[nope](notebook.ipynb#no-such-anchor)\n"},
        says=("docs/index.md", "no-such-anchor"),
    ),
    "snippet-prints-bad-anchor": Fault(
        append={"docs/index.md": block("fault-anchor", 'print("[nope](#no-such-anchor)")', idprefix="")},
        says=("docs/index.md", "#no-such-anchor"),
    ),
    # The correct anchor printed WITHOUT idprefix="" breaks too: markdown-exec prefixes it with the block id.
    "snippet-anchor-without-idprefix": Fault(
        append={"docs/index.md": block("fault-prefixed", 'print("[target](#target-section)")')},
        says=("docs/index.md", "#fault-prefixed-target-section"),
    ),
    "snippet-prints-missing-page": Fault(
        append={"docs/index.md": block("fault-page", 'print("[gone](../missing/)")', idprefix="")},
        says=("docs/index.md", "missing"),
    ),
    "notebook-link-missing-page": Fault(
        write={"docs/notebook.ipynb": notebook(("markdown", "# Notebook\n\n[gone](../missing/)"), ("code", "print(1)"))},
        says=("docs/notebook.ipynb", "missing"),
    ),
    "notebook-link-bad-anchor": Fault(
        write={"docs/notebook.ipynb": notebook(("markdown", "# Notebook\n\n[nope](../other/#no-such-anchor)"), ("code", "print(1)"))},
        says=("docs/notebook.ipynb", "no-such-anchor"),
    ),
    # (f) Markdown that reaches the reader raw: a table printed beside a chart in an html="true" block, as
    # core/dp, core/fsdp, core/tp and core/pp once did; bold and a heading printed there too.
    "snippet-markdown-table-beside-html": Fault(
        write={"snippets/table_and_chart.py": TABLE_AND_CHART},
        append={"docs/other.md": block("fault-table-html", '--8<-- "snippets/table_and_chart.py"', html="true")},
        says=("docs/other.md", "fault-table-html", "pipe-table row", "| n | time |"),
    ),
    "snippet-bold-and-heading-in-html": Fault(
        append={"docs/index.md": block("fault-bold", 'print("## Result\\n\\n**fits** on one GPU")', html="true")},
        says=("docs/index.md", "fault-bold", "## heading", "**bold**"),
    ),
    "notebook-prints-raw-table": Fault(
        write={"docs/notebook.ipynb": notebook(("markdown", "# Notebook\n"), ("code", "from IPython.display import HTML\nHTML('<p>| a | b |</p>')"))},
        says=("docs/notebook.ipynb", "pipe-table row"),
    ),
    # (e) a missing snippet path in --8<--.
    "missing-snippet-path": Fault(
        append={"docs/other.md": block("fault-missing", '--8<-- "snippets/no_such_snippet.py"')},
        says=("other.md", "snippets/no_such_snippet.py"),
    ),
}
CLEAN = ("clean-1", "clean-2")  # the positive control, built twice to check reproducibility


# ------------------------------------------------------------------------------------------ builds


@dataclass
class Build:
    root: Path
    returncode: int
    output: str  # stdout + stderr

    @property
    def site(self) -> Path:
        return self.root / "site"


def make_fixture_site(root: Path, fault: Fault | None = None) -> Path:
    """Copy the fixture site into ``root``, share the repo's hooks etc., apply ``fault``; return mkdocs.yml."""
    shutil.copytree(FIXTURE, root)
    for entry in REPO.iterdir():  # hooks/, overrides/, ...: whatever the real config points at
        if entry.name not in _NOT_SHARED and not (root / entry.name).exists():
            (root / entry.name).symlink_to(entry)
    # The real docs' non-page files (extra_css, images) so the inherited config finds them.
    shutil.copytree(REPO / "docs", root / "docs", ignore=shutil.ignore_patterns("*.md", "*.ipynb"), dirs_exist_ok=True)
    for rel, text in (fault.write if fault else {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    for rel, text in (fault.append if fault else {}).items():
        with open(root / rel, "a", encoding="utf-8") as fh:
            fh.write(text)
    config = root / "mkdocs.yml"
    nav = "".join(f"  - {page}\n" for page in NAV)
    config.write_text(f"INHERIT: {json.dumps(str(REPO / 'mkdocs.yml'))}\nnav:\n{nav}", encoding="utf-8")
    return config


def _build(root: Path, fault: Fault | None, mkdocs_build) -> Build:
    config = make_fixture_site(root, fault)
    result = mkdocs_build(config, root / "site", timeout=300)
    return Build(root, result.returncode, result.stdout + result.stderr)


@pytest.fixture(scope="module")
def fixture_builds(request, tmp_path_factory, mkdocs_build):
    """name -> Future[Build] for every fixture build the selected tests need, started together."""
    wanted = set()
    for item in request.session.items:
        if "fixture_builds" not in getattr(item, "fixturenames", ()):
            continue
        params = getattr(item, "callspec", None)
        params = params.params if params else {}
        wanted.update([params["fault"]] if "fault" in params else CLEAN)
    base = tmp_path_factory.mktemp("fixture-builds")
    pool = ThreadPoolExecutor(max_workers=max(2, min(4, os.cpu_count() or 2)))
    futures: dict[str, Future] = {}
    for name in [*CLEAN, *FAULTS]:  # clean builds first: the positive control fails fastest
        if name in wanted:
            futures[name] = pool.submit(_build, base / name, FAULTS.get(name), mkdocs_build)
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


def _tail(text: str, n: int = 6000) -> str:
    return text if len(text) <= n else "...\n" + text[-n:]


# ------------------------------------------------------------------------------------------ tests


def test_clean_fixture_builds(fixture_builds):
    build = fixture_builds[CLEAN[0]].result()
    assert build.returncode == 0, f"the unfaulted fixture site must build:\n{_tail(build.output)}"
    home = (build.site / "index.html").read_text(encoding="utf-8")
    assert "<td>0.273</td>" in home, "the fixture's snippet table is missing from the built page"
    assert 'href="#target-section"' in home, 'the anchor printed with idprefix="" must stay unprefixed'
    assert "<math" in home, "math was not rendered to MathML"
    assert "42" in (build.site / "notebook" / "index.html").read_text(encoding="utf-8"), "notebook cell output missing"
    assert not re.search(r"^WARNING\b", build.output, re.M), f"MkDocs warned:\n{_tail(build.output)}"


@pytest.mark.parametrize("fault", list(FAULTS))
def test_fault_fails_build(fixture_builds, fault):
    build = fixture_builds[fault].result()
    assert build.returncode != 0, f"{fault}: the strict build passed but should have failed:\n{_tail(build.output)}"
    missing = [s for s in FAULTS[fault].says if s not in build.output]
    assert not missing, f"{fault}: build failed but its output does not mention {missing}:\n{_tail(build.output)}"


# ------------------------------------------------------------------------------------------ reproducibility

_LASTMOD = re.compile(rb"<lastmod>[^<]*</lastmod>")


def _normalized(path: Path) -> bytes:
    """File bytes, except the sitemap's build dates (and gzip's timestamp) which legitimately change."""
    data = path.read_bytes()
    if path.name == "sitemap.xml.gz":
        data = gzip.decompress(data)
    if path.name in ("sitemap.xml", "sitemap.xml.gz"):
        data = _LASTMOD.sub(b"<lastmod/>", data)
    return data


def _first_difference(a: bytes, b: bytes, context: int = 80) -> str:
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    lo = max(0, i - context)
    while lo and (a[lo] & 0xC0) == 0x80:  # start on a whole UTF-8 character
        lo -= 1
    show = lambda data: data[lo : i + context].decode("utf-8", "replace")  # noqa: E731
    return f"at byte {i}:\n  first:  {show(a)!r}\n  second: {show(b)!r}"


def site_differences(first: Path, second: Path) -> list[str]:
    """Human-readable differences between two built sites (empty when they are identical)."""
    files = lambda root: {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}  # noqa: E731
    a, b = files(first), files(second)
    problems = [f"only in one build: {name}" for name in sorted(a ^ b)]
    for name in sorted(a & b):
        x, y = _normalized(first / name), _normalized(second / name)
        if x != y:
            problems.append(f"{name} differs {_first_difference(x, y)}")
    return problems


def test_fixture_builds_are_reproducible(fixture_builds):
    builds = [fixture_builds[name].result() for name in CLEAN]
    for build in builds:
        assert build.returncode == 0, _tail(build.output)
    problems = site_differences(builds[0].site, builds[1].site)
    assert not problems, "two clean builds of the fixture site differ:\n" + "\n".join(problems[:20])


def test_real_site_builds_are_reproducible(built_site, tmp_path, mkdocs_build):
    """Two builds of the real site, byte for byte (the sitemap's dates aside): the shared cold one (its blocks
    run in worker processes), and one with the serve cache on (``make serve``: no workers, each block run in the
    build process or read from the cache): where a block runs, or a cached copy, must give exactly what running
    it gives.

    Run it on a quiet tree: an edit saved between the two builds shows up as a difference.
    """
    second = tmp_path / "site"
    result = mkdocs_build(REPO / "mkdocs.yml", second, env={"PARALLELSEL_SNIPPET_CACHE": "1"})
    assert result.returncode == 0, _tail(result.stderr)
    problems = site_differences(built_site, second)
    assert not problems, "two builds of the real site differ:\n" + "\n".join(problems[:20])


def test_real_site_blocks_all_ran_in_worker_processes(built_site):
    """The cold build foresaw every block (its includes expanded as pymdownx.snippets expands them) and took
    each one's output from a worker: a block the hook did not foresee still renders, but runs again in the build
    process, which this catches before it makes the build slow."""
    log = (built_site.parent / "build.log").read_text(encoding="utf-8")
    found = re.search(r"exec blocks: (\d+) ran, (\d+) in worker processes", log)
    assert found, log[-3000:]
    ran, pooled = map(int, found.groups())
    assert ran > 150 and pooled == ran, found.group(0)


def test_real_site_has_no_unrendered_markdown_or_broken_link(built_site):
    """The post-build check on its own, over all of the real site (the build ran it as a hook too)."""
    result = subprocess.run([sys.executable, "-m", "hooks.sitecheck", str(built_site)], cwd=REPO, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


# ------------------------------------------------------------------------------------------ serve cache


def test_serve_cache_never_serves_a_stale_block(tmp_path, mkdocs_build):
    """Under ``make serve`` (PARALLELSEL_SNIPPET_CACHE=1) an edited snippet re-runs, an unchanged one is served
    from .cache/exec, and a failing block is never stored: it fails the build every time."""
    root = tmp_path / "site-src"
    config = make_fixture_site(root)
    env = {"PARALLELSEL_SNIPPET_CACHE": "1"}
    first = mkdocs_build(config, root / "site", env=env)
    assert first.returncode == 0, _tail(first.stdout + first.stderr)
    stored = sorted((root / ".cache" / "exec").glob("*.html"))
    assert stored, "the cache stored nothing"
    assert "<td>0.273</td>" in (root / "site" / "index.html").read_text(encoding="utf-8")

    ok = root / "snippets" / "ok.py"
    ok.write_text(ok.read_text(encoding="utf-8").replace("(8 + p - 1)", "(16 + p - 1)"), encoding="utf-8")
    second = mkdocs_build(config, root / "site", env=env)
    assert second.returncode == 0, _tail(second.stdout + second.stderr)
    home = (root / "site" / "index.html").read_text(encoding="utf-8")
    assert "<td>0.158</td>" in home and "<td>0.273</td>" not in home, "an edited snippet was served from the cache"
    assert len(list((root / ".cache" / "exec").glob("*.html"))) == len(stored) + 1, "only the edited block should have run"

    with open(root / "docs" / "other.md", "a", encoding="utf-8") as fh:
        fh.write(block("cache-raise", 'raise ValueError("cache-fault")'))
    for _ in range(2):
        failed = mkdocs_build(config, root / "site", env=env)
        assert failed.returncode != 0 and "cache-raise" in failed.stdout + failed.stderr, _tail(failed.stdout + failed.stderr)


def test_serve_cache_key_follows_the_library(tmp_path):
    """Any byte of any file under parallelsel/ is part of every block's key, so a library edit re-runs everything."""
    spec = importlib.util.spec_from_file_location("exec_blocks", REPO / "hooks" / "exec_blocks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    env_hash = module.env_hash
    lib = tmp_path / "render"
    lib.mkdir(parents=True)
    (lib / "tables.py").write_text("FMT = '{:.1f}'\n", encoding="utf-8")
    before = env_hash(tmp_path)
    assert env_hash(tmp_path) == before
    (lib / "tables.py").write_text("FMT = '{:.2f}'\n", encoding="utf-8")
    after = env_hash(tmp_path)
    assert after != before
    (lib / "__pycache__").mkdir()  # bytecode is not source: it must not re-run every block
    (lib / "__pycache__" / "tables.cpython-311.pyc").write_bytes(b"\0")
    assert env_hash(tmp_path) == after


def test_charts_inside_stay_out_of_the_search_index(built_site):
    """hooks/search_index.py: tick labels and SVG metadata are not search text; captions are, and pages keep their charts."""
    index = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))
    text = re.sub(r"[\s\u200b]+", "", " ".join(doc.get("text", "") for doc in index["docs"]))  # jieba splits words
    assert "image/svg+xml" not in text and "Matplotlib v" not in text, "a chart's inside reached the search index"
    page = (built_site / "core" / "pp" / "index.html").read_text(encoding="utf-8")
    caption = re.sub(r"\s+", "", re.search(r"<figcaption>(.*?)</figcaption>", page, re.S).group(1))
    assert caption[:20] in text, "a chart's caption is missing from the search index"
    assert "<svg" in page and "<text" in page, "the page itself lost its chart's text"


def test_sitecheck_runs_on_its_own_over_any_site(tmp_path):
    """`python -m hooks.sitecheck SITE` without MkDocs: what a snippet printed into a built page, found and named."""
    site = tmp_path / "site"
    (site / "other").mkdir(parents=True)
    (site / "other" / "index.html").write_text('<h2 id="there">t</h2>', encoding="utf-8")
    (site / "index.html").write_text(
        '<div class="ps-exec" data-block="printed"><p><a href="other/#there">ok</a> <a href="other/#nowhere">a</a>'
        ' <a href="gone/">b</a></p><p>| n | t |</p><pre>| in code | fine |</pre></div>',
        encoding="utf-8",
    )
    run = subprocess.run([sys.executable, "-m", "hooks.sitecheck", str(site)], cwd=REPO, capture_output=True, text=True, check=False)
    assert run.returncode == 1, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert any("broken anchor 'other/#nowhere'" in line for line in lines), lines
    assert any("broken link 'gone/'" in line for line in lines), lines
    assert any("pipe-table row" in line and "block 'printed'" in line for line in lines), lines
    assert len(lines) == 3, lines  # the good link and the table inside <pre> are not findings
    bad = subprocess.run([sys.executable, "-m", "hooks.sitecheck", str(tmp_path / "nothing")], cwd=REPO, capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr, bad.stderr


PAGE_BUDGET = 600 * 1024  # issue 33: no page's HTML and not the search index (fetched by every page) above 600 KiB


def test_no_page_and_not_the_search_index_exceeds_600_kib(built_site):
    """Inline Chrome traces (hooks/search_index.py), the notebook's inlined JupyterLab stylesheet (hooks/notebook.py)
    and code listings, tables and chart text in the search index (hooks/search_index.py) made them 0.8-1.3 MB."""
    pages = {p.relative_to(built_site).as_posix(): p.stat().st_size for p in built_site.rglob("*.html")}
    over = {p: n for p, n in pages.items() if n > PAGE_BUDGET}
    assert not over, over
    index = built_site / "search" / "search_index.json"
    assert index.stat().st_size <= PAGE_BUDGET, index.stat().st_size
    text = " ".join(doc.get("text", "") for doc in json.loads(index.read_text(encoding="utf-8"))["docs"])
    assert "<pre" not in text and "<table" not in text and "data:application/json" not in text
    assert not [p for p in built_site.rglob("*.html") if "data:application/json;base64" in p.read_text(encoding="utf-8")]


def test_search_index_keeps_each_api_objects_name_and_summary(built_site):
    """The API pages give the index each object's heading and first paragraph, not the whole docstring
    (hooks/search_index.py), so the reference does not push the index over its budget."""
    docs = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    api = {d["location"]: d for d in docs if d["location"].startswith("reference/api/")}
    entry = api["reference/api/#parallelsel.core.plan.stack_split"]
    assert "The per-rank layers" in entry["text"]                          # the summary
    assert "dynamic programme" not in entry["text"]                         # the rest of the docstring
    lesson = " ".join(d["text"] for d in docs if d["location"].startswith("core/pp/"))
    assert "partition_method" in lesson                                     # lesson pages keep their prose
