"""The pipeline pages offer each Gantt chart's timeline as a Chrome-trace file, inside the built page.

Read from the real site (the session's strict build, or PARALLELSEL_SITE_DIR: see conftest.site): every pipeline Gantt chart (a chart whose rows are
pipeline ranks) on the bubble, PP, misconceptions and exercises pages is followed by ``<a download="*.json" href="traces/*.json">``
links to files next to the page (hooks/trace_files.py; inline data: URLs made the pages over 1 MB); each file is Trace Event Format JSON with one track per rank, and each track lists the passes of the
schedule the library builds for the trace's own settings (the orders tests/test_pipeline_torch.py checks
against PyTorch), in time order.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from parallelsel import pipeline as pl

PAGES = ["mechanics/bubble/index.html", "core/pp/index.html", "misconceptions/index.html", "exercises/index.html"]
_ROW = re.compile(r"^(段|卡) 0")  # the top row's label of a pipeline Gantt chart (render.pipeline_charts.rank_label)


class _Charts(HTMLParser):
    """The page's charts and trace links, in document order: ("chart", is_gantt) and ("trace", name, href)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.items: list[tuple] = []
        self._in_chart = self._in_text = False
        self._gantt = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "figure" and "ps-chart" in (a.get("class") or "").split():
            self._in_chart, self._gantt = True, False
        elif tag == "text" and self._in_chart:
            self._in_text = True
        elif tag == "a" and (a.get("download") or "").endswith(".json"):
            self.items.append(("trace", a["download"], a["href"]))

    def handle_endtag(self, tag):
        if tag == "figure" and self._in_chart:
            self.items.append(("chart", self._gantt))
            self._in_chart = False
        elif tag == "text":
            self._in_text = False

    def handle_data(self, data):
        if self._in_text and _ROW.match(data.strip()):
            self._gantt = True


def _items(site, page):
    parser = _Charts()
    parser.feed((site / page).read_text(encoding="utf-8"))
    return parser.items


@pytest.mark.parametrize("page", PAGES)
def test_every_pipeline_gantt_chart_links_its_trace(site, page):
    items = _items(site, page)
    gantt = [i for i, item in enumerate(items) if item[0] == "chart" and item[1]]
    assert gantt, f"{page}: no pipeline Gantt chart found"
    for i in gantt:
        after = items[i + 1] if i + 1 < len(items) else None
        assert after is not None and after[0] == "trace", f"{page}: Gantt chart #{gantt.index(i) + 1} has no trace link after it"
    names = [item[1] for item in items if item[0] == "trace"]
    assert len(names) == len(set(names)) and all(n.endswith(".json") for n in names), names


@pytest.mark.parametrize("page", PAGES)
def test_trace_links_decode_to_one_track_per_rank(site, page):
    traces = [item for item in _items(site, page) if item[0] == "trace"]
    assert traces
    for _, name, href in traces:
        assert href == f"traces/{name}", (name, href)  # a file beside the page, not a data: URL inside it
        doc = json.loads((site / page).parent.joinpath(href).read_text(encoding="utf-8"))
        info, events = doc["otherData"], doc["traceEvents"]
        p = info["stages"]
        tracks = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
        assert tracks == {r: f"rank {r}" for r in range(p)}, name
        passes = [e for e in events if e["ph"] == "X"]
        assert {(e["pid"], e["tid"]) for e in passes} == {(r, 0) for r in range(p)}, f"{name}: not one track per rank"
        sched = pl.schedule(info["schedule"], p, info["microbatches"], chunks=info["chunks"])
        for r in range(p):
            mine = sorted((e for e in passes if e["pid"] == r), key=lambda e: e["ts"])
            assert [(e["args"]["stage"], e["args"]["action"], e["args"]["microbatch"]) for e in mine] == sched.rank_order(r), \
                f"{name}: rank {r}'s track is not the schedule's order"
            # never overlapping; ts and dur are rounded to 1e-6 us each (Timeline.to_chrome_trace), so allow two roundings
            assert all(a["dur"] > 0 and a["ts"] + a["dur"] <= b["ts"] + 2e-6 for a, b in zip(mine, mine[1:])), name
