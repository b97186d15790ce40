"""Helpers for the browser tests: a local static server for the built site and a network guard.

The browser is Debian's Chromium (``/usr/bin/chromium``, installed by ``scripts/setup.sh``), driven by Playwright
with an explicit executable path; Playwright's own browser download is never used.
"""

from __future__ import annotations

import functools
import gzip
import http.server
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
LOCAL_HOST = "127.0.0.1"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".json": "application/json",
        ".svg": "image/svg+xml",
        ".md": "text/markdown; charset=utf-8",
        ".ipynb": "application/x-ipynb+json",
        ".woff2": "font/woff2",
    }

    _COMPRESSIBLE = ("text/", "application/json", "application/javascript", "image/svg+xml", "application/x-ipynb+json")
    _gzip_cache: dict[tuple[str, float], bytes] = {}

    def log_message(self, format, *args):  # noqa: A002 - signature fixed by the base class
        pass

    def do_GET(self):  # noqa: N802 - name fixed by the base class
        """Like a typical static host (GitHub Pages, Netlify, nginx with gzip on): gzip text when the client accepts it."""
        path = self.translate_path(self.path)
        if os.path.isdir(path) and self.path.split("?")[0].endswith("/"):
            path = os.path.join(path, "index.html")
        ctype = self.guess_type(path)
        if (
            "gzip" not in self.headers.get("Accept-Encoding", "")
            or not os.path.isfile(path)
            or not ctype.startswith(self._COMPRESSIBLE)
        ):
            return super().do_GET()
        key = (path, os.path.getmtime(path))
        body = self._gzip_cache.get(key)
        if body is None:
            with open(path, "rb") as fh:
                body = self._gzip_cache[key] = gzip.compress(fh.read(), compresslevel=6, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Vary", "Accept-Encoding")
        self.end_headers()
        self.wfile.write(body)


class StaticServer:
    """``http.server`` serving ``root`` on 127.0.0.1 at an ephemeral port, in a daemon thread (a plain static host)."""

    def __init__(self, root: Path):
        handler = functools.partial(_QuietHandler, directory=str(root))
        self.httpd = http.server.ThreadingHTTPServer((LOCAL_HOST, 0), handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://{LOCAL_HOST}:{self.httpd.server_address[1]}/"
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="site-server", daemon=True)

    def __enter__(self) -> StaticServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)


def served_size(site: Path, base_url: str, url: str) -> tuple[int, int]:
    """(bytes on the wire, bytes decoded) for a URL of the local server: gzip size for text types, else file size."""
    rel = url[len(base_url) :].split("?")[0].split("#")[0] if url.startswith(base_url) else None
    if rel is None:
        return 0, 0
    f = site / rel
    if f.is_dir():
        f = f / "index.html"
    if not f.is_file():
        return 0, 0
    raw = f.read_bytes()
    ctype = _QuietHandler.guess_type(_QuietHandler, str(f))
    wire = len(gzip.compress(raw, compresslevel=6, mtime=0)) if ctype.startswith(_QuietHandler._COMPRESSIBLE) else len(raw)
    return wire, len(raw)


def site_pages(site: Path) -> list[str]:
    """URL paths (relative to the site root, ``""`` for the home page) of every ``index.html`` in the built site."""
    out = []
    for index in sorted(site.rglob("index.html")):
        rel = index.parent.relative_to(site).as_posix()
        out.append("" if rel == "." else rel + "/")
    return out


def is_local(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about"):
        return True
    return parts.hostname == LOCAL_HOST


@dataclass
class NetLog:
    """What one browser context did on the network and in the console."""

    blocked: list[str] = field(default_factory=list)  # requests that would have left 127.0.0.1 (aborted)
    failed: list[str] = field(default_factory=list)  # requests that failed or answered >= 400
    console_errors: list[str] = field(default_factory=list)
    requests: list = field(default_factory=list)  # playwright Request objects that finished

    def take(self) -> NetLog:
        """A copy of what was recorded so far; the log starts empty again (one log per page in a loop)."""
        copy = NetLog(list(self.blocked), list(self.failed), list(self.console_errors), list(self.requests))
        for part in (self.blocked, self.failed, self.console_errors, self.requests):
            part.clear()
        return copy

    def problems(self) -> list[str]:
        return (
            [f"left 127.0.0.1: {u}" for u in self.blocked]
            + [f"failed: {u}" for u in self.failed]
            + [f"console: {m}" for m in self.console_errors]
        )


def guard(context, log: NetLog | None = None) -> NetLog:
    """Abort and record every request not to 127.0.0.1; record failures and console errors of pages opened later."""
    log = log or NetLog()

    def route(r):
        if is_local(r.request.url):
            r.continue_()
        else:
            log.blocked.append(r.request.url)
            r.abort("blockedbyclient")

    context.route("**/*", route)

    def on_page(page):
        page.on("console", lambda m: m.type == "error" and log.console_errors.append(f"{m.text} @ {m.location.get('url', '')}"))
        page.on("pageerror", lambda e: log.console_errors.append(f"uncaught: {e}"))
        page.on(
            "requestfailed",
            # ERR_ABORTED: cancelled by the next navigation (our own blocks are recorded in ``blocked``); a missing file
            # shows up as an HTTP status >= 400 below.
            lambda r: is_local(r.url) and r.failure != "net::ERR_ABORTED" and log.failed.append(f"{r.url} ({r.failure})"),
        )
        page.on("requestfinished", lambda r: log.requests.append(r))
        page.on("response", lambda resp: resp.status >= 400 and log.failed.append(f"{resp.url} (HTTP {resp.status})"))

    for page in context.pages:  # pages opened before the guard (e.g. a persistent context's first tab)
        on_page(page)
    context.on("page", on_page)
    return log
