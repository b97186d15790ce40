"""Tidy notebook pages rendered by mkdocs-jupyter (nbconvert).

* nbconvert gives Chinese headings an empty id while the page's table of contents (and Material's
  skip link) point at MkDocs-style slugs: give each heading the id its TOC entry expects.
* nbconvert's template loads MathJax from an empty/CDN URL: drop it (the site renders math at
  build time and makes no third-party request).
"""

from __future__ import annotations

import re

_MATHJAX = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.S)
_HEADING = re.compile(r'<h([1-6]) id="([^"]*)">(.*?)<a class="anchor-link" href="#[^"]*">', re.S)


def _toc_ids(items) -> list[str]:
    out = []
    for item in items:
        out.append(item.id)
        out.extend(_toc_ids(item.children))
    return out


def on_page_content(html, page, **kwargs):
    if not page.file.src_uri.endswith(".ipynb"):
        return html
    html = _MATHJAX.sub("", html)
    ids = iter(_toc_ids(page.toc))

    def fix(m):
        new = next(ids, None) or m.group(2)
        return f'<h{m.group(1)} id="{new}">{m.group(3)}<a class="anchor-link" href="#{new}">'

    return _HEADING.sub(fix, html)
