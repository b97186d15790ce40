"""Per-rank pass orders of the pipeline schedules, and the settings each schedule accepts.

Each generator returns, for every rank, the ordered list of ``(action, microbatch, chunk)`` that rank
runs in one training step. ``action`` is ``"F"`` (forward), ``"B"`` (full backward), ``"I"``
(input-gradient backward) or ``"W"`` (weight-gradient backward); ``chunk`` is the rank's local model
chunk. A schedule's *layout* maps ``(rank, chunk)`` to the global stage index:

* ``"loop"`` (Megatron-LM's interleaved placement, and torch's default): chunk ``c`` of rank ``r`` is
  stage ``c*p + r``;
* ``"v"`` (ZB-V, Qi et al. 2024 §6; DualPipeV): chunk 0 of rank ``r`` is stage ``r``, chunk 1 is
  stage ``2p - 1 - r``, so the first and the last stage share rank 0.

The orders and the refusals follow the schedules of PyTorch 2.13's ``torch.distributed.pipelining``
(``schedules.py``: ``ScheduleGPipe``, ``Schedule1F1B``, ``ScheduleInterleaved1F1B``,
``ScheduleLoopedBFS``, ``ScheduleInterleavedZeroBubble``, ``ScheduleZBVZeroBubble``,
``ScheduleDualPipeV``) as its runtime executes them; ``tests/test_pipeline_torch.py`` checks every
rank of every setting against the order recorded from torch (``tools/record_torch_schedules.py``).
The papers each schedule comes from are cited on its generator.
"""

from __future__ import annotations

from collections import defaultdict

from parallelsel.core._check import ParallelselError

__all__ = ["ORDERS", "LAYOUTS", "check", "per_round", "rank_orders", "stage_of"]

LAYOUTS = ("loop", "v")


def stage_of(layout: str, stages: int, rank: int, chunk: int) -> int:
    """Global stage index of ``chunk`` on ``rank`` under ``layout`` (see the module docstring)."""
    if layout == "v":
        return rank if chunk == 0 else 2 * stages - 1 - rank
    return chunk * stages + rank


class _Counter:
    """Next micro-batch per (action, chunk): each chunk runs micro-batches 0, 1, ... in order."""

    def __init__(self) -> None:
        self.next: dict[tuple[str, int], int] = defaultdict(int)

    def take(self, action: str, chunk: int, counter: str | None = None) -> tuple[str, int, int]:
        key = (counter or action, chunk)
        mb = self.next[key]
        self.next[key] = mb + 1
        return action, mb, chunk


def _gpipe(p: int, m: int, v: int, r: int) -> list:
    # GPipe (Huang et al. 2019 §2.2; torch ScheduleGPipe): all forwards, then all backwards, both in
    # micro-batch order.
    return [("F", i, 0) for i in range(m)] + [("B", i, 0) for i in range(m)]


def _one_f_one_b(p: int, m: int, v: int, r: int) -> list:
    # PipeDream-Flush / 1F1B (Narayanan et al. 2021 §2.2.1; torch Schedule1F1B): rank r runs p-r
    # forwards, then alternates backward and forward, then drains the remaining backwards.
    warm = min(m, p - r)
    ops = [("F", i, 0) for i in range(warm)]
    for i in range(m - warm):
        ops += [("B", i, 0), ("F", warm + i, 0)]
    return ops + [("B", i, 0) for i in range(m - warm, m)]


def per_round(p: int, m: int) -> int:
    # torch's flexible interleaving: max(1, m // p) rounds of m // rounds micro-batches each.
    return m // max(1, m // p)


