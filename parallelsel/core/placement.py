"""Where a plan's groups sit: which ranks each group holds, the nodes it spans and the link it is priced on.

One rule, used by :mod:`parallelsel.core.comm` (traffic), :mod:`parallelsel.core.matrix`, :mod:`parallelsel.core.search`
and ``render/placement``. Ranks are ordered TP fastest, then CP, then DP, then PP (Megatron-LM's
default ``tp-cp-ep-dp-pp`` order, :mod:`parallelsel.core.plan`) and fill nodes in order: rank r sits on
node ``r // gpus_per_node`` (:func:`rank_node`). A dimension with ``size`` ranks ``stride`` apart
forms the groups ``{low + stride * (k + size * high) : k < size}`` for every ``low < stride`` and
``high``.

Pricing a group (the alpha-beta model of :mod:`parallelsel.core.comm`), as NCCL runs it:

* inside one node: the intra-node link;
* a collective whose group crosses nodes (``ring=True``) runs as NCCL runs it: several rings
  (channels) at once, every one of which enters and leaves every node the group touches -- "NET n ->
  GPU a -> ... -> GPU x -> NET n" (NVIDIA/nccl ``src/graph/search.cc`` L826-842) -- spread round-robin
  over the node's NICs, each consuming NIC bandwidth (``search.cc`` L736-749). So the group's bus
  bandwidth across nodes is what its share of a node's NICs carries: with one HCA per GPU (rails,
  ``per="gpu"``) a group with k ranks on a node runs k rings on its k HCAs, k x the per-HCA rate;
  with NICs a node shares (``per="node"``, ``nics`` of them) the rings leaving the node get the
  NICs' summed rate, divided among the GPUs of the dimension's crossing groups on that node (all
  groups of a dimension communicate at once), times the group's k ranks there. k is the fewest
  ranks the group has on any node it touches. The intra-node link bounds both (its rings also
  cross every GPU's NVLink): bandwidth min(intra, k x inter share) and latency max(intra, inter).
  Maintainers: "AllReduce ... will form multiple rings so that it can utilize all the available NICs
  for maximum bandwidth" (NVIDIA/nccl-tests issue #277); "performance should add up as you add more
  [NICs]" (NVIDIA/nccl issue #652); "you can add more NICs and you should get more bandwidth, up to
  160GB/s which is the NVLink intra-node bandwidth of your system" (NVIDIA/nccl issue #412). A group
  with one rank per node keeps one ring, on that GPU's own HCA;
* point-to-point traffic -- chains (``ring=False``: pipeline sends between adjacent stages), ring
  attention's K/V sends and all-to-all (``spread=False``) -- sends from one GPU to one GPU: the
  port's bandwidth for a per-GPU link, ``nics x bandwidth / senders`` for shared NICs, where
  senders is the most hops leaving one node over all groups at once.

The groups of one dimension run the same collective at the same time, so the slowest group sets
the step: a dimension is priced on the slowest link any of its groups crosses.

Examples:
    >>> import parallelsel as ps
    >>> c = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=3, gpus_per_node=8, intra=ps.LINKS["nvlink4"])
    >>> tp = placement(ps.Plan(tp=6, dp=4), c)["TP"]
    >>> tp.groups[1], tp.nodes[1], tp.crossing
    ((6, 7, 8, 9, 10, 11), (0, 1), 2)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ._check import ParallelselError, positive_int
from .hardware import Cluster, Link
from .reasons import Reason

__all__ = ["GroupPlacement", "group_link", "group_placement", "group_reasons", "groups_on_nodes", "link_for", "placement",
           "rank_node", "spans_nodes"]


def rank_node(rank: int, gpus_per_node: int) -> int:
    """The node global ``rank`` sits on: ranks fill nodes of ``gpus_per_node`` GPUs in order.

    Examples:
        >>> rank_node(9, 8)
        1
    """
    return rank // gpus_per_node


@dataclass(frozen=True)
class GroupPlacement:
    """The groups of one parallel dimension on a cluster.

    ``dim``: "TP", "CP", "DP", "PP", "EP", "shard" (the ZeRO/FSDP shard group when smaller than DP) or
    "replica" (the HSDP replica group), or "" for a bare (size, stride) query; ``size`` ranks per
    group, ``stride`` apart; ``groups``: the ranks of each group; ``nodes``: the nodes each group
    spans; ``crossing``: how many groups span more than one node; ``senders``: the most hops of
    this dimension's rings (chains for PP) that leave one node; ``link``: the link the dimension is priced on (see the module
    docstring); ``inter_share``: the inter-node line rate one crossing group gets (0 if none crosses):
    ``rings`` x one ring's share; ``rings``: how many NCCL rings each crossing group runs over the
    node boundary at full per-HCA rate (the fewest ranks the group has on a node; 1 for a chain).
    """

    dim: str
    size: int
    stride: int
    groups: tuple[tuple[int, ...], ...]
    nodes: tuple[tuple[int, ...], ...]
    crossing: int
    senders: int
    link: Link
    inter_share: float
    rings: int = 0

    @property
    def spans_nodes(self) -> bool:
        """Whether any group of this dimension leaves its node."""
        return self.crossing > 0

    @property
    def nodes_per_group(self) -> int:
        """The most nodes one group touches."""
        return max((len(n) for n in self.nodes), default=1)


def group_placement(cluster: Cluster, total: int, size: int, stride: int, dim: str = "",
                    ring: bool = True, spread: bool = True) -> GroupPlacement:
    """Groups of ``size`` ranks ``stride`` apart among ``total`` ranks on ``cluster``, and their link.

    ``ring``: the group talks in a ring over its ranks in order (collectives); False for a chain
    (pipeline sends between adjacent stages), whose last hop does not wrap around. ``spread``: the
    group runs NCCL collectives whose rings spread over the node's NICs (all-reduce, all-gather,
    reduce-scatter); False for point-to-point traffic -- ring attention's K/V sends, all-to-all --
    where each crossing hop is one GPU's send on one port (all-to-all "does not aggregate NICs":
    NVIDIA/nccl-tests issue #267).

    ``total`` is rounded up to a whole number of group footprints ``size * stride`` (the groups
    tile the ranks). Cached per shape: this is on the hot path of a plan search.
    """
    if not isinstance(cluster, Cluster):
        raise ParallelselError(f"cluster={cluster!r}: must be a Cluster")
    total, size, stride = positive_int("total", total), positive_int("size", size), positive_int("stride", stride)
    foot = size * stride
    return _cached(cluster, foot * -(-total // foot), size, stride, dim, bool(ring), bool(spread))


def group_link(cluster: Cluster, total: int, size: int, stride: int, ring: bool = True, spread: bool = True) -> Link:
    """The link groups of ``size`` ranks ``stride`` apart among ``total`` ranks are priced on, without
    argument checks: the hot path of :func:`parallelsel.core.comm.traffic` in a plan search."""
    if size <= 1:
        return cluster.intra
    foot = size * stride
    return _cached(cluster, foot * -(-total // foot), size, stride, "", ring, spread and ring).link


def _cached(cluster: Cluster, total: int, size: int, stride: int, dim: str = "", ring: bool = True,
            spread: bool = True) -> GroupPlacement:
    # Memoised on the cluster object itself: hashing a Cluster (device and two links) costs more than
    # the lookup, and a plan search asks for the same few shapes thousands of times.
    memo = cluster.__dict__.setdefault("_placements", {})
    key = (total, size, stride, dim, ring, spread)
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = _place(cluster, total, size, stride, dim, ring, spread)
    return hit


def groups_on_nodes(total: int, size: int, stride: int, gpus_per_node: int):
    """``(groups, nodes)``: the ranks of every group of ``size`` ranks ``stride`` apart among ``total``
    ranks, and the nodes (of ``gpus_per_node`` GPUs, filled in rank order) each group spans.

    Examples:
        >>> groups_on_nodes(8, 2, 2, 4)
        (((0, 2), (1, 3), (4, 6), (5, 7)), ((0,), (0,), (1,), (1,)))
    """
    total, size, stride = positive_int("total", total), positive_int("size", size), positive_int("stride", stride)
    g = positive_int("gpus_per_node", gpus_per_node)
    if total % (size * stride):
        raise ParallelselError(f"total={total}: must be a multiple of size x stride = {size * stride}")
    return _groups(total, size, stride, g)


@lru_cache(maxsize=4096)
def _groups(total: int, size: int, stride: int, g: int):
    groups, nodes = [], []
    for high in range(total // (size * stride)):
        for low in range(stride):
            base = low + stride * size * high
            ranks = tuple(base + stride * k for k in range(size))
            groups.append(ranks)
            nodes.append(tuple(sorted({rank_node(r, g) for r in ranks})))
    return tuple(groups), tuple(nodes)


def _place(cluster: Cluster, total: int, size: int, stride: int, dim: str = "", ring: bool = True,
           spread: bool = True) -> GroupPlacement:
    g = cluster.gpus_per_node
    groups, nodes = _groups(total, size, stride, g)
    crossing = [i for i, n in enumerate(nodes) if len(n) > 1]
    # Hops that leave a node, counted at the sending node: a ring over the group's ranks in order
    # (collectives), or a chain (pipeline sends between adjacent stages).
    per_node: dict[int, int] = {}
    hops = size if ring else size - 1
    for i in crossing:
        ranks = groups[i]
        for k in range(hops):
            a, b = rank_node(ranks[k], g), rank_node(ranks[(k + 1) % size], g)
            if a != b:
                per_node[a] = per_node.get(a, 0) + 1
    senders = max(per_node.values(), default=0)
    rings = 0
    if crossing:
        intra, inter = cluster.intra, cluster.inter
        if ring and spread:
            share, rings = _ring_share(inter, groups, crossing, g)
        else:
            share, rings = inter.share(senders), 1
        # Compared on what collectives reach (Link.achieved); the chosen link keeps its achieved share.
        if share * inter.efficiency < intra.achieved:
            name, bandwidth, eff = inter.name, share, inter.efficiency
        else:
            name, bandwidth, eff = intra.name, intra.bandwidth, intra.efficiency
        link = Link(name, bandwidth, max(intra.latency, inter.latency), efficiency=eff)
    else:
        share, link = 0.0, cluster.intra
    return GroupPlacement(dim, size, stride, groups, nodes, len(crossing), senders, link, share, rings)


def _ring_share(inter: Link, groups, crossing, g: int) -> tuple[float, int]:
    """``(line rate, rings)`` one crossing group's collectives get across nodes, as NCCL spreads its
    rings over a node's NICs (module docstring): k rings for the k ranks the group has on its
    sparsest node; each at one HCA's rate (rails), or at the node's NICs' summed rate divided among
    the dimension's crossing GPUs on that node (shared NICs)."""
    crossing_gpus: dict[int, int] = {}
    k = g
    for i in crossing:
        on: dict[int, int] = {}
        for r in groups[i]:
            node = rank_node(r, g)
            on[node] = on.get(node, 0) + 1
        k = min(k, min(on.values()))
        for node, count in on.items():
            crossing_gpus[node] = crossing_gpus.get(node, 0) + count
    per_gpu = inter.share(max(crossing_gpus.values()))
    return k * per_gpu, k


