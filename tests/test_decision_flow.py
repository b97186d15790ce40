"""The decision-flow chart (render/decision_flow.py) is the selection matrix's own rule order, and it reaches readers.

* Every verdict the matrix gives on the lesson's cases (the three paper cases, their slow-link variant, an unknown global
  batch, a small cluster that excludes by divisibility) is explained by a rule of ``RULES`` with that verdict, found by
  the reason codes the matrix emitted: the chart cannot list a rule the matrix does not apply or miss one it does.
* Each rule's reason codes exist in the library's source (a renamed code would orphan the chart's box).
* The chart's boxes follow ``RULES`` in order; each links to a page that exists.
* In the built site the chart is on the home page and the matrix page, and each of its links reaches a built page.
"""

from __future__ import annotations

import re
from html import escape
import xml.dom.minidom
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

import parallelsel as ps
from parallelsel.core.matrix import RULES, Verdict, selection_matrix
from parallelsel.course.lesson import paper_cases, topology_variant
from parallelsel.render.decision_flow import FLOW_PAGES, decision_flow_svg, rule_lines

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
CORE = REPO / "parallelsel" / "core"


def _scenarios():
    for case, work, cluster in paper_cases():
        yield case, work, cluster, ()
        yield case + "-slow-link", work, topology_variant(cluster), ()
        yield case + "-unknown-batch", work, cluster, ("global_batch", "interconnect")
    # 8 GPUs for a model whose 11 heads and 11 layers no degree in (1, 8] divides: divisibility decides
    odd = ps.Transformer(layers=11, hidden=704, heads=11, seq_len=1024, vocab=50257)
    yield "odd", ps.Workload(odd, global_batch=3), ps.Cluster(ps.DEVICES["a100-80gb"], nodes=1), ()


@pytest.mark.parametrize("name,work,cluster,unknown", list(_scenarios()), ids=lambda x: x if isinstance(x, str) else "")
def test_every_verdict_is_a_rule_of_the_chart(name, work, cluster, unknown):
    for row in selection_matrix(work, cluster, unknown=unknown):
        if row.verdict is Verdict.FEASIBLE:
            continue
        codes = {r.code for r in row.reasons}
        rules = [rule.code for rule in RULES if rule.verdict is row.verdict and codes & set(rule.reasons)]
        assert rules, f"{name} {row.strategy}: verdict {row.verdict.value} with reasons {sorted(codes)} matches no rule"


def test_the_scenarios_reach_every_verdict():
    seen = {row.verdict for _, w, c, u in _scenarios() for row in selection_matrix(w, c, unknown=u)}
    assert seen == set(Verdict)


def test_rule_reason_codes_exist_in_the_library():
    source = "\n".join(p.read_text(encoding="utf-8") for p in CORE.glob("*.py"))
    emitted = set(re.findall(r'Reason\(\s*f?"([a-z_{}.()]+)"', source))
    emitted |= {f"{s}_exceeds_device" for s in ("dp", "fsdp", "tp", "pp")}  # f"{t.strategy.lower()}_exceeds_device"
    missing = [(rule.code, c) for rule in RULES for c in rule.reasons if c not in emitted]
    assert not missing, f"rule reason codes the library never emits: {missing}"


def test_chart_follows_the_rules_and_links_pages_that_exist():
    svg = decision_flow_svg(base="")
    dom = xml.dom.minidom.parseString(svg)
    root = dom.documentElement
    assert "决策流程" in root.getAttribute("aria-label")
    links = [a.getAttribute("href") for a in dom.getElementsByTagName("a")]
    assert len(links) == len(RULES) + 1
    questions = [rule_lines(r)[0] for r in RULES]
    positions = [svg.index(escape(q)) for q in questions]
    assert positions == sorted(positions), "boxes out of the rule order"
    for code, page in FLOW_PAGES.items():
        assert (DOCS / page).is_file(), f"{code}: {page} does not exist"
    # the threshold rules print the library's own thresholds
    assert any(f"{r.value:g}" in rule_lines(r)[0] for r in RULES if r.code == "costlier_per_gpu")


def _flow_links(html: str) -> list[str]:
    m = re.search(r'<svg[^>]*aria-label="决策流程.*?</svg>', html, re.S)
    assert m, "no decision-flow chart"
    return re.findall(r'<a href="([^"]+)"', m.group(0))


@pytest.mark.build
@pytest.mark.parametrize("page", ["index.html", "matrix/index.html"])
def test_flow_on_the_built_page_and_its_links_resolve(site, page):
    html = (site / page).read_text(encoding="utf-8")
    links = _flow_links(html)
    assert len(links) == len(RULES) + 1
    for href in links:
        target = urlsplit(urljoin("http://x/" + page, href)).path.lstrip("/")
        path = site / target
        path = path / "index.html" if target.endswith("/") or path.is_dir() else path
        assert path.is_file(), f"{page}: {href} -> {target} is not a built page"