def _interleaved_rank(p: int, m: int, v: int, r: int, zero_bubble: bool) -> list:
    """Interleaved 1F1B (Narayanan et al. 2021 §2.2.2) and its zero-bubble variant (Qi et al. 2024,
    ZB1P), as torch's ``_get_1f1b_rank_ops`` orders them.

    Forward slot k runs chunk ``(k // n) % v`` and backward slot j chunk ``v-1 - (j // n) % v``, with
    ``n`` micro-batches per round; rank r warms up with ``(v-1)n + h(p-1-r)`` forwards (``h`` = 2 for
    1F1B, 1 for zero bubble), then pairs forward slot ``warm + j`` with backward slot j. With zero
    bubble the backward is the input gradient I, and the weight gradient W of backward slot ``j - r``
    follows backward slot j; the last r W run at the end.
    """
    n, total = per_round(p, m), m * v
    warm = min((v - 1) * n + (1 if zero_bubble else 2) * (p - 1 - r), total)
    count = _Counter()
    back = "I" if zero_bubble else "B"
    fwd = [count.take("F", (k // n) % v) for k in range(total)]
    bwd = [count.take(back, v - 1 - (j // n) % v) for j in range(total)]
    ops = fwd[:warm]
    for j in range(total):
        if warm + j < total:
            ops.append(fwd[warm + j])
        ops.append(bwd[j])
        if zero_bubble and j >= r:
            ops.append(("W",) + bwd[j - r][1:])
    if zero_bubble:
        ops += [("W",) + b[1:] for b in bwd[max(0, total - r):]]
    return ops


def _interleaved(p: int, m: int, v: int, r: int) -> list:
    return _interleaved_rank(p, m, v, r, zero_bubble=False)


def _interleaved_zb(p: int, m: int, v: int, r: int) -> list:
    return _interleaved_rank(p, m, v, r, zero_bubble=True)


def _looped_bfs(p: int, m: int, v: int, r: int) -> list:
    # Breadth-first pipeline (Lamy-Poirier 2023, arXiv:2211.05953; torch ScheduleLoopedBFS): each
    # chunk forwards all micro-batches before the next chunk starts; the backwards walk the chunks
    # and the micro-batches in reverse.
    return ([("F", i, c) for c in range(v) for i in range(m)]
            + [("B", i, c) for c in reversed(range(v)) for i in reversed(range(m))])


def _zbv(p: int, m: int, v: int, r: int) -> list:
    """ZB-V (Qi et al. 2024 §6, Figure 8; torch ScheduleZBVZeroBubble), on the V layout.

    Built for ``n = max(2p - 1, m)`` micro-batches (enough to fill the V), then the passes of
    micro-batches ``>= m`` are dropped. Warm-up: ``2(p-r)-1`` forwards of chunk 0, r pairs (F1, F0),
    ``p-r`` triples (F1, I1, W1); steady state: (F0, I0, W0, F1, I1, W1) until chunk 0 has forwarded
    every micro-batch and chunk 1 caught up; cool-down: r pairs (I0, I1), ``p-r`` pairs (I0, W0), then
    the remaining W of chunk 1 and of chunk 0.
    """
    n = max(2 * p - 1, m)
    c = _Counter()
    ops = [c.take("F", 0) for _ in range(2 * (p - r) - 1)]
    for _ in range(r):
        ops += [c.take("F", 1), c.take("F", 0)]
    for _ in range(p - r):
        ops += [c.take("F", 1), c.take("I", 1), c.take("W", 1)]
    while c.next["F", 1] < c.next["F", 0] or c.next["F", 0] < n:
        if c.next["F", 0] < n:
            ops.append(c.take("F", 0))
        ops += [c.take("I", 0), c.take("W", 0), c.take("F", 1), c.take("I", 1), c.take("W", 1)]
    for _ in range(r):
        ops += [c.take("I", 0), c.take("I", 1)]
    for _ in range(p - r):
        ops += [c.take("I", 0), c.take("W", 0)]
    for chunk in (1, 0):
        while c.next["W", chunk] < c.next["I", chunk]:
            ops.append(c.take("W", chunk))
    return [op for op in ops if op[1] < m]


def _dualpipev(p: int, m: int, v: int, r: int) -> list:
    """DualPipeV (DeepSeek-AI 2024, DeepSeek-V3 report §3.2.1 DualPipe, folded onto the V layout as
    in github.com/deepseek-ai/DualPipe; torch ScheduleDualPipeV).

    Eight phases on rank r: ``2(p-r-1)`` F0; ``r+1`` (F0, F1); ``p-r-1`` (I1, a pending W, F1);
    ``m-2p+r+1`` (F0, B1, F1, B0) -- the overlapped forward-and-backward pairs, flattened in the order
    the runtime runs them (forward first); ``p-r-1`` (B1, F1, B0); ``r+1`` (back1, back0), where the
    backward switches from full B to input-only I halfway (before back1 on odd ranks, back0 on even);
    ``p-r-1`` (a pending W, back0); ``r+1`` pending W. Pending W run oldest first, one per slot.
    """
    c = _Counter()
    pending: list[tuple[str, int, int]] = []
    ops: list[tuple[str, int, int]] = []

    def back(chunk: int, split: bool) -> None:
        op = c.take("I" if split else "B", chunk, counter="I")
        ops.append(op)
        if split:
            pending.append(("W",) + op[1:])

    def weight() -> None:
        if pending:
            ops.append(pending.pop(0))

    ops += [c.take("F", 0) for _ in range(2 * (p - r - 1))]
    for _ in range(r + 1):
        ops += [c.take("F", 0), c.take("F", 1)]
    for _ in range(p - r - 1):
        back(1, True)
        weight()
        ops.append(c.take("F", 1))
    for _ in range(m - 2 * p + r + 1):
        ops.append(c.take("F", 0))
        back(1, False)
        ops.append(c.take("F", 1))
        back(0, False)
    for _ in range(p - r - 1):
        back(1, False)
        ops.append(c.take("F", 1))
        back(0, False)
    split, half = False, (r + 1) // 2
    for i in range(r + 1):
        split = split or (i == half and r % 2 == 1)
        back(1, split)
        split = split or (i == half and r % 2 == 0)
        back(0, split)
    for _ in range(p - r - 1):
        weight()
        back(0, split)
    for _ in range(r + 1):
        weight()
    return ops


# kind -> (generator, layout, the torch class it follows)
ORDERS = {
    "gpipe": (_gpipe, "loop", "ScheduleGPipe"),
    "1f1b": (_one_f_one_b, "loop", "Schedule1F1B"),
    "interleaved": (_interleaved, "loop", "ScheduleInterleaved1F1B"),
    "looped-bfs": (_looped_bfs, "loop", "ScheduleLoopedBFS"),
    "interleaved-zb": (_interleaved_zb, "loop", "ScheduleInterleavedZeroBubble"),
    "zb-h1": (_interleaved_zb, "loop", "ScheduleInterleavedZeroBubble"),
    "zbv": (_zbv, "v", "ScheduleZBVZeroBubble"),
    "dualpipev": (_dualpipev, "v", "ScheduleDualPipeV"),
}


def check(kind: str, p: int, m: int, v: int) -> None:
    """Raise ``ParallelselError`` naming the rule if torch 2.13 refuses ``kind`` with these settings.

    * gpipe, 1f1b: one stage per rank (``PipelineScheduleSingle`` takes one stage), so ``chunks = 1``;
      zb-h1 is this library's one-chunk name of interleaved-zb, so also ``chunks = 1``;
    * 1f1b: ``m >= p`` (``Schedule1F1B``);
    * interleaved, interleaved-zb, zb-h1: ``m`` a multiple of the number of rounds ``max(1, m // p)``;
    * zbv, dualpipev: exactly 2 stages per rank (``chunks = 2``); dualpipev also ``m >= 2p`` (at least
      as many micro-batches as stages).
    """
    name = f"kind={kind!r}"
    if kind in ("gpipe", "1f1b", "zb-h1") and v != 1:
        raise ParallelselError(f"chunks={v}: must be 1 for {name} (one stage per rank; "
                               f"use 'interleaved', 'looped-bfs' or 'interleaved-zb' for more)")
    if kind in ("zbv", "dualpipev") and v != 2:
        raise ParallelselError(f"chunks={v}: must be 2 for {name} (a V-shaped schedule holds exactly 2 stages per rank)")
    if kind == "1f1b" and m < p:
        raise ParallelselError(f"microbatches={m}: must be >= stages={p} for {name} (as torch's Schedule1F1B requires)")
    if kind in ("interleaved", "interleaved-zb", "zb-h1") and m % max(1, m // p):
        rounds = max(1, m // p)
        raise ParallelselError(f"microbatches={m}: must be a multiple of the number of rounds max(1, m // stages) = {rounds} "
                               f"for {name} (stages={p}; torch's flexible interleaved rule)")
    if kind == "dualpipev" and m < 2 * p:
        raise ParallelselError(f"microbatches={m}: must be >= 2 x stages = {2 * p} for {name} "
                               f"(at least as many micro-batches as model stages)")


def rank_orders(kind: str, p: int, m: int, v: int) -> tuple[str, list[list[tuple[str, int, int]]]]:
    """``(layout, orders)``: the layout of ``kind`` and every rank's ``(action, microbatch, chunk)`` list.

    Call :func:`check` first; the generators assume an accepted setting.
    """
    gen, layout, _ = ORDERS[kind]
    return layout, [gen(p, m, v, r) for r in range(p)]
