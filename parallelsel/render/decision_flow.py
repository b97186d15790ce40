"""The decision-flow chart: :data:`parallelsel.core.matrix.RULES` drawn in the order the selection matrix applies them.

A hand-built SVG (no matplotlib: boxes, arrows and links only), one box per rule, top to bottom; "是" leads right to
the verdict the rule gives, "否" leads down to the next rule; the last box is what no rule caught (feasible, then the
plan search). Every box is a link to the page that explains its rule. The chart is drawn at a 360-unit width so that
on a 390 px phone its 13-unit text stays about 13 px tall; on wider screens CSS caps its width (docs/assets/extra.css).
"""

from __future__ import annotations

from html import escape

from ..core.matrix import RULES, Rule
from .lesson_text import verdict_word
from .style import COLORS
from .units import fmt_pct

__all__ = ["FLOW_PAGES", "decision_flow_svg", "rule_lines"]

FLOW_PAGES = {
    "divisibility": "core/tp.md",
    "global_batch": "core/batch.md",
    "memory": "mechanics/memory.md",
    "dp_fits": "core/dp.md",
    "tp_crosses_nodes": "core/hybrid.md",
    "bubble": "mechanics/bubble.md",
    "costlier_per_gpu": "mechanics/scaling.md",
    "unknown_fact": "matrix/index.md",
    "feasible": "matrix/search.md",
}
"""The page (docs-relative source path) that explains each rule of the flow; a test checks every one exists."""

_STAGES = {"hard": "① 硬约束排除（对每种策略试遍并行度、微批次、重算）", "cost": "② 成本比较（只比放得下的策略）",
           "info": "③ 缺信息就说缺什么"}


def rule_lines(rule: Rule) -> tuple[str, str]:
    """The box text of one rule: the question (answered 是 → the rule's verdict) and a short gloss."""
    v = rule.value
    if rule.code == "bubble":
        return f"PP 气泡 > {fmt_pct(v, 0)}？", "气泡占比 (p−1)/(m+p−1)"
    if rule.code == "costlier_per_gpu":
        return f"GPU·秒 > {v:g} × 最省者？", "每步 GPU·秒 = 步时 × 所用卡数"
    return {
        "divisibility": ("没有并行度能整除？", "TP 度整除头数与 FFN，PP 段数整除层数"),
        "global_batch": ("全局批量分不到各副本？", "全局批量须整除 dp × 微批次"),
        "memory": ("哪种设置都放不下？", "状态 + 激活 + 余量 > 可用显存"),
        "dp_fits": ("纯 DP 已经放得下？", "TP、PP 与不更快的 FSDP 买不到什么"),
        "tp_crosses_nodes": ("TP 组要跨节点？", "每层的集合通信走了慢链路"),
        "unknown_fact": ("依赖没给出的事实？", "全局批量或互联未知"),
    }[rule.code]


def _href(base: str, page: str) -> str:
    """A link from a page at ``base`` (e.g. "../" for matrix/index.md) to a docs page, directory-URL style."""
    path = page[: -len("index.md")] if page.endswith("index.md") else page[: -len(".md")] + "/"
    return escape(base + path, quote=True)


def decision_flow_svg(base: str = "") -> str:
    """The chart as an inline ``<svg>`` string; ``base`` is the relative prefix from the page it sits on to the site
    root ("" on the home page, "../" one folder down)."""
    w, box_w, pill_x, pill_w, row_h, box_h, stage_h = 360, 236, 270, 86, 56, 40, 22
    ink = "#333333"
    soft = "#666666"
    parts, y, stage = [], 4, None
    arrow = 'marker-end="url(#ps-flow-arrow)"'
    for i, rule in enumerate(RULES):
        if rule.stage != stage:
            stage = rule.stage
            parts.append(f'<text x="2" y="{y + 14}" font-size="12" font-weight="bold" fill="{ink}">{escape(_STAGES[stage])}</text>')
            y += stage_h
        q, gloss = rule_lines(rule)
        colour = COLORS[rule.verdict.value]
        parts.append(
            f'<a href="{_href(base, FLOW_PAGES[rule.code])}"><title>{escape(q + gloss)}</title>'
            f'<rect x="2" y="{y}" width="{box_w}" height="{box_h}" rx="6" fill="#ffffff" stroke="{ink}"/>'
            f'<text x="10" y="{y + 17}" font-size="13.5" fill="{ink}" text-decoration="underline">{escape(q)}</text>'
            f'<text x="10" y="{y + 33}" font-size="11" fill="{soft}">{escape(gloss)}</text></a>'
            f'<path d="M{2 + box_w} {y + box_h / 2} H{pill_x - 2}" stroke="{ink}" fill="none" {arrow}/>'
            f'<text x="{2 + box_w + 8}" y="{y + box_h / 2 - 4}" font-size="11" fill="{ink}">是</text>'
            f'<rect x="{pill_x}" y="{y + 8}" width="{pill_w}" height="{box_h - 16}" rx="12" fill="{colour}" fill-opacity="0.18" stroke="{colour}"/>'
            f'<text x="{pill_x + pill_w / 2}" y="{y + box_h / 2 + 5}" font-size="13" text-anchor="middle" fill="{ink}">'
            f'{escape(verdict_word(rule.verdict))}</text>'
        )
        nxt = y + row_h + (stage_h if i + 1 < len(RULES) and RULES[i + 1].stage != stage else 0)
        parts.append(f'<path d="M40 {y + box_h} V{nxt - 2}" stroke="{ink}" fill="none" {arrow}/>'
                     f'<text x="46" y="{y + box_h + 12}" font-size="11" fill="{ink}">否</text>')
        y = nxt
    colour = COLORS["feasible"]
    parts.append(
        f'<a href="{_href(base, FLOW_PAGES["feasible"])}"><title>可行：再组合多种并行，交给方案搜索</title>'
        f'<rect x="2" y="{y}" width="{w - 4}" height="{box_h}" rx="6" fill="{colour}" fill-opacity="0.18" stroke="{colour}"/>'
        f'<text x="10" y="{y + 17}" font-size="13.5" fill="{ink}" text-decoration="underline">'
        f'{escape(verdict_word("feasible"))}：再把放得下的策略组合起来</text>'
        f'<text x="10" y="{y + 33}" font-size="11" fill="{soft}">方案搜索按每步时间排出混合方案</text></a>'
    )
    h = y + box_h + 4
    words = "；".join(f"{rule_lines(r)[0]}是则{verdict_word(r.verdict)}" for r in RULES)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="group" '
        f'aria-label="{escape("决策流程：" + words + "；都不是则可行", quote=True)}" '
        'font-family="Noto Sans CJK SC, Source Han Sans SC, sans-serif">'
        f'<defs><marker id="ps-flow-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        f'orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" fill="{ink}"/></marker></defs>'
        + "".join(parts) + "</svg>"
    )
