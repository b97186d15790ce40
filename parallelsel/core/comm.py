"""Collectives under the alpha-beta model, and each strategy's traffic per training step.

A message of N bytes over a link costs ``alpha + N / beta`` (latency alpha; beta the bandwidth a
large collective reaches on the link, :attr:`parallelsel.Link.achieved`: the line rate times the
nccl-tests bus-bandwidth share of each preset). Ring algorithms (Thakur, Rabenseifner & Gropp 2005, "Optimization
of Collective Communication Operations in MPICH", §4) move, per rank, a fixed multiple of the
buffer -- the *bus factor* that nccl-tests uses to turn algorithm bandwidth into bus bandwidth
(NVIDIA nccl-tests, ``doc/PERFORMANCE.md``). ``nbytes`` is always the full, unsharded buffer.

:func:`traffic` lists, for a workload, plan and cluster, every collective a step issues, placed on
the link its group actually crosses (:mod:`parallelsel.core.placement`: a group spanning nodes is priced
on min(intra, inter) bandwidth and the larger latency). Ranks are ordered TP fastest, then DP, then
PP (:mod:`parallelsel.core.plan`): a TP group is ``tp`` consecutive GPUs (stride 1), a DP group has
stride ``tp``, a PP group stride ``tp * dp``.

Examples:
    >>> import parallelsel as ps
    >>> collective_time("all-reduce", 1e9, 8, ps.Link("x", 100e9, 0.0))   # 2 * 7/8 * 1e9 / 100e9
    0.0175
"""

from __future__ import annotations

import math

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from ._check import ParallelselError, choice, positive_int, positive_number
from .hardware import Cluster, Link
from .memory import candidate_stages, fsdp_units, layer_shape, layers_on, stage_params
from .stacks import STACKS, effective_zero, sp_layout_copies, stack_fused, wire_bytes
from .kernels import attention_time, layer_gemms, moe_layer_parts
from .placement import flex_group, group_link, sparsest_node
from .plan import dispatcher_violations, ep_overlap_violations, p2p_overlap_on, tp_overlap_on, with_stack_split

__all__ = ["DDP_BUCKET_BYTES", "NCCL_MAX_CHANNELS", "NCCL_SM_BANDWIDTH", "OPS", "Traffic", "bus_factor", "collective_time", "traffic"]

NCCL_SM_BANDWIDTH = 190e9 / 16
"""Bus bandwidth one SM carries for an NCCL collective, bytes/s. NCCL runs a collective as one thread block
(CTA) per channel, each on an SM of its own that no compute kernel shares, and opens "the minimal number of
SMs to achieve the performance of the platform": about 2 on a PCIe system with one NIC (12-24 GB/s), "16 SMs"
on a DGX with 8 NICs and "a top speed of 190 GB/s" (NCCL's maintainer, NVIDIA/nccl issue #689, 2023-08; "NCCL
CTAs won't share an SM with compute kernels"). So a collective holds about its bus bandwidth / 11.9 GB/s of
SMs (:attr:`Traffic.sms`), up to :data:`NCCL_MAX_CHANNELS`. An estimate from two platforms; the memory
bandwidth its copies take from the kernels beside it (NVIDIA/nccl issue #1428) is not counted."""

NCCL_MAX_CHANNELS = 32
"""Channels (one SM each) an NCCL collective runs on at most: ``MAXCHANNELS`` in NCCL's
``src/include/device.h`` (32 in NCCL 2.x)."""

OPS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "p2p")

# Latency terms per op for a ring of n ranks (Thakur et al. 2005 §4): all-reduce = reduce-scatter
# followed by all-gather, 2(n-1) steps; the others n-1 steps; a point-to-point send, one.
_STEPS = {"all-reduce": 2, "all-gather": 1, "reduce-scatter": 1, "all-to-all": 1}


def bus_factor(op: str, n: int) -> float:
    """Bytes each rank sends per byte of buffer: nccl-tests' bus-bandwidth factor.

    nccl-tests ``doc/PERFORMANCE.md``: busbw = algbw x 2(n-1)/n for all-reduce, x (n-1)/n for
    all-gather, reduce-scatter and all-to-all, x 1 for point-to-point (and broadcast/reduce). These
    are the ring volumes of Thakur, Rabenseifner & Gropp 2005 §4.

    Examples:
        >>> bus_factor("all-reduce", 8), bus_factor("all-gather", 8), bus_factor("p2p", 2)
        (1.75, 0.875, 1.0)
    """
    choice("op", op, OPS)
    n = positive_int("n", n)
    return _bus(op, n)


def _bus(op: str, n: int) -> float:
    if op == "p2p":
        return 1.0
    return _STEPS[op] * (n - 1) / n


def collective_time(op: str, nbytes, ranks: int, link: Link) -> float:
    """Seconds for one ``op`` on a buffer of ``nbytes`` among ``ranks`` ranks over ``link``.

    Ring alpha-beta costs (Thakur, Rabenseifner & Gropp 2005 §4), with alpha = ``link.latency``
    and beta = ``link.achieved`` (line rate x the share nccl-tests reaches; 1.0 for a hand-made link):

    * all-reduce: 2(n-1) alpha + 2(n-1)/n x N/beta
    * all-gather, reduce-scatter: (n-1) alpha + (n-1)/n x N/beta
    * all-to-all: (n-1) alpha + (n-1)/n x N/beta (each rank keeps 1/n of its buffer)
    * p2p: alpha + N/beta

    One rank (or zero bytes) costs nothing.
    """
    choice("op", op, OPS)
    nbytes = positive_number("nbytes", nbytes, allow_zero=True)
    n = positive_int("ranks", ranks)
    if not isinstance(link, Link):
        raise ParallelselError(f"link={link!r}: must be a Link (e.g. ps.LINKS['nvlink3'])")
    return _time(op, nbytes, n, link)


