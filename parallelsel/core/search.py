"""Search hybrid plans for a cluster: enumerate, drop the infeasible with the reason, rank, explain.

The lesson's method (its further-study section) run over every plan the cluster allows: hard constraints first
(divisibility, batch), then memory, then cost. :func:`search` enumerates

* ``dp x tp x pp`` = every GPU of the cluster, ``tp`` over divisors of the GPU count up to the
  number of heads (a TP group larger than a node is allowed; its ``why`` says it crosses nodes),
  ``pp`` over divisors of the rest up to the number of layers;
* context parallelism ``cp`` (:data:`CP_DEGREES`) for sequences of at least :data:`CP_MIN_SEQ`
  tokens, ``dp x tp x pp x cp`` = the GPUs;
* ZeRO stage 0-3 (only 0 where there is one rank to shard over: :func:`parallelsel.core.stacks.zero_ranks`),
  with ZeRO > 0 also HSDP (shard over the DP ranks of one node, replicate across nodes), expert
  parallelism for MoE models (:func:`_expert_grids`: EP over the divisors of cp x dp up to the expert count with the
  experts split like the dense layers, and with TP > 1 also whole experts, etp 1, with EP over the divisors of
  tp x cp x dp; HSDP only with the former), micro-batch 1, 2, 4, 8,
  recompute none / selective / full, sequence parallelism on or off when tp > 1, and with pp > 1
  every schedule the library has: 1F1B, interleaved 1F1B with 2 or 4 chunks when the layers divide,
  ZB-H1 and GPipe (counted as dominated by 1F1B without being timed: the same bubble with more
  micro-batches in flight);

checks the cheap hard constraints first (heads and FFN over TP, layers over PP, global batch over
dp x micro-batch, micro-batches over PP for interleaving), then memory
(:func:`parallelsel.core.memory.breakdown`), and calls :func:`parallelsel.core.estimate.estimate` only for
plans that fit and are not dominated: for the same plan, more recomputation only adds compute (and,
with full recompute, TP traffic), so once a recompute setting fits, the heavier ones are counted
under ``dominated_by_less_recompute`` instead of being timed. Fitting plans are then estimated in
order of a lower bound on their step time (compute plus the bubble on it), stopping once the bound
passes the N-th best time found: the rest cannot enter the top N and are counted below it
(``ranked_below_top``). Every exclusion is counted under the code of the rule that drops it: the
hard constraints are :mod:`parallelsel.core.plan`'s rules, applied at the level of the enumeration where
each becomes decidable, so the search restates none of them.

Ranking: estimated step time; ties (within :data:`TIE`) go to the simpler plan first (fewer
parallel dimensions, :attr:`parallelsel.Plan.dims`: the lesson's "complexity is itself a cost",
and the selection matrix's preference for plain DP when it is as fast), then to memory headroom
(less memory first).

Examples:
    >>> import parallelsel as ps
    >>> r = search(ps.Workload(ps.MODELS["llama2-7b"], global_batch=64), ps.Cluster(ps.DEVICES["a100-80gb"]), top=3)
    >>> len(r.results), sum(r.excluded.values()) + len(r.results) == r.considered
    (3, True)
"""

from __future__ import annotations

import heapq
import math
import time
from functools import cached_property, lru_cache
from collections import Counter
from dataclasses import dataclass, field, replace

from ._check import ParallelselError, flag, positive_int
from .estimate import Estimate, estimate, schedule_bubble_overhead
from .comm import critical_items
from .kernels import compute_time, layer_and_head_times
from .hardware import Cluster
from .memory import DEFAULT_HEADROOM, TIGHT_MARGIN, breakdown, budget, check_headroom, states_floor, usable_memory
from .model import RECOMPUTE
from .placement import DEEPEP_NVL_PEERS, flex_group, group_reasons
from .plan import (MICRO_BATCHES, SCHEDULES, Plan, Workload, balanced_stage_layers, batch_violations, constraint_violations,
                   cp_violations, dispatcher_violations, divisors, ep_overlap_violations, ep_violations, expert_ranks,
                   megatron_split,
                   p2p_overlap_on, pp_violations, stack_split, stage_layer_counts, tp_overlap_violations, tp_violations, with_stack_split)
from .reasons import Reason
from .stacks import DEFAULT_STACK, STACKS, pp_zero_reason, recompute_layer_counts, stack_fused, zero_ranks

__all__ = ["DECIDERS", "EXCLUSIONS", "Explanation", "Fix", "Ranked", "SearchResult", "enumerates", "explain", "fixes",
           "search", "tie_set"]

RECOMPUTES = RECOMPUTE  # lightest first: the order in which the search tries them


def stack_recomputes(workload: Workload) -> tuple[str, ...]:
    """The recomputation policies the workload's stack offers (:data:`parallelsel.core.stacks.STACKS`), lightest first."""
    offered = STACKS[workload.stack].recompute
    return tuple(r for r in RECOMPUTES if r in offered)
TIE = 0.059
"""Step times within this relative difference count as a tie: the step-time model's mean absolute
throughput error over every measured run of the validation page -- the 14 published Megatron-LM A100 runs
(:data:`parallelsel.course.references.MEASURED_RUNS`) and each stack's own measured runs
(:data:`parallelsel.course.stack_runs.STACK_RUNS`): 5.9%; tests/test_step_time.py checks it is not below the
measured error. A plan faster by less than that is not known to be faster."""

# Exclusion codes (``SearchResult.excluded`` keys), in the order they are checked. The constraint codes
# are those of parallelsel.core.plan's rules; render/reasons.py titles each one.
EXCLUSIONS = ("tp_exceeds_heads", "heads_not_divisible", "kv_heads_not_divisible", "ffn_not_divisible",
              "stages_exceed_layers", "layers_not_divisible", "stage_layers_sum", "recompute_layers_exceed_chunk",
              "ep_needs_moe", "experts_not_divisible",
              "pp_zero2_no_stack", "batch_below_dp", "batch_not_divisible", "interleave_microbatches",
              "gpipe_dominated", "dominated_by_less_recompute", "bound_exceeds_best", "memory_exceeds_device",
              "ranked_below_top")
"""Every exclusion code, in check order; the same keys whatever ``top`` is (the top N is in
``SearchResult.top``, not in the key)."""

_FIXABLE = ("dp", "tp", "pp", "zero", "micro_batch", "recompute", "sp", "schedule", "chunks", "ep", "shard", "cp",
            "stage_layers", "p2p_overlap", "tp_overlap", "recompute_layers", "etp", "ep_overlap", "dispatcher")

CP_DEGREES = (2, 4, 8, 16, 32)
"""Context-parallel degrees the search tries, for every sequence length they split (``seq_len`` a multiple of
2 x CP, :func:`parallelsel.core.plan.cp_violations`): no length threshold, the cost decides. Practitioners run
CP 2 at 8K tokens (torchtitan's Llama 3 70B/405B benchmark configs) and CP 16 at 128K (Dubey et al. 2024, Table 4)."""

_SCHEDULE_ORDER = {"1f1b": 0, "interleaved": 1, "zb-h1": 2, "gpipe": 3}
"""Tie-break among schedules (after fewer dimensions): the one launchers implement most widely first.
Megatron-LM has 1F1B and interleaved 1F1B, torch.distributed.pipelining all four (see launchers)."""


@dataclass(frozen=True)
class Ranked:
    """One ranked plan: its estimate and the chain of decisions that explains it (:class:`Reason` objects;
    ``str()`` of each is the sentence)."""

    rank: int
    plan: Plan
    estimate: Estimate
    why: tuple[Reason, ...]


@dataclass(frozen=True)
class SearchResult:
    """What :func:`search` found.

    ``results``: the top plans, fastest first; ``excluded``: plans dropped, by reason code
    (:data:`EXCLUSIONS`, in check order; ``ranked_below_top`` for feasible plans ranked below the top N);
    ``considered``: plans enumerated (``sum(excluded.values()) + len(results) == considered``);
    ``passed_constraints``: plans that passed every non-memory hard constraint; ``fitting``:
    plans that also fit in memory; ``seconds``: wall time of the search.
    """

    workload: Workload
    cluster: Cluster
    results: tuple[Ranked, ...]
    excluded: dict[str, int]
    considered: int
    passed_constraints: int
    fitting: int
    top: int
    seconds: float = field(default=0.0, compare=False)
    closest_miss: Plan | None = field(default=None, compare=False)
    """The plan that passed every other constraint and missed the memory by the least (None if none did)."""
    closest_miss_reason: Reason | None = field(default=None, compare=False)
    """``closest_miss`` as a reason: ``closest_miss`` with its ``plan``, memory ``bytes``, ``budget`` and ``gap``."""
    tie: Reason | None = field(default=None, compare=False)
    """When more than one ranked plan is within the tie band of the fastest (:data:`TIE`, the model's measured
    error): a ``tie_set`` reason with how many (``count``), the ``band``, the ``plans``, the fields they differ
    in (``differ``) and what would decide between them (``decide``: :data:`DECIDERS` codes). None otherwise."""

    def __iter__(self):
        """Iterate over the ranked plans (``for r in ps.search(...)``)."""
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def __getitem__(self, i):
        return self.results[i]

    def funnel(self) -> tuple[tuple[str, int], ...]:
        """``(stage, plans)`` from enumeration to the top N: ``considered``, ``passed_constraints``,
        ``fitting``, ``ranked`` (render/reasons.py names each stage)."""
        return (
            ("considered", self.considered),
            ("passed_constraints", self.passed_constraints),
            ("fitting", self.fitting),
            ("ranked", len(self.results)),
        )

    @property
    def best(self) -> Ranked | None:
        return self.results[0] if self.results else None


