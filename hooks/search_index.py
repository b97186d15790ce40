"""Keep the inside of inline SVG charts out of the search index.

Charts are inline SVG with text kept as text, so Material's search plugin indexed every tick label,
axis number and matplotlib's ``<metadata>`` ("image/svg+xml Matplotlib v3...") as page text: noise in
the results, a larger ``search_index.json``, and most of the indexing time (its HTML parser walks
every SVG element). Each chart's caption (``<figcaption>``, and the SVG's ``aria-label``) stays
indexed: it says what the chart shows.

The plugin's ``add_entry_from_context(page)`` is wrapped so that it reads the page's HTML with each
``<svg ...>...</svg>`` emptied; the page itself is unchanged.
"""

from __future__ import annotations

from _svg import empty_svgs  # hooks/_svg.py (MkDocs puts a hook's folder on sys.path while loading it)


def on_config(config, **kwargs):
    plugin = config.plugins.get("material/search") or config.plugins.get("search")
    index = getattr(plugin, "search_index", None)
    add = getattr(index, "add_entry_from_context", None)
    if add is None or getattr(add, "_ps_no_svg", False):
        return config

    def add_entry_from_context(page):
        content = page.content
        if content and "<svg" in content:
            page.content = empty_svgs(content)
            try:
                return add(page)
            finally:
                page.content = content
        return add(page)

    add_entry_from_context._ps_no_svg = True
    index.add_entry_from_context = add_entry_from_context
    return config
