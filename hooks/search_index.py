"""Keep the inside of inline SVG charts out of the search index.

Charts are inline SVG with their text kept as text, so every tick label and axis number would be
indexed as page text. Material's search skips any element carrying ``data-search-exclude`` (its
documented way to exclude a block), so each ``<svg>`` in a page's content gets that attribute. A
chart's caption (``<figcaption>``, outside the SVG) stays indexed: it says what the chart shows.
"""

from __future__ import annotations

import re

_SVG = re.compile(r"<svg\b(?![^>]*data-search-exclude)")


def on_page_content(html, page, **kwargs):
    return _SVG.sub("<svg data-search-exclude", html)