def _check_fixed_overlaps(fixed: dict, workload: Workload) -> None:
    """Pinned overlap switches: pipeline-send overlap only off (on is the stack's default where offered), and EP
    overlap only where some plan can take it (:func:`parallelsel.core.plan.ep_overlap_violations`)."""
    if "p2p_overlap" in fixed and fixed["p2p_overlap"] is not None:
        fixed["p2p_overlap"] = flag("fixed['p2p_overlap']", fixed["p2p_overlap"])
    if fixed.get("p2p_overlap"):
        raise ParallelselError("fixed['p2p_overlap']=True: only False can be pinned (overlapped pipeline sends are "
                               "the stack's default where it offers them: Stack.overlap_pp_p2p)")
    if "dispatcher" in fixed:   # (the value checked as Plan checks it; the all-to-all is the default, None)
        fixed["dispatcher"] = Plan(dispatcher=fixed["dispatcher"]).dispatcher
        # Some plan the pins leave must take it: a free degree is tried at 1 and 2 (the experts' TP is the dense
        # TP or 1 in the search, _without_default_etp).
        tps = [fixed["tp"]] if "tp" in fixed else [1, 2]
        etps = {expert_ranks(t, 1, fixed["etp"]) for t in tps} if "etp" in fixed else set(tps) | {1}
        probes = [Plan(dp=e * t, ep=e, etp=t, dispatcher=fixed["dispatcher"])
                  for e in ([fixed["ep"]] if "ep" in fixed else [1, 2]) for t in sorted(etps)]
        bad = [dispatcher_violations(workload, q) for q in probes] if fixed["dispatcher"] else [[]]
        if all(bad):
            raise ParallelselError(f"fixed['dispatcher']={fixed['dispatcher']!r}: no plan can take it "
                                   f"({bad[-1][0].code} {dict(bad[-1][0].values)})")
    if fixed.get("ep_overlap"):
        probe = Plan(dp=max(2, fixed.get("ep", 2)), ep=fixed.get("ep", 1), ep_overlap=True,
                     recompute=fixed.get("recompute", "none"))
        bad = [r for r in ep_overlap_violations(workload, probe) if r.code != "ep_overlap_needs_ep"
               or not workload.model.is_moe]
        if bad:
            raise ParallelselError(f"fixed['ep_overlap']=True: no plan can take it ({bad[0].code} "
                                   f"{dict(bad[0].values)})")


def _without_default_etp(fixed) -> dict:
    # The experts' TP the search tries: None (split like the dense layers; a pinned TP degree means the same) or 1
    # (whole experts). A pin keeps one of the two grids; any other value is an input error.
    fixed = dict(fixed or {})
    if "etp" in fixed:
        if fixed["etp"] is not None and fixed["etp"] == fixed.get("tp"):
            fixed["etp"] = None
        if fixed["etp"] not in (None, 1):
            raise ParallelselError(f"fixed['etp']={fixed['etp']!r}: the search tries the experts split like the dense "
                                   f"layers (None) or whole (1); estimate a plan with this etp directly")
    return fixed


def _check_fixed(fixed, workload: Workload, cluster: Cluster) -> dict:
    """Validate pinned plan fields: values as :class:`Plan` takes them, and the structural rules of
    :mod:`parallelsel.core.plan` (a pinned TP or PP that no plan can satisfy is an input error)."""
    fixed = _without_default_etp(fixed)
    for k in fixed:
        if k not in _FIXABLE:
            raise ParallelselError(f"fixed[{k!r}]: unknown plan field; allowed: {', '.join(_FIXABLE)}")
    # Let Plan validate the values themselves (types, ranges, schedule names), and keep its normalised values.
    # The probe's DP group must hold the pinned EP and shard groups (a pinned ep=8 needs dp >= 8).
    free = ("chunks", "schedule", "dp", "p2p_overlap", "etp")  # (what a probe without a pipeline or TP would drop)
    probe_kw = {k: v for k, v in fixed.items() if k not in free}
    for k in ("ep", "shard"):
        if k in probe_kw:
            probe_kw[k] = positive_int(k, probe_kw[k])
    probe_dp = math.lcm(probe_kw.get("ep", 1), probe_kw.get("shard") or 1)
    if probe_kw.get("stage_layers") is not None and "pp" not in probe_kw:
        probe_kw["pp"] = len(probe_kw["stage_layers"]) if hasattr(probe_kw["stage_layers"], "__len__") else 1
    probe = Plan(dp=probe_dp, **probe_kw)
    fixed.update({k: getattr(probe, k) for k in fixed if k not in free})
    if fixed.get("stage_layers") is not None:  # (None pins the even split)
        fixed.setdefault("pp", probe.pp)
        if sum(fixed["stage_layers"]) != workload.model.layers:
            raise ParallelselError(f"stage_layers={fixed['stage_layers']}: must add up to the {workload.model.layers} "
                                   f"layers of {workload.model.name}")
    _check_fixed_overlaps(fixed, workload)
    if "dp" in fixed:
        fixed["dp"] = positive_int("dp", fixed["dp"])
    if "chunks" in fixed:
        fixed["chunks"] = positive_int("chunks", fixed["chunks"])
    # Schedule name and chunks as Plan checks them (a probe with a pipeline, so interleaving is legal).
    Plan(pp=max(2, fixed.get("pp", 2)), schedule=fixed.get("schedule", "interleaved" if fixed.get("chunks", 1) > 1
                                                              else "1f1b"), chunks=fixed.get("chunks", 1))
    if fixed.get("schedule") == "interleaved" and fixed.get("pp") == 1:
        raise ParallelselError("schedule='interleaved' with pp=1: interleaving needs a pipeline (pp > 1)")
    m = workload.model
    bad = tp_violations(m, fixed["tp"]) if "tp" in fixed else []
    if bad:
        raise ParallelselError(f"tp={fixed['tp']}: must divide the {m.heads} attention heads and the "
                               f"{m.kv_heads} KV heads of {m.name}" if bad[0].code != "ffn_not_divisible" else
                               f"tp={fixed['tp']}: must divide the FFN width {m.ffn_hidden} of {m.name}")
    bad = ep_violations(m, fixed["ep"]) if "ep" in fixed else []
    if bad:
        raise ParallelselError(f"ep={fixed['ep']}: " + ("needs an MoE model" if bad[0].code == "ep_needs_moe" else
                                                        f"must divide the {m.experts} experts of {m.name}"))
    if "pp" in fixed and fixed["pp"] > m.layers:
        raise ParallelselError(f"pp={fixed['pp']}: must be at most the {m.layers} layers of {m.name}")
    prod = 1
    for k in ("dp", "tp", "pp", "cp"):
        prod *= fixed.get(k, 1)
    if cluster.gpus % prod:
        raise ParallelselError(f"dp×tp×pp{'×cp' if 'cp' in fixed else ''}={prod}: must divide the cluster's {cluster.gpus} GPUs")
    interleaving = fixed.get("chunks", 1) > 1 or fixed.get("schedule") == "interleaved"
    if interleaving and (fixed.get("pp") == 1 or ("pp" not in fixed and cluster.gpus == prod)):  # pp = 1 left
        raise ParallelselError(f"fixed={fixed!r}: interleaving needs a pipeline (pp > 1), and these pins leave "
                               f"pp = 1 on the cluster's {cluster.gpus} GPUs")
    return fixed


def _splits(fixed: dict, pp: int, model, stack: str = DEFAULT_STACK) -> list[tuple[int, ...] | None]:
    """The pipeline splits the search gives ``pp`` stages: a pinned ``stage_layers``; else the balanced split
    (:func:`parallelsel.core.plan.balanced_split`, the output layer and loss weighed by their FLOPs against a
    layer's; None when that is the even split); when the layers divide and the balanced split is uneven, the
    even split too (Megatron-LM's and DeepSpeed's default, and torchtitan's with less-layers 0); when ``layers + 2``
    divides over ``pp`` >= 3 stages, the split with one layer fewer on the first and the last stage, as
    practitioners configure it (:func:`parallelsel.core.plan.megatron_split` with the embedding and the loss
    counted as layers: Megatron-Core's ``--account-for-embedding/loss-in-pipeline-split``, Megatron-DeepSpeed's
    ``--pp-partition-method type:transformer|embedding`` that BLOOM's 70 layers ran on 12 stages with); and the
    split ``stack`` builds for a job that names none (:func:`parallelsel.core.plan.stack_split`: DeepSpeed's
    partitioner where the layers do not divide, torchtitan's stage builder with its default less-layers of 1),
    so a job run either way is enumerated and ranked, not only its balanced neighbour."""
    if "stage_layers" in fixed:
        return [fixed["stage_layers"]]
    split = balanced_stage_layers(model, pp)
    out = [split, None] if split is not None and model.layers % pp == 0 else [split]
    if pp >= 3 and (model.layers + 2) % pp == 0 and (model.layers + 2) // pp >= 2:
        ends = megatron_split(model.layers, pp, account_for_embedding=True, account_for_loss=True)
        if ends not in out:
            out.append(ends)
    own = stack_split(stack, model.layers, pp)
    if own is not None and own not in out:
        out.append(own)
    return out


def _depths(model, pp: int, split) -> list[int]:
    """Interleaving depths v >= 2 the layers allow: with the even split, every virtual stage the same whole
    number of layers (``layers % (pp v) == 0``, Megatron-LM's rule); with an uneven split, at least one layer
    per virtual stage on every rank (torchtitan splits its stages by layer count, uneven ones included)."""
    if pp == 1:
        return []
    if split is None:
        per = model.layers // pp
        return [v for v in divisors(per) if v >= 2]
    return list(range(2, min(split) + 1))


