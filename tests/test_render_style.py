"""``render.style.to_svg`` crops like ``savefig(bbox_inches="tight")`` while drawing the figure once."""

from __future__ import annotations

import io
import re

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
