"""What a lesson page shows in its main flow, counted in the built HTML (plain stdlib, like hooks/sitecheck.py).

* ``exhibits(html)``: tables and charts (``figure.ps-chart``) inside the page's ``<article>`` and outside any fold
  (``<details>``: pymdownx.details' ``???`` blocks and ``render.tables.folded_html``).
* ``fine_figures(html)``: numbers with a unit printed with two or more decimals (``137.83 ms``), in the article's
  text outside ``<pre>``/``<code>`` (source listings), chart labels included: more precision than the model has.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

UNITS = r"(?:ms|µs|ns|s|min|h|天|days|GiB|MiB|KiB|TiB|GB|MB|TB|GB/s|TFLOP/s|PFLOP/s|%)"
FINE = re.compile(r"(?<![\w.])\d[\d,]*\.\d{2,}\s?" + UNITS + r"(?![A-Za-z/])")
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
         "path", "rect", "use", "circle", "line", "polyline", "polygon", "ellipse", "stop"}


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.exhibits: list[str] = []
        self.text: list[str] = []

    def _inside(self, tag: str) -> bool:
        return tag in self.stack

    def handle_starttag(self, tag, attrs):
        if tag in _VOID:
            return
        self.stack.append(tag)
        if not self._inside("article") or self._inside("details"):
            return
        classes = (dict(attrs).get("class") or "").split()
        if tag == "table" or (tag == "figure" and "ps-chart" in classes):
            self.exhibits.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag in _VOID or tag not in self.stack:
            return
        while self.stack and self.stack.pop() != tag:
            pass

    def handle_data(self, data):
        if self._inside("article") and not (self._inside("pre") or self._inside("code") or self._inside("script")):
            self.text.append(data)


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


def exhibits(html: str) -> list[str]:
    """Tag names (``table`` / ``figure``) of the tables and charts in the main flow (not folded)."""
    return _parse(html).exhibits


def fine_figures(html: str) -> list[str]:
    """Every number with a unit and two or more decimals in the article's text."""
    return FINE.findall(" ".join(_parse(html).text))
