"""A step laid out in time: what computes, what communicates, what overlaps and what waits.

:func:`step_trace` draws one :class:`parallelsel.core.estimate.Estimate` as two lanes of one device of the
slowest pipeline stage -- a compute lane and a communication lane -- so a reader can see the
lesson's step timeline (the seed's study tip 2) for any plan. It adds no model of its own: every
duration comes from the estimate (its compute split into forward and backward, its traffic items,
the exposed seconds per strategy and the bubble), and the lanes place them the way that model
assumes they run:

* each micro-batch's forward and backward is cut into ``blocks`` equal pieces of layers;
* critical-path collectives (TP, CP, EP; PP's p2p) follow each block and the compute lane waits
  for them (Shoeybi et al. 2019 §3: the TP all-reduce's result is the next GEMM's input), except the part
  that runs under the block's own kernels (``Traffic.hidden``: TP overlap's GEMMs, the CP ring's attention);
* overlappable collectives (DP's bucketed all-reduce, ZeRO/FSDP gathers and reduce-scatters) run
  on the communication lane beside the pass they belong to (Li et al. 2020 §3.2.3 for DDP buckets,
  Zhao et al. 2023 §3.3 for FSDP prefetch); the part the estimate says is exposed becomes a wait:
  before the first forward block for gathers (the first unit cannot be prefetched) and after the
  last backward block for gradients (the last bucket cannot be hidden);
* a pass beside hidden collectives is longer by the SMs they hold (``StepTime.contention_phases``);
* a pipeline's bubble is idle time, half before the first forward (warm-up) and half after the
  last backward (cool-down), as on stage 0 of 1F1B.

The trace therefore sums exactly to the estimate: compute + waits = ``step.total``.
Units: seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core._check import ParallelselError, positive_int
from ..core.estimate import Estimate

__all__ = ["Segment", "StepTrace", "step_trace"]

LANES = ("compute", "comm")
KINDS = ("forward", "backward", "wait", "bubble", "overlapped", "exposed")


@dataclass(frozen=True)
class Segment:
    """One interval on a lane: ``kind`` in :data:`KINDS`, ``strategy`` the traffic label ("TP", "DP", ...)
    for communication, "" for compute; ``microbatch`` counts from 0."""

    lane: str
    kind: str
    start: float
    duration: float
    strategy: str = ""
    microbatch: int = 0

    @property
    def end(self) -> float:
        return self.start + self.duration


@dataclass(frozen=True)
class StepTrace:
    """The segments of one step and the totals they add up to (seconds)."""

    segments: tuple[Segment, ...]
    total: float
    compute: float
    exposed: float
    overlapped: float
    bubble: float

    def lane(self, name: str) -> tuple[Segment, ...]:
        return tuple(s for s in self.segments if s.lane == name)


class _Lanes:
    """Append-only builder: the compute lane advances in order; comm segments are placed at given times."""

    def __init__(self):
        self.now = 0.0
        self.out: list[Segment] = []

    def compute(self, kind: str, seconds: float, mb: int, strategy: str = "") -> None:
        if seconds > 0:
            self.out.append(Segment("compute", kind, self.now, seconds, strategy, mb))
            self.now += seconds

    def comm(self, kind: str, start: float, seconds: float, strategy: str, mb: int) -> None:
        if seconds > 0:
            self.out.append(Segment("comm", kind, start, seconds, strategy, mb))


def _critical(est: Estimate) -> dict[str, tuple[float, float]]:
    """Seconds per step of each critical-path strategy (TP, CP, EP, PP): the exposed part and the part that runs
    under the kernels it is paired with (``Traffic.hidden``: TP overlap's GEMMs, the CP ring's attention blocks)."""
    out: dict[str, tuple[float, float]] = {}
    for it in est.traffic:
        if not it.overlappable:
            exposed, hidden = out.get(it.strategy, (0.0, 0.0))
            out[it.strategy] = (exposed + it.time - it.hidden, hidden + it.hidden)
    return out


def _pools(est: Estimate, m: int) -> dict[tuple[str, int], list[tuple[str, float, float]]]:
    """Overlappable (strategy, total seconds, exposed seconds) per (phase, micro-batch).

    An item with one call per step belongs to the last micro-batch's backward (gradients) or the
    first micro-batch's forward (gathers); one with a call per micro-batch is spread over all.
    The exposed seconds per strategy and phase come from the estimate, shared in proportion to time.
    """
    exposed = {(s, ph): v for s, ph, v in est.step.exposed_phases}
    over = [it for it in est.traffic if it.overlappable]
    busy: dict[tuple[str, str], float] = {}
    for it in over:
        busy[(it.strategy, it.phase)] = busy.get((it.strategy, it.phase), 0.0) + it.time
    pools: dict[tuple[str, int], list[tuple[str, float, float]]] = {}
    for it in over:
        key = (it.strategy, it.phase)
        share = exposed.get(key, 0.0) * (it.time / busy[key] if busy[key] else 0.0)
        if it.calls >= m:
            targets = list(range(m))
        else:
            targets = [m - 1] if it.phase == "backward" else [0]
        for mb in targets:
            pools.setdefault((it.phase, mb), []).append((it.strategy, it.time / len(targets), share / len(targets)))
    return pools


def _stretch(st, m: int) -> dict[tuple[str, int], float]:
    """Seconds the SMs of hidden collectives add to each (phase, micro-batch) pass (``StepTime.contention_phases``),
    on the passes :func:`_pools` puts those collectives beside: every micro-batch's, or the first forward and the
    last backward."""
    out: dict[tuple[str, int], float] = {}
    for phase, every, seconds in st.contention_phases:
        targets = range(m) if every else ([m - 1] if phase == "backward" else [0])
        for mb in targets:
            out[(phase, mb)] = out.get((phase, mb), 0.0) + seconds / len(targets)
    return out


def _pass(lanes: _Lanes, kind: str, seconds: float, blocks: int, mb: int, critical: dict[str, tuple[float, float]],
          pool) -> None:
    """One micro-batch's forward or backward: blocks of compute, critical collectives after each,
    overlappable ones under the compute, their exposed part as a wait at the pass's edge."""
    exposed = sum(e for _, _, e in pool)
    if kind == "forward" and exposed > 0:
        start = lanes.now
        for strategy, _total, e in pool:
            lanes.comm("exposed", start, e, strategy, mb)
            start += e
        lanes.compute("wait", exposed, mb)
    begin = lanes.now
    hidden = [(s, t - e) for s, t, e in pool if t - e > 0]
    for _ in range(blocks):
        at = lanes.now
        lanes.compute(kind, seconds / blocks, mb)
        for strategy, (_, h) in critical.items():   # under the block's own kernels
            lanes.comm("overlapped", at, h / blocks, strategy, mb)
            at += h / blocks
        for strategy, (e, _) in critical.items():
            lanes.comm("exposed", lanes.now, e / blocks, strategy, mb)
            lanes.compute("wait", e / blocks, mb, strategy)
    # Overlapped traffic runs back to back from the start of the pass, inside its span.
    start = begin
    for strategy, t in hidden:
        lanes.comm("overlapped", start, t, strategy, mb)
        start += t
    if kind == "backward" and exposed > 0:
        at = max(lanes.now, start)
        wait_from = lanes.now
        for strategy, _total, e in pool:
            lanes.comm("exposed", at, e, strategy, mb)
            at += e
        lanes.compute("wait", at - wait_from, mb)