def placement(plan, cluster: Cluster) -> dict[str, GroupPlacement]:
    """Every group dimension of ``plan`` on ``cluster``: "TP", "DP", "PP", and "CP", "EP", "shard" and
    "replica" when the plan has them; see :class:`GroupPlacement` and the module docstring.

    A CP group is ``cp`` consecutive TP blocks (stride ``tp``); a DP group strides by ``tp * cp`` and
    a PP group by ``tp * cp * dp``.

    Expert parallelism is carved out of DP: an EP group is ``ep`` consecutive DP ranks (stride
    ``tp``). An HSDP shard group is ``shard`` consecutive DP ranks (stride ``tp``), its replica
    group strides by ``tp * shard`` (PyTorch's HYBRID_SHARD device mesh ``(replicate, shard)``).
    """
    if not isinstance(cluster, Cluster):
        raise ParallelselError(f"cluster={cluster!r}: must be a Cluster")
    n = plan.gpus
    cp = getattr(plan, "cp", 1)
    out = {
        "TP": _cached(cluster, n, plan.tp, 1, "TP"),
        "DP": _cached(cluster, n, plan.dp, plan.tp * cp, "DP"),
        "PP": _cached(cluster, n, plan.pp, plan.tp * cp * plan.dp, "PP", False, False),
    }
    if cp > 1:
        out["CP"] = _cached(cluster, n, cp, plan.tp, "CP", True, False)
    if plan.ep > 1:
        out["EP"] = _cached(cluster, n, plan.ep, plan.tp, "EP", True, False)
    shard = plan.shard_size
    if plan.zero > 0 and 1 < shard < plan.dp:
        out["shard"] = _cached(cluster, n, shard, plan.tp, "shard")
        out["replica"] = _cached(cluster, n, plan.dp // shard, plan.tp * shard, "replica")
    return out


def _link_values(g) -> dict:
    """Where a group's collectives run: across nodes or not, on which link, at what per-GPU bandwidth."""
    return {"spans_nodes": g.spans_nodes, "link": g.link.name, "bandwidth": g.link.bandwidth}


def group_reasons(p, workload, cluster: Cluster) -> list[Reason]:
    """Where each parallel group of plan ``p`` sits and which link its communication crosses, as reasons
    (``tp_group`` / ``tp_group_spans_nodes``, ``pp_group``, ``cp_group``, ``ep_group``, ``dp_group``); a
    dimension of degree 1 has no group and no reason. Used by the search's ``why`` and the selection matrix."""
    groups = placement(p, cluster)  # the same placement the traffic is priced on
    out = []
    if p.tp > 1:
        g = groups["TP"]
        values = {"tp": p.tp, "crossing": g.crossing, "groups": len(g.groups), "gpus_per_node": cluster.gpus_per_node,
                  "link": g.link.name, "bandwidth": g.link.bandwidth}
        out.append(Reason("tp_group_spans_nodes", values) if g.spans_nodes else
                   Reason("tp_group", {k: values[k] for k in ("tp", "link", "bandwidth")}))
    if p.pp > 1:
        out.append(Reason("pp_group", {"pp": p.pp, "schedule": p.schedule,
                                       "chunks": p.chunks if p.schedule == "interleaved" else None,
                                       **_link_values(groups["PP"])}))
    if p.cp > 1:
        out.append(Reason("cp_group", {"cp": p.cp, "tokens": workload.seq_len // p.cp, **_link_values(groups["CP"])}))
    if p.ep > 1:
        out.append(Reason("ep_group", {"ep": p.ep, **_link_values(groups["EP"])}))
    if p.dp > 1:
        g = groups.get("shard", groups["DP"]) if p.zero else groups["DP"]
        out.append(Reason("dp_group", {"dp": p.dp, "zero": p.zero, **_link_values(g)}))
    return out


def _tiled(cluster: Cluster, size: int, stride: int) -> int:
    # The largest multiple of one group footprint that fits the cluster (at least one footprint).
    foot = size * stride
    return max(foot, cluster.gpus // foot * foot)


def spans_nodes(cluster: Cluster, size: int, stride: int = 1) -> bool:
    """Whether any group of ``size`` ranks, ``stride`` apart in rank order, leaves one node when such groups
    tile ``cluster`` (rank r sits on node r // gpus_per_node); counted by :func:`group_placement`, so a group
    that does not start node-aligned (TP=6 on 8-GPU nodes) is found too.

    Examples:
        >>> import parallelsel as ps
        >>> c = ps.Cluster(device=ps.DEVICES["h100-sxm-80gb"], nodes=2, gpus_per_node=8)
        >>> spans_nodes(c, 8), spans_nodes(c, 6), spans_nodes(c, 16)
        (False, True, True)
    """
    size = positive_int("size", size)
    stride = positive_int("stride", stride)
    return group_placement(cluster, _tiled(cluster, size, stride), size, stride).spans_nodes


def link_for(cluster: Cluster, size: int, stride: int = 1) -> Link:
    """The link a ring over such groups is priced on (:func:`group_placement`): the intra-node link inside a
    node; across nodes the slower of the two links' bandwidths and the larger latency, with a per-node NIC
    shared by the GPUs that send through it."""
    size = positive_int("size", size)
    stride = positive_int("stride", stride)
    return group_placement(cluster, _tiled(cluster, size, stride), size, stride).link
