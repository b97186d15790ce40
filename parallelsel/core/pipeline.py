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

from parallelsel.core._check import ParallelselError, choice, positive_int, positive_number
from parallelsel.core.pipeline_orders import LAYOUTS, ORDERS, per_round, rank_orders, stage_of
from parallelsel.core.pipeline_orders import check as check_orders

__all__ = [
    "ACTIONS",
    "KINDS",
    "MAX_PASSES",
    "Op",
    "Schedule",
    "Timeline",
    "schedule",
    "simulate",
    "peak_inflight",
    "last_stage_inflight",
    "bubble_fraction",
    "bubble_overhead",
    "onef1b_bubble_time",
    "zb_h1_bubble_time",
]

KINDS = ("gpipe", "1f1b", "interleaved", "zb-h1", "looped-bfs", "interleaved-zb", "zbv", "dualpipev")
"""Schedule kinds :func:`schedule` can generate (the orders of :mod:`parallelsel.core.pipeline_orders`)."""

ACTIONS = ("F", "B", "W", "I")
"""Pass kinds: forward, full backward, weight-gradient backward, input-gradient backward (code = index)."""

MAX_RANK_PASSES = 2**21
"""Largest single-rank order :func:`peak_inflight` walks to measure a steady pattern (about 0.2 GB)."""

MAX_PASSES = 2**17
"""Largest stages x microbatches x chunks :func:`schedule` builds. Measured here: building and
simulating cost about 10 microseconds per op on one core (1F1B, p=100, m=1000: 0.4 s), so 2**17
forward passes (with their backwards, up to 3 ops each) stay within a few seconds."""

# Dependency class of each action: an I and a B both produce the input gradient the previous stage
# waits for, so they share one class (a micro-batch runs one of them on a stage, never both).
_CLASS = {"F": 0, "B": 1, "I": 1, "W": 2}


def _numpy():
    """numpy if it can be imported, else ``None``.

    Only the arrays a :class:`Timeline` and :meth:`Schedule.peak_inflight` hand out use numpy, imported here on
    first use; the simulation itself is one pure-Python path, so without numpy (Pyodide on the calculator page, a
    minimal install) the numbers are the same and the arrays are tuples.
    """
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def _vector(values, dtype):
    # A Timeline/Schedule array: numpy's when numpy is there (the public type so far), else a tuple.
    np = _numpy()
    return tuple(values) if np is None else np.asarray(values, dtype=dtype)


