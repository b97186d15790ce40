"""Placement diagrams: which GPU of which node holds which TP, DP and PP rank of a plan.

Rank order follows :mod:`parallelsel.plan`: TP fastest, then DP, then PP, so global rank
``r = tp_rank + tp * (dp_rank + dp * pp_stage)``, and ranks fill nodes in order (rank r sits on node
``r // gpus_per_node``, the layout :mod:`parallelsel.placement` prices). Pure functions:
data in, SVG string or plain data out.
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from parallelsel._check import ParallelselError, positive_int
from parallelsel.hardware import Cluster, Link
from parallelsel.placement import groups_on_nodes
from parallelsel.plan import Plan
from parallelsel.render.style import COLORS, chart, to_svg
from parallelsel.render.tables import fmt_rate

__all__ = ["Slot", "GroupSpan", "layout", "group_spans", "link_text", "placement_diagram"]

# One hue per pipeline stage (stage 0 first); DP ranks are shown as lighter tints of it.
_STAGE_COLORS = ["#4C78A8", "#F58518", "#54A24B", "#B279A2", "#9D755D", "#72B7B2", "#EECA3B", "#FF9DA6"]


def link_text(link: Link) -> str:
    """A link's bandwidth as the page states it: per GPU, or NICs a whole node shares.

    Examples:
        >>> from parallelsel import LINKS
        >>> link_text(LINKS["nvlink3"]), link_text(LINKS["eth-25g"])
        ('每卡 300 GB/s', '每节点 1 块网卡、每块 3.12 GB/s，节点内各卡分用')
    """
    if link.per == "gpu":
        return f"每卡 {fmt_rate(link.bandwidth)}"
    return f"每节点 {link.nics} 块网卡、每块 {fmt_rate(link.bandwidth)}，节点内各卡分用"


@dataclass(frozen=True)
class Slot:
    """One GPU: its global ``rank``, ``node`` and slot ``local`` in the node, and its ranks in each dimension."""

    rank: int
    node: int
    local: int
    tp_rank: int
    dp_rank: int
    pp_stage: int


def layout(plan: Plan, gpus_per_node: int) -> list[Slot]:
    """Every rank of ``plan`` with its node and its (tp, dp, pp) coordinates, in rank order.

    Examples:
        >>> [ (s.node, s.tp_rank, s.dp_rank, s.pp_stage) for s in layout(Plan(dp=2, tp=2, pp=2), 4)][:5]
        [(0, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 1, 1, 0), (1, 0, 0, 1)]
    """
    if not isinstance(plan, Plan):
        raise ParallelselError(f"plan={plan!r}: must be a Plan")
    g = positive_int("gpus_per_node", gpus_per_node)
    out = []
    for r in range(plan.gpus):
        out.append(Slot(r, r // g, r % g, r % plan.tp, (r // plan.tp) % plan.dp, r // (plan.tp * plan.dp)))
    return out


@dataclass(frozen=True)
class GroupSpan:
    """How one parallel dimension's groups sit on the nodes.

    ``dim`` is "TP", "DP" or "PP"; ``size`` ranks per group, ``stride`` between them in rank order;
    ``groups`` how many such groups; ``crossing`` how many of them touch more than one node;
    ``nodes_per_group`` the most nodes one group touches.
    """

    dim: str
    size: int
    stride: int
    groups: int
    crossing: int
    nodes_per_group: int


def group_spans(plan: Plan, gpus_per_node: int) -> list[GroupSpan]:
    """For TP, DP and PP: group size, stride, and how many groups cross a node boundary.

    Read from :func:`parallelsel.placement.groups_on_nodes` (the rule traffic is priced on), so it
    also covers groups that do not start node-aligned.
    """
    if not isinstance(plan, Plan):
        raise ParallelselError(f"plan={plan!r}: must be a Plan")
    g = positive_int("gpus_per_node", gpus_per_node)
    dims = {"TP": (plan.tp, 1), "DP": (plan.dp, plan.tp), "PP": (plan.pp, plan.tp * plan.dp)}
    out = []
    for dim, (size, stride) in dims.items():
        _groups, nodes = groups_on_nodes(plan.gpus, size, stride, g)
        touched = [len(n) for n in nodes]
        out.append(GroupSpan(dim, size, stride, len(nodes), sum(t > 1 for t in touched), max(touched)))
    return out


def _tint(hex_color: str, amount: float) -> str:
    """Mix ``hex_color`` with white; ``amount`` 0 keeps the colour, 1 gives white."""
    rgb = [int(hex_color[i:i + 2], 16) for i in (1, 3, 5)]
    mixed = [round(c + (255 - c) * amount) for c in rgb]
    return "#" + "".join(f"{c:02X}" for c in mixed)


def placement_diagram(plan: Plan, cluster: Cluster, salt: str, title: str | None = None,
                      nodes_per_row: int = 4) -> str:
    """Nodes as boxes, GPUs as cells: colour = PP stage, tint = DP rank, label = TP rank (t) and DP rank (d).

    Each TP group gets a black outline around its cells inside every node it touches; a TP group that
    crosses a node boundary is outlined in red and dashed (its every-layer collectives then run over
    the inter-node link). The DP group and the PP group of rank 0 are traced as lines through their
    cells, so it is visible which links their collectives and sends cross.
    """
    if not isinstance(cluster, Cluster):
        raise ParallelselError(f"cluster={cluster!r}: must be a Cluster")
    if plan.gpus > cluster.gpus:
        raise ParallelselError(f"plan={plan.label()}: needs {plan.gpus} GPUs, cluster has {cluster.gpus}")
    per_row = positive_int("nodes_per_row", nodes_per_row)
    g = cluster.gpus_per_node
    cols = min(4, g)
    rows_in_node = -(-g // cols)
    slots = layout(plan, g)
    nodes = -(-plan.gpus // g)
    node_rows = -(-nodes // per_row)
    node_w, node_h = cols + 0.6, rows_in_node + 1.0  # cell units, with margins and a header line
    spans = {s.dim: s for s in group_spans(plan, g)}
    tp_cross = spans["TP"].crossing

    width = min(10.0, 1.1 + 0.55 * per_row * node_w)
    height = 0.9 + 0.55 * node_rows * node_h
    with chart(width=width, height=height) as (fig, ax):
        ax.grid(False)
        ax.set_axis_off()
        for n in range(nodes):
            nx, ny = (n % per_row) * (node_w + 0.4), -(n // per_row) * (node_h + 0.4)
            ax.add_patch(Rectangle((nx, ny - node_h), node_w, node_h, facecolor="#F4F4F4", edgecolor="#777777", linewidth=0.8))
            ax.text(nx + 0.3, ny - 0.45, f"节点 {n}", fontsize=7, va="center", ha="left")
        cell_xy = {}
        for s in slots:
            n = s.node
            nx, ny = (n % per_row) * (node_w + 0.4), -(n // per_row) * (node_h + 0.4)
            cx, cy = nx + 0.3 + (s.local % cols), ny - 0.9 - (s.local // cols) - 1
            cell_xy[s.rank] = (cx, cy)
            base = _STAGE_COLORS[s.pp_stage % len(_STAGE_COLORS)]
            tint = 0.65 * s.dp_rank / max(1, plan.dp - 1) if plan.dp > 1 else 0.0
            ax.add_patch(Rectangle((cx + 0.04, cy + 0.04), 0.92, 0.92, facecolor=_tint(base, tint), edgecolor="white", linewidth=0.5))
            ink = "white" if tint < 0.35 else "#222222"
            ax.text(cx + 0.5, cy + 0.5, f"t{s.tp_rank}\nd{s.dp_rank}", fontsize=5.5, ha="center", va="center",
                    color=ink, linespacing=1.0, in_layout=False)  # inside its cell: skip it when measuring the crop
        # Outline each TP group's cells per node (a bounding box of its cells there).
        groups: dict[tuple[int, int], list[int]] = {}
        for s in slots:
            groups.setdefault((s.rank // plan.tp, s.node), []).append(s.rank)
        crossing = {gid for gid in {k[0] for k in groups} if sum(1 for k in groups if k[0] == gid) > 1}
        if plan.tp > 1:
            for (gid, _node), ranks in groups.items():
                xs = [cell_xy[r][0] for r in ranks]
                ys = [cell_xy[r][1] for r in ranks]
                bad = gid in crossing
                ax.add_patch(Rectangle((min(xs), min(ys)), max(xs) - min(xs) + 1, max(ys) - min(ys) + 1, fill=False,
                                       edgecolor=COLORS["wait"] if bad else "#222222", linewidth=1.6 if bad else 1.0,
                                       linestyle="--" if bad else "-"))
        # Trace the DP group and the PP group of rank 0 through their cells: they leave the node.
        traces = []
        if plan.dp > 1:
            traces.append(([plan.tp * d for d in range(plan.dp)], "#222222", "-", "rank 0 所在的 DP 组"))
        if plan.pp > 1:
            traces.append(([plan.tp * plan.dp * k for k in range(plan.pp)], "#6A3D9A", ":", "rank 0 所在的 PP 组"))
        for i, (ranks, color, style, label) in enumerate(traces):
            # run along the cells' top-left corners so the labels stay readable
            xs = [cell_xy[r][0] + 0.1 + 0.08 * i for r in ranks]
            ys = [cell_xy[r][1] + 0.9 - 0.08 * i for r in ranks]
            ax.plot(xs, ys, color=color, linestyle=style, linewidth=1.3, marker="o", markersize=3, zorder=5)
            traces[i] = Line2D([], [], color=color, linestyle=style, marker="o", markersize=3, label=label)
        ax.set_xlim(-0.2, per_row * (node_w + 0.4))
        ax.set_ylim(-node_rows * (node_h + 0.4), 0.2)
        ax.set_aspect("equal")
        handles = [Patch(facecolor=_STAGE_COLORS[i % len(_STAGE_COLORS)], label=f"PP 阶段 {i}") for i in range(plan.pp)]
        if plan.tp > 1:
            handles.append(Patch(facecolor="none", edgecolor="#222222", label="TP 组（节点内）"))
            if tp_cross:
                handles.append(Patch(facecolor="none", edgecolor=COLORS["wait"], linestyle="--", label="TP 组（跨节点）"))
        handles.extend(traces)
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
        if title is None:
            title = (f"TP{plan.tp} × DP{plan.dp} × PP{plan.pp} 放在 {nodes} 个节点 × {g} 卡上"
                     f"（t = TP 序号，d = DP 序号，颜色深浅 = DP 序号）")
        ax.set_title(title, fontsize=9)
        return to_svg(fig, salt)