def _time(op: str, nbytes: float, n: int, link: Link) -> float:
    if n <= 1 or nbytes <= 0:
        return 0.0
    if op == "p2p":
        return link.latency + nbytes / link.achieved
    steps = _STEPS[op] * (n - 1)
    return steps * link.latency + steps / n * nbytes / link.achieved


@dataclass(frozen=True)
class Traffic:
    """One kind of collective a step issues on one device.

    ``strategy``: "DP", "ZeRO", "FSDP", "HSDP", "TP", "PP" or "EP" (" (experts)" appended for the
    expert weights' data-parallel group of an MoE model); ``op``: one of
    :data:`OPS`; ``nbytes``: the full buffer per call; ``calls``: calls per step; ``group``: ranks
    in the collective; ``link``: the name of the link it crosses; ``time``: seconds per step
    (calls x one call); ``overlappable``: whether it can run under computation; ``phase``:
    "forward" or "backward", the pass it runs beside -- an item with one call per step runs beside
    one micro-batch's pass, an item with one call per micro-batch beside all of them; ``units``:
    pieces it is issued in (gradient buckets or FSDP units), of which the last cannot be hidden;
    ``hidden``: seconds of a critical-path item that run under the kernels they are paired with (TP
    overlap's GEMMs, ``_tp_items``; the CP ring's attention blocks, ``_cp_items``), so ``time - hidden`` is exposed. A TP item's ``time`` includes the copies
    made around each sequence-parallel collective: the layout copies of a [b, s, h] stack
    (:func:`parallelsel.core.stacks.sp_layout_copies`), or under TP overlap the staging copies of the
    stack's fused collective matmuls (``_tp_overlap``).
    """

    strategy: str
    op: str
    nbytes: float
    calls: float
    group: int
    link: str
    time: float
    overlappable: bool
    phase: str = "backward"
    units: int = 1
    hidden: float = 0.0

    @property
    def sent(self) -> float:
        """Bytes each rank sends per step: calls x buffer x bus factor (nccl-tests PERFORMANCE.md)."""
        return self.calls * self.nbytes * bus_factor(self.op, self.group)

    @property
    def sms(self) -> float:
        """SMs NCCL holds while this collective runs: its bus bandwidth (:attr:`sent` per second of
        :attr:`time`) over :data:`NCCL_SM_BANDWIDTH`, at least one and at most :data:`NCCL_MAX_CHANNELS`.
        A faster link needs more of them.

        Examples:
            >>> t = Traffic("DP", "all-reduce", 1e9, 1, 8, "x", 1.75e9 / 190e9, True)   # 190 GB/s of bus bandwidth
            >>> round(t.sms, 6)
            16.0
        """
        if self.time <= 0:
            return 0.0
        busbw = self.calls * self.nbytes * _bus(self.op, self.group) / self.time  # (op and group checked at build)
        return min(float(NCCL_MAX_CHANNELS), max(1.0, busbw / NCCL_SM_BANDWIDTH))


DDP_BUCKET_BYTES = 25 * 2**20
"""Gradient bucket size: PyTorch DDP's default ``bucket_cap_mb=25``. Bucketing lets the all-reduce
of early buckets overlap the rest of the backward pass; the last bucket cannot (Li et al. 2020,
"PyTorch Distributed: Experiences on Accelerating Data Parallel Training", §3.2, gradient
bucketing and overlapping computation with communication)."""


def _link(cluster: Cluster, total: int, size: int, stride: int, ring: bool = True, spread: bool = True) -> Link:
    # The link the groups of (size, stride) among `total` ranks are priced on: the one placement
    # rule (parallelsel.core.placement), cached per shape, without argument checks (search hot path).
    # spread=False: point-to-point traffic (CP sends, all-to-all), one port per crossing hop.
    return group_link(cluster, total, size, stride, ring, spread)


def _item(strategy, op, nbytes, calls, group, link, overlappable, phase, units=1, hidden=0.0, copy=0.0) -> Traffic:
    # copy: seconds per call of the copies the stack makes around the collective (layout or staging, _tp_overlap).
    return Traffic(strategy, op, nbytes, calls, group, link.name, calls * (_time(op, nbytes, group, link) + copy),
                   overlappable, phase, units, hidden)


class _Step(NamedTuple):
    """What every strategy's traffic reads: the plan on its cluster and the shape of one step."""

    model: object
    recipe: object
    stack: object  # stacks.Stack: the dtypes its collectives run in
    overlap_tp: bool  # TP collectives overlap GEMMs (plan.tp_overlap_on)
    overlap_p2p: bool  # the pipeline's sends overlap compute (plan.p2p_overlap_on)
    plan: object
    cluster: Cluster
    shape: object  # memory.layer_shape(model)
    m: int  # micro-batches per step
    tokens: int  # b x s: a micro-batch's tokens on one rank (s is seq_len / cp)
    layers: int  # layers on one pipeline stage
    ranks: int  # GPUs of the plan
    attention: tuple = (0.0, 0.0)  # one layer's attention core, forward and backward seconds a micro-batch (CP only)
    moe_parts: tuple = ()  # with EP overlap: an MoE layer's kernels.moe_layer_parts, which the all-to-alls hide under
    flex: bool = False  # the experts' tokens go through the flex dispatcher (Plan.dispatcher, where the plan can)