@dataclass(frozen=True, slots=True)
class Op:
    """One pass on one rank: ``kind`` is ``"F"``, ``"B"`` (full backward), ``"I"`` (input-gradient
    backward) or ``"W"`` (weight-gradient backward); ``chunk`` is the model chunk on that rank."""

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
    """The per-rank order of passes for one training step.

    ``ops[s]`` is the ordered tuple of :class:`Op` that rank (pipeline device) ``s`` executes; the
    library calls a rank a *stage* (``stages`` = ranks). With ``chunks = v`` a rank holds ``v`` model
    pieces; ``layout`` places them: ``"loop"`` puts chunk ``c`` of rank ``s`` at global stage
    ``c*p + s`` (Megatron-LM's interleaved layout), ``"v"`` puts chunk 0 at ``s`` and chunk 1 at
    ``2p-1-s`` (ZB-V, DualPipeV). Global stages are numbered as torch.distributed.pipelining numbers them.
    """

    kind: str
    stages: int
    microbatches: int
    chunks: int
    ops: tuple[tuple[Op, ...], ...] = field(repr=False)
    layout: str = "loop"

    @classmethod
    def from_rank_orders(cls, orders, layout: str = "loop", kind: str = "custom") -> "Schedule":
        """A schedule from foreign per-rank orders, e.g. one recorded from PyTorch.

        ``orders[r]`` lists ``(global stage, action, microbatch)`` as :meth:`rank_order` returns them;
        ``layout`` says where each rank's chunks sit. Raises ``ParallelselError`` if a stage is not on
        the rank that lists it or an action is unknown.
        """
        layout = choice("layout", layout, LAYOUTS)
        p = len(orders)
        if p < 1:
            raise ParallelselError(f"orders={orders!r}: must list at least one rank")
        n_stages = 1 + max((int(a[0]) for order in orders for a in order), default=0)
        v = max(1, -(-n_stages // p))
        place = {stage_of(layout, p, r, c): (r, c) for r in range(p) for c in range(v)}
        ops, m = [], 0
        for r, order in enumerate(orders):
            row = []
            for stage, action, mb in order:
                where = place.get(int(stage))
                if where is None or where[0] != r:
                    raise ParallelselError(f"orders[{r}]: stage {stage} is not on rank {r} under layout={layout!r}")
                choice(f"orders[{r}] action", action, ACTIONS)
                row.append(_op(action, positive_int("microbatch", mb, minimum=0), where[1]))
                m = max(m, int(mb) + 1)
            ops.append(tuple(row))
        return cls(kind, p, m, v, tuple(ops), layout)

    @property
    def virtual_stages(self) -> int:
        """Number of model pieces along the pipeline: ``stages * chunks``."""
        return self.stages * self.chunks

    @cached_property
    def splits_backward(self) -> bool:
        """True if some backward is split into I (input gradient) and W (weight gradient) ops."""
        return any(op.kind == "I" for ops in self.ops for op in ops)

    def virtual_stage(self, stage: int, chunk: int) -> int:
        """Global stage index of chunk ``chunk`` on rank ``stage`` (see the class docstring)."""
        return stage_of(self.layout, self.stages, stage, chunk)

    def place(self, virtual_stage: int) -> tuple[int, int]:
        """Inverse of :meth:`virtual_stage`: ``(rank, chunk)`` holding global stage ``virtual_stage``."""
        p = self.stages
        if self.layout == "v":
            return (virtual_stage, 0) if virtual_stage < p else (2 * p - 1 - virtual_stage, 1)
        return virtual_stage % p, virtual_stage // p

    def rank_order(self, rank: int) -> list[tuple[int, str, int]]:
        """``(global stage, action, microbatch)`` for every pass rank ``rank`` runs, in order.

        ``action`` is ``"F"``, ``"B"`` (full backward), ``"I"`` (input-gradient backward) or ``"W"``
        (weight-gradient backward); the global stage is numbered as torch.distributed.pipelining does.
        """
        r = positive_int("rank", rank, minimum=0, maximum=self.stages - 1)
        return [(self.virtual_stage(r, op.chunk), op.kind, op.microbatch) for op in self.ops[r]]

    @cached_property
    def _input_grad_kind(self) -> dict[tuple[int, int, int], str]:
        # (rank, chunk, micro-batch) -> "I" where that backward is split, for deps() to name the op.
        return {(s, op.chunk, op.microbatch): "I" for s, ops in enumerate(self.ops) for op in ops if op.kind == "I"}

    def deps(self, stage: int, op: Op) -> tuple[tuple[int, Op], ...]:
        """The ops ``op`` on rank ``stage`` waits for, as ``(rank, Op)`` pairs (the rule of :func:`_dependency`).

        F of (mb, v) needs F of (mb, v-1); B or I of (mb, v) needs the backward (B or I) of (mb, v+1),
        and on the last global stage its own F; W of (mb, v) needs I of (mb, v) on the same rank.
        """
        dep = _dependency(_CLASS[op.kind], self.virtual_stage(stage, op.chunk), self.virtual_stages - 1)
        if dep is None:
            return ()
        cls, vs = dep
        s, c = self.place(vs)
        kind = "F" if cls == 0 else self._input_grad_kind.get((s, c, op.microbatch), "B")
        return ((s, _op(kind, op.microbatch, c)),)

    def peak_inflight(self) -> np.ndarray:
        """Per rank, the most micro-batch-chunks whose activations are held at once (:func:`_held_peak`).

        An activation is held from its F until the pass that last needs it ends: a full B, or the W
        of a split backward (W still reads the stored input; I does not release it). Ranks run their
        ops in order, so this depends only on the order, not on costs.
        """
        return _vector([_held_peak(op.kind for op in stage_ops) for stage_ops in self.ops], "int64")


def _dependency(cls: int, vs: int, last: int) -> tuple[int, int] | None:
    """The one dependency rule of the simulator: the (class, global stage) of the op that an op of class ``cls``
    (0 forward, 1 backward or input gradient, 2 weight gradient) at global stage ``vs`` waits for, of the same
    micro-batch; ``None`` for the first forward. ``last`` is the last global stage (its backward waits for its own F).
    """
    if cls == 0:
        return None if vs == 0 else (0, vs - 1)
    if cls == 1:
        return (0, vs) if vs == last else (1, vs + 1)
    return (1, vs)


def _held_peak(actions, release=("B", "W")) -> int:
    """The most activations held at once along one rank's ``actions``: an F stores one, a full B or
    the W of a split backward releases it (W still reads the stored input; I does not release it).
    ``release``: the actions that free it (the loss's tensors are freed by the input gradient I)."""
    held = peak = 0
    for a in actions:
        held += 1 if a == "F" else -1 if a in release else 0
        peak = max(peak, held)
    return peak


_CLOSED = {
    # Each is the order's warm-up forwards, then (F, B) pairs, then the last backwards
    # (pipeline_orders._gpipe, _one_f_one_b, _interleaved_rank): the peak is the warm-up count, plus the first
    # steady forward when one follows, capped at every pass. tests/test_memory.py holds them to torch's orders.
    "gpipe": lambda p, m, v, r: m,
    "1f1b": lambda p, m, v, r: min(m, p - r),
    "interleaved": lambda p, m, v, r: min((v - 1) * per_round(p, m) + 2 * (p - 1 - r) + 1, m * v),
}


def peak_inflight(kind: str, stages: int, microbatches: int, chunks: int = 1, rank: int = 0) -> int:
    """The most micro-batch-chunks whose activations ``rank`` holds at once under ``kind``, counted
    along that rank's pass order (the order :func:`schedule` builds; the count of
    :meth:`Schedule.peak_inflight`, for one rank without building the others or the ops).

    Accepted settings are :func:`schedule`'s (torch 2.13's rules) with two one-chunk exceptions whose
    order is still complete and which other stacks run: ``"1f1b"`` with fewer micro-batches than stages
    (Megatron-LM's ``forward_backward_pipelining_without_interleaving`` warms up min(p - r - 1, m)
    forwards; torch's Schedule1F1B refuses it), and ``"zb-h1"`` with ``m`` not a multiple of
    max(1, m // p) (torch's rounds rule, which only matters for more than one chunk). GPipe, 1F1B and
    interleaved 1F1B are counted from their warm-up (``_CLOSED``); for the other kinds, up to
    :data:`MAX_PASSES` it walks one rank's order (at most 3 x microbatches x chunks passes); past it, it
    extends the steady pattern measured at three smaller sizes instead of building the order. Cached per setting,
    since :mod:`parallelsel.core.memory` asks for the same few settings over and over.

    Examples:
        >>> [peak_inflight("zb-h1", 4, 8, rank=r) for r in range(4)]   # every rank holds p until its W
        [4, 4, 4, 4]
        >>> [peak_inflight("1f1b", 4, 2, rank=r) for r in range(4)]    # m < p: all forwards first
        [2, 2, 2, 1]
    """
    kind = choice("kind", kind, KINDS)
    p = positive_int("stages", stages)
    m = positive_int("microbatches", microbatches)
    v = positive_int("chunks", chunks)
    r = positive_int("rank", rank, minimum=0, maximum=p - 1)
    if not (kind in ("1f1b", "zb-h1") and v == 1):  # the two exceptions above
        check_orders(kind, p, m, v)
    return _rank_peak(kind, p, m, v, r)


def last_stage_inflight(kind: str, stages: int, microbatches: int, chunks: int = 1) -> int:
    """The most micro-batches whose activations the pipeline's last stage (the one that computes the loss)
    holds at once under ``kind``: its own passes only, along the order of the rank that runs it (rank
    ``stages - 1``, chunk ``chunks - 1`` in the loop layout; rank 0, chunk 1 in the V layout). One in the
    1F1B family, whose last stage runs each micro-batch's backward right after its forward; ``m`` where
    all forwards come first (GPipe, looped BFS). Counted to the backward that consumes the loss's
    tensors: a full B, or the input gradient I of a split backward (the weight gradient W reads only the
    layer inputs). Accepts what :func:`peak_inflight` accepts.

    Examples:
        >>> last_stage_inflight("interleaved", 8, 8, 2), last_stage_inflight("gpipe", 4, 8)
        (1, 8)
    """
    kind = choice("kind", kind, KINDS)
    p = positive_int("stages", stages)
    m = positive_int("microbatches", microbatches)
    v = positive_int("chunks", chunks)
    return _last_stage_peak(kind, p, m, v)


_LAST_CLOSED = {
    # GPipe runs every forward first. 1F1B's last rank warms up with one forward; interleaved's last rank warms up
    # with the (v - 1) n forwards of its other chunks, then its forward slot (v - 1) n + j and backward slot j both
    # run the last chunk's micro-batch j (pipeline_orders._interleaved_rank): one held at a time.
    "gpipe": lambda p, m, v: m,
    "1f1b": lambda p, m, v: 1,
    "interleaved": lambda p, m, v: 1,
}


@lru_cache(maxsize=4096)
def _last_stage_peak(kind: str, p: int, m: int, v: int) -> int:
    # Cached with the check: memory asks for the same few settings for every plan the search sizes.
    if not (kind in ("1f1b", "zb-h1") and v == 1):
        check_orders(kind, p, m, v)
    if kind in _LAST_CLOSED:
        return _LAST_CLOSED[kind](p, m, v)
    rank = 0 if ORDERS[kind][1] == "v" else p - 1
    return _rank_peak(kind, p, m, v, rank, v - 1, ("B", "I"))


@lru_cache(maxsize=4096)
def _rank_peak(kind: str, p: int, m: int, v: int, r: int, chunk: int | None = None,
               release=("B", "W")) -> int:
    # ``chunk``: count only that chunk's passes (None: every pass of the rank); ``release``: as _held_peak.
    def held(order) -> int:
        return _held_peak((a for a, _, c in order if chunk is None or c == chunk), release)

    if kind in _CLOSED and chunk is None:  # orders that are warm-up forwards then F/B pairs: no walk needed
        return _CLOSED[kind](p, m, v, r)
    if p * m * v <= MAX_PASSES:
        return held(ORDERS[kind][0](p, m, v, r))
    # Past the simulator's size the order is not built (a billion micro-batches would need tens of GB).
    # After its warm-up every schedule repeats one steady pattern per micro-batch, so the peak is either
    # constant in m (1F1B-like) or grows linearly (GPipe-like: all forwards first): measure it at three
    # sizes that every kind accepts (multiples of 2 p v) and extend the line, checking it is one.
    sizes = [2 * p * v * k for k in (4, 8, 16)]
    if 3 * sizes[2] * v > MAX_RANK_PASSES:
        raise ParallelselError(f"microbatches={m}: with stages={p} and chunks={v}, the pattern would be measured on "
                               f"more than {MAX_RANK_PASSES} passes of one rank")
    a, b, c = (held(ORDERS[kind][0](p, x, v, r)) for x in sizes)
    if (b - a) * (sizes[2] - sizes[1]) != (c - b) * (sizes[1] - sizes[0]):
        raise ParallelselError(f"microbatches={m}: the held activations of {kind!r} do not settle into a "
                               f"steady pattern below stages x microbatches x chunks <= {MAX_PASSES}")
    return c + (c - b) * (m - sizes[2]) // (sizes[2] - sizes[1])


def schedule(kind: str, stages: int, microbatches: int, chunks: int = 1) -> Schedule:
    """Build the per-rank pass order of a pipeline schedule, as torch.distributed.pipelining runs it.

    ``kind``: ``"gpipe"`` (all forwards then all backwards; Huang et al. 2019), ``"1f1b"``
    (PipeDream-Flush; Narayanan et al. 2021 §2.2.1), ``"interleaved"`` (interleaved 1F1B with
    ``chunks`` model chunks per rank; Narayanan et al. 2021 §2.2.2), ``"looped-bfs"`` (breadth-first;
    Lamy-Poirier 2023), ``"interleaved-zb"`` (zero bubble, backward split into I and W; Qi et al.
    2024), ``"zb-h1"`` (its one-chunk case, ZB-H1), ``"zbv"`` (ZB-V on the V layout; Qi et al. 2024
    §6) and ``"dualpipev"`` (DeepSeek's DualPipe folded onto the V layout). The orders and the
    accepted settings are torch 2.13's (:mod:`parallelsel.core.pipeline_orders`, checked against recorded
    runs); a setting torch refuses raises ``ParallelselError`` naming the rule.

    Examples:
        >>> s = schedule("1f1b", 2, 3)
        >>> [" ".join(map(str, ops)) for ops in s.ops]
        ['F0 F1 B0 F2 B1 B2', 'F0 B0 F1 B1 F2 B2']
        >>> schedule("zbv", 2, 4, chunks=2).rank_order(0)[:4]
        [(0, 'F', 0), (0, 'F', 1), (0, 'F', 2), (3, 'F', 0)]
    """
    kind = choice("kind", kind, KINDS)
    p = positive_int("stages", stages)
    m = positive_int("microbatches", microbatches)
    v = positive_int("chunks", chunks)
    if p * m * v > MAX_PASSES:
        raise ParallelselError(
            f"stages x microbatches x chunks = {p} x {m} x {v} = {p * m * v}: must be <= {MAX_PASSES} "
            f"(the simulator's size limit, which keeps a schedule and its simulation to a few seconds)"
        )
    check_orders(kind, p, m, v)
    layout, orders = rank_orders(kind, p, m, v)
    ops = tuple(tuple(_op(a, mb, c) for a, mb, c in order) for order in orders)
    return Schedule(kind, p, m, v, ops, layout)


# ----------------------------------------------------------------------------------------------
# Simulation


@dataclass(frozen=True, eq=False)
class Timeline:
    """What :func:`simulate` measured: one row per executed op, in rank order then execution order.

    ``stage`` (the rank), ``kind`` (``"F"``/``"B"``/``"I"``/``"W"``), ``microbatch``, ``chunk``,
    ``start`` and ``end`` are parallel numpy arrays (tuples where numpy is not installed). Times are
    in the units of the costs given to :func:`simulate`.
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
    """Per rank, time spent running ops."""
    peak_inflight: np.ndarray = field(repr=False)
    """Per rank, the most micro-batch-chunks with activations held at once (see :meth:`Schedule.peak_inflight`)."""

    @property
    def stages(self) -> int:
        return self.schedule.stages

    @property
    def idle(self) -> np.ndarray:
        """Per rank, ``makespan - busy``: time the rank waits during the step."""
        return _vector([self.makespan - b for b in self.busy], float)

    @property
    def bubble_fraction(self) -> float:
        """Total idle / (stages x makespan): the share of the step's device-time that is bubble."""
        return float(sum(self.idle) / (self.stages * self.makespan))

    @property
    def bubble_overhead(self) -> float:
        """Total idle / total busy: bubble relative to the ideal (Narayanan et al. 2021 §2.2's measure)."""
        return float(sum(self.idle) / sum(self.busy))

    @property
    def peak_activations(self) -> np.ndarray:
        """Per rank, ``peak_inflight / chunks``: peak held activations in units of one micro-batch through a whole rank's layers."""
        return _vector([x / self.schedule.chunks for x in self.peak_inflight], float)

    def rows(self, stage: int | None = None) -> list[tuple[int, Op, float, float]]:
        """``(rank, Op, start, end)`` for every op (or one rank's), in execution order."""
        sel = range(len(self.start)) if stage is None else [i for i, s in enumerate(self.stage) if s == stage]
        return [
            (int(self.stage[i]), _op(str(self.kind[i]), int(self.microbatch[i]), int(self.chunk[i])), float(self.start[i]), float(self.end[i]))
            for i in sel
        ]

    def to_chrome_trace(self, time_unit: float = 1e-3) -> str:
        """The timeline as Chrome-trace JSON (the Trace Event Format that Perfetto and chrome://tracing open).

        One process per rank (``pid`` = rank, named ``rank r``), one complete event (``"ph": "X"``) per
        pass, named like torch's profiler labels its pipeline actions (``"F"``, ``"B"``, ``"I"``,
        ``"W"`` with the global stage and micro-batch in ``args``). ``time_unit`` is the length of one
        cost unit in seconds (the default, 1 ms per unit, keeps unit costs readable); trace times are in
        microseconds, as the format requires (Trace Event Format, "ts" and "dur").
        """
        import json

        scale = positive_number("time_unit", time_unit) * 1e6
        sched = self.schedule
        events = [{"name": "process_name", "ph": "M", "pid": r, "tid": 0, "args": {"name": f"rank {r}"}}
                  for r in range(sched.stages)]
        for r, op, start, end in self.rows():
            stage = sched.virtual_stage(r, op.chunk)
            events.append({"name": f"{op.kind}{op.microbatch} s{stage}", "cat": op.kind, "ph": "X", "pid": r, "tid": 0,
                           "ts": round(start * scale, 6), "dur": round((end - start) * scale, 6),
                           "args": {"stage": stage, "action": op.kind, "microbatch": op.microbatch}})
        return json.dumps({"traceEvents": events, "displayTimeUnit": "ms",
                           "otherData": {"schedule": sched.kind, "stages": sched.stages,
                                         "microbatches": sched.microbatches, "chunks": sched.chunks}},
                          separators=(",", ":"))  # compact: pages carry it inline (render.pipeline_charts.trace_link)


def _per_stage(name: str, value, stages: int, allow_zero: bool) -> list[float]:
    """A cost as one number for every stage, or a sequence of ``stages`` numbers."""
    if isinstance(value, (numbers.Real,)) and not isinstance(value, bool):
        return [positive_number(name, value, allow_zero)] * stages
    np = _numpy()
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence,) if np is None else (Sequence, np.ndarray)):
        rule = ">= 0" if allow_zero else "> 0"
        raise ParallelselError(f"{name}={value!r}: must be a number {rule} or a sequence of {stages} such numbers (one per stage)")
    values = list(value)
    if len(values) != stages:
        raise ParallelselError(f"{name}={value!r}: has {len(values)} entries; must have one per stage (stages={stages})")
    return [positive_number(f"{name}[{i}]", x, allow_zero) for i, x in enumerate(values)]


