"""Tidy notebook pages rendered by mkdocs-jupyter (nbconvert): give each heading the MkDocs-style id its TOC entry
expects (nbconvert leaves Chinese headings' ids empty); drop nbconvert's MathJax (math is rendered at build time, no
third-party request); move each large inlined ``<style>`` (JupyterLab's 570 KiB) to a content-hashed file under
``assets/notebook/`` so pages stay under 600 KiB of HTML (issue 33).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

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


_STYLE = re.compile(r'<style type="text/css">\n?(.*?)</style>', re.S)
STYLE_INLINE_MAX = 16 * 1024  # characters: a larger inline stylesheet goes to its own file


def on_post_page(output, page, config):
    if not page.file.src_uri.endswith(".ipynb"):
        return output
    folder, page_dir = Path(config.site_dir) / "assets" / "notebook", (Path(config.site_dir) / page.file.dest_uri).parent

    def to_file(m):
        css = m.group(1)
        if len(css) <= STYLE_INLINE_MAX:
            return m.group(0)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{hashlib.sha256(css.encode()).hexdigest()[:16]}.css"
        path.write_text(css, encoding="utf-8")
        return f'<link rel="stylesheet" href="{Path(os.path.relpath(path, page_dir)).as_posix()}">'

    return _STYLE.sub(to_file, output)
