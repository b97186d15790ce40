"""Shared test fixtures: how to run a MkDocs build, and one strict build of the real site.

* ``REPO``: the repository root.
* ``mkdocs_build`` (fixture returning a function) ``(config_file, site_dir, env=None)``: run ``mkdocs build --strict`` in a subprocess with the
  project's venv and return the ``CompletedProcess`` (``.returncode``, ``.stdout``, ``.stderr``);
  it never raises on a failed build, so fault-injection tests can inspect the failure.
* ``built_site`` (session fixture): the real site, built once per test session with
  ``mkdocs build --strict -d <tmp>/site``; returns that directory as a ``pathlib.Path``. A failed
  build errors every test that uses it, with MkDocs' output in the message. Its log is saved next to
  it (``site.parent / "build.log"``). Tests must treat the directory as read-only (it is shared by
  the whole session).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable  # the venv's python when run as `make test` / `.venv/bin/python -m pytest`
BUILD_TIMEOUT = 600  # seconds; the real site executes every snippet and the notebooks


def child_env() -> dict[str, str]:
    """Environment for a build or snippet subprocess: the installed (editable) package, no banner."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["NO_MKDOCS_2_WARNING"] = "1"
    return env


def run_mkdocs_build(
    config_file: Path, site_dir: Path, *, timeout: float = BUILD_TIMEOUT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """``mkdocs build --strict`` of ``config_file`` into ``site_dir`` (``env``: extra variables); returns the finished process."""
    return subprocess.run(
        [PYTHON, "-m", "mkdocs", "build", "--strict", "--config-file", str(config_file), "--site-dir", str(site_dir)],
        cwd=config_file.parent,
        env=child_env() | (env or {}),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def pytest_addoption(parser):
    parser.addoption(
        "--update-snapshots",
        action="store_true",
        help="rewrite tests/snapshots/ from the snippets' current output (what `make snapshots` runs); review the diff",
    )


@pytest.fixture(scope="session")
def mkdocs_build():
    """``run_mkdocs_build`` as a fixture, so test modules need not import conftest."""
    return run_mkdocs_build


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The real site, built once (strict) into a temporary directory; read-only for tests."""
    site = tmp_path_factory.mktemp("real-site") / "site"
    result = run_mkdocs_build(REPO / "mkdocs.yml", site)
    if result.returncode != 0:
        pytest.fail(f"strict build of the real site failed (exit {result.returncode}):\n{result.stderr[-8000:]}", pytrace=False)
    (site.parent / "build.log").write_text(result.stderr, encoding="utf-8")
    return site


# ---------------------------------------------------------------------------------------------------------------- browser
# One Playwright driver and one Chromium per session, shared by every browser test module (tests/test_browser.py,
# tests/test_fill_in.py): the sync API refuses a second driver while the first is running.


@pytest.fixture(scope="session")
def site(request) -> Path:
    """The built site: ``built_site`` (one strict build per session), or an existing build named by
    ``PARALLELSEL_SITE_DIR`` (to re-run only the browser tests quickly after ``mkdocs build -d DIR``)."""
    existing = os.environ.get("PARALLELSEL_SITE_DIR")
    if existing:
        return Path(existing)
    return request.getfixturevalue("built_site")


@pytest.fixture(scope="session")
def server(site):
    """The built site on a local static server (``browser_helpers.StaticServer``); ``.base_url`` ends with "/"."""
    from browser_helpers import StaticServer

    with StaticServer(site) as srv:
        yield srv


@pytest.fixture(scope="session")
def pw():
    from browser_helpers import CHROMIUM

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} not found: run scripts/setup.sh (installs Debian's chromium)", pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(pw):
    from browser_helpers import CHROMIUM, LAUNCH_ARGS

    b = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
    yield b
    b.close()
