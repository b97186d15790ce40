"""Keep the inside of inline SVG charts out of the search index.

Charts are inline SVG with their text kept as text, so Material's search would index every tick label
and axis number as page text, and walking every SVG element was a third of a warm build. MkDocs' public
event priorities put two handlers around Material's search (which reads ``page.content`` in
``on_page_context`` at the default priority 0): the first empties each ``<svg>`` of the page, the
second puts the page back before the theme renders it. A chart's caption (``<figcaption>``, outside the
SVG) stays indexed: it says what the chart shows.
"""

from __future__ import annotations

import re

from mkdocs.plugins import CombinedEvent, event_priority

_SVG = re.compile(r"(<svg\b[^>]*>).*?</svg>", re.S)
_full: dict[str, str] = {}  # page -> its content while search reads the emptied one


@event_priority(100)
def _empty_charts(context, page, **kwargs):
    if page.content and "<svg" in page.content:
        _full[page.file.src_uri] = page.content
        page.content = _SVG.sub(r"\1</svg>", page.content)
    return context


@event_priority(-100)
def _restore_charts(context, page, **kwargs):
    content = _full.pop(page.file.src_uri, None)
    if content is not None:
        page.content = content
    return context


on_page_context = CombinedEvent(_empty_charts, _restore_charts)
