"""One shared matplotlib style for every chart on the site.

Charts are SVG with text kept as text (``svg.fonttype: none``) so they are small and searchable,
with a CJK-capable font first in the fallback list so Chinese titles render without tofu, and
byte-stable: a fixed hash salt per figure and no date metadata (two builds of the site are compared byte for byte in tests/test_build_checks.py).
"""

from __future__ import annotations

import io
import re
from contextlib import contextmanager
from typing import Iterator

import matplotlib

matplotlib.use("Agg")  # build machines have no display
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.layout_engine import PlaceHolderLayoutEngine  # noqa: E402

# Noto Sans CJK comes from Debian's fonts-noto-cjk; the rest are fallbacks so Latin text still renders.
FONT_FAMILY = ["Noto Sans CJK SC", "Noto Sans CJK JP", "Source Han Sans SC", "WenQuanYi Zen Hei", "DejaVu Sans"]

# Colours shared by all charts, so F/B/W or compute/comm/wait mean the same thing everywhere.
COLORS = {
    "F": "#4C78A8",
    "B": "#F58518",
    "W": "#54A24B",
    "I": "#F2CF5B",
    "compute": "#4C78A8",
    "comm": "#F58518",
    "bubble": "#BAB0AC",
    "wait": "#E45756",
    "params": "#4C78A8",
    "grads": "#F58518",
    "optimizer": "#54A24B",
    "activations": "#B279A2",
    "other": "#9D755D",
    "embeddings": "#72B7B2",
    "recompute": "#9ECAE9",
    "overlapped": "#CDBBE0",
    "bound": "#8A4B08",  # text marking a region where a limit binds (e.g. communication-bound)
    "cp_group": "#1B6F6A",  # placement diagram: rank 0's context-parallel group
    "pp_group": "#6A3D9A",  # placement diagram: rank 0's pipeline group
    # the selection matrix's verdicts (decision-flow chart, render/decision_flow.py)
    "infeasible": "#E45756",
    "not_preferred": "#F58518",
    "need_info": "#4C78A8",
    "feasible": "#54A24B",
}

# Line/bar series in order, for charts whose series are not one of the named quantities above: the one
# palette (tests/test_render_style.py fails on a second list of colours under render/).
SERIES = ("#4C78A8", "#F58518", "#E45756", "#54A24B", "#B279A2", "#72B7B2", "#9D755D", "#EECA3B")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")

RC = {
    "font.family": "sans-serif",
    "font.sans-serif": FONT_FAMILY,
    "axes.unicode_minus": False,  # CJK fonts lack U+2212 in some builds
    "svg.fonttype": "none",
    "figure.dpi": 100,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "font.size": 10,
    # No chart has x ticks or labels on top, so a title sits at y = 1 either way; a fixed 1.0 spares matplotlib
    # its automatic title placement, which measures every tick label of the axes on each draw.
    "axes.titley": 1.0,
}


@contextmanager
def chart(width: float = 7.0, height: float = 3.6, nrows: int = 1, ncols: int = 1, **kw) -> Iterator[tuple]:
    """Yield ``(fig, axes)`` under the shared style; the figure is closed afterwards."""
    with plt.rc_context(RC):
        fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), **kw)
        try:
            yield fig, axes
        finally:
            plt.close(fig)


_ROOT_SIZE = re.compile(r'width="[^"]*" height="[^"]*" viewBox="[^"]*"')
_PT = 72.0  # matplotlib's SVG backend draws at 72 user units (points) per inch


def to_svg(fig, salt: str) -> str:
    """Serialise ``fig`` to an inline SVG string that is identical across builds.

    ``salt`` must be unique per figure on a page: matplotlib derives element ids from it, and two
    inline SVGs with the same ids on one page would clash.

    The result is cropped like ``savefig(bbox_inches="tight")`` (same box, same 0.1 in pad), but
    without its cost: ``bbox_inches="tight"`` lays out and draws the whole figure twice, once only
    to measure it. Here the figure is drawn once, its tight box is measured at the end of that draw
    with the same renderer (so every text's size is already known), and the crop is written as the
    SVG's ``viewBox``.
    """
    if not salt:
        raise ValueError(f"salt={salt!r}: must be a non-empty string unique to this figure")
    if isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine):
        # Left behind by fig.tight_layout(); it does nothing, but savefig draws twice for any engine.
        fig.set_layout_engine(None)
    buf = io.StringIO()
    boxes: list = []
    pad = plt.rcParams["savefig.pad_inches"]
    cid = fig.canvas.mpl_connect("draw_event", lambda event: boxes.append(fig.get_tightbbox(event.renderer).padded(pad)))
    try:
        with plt.rc_context({**RC, "svg.hashsalt": salt}):
            fig.savefig(buf, format="svg", metadata={"Date": None})
    finally:
        fig.canvas.mpl_disconnect(cid)
    text = buf.getvalue()
    # Drop the XML prolog and DOCTYPE so the SVG can be inlined into HTML.
    text = text[text.find("<svg") :]
    box = boxes[-1]  # inches, origin at the bottom left; SVG's y axis points down
    height = fig.get_size_inches()[1]
    x, y, w, h = (round(v * _PT, 3) for v in (box.x0, height - box.y1, box.width, box.height))
    text = _ROOT_SIZE.sub(f'width="{w:g}pt" height="{h:g}pt" viewBox="{x:g} {y:g} {w:g} {h:g}"', text, count=1)
    return compact_svg(text)