def step_trace(est: Estimate, blocks: int = 4) -> StepTrace:
    """Lay out ``est``'s step on a compute lane and a communication lane (see the module docstring).

    ``blocks`` is how many pieces of layers each pass is drawn in (the per-layer collectives of a
    block are drawn as one segment).
    """
    if not isinstance(est, Estimate):
        raise ParallelselError(f"est={est!r}: must be an Estimate from ps.estimate(...)")
    blocks = positive_int("blocks", blocks)
    st, plan = est.step, est.plan
    m = max(1, plan.microbatches(est.workload))
    per_mb_critical = {k: (e / (2 * m), h / (2 * m)) for k, (e, h) in _critical(est).items()}  # half in each pass
    pools = _pools(est, m)
    fwd, bwd = st.forward / m, (st.kernels - st.forward) / m
    stretch = _stretch(st, m)
    lanes = _Lanes()
    lanes.compute("bubble", st.bubble / 2, 0)
    for mb in range(m):
        _pass(lanes, "forward", fwd + stretch.get(("forward", mb), 0.0), blocks, mb, per_mb_critical,
              pools.get(("forward", mb), []))
        _pass(lanes, "backward", bwd + stretch.get(("backward", mb), 0.0), blocks, mb, per_mb_critical,
              pools.get(("backward", mb), []))
    lanes.compute("bubble", st.bubble / 2, m - 1)
    segs = tuple(lanes.out)
    waits = sum(s.duration for s in segs if s.lane == "compute" and s.kind == "wait")
    overlapped = sum(s.duration for s in segs if s.kind == "overlapped")
    return StepTrace(segs, lanes.now, st.compute, waits, overlapped, st.bubble)
