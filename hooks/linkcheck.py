"""Check every link and anchor in the built HTML, after the build.

MkDocs validates links written in Markdown, but not those printed by markdown-exec snippets or
inside notebook pages, and never anchors into a notebook page. This hook parses the built site
(stdlib ``html.parser``) and logs a warning, which ``strict: true`` turns into a failed build,
for every relative link whose file or ``#anchor`` does not exist and for every root-absolute link
(which would break when the site is served from a sub-path). External URLs are not fetched.
Inside inline SVG charts only ``<a>`` tags are read: a chart's internal ids are not link targets.
"""

from __future__ import annotations

import logging
import os
import posixpath
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit

from _svg import empty_svgs  # hooks/_svg.py (MkDocs puts a hook's folder on sys.path while loading it)

log = logging.getLogger("mkdocs.hooks.linkcheck")

_SKIP_SCHEMES = ("http", "https", "mailto", "tel", "javascript", "data", "ftp")


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[tuple[str, str]] = []  # (attribute, value)

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value is None:
                continue
            if name in ("id",) or (name == "name" and tag == "a"):
                self.ids.add(value)
            elif (name == "href" and tag in ("a", "link", "area")) or (name == "src" and tag in ("img", "script", "iframe", "source")):
                self.links.append((name, value))


def _parse(path: str) -> _Page:
    page = _Page()
    with open(path, encoding="utf-8", errors="replace") as fh:
        # A chart's shapes hold no links; skipping them halves the parse. Its <a> tags are still checked.
        page.feed(empty_svgs(fh.read(), keep_links=True))
    return page


def check_site(site_dir: str) -> list[str]:
    """Return one message per broken link or anchor in ``site_dir``."""
    pages: dict[str, _Page] = {}
    for root, _dirs, files in os.walk(site_dir):
        for name in files:
            if name.endswith(".html"):
                rel = os.path.relpath(os.path.join(root, name), site_dir).replace(os.sep, "/")
                pages[rel] = _parse(os.path.join(site_dir, rel))

    problems: list[str] = []
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
            full = os.path.join(site_dir, target)
            if parts.path and (parts.path.endswith("/") or os.path.isdir(full)):
                target = posixpath.join(target, "index.html") if target != "." else "index.html"
                full = os.path.join(site_dir, target)
            if not os.path.isfile(full):
                problems.append(f"{rel}: broken link {value!r} (no file {target})")
                continue
            frag = unquote(parts.fragment)
            if frag and target.endswith(".html"):
                ids = pages[target].ids if target in pages else _parse(full).ids
                if frag not in ids:
                    problems.append(f"{rel}: broken anchor {value!r} (no id {frag!r} in {target})")
    return problems


_sources: dict[str, str] = {}  # built page (site-relative) -> its source, to name it in messages


def on_files(files, config, **kwargs):
    _sources.clear()
    docs = os.path.relpath(config["docs_dir"], os.path.dirname(config["config_file_path"])).replace(os.sep, "/")
    _sources.update({f.dest_uri: f"{docs}/{f.src_uri}" for f in files.documentation_pages()})
    return files


def on_post_build(config, **kwargs):
    for message in check_site(config["site_dir"]):
        page = _sources.get(message.split(":", 1)[0])
        log.warning(f"[page {page}] {message}" if page else message)