_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)
_PATH_D = re.compile(r' d="([^"]*)"')
_TOKEN = re.compile(r"[A-Za-z]|-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?")
_GROUP = re.compile(r'(<g id="[^"]*")>\n((?:<path [^>]*/>\n)+)</g>')
_SHARED = re.compile(r' (clip-path="[^"]*") (style="[^"]*")/>')
PATH_DECIMALS = 2
"""Decimals kept in path coordinates: matplotlib writes six, in points; a hundredth of a point is far below a pixel."""


def _num(v: float) -> str:
    t = f"{v:.{PATH_DECIMALS}f}".rstrip("0").rstrip(".")
    return "0" if t in ("-0", "") else t


def _path(d: str) -> str:
    """One path's data, shorter and drawing the same: coordinates to :data:`PATH_DECIMALS` decimals, and in a path of
    straight lines (matplotlib's bars and grid lines), a line that keeps x or y as ``V`` or ``H``."""
    tokens = _TOKEN.findall(d)
    plain = " ".join(t if t.isalpha() else _num(float(t)) for t in tokens)
    # Only "M x y", "L x y" and "z" in turn are shortened further; anything else is kept as it is, rounded.
    i = 0
    while i < len(tokens):
        step = 1 if tokens[i] == "z" else 3 if tokens[i] in ("M", "L") else 0
        if not step or (step == 3 and (i + 2 >= len(tokens) or tokens[i + 1].isalpha() or tokens[i + 2].isalpha())):
            return plain
        i += step
    out, i, x, y = [], 0, None, None
    while i < len(tokens):
        t = tokens[i]
        if t == "z":
            out.append("z")
            i += 1
            continue
        nx, ny = _num(float(tokens[i + 1])), _num(float(tokens[i + 2]))
        if t == "L" and nx == x:
            out.append(f"V{ny}")
        elif t == "L" and ny == y:
            out.append(f"H{nx}")
        else:
            out.append(f"{t}{nx} {ny}")
        x, y, i = nx, ny, i + 3
    return "".join(out)


def _hoist(m: re.Match) -> str:
    """A group of paths that share their clip and style: both said once, on the group (SVG inherits them). Not done
    when the style sets what the SVG's own ``*`` rule sets (stroke-linejoin / -linecap): the rule would win there."""
    paths = m.group(2).splitlines()
    shared = {_SHARED.search(p).groups() if _SHARED.search(p) else None for p in paths}
    if len(shared) != 1 or None in shared:
        return m.group(0)
    clip, style = shared.pop()
    if "stroke-line" in style:
        return m.group(0)
    body = "".join(p.replace(f" {clip} {style}/>", "/>") + "\n" for p in paths)
    return f"{m.group(1)} {clip} {style}>\n{body}</g>"


def compact_svg(svg: str) -> str:
    """Matplotlib's SVG with the same drawing in fewer bytes: no metadata block, no indentation, path data rounded and
    shortened (:func:`_path`), a clip and style shared by every path of a group written once on the group, the
    labels' one font list written once on the root. Pipeline
    charts with a thousand bars were 250 KB each and pushed pages past the site's 600 KiB budget (issue 33). Text
    elements are untouched (their content and positions are what the snapshot tests and readers see)."""
    svg = _METADATA.sub("", svg)
    svg = re.sub(r"\n[ \t]+", "\n", svg)
    svg = _PATH_D.sub(lambda m: f' d="{_path(m.group(1))}"', svg)
    svg = _GROUP.sub(_hoist, svg)
    # Every label names the same font list (RC's font.family): said once on the root, which the labels inherit.
    fonts = set(_FONT.findall(svg))
    if len(fonts) == 1:
        svg = _FONT_DECL.sub("", svg).replace(' style=""', "")
        svg = svg.replace("<svg ", f'<svg font-family="{fonts.pop()}" ', 1)
    return svg


_FONT = re.compile(r"font-family: ([^;\"]*)")
_FONT_DECL = re.compile(r"font-family: [^;\"]*; |; font-family: [^;\"]*(?=\")|font-family: [^;\"]*(?=\")")


PHONE_LABEL_PX = 8.5
"""Smallest chart text, in CSS pixels, a narrow screen may shrink a chart's labels to (8 px plus rounding margin)."""

_VIEWBOX_WIDTH = re.compile(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) [\d.]+"')
_FONT_SIZE = re.compile(r"font-size: ?([\d.]+)px")


def narrow_min_width(svg: str) -> float | None:
    """The narrowest a chart may be drawn (CSS px) so that its smallest label stays :data:`PHONE_LABEL_PX` tall:
    matplotlib writes sizes in viewBox units (points), so the chart's width in px is viewBox width x label px / font.
    None when the SVG names no font size. docs/assets/extra.css applies it on narrow screens only (the chart then
    scrolls inside its own box instead of shrinking its text)."""
    box, sizes = _VIEWBOX_WIDTH.search(svg), [float(f) for f in _FONT_SIZE.findall(svg)]
    if not box or not sizes:
        return None
    return float(box.group(1)) * PHONE_LABEL_PX / min(sizes)


def figure_html(svg: str, caption: str) -> str:
    """Wrap an inline SVG in a captioned figure; the caption doubles as the accessible name. The SVG carries the
    width below which narrow screens scroll it rather than shrink it (:func:`narrow_min_width`, as ``--ps-min-w``)."""
    if not caption:
        raise ValueError("caption='': every chart needs a caption (it is its alt text)")
    least = narrow_min_width(svg)
    style = f' style="--ps-min-w: {least:.0f}px"' if least else ""
    svg = svg.replace("<svg ", f'<svg role="img" aria-label="{_escape(caption)}"{style} ', 1)
    return f'<figure class="ps-chart">\n{svg}\n<figcaption>{_escape(caption)}</figcaption>\n</figure>\n'


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
