"""Placement diagrams: which GPU of which node holds which TP, CP, DP and PP rank of a plan.

Everything here is read from :func:`parallelsel.core.placement.placement`, the one placement rule the
traffic is priced on: rank order TP fastest, then CP, then DP, then PP (:mod:`parallelsel.core.plan`),
ranks filling nodes in order (:func:`parallelsel.core.placement.rank_node`). Pure functions: data in,
SVG string or plain data out.
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from parallelsel.core._check import ParallelselError, positive_int
from parallelsel.core.hardware import Cluster, Link
from parallelsel.core.placement import GroupPlacement, placement, rank_node
from parallelsel.core.plan import Plan
from parallelsel.render.style import COLORS, SERIES, chart, to_svg
from parallelsel.render.tables import fmt_rate
from .reasons import plan_label

__all__ = ["Slot", "GroupSpan", "layout", "group_spans", "link_text", "placement_diagram"]

# One hue per pipeline stage (stage 0 first): the shared series palette without the red that marks a
# TP group crossing nodes. DP ranks are shown as lighter tints of it.
_STAGE_COLORS = tuple(c for c in SERIES if c != COLORS["wait"])

_RANK_DIMS = ("TP", "CP", "DP", "PP")  # the dimensions rank order is built from, fastest first


def link_text(link: Link) -> str:
    """A link's bandwidth as the page states it: per GPU, or NICs a whole node shares.

    Examples:
        >>> from parallelsel import LINKS
        >>> link_text(LINKS["nvlink3"]), link_text(LINKS["eth-25g"])
        ('每卡 300 GB/s', '每节点 1 块网卡、每块 3.1 GB/s，节点内各卡分用')
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
    cp_rank: int = 0


def _checked(plan: Plan, cluster: Cluster) -> dict[str, GroupPlacement]:
    if not isinstance(plan, Plan):
        raise ParallelselError(f"plan={plan!r}: must be a Plan")
    if not isinstance(cluster, Cluster):
        raise ParallelselError(f"cluster={cluster!r}: must be a Cluster (the nodes the ranks fill)")
    return placement(plan, cluster)


def layout(plan: Plan, cluster: Cluster) -> list[Slot]:
    """Every rank of ``plan`` with its node and its (tp, cp, dp, pp) coordinates, in rank order: a
    rank's coordinate in a dimension is its position in its group of that dimension.

    Examples:
        >>> import parallelsel as ps
        >>> c = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=2, gpus_per_node=4)
        >>> [(s.node, s.tp_rank, s.dp_rank, s.pp_stage) for s in layout(Plan(dp=2, tp=2, pp=2), c)][:5]
        [(0, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 1, 1, 0), (1, 0, 0, 1)]
    """
    groups = _checked(plan, cluster)
    coords = {dim: [0] * plan.gpus for dim in _RANK_DIMS}
    for dim in _RANK_DIMS:
        for ranks in groups[dim].groups if dim in groups else ():
            for k, r in enumerate(ranks):
                coords[dim][r] = k
    g = cluster.gpus_per_node
    return [Slot(r, rank_node(r, g), r % g, coords["TP"][r], coords["DP"][r], coords["PP"][r], coords["CP"][r])
            for r in range(plan.gpus)]


@dataclass(frozen=True)
class GroupSpan:
    """How one parallel dimension's groups sit on the nodes.

    ``dim`` is "TP", "CP", "DP" or "PP"; ``size`` ranks per group, ``stride`` between them in rank order;
    ``groups`` how many such groups; ``crossing`` how many of them touch more than one node;
    ``nodes_per_group`` the most nodes one group touches; ``link`` the link the dimension is priced on.
    """

    dim: str
    size: int
    stride: int
    groups: int
    crossing: int
    nodes_per_group: int
    link: str = ""


def group_spans(plan: Plan, cluster: Cluster) -> list[GroupSpan]:
    """For TP, CP (when ``plan.cp > 1``), DP and PP: group size, stride, and how many groups cross a node boundary.

    Read from :func:`parallelsel.core.placement.placement` (the rule traffic is priced on), so it also
    covers groups that do not start node-aligned and the strides context parallelism adds.
    """
    groups = _checked(plan, cluster)
    return [GroupSpan(dim, g.size, g.stride, len(g.groups), g.crossing, g.nodes_per_group, g.link.name)
            for dim in _RANK_DIMS if (g := groups.get(dim)) is not None]