def _links(sched: Schedule, cost, lat: float):
    """Per op, in rank order: its rank, its duration, the index of the op it waits for (-2: none)
    and the p2p latency added to that wait (:func:`_dependency`, the rule :meth:`Schedule.deps` also reads);
    also the offset where each rank's ops begin (plus the total at the end). Plain Python with integer keys
    and lookup tables, with or without numpy."""
    p, v, m = sched.stages, sched.chunks, sched.microbatches
    last = sched.virtual_stages - 1
    vs_of = [[sched.virtual_stage(s, c) for c in range(v)] for s in range(p)]
    place = [sched.place(g) for g in range(last + 1)]
    index: dict[int, int] = {}
    stage_l, dur_l, offset, flat = [], [], [0], []
    for s, stage_ops in enumerate(sched.ops):
        costs, row = cost[s], vs_of[s]
        for op in stage_ops:
            cls = _CLASS[op.kind]
            k = ((cls * m + op.microbatch) * v + op.chunk) * p + s
            if k in index:
                raise RuntimeError("schedule lists the same op twice on one stage")
            index[k] = len(stage_l)
            stage_l.append(s)
            dur_l.append(costs[op.kind])
            flat.append((cls, row[op.chunk], op.microbatch))
        offset.append(len(stage_l))
    dep_l, extra_l = [-2] * len(flat), [0.0] * len(flat)
    for g, (cls, vs, mb) in enumerate(flat):
        dep = _dependency(cls, vs, last)
        if dep is not None:
            ds, dc = place[dep[1]]
            j = index.get(((dep[0] * m + mb) * v + dc) * p + ds, -1)
            if j < 0:
                s = stage_l[g]
                ((ds, dop),) = sched.deps(s, sched.ops[s][g - offset[s]])
                raise RuntimeError(f"stage {s} op {sched.ops[s][g - offset[s]]} depends on {dop} on stage {ds}, "
                                   "which the schedule never runs")
            dep_l[g] = j
            if ds != stage_l[g]:
                extra_l[g] = lat
    return offset, stage_l, dur_l, dep_l, extra_l


