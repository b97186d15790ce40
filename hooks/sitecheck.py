"""Checks of a built site that hold whatever built it: ``python -m hooks.sitecheck site/``.

* Links: every relative ``href``/``src`` reaches a file and every ``#anchor`` an id in it (root-absolute links break
  under a sub-path); this covers what MkDocs does not: links printed by snippets, inside the notebook, into it.
  External URLs are not fetched.
* Unrendered Markdown: prose (outside ``<pre>``, ``<code>``, charts, scripts) that still reads as Markdown source
  (a pipe-table row, ``**bold**``, a ``## heading``, a fence marker), usually a snippet printing Markdown in an
  ``html="true"`` block; the message names the block (hooks/exec_blocks.py marks each with ``data-block``).

Plain Python (stdlib only). As a MkDocs hook it logs each problem as a warning after the build, prefixed with the
page's source file, which ``strict: true`` turns into a failed build.
"""

from __future__ import annotations

import hashlib
import logging
import os
import posixpath
import re
import sys
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit

_SKIP_SCHEMES = ("http", "https", "mailto", "tel", "javascript", "data", "ftp")
_RAW = {"pre", "code", "script", "style", "svg", "math", "textarea", "kbd", "samp"}  # their text is not prose
_HIDDEN_CLASSES = {"clipboard-copy-txt"}  # mkdocs-jupyter's hidden copy of each cell's source, for its copy button
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
_MARKDOWN = (
    ("a pipe-table row", re.compile(r"^\s*\|.*\|\s*$", re.M)),
    ("**bold** markers", re.compile(r"\*\*[^*\s][^*]*\*\*")),
    ("a ## heading", re.compile(r"^\s*#{1,6} \S", re.M)),
    ("a code fence marker", re.compile(r"^\s*(```|~~~)", re.M)),
)


