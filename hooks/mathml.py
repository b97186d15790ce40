"""Render LaTeX math to MathML at build time (no script, no CDN request for the reader): pymdownx.arithmatex (generic
mode) wraps math as ``\\( ... \\)`` / ``\\[ ... \\]`` in ``.arithmatex`` elements; each becomes latex2mathml's MathML."""

from __future__ import annotations

import html
import re

from latex2mathml.converter import convert

_BLOCK = re.compile(r'<div class="arithmatex">\\\[(.*?)\\\]</div>', re.S)
_INLINE = re.compile(r'<span class="arithmatex">\\\((.*?)\\\)</span>', re.S)


def _mathml(latex: str, display: str) -> str:
    return convert(html.unescape(latex).strip(), display=display)


def on_page_content(html_text, page, **kwargs):
    html_text = _BLOCK.sub(lambda m: f'<div class="ps-math">{_mathml(m.group(1), "block")}</div>', html_text)
    return _INLINE.sub(lambda m: _mathml(m.group(1), "inline"), html_text)
