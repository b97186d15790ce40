"""``render.style.to_svg`` crops like ``savefig(bbox_inches="tight")`` while drawing the figure once."""

from __future__ import annotations

import ast
import io
import re
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from parallelsel import pipeline
from parallelsel.render import pipeline_charts
from parallelsel.render.style import RC, chart, to_svg

_ROOT = re.compile(r'<svg[^>]*width="([\d.]+)pt" height="([\d.]+)pt" viewBox="([-\d. ]+)"')


def _tight_reference(fig, salt: str) -> tuple[float, float]:
    buf = io.StringIO()
    with plt.rc_context({**RC, "svg.hashsalt": salt}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    w, h, _ = _ROOT.search(buf.getvalue()).groups()
    return float(w), float(h)


@pytest.mark.parametrize("legend_outside", [False, True])
def test_crop_matches_bbox_inches_tight(legend_outside):
    with chart(width=6.0, height=3.0) as (fig, ax):
        ax.plot([0, 1, 2], [0, 1, 4], label="一条线")
        ax.set_title("标题：中文与 English")
        ax.set_xlabel("横轴")
        if legend_outside:  # extends past the figure's right edge: the crop must grow to include it
            ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
        svg = to_svg(fig, salt="t")
        ref_w, ref_h = _tight_reference(fig, salt="t")
    w, h, view = _ROOT.search(svg).groups()
    x0, y0, vw, vh = (float(v) for v in view.split())
    assert (vw, vh) == (float(w), float(h))
    assert float(w) == pytest.approx(ref_w, abs=0.5)
    assert float(h) == pytest.approx(ref_h, abs=0.5)
    if legend_outside:
        assert x0 + vw > 6.0 * 72, "the legend outside the axes lies beyond the figure's right edge and must be kept"


def test_svg_is_byte_stable_and_inline():
    tl = pipeline.simulate(pipeline.schedule("1f1b", 4, 8))
    a = pipeline_charts.gantt(tl, salt="s")
    b = pipeline_charts.gantt(tl, salt="s")
    assert a == b
    assert a.startswith("<svg") and "<?xml" not in a and "<!DOCTYPE" not in a


def test_salt_is_required():
    with chart() as (fig, _ax), pytest.raises(ValueError, match="salt"):
        to_svg(fig, salt="")


# ------------------------------------------------------------------------------------- one palette
# Colours live in render/style.py (COLORS for named quantities, SERIES for the rest). Elsewhere under
# render/ a chart may use grey ink (#333333 ...) but no colour of its own and no second list of colours.

RENDER = Path(__file__).resolve().parent.parent / "parallelsel" / "render"
_HEX = re.compile(r"#[0-9A-Fa-f]{6}")
OWN_PALETTE_ALLOWED: set[str] = set()


def _hex(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(_HEX.fullmatch(node.value))


def palette_findings(name: str, source: str) -> list[str]:
    """Lists/tuples/sets/dicts holding two or more colour literals, and any other colour literal that is not grey."""
    found, listed = [], set()
    nodes = list(ast.walk(ast.parse(source)))
    for node in nodes:
        if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
            colours = [v for v in (node.values if isinstance(node, ast.Dict) else node.elts) if _hex(v)]
            if len(colours) >= 2:
                found.append((node.lineno, f"{name}:{node.lineno} a list of colours"))
                listed.update(map(id, colours))
    for node in nodes:
        if _hex(node) and id(node) not in listed and len({node.value[1:3], node.value[3:5], node.value[5:7]}) > 1:
            found.append((node.lineno, f"{name}:{node.lineno} colour {node.value}"))
    return [text for _, text in sorted(found)]


def test_palette_scan_sees_a_second_list_and_a_stray_colour():
    source = '_SERIES = ["#4C78A8", "#F58518"]\nINK = "#333333"\nax.plot(color="#9ECAE9")\n'
    assert palette_findings("x.py", source) == ["x.py:1 a list of colours", "x.py:3 colour #9ECAE9"]


def test_one_palette_under_render():
    found = [f for path in sorted(RENDER.glob("*.py")) if path.name not in {"style.py", *OWN_PALETTE_ALLOWED}
             for f in palette_findings(path.name, path.read_text(encoding="utf-8"))]
    assert not found, f"colours belong in render/style.py (COLORS, SERIES): {found}"