class _Page(HTMLParser):
    """One built page: its ids, its links, and its prose text with the snippet block it sits in."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[tuple[str, str]] = []  # (attribute, value)
        self.text: list[tuple[str, str]] = []  # (block id or "", text)
        self._stack: list[tuple[str, str]] = []  # (tag, block id) of open elements
        self._raw = 0

    def handle_starttag(self, tag, attrs):
        block = self._stack[-1][1] if self._stack else ""
        for name, value in attrs:
            if value is None:
                continue
            if name == "id" or (name == "name" and tag == "a"):
                self.ids.add(value)
            elif (name == "href" and tag in ("a", "link", "area")) or (name == "src" and tag in ("img", "script", "iframe", "source")):
                self.links.append((name, value))
            elif name == "data-block":
                block = value
        if tag not in _VOID:
            hidden = any(n == "class" and v and _HIDDEN_CLASSES.intersection(v.split()) for n, v in attrs)
            self._stack.append((tag if not hidden else "\0" + tag, block))
            self._raw += tag in _RAW or hidden

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag in _VOID or not any(t.lstrip("\0") == tag for t, _ in self._stack):
            return
        while self._stack:
            open_tag, _ = self._stack.pop()
            self._raw -= open_tag in _RAW or open_tag.startswith("\0")
            if open_tag.lstrip("\0") == tag:
                break

    def handle_data(self, data):
        if not self._raw and data.strip():
            self.text.append((self._stack[-1][1] if self._stack else "", data))


_SVG = re.compile(r"(<svg\b[^>]*>)(.*?)</svg>", re.S)
_LINK = re.compile(r"<a\b[^>]*>")


_parsed: dict[bytes, _Page] = {}  # sha256 of a page's bytes -> its parse, so `make serve` re-parses only pages that changed
_used: set[bytes] = set()


def parse(path: str) -> _Page:
    with open(path, "rb") as fh:
        data = fh.read()
    key = hashlib.sha256(data).digest()
    if key not in _parsed:
        page = _Page()
        # A chart's thousands of shapes hold no prose and no links but its <a> tags: parsing only those halves the time.
        text = data.decode("utf-8", errors="replace")
        page.feed(_SVG.sub(lambda m: m.group(1) + "".join(_LINK.findall(m.group(2))) + "</svg>", text))
        page.close()
        _parsed[key] = page
    _used.add(key)
    return _parsed[key]


def _pages(site_dir: str) -> dict[str, _Page]:
    out = {}
    for root, _dirs, files in os.walk(site_dir):
        for name in files:
            if name.endswith(".html"):
                rel = os.path.relpath(os.path.join(root, name), site_dir).replace(os.sep, "/")
                out[rel] = parse(os.path.join(site_dir, rel))
    return out


def link_problems(site_dir: str, pages: dict[str, _Page]) -> list[str]:
    problems = []
    for rel, page in sorted(pages.items()):
        if rel == "404.html":  # served at any depth by hosts; Material makes its links root-relative on purpose
            continue
        base = posixpath.dirname(rel)
        for attr, value in page.links:
            parts = urlsplit(value)
            if parts.scheme in _SKIP_SCHEMES or value.startswith("//"):
                continue
            if parts.scheme:
                problems.append(f"{rel}: unsupported link scheme in {attr}={value!r}")
                continue
            if parts.path.startswith("/"):
                problems.append(f"{rel}: root-absolute link {value!r} breaks when the site is served from a sub-path")
                continue
            target = posixpath.normpath(posixpath.join(base, unquote(parts.path))) if parts.path else rel
            if target.startswith(".."):
                problems.append(f"{rel}: link {value!r} points outside the site")
                continue
            if parts.path and (parts.path.endswith("/") or os.path.isdir(os.path.join(site_dir, target))):
                target = posixpath.join(target, "index.html") if target != "." else "index.html"
            if not os.path.isfile(os.path.join(site_dir, target)):
                problems.append(f"{rel}: broken link {value!r} (no file {target})")
                continue
            frag = unquote(parts.fragment)
            if frag and target.endswith(".html"):
                ids = pages[target].ids if target in pages else parse(os.path.join(site_dir, target)).ids
                if frag not in ids:
                    problems.append(f"{rel}: broken anchor {value!r} (no id {frag!r} in {target})")
    return problems


def markdown_problems(pages: dict[str, _Page]) -> list[str]:
    problems = []
    for rel, page in sorted(pages.items()):
        for block, text in page.text:
            for what, pattern in _MARKDOWN:
                found = pattern.search(text)
                if found:
                    where = f"in block '{block}'" if block else "in the page's text"
                    line = text[found.start() : found.start() + 60].strip().splitlines()[0]
                    problems.append(f"{rel}: unrendered Markdown ({what}) {where}: {line!r}")
    return problems


def check_site(site_dir: str) -> list[str]:
    """One message per broken link or anchor, and per piece of unrendered Markdown, in the built ``site_dir``."""
    pages = _pages(site_dir)
    for key in set(_parsed) - _used:
        del _parsed[key]  # forget pages no longer in the site
    _used.clear()
    return link_problems(site_dir, pages) + markdown_problems(pages)


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not os.path.isfile(os.path.join(argv[0], "index.html")):
        print(f"usage: python -m hooks.sitecheck SITE_DIR (a built site with an index.html); got {argv!r}", file=sys.stderr)
        return 2
    problems = check_site(argv[0])
    for message in problems:
        print(message)
    print(f"sitecheck: {len(problems)} problem(s) in {argv[0]}", file=sys.stderr)
    return 1 if problems else 0


# ---- MkDocs hook: the same check after `mkdocs build` / `mkdocs serve`, naming each page's source file.

_sources: dict[str, str] = {}


def on_files(files, config, **kwargs):
    docs = os.path.relpath(config["docs_dir"], os.path.dirname(config["config_file_path"])).replace(os.sep, "/")
    _sources.clear()
    _sources.update({f.dest_uri: f"{docs}/{f.src_uri}" for f in files.documentation_pages()})
    return files


def on_post_build(config, **kwargs):
    log = logging.getLogger("mkdocs.hooks.sitecheck")
    for message in check_site(config["site_dir"]):
        page = _sources.get(message.split(":", 1)[0])
        log.warning(f"[page {page}] {message}" if page else message)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
