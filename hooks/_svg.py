"""Inline SVG charts are most of the site's HTML; passes that only read text or links can skip their inside.

Shared by hooks/search_index.py (charts' tick labels are not search text) and hooks/linkcheck.py
(an SVG's thousands of shapes hold no links). Not a hook itself: mkdocs.yml does not list it.
"""

from __future__ import annotations

import re

_SVG = re.compile(r"(<svg\b[^>]*>)(.*?)</svg>", re.S)
_LINK = re.compile(r"<a\b[^>]*>")


def empty_svgs(html: str, *, keep_links: bool = False) -> str:
    """``html`` with the content of every ``<svg>`` element removed; its opening tag stays.

    With ``keep_links`` the ``<a ...>`` start tags inside an SVG stay, so their links can still be checked.

    >>> empty_svgs('<p>a</p><svg role="img"><text>0 10</text><a href="x.html"><path/></a></svg><figcaption>c</figcaption>')
    '<p>a</p><svg role="img"></svg><figcaption>c</figcaption>'
    >>> empty_svgs('<svg><g id="p1"/><a href="x.html"></a></svg>', keep_links=True)
    '<svg><a href="x.html"></svg>'
    """
    if keep_links:
        return _SVG.sub(lambda m: m.group(1) + "".join(_LINK.findall(m.group(2))) + "</svg>", html)
    return _SVG.sub(r"\1</svg>", html)
