"""Pipeline-parallel schedules, an event simulator, and the closed forms beside it.

A pipeline of ``p`` stages processes ``m`` micro-batches per step. A schedule fixes, for every stage,
the order in which it runs its forward (F), backward (B) and -- for zero-bubble schedules -- weight
gradient (W) passes. :func:`simulate` executes that order under the data dependencies between
stages and returns a :class:`Timeline`, from which the bubble is *measured*; the closed forms
(:func:`bubble_fraction`, :func:`bubble_overhead`, :func:`onef1b_bubble_time`,
:func:`zb_h1_bubble_time`) are the published formulas the measurements are checked against.

Two bubble measures are named apart (docs/mechanics/bubble.md shows both):

* ``bubble_fraction`` = idle / (stages x makespan), the lesson's ``(p-1)/(m+p-1)``;
* ``bubble_overhead`` = idle / busy, Narayanan et al.'s ``(p-1)/m``.

Examples:
    >>> tl = simulate(schedule("1f1b", 4, 8))
    >>> round(tl.bubble_fraction, 4), round(tl.bubble_overhead, 4)
    (0.2727, 0.375)
    >>> bubble_fraction(4, 8), bubble_overhead(4, 8)
    (0.2727272727272727, 0.375)
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Sequence

import numpy as np

from parallelsel._check import ParallelselError, choice, positive_int, positive_number

__all__ = [
    "KINDS",
    "MAX_PASSES",
    "Op",
    "Schedule",
    "Timeline",
    "schedule",
    "simulate",
    "bubble_fraction",
    "bubble_overhead",
    "onef1b_bubble_time",
    "zb_h1_bubble_time",
]

KINDS = ("gpipe", "1f1b", "interleaved", "zb-h1")

MAX_PASSES = 2**17
"""Largest stages x microbatches x chunks :func:`schedule` builds. Measured here: building and
simulating cost about 10 microseconds per op on one core (1F1B, p=100, m=1000: 0.4 s), so 2**17
forward passes (with their backwards, up to 3 ops each) stay within a few seconds."""
"""Schedule kinds :func:`schedule` can generate."""

_SPLIT_KINDS = frozenset({"zb-h1"})  # kinds whose backward is split into B (input grad) and W (weight grad)


@dataclass(frozen=True, slots=True)
class Op:
    """One pass on one stage: ``kind`` is ``"F"``, ``"B"`` or ``"W"``; ``chunk`` is the model chunk on that stage."""

    kind: str
    microbatch: int
    chunk: int = 0

    def __str__(self) -> str:
        return f"{self.kind}{self.microbatch}" + (f".{self.chunk}" if self.chunk else "")


@lru_cache(maxsize=None)
def _op(kind: str, microbatch: int, chunk: int) -> Op:
    # Ops are immutable, so stages share one instance per (kind, micro-batch, chunk): large schedules stay cheap.
    return Op(kind, microbatch, chunk)


@dataclass(frozen=True)
class Schedule:
    """The per-stage order of passes for one training step.

    ``ops[s]`` is the ordered tuple of :class:`Op` that stage ``s`` executes. With ``chunks = v``
    stage ``s`` holds model chunks ``s, s+p, s+2p, ...`` (Megatron-LM's interleaved layout), so chunk
    ``c`` on stage ``s`` is virtual stage ``c*p + s`` of ``v*p``.
    """

    kind: str
    stages: int
    microbatches: int
    chunks: int
    ops: tuple[tuple[Op, ...], ...] = field(repr=False)

    @property
    def virtual_stages(self) -> int:
        """Number of model pieces along the pipeline: ``stages * chunks``."""
        return self.stages * self.chunks

    @property
    def splits_backward(self) -> bool:
        """True if backward is split into B (input gradient) and W (weight gradient) ops."""
        return self.kind in _SPLIT_KINDS

    def virtual_stage(self, stage: int, chunk: int) -> int:
        """Index of chunk ``chunk`` of stage ``stage`` along the whole pipeline: ``chunk*stages + stage``."""
        return chunk * self.stages + stage

    def place(self, virtual_stage: int) -> tuple[int, int]:
        """Inverse of :meth:`virtual_stage`: ``(stage, chunk)`` holding ``virtual_stage``."""
        return virtual_stage % self.stages, virtual_stage // self.stages

    def deps(self, stage: int, op: Op) -> tuple[tuple[int, Op], ...]:
        """The ops ``op`` on ``stage`` waits for, as ``(stage, Op)`` pairs.

        F of (mb, v) needs F of (mb, v-1); B of (mb, v) needs B of (mb, v+1), and on the last virtual
        stage its own F; W of (mb, v) needs B of (mb, v) on the same stage.
        """
        v = self.virtual_stage(stage, op.chunk)
        mb = op.microbatch
        if op.kind == "F":
            if v == 0:
                return ()
            s, c = self.place(v - 1)
            return ((s, _op("F", mb, c)),)
        if op.kind == "B":
            if v == self.virtual_stages - 1:
                return ((stage, _op("F", mb, op.chunk)),)
            s, c = self.place(v + 1)
            return ((s, _op("B", mb, c)),)
        return ((stage, _op("B", mb, op.chunk)),)

    @cached_property
    def _arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
        # (kind code 0/1/2 for F/B/W, micro-batch, chunk) of every op, stage after stage, and the
        # offset where each stage's ops begin (plus the total at the end).
        code = {"F": 0, "B": 1, "W": 2}
        ops = [op for stage_ops in self.ops for op in stage_ops]
        n = len(ops)
        kc = np.fromiter((code[op.kind] for op in ops), dtype=np.int64, count=n)
        mb = np.fromiter((op.microbatch for op in ops), dtype=np.int64, count=n)
        ch = np.fromiter((op.chunk for op in ops), dtype=np.int64, count=n)
        offset = [0]
        for stage_ops in self.ops:
            offset.append(offset[-1] + len(stage_ops))
        return kc, mb, ch, offset

    def peak_inflight(self) -> np.ndarray:
        """Per stage, the most micro-batch-chunks whose activations are held at once.

        An activation is held from the end of its F until the end of the pass that last needs it: B,
        or W for schedules that split the backward (W still reads the stored input). Stages run their
        ops in order, so this depends only on the order, not on costs.
        """
        kc, _, _, offset = self._arrays
        release = 2 if self.splits_backward else 1
        held = np.cumsum((kc == 0).astype(np.int64) - (kc == release))
        before = np.concatenate(([0], held))[offset[:-1]]  # held count carried over from earlier stages
        peaks = np.maximum.reduceat(held, offset[:-1]) - before if len(kc) else np.zeros(self.stages, dtype=np.int64)
        return np.maximum(peaks, 0)


# ----------------------------------------------------------------------------------------------
# Schedule generators


def _gpipe(p: int, m: int) -> list[list[Op]]:
    # GPipe (Huang et al. 2019, §2.2): all forwards, then all backwards ("all-forward-all-backward").
    return [[_op("F", i, 0) for i in range(m)] + [_op("B", i, 0) for i in range(m)] for _ in range(p)]


def _one_f_one_b(p: int, m: int) -> list[list[Op]]:
    # PipeDream-Flush / 1F1B (Narayanan et al. 2021, §2.2.1): stage s runs p-s-1 warm-up forwards,
    # then alternates one forward and one backward, then drains the remaining backwards.
    out = []
    for s in range(p):
        warm = min(p - s - 1, m)
        ops = [_op("F", i, 0) for i in range(warm)]
        for i in range(m - warm):
            ops += [_op("F", warm + i, 0), _op("B", i, 0)]
        ops += [_op("B", i, 0) for i in range(m - warm, m)]
        out.append(ops)
    return out


def _interleaved(p: int, m: int, v: int) -> list[list[Op]]:
    # Interleaved 1F1B (Narayanan et al. 2021, §2.2.2), in Megatron-LM's order: forward slot k of a
    # stage runs micro-batch (k // (p*v))*p + k % p on chunk (k // p) % v, i.e. groups of p
    # micro-batches go through chunk 0, then chunk 1, ...; backward slots walk the chunks in reverse.
    # Stage s warms up with 2(p-s-1) + (v-1)p forwards, then alternates, then drains.
    if v == 1:
        return _one_f_one_b(p, m)
    total = m * v

    def slot(k: int, forward: bool) -> Op:
        group, within = divmod(k, p * v)
        c = (k // p) % v
        mb = group * p + within % p
        return _op("F", mb, c) if forward else _op("B", mb, v - 1 - c)

    out = []
    for s in range(p):
        warm = min(2 * (p - s - 1) + (v - 1) * p, total)
        ops = [slot(k, True) for k in range(warm)]
        for k in range(total - warm):
            ops += [slot(warm + k, True), slot(k, False)]
        ops += [slot(k, False) for k in range(total - warm, total)]
        out.append(ops)
    return out


def _zb_h1(p: int, m: int) -> list[list[Op]]:
    # ZB-H1 (Qi et al. 2024, "Zero Bubble Pipeline Parallelism", §2.1, Figure 3 top): the 1F1B order
    # of F and B, with each W deferred so that every stage holds at most p micro-batches (the
    # 1F1B peak of stage 0). Stage s has p-s-1 warm-up forwards, so it can defer s weight passes;
    # the deferred W fill the gaps while B passes drain, and the rest run at the end.
    out = []
    for s in range(p):
        warm = min(p - s - 1, m)
        ops = [_op("F", i, 0) for i in range(warm)]
        next_w = 0
        for i in range(m - warm):
            ops += [_op("F", warm + i, 0), _op("B", i, 0)]
            if i >= s:
                ops.append(_op("W", next_w, 0))
                next_w += 1
        for i in range(m - warm, m):
            ops.append(_op("B", i, 0))
            if next_w <= i:
                ops.append(_op("W", next_w, 0))
                next_w += 1
        ops += [_op("W", i, 0) for i in range(next_w, m)]
        out.append(ops)
    return out


def schedule(kind: str, stages: int, microbatches: int, chunks: int = 1) -> Schedule:
    """Build the per-stage op order of a pipeline schedule.

    ``kind``: ``"gpipe"`` (all forwards then all backwards; Huang et al. 2019), ``"1f1b"``
    (PipeDream-Flush; Narayanan et al. 2021 §2.2.1), ``"interleaved"`` (interleaved 1F1B with
    ``chunks`` model chunks per stage; Narayanan et al. 2021 §2.2.2; like Megatron-LM it needs
    ``microbatches % stages == 0``; ``chunks=1`` gives the 1F1B order) or ``"zb-h1"`` (Qi et al. 2024
    §2.1: backward split into B and W, W deferred into the bubbles, peak memory as 1F1B).

    Examples:
        >>> s = schedule("1f1b", 2, 3)
        >>> [" ".join(map(str, ops)) for ops in s.ops]
        ['F0 F1 B0 F2 B1 B2', 'F0 B0 F1 B1 F2 B2']
    """
    kind = choice("kind", kind, KINDS)
    p = positive_int("stages", stages)
    m = positive_int("microbatches", microbatches)
    v = positive_int("chunks", chunks)
    if kind != "interleaved" and v != 1:
        raise ParallelselError(f"chunks={chunks!r}: must be 1 for kind={kind!r} (only 'interleaved' splits a stage into chunks)")
    if p * m * v > MAX_PASSES:
        raise ParallelselError(
            f"stages x microbatches x chunks = {p} x {m} x {v} = {p * m * v}: must be <= {MAX_PASSES} "
            f"(the simulator's size limit, which keeps a schedule and its simulation to a few seconds)"
        )
    if kind == "interleaved" and m % p != 0:
        raise ParallelselError(
            f"microbatches={microbatches!r}: must be a multiple of stages={p} for kind='interleaved' (as in Megatron-LM)"
        )
    if kind == "gpipe":
        ops = _gpipe(p, m)
    elif kind == "1f1b":
        ops = _one_f_one_b(p, m)
    elif kind == "interleaved":
        ops = _interleaved(p, m, v)
    else:
        ops = _zb_h1(p, m)
    return Schedule(kind, p, m, v, tuple(tuple(o) for o in ops))


# ----------------------------------------------------------------------------------------------
# Simulation


@dataclass(frozen=True, eq=False)
class Timeline:
    """What :func:`simulate` measured: one row per executed op, in stage order then execution order.

    ``stage``, ``kind`` (``"F"``/``"B"``/``"W"``), ``microbatch``, ``chunk``, ``start`` and ``end`` are
    parallel numpy arrays. Times are in the units of the costs given to :func:`simulate`.
    """

    schedule: Schedule = field(repr=False)
    stage: np.ndarray = field(repr=False)
    kind: np.ndarray = field(repr=False)
    microbatch: np.ndarray = field(repr=False)
    chunk: np.ndarray = field(repr=False)
    start: np.ndarray = field(repr=False)
    end: np.ndarray = field(repr=False)
    makespan: float
    busy: np.ndarray = field(repr=False)
    """Per stage, time spent running ops."""
    peak_inflight: np.ndarray = field(repr=False)
    """Per stage, the most micro-batch-chunks with activations held at once (see :meth:`Schedule.peak_inflight`)."""

    @property
    def stages(self) -> int:
        return self.schedule.stages

    @property
    def idle(self) -> np.ndarray:
        """Per stage, ``makespan - busy``: time the stage waits during the step."""
        return self.makespan - self.busy

    @property
    def bubble_fraction(self) -> float:
        """Total idle / (stages x makespan): the share of the step's device-time that is bubble."""
        return float(self.idle.sum() / (self.stages * self.makespan))

    @property
    def bubble_overhead(self) -> float:
        """Total idle / total busy: bubble relative to the ideal (Narayanan et al. 2021 §2.2's measure)."""
        return float(self.idle.sum() / self.busy.sum())

    @property
    def peak_activations(self) -> np.ndarray:
        """Per stage, ``peak_inflight / chunks``: peak held activations in units of one micro-batch through a whole stage."""
        return self.peak_inflight / self.schedule.chunks

    def rows(self, stage: int | None = None) -> list[tuple[int, Op, float, float]]:
        """``(stage, Op, start, end)`` for every op (or one stage's), in execution order."""
        sel = range(len(self.start)) if stage is None else np.flatnonzero(self.stage == stage)
        return [
            (int(self.stage[i]), _op(str(self.kind[i]), int(self.microbatch[i]), int(self.chunk[i])), float(self.start[i]), float(self.end[i]))
            for i in sel
        ]


def _per_stage(name: str, value, stages: int, allow_zero: bool) -> list[float]:
    """A cost as one number for every stage, or a sequence of ``stages`` numbers."""
    if isinstance(value, (numbers.Real,)) and not isinstance(value, bool):
        return [positive_number(name, value, allow_zero)] * stages
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        rule = ">= 0" if allow_zero else "> 0"
        raise ParallelselError(f"{name}={value!r}: must be a number {rule} or a sequence of {stages} such numbers (one per stage)")
    values = list(value)
    if len(values) != stages:
        raise ParallelselError(f"{name}={value!r}: has {len(values)} entries; must have one per stage (stages={stages})")
    return [positive_number(f"{name}[{i}]", x, allow_zero) for i, x in enumerate(values)]


def simulate(sched: Schedule, forward=1.0, backward=2.0, weight=None, p2p: float = 0.0) -> Timeline:
    """Execute ``sched`` and time every op.

    Costs are per micro-batch for a whole stage, either one number or one per stage (for imbalance
    or a straggler); an interleaved chunk takes ``1/chunks`` of its stage's cost.

    * ``backward`` is the whole backward pass unless ``weight`` is given; then ``backward`` is the
      input-gradient part and ``weight`` the weight-gradient part. Schedules that do not split the
      backward (gpipe, 1f1b, interleaved) run both inside B, costing ``backward + weight``.
    * For ``zb-h1`` with ``weight=None``, the backward is split evenly: B and W each cost ``backward/2``.
    * ``p2p`` is added to every dependency between two different stages (the send/receive latency).

    Each stage runs its ops in order; an op starts at the later of its stage becoming free and its
    dependencies ending (plus ``p2p`` for those on another stage). Raises ``RuntimeError`` if the
    order deadlocks (which the generated schedules never do).
    """
    if not isinstance(sched, Schedule):
        raise ParallelselError(f"schedule={sched!r}: must be a Schedule from pipeline.schedule()")
    p, v = sched.stages, sched.chunks
    f = _per_stage("forward", forward, p, allow_zero=False)
    b = _per_stage("backward", backward, p, allow_zero=False)
    w = None if weight is None else _per_stage("weight", weight, p, allow_zero=True)
    lat = positive_number("p2p", p2p, allow_zero=True)
    if sched.splits_backward:
        if w is None:
            b, w = [x / 2 for x in b], [x / 2 for x in b]
    else:
        if w is not None:
            b = [x + y for x, y in zip(b, w)]
        w = [0.0] * p
    cost = [{"F": f[s] / v, "B": b[s] / v, "W": w[s] / v} for s in range(p)]

    kc, mb, ch, offset = sched._arrays
    n = len(kc)
    stage_a = np.repeat(np.arange(p), np.diff(offset))
    costs = np.array([[cost[s][k] for k in "FBW"] for s in range(p)], dtype=float)
    dur_a = costs[stage_a, kc]

    # Each op waits for at most one other op (see Schedule.deps); find it by integer keys.
    m, nv = sched.microbatches, p * v
    def key(k, b, c, s):
        return ((k * m + b) * v + c) * p + s
    index = np.full(3 * m * v * p, -1, dtype=np.int64)
    keys = key(kc, mb, ch, stage_a)
    index[keys] = np.arange(n)
    if not np.array_equal(index[keys], np.arange(n)):  # a repeated key was overwritten
        raise RuntimeError("schedule lists the same op twice on one stage")
    vs = ch * p + stage_a
    dep_k = np.where(kc == 0, 0, np.where(kc == 2, 1, np.where(vs == nv - 1, 0, 1)))
    dep_vs = np.where(kc == 0, vs - 1, np.where((kc == 1) & (vs < nv - 1), vs + 1, vs))
    has_dep = ~((kc == 0) & (vs == 0))
    dep_vs = np.where(has_dep, dep_vs, 0)
    dep_s, dep_c = dep_vs % p, dep_vs // p
    dep = np.where(has_dep, index[key(dep_k, mb, dep_c, dep_s)], -2)
    missing = np.flatnonzero(dep == -1)
    if missing.size:
        g = int(missing[0])
        s = int(stage_a[g])
        op = sched.ops[s][g - offset[s]]
        ((ds, dop),) = sched.deps(s, op)
        raise RuntimeError(f"stage {s} op {op} depends on {dop} on stage {ds}, which the schedule never runs")
    extra = np.where(has_dep & (dep_s != stage_a), lat, 0.0)

    # Longest-path evaluation in stage order: each stage advances while its next op's dependency is
    # done; a blocked stage waits on that one op and is woken when it ends. The processing order
    # does not change the result, only which stage is examined next.
    dep_l, extra_l, dur_l = dep.tolist(), extra.tolist(), dur_a.tolist()
    end = [-1.0] * n
    pos = list(offset[:-1])
    free = [0.0] * p
    waiters: dict[int, list[int]] = {}
    queue = list(range(p - 1, -1, -1))
    while queue:
        s = queue.pop()
        g, stop, t = pos[s], offset[s + 1], free[s]
        while g < stop:
            j = dep_l[g]
            if j >= 0:
                e = end[j]
                if e < 0.0:
                    waiters.setdefault(j, []).append(s)
                    break
                e += extra_l[g]
                if e > t:
                    t = e
            t += dur_l[g]
            end[g] = t
            if g in waiters:
                queue.extend(waiters.pop(g))
            g += 1
        pos[s], free[s] = g, t
    for s in range(p):
        if pos[s] < offset[s + 1]:
            op = sched.ops[s][pos[s] - offset[s]]
            waits = ", ".join(f"{dop} on stage {ds}" for ds, dop in sched.deps(s, op))
            raise RuntimeError(f"deadlock: stage {s} cannot run {op} (waits for {waits}), and no other stage can proceed")

    end_a = np.asarray(end, dtype=float)
    busy = np.bincount(stage_a, weights=dur_a, minlength=p).astype(float)
    return Timeline(
        schedule=sched,
        stage=stage_a,
        kind=np.array(["F", "B", "W"])[kc],
        microbatch=mb,
        chunk=ch,
        start=end_a - dur_a,
        end=end_a,
        makespan=float(end_a.max()) if n else 0.0,
        busy=busy,
        peak_inflight=sched.peak_inflight(),
    )


# ----------------------------------------------------------------------------------------------
# Closed forms


def _check_pmv(stages, microbatches, chunks) -> tuple[int, int, int]:
    return positive_int("stages", stages), positive_int("microbatches", microbatches), positive_int("chunks", chunks)


def bubble_overhead(stages: int, microbatches: int, chunks: int = 1) -> float:
    """Bubble time over ideal compute time, ``(p-1) / (v*m)``, for uniform stages.

    Narayanan et al. 2021 ("Efficient Large-Scale Language Model Training on GPU Clusters Using
    Megatron-LM"), §2.2.1: GPipe and 1F1B idle ``(p-1)(t_f+t_b)`` per stage against ``m(t_f+t_b)`` of
    work, so the bubble time fraction is ``(p-1)/m``; §2.2.2: with ``v`` chunks per stage the bubble
    shrinks to ``(p-1)(t_f+t_b)/v``, giving ``(p-1)/(v*m)``.
    """
    p, m, v = _check_pmv(stages, microbatches, chunks)
    return (p - 1) / (v * m)


def bubble_fraction(stages: int, microbatches: int, chunks: int = 1) -> float:
    """Bubble time over total step time, ``(p-1) / (v*m + p-1)``, for uniform stages.

    The idle time per stage, ``(p-1)(t_f+t_b)/v`` (Narayanan et al. 2021 §2.2.1-§2.2.2), divided by
    the step ``m(t_f+t_b) + (p-1)(t_f+t_b)/v``; equivalently ``o/(1+o)`` with ``o`` the
    :func:`bubble_overhead`. For ``v = 1`` it is GPipe's ``(p-1)/(m+p-1)`` (Huang et al. 2019, §2.2).
    """
    p, m, v = _check_pmv(stages, microbatches, chunks)
    return (p - 1) / (v * m + p - 1)


def onef1b_bubble_time(stages: int, forward: float, backward: float, weight: float = 0.0) -> float:
    """Idle time per stage of 1F1B (and GPipe), ``(p-1)(T_F + T_B + T_W)``, for uniform stages.

    Qi et al. 2024 ("Zero Bubble Pipeline Parallelism", ICLR), §2.1: with the backward split into B
    (input gradient, ``T_B``) and W (weight gradient, ``T_W``), 1F1B runs both back to back, so its
    bubble is ``(p-1)(T_F+T_B+T_W)``; with ``weight=0`` ``backward`` is the whole backward.
    """
    p = positive_int("stages", stages)
    tf = positive_number("forward", forward)
    tb = positive_number("backward", backward)
    tw = positive_number("weight", weight, allow_zero=True)
    return (p - 1) * (tf + tb + tw)


def zb_h1_bubble_time(stages: int, forward: float, backward: float, weight: float) -> float:
    """Idle time per stage of ZB-H1, ``(p-1)(T_F + T_B - T_W)``, for uniform stages.

    Qi et al. 2024 ("Zero Bubble Pipeline Parallelism", ICLR), §2.1 and Figure 3: deferring each W
    lets B passes propagate without waiting for W, and the deferred W fill the drain, cutting the
    1F1B bubble ``(p-1)(T_F+T_B+T_W)`` to ``(p-1)(T_F+T_B-T_W)`` -- a third of it when
    ``T_F = T_B = T_W``. ``backward`` here is the input-gradient pass only. The handcrafted schedule
    reaches it when ``m >= p`` (with fewer micro-batches there are too few W to fill the drain) and
    ``T_W <= T_B`` (the idle can never drop below the ``(p-1)T_F`` the last stage waits for its
    first input); :func:`simulate` measures the other cases.
    """
    p = positive_int("stages", stages)
    tf = positive_number("forward", forward)
    tb = positive_number("backward", backward)
    tw = positive_number("weight", weight, allow_zero=True)
    return (p - 1) * (tf + tb - tw)