def traffic(workload, plan, cluster: Cluster) -> tuple[Traffic, ...]:
    """Every collective one device takes part in during a step, with its time on the link it crosses.

    One helper per strategy states its volumes and their sources (m micro-batches per step, b
    micro-batch, s the tokens of a sequence one rank holds -- s/cp with CP --, h hidden, Ψ the
    parameters one device holds for the heaviest stage, split by TP and PP, experts also by EP):

    * DP, ZeRO, FSDP, HSDP (``_dp_items``): the gradients' all-reduce once per step (ZeRO-0);
      reduce-scatter plus all-gather of the same volume (ZeRO-1/2, Rajbhandari et al. 2020 §7.2.1);
      all-gathers before forward and backward and a reduce-scatter per micro-batch, 1.5x the DP
      volume (ZeRO-3/FSDP, Rajbhandari et al. §7.2.2; Zhao et al. 2023 §3.2), over the FSDP units
      of :func:`parallelsel.core.memory.fsdp_units`, checked call by call against a recorded torch run;
      with PP, FSDP runs as torchtitan runs it (:mod:`parallelsel.core.stacks`). Overlappable.
    * TP (``_tp_items``): four all-reduces of b·s·h per layer and micro-batch (Shoeybi et al.
      2019 §3), all-gather + reduce-scatter with SP (Korthikanti et al. 2022 §4.2.2).
    * PP (``_pp_items``): a p2p send of b·s·h/tp per micro-batch and chunk each way
      (Narayanan et al. 2021 §2.2, §4.1).
    * CP (``_cp_items``): each rank's K/V block round the ring (Liu et al. 2023, Ring Attention §3).
    * EP (``_ep_items``): dispatch and combine all-to-alls of b·s·h·top_k per MoE layer
      (Lepikhin et al. 2021; Fedus et al. 2022).

    TP, PP, CP and EP are on the critical path, but PP where the plan overlaps its sends
    (``Plan.p2p_overlap``, :func:`parallelsel.core.plan.p2p_overlap_on`). Not modelled (small next to the above): TP
    collectives of the embedding and loss, the all-reduce of tied embeddings between first and last
    stage, optimizer-step time.
    """
    step = _step(workload, plan, cluster)
    return tuple(item for items in (_dp_items, _tp_items, _moe_tp_items, _pp_items, _cp_items, _ep_items)
                 for item in items(step))