def _costs(sched: Schedule, forward, backward, weight) -> list[dict[str, float]]:
    """Per rank, the duration of one F, B, I and W of one chunk (see :func:`simulate`)."""
    p, v = sched.stages, sched.chunks
    f = _per_stage("forward", forward, p, allow_zero=False)
    b = _per_stage("backward", backward, p, allow_zero=False)
    w = None if weight is None else _per_stage("weight", weight, p, allow_zero=True)
    if w is None:
        # no split given: a full B costs ``backward``; a split one halves it between I and W
        i, w, full = [x / 2 for x in b], [x / 2 for x in b], b
    else:
        i, full = b, [x + y for x, y in zip(b, w)]
    return [{"F": f[s] / v, "B": full[s] / v, "I": i[s] / v, "W": w[s] / v} for s in range(p)]


def _longest_path(p: int, offset, dep_l, extra_l, dur_l) -> tuple[list[float], list[int]]:
    """End time of every op, and how far each rank got (its end offset if it finished).

    Longest-path evaluation in rank order: each rank advances while its next op's dependency is
    done; a blocked rank waits on that one op and is woken when it ends. The processing order does
    not change the result, only which rank is examined next.
    """
    end = [-1.0] * len(dur_l)
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
    return end, pos


def _columns(sched: Schedule, stage_l, dur_l, end) -> dict:
    """The Timeline's parallel arrays (numpy's, or tuples without numpy)."""
    p = sched.stages
    np = _numpy()
    if np is None:
        busy = [0.0] * p
        for st, d in zip(stage_l, dur_l):
            busy[st] += d
        ops = [op for stage_ops in sched.ops for op in stage_ops]
        return dict(stage=tuple(stage_l), kind=tuple(op.kind for op in ops),
                    microbatch=tuple(op.microbatch for op in ops), chunk=tuple(op.chunk for op in ops),
                    start=tuple(e - d for e, d in zip(end, dur_l)), end=tuple(end), busy=tuple(busy))
    ops = [op for stage_ops in sched.ops for op in stage_ops]
    mb = np.fromiter((op.microbatch for op in ops), dtype=np.int64, count=len(ops))
    ch = np.fromiter((op.chunk for op in ops), dtype=np.int64, count=len(ops))
    kind = np.array([op.kind for op in ops], dtype="<U1")
    stage_a, dur_a, end_a = np.asarray(stage_l, dtype=np.int64), np.asarray(dur_l, dtype=float), np.asarray(end, dtype=float)
    return dict(stage=stage_a, kind=kind, microbatch=mb, chunk=ch, start=end_a - dur_a,
                end=end_a, busy=np.bincount(stage_a, weights=dur_a, minlength=p).astype(float))


