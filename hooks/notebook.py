"""Tidy notebook pages rendered by mkdocs-jupyter (nbconvert): give each heading the MkDocs-style id its TOC entry
expects (nbconvert leaves Chinese headings' ids empty); drop nbconvert's MathJax (math is rendered at build time);
move each large inlined ``<style>`` (JupyterLab's 570 KiB) to a content-hashed file under ``assets/notebook/``."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

_MATHJAX = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.S)
_HEADING = re.compile(r'<h([1-6]) id="([^"]*)">(.*?)<a class="anchor-link" href="#[^"]*">', re.S)
_BIG_STYLE = re.compile(r'<style type="text/css">\n?((?:(?!</style>).){16384,})</style>', re.S)


def _toc_ids(items) -> list[str]:  # the TOC's ids in document order
    return [i for item in items for i in (item.id, *_toc_ids(item.children))]


def on_page_content(html, page, **kwargs):
    if not page.file.src_uri.endswith(".ipynb"):
        return html
    html = _MATHJAX.sub("", html)
    ids = iter(_toc_ids(page.toc))

    def fix(m):
        new = next(ids, None) or m.group(2)
        return f'<h{m.group(1)} id="{new}">{m.group(3)}<a class="anchor-link" href="#{new}">'

    return _HEADING.sub(fix, html)


def on_post_page(output, page, config):
    if not page.file.src_uri.endswith(".ipynb"):
        return output
    folder = Path(config.site_dir) / "assets" / "notebook"
    def to_file(m):  # named by its content: two builds write the same file
        folder.mkdir(parents=True, exist_ok=True)
        (folder / (name := hashlib.sha256(m.group(1).encode()).hexdigest()[:16] + ".css")).write_text(m.group(1), "utf-8")
        return f'<link rel="stylesheet" href="{"../" * page.url.count("/")}assets/notebook/{name}">'
    return _BIG_STYLE.sub(to_file, output)
