"""Every snippet under ``snippets/`` runs on its own, is shown on some page, and prints what its snapshot says.

A snippet is a flat script that prints what its page shows (docs/reference/contributing.md). Here each one runs in a
fresh interpreter (the venv's python, cwd = repo root, no PYTHONPATH: the package is installed
editable), so a snippet cannot lean on state left by another block of its page. All of them are
started together on a small thread pool; each test then checks one result.
"""

from __future__ import annotations

import base64
import difflib
import functools
import hashlib
import html
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SNIPPETS = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "snippets").rglob("*.py") if "__pycache__" not in p.parts)
TIMEOUT = 300  # seconds per snippet

# `--8<-- "snippets/x.py"` (also 'x.py', and "x.py:section" / "x.py:1:9"), as pymdownx.snippets reads it.
_INCLUDE = re.compile(r"""^[ \t]*-{1,}8<-{1,}[ \t]+(["'])(?P<path>[^"'\n]+?)\1""", re.M)


def _run(rel: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, rel], cwd=REPO, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


@pytest.fixture(scope="module")
def snippet_runs():
    """rel path -> Future of its finished process, all started at once."""
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        yield {rel: pool.submit(_run, rel) for rel in SNIPPETS}


@functools.cache
def _includes() -> dict[str, list[str]]:
    """snippet path (as written) -> pages under docs/ that include it."""
    found: dict[str, list[str]] = {}
    for page in sorted((REPO / "docs").rglob("*.md")):
        for m in _INCLUDE.finditer(page.read_text(encoding="utf-8")):
            path = re.sub(r"(:-?\d*)+$|:[A-Za-z_][\w-]*$", "", m["path"].strip())  # drop :section / :lines
            found.setdefault(path, []).append(page.relative_to(REPO).as_posix())
    return found


def test_there_are_snippets():
    assert SNIPPETS, "no snippets/*.py found"


def test_every_snippet_is_included_by_a_page():
    orphans = [rel for rel in SNIPPETS if rel not in _includes()]
    assert orphans == [], "snippets no page under docs/ includes (`--8<-- \"<path>\"`): orphans"


def test_every_include_exists():
    missing = {path: pages for path, pages in _includes().items() if not (REPO / path).is_file()}
    assert not missing, f"pages include snippets that do not exist: {missing}"


def test_every_snippet_lives_under_its_page():
    """snippets/<page path>/<what it shows>.py: the directory is the path of a page (docs/<page path>.md) that shows it."""
    misplaced = {}
    for rel in SNIPPETS:
        folder = rel.removeprefix("snippets/").rsplit("/", 1)[0]
        pages = [p for p in _includes().get(rel, []) if p != "docs/reference/contributing.md"]  # contributing quotes examples
        if f"docs/{folder}.md" not in pages:
            misplaced[rel] = pages
    assert misplaced == {}, "move each to snippets/<page path>/ of a page that shows it"


def test_exercise_snippets_are_named_exercise():
    """One naming rule: a snippet carrying an exercise's givens section is exercise_<what it computes>.py."""
    misnamed = [rel for rel in SNIPPETS if "[start:givens]" in (REPO / rel).read_text(encoding="utf-8")
                and not Path(rel).name.startswith("exercise_")]
    assert misnamed == [], "these hold an exercise's givens: name them exercise_<what>.py"


def test_no_snippet_name_shadows_a_module():
    """Run as a script, a snippet's folder is first on sys.path: snippets/x/json.py would be `import json`."""
    shadowing = [rel for rel in SNIPPETS
                 if Path(rel).stem in sys.stdlib_module_names or Path(rel).stem in {"numpy", "matplotlib", "parallelsel"}]
    assert shadowing == [], "these shadow a module when run as a script: rename them"


_READS_TESTS = re.compile(r"""["'/]tests["'/]|\btests\.""")


def test_no_snippet_reads_tests():
    """Pages read the package, not the test tree (``make bench`` builds a copy without tests/): golden data a page
    shows is package data (parallelsel/course/data/)."""
    readers = [rel for rel in SNIPPETS if _READS_TESTS.search((REPO / rel).read_text(encoding="utf-8"))]
    assert readers == []


def test_the_tests_scan_sees_a_read_of_tests():
    assert _READS_TESTS.search('Path("tests") / "data"') and _READS_TESTS.search('open("tests/data/x.json")')
    assert not _READS_TESTS.search("# the contest's tests of speed")


# ------------------------------------------------------------------------------------------ snapshots
# What each snippet prints is what its page shows, so it is compared with tests/snapshots/<snippet>.txt:
# a change to any page's numbers, tables or chart labels shows up here as a diff. Charts are reduced to
# their text labels (the drawing itself is not text a reviewer can read). `make snapshots` rewrites them.

SNAPSHOTS = REPO / "tests" / "snapshots"
UPDATE = "make snapshots  (or: .venv/bin/python -m pytest tests/test_snippets.py -k snapshot --update-snapshots)"
_SVG = re.compile(r"<svg\b.*?</svg>", re.S)
_TEXT = re.compile(r"<text\b[^>]*>(.*?)</text>", re.S)