def simulate(sched: Schedule, forward=1.0, backward=2.0, weight=None, p2p: float = 0.0) -> Timeline:
    """Execute ``sched`` and time every op.

    Costs are per micro-batch for a whole rank (all its layers), either one number or one per rank
    (for imbalance or a straggler); a chunk takes ``1/chunks`` of its rank's cost.

    * ``backward`` is the whole backward pass unless ``weight`` is given; then ``backward`` is the
      input-gradient part (I) and ``weight`` the weight-gradient part (W), and a full backward B
      costs ``backward + weight``.
    * With ``weight=None``, a split backward is split evenly: I and W each cost ``backward/2``.
    * ``p2p`` is added to every dependency between two different ranks (the send/receive latency).

    Each rank runs its ops in order; an op starts at the later of its rank becoming free and its
    dependencies ending (plus ``p2p`` for those on another rank). Raises ``RuntimeError`` if the
    order deadlocks (which the generated schedules never do).
    """
    if not isinstance(sched, Schedule):
        raise ParallelselError(f"schedule={sched!r}: must be a Schedule from pipeline.schedule()")
    cost = _costs(sched, forward, backward, weight)
    lat = positive_number("p2p", p2p, allow_zero=True)
    offset, stage_l, dur_l, dep_l, extra_l = _links(sched, cost, lat)
    end, pos = _longest_path(sched.stages, offset, dep_l, extra_l, dur_l)
    for s in range(sched.stages):
        if pos[s] < offset[s + 1]:
            op = sched.ops[s][pos[s] - offset[s]]
            waits = ", ".join(f"{dop} on stage {ds}" for ds, dop in sched.deps(s, op))
            raise RuntimeError(f"deadlock: stage {s} cannot run {op} (waits for {waits}), and no other stage can proceed")
    return Timeline(
        schedule=sched,
        makespan=max(end) if end else 0.0,
        **_columns(sched, stage_l, dur_l, end),
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
    ``T_W <= min(T_F, T_B)``: the idle never drops below ``(p-1) max(T_F, T_B)`` (the last stage waits
    ``(p-1)T_F`` for its first input, the first stage ``(p-1)T_B`` for its first gradient), which the
    event simulator shows whenever ``T_W`` exceeds either; a larger ``weight`` is refused (the form would
    go below that floor, even below zero) and :func:`simulate` measures those cases.
    """
    p = positive_int("stages", stages)
    tf = positive_number("forward", forward)
    tb = positive_number("backward", backward)
    tw = positive_number("weight", weight, allow_zero=True)
    if tw > min(tf, tb):  # outside the form's validity (see above)
        raise ParallelselError(f"weight={weight!r}: the ZB-H1 closed form holds for weight <= min(forward, backward) "
                               f"= {min(tf, tb)!r}; simulate() measures the other cases")
    return (p - 1) * (tf + tb - tw)
