"""The search index holds prose only, as UTF-8: handlers around Material's search (it reads ``page.content`` at
priority 0) empty each ``<svg>``, ``<pre>`` and ``<table>`` and put the page back before it is rendered (a chart's
caption stays indexed); after the build the index, written with every non-ASCII character escaped (six bytes),
is written again as UTF-8 (three): 1.30 MB became under 600 KiB, fetched by every page (issue 33)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mkdocs.plugins import CombinedEvent, event_priority

_HIDDEN = re.compile(r"(<(svg|pre|table)\b[^>]*>).*?</\2>", re.S)
_full: dict[str, str] = {}  # page -> its content while search reads the emptied one


@event_priority(100)
def _empty_charts(context, page, **kwargs):
    if page.content and any(tag in page.content for tag in ("<svg", "<pre", "<table")):
        _full[page.file.src_uri] = page.content
        page.content = _HIDDEN.sub(r"\1</\2>", page.content)
    return context


@event_priority(-100)
def _restore_charts(context, page, **kwargs):
    content = _full.pop(page.file.src_uri, None)
    if content is not None:
        page.content = content
    return context


on_page_context = CombinedEvent(_empty_charts, _restore_charts)


@event_priority(-100)  # after Material's search plugin has written the index
def on_post_build(config, **kwargs) -> None:
    index = Path(config.site_dir) / "search" / "search_index.json"
    if index.is_file():
        index.write_text(json.dumps(json.loads(index.read_bytes()), ensure_ascii=False, separators=(",", ":")), "utf-8")