def _svg_labels(match: re.Match) -> str:
    labels = [" ".join(html.unescape(re.sub(r"<[^>]+>", "", t)).split()) for t in _TEXT.findall(match.group(0))]
    labels = [label for label in labels if label]
    name = re.search(r'aria-label="([^"]*)"', match.group(0)[:2000])
    name = f' "{html.unescape(name.group(1))}"' if name else ""
    return f"<svg{name}: {len(labels)} text labels>\n" + "".join(f"  | {label}\n" for label in labels) + "</svg>"


_DATA_URL = re.compile(r"data:([\w.+/-]+);base64,([A-Za-z0-9+/=]+)")


def _data_summary(match: re.Match) -> str:
    data = base64.b64decode(match.group(2))
    return f"data:{match.group(1)};base64,<{len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()[:16]}>"


def reduced(output: str) -> str:
    """A snippet's output as its snapshot stores it: every inline SVG replaced by the list of its text labels,
    every base64 ``data:`` URL (a file offered for download) by its size and hash."""
    text = _DATA_URL.sub(_data_summary, _SVG.sub(_svg_labels, output))
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def _snapshot(rel: str) -> Path:
    return SNAPSHOTS / (rel.removeprefix("snippets/").removesuffix(".py") + ".txt")


@pytest.mark.parametrize("rel", SNIPPETS)
def test_snapshot_of_snippet_output(snippet_runs, rel, request):
    """The snippet runs on its own, prints, and prints what its snapshot says."""
    result = snippet_runs[rel].result()
    assert result.returncode == 0, f"{rel} exited {result.returncode}:\n{result.stderr[-6000:]}"
    assert result.stdout.strip(), f"{rel} printed nothing (a snippet prints what its page shows)\n{result.stderr[-3000:]}"
    got, path = reduced(result.stdout), _snapshot(rel)
    if request.config.getoption("--update-snapshots"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(got, encoding="utf-8")
        return
    assert path.is_file(), f"{rel} has no snapshot {path.relative_to(REPO)}; create it with: {UPDATE}"
    want = path.read_text(encoding="utf-8")
    if got != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "snapshot", "now", n=2))
        pytest.fail(f"{rel} prints something else than {path.relative_to(REPO)} (what its page shows changed).\n"
                    f"If the change is intended, update the snapshots with: {UPDATE}\n{diff[:8000]}", pytrace=False)


def test_no_snapshot_without_its_snippet(request):
    orphans = sorted(p.relative_to(REPO).as_posix() for p in SNAPSHOTS.rglob("*.txt") if _snapshot_source(p) not in SNIPPETS)
    if request.config.getoption("--update-snapshots"):
        for orphan in orphans:
            (REPO / orphan).unlink()
        return
    assert not orphans, f"snapshots of snippets that no longer exist: {orphans}; remove them with: {UPDATE}"


def _snapshot_source(path: Path) -> str:
    return "snippets/" + path.relative_to(SNAPSHOTS).with_suffix(".py").as_posix()


def test_snapshot_reduction_keeps_labels_and_drops_drawing():
    out = 'a\n<figure><svg id="x1"><path d="M 0 0"/><text x="1">0.5 &amp; 1</text><g><text>P</text></g></svg></figure>  \n'
    assert reduced(out) == "a\n<figure><svg: 2 text labels>\n  | 0.5 & 1\n  | P\n</svg></figure>\n"
    link = '<a download="t.json" href="data:application/json;base64,eyJhIjoxfQ==">t</a>'
    assert reduced(link) == ('<a download="t.json" href="data:application/json;base64,<7 bytes, sha256 '
                             '015abd7f5cc57a2d>">t</a>\n')


# A library error (ParallelselError: "name=value: must ...") or a traceback on a Chinese page means a snippet let an
# English exception through instead of rendering the rule's Reason. Two pages quote error text on purpose: the CLI
# reference shows its English error lines under a note that says so, and the validation page sets torch's refusal
# messages beside the library's, verbatim, as the record of what each engine said.
_ENGLISH_ERROR = re.compile(r"\S=\S+: (?:must|needs|unknown)\b|can(?:not)? be launched|Traceback \(most recent call last\)")
_SHOWS_ENGLISH_ERRORS = {"snippets/reference/cli/terminal_errors.py", "snippets/validation/torch_agreement.py"}


def test_no_english_library_error_reaches_a_page():
    found = {}
    for rel in SNIPPETS:
        path = _snapshot(rel)
        if rel in _SHOWS_ENGLISH_ERRORS or not path.is_file():
            continue
        hits = [line for line in path.read_text(encoding="utf-8").splitlines() if _ENGLISH_ERROR.search(line)]
        if hits:
            found[rel] = hits[:3]
    assert not found, f"English library errors in what pages show (render the Reason instead): {found}"


def test_english_error_pattern_catches_a_library_error():
    assert _ENGLISH_ERROR.search("Llama-3 70B 固定 TP=16 被拒绝：`tp=16: must divide the 64 attention heads`")
    assert not _ENGLISH_ERROR.search("KV 头数 8 不能被 TP=16 整除")
    assert _ENGLISH_ERROR.search((SNAPSHOTS / "reference/cli/terminal_errors.txt").read_text(encoding="utf-8"))