def _tint(hex_color: str, amount: float) -> str:
    """Mix ``hex_color`` with white; ``amount`` 0 keeps the colour, 1 gives white."""
    rgb = [int(hex_color[i:i + 2], 16) for i in (1, 3, 5)]
    mixed = [round(c + (255 - c) * amount) for c in rgb]
    return "#" + "".join(f"{c:02X}" for c in mixed)


@dataclass(frozen=True)
class _Grid:
    """Where nodes and GPU cells go on the canvas (cell units): ``per_row`` nodes a row, ``cols`` GPUs a node row."""

    per_row: int
    cols: int
    node_w: float
    node_h: float

    def node_xy(self, node: int) -> tuple[float, float]:
        return (node % self.per_row) * (self.node_w + 0.4), -(node // self.per_row) * (self.node_h + 0.4)

    def cell_xy(self, slot: Slot) -> tuple[float, float]:
        nx, ny = self.node_xy(slot.node)
        return nx + 0.3 + (slot.local % self.cols), ny - 0.9 - (slot.local // self.cols) - 1


def _draw_cells(ax, grid: _Grid, plan: Plan, slots: list[Slot], nodes: int) -> dict[int, tuple[float, float]]:
    """Node boxes with their names, and one cell per GPU coloured by PP stage, tinted by DP rank."""
    for n in range(nodes):
        nx, ny = grid.node_xy(n)
        ax.add_patch(Rectangle((nx, ny - grid.node_h), grid.node_w, grid.node_h, facecolor="#F4F4F4",
                               edgecolor="#777777", linewidth=0.8))
        ax.text(nx + 0.3, ny - 0.45, f"节点 {n}", fontsize=7, va="center", ha="left")
    cell_xy = {}
    for s in slots:
        cx, cy = cell_xy[s.rank] = grid.cell_xy(s)
        base = _STAGE_COLORS[s.pp_stage % len(_STAGE_COLORS)]
        tint = 0.65 * s.dp_rank / max(1, plan.dp - 1) if plan.dp > 1 else 0.0
        ax.add_patch(Rectangle((cx + 0.04, cy + 0.04), 0.92, 0.92, facecolor=_tint(base, tint), edgecolor="white",
                               linewidth=0.5))
        label = f"t{s.tp_rank}\nd{s.dp_rank}" if plan.cp == 1 else f"t{s.tp_rank} c{s.cp_rank}\nd{s.dp_rank}"
        ax.text(cx + 0.5, cy + 0.5, label, fontsize=5.5, ha="center", va="center",
                color="white" if tint < 0.35 else "#222222", linespacing=1.0,
                in_layout=False)  # inside its cell: skip it when measuring the crop
    return cell_xy


def _outline_tp_groups(ax, tp: GroupPlacement, cell_xy: dict, gpus_per_node: int) -> None:
    """A box around each TP group's cells in every node it touches; red and dashed if the group crosses nodes."""
    for ranks, nodes in zip(tp.groups, tp.nodes):
        bad = len(nodes) > 1
        for node in nodes:
            xs = [cell_xy[r][0] for r in ranks if rank_node(r, gpus_per_node) == node]
            ys = [cell_xy[r][1] for r in ranks if rank_node(r, gpus_per_node) == node]
            ax.add_patch(Rectangle((min(xs), min(ys)), max(xs) - min(xs) + 1, max(ys) - min(ys) + 1, fill=False,
                                   edgecolor=COLORS["wait"] if bad else "#222222", linewidth=1.6 if bad else 1.0,
                                   linestyle="--" if bad else "-"))


_TRACES = (("CP", COLORS["cp_group"], "--"), ("DP", "#222222", "-"), ("PP", COLORS["pp_group"], ":"))
"""The groups of rank 0 traced through their cells: dimension, colour, line style."""


def _trace_groups(ax, groups: dict[str, GroupPlacement], cell_xy: dict) -> list[Line2D]:
    """Lines through the cells of rank 0's CP, DP and PP groups (those of size > 1); their legend handles."""
    handles = []
    for dim, color, style in _TRACES:
        g = groups.get(dim)
        if g is None or g.size == 1:
            continue
        i = len(handles)
        # run along the cells' top-left corners so the labels stay readable
        xs = [cell_xy[r][0] + 0.1 + 0.08 * i for r in g.groups[0]]
        ys = [cell_xy[r][1] + 0.9 - 0.08 * i for r in g.groups[0]]
        ax.plot(xs, ys, color=color, linestyle=style, linewidth=1.3, marker="o", markersize=3, zorder=5)
        handles.append(Line2D([], [], color=color, linestyle=style, marker="o", markersize=3,
                              label=f"rank 0 所在的 {dim} 组"))
    return handles


def _legend(ax, plan: Plan, tp: GroupPlacement, traces: list[Line2D]) -> None:
    handles = [Patch(facecolor=_STAGE_COLORS[i % len(_STAGE_COLORS)], label=f"PP 段 {i}") for i in range(plan.pp)]
    if plan.tp > 1:
        handles.append(Patch(facecolor="none", edgecolor="#222222", label="TP 组（节点内）"))
        if tp.crossing:
            handles.append(Patch(facecolor="none", edgecolor=COLORS["wait"], linestyle="--", label="TP 组（跨节点）"))
    ax.legend(handles=handles + traces, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)


def _default_title(plan: Plan, nodes: int, gpus_per_node: int) -> str:
    cp, c = (f" × CP{plan.cp}", "c = CP 序号，") if plan.cp > 1 else ("", "")
    return (f"TP{plan.tp}{cp} × DP{plan.dp} × PP{plan.pp} 放在 {nodes} 个节点 × {gpus_per_node} 卡上"
            f"（t = TP 序号，{c}d = DP 序号，颜色深浅 = DP 序号）")


def placement_diagram(plan: Plan, cluster: Cluster, salt: str, title: str | None = None,
                      nodes_per_row: int = 4) -> str:
    """Nodes as boxes, GPUs as cells: colour = PP stage, tint = DP rank, label = TP rank (t), CP rank (c) and DP rank (d).

    Each TP group gets a black outline around its cells inside every node it touches; a TP group that
    crosses a node boundary is outlined in red and dashed (its every-layer collectives then run over
    the inter-node link). The CP, DP and PP groups of rank 0 are traced as lines through their
    cells, so it is visible which links their collectives and sends cross. All of it is read from
    :func:`parallelsel.core.placement.placement`.
    """
    groups = _checked(plan, cluster)
    if plan.gpus > cluster.gpus:
        raise ParallelselError(f"plan={plan_label(plan)}: needs {plan.gpus} GPUs, cluster has {cluster.gpus}")
    per_row = positive_int("nodes_per_row", nodes_per_row)
    g = cluster.gpus_per_node
    cols = min(4, g)
    grid = _Grid(per_row, cols, cols + 0.6, -(-g // cols) + 1.0)  # cell units, with margins and a header line
    nodes = -(-plan.gpus // g)
    node_rows = -(-nodes // per_row)
    width = min(10.0, 1.1 + 0.55 * per_row * grid.node_w)
    height = 0.9 + 0.55 * node_rows * grid.node_h
    with chart(width=width, height=height) as (fig, ax):
        ax.grid(False)
        ax.set_axis_off()
        cell_xy = _draw_cells(ax, grid, plan, layout(plan, cluster), nodes)
        if plan.tp > 1:
            _outline_tp_groups(ax, groups["TP"], cell_xy, g)
        traces = _trace_groups(ax, groups, cell_xy)
        ax.set_xlim(-0.2, per_row * (grid.node_w + 0.4))
        ax.set_ylim(-node_rows * (grid.node_h + 0.4), 0.2)
        ax.set_aspect("equal")
        _legend(ax, plan, groups["TP"], traces)
        ax.set_title(title if title is not None else _default_title(plan, nodes, g), fontsize=9)
        return to_svg(fig, salt)