def _schedules(fixed: dict, pp: int, model, split=None, offered=None) -> list[tuple[str, int]]:
    """(schedule, chunks) pairs to try for a pipeline of ``pp`` stages; a pinned schedule or chunk count is always
    tried; interleaving with every depth the layers allow (:func:`_depths`). Unpinned, only the schedules the
    stack runs (``offered``, :data:`parallelsel.core.stacks.STACKS` ``schedules``: Megatron-Core has no ZB-H1 or
    GPipe, DeepSpeed's PipelineEngine only 1F1B); 1F1B is always tried, as every stack runs it."""
    interleaved = _depths(model, pp, split)
    if "schedule" in fixed or "chunks" in fixed:
        sched = fixed.get("schedule", "interleaved" if fixed.get("chunks", 1) > 1 else "1f1b")
        if sched == "interleaved":
            chunks = [fixed["chunks"]] if "chunks" in fixed else interleaved
            return [(sched, v) for v in chunks if pp > 1]
        return [(sched, fixed.get("chunks", 1))]
    if pp == 1:
        return [("1f1b", 1)]
    pairs = [("1f1b", 1)] + [("interleaved", v) for v in interleaved] + [("zb-h1", 1), ("gpipe", 1)]
    return [x for x in pairs if offered is None or x[0] == "1f1b" or x[0] in offered]


def _expert_grids(model, dp: int, tp: int, cp: int, pinned: int | None = None,
                  etp="free") -> list[tuple[int, int | None]]:
    """(ep, etp) pairs to try: the experts split like the dense layers (etp None), EP degrees the divisors of
    cp x dp up to the expert count (the grid folds over CP: Plan's rule); and with TP the grid of whole experts
    (etp 1, MoE parallel folding: EP reaches over the TP ranks too), EP from 2 up to tp x cp x dp (whole experts with
    no EP repeat every expert on every rank; torchtitan refuses it). ``pinned``: a pinned EP degree alone; ``etp``:
    a pinned expert TP (None or 1) keeps that grid alone. (1, None) alone for a dense model."""
    if not model.is_moe:
        return [(1, None)]
    keep = lambda d: d <= model.experts and pinned in (None, d)  # noqa: E731
    inside = [(d, None) for d in divisors(cp * dp) if keep(d)] if etp in ("free", None) or tp == 1 else []
    folded = [(d, 1) for d in divisors(tp * cp * dp) if d > 1 and keep(d)] if tp > 1 and etp in ("free", 1) else []
    return inside + folded


def _shards(zero: int, dp: int, tp: int, ek: tuple, gpus_per_node: int) -> list:
    """ZeRO shard-group sizes to try: the whole DP group (None), and for HSDP the DP ranks of one node
    (shard within a node, replicate across nodes: PyTorch FSDP HYBRID_SHARD, Zhao et al. 2023 §3.2.1), where
    the EP groups tile it; none with whole experts or an EP group reaching over CP (``ek`` = (ep, etp)): their
    expert shard groups are not a node's DP ranks."""
    ep, etp = ek
    if zero == 0 or etp is not None or dp % ep:
        return [None]
    local = gpus_per_node // tp if gpus_per_node % tp == 0 else 0
    out = [None]
    if 1 < local < dp and dp % local == 0 and local % ep == 0:
        out.append(local)
    return out


@dataclass
class _Tally:
    """What the enumeration has counted so far (one search)."""

    excluded: Counter = field(default_factory=Counter)
    considered: int = 0
    passed: int = 0
    fitting: int = 0
    miss: tuple = (float("inf"), None, 0.0, 0.0)  # (bytes over budget, plan, bytes, budget)
    top: int = 10
    exhaustive: bool = False
    done: list = field(default_factory=list)  # the Estimates made
    worst: list = field(default_factory=list)  # max-heap (negated) of the best ``top`` step times so far

    def bound(self) -> float:
        """The step time a plan must be able to beat to enter the top N: the N-th best so far plus the tie
        band (infinite until N plans are timed, or in an exhaustive search)."""
        if self.exhaustive or len(self.worst) < self.top:
            return math.inf
        return -self.worst[0] * (1 + TIE)

    def add(self, e: Estimate) -> None:
        self.done.append(e)
        t = e.step.total
        if len(self.worst) < self.top:
            heapq.heappush(self.worst, -t)
        elif t < -self.worst[0]:
            heapq.heapreplace(self.worst, -t)


@dataclass(frozen=True)
class _Space:
    """The fixed inputs of one search: what every group of the enumeration reads."""

    workload: Workload
    cluster: Cluster
    fixed: dict
    headroom: float

    @cached_property
    def triples(self) -> dict:
        """:func:`_ep_recomputes` by its arguments: every group of the enumeration asks it again (twice: counting
        and searching), and the answer depends on the degrees alone."""
        return {}

    @cached_property
    def kernels(self) -> tuple:
        """(the ops the workload's stack fuses, sorted; FP8 GEMMs): what the compute bound reads of the stack."""
        return tuple(sorted(stack_fused(self.workload))), self.workload.recipe.gemm == "fp8"

    def allowed(self, name, values) -> list:
        """The values to try for a plan field: a pinned value alone (even off the default grid, e.g.
        micro-batch 3), else ``values``."""
        return [self.fixed[name]] if name in self.fixed else list(values)


