"""Step time of a plan: compute + exposed communication + pipeline bubble; throughput, MFU, E(P).

:func:`estimate` puts together the memory breakdown (:mod:`parallelsel.core.memory`), the traffic
(:mod:`parallelsel.core.comm`) and the pipeline bubble (:mod:`parallelsel.core.pipeline`) for one workload,
plan and cluster, and lists every hard constraint the plan violates as a :class:`~parallelsel.core.reasons.Reason`.

The time model, with every assumption named:

* compute = the kernels one GPU runs (:mod:`parallelsel.core.kernels`): each layer's GEMMs at their
  per-GPU shapes, attention by its kernel, the memory-bound work at the achieved HBM rate, and one
  optimizer step -- recomputation included. The kernel rates describe kernels only: communication,
  overlap and bubble come from the rest of the model, never from the efficiency (no double
  counting). With ``efficiency=`` given, the flat model instead: FLOPs per GPU / (peak x efficiency);
* communication that can overlap (DP/ZeRO/FSDP) hides behind the pass it runs beside, never hiding
  its last bucket or unit; while it runs, its NCCL kernels hold SMs the compute beside it cannot use
  (:attr:`parallelsel.core.comm.Traffic.sms`), so the pass stretches by that share of the hidden
  time (counted as compute: ``StepTime.compute`` includes it); overlapped pipeline
  sends (``Plan.p2p_overlap``) hide the same way, in a pool of their own, at no SM cost (NCCL runs a
  send or receive on a block or two); TP, CP, EP and other PP
  communication sits on the critical path and is exposed, except the part of TP's that TP overlap
  (``Plan.tp_overlap``) runs under its GEMMs and the part of CP's ring that runs under each block's
  attention (:attr:`parallelsel.core.comm.Traffic.hidden`);
* bubble = bubble_overhead(p, m, v) x the per-stage critical-path time (compute plus TP/EP
  communication), Narayanan et al. 2021 §2.2; ZB-H1 keeps a third of the 1F1B bubble.

Examples:
    >>> import parallelsel as ps
    >>> w = ps.Workload(ps.MODELS["gpt2-1.5b"], global_batch=8)
    >>> e = estimate(w, ps.Plan(dp=8), ps.Cluster(ps.DEVICES["a100-80gb"], nodes=1))
    >>> e.fits, e.step.mfu < e.cluster.device.gemm_efficiency
    (True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ._check import ParallelselError, positive_number
from .comm import Traffic, traffic as _traffic
from .hardware import Cluster
from .kernels import checked_stage_times, compute_time, optimizer_time
from .memory import DEFAULT_HEADROOM, TIGHT_MARGIN, MemoryBreakdown, check_headroom, breakdown, usable_memory
from .pipeline import bubble_overhead, onef1b_bubble_time, zb_h1_bubble_time
from .plan import Plan, Workload, constraint_violations, with_stack_split
from .reasons import Reason
from .stacks import STACKS, pp_zero_stack, stack_fused

__all__ = [
    "DEFAULT_EFFICIENCY",
    "Estimate",
    "ScalingPoint",
    "StepTime",
    "bubble_overhead_for",
    "schedule_bubble_overhead",
    "estimate",
    "scaling_efficiency",
]

DEFAULT_EFFICIENCY = 0.5
"""A flat share of peak FLOP/s for back-of-envelope arithmetic (``estimate(..., efficiency=)``), not
the default time model: Narayanan et al. 2021 (Table 1) report 138-163 TFLOP/s per A100 (peak
312), 44-52%, end to end -- a number that already contains communication and bubble, which is why
:func:`estimate` times kernels instead (:mod:`parallelsel.core.kernels`)."""


@dataclass(frozen=True)
class StepTime:
    """Seconds per optimizer step, split for a timeline chart.

    ``compute``: computation including recompute and ``contention``, the seconds the compute beside hidden
    collectives loses to the SMs their NCCL kernels hold (:attr:`parallelsel.core.comm.Traffic.sms`);
    ``communication``: exposed communication (after
    overlap); ``communication_total``: all communication time before overlap; ``bubble``: pipeline
    idle time; ``total`` = compute + communication + bubble; ``tokens_per_s``; ``mfu`` = model
    FLOPs (no recompute) / (total x peak x GPUs) (Chowdhery et al. 2022, App. B); ``exposed``:
    exposed seconds by strategy label; ``forward``: the forward-pass part of ``compute``;
    ``critical``: TP/EP collective time on the critical path (also inside ``communication``).
    """

    compute: float
    communication: float
    communication_total: float
    bubble: float
    total: float
    tokens_per_s: float
    mfu: float
    exposed: tuple[tuple[str, float], ...] = ()
    forward: float = 0.0
    critical: float = 0.0
    exposed_phases: tuple[tuple[str, str, float], ...] = ()
    stages: tuple[tuple[float, float], ...] = ()
    """Per pipeline rank, (forward, backward) compute seconds of one micro-batch (empty for the flat model)."""
    contention_phases: tuple[tuple[str, bool, float], ...] = ()
    """``contention`` by (phase, beside every micro-batch's pass or only one, seconds)."""

    @property
    def contention(self) -> float:
        """Seconds of ``compute`` the compute beside hidden collectives loses to the SMs they hold."""
        return sum(seconds for _, _, seconds in self.contention_phases)

    @property
    def kernels(self) -> float:
        """``compute`` without ``contention``: the kernels' own seconds."""
        return self.compute - self.contention

    @property
    def decomposition(self) -> dict[str, float]:
        """``{"compute", "communication", "bubble"}`` in seconds; they sum to ``total``."""
        return {"compute": self.compute, "communication": self.communication, "bubble": self.bubble}


@dataclass(frozen=True)
class Estimate:
    """Everything :func:`estimate` knows about one plan: memory, step time, traffic and the hard-constraint reasons."""

    workload: Workload
    plan: Plan
    cluster: Cluster
    memory: MemoryBreakdown
    step: StepTime
    traffic: tuple[Traffic, ...]
    reasons: tuple[Reason, ...]
    efficiency: float | None = None  # the flat kernel efficiency passed to estimate(); None: the kernel model
    headroom: float = DEFAULT_HEADROOM
    usable: float = 0.0  # bytes a rank can use: driver-reported memory minus the runtime reserve
    stack: Reason | None = None  # which stacks run a PP x ZeRO/FSDP plan, and as what (parallelsel.core.stacks)

    @property
    def fits(self) -> bool:
        """True when no hard constraint (memory, divisibility, batch, cluster size) fails.

        Memory fits when ``memory.total <= usable x (1 - headroom)``
        (:func:`parallelsel.core.memory.budget`)."""
        return not self.reasons

    @property
    def budget(self) -> float:
        """Bytes the plan may use per device: ``usable x (1 - headroom)``."""
        return self.usable * (1 - self.headroom)

    @property
    def margin(self) -> float:
        """Share of the usable memory left free: 1 - memory.total / usable (>= headroom when it fits)."""
        return 1 - self.memory.total / self.usable

    @property
    def tight(self) -> bool:
        """True when the plan fits with less than :data:`parallelsel.core.memory.TIGHT_MARGIN` of the usable
        memory free: accepted, but measure its peak before committing to it."""
        return self.fits and self.margin < TIGHT_MARGIN

    @property
    def advisories(self) -> tuple[Reason, ...]:
        """What a plan that fits should still be checked for: ``memory_tight`` when :attr:`tight` (the margin,
        the threshold and the bytes left free)."""
        if not self.tight:
            return ()
        return (Reason("memory_tight", {"margin": self.margin, "reserve": TIGHT_MARGIN,
                                        "free": self.usable - self.memory.total}),)

    def pass_times(self) -> tuple[float, float]:
        """Seconds of one pipeline stage's forward and backward pass for one micro-batch.

        The kernels' compute of a step split over its micro-batches (without ``StepTime.contention``,
        which falls on the passes the once-a-step collectives run beside, as in :meth:`stage_pass_times`),
        with the TP/EP collectives on the critical path shared half to each pass (they are issued in
        both). These are the per-stage costs :func:`parallelsel.core.pipeline.simulate` takes.
        """
        m = max(1, self.plan.microbatches(self.workload))
        half = self.step.critical / (2 * m)
        return self.step.forward / m + half, (self.step.kernels - self.step.forward) / m + half

    def stage_pass_times(self) -> tuple[list[float], list[float]]:
        """Per pipeline rank, seconds of one micro-batch's forward and backward pass: each rank's own
        layers (the logits on the last rank; :func:`parallelsel.core.kernels.stage_compute_times`) with
        the critical-path TP/EP collectives shared as in :meth:`pass_times`. What
        :func:`parallelsel.core.pipeline.simulate` takes for an uneven pipeline."""
        if len(self.step.stages) < 2:
            f, b = self.pass_times()
            return [f] * self.plan.pp, [b] * self.plan.pp
        m = max(1, self.plan.microbatches(self.workload))
        half = self.step.critical / (2 * m)
        return [f + half for f, _ in self.step.stages], [b + half for _, b in self.step.stages]


def bubble_overhead_for(plan: Plan, microbatches: int) -> float:
    """Pipeline idle time over ideal busy time for ``plan``'s schedule (0 without a pipeline).

    Narayanan et al. 2021 §2.2.1-§2.2.2: (p-1)/m for GPipe and 1F1B, (p-1)/(v·m) interleaved
    (:func:`parallelsel.core.pipeline.bubble_overhead`). ZB-H1 (Qi et al. 2024 §2.1): the 1F1B bubble
    (p-1)(T_F+T_B+T_W) becomes (p-1)(T_F+T_B-T_W), a third of it under the simplification
    T_F = T_B = T_W that §2.1 uses.
    """
    if plan.pp == 1:
        return 0.0
    return schedule_bubble_overhead(plan.schedule, plan.pp, max(1, microbatches),
                                    plan.chunks if plan.schedule == "interleaved" else 1)


@lru_cache(maxsize=4096)
def schedule_bubble_overhead(schedule: str, p: int, m: int, v: int) -> float:
    """:func:`bubble_overhead_for` by its parts: a Plan's ``schedule``, ``p`` stages, ``m`` micro-batches,
    ``v`` chunks (1 unless interleaved), already checked."""
    base = bubble_overhead(p, m, v)
    if schedule == "zb-h1":
        base *= zb_h1_bubble_time(p, 1.0, 1.0, 1.0) / onef1b_bubble_time(p, 1.0, 1.0, 1.0)
    return base


@lru_cache(maxsize=1024)
def _flops(model, recompute: str, s: int, share: float = 1.0) -> tuple[float, float, float]:
    """Per token: forward FLOPs, training FLOPs with ``recompute`` (on ``share`` of the layers), and model
    FLOPs (for MFU)."""
    fw = model.forward_flops_per_token(s)
    return (fw["layers"] + fw["attention"] + fw["logits"], model.flops_per_token(recompute, s, share),
            model.model_flops_per_token(s))


def _timed_tokens(workload: Workload, plan: Plan) -> float:
    """Tokens the timed step processes: the micro-batches it runs (at least one) x dp x micro_batch
    sequences, never more than the global batch. A global batch that dp x micro_batch does not divide
    (a ``batch_not_divisible`` plan) runs only the whole micro-batches; counting the remainder as
    trained would raise the throughput and MFU above what the timed work does."""
    sequences = min(workload.global_batch, max(1, plan.microbatches(workload)) * plan.dp * plan.micro_batch)
    return sequences * workload.seq_len


def _compute(workload: Workload, plan: Plan, device, eff, mem) -> tuple[float, dict[str, float]]:
    """Compute seconds per step on one GPU, and the forward / backward windows overlapped traffic can hide in.

    ``eff`` None: the kernel model (:func:`parallelsel.core.kernels.compute_time` per micro-batch, times
    the micro-batches, plus one optimizer step over the parameters this GPU updates). A number: the
    flat model, FLOPs per GPU / (peak x eff), FLOPs split evenly over GPUs.
    """
    tokens, m = _timed_tokens(workload, plan), max(1, plan.microbatches(workload))
    if eff is not None:
        forward, train, _ = _flops(workload.model, plan.recompute, workload.seq_len,
                                   plan.recompute_share(workload.model))
        rate = device.peak_flops * eff * plan.gpus
        return train * tokens / rate, {"forward": forward * tokens / rate, "backward": (train - forward) * tokens / rate}
    extra = (plan.recompute_share(workload.model), stack_fused(workload), workload.recipe.gemm == "fp8", plan.etp)
    if plan.pp == 1:
        ct = compute_time(workload.model, plan.micro_batch, workload.seq_len, device, plan.tp, 1, plan.cp, plan.ep,
                          plan.sp, plan.recompute, workload.attention, *extra)
        stages = ((ct.forward, ct.backward),)
    else:
        # Each rank its own layers, the logits on the last: the slowest rank sets the pace.
        times = checked_stage_times(workload.model, plan.micro_batch, workload.seq_len, device,
                                    tuple(plan.layers_per_stage(workload.model.layers)), plan.tp, plan.cp, plan.ep,
                                    plan.sp, plan.recompute, workload.attention, *extra)
        ct = max(times, key=lambda t: t.total)
        stages = tuple((t.forward, t.backward) for t in times)
    recipe = workload.recipe
    updated = mem.optimizer / recipe.optimizer if recipe.optimizer else mem.grads / recipe.grads
    step = optimizer_time(updated, device)
    return m * ct.total + step, {"forward": m * ct.forward, "backward": m * ct.backward + step, "stages": stages}


def estimate(workload: Workload, plan: Plan, cluster: Cluster, efficiency: float | None = None,
             headroom: float = DEFAULT_HEADROOM) -> Estimate:
    """Memory, step time and hard-constraint reasons for ``plan`` training ``workload`` on ``cluster``.

    ``reasons`` holds :func:`parallelsel.core.plan.constraint_violations` plus, if the most loaded
    device's memory (:func:`parallelsel.core.memory.breakdown`) exceeds the usable memory
    (:func:`parallelsel.core.memory.usable_memory`: driver-reported memory minus the CUDA context and
    NCCL reserve) x (1 - ``headroom``), a ``memory_exceeds_device`` reason with both in bytes. The step time is computed
    even for plans that do not fit (see the module docstring for the time model).
    """
    eff, room = _check_args(workload, plan, cluster, efficiency, headroom)
    plan = with_stack_split(workload, plan)   # no split stated on layers that do not divide: the stack's own
    mem = breakdown(workload, plan, cluster.device)
    usable = usable_memory(cluster.device, plan)
    reasons, stack = _reasons(workload, plan, cluster, mem, usable, room)
    compute, phase_compute = _compute(workload, plan, _fp8_capable(workload, cluster.device), eff, mem)
    items = _traffic(workload, plan, cluster)
    # (the flat model's efficiency is a measured end-to-end share: it already holds what NCCL's SMs cost)
    step = _step_time(workload, plan, cluster, compute, phase_compute, items,
                      0 if eff is not None else cluster.device.sms)
    return Estimate(workload, plan, cluster, mem, step, items, reasons, eff, room, usable, stack)


def _fp8_capable(workload, device):
    """``device``, or for an FP8 recipe on a part without FP8 tensor cores (refused by a reason) the same part
    timed at its 16-bit rate as if FP8 ran there, so the step time stays defined."""
    if workload.recipe.gemm == "fp8" and not device.fp8_flops:
        from dataclasses import replace

        return replace(device, fp8_flops=device.peak_flops, fp8_efficiency=device.gemm_efficiency)
    return device


def _check_args(workload, plan, cluster, efficiency, headroom) -> tuple[float | None, float]:
    """The checked efficiency (None: the kernel model) and headroom of an :func:`estimate` call."""
    if not isinstance(workload, Workload):
        raise ParallelselError(f"workload={workload!r}: must be a Workload")
    if not isinstance(plan, Plan):
        raise ParallelselError(f"plan={plan!r}: must be a Plan")
    if not isinstance(cluster, Cluster):
        raise ParallelselError(f"cluster={cluster!r}: must be a Cluster")
    eff = None if efficiency is None else positive_number("efficiency", efficiency)
    if eff is not None and eff > 1:
        raise ParallelselError(f"efficiency={efficiency!r}: must be in (0, 1]")
    return eff, check_headroom(headroom)


def _reasons(workload: Workload, plan: Plan, cluster: Cluster, mem: MemoryBreakdown, usable: float,
             room: float) -> tuple[tuple[Reason, ...], object]:
    """The hard constraints ``plan`` violates (the plan's rules, a PP x ZeRO pairing no framework runs,
    memory over the usable memory x (1 - ``room``)), and the framework stack that runs PP with ZeRO."""
    reasons = constraint_violations(workload, plan, cluster)
    if workload.recipe.gemm == "fp8" and not cluster.device.fp8_flops:
        reasons.append(Reason("fp8_not_supported", {"device": cluster.device.name, "recipe": workload.recipe.name}))
    stack = pp_zero_stack(plan, STACKS[workload.stack])
    if stack is not None and stack.code == "pp_zero2_no_stack":
        reasons.append(stack)  # no framework runs it: a hard constraint
    capacity = usable * (1 - room)
    if mem.total > capacity:
        reasons.append(Reason("memory_exceeds_device", {
            "bytes": mem.total, "capacity": capacity, "usable": usable, "headroom": room,
            "stage": None if plan.pp == 1 else mem.stage, "device": cluster.device.name}))
    return tuple(reasons), stack


def _overlap(items, phase_compute: dict[str, float], m: int,
             sms: int = 0) -> tuple[dict[str, float], dict, float, dict]:
    """Exposed communication seconds per strategy and per (strategy, phase), the critical-path total, and the
    seconds the hidden collectives stretch the compute by, per (phase, whether beside every micro-batch).

    Items on the critical path are exposed whole (p2p aside, they also stretch the bubble). The
    overlappable items of a phase form a pool that runs beside the phase's compute (the share of
    micro-batches it runs beside), never hiding its last bucket or unit. While a collective runs it holds
    :attr:`parallelsel.core.comm.Traffic.sms` of the device's ``sms`` SMs, so the compute beside it has the
    rest: with ``share`` the pool's time-weighted SM share, a window of W compute seconds hides at most
    W / (1 - share) of traffic and each hidden second stretches the compute by ``share`` (``sms`` 0: no
    cost, the flat model; ``share`` >= 1: nothing hides). What is left exposed, busy - hidden, is shared
    among the pool's strategies in proportion to their time. A pool that fills its window costs the step
    busy - W whatever the share (the stretch moves time from exposed communication into compute); one its
    window hides costs share x hidden more than the tail. Pipeline sends pay no SM share (a send or receive
    runs on a block or two).
    """
    exposed: dict[str, float] = {}
    by_phase: dict[tuple[str, str], float] = {}
    critical = 0.0
    stretch: dict[tuple[str, bool], float] = {}
    pools: dict[tuple[str, bool], list[Traffic]] = {}
    for it in items:
        if it.overlappable:
            # Overlapped pipeline sends hide in a pool of their own: their many calls must not widen the window
            # a once-a-step DP/ZeRO collective hides in.
            pools.setdefault((it.phase, it.strategy == "PP"), []).append(it)
        else:
            bare = max(0.0, it.time - it.hidden)  # TP overlap's GEMMs, the CP ring's attention hide part of it
            exposed[it.strategy] = exposed.get(it.strategy, 0.0) + bare
            if it.op != "p2p":
                critical += bare
    for (phase, p2p), pool in pools.items():
        charged = bool(sms) and not p2p
        busy = tail = held = 0.0
        calls = 0
        for it in pool:  # one pass: busy time, most calls, the largest last unit, SM-seconds held
            t = it.time
            busy += t
            calls = max(calls, it.calls)
            if t > 0:
                tail = max(tail, t / (it.calls * it.units))
                if charged:
                    held += t * it.sms
        if busy <= 0:
            continue
        window = phase_compute[phase] * min(1.0, calls / m)
        share = held / busy / sms if charged else 0.0
        # A device whose SMs the collectives would all hold gains nothing from overlap: the traffic is exposed.
        hidden = 0.0 if share >= 1.0 else min(max(0.0, busy - tail), window / (1.0 - share))
        if share * hidden > 0:
            every = calls >= m   # beside every micro-batch's pass, or one
            stretch[(phase, every)] = stretch.get((phase, every), 0.0) + share * hidden
        left = busy - hidden
        for it in pool:
            exposed[it.strategy] = exposed.get(it.strategy, 0.0) + left * it.time / busy
            key = (it.strategy, phase)
            by_phase[key] = by_phase.get(key, 0.0) + left * it.time / busy
    return exposed, by_phase, critical, stretch


def _step_time(workload: Workload, plan: Plan, cluster: Cluster, compute: float, phase_compute: dict[str, float],
               items, sms: int = 0) -> StepTime:
    """Compute (stretched by the SMs hidden collectives hold of the device's ``sms``: :func:`_overlap`) +
    exposed communication + bubble, with throughput and MFU."""
    m = max(1, plan.microbatches(workload))
    tokens = _timed_tokens(workload, plan)
    exposed, by_phase, critical, stretch = _overlap(items, phase_compute, m, sms)
    comm_exposed = sum(exposed.values())
    stages = phase_compute.get("stages")
    # (the bubble is the kernels' fill: the stretch falls on the once-a-step collectives' pass, not the fill)
    bubble = bubble_overhead_for(plan, m) * (_fill(stages, m, compute) + critical)
    compute += sum(stretch.values())  # the kernels beside a hidden collective run on the SMs it leaves them
    total = compute + comm_exposed + bubble
    model_flops = _flops(workload.model, plan.recompute, workload.seq_len)[2]
    return StepTime(
        compute=compute,
        communication=comm_exposed,
        communication_total=sum(it.time for it in items),
        bubble=bubble,
        total=total,
        tokens_per_s=tokens / total,
        mfu=model_flops * tokens / (total * cluster.device.peak_flops * plan.gpus),
        exposed=tuple(exposed.items()),
        forward=phase_compute["forward"],
        critical=critical,
        exposed_phases=tuple((k[0], k[1], v) for k, v in by_phase.items()),
        stages=stages or (),
        contention_phases=tuple((ph, every, v) for (ph, every), v in stretch.items()),
    )


def _fill(stages, m: int, compute: float) -> float:
    """The compute the pipeline's fill and drain idle on: ``m`` x the mean per-micro-batch time of the ranks
    other than the slowest (``compute`` itself for a flat model or a single stage).

    With rank times T_i, a 1F1B step takes m x max T + (sum T - max T) (each micro-batch passes every
    other rank once while the slowest sets the pace); with equal ranks that is Narayanan et al. 2021
    §2.2.1's (m + p - 1) T. Interleaving divides the fill by v and ZB-H1 by three as in
    :func:`bubble_overhead_for`, whose (p - 1)/m this multiplies. tests/test_pipeline.py checks the
    form against :func:`parallelsel.core.pipeline.simulate` with per-rank costs.
    """
    if not stages or len(stages) < 2:
        return compute
    totals = [f + b for f, b in stages]
    return m * (sum(totals) - max(totals)) / (len(totals) - 1)


@dataclass(frozen=True)
class ScalingPoint:
    """E(P) for one plan, with where the lost time went.

    ``efficiency`` = per-GPU throughput / the per-GPU throughput of the ``reference`` configuration
    (the smallest P in the series whose plan fits); ``losses`` are the shares of this step spent on
    ``recompute`` (compute beyond the model FLOPs), ``communication`` (exposed, plus the compute the hidden
    collectives' SMs cost: ``StepTime.contention``) and ``bubble`` --
    the step-timeline decomposition, whose changes from the reference explain E(P).
    """

    gpus: int
    plan: Plan
    tokens_per_s: float
    efficiency: float
    losses: tuple[tuple[str, float], ...]
    estimate: Estimate
    reference: int = 0

    @property
    def loss(self) -> dict[str, float]:
        return dict(self.losses)


def _scaling_plans(plans) -> list[Plan]:
    if isinstance(plans, dict):
        for p, plan in plans.items():
            if not isinstance(plan, Plan) or plan.gpus != p:
                raise ParallelselError(f"plans[{p!r}]={plan!r}: must be a Plan with dp*tp*pp == {p}")
        return list(plans.values())
    pairs = list(plans)
    for plan in pairs:
        if not isinstance(plan, Plan):
            raise ParallelselError(f"plans: {plan!r} must be a Plan")
    return pairs


def scaling_efficiency(workload: Workload, plans, cluster: Cluster,
                       efficiency: float | None = None) -> tuple[ScalingPoint, ...]:
    """Scaling efficiency E(P) = (throughput(P) / P) / (throughput(P0) / P0) for each plan, in order of P.

    The lesson's formula (docs/mechanics/scaling.md) compares P GPUs with one; a large model does
    not fit on one GPU, so the baseline is the smallest configuration P0 of the series that fits
    (:attr:`ScalingPoint.reference`; the smallest plan if none fits). E(P0) = 1, and E(P) < 1 says
    each GPU of the larger configuration does less useful work than each GPU of the smallest --
    a scaling efficiency, not an MFU. ``efficiency``: as in :func:`estimate` (None: the kernel model).

    ``plans`` is a list of plans (P = plan.gpus) or a dict {P: plan}.
    """
    pairs = sorted(_scaling_plans(plans), key=lambda q: q.gpus)
    eff = None if efficiency is None else positive_number("efficiency", efficiency)
    model, s = workload.model, workload.seq_len
    share = model.model_flops_per_token(s)
    estimates = [estimate(workload, plan, cluster, eff) for plan in pairs]
    base = next((e for e in estimates if e.fits), estimates[0] if estimates else None)
    out = []
    for plan, e in zip(pairs, estimates):
        st = e.step
        ratio = (st.tokens_per_s / plan.gpus) / (base.step.tokens_per_s / base.plan.gpus)
        recompute = st.kernels * (1 - share / model.flops_per_token(plan.recompute, s, plan.recompute_share(model)))
        losses = (("recompute", recompute / st.total), ("communication", (st.communication + st.contention) / st.total),
                  ("bubble", st.bubble / st.total))
        out.append(ScalingPoint(plan.gpus, plan, st.tokens_per_s, ratio, losses, e, base.plan.gpus))
    return tuple(out)
