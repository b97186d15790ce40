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

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from ._check import ParallelselError, positive_int
from .hardware import Cluster, Link
from .plan import dispatcher_violations
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
    most_nodes: int = field(default=0, compare=False)
    """The most nodes one group touches (counted without listing the groups; 0: count ``nodes``)."""

    @property
    def spans_nodes(self) -> bool:
        """Whether any group of this dimension leaves its node."""
        return self.crossing > 0

    @property
    def nodes_per_group(self) -> int:
        """The most nodes one group touches."""
        return self.most_nodes or max((len(n) for n in self.nodes), default=1)


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


DEEPEP_NVL_PEERS = 8
"""GPUs one DeepEP node joins over NVLink: DeepEP's ``NUM_MAX_NVL_PEERS = 8`` (its RDMA rank is the global rank / 8),
an HGX/DGX server. A larger NVLink domain (GB200 NVL72) is multi-node NVLink, which of the flex backends only
HybridEP spans ("Currently only 'hybridep' backend supports the MNNVL case", ``transformer_config.py`` L899-901
@d98e8a6): DeepEP reaches the rest of the domain as other nodes."""


def flex_layouts(n: int, total: int, g: int) -> tuple[tuple[int, ...], ...]:
    """The ranks per node, in rank order, of each distinct layout of a group of ``n`` consecutive ranks among
    ``total`` on nodes of ``g`` GPUs (groups start every ``n`` ranks; their offsets in a node repeat).

    Examples:
        >>> flex_layouts(32, 96, 72), flex_layouts(16, 64, 8)
        (((32,), (8, 24)), ((8, 8),))
    """
    starts = {(j * n) % g for j in range(min(max(1, total // n), g // math.gcd(n, g)))}
    out = []
    for offset in sorted(starts):
        first = min(n, g - offset)
        rest = n - first
        counts = (first,) + (g,) * (rest // g) + ((rest % g,) if rest % g else ())
        if counts not in out:
            out.append(counts)
    return tuple(out)


def flex_group(p, cluster: Cluster) -> tuple[tuple[tuple[int, ...], ...], Link, bool]:
    """Where plan ``p``'s flex token dispatcher (``Plan.dispatcher``) moves tokens: over the experts' TP x EP ranks,
    consecutive (expert TP fastest, then EP: Megatron-Core's ``tp_ep_group``), in NVLink domains of the cluster's
    nodes -- DeepEP's of at most :data:`DEEPEP_NVL_PEERS`. Returns the groups' layouts (:func:`flex_layouts`), the
    link a group that spans domains crosses (the inter-node link; the intra-node one if none does) and whether one
    does."""
    g = cluster.gpus_per_node
    if p.dispatcher == "deepep":
        g = min(g, DEEPEP_NVL_PEERS)
    layouts = flex_layouts(p.expert_split, p.gpus, g)
    spans = any(len(c) > 1 for c in layouts)
    return layouts, cluster.inter if spans else cluster.intra, spans


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


class _Ranks(Sequence):
    """The groups of one dimension (or the nodes each spans), computed on demand: a million-GPU DP group
    held as tuples took gigabytes (issue 33). Indexing, iteration, ``len`` and equality with a tuple of
    tuples behave as the tuple would."""

    __slots__ = ("total", "size", "stride", "g")

    def __init__(self, total: int, size: int, stride: int, g: int | None):
        self.total, self.size, self.stride, self.g = total, size, stride, g

    def __len__(self) -> int:
        return self.total // self.size

    def _item(self, i: int) -> tuple[int, ...]:
        high, low = divmod(i, self.stride)
        base = low + self.stride * self.size * high
        ranks = range(base, base + self.stride * self.size, self.stride)
        if self.g is None:
            return tuple(ranks)
        g = self.g
        if self.stride < g:  # consecutive ranks step by less than a node: every node between is touched
            return tuple(range(base // g, ranks[-1] // g + 1))
        return tuple(r // g for r in ranks)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self._item(k) for k in range(len(self))[i])
        n = len(self)
        i = i.__index__()
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return self._item(i)

    def __iter__(self):
        return (self._item(k) for k in range(len(self)))

    def __eq__(self, other):
        if isinstance(other, _Ranks | tuple | list):
            return len(self) == len(other) and all(a == tuple(b) for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self):
        return hash((self.total, self.size, self.stride, self.g))

    def __repr__(self):
        return repr(tuple(self)) if len(self) <= 64 else f"<{len(self)} groups of {self.size} ranks, stride {self.stride}>"


def _groups(total: int, size: int, stride: int, g: int):
    return _Ranks(total, size, stride, None), _Ranks(total, size, stride, g)


def _last_members(x: int, foot: int, stride: int, span: int) -> int:
    """How many ranks below ``x`` are the last member of their group (in each footprint of ``foot`` ranks the
    last ``stride`` ranks, those at offset ``span`` = stride x (size - 1) and above)."""
    return x // foot * stride + max(0, x % foot - span)


def _node_hops(s0: int, s1: int, g: int, foot: int, stride: int, span: int, ring: bool) -> int:
    """Hops leaving the node whose ranks are ``s0 .. s1 - 1`` (``s1 < s0 + g`` for a partial last node)."""
    end = s0 + g
    a = min(s1, max(s0, end - stride))  # ranks from a on send to rank + stride, past the node's end
    hops = (s1 - a) - (_last_members(s1, foot, stride, span) - _last_members(a, foot, stride, span))
    if ring:  # last members before s0 + span wrap back to a first member before the node's start
        b = min(s1, s0 + span)
        hops += _last_members(b, foot, stride, span) - _last_members(s0, foot, stride, span)
    return hops


def _span_stats(total: int, size: int, stride: int, g: int, ring: bool) -> tuple[int, int, int]:
    """``(crossing, senders, most_nodes)`` of the groups of ``size`` ranks ``stride`` apart among ``total``
    ranks on nodes of ``g`` GPUs, counted without listing the groups (the listing grows with the cluster).

    A group whose first rank sits at offset ``o`` in its node spans ``(o + span) // g + 1`` nodes when
    ``stride < g`` (span = stride x (size-1); every node between is touched), else ``size``. Every rank
    sends once in its group's ring (all but the last in a chain): to rank + stride, leaving its node when
    that is past the node's end, or, for the last member, back to the first, leaving when that is before
    the node's start. Both depend on a node's start modulo the footprint ``size * stride`` only, so the
    distinct node phases are counted once each.
    """
    if size == 1:
        return 0, 0, 1
    foot, span = size * stride, stride * (size - 1)
    heights = total // foot
    if stride >= g:
        crossing, most = total // size, size
    else:
        # Group bases are low + foot * high (low < stride < g); their offsets in the node repeat with
        # the period g / gcd(foot, g) in high.
        period = g // math.gcd(foot, g)
        threshold = g - span  # offset from which a group leaves its node
        crossing, most_offset = 0, 0
        for j in range(min(period, heights)):
            count = heights // period + (1 if j < heights % period else 0)
            c = foot * j % g
            lo_hi = [(c, min(c + stride, g)), (0, max(0, c + stride - g))]  # offsets before and after wrapping
            crossing += count * sum(max(0, b - max(a, threshold)) for a, b in lo_hi)
            most_offset = max(most_offset, *(b - 1 for a, b in lo_hi if b > a))
        most = (most_offset + span) // g + 1
    # Hops leaving a node: a count over two windows of the node's ranks (see _node_hops), linear in the
    # node's start between the points where a window edge meets a footprint's last-member boundary (offset
    # 0 or span). Its largest value over the nodes' starts (every g-th rank) is at a start next to one of
    # those points, so only those are counted: at most eight per footprint period.
    full, senders = total // g, 0
    if total % g:  # a last, partial node
        senders = _node_hops(full * g, total, g, foot, stride, span, ring)
    if full:
        w = min(g, span)
        residues = {(c - off) % foot for c in (0, span) for off in (g - min(stride, g), g, 0, w)}
        d = math.gcd(foot, g)
        if full >= foot // d:  # the nodes' starts modulo foot are every multiple of d
            starts = {q % foot for r in residues for q in (r // d * d, -(-r // d) * d)}
        else:  # fewer nodes than phases: fewer than g / d footprints, walk them
            last = (full - 1) * g
            starts = {0, last}
            for k in range(last // foot + 2):
                for r in residues:
                    for q in ((k * foot + r) // g * g, -(-(k * foot + r) // g) * g):
                        if 0 <= q <= last:
                            starts.add(q)
        senders = max(senders, *(_node_hops(s0, s0 + g, g, foot, stride, span, ring) for s0 in starts))
    return crossing, senders, most


def _place(cluster: Cluster, total: int, size: int, stride: int, dim: str = "", ring: bool = True,
           spread: bool = True) -> GroupPlacement:
    g = cluster.gpus_per_node
    groups, nodes = _groups(total, size, stride, g)
    crossing, senders, most = _span_stats(total, size, stride, g, ring)
    rings = 0
    if crossing:
        intra, inter = cluster.intra, cluster.inter
        if ring and spread:
            share, rings = _ring_share(inter, total, size, stride, g)
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
    return GroupPlacement(dim, size, stride, groups, nodes, crossing, senders, link, share, rings, most)


def _ranks_on_nodes(o: int, size: int, stride: int, g: int, j: int) -> int:
    """How many of the ranks ``o + stride * i`` (i < size) fall on the ``j``-th node counted from the first one's."""
    lo = max(0, -(-(j * g - o) // stride))
    hi = min(size - 1, ((j + 1) * g - 1 - o) // stride)
    return max(0, hi - lo + 1)


def sparsest_node(total: int, size: int, stride: int, g: int) -> int:
    """The fewest ranks a group of ``size`` ranks ``stride`` apart (among ``total`` ranks on nodes of ``g`` GPUs) has on
    one of the nodes it spans, over the groups that cross nodes (``g`` when none does). What an all-to-all over such
    a group sends across nodes depends on it: a rank with k group peers in its node sends (size - k) / size of its
    buffer over the network.

    Examples:
        >>> sparsest_node(16, 8, 1, 4), sparsest_node(24, 4, 1, 6), sparsest_node(64, 8, 8, 8)
        (4, 2, 1)
    """
    return _sparsest(total, size, stride, g)[0] if size > 1 else g


def _sparsest(total: int, size: int, stride: int, g: int) -> tuple[int, bool]:
    # (k, local): the fewest ranks a crossing group has on one node, and whether some groups stay inside a node.
    # Counted without listing the groups (issue 33): a group's ranks per node depend only on its first rank's offset
    # in its node, and the group bases low + size * stride * high take at most g offsets.
    if stride >= g:
        return 1, False
    foot, span = size * stride, stride * (size - 1)
    heights = total // foot
    period = g // math.gcd(foot, g)
    k, local = g, False
    for o in sorted({(low + foot * j) % g for low in range(stride) for j in range(min(period, heights))}):
        last = (o + span) // g
        if last == 0:
            local = True  # a group inside one node: its GPUs send nothing across
            continue
        inner = range(1, min(last, stride + 1))
        k = min(k, *(_ranks_on_nodes(o, size, stride, g, j) for j in (0, last, *inner)))
    return k, local


def _ring_share(inter: Link, total: int, size: int, stride: int, g: int) -> tuple[float, int]:
    """``(line rate, rings)`` one crossing group's collectives get across nodes, as NCCL spreads its
    rings over a node's NICs (module docstring): k rings for the k ranks the group has on its
    sparsest node; each at one HCA's rate (rails), or at the node's NICs' summed rate divided among
    the dimension's crossing GPUs on that node (shared NICs).

    Counted without listing the groups (issue 33: a million-GPU cluster): a group's ranks per node depend
    only on its first rank's offset in its node, and the group bases ``low + size * stride * high`` take at
    most ``g`` offsets; on a group's inner nodes the count repeats with a period of at most ``stride`` nodes.
    """
    if stride >= g:  # every rank of a group on a node of its own: one ring, every GPU of a node sends
        return inter.share(min(g, total)), 1
    k, local = _sparsest(total, size, stride, g)
    gpus = min(g, total)
    if local:  # some groups stay inside a node: count the crossing groups' GPUs on the fullest node
        # Shifting every rank by lcm(size x stride, g) maps groups onto groups and nodes onto nodes, so the
        # first lcm ranks hold every node's count (a group fits in a node only when size x stride < 2g).
        first = min(total, math.lcm(size * stride, g))
        nodes = _Ranks(first, size, stride, g)
        on: dict[int, int] = {}
        for i, span_nodes in enumerate(nodes):
            if len(span_nodes) > 1:
                for r in _Ranks(first, size, stride, None)[i]:
                    on[r // g] = on.get(r // g, 0) + 1
        gpus = max(on.values())
    return k * inter.share(gpus), k


def placement(plan, cluster: Cluster) -> dict[str, GroupPlacement]:
    """Every group dimension of ``plan`` on ``cluster``: "TP", "DP", "PP", and "CP", "EP", "shard" and
    "replica" when the plan has them; see :class:`GroupPlacement` and the module docstring.

    A CP group is ``cp`` consecutive TP blocks (stride ``tp``); a DP group strides by ``tp * cp`` and
    a PP group by ``tp * cp * dp``.

    An EP group is ``ep`` ranks ``etp`` apart (the experts' grid, :attr:`parallelsel.Plan.expert_tp`; the dense TP by
    default, so EP folds over CP ranks as Megatron-Core's expert rank generator lays it out). An HSDP shard group is ``shard`` consecutive DP ranks (stride ``tp``), its replica
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
        out["EP"] = _cached(cluster, n, plan.ep, plan.expert_tp, "EP", True, False)
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
    flex = bool(p.dispatcher) and not dispatcher_violations(workload, p)   # priced as comm prices it
    if p.ep > 1 or flex:
        if flex:   # the flex dispatcher: one copy of a token a node across the network (parallelsel.core.comm)
            _, link, spans = flex_group(p, cluster)
            where = {"spans_nodes": spans, "link": link.name, "bandwidth": link.bandwidth}
        else:
            where = _link_values(groups["EP"])
        out.append(Reason("ep_group", {"ep": p.ep, "dispatcher": p.dispatcher if flex else None, **where}))
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