def _degrees(space: _Space):
    """``(tp, cp, pp, dp)`` with tp x cp x pp x dp = the GPUs, tp up to the heads, pp up to the layers."""
    m, G, fixed = space.workload.model, space.cluster.gpus, space.fixed
    s_len = space.workload.seq_len
    cps = [fixed["cp"]] if "cp" in fixed else [1] + [c for c in CP_DEGREES if not cp_violations(s_len, c)]
    for tp in divisors(G):
        if tp > m.heads or fixed.get("tp", tp) != tp:
            continue
        for cp in cps:
            if (G // tp) % cp:
                continue
            for pp in divisors(G // (tp * cp)):
                dp = G // (tp * pp * cp)
                if pp <= m.layers and fixed.get("pp", pp) == pp and fixed.get("dp", dp) == dp:
                    # A pinned shard group must tile the DP group, a pinned EP degree or expert TP one of the
                    # expert grids the search tries (Plan's rules): other dp are not plans.
                    pinned = "ep" in fixed or "etp" in fixed
                    if (pinned and not _expert_grids(m, dp, tp, cp, fixed.get("ep"), fixed.get("etp", "free"))
                            or dp % (fixed.get("shard") or 1)):
                        continue
                    yield tp, cp, pp, dp


MAX_MICRO_BATCH = 16
"""Largest micro-batch the search tries unpinned: the largest in the published plans it is checked against
(Narayanan et al. 2021 Table 1's 1.7B-7.5B runs, NVIDIA/Megatron-LM examples/sc21/run_table_1.sh). Beyond it
the GEMMs are already at their efficiency plateau (:mod:`parallelsel.core.kernels`), so only memory grows."""


def _micro_batches(space: _Space, dp: int) -> list[int]:
    """Micro-batch sizes to try: every size that splits a DP rank's share of the global batch (B / dp), smallest
    first; the memory check stops each recompute mode at the first size that does not fit (what fits decides,
    as practitioners use 12 or 16 where it fits: NVIDIA/Megatron-LM examples/sc21). A pinned size alone."""
    if "micro_batch" in space.fixed:
        return [space.fixed["micro_batch"]]
    B = space.workload.global_batch
    if B % dp:
        return list(MICRO_BATCHES)  # the batch rule refuses every size; counted there
    return [b for b in divisors(B // dp) if b <= MAX_MICRO_BATCH]


def _knobs(space: _Space, tp: int, cp: int, pp: int, dp: int, split=None):
    """The settings tried for one (tp, cp, pp, dp): (zero, shard, (ep, etp)) triples, SP, micro-batches,
    recompute modes and (schedule, chunks) pairs. ZeRO where there is more than one rank to shard over: DP,
    times CP where the stack shards over both (:func:`parallelsel.core.stacks.zero_ranks`)."""
    m = space.workload.model
    stack = STACKS[space.workload.stack]
    zeros = space.allowed("zero", (0, 1, 2, 3) if zero_ranks(stack, dp, cp) > 1 else (0,))
    if "zero" not in space.fixed:  # the stages the stack runs; plain DDP beside another dimension where it can
        ddp_ok = tp * cp * pp == 1 or not stack.ddp_alone
        zeros = [z for z in zeros if z in stack.zero_stages and (z > 0 or dp == 1 or ddp_ok)]
    if pp > 1 and "zero" not in space.fixed:
        # With PP, only the ZeRO stages the stack runs beside it (STACKS pp_zero: Megatron-Core's distributed
        # optimizer is ZeRO-1, torchtitan's FSDP2 ZeRO-3, DeepSpeed's PipelineEngine asserts stage < 2); ZeRO-2
        # stays in to be counted under pp_zero2_no_stack, which no stack runs.
        offered = stack.pp_zero
        zeros = [z for z in zeros if z in offered or z == 2]
    eks = _expert_grids(m, dp, tp, cp, space.fixed.get("ep"), space.fixed.get("etp", "free"))
    # HSDP shard groups only where ZeRO shards, and tiling the EP groups.
    zse = [(z, sh, e) for z in zeros for e in eks
           for sh in ([space.fixed["shard"]] if "shard" in space.fixed
                      else _shards(z, dp, tp, e, space.cluster.gpus_per_node))]
    return (zse, _sp_overlaps(space, tp), _micro_batches(space, dp),
            space.allowed("recompute", stack_recomputes(space.workload)),
            _schedules(space.fixed, pp, m, split, stack.schedules))


def _sp_overlaps(space: _Space, tp: int) -> list[tuple[bool, bool]]:
    """The (sequence parallelism, TP overlap) pairs tried at TP degree ``tp``: SP off and on where TP > 1, each with
    TP overlap where the stack offers it beside that setting though it leaves it off by default (Megatron-Core's
    ``--tp-comm-overlap``, which needs SP; torchtitan's async TP, which needs ``torch.compile``;
    ``tp_overlap_violations`` names what each stack needs). Overlapping never lengthens a step here -- each fused
    collective hides min(collective, GEMM) less one chunk, more than the copies a staging implementation adds
    (tests/test_search.py checks it over a grid of plans) -- so where it is offered only the overlapped plan is
    tried, unless ``tp_overlap`` is pinned (None or False: the stack's default; True: only plans that overlap)."""
    w = space.workload
    st = STACKS[w.stack]
    sps = space.allowed("sp", ((True,) if st.tp_sp_always else (False, True)) if tp > 1 else (False,))
    pinned = space.fixed.get("tp_overlap", "free")
    offered = tp > 1 and st.tp_overlap and not st.overlap_tp_comm and pinned in ("free", True)
    out = []
    for sp in sps:
        on = offered and not tp_overlap_violations(w, Plan(tp=tp, sp=sp, tp_overlap=True))
        if on or pinned is not True:
            out.append((sp, on))
    return out


@dataclass
class _Group:
    """One (tp, cp, pp, dp) of the enumeration with its knob lists and its lower bound."""

    tp: int
    cp: int
    pp: int
    dp: int
    split: tuple | None
    knobs: tuple
    n: int
    bound: float
    memo: dict = field(default_factory=dict)  # ((ep, etp), sp, b, recompute, share) -> compute bound; ("comm", ...) -> _comm_terms


def _prepare_group(space: _Space, tally: _Tally, tp: int, cp: int, pp: int, dp: int, split) -> _Group | None:
    """Count one (tp, cp, pp, dp, split)'s plans; drop them all under a structural rule, else return the group
    with the least step time any of its plans could reach (:func:`_group_bound`)."""
    m = space.workload.model
    knobs, n = _group_count(space, tp, cp, pp, dp, split)
    if n == 0:  # e.g. pinned chunks and pp = 1: no schedule applies, nothing to consider here
        return None
    tally.considered += n
    bad = tp_violations(m, tp) + pp_violations(m, pp, 1, split)
    if bad:  # structural rules reject every knob setting of this group at once
        tally.excluded[bad[0].code] += n
        return None
    g = _Group(tp, cp, pp, dp, split, knobs, n, 0.0)
    g.bound = _group_bound(space, g)
    return g


def _group_count(space: _Space, tp: int, cp: int, pp: int, dp: int, split) -> tuple[tuple, int]:
    """``(knobs, plans)``: the settings one (tp, cp, pp, dp, split) group tries (:func:`_knobs`) and how many plans
    they make."""
    knobs = _knobs(space, tp, cp, pp, dp, split)
    zse, sps, mbs, rcs, scheds = knobs
    return knobs, sum(_settings(space, ep, pp, sched, ch, sps, mbs, rcs, tp) for *_, ep in zse for sched, ch in scheds)


def _pins_leave_plans(space: _Space) -> bool:
    """Whether the search's pins leave any plan to consider (the counting of :func:`_prepare_group`, no bound)."""
    m, stack = space.workload.model, space.workload.stack
    return any(_group_count(space, *d, split)[1] for d in _degrees(space) for split in _splits(space.fixed, d[2], m, stack))


def _group_bound(space: _Space, g: _Group) -> float:
    """A step time no plan of the group can beat: over its micro-batches, the lightest recomputation, the
    faster SP setting and every expert grid (ep, etp), the least compute plus the least bubble of its schedules."""
    zse, sps, mbs, rcs, scheds = g.knobs
    w = space.workload
    best = math.inf
    eps, sp = {e for _, _, e in zse}, max(s for s, _ in sps)
    share = min(_lightest(space, g.pp, v, rcs[0])[1] for _, v in scheds)
    for b in mbs:
        if batch_violations(w.global_batch, g.dp, b):
            continue
        m = w.global_batch // (g.dp * b)
        bub = min(_bubble_for(sched, g.pp, m, v) for sched, v in scheds)
        for ep in eps:
            key = (ep, sp, b, rcs[0], share)  # the same entries _search_micro reads
            cb = g.memo.get(key)
            if cb is None:
                cb = g.memo[key] = _compute_bound(space, g.tp, g.cp, g.pp, g.split, b, rcs[0], sp, ep, m, share)
            best = min(best, cb[0] + bub * cb[1])
    return best


@lru_cache(maxsize=4096)
def _bubble_for(schedule: str, pp: int, m: int, v: int) -> float:
    return 0.0 if pp == 1 else schedule_bubble_overhead(schedule, pp, max(1, m), v if schedule == "interleaved" else 1)


def _compute_bound(space: _Space, tp, cp, pp, split, b, rc, sp, ep, m, share=1.0) -> tuple[float, float]:
    """(m x the slowest rank's compute per micro-batch, the fill the bubble idles on): what
    :func:`parallelsel.core.estimate.estimate` counts before communication and the optimizer step (``share``:
    the share of layers a full recomputation repeats, ``Plan.recompute_share``)."""
    w = space.workload
    top, fill = _rank_times(w.model, space.cluster.device, w.seq_len, w.attention, tp, cp, pp, split, b, rc, sp, ep,
                            *space.kernels, share)  # (ep: the (EP, expert TP) pair)
    return m * top, m * fill


def _compute_and_bubble(space: _Space, plan: Plan) -> float:
    """Compute plus bubble of ``plan`` as the bound counts them (:func:`_compute_bound`, :func:`_bubble_for`), with the
    share of layers it recomputes: a step time it cannot beat."""
    m = space.workload.global_batch // (plan.dp * plan.micro_batch)
    compute, fill = _compute_bound(space, plan.tp, plan.cp, plan.pp, plan.stage_layers, plan.micro_batch, plan.recompute,
                                   plan.sp and plan.tp > 1, (plan.ep, plan.etp), m,
                                   plan.recompute_share(space.workload.model))
    return compute + _bubble_for(plan.schedule, plan.pp, m, plan.chunks) * fill


def _lightest(space: _Space, pp: int, chunks: int, rc: str) -> tuple[int | None, float]:
    """The fewest layers a chunk recomputes under ``rc`` in this search, as ``(recompute_layers, share)``: a pinned
    ``recompute_layers``; else under ``"full"`` the fewest the stack can recompute
    (:func:`parallelsel.core.stacks.recompute_layer_counts`); else every layer (None, 1.0)."""
    layers = space.workload.model.layers
    per = layers // (pp * chunks)
    if rc != "full" or per < 1:
        return None, 1.0
    if "recompute_layers" in space.fixed:  # pinned: that count (None: every layer)
        k = space.fixed["recompute_layers"]
    else:
        k = next(iter(recompute_layer_counts(STACKS[space.workload.stack], per)), None)
    return (None, 1.0) if k is None else (k, min(1.0, k * pp * chunks / layers))  # as Plan.recompute_share


@lru_cache(maxsize=65536)
def _rank_times(model, device, s, attention, tp, cp, pp, split, b, rc, sp, ep, fused, fp8,
                share=1.0) -> tuple[float, float]:
    # Per micro-batch: the slowest rank's compute, and the mean of the others' (0 without a pipeline). A rank's
    # compute is affine in the share of layers a full recomputation repeats (it repeats that share of the forward),
    # so a share between 0 and 1 is exact from the two ends' per-rank times, which are cached.
    args = (model, device, s, attention, tp, cp, pp, split, b, rc, sp, ep, fused, fp8)  # ep: (EP, expert TP)
    if share in (0.0, 1.0):
        totals = _rank_totals(*args, share)
    else:
        totals = tuple(a + share * (c - a) for a, c in zip(_rank_totals(*args, 0.0), _rank_totals(*args, 1.0)))
    top = max(totals)
    return top, (sum(totals) - top) / (pp - 1) if pp > 1 else 0.0


@lru_cache(maxsize=65536)
def _rank_totals(model, device, s, attention, tp, cp, pp, split, b, rc, sp, ep, fused, fp8, share) -> tuple[float, ...]:
    # Each rank's compute per micro-batch: stage_compute_times's sums, without building a ComputeTime per rank
    # (n layers each, the head on the last).
    ep, etp = ep  # the (EP, expert TP) pair
    if pp == 1:
        return (compute_time(model, b, s, device, tp, 1, cp, ep, sp, rc, attention, share, fused, fp8, etp).total,)
    layer, head = layer_and_head_times(model, b, s, device, tp, cp, ep, sp, rc, attention, share, fused, fp8, etp)
    lt, ht = layer[0] + layer[1], head[0] + head[1]
    counts = stage_layer_counts(model.layers, pp, split)
    return tuple(n * lt for n in counts[:-1]) + (counts[-1] * lt + ht,)


def _comm_terms(space: _Space, plan: Plan) -> tuple[float, float, float]:
    """The critical-path communication of ``plan`` that a step cannot hide (TP, CP, EP and the pipeline's
    p2p, less what TP overlap and the CP ring hide and the pipeline's p2p where the stack overlaps a schedule's
    sends: :mod:`parallelsel.core.comm`), as (exposed seconds, the part of it the bubble
    stretches, the pipeline's p2p per chunk). It leaves out terms of
    :func:`parallelsel.core.estimate.estimate`'s total that are never negative (overlappable DP/ZeRO
    traffic, the optimizer step), so compute + bubble + these is a step time no plan beats. TP, CP and EP
    items do not depend on ZeRO or the shard group, nor on the schedule but for what EP overlap hides (the
    passes its warm-up leaves paired), and the pipeline's p2p grows with the chunks (one send each way per
    micro-batch and chunk), so one group's plans share them per (TP overlap, EP overlap, schedule, chunks, ep, sp,
    micro-batch, recompute)."""
    exposed = critical = per_chunk = 0.0  # (p2p sends stretch no bubble: CP's ring and the pipeline's own)
    for it in critical_items(space.workload, plan, space.cluster):
        bare = it.time - it.hidden  # what TP overlap and the CP ring leave exposed, as estimate counts it
        if it.strategy == "PP":
            per_chunk += bare / plan.chunks
        else:
            exposed += bare
            critical += 0.0 if it.op == "p2p" else bare
    return exposed, critical, per_chunk


def _chunk_violations(space: _Space, g, chunks: int, sched: str) -> list | None:
    """A pinned chunk count must split the layers too; where it does not, the stack may build its own split
    (:func:`parallelsel.core.plan.stack_split`, which estimate prices), or None when that split is searched in a
    group of its own (:func:`_splits`)."""
    m, stack = space.workload.model, space.workload.stack
    own = stack_split(stack, m.layers, g.pp, chunks, sched) if g.split is None and m.layers % (g.pp * chunks) else None
    if own is not None and own in _splits(space.fixed, g.pp, m, stack):
        return None
    return pp_violations(m, g.pp, chunks, g.split if g.split is not None else own)


def _search_group(space: _Space, tally: _Tally, g: _Group) -> None:
    """Count and filter every plan of one group; fitting ones within the bound are estimated.

    Loop order: schedule, EP, SP, micro-batch, recompute, then the (ZeRO, shard) pairs, so the bound (which
    ZeRO and the shard group do not change) is computed once for all of them."""
    m = space.workload.model
    w = space.workload
    zse, sps, mbs, rcs, scheds = g.knobs

    def per(ep, sched, chunks) -> int:  # the plans one (ZeRO, shard, expert grid) has under a schedule
        return _settings(space, ep, g.pp, sched, chunks, sps, mbs, rcs, g.tp)

    # No stack runs PP with ZeRO-2 (parallelsel.core.stacks): dropped under every schedule.
    keep = []
    for t in zse:
        r = pp_zero_reason(g.pp, t[0], zero_ranks(STACKS[w.stack], g.dp, g.cp))
        if r is not None and r.code == "pp_zero2_no_stack":
            tally.excluded["pp_zero2_no_stack"] += sum(per(t[2], sched, ch) for sched, ch in scheds)
        else:
            keep.append(t)
    by_ep: dict[tuple, list] = {}  # (ep, etp) -> its (zero, shard) pairs
    for z, shard, ep in keep:
        by_ep.setdefault(ep, []).append((z, shard))
    cands: list = []
    for sched, chunks in scheds:
        bad = _chunk_violations(space, g, chunks, sched)
        if bad is None:
            continue  # the split the stack builds for these chunks is searched in a group of its own
        kept = sum(per(t[2], sched, chunks) for t in keep)
        if bad or (g.split is not None and min(g.split) < chunks):  # (every rank one layer per chunk at least)
            tally.excluded[bad[0].code if bad else "stages_exceed_layers"] += kept
            continue
        if (space.fixed.get("recompute_layers") or 0) > m.layers // (g.pp * chunks):  # a pinned count a chunk lacks
            tally.excluded["recompute_layers_exceed_chunk"] += kept
            continue
        if sched == "gpipe" and "schedule" not in space.fixed:
            # Same bubble as 1F1B (Narayanan et al. 2021 §2.2.1) with all m micro-batches in
            # flight instead of at most p: never faster, never smaller, so never timed.
            tally.excluded["gpipe_dominated"] += kept
            continue
        for (ep, etp), zs in by_ep.items():
            bad = ep_violations(m, ep, etp)  # EP must tile the experts (and expert TP their FFN)
            if bad:
                tally.excluded[bad[0].code] += per((ep, etp), sched, chunks) * len(zs)
                continue
            experts_tp = expert_ranks(g.tp, 1, etp)   # (the experts' TP: their own, or the dense one)
            for (sp, ov), (epo, disp, rcs_e) in ((s, e) for s in sps for e in _ep_recomputes(
                    space, ep, g.pp, sched, chunks, rcs, experts_tp)):
                base = {"dp": g.dp, "tp": g.tp, "pp": g.pp, "sp": sp, "schedule": sched, "chunks": chunks,
                        "ep": ep, "etp": etp, "cp": g.cp, "stage_layers": g.split,
                        "p2p_overlap": space.fixed.get("p2p_overlap"),
                        "tp_overlap": True if ov else space.fixed.get("tp_overlap"), "ep_overlap": epo,
                        "dispatcher": disp}
                hidden = g.memo.get(("p2p", sched, chunks))  # (sends overlap by schedule and chunks: once a group)
                if hidden is None:
                    hidden = g.memo[("p2p", sched, chunks)] = _p2p_hidden(w, base)
                _search_micro(space, tally, base, zs, mbs, rcs_e, cands, g.memo, hidden)
    _time_candidates(space, tally, cands)


def _time_candidates(space: _Space, tally: _Tally, cands: list) -> None:
    """Estimate a group's fitting plans, lowest bound first, while each bound can still reach the top N."""
    for lb, plan, fewer in sorted(cands, key=lambda c: c[0]):
        if lb > tally.bound():
            continue  # fits, cannot reach the top N: counted under ranked_below_top
        if fewer:  # a full recomputation: the fewest layers that fit, found only for a plan that may be timed
            plan = _fewest_recomputed(space.workload, plan, *fewer, device=space.cluster.device)
            if _compute_and_bubble(space, plan) > tally.bound():  # its bound with the layers it does recompute
                continue
        tally.add(estimate(space.workload, plan, space.cluster, headroom=space.headroom))


def _ep_overlaps(space: _Space, ep: int, pp: int, schedule: str, chunks: int) -> tuple:
    """The ``Plan.ep_overlap`` settings tried for an expert-parallel degree: the stack's default (None, off) and,
    where the stack offers it and the plan can take it (:func:`parallelsel.core.plan.ep_overlap_violations`: an
    MoE with EP > 1, a 16-bit model, the interleaved schedule's virtual stages with a pipeline), the overlap --
    both, since it costs one more layer's activations for its shorter step. A pinned value is the one tried (none if the plan
    cannot take it). Full recomputation, which the overlap excludes, is left out of the overlapped plans."""
    able = _ep_overlap_able(space.workload, ep, pp, schedule, chunks)
    if "ep_overlap" in space.fixed:
        pinned = space.fixed["ep_overlap"]
        return (pinned,) if able or not pinned else ()
    return (None, True) if able else (None,)


@lru_cache(maxsize=4096)
def _ep_overlap_able(workload: Workload, ep: int, pp: int, schedule: str, chunks: int) -> bool:
    """Whether a plan of these degrees can take EP overlap: :func:`parallelsel.core.plan.ep_overlap_violations`
    (the rule, written once) of a probe plan with them and no recomputation (full recomputation is left out by
    :func:`_ep_recomputes`)."""
    probe = Plan(dp=ep, ep=ep, pp=pp, schedule=schedule, chunks=chunks, ep_overlap=True)
    return not ep_overlap_violations(workload, probe)


def _ep_recomputes(space: _Space, ep: int, pp: int, schedule: str, chunks: int, rcs, etp: int = 1) -> tuple:
    """``(ep_overlap, dispatcher, recomputation modes)`` triples tried for an expert-parallel degree under a schedule:
    each setting of :func:`_ep_overlaps` and of :func:`_dispatchers` (``etp``: the experts' TP degree) with the
    modes it goes with (the overlap never with full recomputation)."""
    key = (ep, pp, schedule, chunks, tuple(rcs), etp)
    if key not in space.triples:
        space.triples[key] = tuple((epo, disp, tuple(r for r in rcs if r != "full") if epo else tuple(rcs))
                                   for epo in _ep_overlaps(space, ep, pp, schedule, chunks)
                                   for disp in _dispatchers(space, ep, etp))
    return space.triples[key]


def _dispatchers(space: _Space, ep: int, etp: int) -> tuple:
    """The ``Plan.dispatcher`` settings tried for experts over ``ep`` x ``etp`` (EP x expert TP) ranks: the all-to-all
    (None) and, where the stack offers a flex dispatcher and the plan can take it
    (:func:`parallelsel.core.plan.dispatcher_violations`), one flex backend (:func:`_flex_backend`). A pinned value
    is the one tried (none if the plan cannot take it)."""
    backend = space.fixed.get("dispatcher") or _flex_backend(space.workload, space.cluster)
    able = backend is not None and _dispatcher_able(space.workload, ep, etp, backend)
    if "dispatcher" in space.fixed:
        pinned = space.fixed["dispatcher"]
        return (pinned,) if able or pinned is None else ()
    return (None, backend) if able else (None,)


def _flex_backend(workload: Workload, cluster: Cluster) -> str | None:
    """The flex backend the search tries for ``workload`` on ``cluster``: of those its stack offers, DeepEP in nodes
    of up to its NVLink peers and HybridEP in a larger NVLink domain, which only HybridEP spans
    (:data:`parallelsel.core.placement.DEEPEP_NVL_PEERS`; the two price alike inside eight), else the one the stack
    has; None where it has none."""
    offered = STACKS[workload.stack].dispatchers
    want = "deepep" if cluster.gpus_per_node <= DEEPEP_NVL_PEERS else "hybridep"
    return want if want in offered else (offered[0] if offered else None)


@lru_cache(maxsize=4096)
def _dispatcher_able(workload: Workload, ep: int, etp: int, backend: str) -> bool:
    """Whether experts over ``ep`` x ``etp`` ranks can go through ``backend``: the rule of
    :func:`parallelsel.core.plan.dispatcher_violations` asked of a probe plan with those degrees."""
    probe = Plan(dp=ep * etp, ep=ep, etp=etp, dispatcher=backend)
    return not dispatcher_violations(workload, probe)


def _settings(space: _Space, ep, pp: int, schedule: str, chunks: int, sps, mbs, rcs, tp: int = 1) -> int:
    """How many plans one (ZeRO, shard, expert grid ``ep``) of a group has under ``schedule``: SP x micro-batch x
    the (EP overlap, dispatcher, recomputation) triples of :func:`_ep_recomputes` (``ep``: the (EP, expert TP) pair;
    ``tp``: the dense TP, the experts' when their own is None)."""
    etp = expert_ranks(tp, 1, ep[1])
    return len(sps) * len(mbs) * sum(len(r) for *_, r in _ep_recomputes(space, ep[0], pp, schedule, chunks, rcs, etp))


def _p2p_hidden(workload: Workload, base: dict) -> bool:
    """Whether the pipeline sends of the plans built from ``base`` overlap compute (the bound then leaves them out)."""
    return p2p_overlap_on(workload, Plan(**base))


def _search_micro(space: _Space, tally: _Tally, base: dict, zs, mbs, rcs, cands: list, memo: dict, p2p_hidden) -> None:
    """The micro-batch x recompute x (ZeRO, shard) settings of one plan: batch rule, dominance, the bound (without
    the pipeline's sends when ``p2p_hidden``: :func:`_p2p_hidden`), then memory.

    Memory never decreases with the micro-batch (activations grow as b x the in-flight count, which
    shrinks at most as 1/b), so once a (recompute, b) does not fit, larger b with that recompute is
    counted without recomputing it. For one b, the first recompute mode that fits dominates the heavier ones (a full
    recomputation that can recompute fewer layers only when no recomputation fits: it can beat a selective one).
    A plan whose compute and bubble, then plus its critical-path communication (:func:`_comm_terms`), exceed
    the current N-th best (plus the tie band) is counted under ``bound_exceeds_best`` without its memory
    being computed (the bound does not move during one call: plans are timed after the group's loops); the
    others go to :func:`_fit`.
    """
    w = space.workload
    too_big: dict = {}
    n = len(zs)
    bound = tally.bound()
    ep, sp, pp, chunks, sched = (base["ep"], base["etp"]), base["sp"], base["pp"], base["chunks"], base["schedule"]
    model_parallel = base["dp"] != base["dp"] * base["tp"] * pp * base["cp"]
    lights = {rc: _lightest(space, pp, chunks, rc) for rc in rcs}  # partial full recomputation: the bound's fewest
    for b in mbs:
        bad = batch_violations(w.global_batch, base["dp"], b, sched, pp)
        if bad:
            tally.excluded[bad[0].code] += len(rcs) * n
            continue
        m = w.global_batch // (base["dp"] * b)
        bub = _bubble_for(sched, pp, m, chunks)
        found: dict = {}  # (zero, shard) -> the lightest recomputation that fit
        for rc in rcs:
            tally.passed += n
            live = []
            least, share = lights[rc]
            for zsh in zs:  # (a full recomputation of fewer layers can beat a selective one: only "none" dominates it)
                if zsh in found and (least is None or found[zsh] == "none"):
                    tally.excluded["dominated_by_less_recompute"] += 1
                elif too_big.get((zsh, rc), b) < b:
                    tally.excluded["memory_exceeds_device"] += 1
                else:
                    live.append(zsh)
            if not live:
                continue
            key = (ep, sp, b, rc, share)
            cb = memo.get(key)
            if cb is None:
                cb = memo[key] = _compute_bound(space, base["tp"], base["cp"], pp, base["stage_layers"], b, rc,
                                                sp and base["tp"] > 1, ep, m, share)
            compute, fill = cb
            lb = compute + bub * fill
            if lb > bound:
                tally.excluded["bound_exceeds_best"] += len(live)
                continue
            probe = None
            if model_parallel:
                crc = "none" if least is not None else rc  # fewer recomputed layers, fewer collectives: at least none
                lb, probe = _with_comm(space, base, memo, (ep, sp, b, crc), lb, bub, p2p_hidden, dict(
                    micro_batch=b, recompute=crc, zero=live[0][0], shard=live[0][1]))
                if lb > bound:
                    tally.excluded["bound_exceeds_best"] += len(live)
                    continue
            _fit(space, tally, base, b, rc, lb, live, probe, memo, too_big, found, cands)


def _with_comm(space: _Space, base: dict, memo: dict, key: tuple, lb: float, bub: float, p2p_hidden: bool,
               fields: dict) -> tuple[float, Plan | None]:
    """``lb`` plus the critical-path communication of the plan ``base`` and ``fields`` make (:func:`_comm_terms`,
    memoised per ``key`` and TP overlap, which changes the exposed TP time only), and that plan when it was built
    here (None when the memo answered)."""
    # (EP overlap hides what the schedule's warm-up leaves paired: schedule and chunks are part of the key)
    ckey = ("comm", base["tp_overlap"], base["ep_overlap"], base.get("dispatcher"), base["schedule"], base["chunks"]) + key
    comm = memo.get(ckey)
    built = None
    if comm is None:
        built = Plan(**fields, **base)
        comm = memo[ckey] = _comm_terms(space, built)
    exposed, critical, per_chunk = comm
    return lb + exposed + bub * critical + (0.0 if p2p_hidden else per_chunk * base["chunks"]), built


def _fit(space: _Space, tally: _Tally, base: dict, b, rc, lb, live, probe, memo, too_big, found, cands) -> None:
    """The memory check of one (micro-batch, recompute)'s live (ZeRO, shard) settings; fitting plans join ``cands``.

    A plan whose states' floor (:func:`parallelsel.core.memory.states_floor`, the same for every micro-batch,
    recompute mode, schedule and SP setting, so one per group, expert grid (ep, etp) and (ZeRO, shard)) is over the budget by at
    least the closest miss held is counted without its full breakdown: it cannot fit or be a closer miss. A full
    recomputation that fits recomputes as few layers as fit (:func:`_fewest_recomputed`)."""
    w, ep = space.workload, (base["ep"], base["etp"])
    pinned = space.fixed.get("recompute_layers")
    per = w.model.layers // (base["pp"] * base["chunks"])
    free = rc == "full" and "recompute_layers" not in space.fixed
    ks = recompute_layer_counts(STACKS[w.stack], per) if free else ()
    for z, shard in live:
        plan = probe if probe is not None and (z, shard) == live[0] and probe.recompute == rc \
            and probe.recompute_layers == pinned else None
        fc = memo.get(("floor", ep, z, shard))
        if fc is None:
            plan = plan or Plan(micro_batch=b, recompute=rc, zero=z, shard=shard, recompute_layers=pinned, **base)
            fc = memo[("floor", ep, z, shard)] = (states_floor(w, plan, space.cluster.device) * (1 - 1e-9),  # (rounding)
                                                  budget(space.cluster.device, plan, space.headroom))
        floor, cap = fc
        if floor - cap >= tally.miss[0]:
            tally.excluded["memory_exceeds_device"] += 1
            too_big[((z, shard), rc)] = b
            continue
        plan = plan or Plan(micro_batch=b, recompute=rc, zero=z, shard=shard, recompute_layers=pinned, **base)
        need = breakdown(w, plan, space.cluster.device).total
        if need > cap:
            tally.excluded["memory_exceeds_device"] += 1
            too_big[((z, shard), rc)] = b
            if need - cap < tally.miss[0]:
                tally.miss = (need - cap, plan, need, cap)
            continue
        found.setdefault((z, shard), rc)
        tally.fitting += 1
        room = _room(space.cluster.device, plan, cap) if ks else 0.0
        # fewer recomputed layers, as long as the plan keeps TIGHT_MARGIN of the usable memory free
        cands.append((lb, plan, (ks, room, need) if ks and need <= room else None))


def _room(device, plan: Plan, cap: float) -> float:
    """The memory a plan whose recomputed layers the search (or :func:`fixes`) chooses may take: its budget ``cap``,
    and no more than leaves :data:`parallelsel.core.memory.TIGHT_MARGIN` of the usable memory free."""
    return min(cap, usable_memory(device, plan) * (1 - TIGHT_MARGIN))


def _fewest_recomputed(workload: Workload, plan: Plan, counts: tuple[int, ...], cap: float,
                       full: float | None = None, device=None) -> Plan:
    """``plan`` (a full recomputation within ``cap`` bytes) recomputing the fewest of ``counts`` layers a chunk that
    stay within it. Its activations only grow as fewer layers recompute, by one stored layer's worth a layer, so the
    count is found from the fewest count's memory and the whole recomputation's by interpolation, then checked
    and walked to the least that fits (two or three breakdowns instead of a bisection's six or seven). Fewer
    recomputed layers repeat less of the forward (``Plan.recompute_share``), so that plan is the fastest. The
    search passes a ``cap`` that keeps :data:`parallelsel.core.memory.TIGHT_MARGIN` free: the count is its own
    choice, and a plan it pushes to the last byte would be one the estimate's error can break."""
    def need(i: int) -> float:  # i == len(counts): every layer (the plan as given)
        return breakdown(workload, plan if i == len(counts) else plan.with_(recompute_layers=counts[i]), device).total

    low = need(0)  # ``full``: the plan's own memory when the caller has it
    full = need(len(counts)) if full is None else full
    if low <= cap:
        return plan.with_(recompute_layers=counts[0])
    per = workload.model.layers // (plan.pp * plan.chunks)
    k = counts[0] + (low - cap) / max(low - full, 1e-9) * (per - counts[0])  # the affine guess
    i = min(len(counts), next((j for j, c in enumerate(counts) if c >= k), len(counts)))
    while i < len(counts) and need(i) > cap:  # up until it fits (every layer fits)
        i += 1
    while i > 1 and need(i - 1) <= cap:  # down while one fewer still fits
        i -= 1
    return plan if i == len(counts) else plan.with_(recompute_layers=counts[i])


def enumerates(workload: Workload, cluster: Cluster, plan: Plan, fixed: dict | None = None) -> bool:
    """Whether :func:`search` (with the same ``fixed``) enumerates ``plan``: its degrees are among those it
    walks and each of its settings is in the lists the search tries for them (the same generators the search
    runs, so the answer cannot drift from the search). A plan the search enumerates is then either timed or
    counted under the rule that drops it."""
    if not isinstance(plan, Plan):
        raise ParallelselError(f"plan={plan!r}: must be a Plan")
    plan = with_stack_split(workload, plan)
    space = _Space(workload, cluster, _check_fixed(fixed, workload, cluster), DEFAULT_HEADROOM)
    if (plan.tp, plan.cp, plan.pp, plan.dp) not in set(_degrees(space)):
        return False
    m = workload.model
    split, splits = plan.stage_layers, _splits(space.fixed, plan.pp, m, workload.stack)
    if (split not in splits and split is not None and m.layers % plan.pp == 0
            and split == stage_layer_counts(m.layers, plan.pp)):
        split = None  # an explicit even split is the even split (unless the search walks it as a split of its own:
        # torchtitan's stage builder, whose virtual stages need not divide the layers)
    if split not in splits:
        return False
    zse, sps, mbs, rcs, scheds = _knobs(space, plan.tp, plan.cp, plan.pp, plan.dp, split)
    k, per = plan.recompute_layers, m.layers // (plan.pp * plan.chunks)
    counts = (space.fixed["recompute_layers"],) if "recompute_layers" in space.fixed else \
        (None, per) + recompute_layer_counts(STACKS[workload.stack], per)  # (a full one recomputes the fewest that fit)
    overlaps = bool(plan.tp_overlap) and plan.tp > 1  # (a plan that does not overlap where it could is its twin's)
    return ((plan.zero, plan.shard, (plan.ep, plan.etp)) in zse and any(s == plan.sp and (o or not overlaps) for s, o in sps)
            and k in counts and plan.micro_batch in mbs
            and plan.recompute in rcs and (plan.schedule, plan.chunks) in scheds
            and plan.ep_overlap in _ep_overlaps(space, plan.ep, plan.pp, plan.schedule, plan.chunks)
            and not (plan.ep_overlap and plan.recompute == "full")
            and plan.dispatcher in _dispatchers(space, plan.ep, plan.expert_tp)
            and p2p_overlap_on(workload, plan) == p2p_overlap_on(workload, plan.with_(p2p_overlap=space.fixed.get(
                "p2p_overlap"))))


def _rank(fits: list[Estimate], top: int) -> list[Estimate]:
    """The top N by step time; ties within :data:`TIE` go to fewer dimensions, the commoner schedule, less memory."""
    fits = sorted(fits, key=lambda e: (e.step.total, e.memory.total, e.plan.dims))
    ranked: list[Estimate] = []
    i = 0
    while i < len(fits) and len(ranked) < top:
        j = i + 1
        while j < len(fits) and fits[j].step.total <= fits[i].step.total * (1 + TIE):
            j += 1
        ranked.extend(sorted(fits[i:j], key=_tie_order))
        i = j
    return ranked[:top]


def _tie_order(e: Estimate) -> tuple:
    """Order within a tie: fewer dimensions, the commoner schedule, less memory, then step time."""
    return e.plan.dims, _SCHEDULE_ORDER[e.plan.schedule], e.memory.total, e.step.total


def search(workload: Workload, cluster: Cluster, top: int = 10, fixed: dict | None = None,
           headroom: float = DEFAULT_HEADROOM, _exhaustive: bool = False) -> SearchResult:
    """Enumerate, filter and rank hybrid plans that use every GPU of ``cluster``; see the module docstring.

    ``fixed`` pins plan fields (e.g. ``{"tp": 8}``); plans that differ are not enumerated. A pinned
    value that can never be valid (tp not dividing the heads, dp x tp x pp not dividing the GPUs)
    raises :class:`ValueError`. A plan fits when its memory is at most the usable memory x
    (1 - ``headroom``) (:func:`parallelsel.core.memory.budget`).

    The same search asked again in one process (equal workload, cluster and arguments) returns the
    first answer from a memo, with ``seconds`` the time of this call.
    """
    t0 = time.perf_counter()
    if not isinstance(workload, Workload):
        raise ParallelselError(f"workload={workload!r}: must be a Workload")
    if not isinstance(cluster, Cluster):
        raise ParallelselError(f"cluster={cluster!r}: must be a Cluster")
    top = positive_int("top", top)
    check_headroom(headroom)
    if workload.recipe.gemm == "fp8" and not cluster.device.fp8_flops:  # every plan would be fp8_not_supported
        raise ParallelselError(f"recipe={workload.recipe.name!r}: runs its GEMMs in FP8, which {cluster.device.name} "
                               f"has no tensor cores for (fp8_flops=0); choose a 16-bit recipe or an FP8 part")
    pins = _check_fixed(fixed, workload, cluster)
    try:
        result = _memo(workload, cluster, top, tuple(sorted(pins.items())), headroom, _exhaustive)
    except TypeError:  # an unhashable pinned value: search without the memo
        result = _search(workload, cluster, top, pins, headroom, _exhaustive)
    return replace(result, seconds=time.perf_counter() - t0, excluded=dict(result.excluded))  # a caller's own dict


@lru_cache(maxsize=64)
def _memo(workload, cluster, top, pins: tuple, headroom, exhaustive) -> SearchResult:
    # Every input is frozen and the search is a pure function of them, so one process (the site's build, a
    # notebook, fixes() and explain()) answers a repeated search once. Results are frozen dataclasses.
    return _search(workload, cluster, top, dict(pins), headroom, exhaustive)


def _search(workload: Workload, cluster: Cluster, top: int, pins: dict, headroom: float,
            _exhaustive: bool) -> SearchResult:
    t0 = time.perf_counter()
    space = _Space(workload, cluster, pins, headroom)
    tally = _Tally(top=top, exhaustive=_exhaustive)
    m = workload.model
    groups = [g for g in (_prepare_group(space, tally, *d, split) for d in _degrees(space)
                          for split in _splits(space.fixed, d[2], m, workload.stack)) if g is not None]
    for g in sorted(groups, key=lambda g: g.bound):
        if math.isfinite(g.bound) and g.bound > tally.bound():  # (infinite: the batch rule refuses them all)
            tally.excluded["bound_exceeds_best"] += g.n  # no plan of it can reach the top N: neither checked for memory nor timed
            continue
        _search_group(space, tally, g)
    if tally.considered == 0:  # the pins leave no plan at all: an input error, not an empty answer
        ep = (f"; ep={space.fixed['ep']} must divide cp×dp, or tp×cp×dp with whole experts (etp 1) and tp > 1"
              if "ep" in space.fixed else "")
        others = {k: v for k, v in space.fixed.items() if k != "dispatcher"}
        if space.fixed.get("dispatcher") and _pins_leave_plans(replace(space, fixed=others)):
            # The other pins leave plans, none of which the flex dispatcher can take: they keep the experts on one rank.
            one = dispatcher_violations(workload, Plan(dispatcher=space.fixed["dispatcher"]))
            ep += "".join(f"; the other pins leave the experts on one rank, which a flex dispatcher cannot take "
                          f"({r.code})" for r in one[:1])
        raise ParallelselError(f"fixed={space.fixed!r}: no plan of dp×tp×pp×cp = {cluster.gpus} GPUs has these values{ep} "
                               f"(tp up to the {workload.model.heads} heads, pp up to the {workload.model.layers} layers)")
    ranked = _rank(tally.done, top)
    if tally.fitting > len(ranked):
        tally.excluded["ranked_below_top"] += tally.fitting - len(ranked)
    results = tuple(Ranked(k + 1, e.plan, e, why(e)) for k, e in enumerate(ranked))
    excl = {c: tally.excluded[c] for c in EXCLUSIONS if tally.excluded.get(c)}  # check order, stable keys
    gap, plan, need, cap = tally.miss
    miss = None if plan is None else Reason("closest_miss", {"plan": plan.as_dict(), "bytes": need, "budget": cap,
                                                             "gap": gap})
    return SearchResult(workload, cluster, results, excl, tally.considered, tally.passed, tally.fitting, top,
                        time.perf_counter() - t0, plan, miss, tie_set(results))


DECIDERS = {
    "tp": "measure_collectives", "cp": "measure_collectives", "ep": "measure_collectives", "etp": "measure_collectives",
    "ep_overlap": "measure_collectives", "dispatcher": "measure_collectives",
    "pp": "profile_pipeline", "schedule": "profile_pipeline", "chunks": "profile_pipeline",
    "stage_layers": "profile_pipeline", "dp": "measure_collectives", "zero": "measure_overlap",
    "shard": "measure_overlap", "micro_batch": "measure_kernels", "sp": "measure_kernels",
    "recompute": "measure_memory",
}
"""Plan field -> what would decide between tied plans that differ in it: ``measure_collectives`` (the bus
bandwidth of the groups on this cluster, nccl-tests ``all_reduce_perf``/``alltoall_perf``), ``profile_pipeline``
(one profiled step: the stages' real F/B times and the bubble), ``measure_overlap`` (how much DP/ZeRO traffic
hides behind compute: a profiler trace), ``measure_kernels`` (GEMM and elementwise efficiency at that size) and
``measure_memory`` (the real peak, ``torch.cuda.max_memory_allocated``: whether less recomputation fits)."""


def tie_set(results) -> Reason | None:
    """The ranked plans within :data:`TIE` of the fastest, as a ``tie_set`` reason (None if only one is): the
    model's measured error cannot order them, so the result says so and names the fields they differ in and
    the measurements (:data:`DECIDERS`) that would decide."""
    if not results:
        return None
    best = min(r.estimate.step.total for r in results)
    tied = [r for r in results if r.estimate.step.total <= best * (1 + TIE)]
    if len(tied) < 2:
        return None
    dicts = [r.plan.as_dict() for r in tied]
    differ = [f for f in DECIDERS if len({repr(d.get(f)) for d in dicts}) > 1]
    decide = sorted({DECIDERS[f] for f in differ})
    return Reason("tie_set", {"count": len(tied), "band": TIE, "best_seconds": best,
                              "plans": [d for d in dicts], "differ": differ, "decide": decide})


def _step_reason(st) -> Reason:
    """What dominates the step: its split into compute, exposed communication and bubble, and the loudest strategy."""
    shares = {"compute": st.compute, "communication": st.communication, "bubble": st.bubble}
    strat, secs = max(st.exposed, key=lambda kv: kv[1]) if st.exposed else (None, 0.0)
    return Reason("step_split", {
        "total": st.total, "main": max(shares, key=shares.get), "compute_share": st.compute / st.total,
        "communication_share": st.communication / st.total, "bubble_share": st.bubble / st.total,
        "top_strategy": strat if secs > 0 else None, "top_seconds": secs if secs > 0 else None, "mfu": st.mfu})


def why(e: Estimate) -> tuple[Reason, ...]:
    """The chain of decisions for one fitting plan: fit -> batch -> placement of each group -> what dominates."""
    p, mem, w = e.plan, e.memory, e.workload
    out = [Reason("fits_memory", {"bytes": mem.total, "usable": e.usable, "headroom": e.headroom,
                                  "margin": e.margin, "states": mem.states,
                                  "activations": mem.activations + mem.embeddings, "gather_peak": mem.gather_peak})]
    out += e.advisories   # memory_tight: accepted with little of the usable memory left
    out += [Reason("batch_split", {"global_batch": w.global_batch, "dp": p.dp, "micro_batch": p.micro_batch,
                                  "microbatches": p.microbatches(w)})]
    out += group_reasons(p, w, e.cluster)
    if e.stack is not None:
        out.append(e.stack)  # which stacks run PP with ZeRO/FSDP, and as what
    out.append(_step_reason(e.step))
    return tuple(out)


@dataclass(frozen=True)
class Explanation:
    """What the search makes of one given plan (:func:`explain`).

    ``estimate``: its memory, step time and hard-constraint ``reasons`` (empty when it can run);
    ``gpus_match``: whether it uses every GPU of the cluster (the search enumerates only those);
    ``dominated_by``: the same plan with lighter recomputation when that one also fits (so the
    search never times this one); ``best``: the search's first plan; ``rank``: this plan's place
    in the search's top N, or None; ``why``: its chain of decisions when it fits; ``verdict``: what
    the search makes of it, as reasons (``uses_other_gpu_count``, the hard constraints it breaks,
    ``dominated_by``, ``ranked``, ``below_top`` or ``nothing_fits``).
    """

    plan: Plan
    estimate: Estimate
    gpus_match: bool
    dominated_by: Plan | None
    best: Ranked | None
    rank: int | None
    why: tuple[Reason, ...]
    verdict: tuple[Reason, ...] = ()

    @property
    def fits(self) -> bool:
        return self.estimate.fits and self.gpus_match


def explain(workload: Workload, cluster: Cluster, plan: Plan, top: int = 10,
            headroom: float = DEFAULT_HEADROOM) -> Explanation:
    """Explain ``plan`` against the search of ``workload`` on ``cluster``: excluded (and why), dominated, or ranked."""
    if not isinstance(plan, Plan):
        raise ParallelselError(f"plan={plan!r}: must be a Plan (parallelsel.core.plan.parse_plan reads a label)")
    plan = with_stack_split(workload, plan)  # a plan that states no split is its stack's (as estimate prices it)
    r = search(workload, cluster, top=top, headroom=headroom)
    e = estimate(workload, plan, cluster, headroom=headroom)
    dominated = None
    if e.fits and plan.recompute != "none":
        lighter = RECOMPUTES[:RECOMPUTES.index(plan.recompute)]
        lighter = tuple(r for r in lighter if r in stack_recomputes(workload))
        for rc in lighter:
            q = plan.with_(recompute=rc, recompute_layers=None)
            if breakdown(workload, q, cluster.device).total <= budget(cluster.device, q, headroom):
                dominated = q
                break
    # The search builds plans with the stack's default p2p setting; the same setting spelt out is the same plan.
    same = plan.with_(p2p_overlap=None) if p2p_overlap_on(workload, plan) == p2p_overlap_on(
        workload, plan.with_(p2p_overlap=None)) else plan
    # Likewise the other flex backend where it reaches the same NVLink domains (the two price alike there).
    tried = _flex_backend(workload, cluster)
    if plan.dispatcher and tried and flex_group(plan, cluster)[0] == flex_group(plan.with_(dispatcher=tried), cluster)[0]:
        same = same.with_(dispatcher=tried)
    rank = next((x.rank for x in r.results if x.plan == same), None)
    x = Explanation(plan, e, plan.gpus == cluster.gpus, dominated, r.best, rank, why(e) if e.fits else ())
    return replace(x, verdict=_verdict(x, top))


def _verdict(x: Explanation, top: int) -> tuple[Reason, ...]:
    """What the search makes of an explained plan, as reasons."""
    p, e = x.plan, x.estimate
    out = []
    if not x.gpus_match:
        out.append(Reason("uses_other_gpu_count", {"gpus": p.gpus, "cluster_gpus": e.cluster.gpus}))
    out += e.reasons
    if x.dominated_by is not None:
        out.append(Reason("dominated_by", {"plan": x.dominated_by.as_dict()}))
    if x.best is None:
        out.append(Reason("nothing_fits", {}))
    elif x.rank is not None:
        out.append(Reason("ranked", {"rank": x.rank, "top": top}))
    elif x.fits:
        best = x.best.estimate.step.total
        out.append(Reason("below_top", {"top": top, "seconds": e.step.total, "best": x.best.plan.as_dict(),
                                        "best_seconds": best, "ratio": e.step.total / best}))
    if x.fits and x.best is not None and e.step.total <= x.best.estimate.step.total * (1 + TIE) and x.rank != 1:
        # Within the model's measured error of the pick: the ranking cannot tell them apart.
        out.append(Reason("within_tie", {"ratio": e.step.total / x.best.estimate.step.total, "band": TIE,
                                         "best": x.best.plan.as_dict()}))
    return tuple(out)


@dataclass(frozen=True)
class Fix:
    """One change that makes a plan fit: ``code`` (``recipe``, ``recompute``, ``zero``, ``sp``,
    ``micro_batch``, ``gpus``), its ``values`` (for ``gpus``, the plan as :meth:`Plan.as_dict`) and the
    :class:`Estimate` after it; :func:`parallelsel.render.cli_text.fix_text` writes the sentence."""

    code: str
    values: dict
    estimate: Estimate


def fixes(workload: Workload, cluster: Cluster, plan: Plan, headroom: float = DEFAULT_HEADROOM) -> tuple[Fix, ...]:
    """Single changes that make ``plan`` fit, cheapest (fastest step) first.

    Tried: 8-bit Adam states (Dettmers et al. 2022; recipe ``bf16-adam8bit``), full recomputation (of as few
    layers a chunk as fit, as the search chooses them: code ``recompute_layers``),
    ZeRO-3, sequence parallelism (tp > 1), micro-batch 1, and the fewest of 2, 4, 8 or 16 times the nodes (the
    search's best plan there). A change is kept only if the plan then fits.
    """
    from .recipe import RECIPES

    out: list[Fix] = []

    def keep(code, values, w, p, c):
        if not constraint_violations(w, p, c):
            e = estimate(w, p, c, headroom=headroom)
            if e.fits:
                out.append(Fix(code, values, e))

    if workload.recipe != RECIPES["bf16-adam8bit"]:
        keep("recipe", {"recipe": "bf16-adam8bit"}, _replace_recipe(workload, RECIPES["bf16-adam8bit"]), plan, cluster)
    if plan.recompute != "full":
        full = plan.with_(recompute="full", recompute_layers=None)
        fewer = _fewest_that_fit(workload, full, cluster, headroom)
        if fewer.recompute_layers is None:
            keep("recompute", {"recompute": "full"}, workload, full, cluster)
        else:
            keep("recompute_layers", {"recompute": "full", "recompute_layers": fewer.recompute_layers}, workload,
                 fewer, cluster)
    if plan.zero != 3 and zero_ranks(STACKS[workload.stack], plan.dp, plan.cp) > 1:
        keep("zero", {"zero": 3}, workload, plan.with_(zero=3), cluster)
    if plan.tp > 1 and not plan.sp:
        keep("sp", {"sp": True}, workload, plan.with_(sp=True), cluster)
    if plan.micro_batch > 1:
        keep("micro_batch", {"micro_batch": 1}, workload, plan.with_(micro_batch=1), cluster)
    from .hardware import MAX_GPUS

    for k in (2, 4, 8, 16):
        if cluster.gpus * k > MAX_GPUS:
            break
        bigger = Cluster(cluster.device, nodes=cluster.nodes * k, gpus_per_node=cluster.gpus_per_node,
                         intra=cluster.intra, inter=cluster.inter)
        r = search(workload, bigger, top=1, headroom=headroom)
        if r.best is not None:
            out.append(Fix("gpus", {"gpus": bigger.gpus, "nodes": bigger.nodes, "plan": r.best.plan.as_dict()},
                           r.best.estimate))
            break
    return tuple(sorted(out, key=lambda f: f.estimate.step.total))


def _fewest_that_fit(workload: Workload, plan: Plan, cluster: Cluster, headroom: float) -> Plan:
    """``plan`` (a full recomputation) recomputing the fewest layers a chunk its stack can express that stay within
    :func:`_room` (as the search chooses them); ``plan`` itself when it is over that already."""
    per = workload.model.layers // (plan.pp * plan.chunks)
    counts = recompute_layer_counts(STACKS[workload.stack], per)
    room = _room(cluster.device, plan, budget(cluster.device, plan, headroom))
    if (not counts or constraint_violations(workload, plan, cluster)
            or breakdown(workload, plan, cluster.device).total > room):
        return plan
    return _fewest_recomputed(workload, plan, counts, room, device=cluster.device)


def _replace_recipe(workload: Workload, recipe) -> Workload:
    return replace(workload, recipe=recipe)
