"""Keep the search index to prose: no chart insides, code listings or table dumps, and written compactly.

Charts are inline SVG with their text kept as text, so Material's search would index every tick label
and axis number as page text, and walking every SVG element was a third of a warm build. Code listings
(``<pre>``: a snippet's source tab, a printed CLI run) and tables (every cell of a printed result) made up
more than a third of the index's text and nobody searches for a number in them; the page's prose says
what each shows. MkDocs' public event priorities put two handlers around Material's search (which reads
``page.content`` in ``on_page_context`` at the default priority 0): the first empties each ``<svg>``,
``<pre>`` and ``<table>`` of the page, the second puts the page back before the theme renders it. A
chart's caption (``<figcaption>``, outside the SVG) stays indexed: it says what the chart shows.

Material writes the index with every non-ASCII character escaped (``\\u4e2d``: six bytes for each
Chinese character and for each word break its tokenizer inserts); after the build the same JSON is
written again as UTF-8 (three bytes), which every page fetches: issue 33 measured 1.30 MB, the target
is 600 KiB (``make bench`` reports it).
"""

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
        data = json.loads(index.read_text(encoding="utf-8"))
        index.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