def _step(workload, plan, cluster: Cluster) -> _Step:
    plan = with_stack_split(workload, plan)  # no split stated on layers that do not divide: the stack's own
    sh = layer_shape(workload.model)
    attention = (0.0, 0.0)
    if plan.cp > 1:   # what the ring's transfers run under (_cp_items)
        attention = attention_time(workload.model, plan.micro_batch, workload.seq_len, cluster.device, plan.tp,
                                   plan.cp, workload.attention, stack_fused(workload))
    parts = ()
    if plan.ep_overlap and not ep_overlap_violations(workload, plan):   # (a plan that cannot take it is priced without)
        parts = moe_layer_parts(workload.model, plan.micro_batch, workload.seq_len, cluster.device, plan.tp, plan.cp,
                                plan.ep, plan.sp, plan.recompute, workload.attention,
                                plan.recompute_share(workload.model), tuple(sorted(stack_fused(workload))),
                                _fp8_gemms(workload.recipe, cluster.device), plan.etp)
    return _Step(workload.model, workload.recipe, STACKS[workload.stack], tp_overlap_on(workload, plan),
                 p2p_overlap_on(workload, plan), plan, cluster, sh, max(1, plan.microbatches(workload)),
                 plan.micro_batch * (workload.seq_len // plan.cp), max(plan.layers_per_stage(sh.layers)), plan.gpus,
                 attention, parts, bool(plan.dispatcher) and not dispatcher_violations(workload, plan))


def _fp8_gemms(recipe, device) -> bool:
    """Whether the linear layers' GEMMs run at the FP8 rate: an FP8 recipe on a part with FP8 tensor cores (on one
    without, the plan is refused and timed at the 16-bit rate: parallelsel.core.estimate)."""
    return recipe.gemm == "fp8" and bool(device.fp8_flops)


def critical_items(workload, plan, cluster: Cluster) -> tuple[Traffic, ...]:
    """The collectives of :func:`traffic` that sit on the critical path (TP, PP, CP, EP; the pipeline's p2p
    is overlappable where the stack overlaps the schedule's sends, ``Stack.overlap_pp_p2p``),
    without computing the DP/ZeRO ones: what the search's lower bound adds to a plan's compute."""
    step = _step(workload, plan, cluster)
    return tuple(item for items in (_tp_items, _moe_tp_items, _pp_items, _cp_items, _ep_items) for item in items(step))


def _heaviest_stage(model, plan) -> tuple[float, float, int]:
    """Dense and expert parameters on the most loaded stage's device, and that stage (the step waits for it);
    with an uneven split (``Plan.stage_layers``) every stage holds its own layers."""
    dense, expert = stage_params(model, plan.tp, plan.pp, plan.ep, 0, layers_on(plan, 0), plan.etp)
    heavy = 0
    if plan.pp > 1:
        for i in candidate_stages(plan):
            d2, e2 = stage_params(model, plan.tp, plan.pp, plan.ep, i, layers_on(plan, i), plan.etp)
            if d2 + e2 > dense + expert:
                dense, expert, heavy = d2, e2, i
    return dense, expert, heavy


def _dp_items(st: _Step) -> list[Traffic]:
    """Data parallel, ZeRO and FSDP: dense parameters over dp x cp ranks, experts over their data-parallel group,
    tp x dp x cp / (etp x ep) ranks ``etp x ep`` apart (dp x cp / ep when the experts take the dense TP).

    With context parallelism the weights are replicated over dp x cp ranks, and gradients are
    reduced over all of them (Megatron-LM's data-parallel group "with context parallel"). The FSDP
    units are those of the heaviest stage (:func:`parallelsel.core.memory.fsdp_units`, the same wrapping
    the gather peak reads): blocks are resharded after forward and re-gathered for backward; the
    root (embedding, final norm, head) is not.
    """
    plan = st.plan
    dense, expert, heavy = _heaviest_stage(st.model, plan)
    units = fsdp_units(st.model, plan.tp, plan.pp, plan.ep, heavy, plan.reshard_after_forward, layers_on(plan, heavy),
                       plan.etp)
    size = plan.dp * plan.cp
    groups = [(dense, size, plan.tp, size if plan.shard is None else plan.shard * plan.cp, "")]
    if expert:
        # HSDP's shard group over the experts' grid: the dense shard group's ranks x tp / (etp x ep).
        e_size = plan.expert_dp
        e_shard = e_size if plan.shard is None else max(1, plan.shard * plan.cp * plan.tp // plan.expert_split)
        groups.append((expert, e_size, plan.expert_split, e_shard, " (experts)"))
    out: list[Traffic] = []
    for n_params, size, stride, shard, tag in groups:
        if size > 1 and n_params > 0:
            out += _dp_group_items(st, n_params, size, stride, min(size, shard), tag, units)
    return out


def _dp_group_items(st: _Step, n_params, size: int, stride: int, shard: int, tag: str, units) -> list[Traffic]:
    """One data-parallel group's collectives (``tag`` names the experts' group).

    Bytes per element are the stack's (:func:`parallelsel.core.stacks.wire_bytes`): gradients reduced in
    fp32 on Megatron-Core and torchtitan (and DDP under autocast), in bf16 on DeepSpeed; parameters
    gathered in bf16. With CP the group is DP x CP (every stack shards and reduces over it), an
    HSDP shard group ``shard`` DP ranks x CP.

    * ZeRO-0 (DP): one all-reduce of the gradients (Ψ x reduce bytes) per step, overlapped with
      the last micro-batch's backward (gradients accumulate locally before it), in DDP buckets.
    * ZeRO-1: reduce-scatter of the gradients and all-gather of the updated weights once per step --
      the same volume as the all-reduce (Rajbhandari et al. 2020 §7.2.1). ZeRO-2: the gradients are
      sharded, so each micro-batch's backward reduce-scatters them (m calls); one all-gather. PP with
      FSDP runs as ZeRO-1 (torchtitan: one all-gather and one reduce-scatter per step).
    * ZeRO-3 / FSDP: see ``_fsdp_items``.
    * HSDP: with a shard group smaller than dp, each shard's gradient is then all-reduced across the
      dp/shard replicas (stride: one shard group).

    With a pipeline on a stack that reduces only after the schedule drains (``Stack.pp_reduce_after_flush``:
    DeepSpeed's ``TrainSchedule`` issues ReduceGrads and OptimizerStep after the last micro-batch), none of it
    overlaps compute.
    """
    plan, cluster, zero = st.plan, st.cluster, effective_zero(st.plan)
    hide = not (plan.pp > 1 and st.stack.pp_reduce_after_flush)  # DeepSpeed's pipeline reduces after it drains
    g_wire, w_wire = wire_bytes(st.stack, st.recipe)
    g_bytes, w_bytes = g_wire * n_params, w_wire * n_params
    buckets = max(1, -(-int(g_bytes) // DDP_BUCKET_BYTES))
    if zero == 0:
        return [_item("DP" + tag, "all-reduce", g_bytes, 1, size, _link(cluster, st.ranks, size, stride), hide,
                      "backward", buckets)]
    link = _link(cluster, st.ranks, shard, stride)
    if zero in (1, 2):
        kind = ("FSDP" if plan.zero == 3 else "ZeRO") + tag
        out = [_item(kind, "reduce-scatter", g_bytes, 1 if zero == 1 else st.m, shard, link, hide, "backward", buckets),
               _item(kind, "all-gather", w_bytes, 1, shard, link, hide, "forward", buckets)]
    else:
        out = _fsdp_items(st, "FSDP" + tag, g_bytes, w_bytes, shard, link, units, experts=bool(tag))
    if shard < size:
        calls = 1 if zero == 1 or (zero == 3 and plan.no_sync) else st.m
        out.append(_item("HSDP" + tag, "all-reduce", g_bytes / shard, calls, size // shard,
                         _link(cluster, st.ranks, size // shard, stride * shard), hide, "backward"))
    return out


def _fsdp_items(st: _Step, kind: str, g_bytes, w_bytes, shard: int, link: Link, units, experts: bool) -> list[Traffic]:
    """ZeRO-3 / FSDP: all-gather the weights before each micro-batch's forward and again before its
    backward, reduce-scatter the gradients after it: 1.5x the DP volume per micro-batch (Rajbhandari
    et al. §7.2.2; Zhao et al. 2023 §3.2).

    The units are :func:`parallelsel.core.memory.fsdp_units` (torchtitan's wrapping): the root
    (embedding, final norm, head) is not resharded after forward, so the backward re-gathers only
    the blocks; with ``reshard_after_forward=False`` (SHARD_GRAD_OP) nothing is re-gathered for
    backward, but every micro-batch's forward still gathers (PyTorch reshards after backward). With
    ``no_sync`` (FSDP2 ``set_requires_gradient_sync(False)``) the gradients are reduce-scattered
    once per step, on the last micro-batch. Checked call by call against a recorded torch run
    (parallelsel/course/data/torch_fsdp_accumulation.json).
    """
    plan, m = st.plan, st.m
    n_units = sum(u.count for u in units)
    root = sum(u.params * u.count for u in units if not u.reshard_after_forward)
    held = wire_bytes(st.stack, st.recipe)[1] * (0.0 if experts else root) if plan.reshard_after_forward else w_bytes
    out = [_item(kind, "all-gather", w_bytes, m, shard, link, True, "forward", n_units)]
    if w_bytes - held > 0:
        out.append(_item(kind, "all-gather", w_bytes - held, m, shard, link, True, "backward",
                         max(1, n_units - (1 if held else 0))))
    out.append(_item(kind, "reduce-scatter", g_bytes, 1 if plan.no_sync else m, shard, link, True, "backward", n_units))
    return out


def _tp_items(st: _Step) -> list[Traffic]:
    """Tensor (and sequence) parallel: per layer and micro-batch, two all-reduces of b·s·h activations
    in forward and two in backward (Shoeybi et al. 2019 §3, Figure 4); with SP each becomes an
    all-gather plus a reduce-scatter of the same total volume (Korthikanti et al. 2022 §4.2.2);
    full recomputation repeats the forward ones; op-level SAC repeats the all-gathers (not in its save
    list, ``parallelize_llama.py`` L218-227 @820504e) but keeps the reduce-scatter outputs. Under an FP8
    recipe the SP all-gather feeding a Float8Linear sends FP8 (torchtitan ``docs/float8.md`` @820504e:
    float8 all-gather of TP inputs by default with tensorwise scaling). On a stack whose activations are
    [b, s, h] each call also pays the copies PyTorch makes to gather or scatter along the sequence
    (:func:`parallelsel.core.stacks.sp_layout_copies`: the unsharded tensor read and written at the
    achieved HBM rate), except where TP overlap fuses the collective with its matmul. On the critical path,
    except what TP overlap hides (:func:`_tp_overlap`)."""
    plan = st.plan
    if plan.tp <= 1:
        return []
    x = st.tokens * st.shape.hidden * st.recipe.activation
    share = plan.recompute_share(st.model)
    redo = {"full": 2 * share, "op": 2 * share}.get(plan.recompute, 0.0)
    # An MoE layer's MLP half is the experts' (_moe_tp_items): the dense collectives are the attention's only.
    blocks = 1 if st.model.is_moe else 2
    calls = round(st.layers * st.m * (4 + redo) * blocks / 2)
    link = _link(st.cluster, st.ranks, plan.tp, 1)
    if plan.sp:
        rs_calls = calls if plan.recompute != "op" else st.layers * st.m * 2 * blocks
        ag_bytes = x / st.recipe.activation if st.recipe.gemm == "fp8" else x
        if st.overlap_tp:
            ag, rs, ag_copy, rs_copy = _tp_overlap(st, ag_bytes, x, link, calls, rs_calls)
        else:
            ag = rs = 0.0
            ag_copy, rs_copy = _layout_copy_seconds(st, ag_bytes, x)
        return [_item("TP", "all-gather", ag_bytes, calls, plan.tp, link, False, "forward", hidden=ag, copy=ag_copy),
                _item("TP", "reduce-scatter", x, rs_calls, plan.tp, link, False, "forward", hidden=rs,
                      copy=rs_copy)]
    return [_item("TP", "all-reduce", x, calls, plan.tp, link, False, "forward")]


def _moe_tp_items(st: _Step) -> list[Traffic]:
    """An MoE layer's tensor-parallel collectives under Megatron-Core's all-to-all dispatcher, over the experts'
    TP group (``Plan.expert_tp``: the dense TP by default, arguments.py L587-588 @d98e8a6): the tokens a rank
    received from the all-to-all are all-gathered over it before the experts, and the experts' partial outputs
    reduce-scattered before the combining all-to-all (token_dispatcher.py core_r0.9.0 L532-538, L578-584;
    d98e8a6 L741-751, L824-833); backward mirrors them. Each gathers the routed copies of the tokens of etp
    sequence shards: top_k x etp / tp times a dense layer's sequence-parallel collective (balanced routing), in
    16-bit; no TP overlap pairs it with a GEMM (Transformer Engine's userbuffers serve the dense linear layers):
    on the critical path."""
    plan = st.plan
    etp = plan.expert_tp
    if etp <= 1 or not st.model.is_moe or st.flex:   # the flex dispatcher's group spans expert TP (_ep_items)
        return []
    y = st.model.routed_tokens(st.tokens, plan.tp, plan.etp) * st.shape.hidden * st.recipe.activation
    # A full recompute repeats the layer's forward, these collectives with it, on the layers it recomputes; like
    # the all-to-alls (_ep_items), op-level SAC keeps their outputs.
    redo = plan.recompute_share(st.model) if plan.recompute == "full" else 0.0
    calls = round(st.layers * st.m * (2 + redo))
    link = _link(st.cluster, st.ranks, etp, 1)
    return [_item("TP", "all-gather", y, calls, etp, link, False, "forward"),
            _item("TP", "reduce-scatter", y, calls, etp, link, False, "forward")]


def _layout_copy_seconds(st: _Step, ag_bytes: float, x: float) -> tuple[float, float]:
    # Seconds per all-gather and per reduce-scatter of the layout copies around a plain SP collective.
    ag_copies, rs_copies = sp_layout_copies(st.stack, st.plan.micro_batch)
    rate = st.cluster.device.memory_rate
    return ag_copies * 2 * ag_bytes / rate, rs_copies * 2 * x / rate


def _tp_overlap(st: _Step, ag_bytes: float, x: float, link: Link, ag_calls: int,
                rs_calls: int) -> tuple[float, float, float, float]:
    """Seconds per step that TP overlap hides of the SP all-gathers and reduce-scatters, and the copy seconds
    per call around them: ``(ag_hidden, rs_hidden, ag_copy, rs_copy)``.

    The pairs are Transformer Engine's for Megatron-Core's ``--tp-comm-overlap``
    (``transformer_engine/pytorch/module/base.py`` ``initialize_ub``; Megatron-LM
    ``megatron/core/model_parallel_config.py`` L265-339: ``tp_comm_overlap_ag``/``_rs`` and the bulk
    wgrad/dgrad overlaps on by default): forward, the all-gather of the sequence-parallel input runs
    under the QKV and FC1 GEMMs (split into tp chunks, ring exchange) and the reduce-scatters under the
    attention-projection and FC2 GEMMs (pipelined); backward, the all-gather of the output gradient
    runs under the projection and FC2 input-gradient GEMMs and the reduce-scatter of the input gradient
    under the QKV and FC1 weight-gradient GEMMs (bulk); a fully recomputed forward pairs as the forward
    (for the layers it recomputes). A stack fuses the pairs its ``Stack.tp_overlap_pairs`` names; the
    other calls stay plain, with their layout copies (:func:`parallelsel.core.stacks.sp_layout_copies`) --
    among them op-level SAC's recomputed all-gathers, which feed the weight-gradient GEMM as its transposed
    operand, a shape PyTorch's micro-pipeline pass does not fuse. A collective of C seconds beside a GEMM of
    G (at the FP8 rate where the recipe runs its GEMMs in FP8) hides min(C, G) less one of its tp chunks
    (C / tp: the chunk that starts the ring or ends the pipeline has no GEMM beside it).

    ``Stack.tp_overlap_staging`` ``"symmetric-memory"`` (PyTorch's fused collective matmuls,
    ``torch/distributed/_symmetric_memory/__init__.py``) also pays, per fused call, the copies that
    implementation makes outside its pipeline: the all-gather copies its own shard into the peer-visible
    buffer before the first matmul, not overlapped (``_pipelined_multi_all_gather_and_consume``: "giving up
    the chance to overlap 'mv' and 'b' with the first shard_consumer"); the reduce-scatter sums the tp
    partial products it received in a pass of its own (``reduce_partials``: reads them all, writes its
    shard). The restrides the pass asks of [b, s, h] operands are not charged: under ``torch.compile`` the
    Inductor kernel that produces the operand writes it in the layout asked for. Not modelled: the SMs (or
    copy engines) the communication takes from the GEMM, and the efficiency the pairs lose by running their
    GEMM as tp GEMMs of 1/tp of the rows each; so the gain comes out high more often than low.
    """
    tp, dev = st.plan.tp, st.cluster.device
    fp8 = _fp8_gemms(st.recipe, dev)
    c_ag, c_rs = _time("all-gather", ag_bytes, tp, link), _time("reduce-scatter", x, tp, link)
    forwards = 1 + (st.plan.recompute_share(st.model) if st.plan.recompute == "full" else 0.0)
    ag_pairs, rs_pairs = _fused_pairs(st.model, st.tokens, tp, st.plan.ep, st.stack.tp_overlap_pairs, forwards, dev, fp8)
    per = st.layers * st.m
    # Fused calls are some of the item's calls (which _tp_items rounds to whole calls): never more.
    n_ag = min(ag_calls, per * sum(w for _, w in ag_pairs))
    n_rs = min(rs_calls, per * sum(w for _, w in rs_pairs))

    def hidden(c: float, pairs) -> float:
        return per * sum(w * max(0.0, min(c, g) - c / tp) for g, w in pairs)

    plain_ag, plain_rs = _layout_copy_seconds(st, ag_bytes, x)
    stage_ag = stage_rs = 0.0  # copy seconds per fused call
    if st.stack.tp_overlap_staging == "symmetric-memory":
        stage_ag = 2 * ag_bytes / tp / dev.memory_rate
        stage_rs = x * (1 + 1 / tp) / dev.memory_rate
    ag_copy = (n_ag * stage_ag + (ag_calls - n_ag) * plain_ag) / ag_calls
    rs_copy = (n_rs * stage_rs + (rs_calls - n_rs) * plain_rs) / rs_calls
    return hidden(c_ag, ag_pairs), hidden(c_rs, rs_pairs), ag_copy, rs_copy


@lru_cache(maxsize=4096)
def _fused_pairs(model, tokens: int, tp: int, ep: int, pairs: tuple, forwards: float, device, fp8: bool) -> tuple:
    # (GEMM seconds, calls per layer and micro-batch) beside which the stack's TP overlap runs its all-gathers and
    # its reduce-scatters (Stack.tp_overlap_pairs); a full recompute repeats the forward pairs on the share of the
    # layers it recomputes (``forwards`` = 1 + Plan.recompute_share), as _tp_items counts the calls. The GEMMs run at
    # the FP8 rate under an FP8 recipe. Cached: the search asks it of many plans with the same layer shapes.
    # An MoE layer's experts run outside the overlap (_moe_tp_items): only the attention's pairs remain.
    g = {k.name: k for k in layer_gemms(model, tokens, tp, ep)}
    up, down = ((), ()) if model.is_moe else (("fc1",), ("fc2",))
    ag, rs = [], []
    if "forward" in pairs:
        ag += [(g[n], forwards) for n in ("qkv",) + up]
        rs += [(g[n], forwards) for n in ("proj",) + down]
    if "backward-ag" in pairs:
        ag += [(g[n].backward[0], 1.0) for n in ("proj",) + down]
    if "backward-rs" in pairs:
        rs += [(g[n].backward[1], 1.0) for n in ("qkv",) + up]
    return tuple((k.time(device, fp8), w) for k, w in ag), tuple((k.time(device, fp8), w) for k, w in rs)


def _pp_items(st: _Step) -> list[Traffic]:
    """Pipeline parallel: per micro-batch and model chunk, a p2p send of b·s·h activations forward and
    of their gradient backward (Narayanan et al. 2021 §2.2); with TP the scatter/gather optimisation
    (§4.1) sends 1/tp of it over each rank's link. On the critical path, unless the stack overlaps the
    schedule's sends with compute (``Stack.overlap_pp_p2p``: Megatron-Core's interleaved schedule); the
    link is the one between the farthest-apart adjacent stages."""
    plan = st.plan
    if plan.pp <= 1:
        return []
    x = st.tokens * st.shape.hidden * st.recipe.activation / plan.tp
    link = _link(st.cluster, st.ranks, plan.pp, plan.tp * plan.cp * plan.dp, ring=False)
    # Activations forward, their gradients backward: one send each way per micro-batch and chunk.
    return [_item("PP", "p2p", x, st.m * plan.chunks, 2, link, st.overlap_p2p, phase) for phase in ("forward", "backward")]


def _cp_items(st: _Step) -> list[Traffic]:
    """Context parallel (ring attention): each rank's K and V block (its s/cp tokens, its 1/tp of the
    KV heads) goes round the ring: cp - 1 hops in forward; in backward the blocks go round again with
    their gradients (2 (cp - 1)); full or selective recomputation repeats the forward hops (Liu et al. 2023,
    Ring Attention §3; Megatron-LM's p2p context parallelism).

    Each hop runs under the attention of the block the rank already holds: the ring splits a layer's
    attention into cp steps and sends the next step's block while it computes the current one (Liu et al.
    2023 §3; Transformer Engine's ``AttnFuncWithCPAndKVP2P``, ``transformer_engine/pytorch/attention``:
    "overlap current-step compute with next-step communication"). A forward hop of C seconds beside a step
    of A/cp (A the layer's attention forward on this rank, :func:`parallelsel.core.kernels.attention_time`)
    hides min(C, A/cp); a backward step sends two blocks (K/V and their gradients) beside B/cp. The rest,
    a slow link's excess over the step it hides under, is exposed."""
    plan = st.plan
    if plan.cp <= 1:
        return []
    x = 2 * st.tokens * st.shape.kv_dim * st.recipe.activation / plan.tp
    # Full and selective recomputation both re-run the attention core, ring and all (Megatron-Core recomputes TE's
    # context-parallel attention under --recompute-granularity selective); op-level SAC saves its output.
    forwards = 2 if plan.recompute in ("full", "selective") else 1
    hops = (forwards + 2) * (plan.cp - 1)
    link = _link(st.cluster, st.ranks, plan.cp, plan.tp, spread=False)
    hop = _time("p2p", x, 2, link)
    a_fwd, a_bwd = st.attention
    per_layer = (plan.cp - 1) * (forwards * min(hop, a_fwd / plan.cp) + min(2 * hop, a_bwd / plan.cp))
    return [_item("CP", "p2p", x, st.layers * st.m * hops, 2, link, False, "forward",
                  hidden=st.layers * st.m * per_layer)]


def _ep_items(st: _Step) -> list[Traffic]:
    """Expert parallel (MoE): per MoE layer and micro-batch, two all-to-alls (dispatch, combine) of
    b·s·h·top_k activations in forward and two in backward (Lepikhin et al. 2021, GShard; Fedus et
    al. 2022, Switch Transformer), 1/tp of it with SP (tokens are sequence-sharded); full
    recomputation repeats the forward two. On the critical path."""
    plan = st.plan
    if not st.shape.experts or (plan.ep <= 1 and not st.flex):
        return []
    x = st.tokens * st.shape.hidden * st.model.top_k * st.recipe.activation / (plan.tp if plan.sp else 1)
    redo = plan.recompute_share(st.model) if plan.recompute == "full" else 0.0
    calls = round(st.layers * st.m * (4 + 2 * redo))
    if st.flex:   # the flex dispatcher: one group over the experts' TP x EP ranks
        layouts, link, _ = flex_group(plan, st.cluster)
        x, one = _flex_dispatch(x / st.model.top_k, st.model.experts, st.model.top_k, plan.expert_tp, layouts,
                                st.cluster.intra, st.cluster.inter)
        size = plan.expert_split
    else:
        stride = plan.expert_tp  # EP ranks sit expert-TP apart (the experts' grid: expert TP fastest, then EP)
        link = _link(st.cluster, st.ranks, plan.ep, stride, spread=False)
        foot = plan.ep * stride
        local = sparsest_node(foot * -(-st.ranks // foot), plan.ep, stride, st.cluster.gpus_per_node)
        one = _all_to_all_time(x, plan.ep, local, st.cluster.intra, link)
        size = plan.ep
    hidden = 0.0
    if st.moe_parts:   # Plan.ep_overlap: the paired layers' all-to-alls under the other micro-batch's compute
        pairs = _paired_share(plan, st.m) * st.layers * st.m
        hidden = min(calls * one, pairs * ep_overlap_saving(*st.moe_parts, one))
    return [Traffic("EP", "all-to-all", x, calls, size, link.name, calls * one, False, "forward", hidden=hidden)]


def flex_copies(experts: int, top_k: int, counts: tuple[int, ...], etp: int = 1, at: int = 0) -> tuple[float, float]:
    """Expected copies of one token a flex dispatcher (DeepEP, HybridEP) sends from a rank on node ``at`` of its group,
    over the network and over NVLink, when the group's ranks sit ``counts`` to a node (in rank order) and the token
    picks ``top_k`` of ``experts`` experts uniformly (balanced routing): ``(network, nvlink)``.

    The group is the experts' TP x EP ranks, expert TP fastest (Megatron-Core's ``tp_ep_group``): each run of ``etp``
    ranks holds the shards of experts / EP experts, and a token picked for an expert goes to all its ``etp`` shards
    (``token_dispatcher.py`` L1836-1859, L1906-1916 @d98e8a6). It sends a token once to each other node that hosts
    one of its experts -- to the rank of the same local index there, which forwards it over NVLink to the ranks it
    is for -- and once to each other rank of its own node that does ("removes redundant tokens during cross-node
    communication", Megatron-Core ``moe/README.md`` @d98e8a6; DeepSeek-V3 technical report, arXiv:2412.19437,
    §3.2.2: IB to the GPU with the same in-node index, then NVLink). A set of e experts is missed with probability
    C(experts - e, top_k) / C(experts, top_k); a node of c ranks hosts experts / EP x ceil(c / etp) of them, a rank
    experts / EP. The all-to-all dispatcher sends top_k x etp copies, those for ranks on other nodes over the network.

    Examples:
        >>> [round(c, 3) for c in flex_copies(128, 8, (8, 8))]   # Qwen3-30B-A3B, EP16 over two nodes: the all-to-all sends 4 over the network
        [0.997, 5.772]
    """
    n = sum(counts)
    per_rank = experts * etp // n   # experts / EP
    total = math.comb(experts, top_k)

    def hit(share: int) -> float:
        return 1.0 - math.comb(experts - min(experts, share), top_k) / total

    far = sum(hit(per_rank * -(-c // etp)) for j, c in enumerate(counts) if j != at)
    near = sum(c - 1 for c in counts) * hit(per_rank)
    return far, near


def _flex_dispatch(token_bytes: float, experts: int, top_k: int, etp: int, layouts, intra: Link,
                   inter: Link) -> tuple[float, float]:
    """Bytes a rank sends and seconds one flex dispatch or combine takes: ``token_bytes`` of a rank's own tokens to
    ``top_k`` of ``experts`` experts over groups whose ranks sit ``layouts`` to a node
    (:func:`parallelsel.core.placement.flex_group`; :func:`flex_copies`). The network and NVLink transfers run at
    once in one kernel, the slower sets the time; the slowest rank of the slowest group sets the pace. The combine
    runs the same path back, reducing a token's copies inside a node before they cross the network. Not priced: the
    SMs the kernels hold and their buffers."""
    worst = (0.0, 0.0, 0.0)
    for counts in layouts:
        for at in range(len(counts)):
            far, near = flex_copies(experts, top_k, counts, etp, at)
            seconds = near * token_bytes / intra.achieved + intra.latency
            if far:
                seconds = max(seconds, far * token_bytes / inter.achieved + inter.latency)
            worst = max(worst, (seconds, far, near))
    seconds, far, near = worst
    return (far + near) * token_bytes, seconds


def ep_overlap_saving(pre_f: float, pre_b: float, mlp_f: float, mlp_dgrad: float, mlp_wgrad: float,
                      a2a: float) -> float:
    """Seconds Megatron-Core's EP overlap saves on one MoE layer when it runs one micro-batch's forward beside
    another's backward, each all-to-all taking ``a2a`` (the other arguments: :func:`parallelsel.core.kernels.
    moe_layer_parts`). Two streams, in the order ``model_chunk_schedule_plan.py`` L236-300 @d98e8a6 issues them --
    communication: combine backward, dispatch forward, dispatch backward, combine forward; computation: pre-dispatch
    forward, the experts' backward, their forward, pre-dispatch backward -- each waiting for the one before it on its
    stream and for the data it needs: the experts' backward for the combine's gradient, the dispatch backward for
    the experts' backward, the experts' forward for the dispatch, the combine forward for them, the pre-dispatch
    backward for the dispatch backward. The experts' weight gradient runs inside their backward, before the dispatch
    backward: Megatron-Core's default (``delay_wgrad_compute`` off, ``model_parallel_config.py`` L348, under which
    ``backward_dw`` does nothing); ``--delay-wgrad-compute`` would let it run beside that all-to-all, which is not
    priced. The saving is the two passes run one after the other less the pair's makespan: at most the smaller of
    the communication and the computation.

    Examples:
        >>> ep_overlap_saving(1.0, 2.0, 1.0, 1.0, 1.0, 0.0)    # nothing to hide
        0.0
        >>> ep_overlap_saving(1.0, 2.0, 1.0, 1.0, 1.0, 0.5)    # every all-to-all under compute: all four hidden
        2.0
    """
    comb_b_end = a2a
    mlp_b_end = max(pre_f, comb_b_end) + mlp_dgrad + mlp_wgrad
    disp_f_end = max(comb_b_end, pre_f) + a2a
    disp_b_end = max(disp_f_end, mlp_b_end) + a2a
    mlp_f_end = max(mlp_b_end, disp_f_end) + mlp_f
    end = max(max(disp_b_end, mlp_f_end) + a2a, max(mlp_f_end, disp_b_end) + pre_b)
    return max(0.0, pre_f + pre_b + mlp_f + mlp_dgrad + mlp_wgrad + 4 * a2a - end)


def _paired_share(plan, m: int) -> float:
    """The share of a stage's (micro-batch, chunk) forwards that EP overlap pairs with a backward: all but the
    warm-up forwards, which run alone (no pipeline: the first; interleaved: 2 (p - 1) + (v - 1) p, plus the one
    more the overlap schedules, ``schedules.py`` L955-969 @d98e8a6, on the first stage, the longest warm-up)."""
    total = m * plan.chunks
    warm = 1 if plan.pp == 1 else 2 * (plan.pp - 1) + (plan.chunks - 1) * plan.pp + 1
    return max(0, total - warm) / total


def _all_to_all_time(nbytes: float, n: int, local: int, intra: Link, link: Link) -> float:
    """Seconds of one all-to-all of ``nbytes`` a rank among ``n`` ranks, ``local`` of them on each node, when
    ``link`` is the link its group crosses: NCCL runs an all-to-all as grouped point-to-point sends (NCCL user
    guide, "Point-to-point communication": all-to-all as ncclSend/ncclRecv to every peer in one group call), so
    the 1/n of the buffer for each of the ``local - 1`` peers in the node goes over ``intra`` while the
    ``n - local`` shares for other nodes go over the network, at once; the slower of the two sets the time. All
    ranks in one node (``link`` is then ``intra``) is the plain (n - 1)/n x N of :func:`collective_time`."""
    if n <= 1 or nbytes <= 0:
        return 0.0
    if link.name == intra.name or local <= 1:
        return _time("all-to-all", nbytes, n, link)
    far = (n - local) / n * nbytes / link.achieved
    near = (local - 1) / n * nbytes / intra.achieved
    return (n - 1) * link.latency + max(far, near)
