"""Search hybrid plans for a cluster: enumerate, drop the infeasible with the reason, rank, explain.

The lesson's method (深入学习提示) run over every plan the cluster allows: hard constraints first
(divisibility, batch), then memory, then cost. :func:`search` enumerates

* ``dp x tp x pp`` = every GPU of the cluster, ``tp`` over divisors of the GPU count up to the
  number of heads (a TP group larger than a node is allowed; its ``why`` says it crosses nodes),
  ``pp`` over divisors of the rest up to the number of layers;
* context parallelism ``cp`` (:data:`CP_DEGREES`) for sequences of at least :data:`CP_MIN_SEQ`
  tokens, ``dp x tp x pp x cp`` = the GPUs;
* ZeRO stage 0-3 (only 0 when dp = 1), with ZeRO > 0 also HSDP (shard over the DP ranks of one
  node, replicate across nodes), expert parallelism over the divisors of dp up to the expert count
  for MoE models, micro-batch 1, 2, 4, 8, recompute none / selective / full, sequence parallelism on
  or off when tp > 1, and with pp > 1 every schedule the library has: 1F1B, interleaved 1F1B with 2
  or 4 chunks when the layers divide, ZB-H1 and GPipe (counted as dominated by 1F1B without being
  timed: the same bubble with more micro-batches in flight);

checks the cheap hard constraints first (heads and FFN over TP, layers over PP, global batch over
dp x micro-batch, micro-batches over PP for interleaving), then memory
(:func:`parallelsel.memory.breakdown`), and calls :func:`parallelsel.estimate.estimate` only for
plans that fit and are not dominated: for the same plan, more recomputation only adds compute (and,
with full recompute, TP traffic), so once a recompute setting fits, the heavier ones are counted
under "重算更多的同配置方案（被支配）" instead of being timed. Fitting plans are then estimated in
order of a lower bound on their step time (compute plus the bubble on it), stopping once the bound
passes the N-th best time found: the rest cannot enter the top N and are counted below it.

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
import time
from collections import Counter
from dataclasses import dataclass, field

from ._check import ParallelselError, positive_int
from . import _words as _w
from .estimate import Estimate, bubble_overhead_for, estimate
from .hardware import Cluster
from .placement import placement
from .memory import DEFAULT_HEADROOM, check_headroom, breakdown, budget
from .plan import SCHEDULES, Plan, Workload, constraint_violations

__all__ = ["EXCLUSIONS", "Explanation", "Fix", "Ranked", "SearchResult", "explain", "fixes", "search"]

MICRO_BATCHES = (1, 2, 4, 8)
RECOMPUTES = ("none", "selective", "full")
CHUNKS = (2, 4)
TIE = 0.034
"""Step times within this relative difference count as a tie: the step-time model's mean absolute
error on the 14 published Megatron-LM runs of the validation page (3.4%, tests/test_step_time.py
checks it is not below the measured error). A plan faster by less than that is not known to be faster."""

# Exclusion categories, in the order they are checked.
HEADS = "头数或 KV 头数不能被 TP 整除"
FFN = "FFN 宽度不能被 TP 整除"
LAYERS = "层数不能被 PP 整除"
BATCH = "global batch 不能整除"
INTERLEAVE = "交错调度要求微批数能被 PP 整除"
MEMORY = "内存放不下"
DOMINATED = "重算更多的同配置方案（被支配）"
GPIPE = "GPipe：气泡与 1F1B 相同、在途激活更多（被支配）"
EXPERTS = "专家数不能被 EP 整除"
PP_ZERO2 = "PP 配 ZeRO-2（没有框架这样跑）"
EXCLUSIONS = (HEADS, FFN, LAYERS, EXPERTS, PP_ZERO2, BATCH, INTERLEAVE, GPIPE, MEMORY, DOMINATED)
"""Every exclusion category, in check order; ``SearchResult.excluded`` also has one for plans
ranked below the top N ("排名在前 N 之后")."""

_PLAN_FIELDS = {f: None for f in Plan.__dataclass_fields__}
_FIXABLE = ("dp", "tp", "pp", "zero", "micro_batch", "recompute", "sp", "schedule", "chunks", "ep", "shard", "cp")

CP_DEGREES = (2, 4, 8, 16, 32)
CP_MIN_SEQ = 16384
"""Context parallelism is enumerated for sequences of at least this many tokens. Long-context
training is where it is used: Llama 3 405B ran CP 1 at 8K tokens and CP 16 at 128K (Dubey et al.
2024, Table 4); below it CP only adds ring traffic to what DP does with the same GPUs."""

_SCHEDULE_ORDER = {"1f1b": 0, "interleaved": 1, "zb-h1": 2, "gpipe": 3}
"""Tie-break among schedules (after fewer dimensions): the one launchers implement most widely first.
Megatron-LM has 1F1B and interleaved 1F1B, torch.distributed.pipelining all four (see launchers)."""








@dataclass(frozen=True)
class Ranked:
    """One ranked plan: its estimate and the chain of decisions that explains it (Chinese sentences)."""

    rank: int
    plan: Plan
    estimate: Estimate
    why: tuple[str, ...]


@dataclass(frozen=True)
class SearchResult:
    """What :func:`search` found.

    ``results``: the top plans, fastest first; ``excluded``: plans dropped, by reason category
    (:data:`EXCLUSIONS`, plus "排名在前 N 之后" for feasible plans ranked below the top N);
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

    def __iter__(self):
        """Iterate over the ranked plans (``for r in ps.search(...)``)."""
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def __getitem__(self, i):
        return self.results[i]

    def funnel(self) -> tuple[tuple[str, int], ...]:
        """``(stage, plans)`` from enumeration to the top N: 枚举, 约束通过, 内存可放下, 排名前 N."""
        return (
            ("枚举", self.considered),
            ("约束通过", self.passed_constraints),
            ("内存可放下", self.fitting),
            (f"排名前 {self.top}", len(self.results)),
        )

    @property
    def best(self) -> Ranked | None:
        return self.results[0] if self.results else None


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def _fast_plan(**kw) -> Plan:
    """A Plan built without re-validating values that the enumeration produced valid by construction."""
    p = object.__new__(Plan)
    d = {"dp": 1, "tp": 1, "pp": 1, "zero": 0, "micro_batch": 1, "sp": False, "recompute": "none",
         "schedule": "1f1b", "chunks": 1, "shard": None, "ep": 1, "cp": 1}
    d.update(kw)
    for k in _PLAN_FIELDS:
        object.__setattr__(p, k, d[k])
    return p


def _check_fixed(fixed, workload: Workload, cluster: Cluster) -> dict:
    fixed = dict(fixed or {})
    for k in fixed:
        if k not in _FIXABLE:
            raise ParallelselError(f"fixed[{k!r}]: unknown plan field; allowed: {', '.join(_FIXABLE)}")
    # Let Plan validate the values themselves (types, ranges, schedule names), and keep its normalised values.
    probe = Plan(**{k: v for k, v in fixed.items() if k not in ("chunks", "schedule", "dp")})
    fixed.update({k: getattr(probe, k) for k in fixed if k not in ("chunks", "schedule", "dp")})
    if "dp" in fixed:
        fixed["dp"] = positive_int("dp", fixed["dp"])
    if "chunks" in fixed:
        fixed["chunks"] = positive_int("chunks", fixed["chunks"])
    if "schedule" in fixed and fixed["schedule"] not in SCHEDULES:
        raise ParallelselError(f"schedule={fixed['schedule']!r}: must be one of {', '.join(SCHEDULES)}")
    if fixed.get("chunks", 1) > 1 and fixed.get("schedule", "interleaved") != "interleaved":
        raise ParallelselError(f"chunks={fixed['chunks']}: virtual stages need schedule='interleaved', "
                               f"got {fixed['schedule']!r}")
    if fixed.get("schedule") == "interleaved" and fixed.get("pp") == 1:
        raise ParallelselError("schedule='interleaved' with pp=1: interleaving needs a pipeline (pp > 1)")
    m = workload.model
    if "tp" in fixed and (m.heads % fixed["tp"] or m.kv_heads % fixed["tp"] or fixed["tp"] > m.heads):
        raise ParallelselError(f"tp={fixed['tp']}: must divide the {m.heads} attention heads and the "
                               f"{m.kv_heads} KV heads of {m.name}")
    if "pp" in fixed and (m.layers % fixed["pp"] or fixed["pp"] > m.layers):
        raise ParallelselError(f"pp={fixed['pp']}: must divide the {m.layers} layers of {m.name}")
    prod = 1
    for k in ("dp", "tp", "pp", "cp"):
        prod *= fixed.get(k, 1)
    if cluster.gpus % prod:
        raise ParallelselError(f"dp×tp×pp{'×cp' if 'cp' in fixed else ''}={prod}: must divide the cluster's {cluster.gpus} GPUs")
    return fixed


def _schedules(fixed: dict, pp: int, layers: int) -> list[tuple[str, int]]:
    """(schedule, chunks) pairs to try for a pipeline of ``pp`` stages; a pinned schedule or chunk count is always tried."""
    if "schedule" in fixed or "chunks" in fixed:
        sched = fixed.get("schedule", "interleaved" if fixed.get("chunks", 1) > 1 else "1f1b")
        if sched == "interleaved":
            chunks = [fixed["chunks"]] if "chunks" in fixed else [v for v in CHUNKS if layers % (pp * v) == 0]
            return [(sched, v) for v in chunks if pp > 1]
        return [(sched, fixed.get("chunks", 1))]
    if pp == 1:
        return [("1f1b", 1)]
    return ([("1f1b", 1)] + [("interleaved", v) for v in CHUNKS if layers % (pp * v) == 0]
            + [("zb-h1", 1), ("gpipe", 1)])


def _expert_degrees(model, dp: int) -> list[int]:
    """EP degrees to try: divisors of dp up to the expert count (1 alone for a dense model)."""
    if not model.is_moe:
        return [1]
    return [d for d in _divisors(dp) if d <= model.experts]


def _shards(zero: int, dp: int, tp: int, ep: int, gpus_per_node: int) -> list:
    """ZeRO shard-group sizes to try: the whole DP group (None), and for HSDP the DP ranks of one node
    (shard within a node, replicate across nodes: PyTorch FSDP HYBRID_SHARD, Zhao et al. 2023 §3.2.1)."""
    if zero == 0:
        return [None]
    local = gpus_per_node // tp if gpus_per_node % tp == 0 else 0
    out = [None]
    if 1 < local < dp and dp % local == 0 and local % ep == 0:
        out.append(local)
    return out


def search(workload: Workload, cluster: Cluster, top: int = 10, fixed: dict | None = None,
           headroom: float = DEFAULT_HEADROOM, _exhaustive: bool = False) -> SearchResult:
    """Enumerate, filter and rank hybrid plans that use every GPU of ``cluster``; see the module docstring.

    ``fixed`` pins plan fields (e.g. ``{"tp": 8}``); plans that differ are not enumerated. A pinned
    value that can never be valid (tp not dividing the heads, dp x tp x pp not dividing the GPUs)
    raises :class:`ValueError`. A plan fits when its memory is at most the usable memory x
    (1 - ``headroom``) (:func:`parallelsel.memory.budget`).
    """
    t0 = time.perf_counter()
    if not isinstance(workload, Workload):
        raise ParallelselError(f"workload={workload!r}: must be a Workload")
    if not isinstance(cluster, Cluster):
        raise ParallelselError(f"cluster={cluster!r}: must be a Cluster")
    top = positive_int("top", top)
    fixed = _check_fixed(fixed, workload, cluster)
    m = workload.model
    B = workload.global_batch
    check_headroom(headroom)
    G = cluster.gpus

    def allowed(name, values):
        # A pinned value is enumerated even when the default grid does not hold it (micro-batch 3).
        return [fixed[name]] if name in fixed else list(values)

    excluded: Counter = Counter()
    considered = passed = fitting = 0
    miss: tuple[float, Plan | None] = (float("inf"), None)
    cands: list[tuple[float, Plan]] = []

    s_len = workload.seq_len
    cps = [fixed["cp"]] if "cp" in fixed else [1] + [c for c in CP_DEGREES if s_len >= CP_MIN_SEQ
                                                     and s_len % (2 * c) == 0]
    tp_cp = [(tp, cp) for tp in _divisors(G) if tp <= m.heads and fixed.get("tp", tp) == tp
             for cp in cps if (G // tp) % cp == 0]
    for tp, cp in tp_cp:
        for pp in [d for d in _divisors(G // (tp * cp)) if d <= m.layers and fixed.get("pp", d) == d]:
            dp = G // (tp * pp * cp)
            if "dp" in fixed and fixed["dp"] != dp:
                continue
            zeros = allowed("zero", (0, 1, 2, 3) if dp > 1 else (0,))
            sps = allowed("sp", (False, True) if tp > 1 else (False,))
            mbs = allowed("micro_batch", MICRO_BATCHES)
            rcs = allowed("recompute", RECOMPUTES)
            scheds = _schedules(fixed, pp, m.layers)
            eps = allowed("ep", _expert_degrees(m, dp))
            # (zero, shard, ep) triples: HSDP shard groups only where ZeRO shards, and tiling the EP groups.
            zse = [(z, sh, e) for z in zeros for e in eps
                   for sh in ([fixed["shard"]] if "shard" in fixed else _shards(z, dp, tp, e, cluster.gpus_per_node))]
            n_knobs = len(zse) * len(sps) * len(mbs) * len(rcs) * len(scheds)
            if not n_knobs:
                continue
            considered += n_knobs
            # Structural constraints reject every knob setting of this (tp, pp) at once.
            if m.heads % tp or m.kv_heads % tp:  # as plan.constraint_violations (GQA: whole KV groups)
                excluded[HEADS] += n_knobs
                continue
            if m.ffn_hidden % tp:
                excluded[FFN] += n_knobs
                continue
            if m.layers % pp:
                excluded[LAYERS] += n_knobs
                continue
            if pp > 1 and 2 in zeros:
                # DeepSpeed's pipeline engine refuses ZeRO-2, Megatron-LM and torchtitan do not offer it
                # (parallelsel.stacks): no stack runs this combination, so it is not ranked.
                dropped = sum(1 for t in zse if t[0] == 2)
                excluded[PP_ZERO2] += dropped * len(sps) * len(mbs) * len(rcs) * len(scheds)
                zse = [t for t in zse if t[0] != 2]
            for sched, v in scheds:
                if sched == "gpipe" and "schedule" not in fixed:
                    # Same bubble as 1F1B (Narayanan et al. 2021 §2.2.1) with all m micro-batches in
                    # flight instead of at most p: never faster, never smaller, so never timed.
                    excluded[GPIPE] += len(zse) * len(sps) * len(mbs) * len(rcs)
                    continue
                for z, shard, ep in zse:
                    if ep > 1 and m.experts % ep:
                        excluded[EXPERTS] += len(sps) * len(mbs) * len(rcs)
                        continue
                    for sp in sps:
                        # Memory never decreases with the micro-batch (activations grow as b x the
                        # in-flight count, which shrinks at most as 1/b), so once a (recompute, b)
                        # does not fit, larger b with that recompute is counted without recomputing.
                        too_big = {rc: None for rc in rcs}
                        for b in mbs:
                            per_step = dp * b
                            if B < per_step or B % per_step:
                                excluded[BATCH] += len(rcs)
                                continue
                            if sched == "interleaved" and (B // per_step) % pp:
                                excluded[INTERLEAVE] += len(rcs)
                                continue
                            found = False
                            for rc in rcs:
                                passed += 1
                                if found:
                                    excluded[DOMINATED] += 1
                                    continue
                                if too_big[rc] is not None and b > too_big[rc]:
                                    excluded[MEMORY] += 1
                                    continue
                                plan = _fast_plan(dp=dp, tp=tp, pp=pp, zero=z, micro_batch=b, sp=sp,
                                                  recompute=rc, schedule=sched, chunks=v, shard=shard, ep=ep,
                                                  cp=cp)
                                over = breakdown(workload, plan).total - budget(cluster.device, plan, headroom)
                                if over > 0:
                                    excluded[MEMORY] += 1
                                    too_big[rc] = b
                                    if over < miss[0]:
                                        miss = (over, plan)
                                    continue
                                found = True
                                fitting += 1
                                cands.append((_lower_bound(workload, plan, cluster), plan))

    fits = _estimate_best(cands, workload, cluster, top, headroom, exhaustive=_exhaustive)
    fits.sort(key=lambda e: (e.step.total, e.memory.total, e.plan.dims))
    # Ties within TIE: regroup so that simplicity, then headroom, decide.
    ranked: list[Estimate] = []
    i = 0
    while i < len(fits) and len(ranked) < top:
        j = i + 1
        while j < len(fits) and fits[j].step.total <= fits[i].step.total * (1 + TIE):
            j += 1
        ranked.extend(sorted(fits[i:j], key=lambda e: (e.plan.dims, _SCHEDULE_ORDER[e.plan.schedule],
                                                       e.memory.total, e.step.total)))
        i = j
    ranked = ranked[:top]
    below = fitting - len(ranked)
    if below:
        excluded[f"排名在前 {top} 之后"] += below
    results = tuple(Ranked(k + 1, e.plan, e, tuple(_why(e, workload, cluster))) for k, e in enumerate(ranked))
    # Keep the category order stable: the check order, then "below the top N".
    order = list(EXCLUSIONS) + [f"排名在前 {top} 之后"]
    excl = {c: excluded[c] for c in order if excluded.get(c)}
    return SearchResult(workload, cluster, results, excl, considered, passed, fitting, top,
                        time.perf_counter() - t0, miss[1])


def _lower_bound(workload: Workload, plan: Plan, cluster: Cluster) -> float:
    """A step time no plan can beat: its compute plus the bubble on that compute alone.

    :func:`parallelsel.estimate.estimate` gives total = compute + exposed communication +
    bubble_overhead x (compute + critical-path communication) >= compute x (1 + bubble_overhead),
    and no kernel runs faster than the device's matmul ceiling (:mod:`parallelsel.kernels`), so
    compute >= FLOPs per GPU / (peak x gemm_efficiency).
    """
    flops = workload.model.flops_per_token(plan.recompute, workload.seq_len) * workload.tokens
    compute = flops / (cluster.device.peak_flops * cluster.device.gemm_efficiency * plan.gpus)
    return compute * (1 + bubble_overhead_for(plan, plan.microbatches(workload)))


def _estimate_best(cands, workload, cluster, top, headroom=DEFAULT_HEADROOM, exhaustive=False) -> list[Estimate]:
    """Estimate fitting plans in order of their lower bound, stopping once no later one can reach the top N."""
    cands = sorted(cands, key=lambda c: c[0])
    done: list[Estimate] = []
    worst: list[float] = []  # max-heap (negated) of the best ``top`` totals so far
    for lb, plan in cands:
        if not exhaustive and len(worst) == top and lb > -worst[0] * (1 + TIE):
            break
        e = estimate(workload, plan, cluster, headroom=headroom)
        done.append(e)
        if len(worst) < top:
            heapq.heappush(worst, -e.step.total)
        elif e.step.total < -worst[0]:
            heapq.heapreplace(worst, -e.step.total)
    return done


def _why(e: Estimate, workload: Workload, cluster: Cluster) -> list[str]:
    """The chain of decisions for one plan: fit -> batch -> placement of each group -> what dominates."""
    p, mem, st = e.plan, e.memory, e.step
    out = []
    parts = [f"状态 {_w.size(mem.states)}", f"激活 {_w.size(mem.activations + mem.embeddings)}"]
    if mem.gather_peak:
        parts.append(f"gather 峰值 {_w.size(mem.gather_peak)}")
    out.append(f"放得下：每卡 {_w.size(mem.total)} ≤ 可用 {_w.size(e.usable)} × (1 − {e.headroom:.0%})"
               f"（余量 {e.margin:.1%}；"
               + "，".join(parts) + "）")
    micro = p.microbatches(workload)
    out.append(f"batch 能整除：global batch {workload.global_batch} = DP {p.dp} × 微批 {p.micro_batch} × "
               f"{micro} 个微批（梯度累积）")
    groups = placement(p, cluster)  # the same placement the traffic is priced on
    if p.tp > 1:
        g = groups["TP"]
        if g.spans_nodes:
            out.append(f"TP={p.tp} 的 {g.crossing}/{len(g.groups)} 组跨节点（每节点 {cluster.gpus_per_node} 卡）："
                       f"每层的集合通信走 {g.link.name}（{_w.rate(g.link)}）")
        else:
            out.append(f"TP={p.tp} 组在节点内，每层的集合通信走 {g.link.name}（{_w.rate(g.link)}）")
    if p.pp > 1:
        g = groups["PP"]
        sched = {"1f1b": "1F1B", "gpipe": "GPipe", "zb-h1": "ZB-H1（零气泡，反向拆成 B 与 W）"}.get(
            p.schedule, f"交错 1F1B（每卡 {p.chunks} 段）")
        out.append(f"PP={p.pp} 段{'跨节点' if g.spans_nodes else '在节点内'}，相邻段 p2p 走 {g.link.name}"
                   f"（{_w.rate(g.link)}），{sched}")
    if p.cp > 1:
        g = groups["CP"]
        out.append(f"CP={p.cp}：每条序列切成 {p.cp} 段，每卡 {workload.seq_len // p.cp} 个 token，"
                   f"K/V 块沿环 p2p 传递，{'跨节点' if g.spans_nodes else '在节点内'}，走 {g.link.name}（{_w.rate(g.link)}）")
    if p.ep > 1:
        g = groups["EP"]
        out.append(f"EP={p.ep}：每层两次 all-to-all 分发与收回 token，{'跨节点' if g.spans_nodes else '在节点内'}，"
                   f"走 {g.link.name}（{_w.rate(g.link)}）")
    if p.dp > 1:
        g = groups.get("shard", groups["DP"]) if p.zero else groups["DP"]
        what = {0: "梯度 all-reduce", 1: "ZeRO-1 梯度 reduce-scatter", 2: "ZeRO-2 梯度 reduce-scatter",
                3: "ZeRO-3 参数 all-gather 与梯度 reduce-scatter"}[p.zero]
        out.append(f"DP={p.dp}：{what} {'跨节点' if g.spans_nodes else '在节点内'}，走 {g.link.name}（{_w.rate(g.link)}）")
    if e.stack is not None:
        out.append(str(e.stack))  # which stacks run PP with ZeRO/FSDP, and as what
    shares = {"计算": st.compute, "暴露的通信": st.communication, "流水线气泡": st.bubble}
    main = max(shares, key=shares.get)
    comm = ""
    if st.exposed:
        strat, secs = max(st.exposed, key=lambda kv: kv[1])
        if secs > 0:
            comm = f"；通信主要来自 {strat}（{_w.secs(secs)}）"
    out.append(f"步时 {_w.secs(st.total)}，以{main}为主：计算 {st.compute / st.total:.0%}、暴露的通信 "
               f"{st.communication / st.total:.0%}、气泡 {st.bubble / st.total:.0%}{comm}；MFU {st.mfu:.0%}")
    return out


@dataclass(frozen=True)
class Explanation:
    """What the search makes of one given plan (:func:`explain`).

    ``estimate``: its memory, step time and hard-constraint ``reasons`` (empty when it can run);
    ``gpus_match``: whether it uses every GPU of the cluster (the search enumerates only those);
    ``dominated_by``: the same plan with lighter recomputation when that one also fits (so the
    search never times this one); ``best``: the search's first plan; ``rank``: this plan's place
    in the search's top N, or None; ``why``: its chain of decisions when it fits.
    """

    plan: Plan
    estimate: Estimate
    gpus_match: bool
    dominated_by: Plan | None
    best: Ranked | None
    rank: int | None
    why: tuple[str, ...]

    @property
    def fits(self) -> bool:
        return self.estimate.fits and self.gpus_match


def explain(workload: Workload, cluster: Cluster, plan: Plan, top: int = 10,
            headroom: float = DEFAULT_HEADROOM) -> Explanation:
    """Explain ``plan`` against the search of ``workload`` on ``cluster``: excluded (and why), dominated, or ranked."""
    if not isinstance(plan, Plan):
        raise ParallelselError(f"plan={plan!r}: must be a Plan (parallelsel.plan.parse_plan reads a label)")
    r = search(workload, cluster, top=top, headroom=headroom)
    e = estimate(workload, plan, cluster, headroom=headroom)
    dominated = None
    if e.fits and plan.recompute != "none":
        lighter = RECOMPUTES[:RECOMPUTES.index(plan.recompute)]
        for rc in lighter:
            q = plan.with_(recompute=rc)
            if breakdown(workload, q).total <= budget(cluster.device, q, headroom):
                dominated = q
                break
    rank = next((x.rank for x in r.results if x.plan == plan), None)
    why = tuple(_why(e, workload, cluster)) if e.fits else ()
    return Explanation(plan, e, plan.gpus == cluster.gpus, dominated, r.best, rank, why)


@dataclass(frozen=True)
class Fix:
    """One change that makes a plan fit: ``code`` (``recipe``, ``recompute``, ``zero``, ``sp``,
    ``micro_batch``, ``gpus``), its ``values`` and the :class:`Estimate` after it."""

    code: str
    values: dict
    estimate: Estimate


def fixes(workload: Workload, cluster: Cluster, plan: Plan, headroom: float = DEFAULT_HEADROOM) -> tuple[Fix, ...]:
    """Single changes that make ``plan`` fit, cheapest (fastest step) first.

    Tried: 8-bit Adam states (Dettmers et al. 2022; recipe ``bf16-adam8bit``), full recomputation,
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
        keep("recompute", {"recompute": "full"}, workload, plan.with_(recompute="full"), cluster)
    if plan.zero != 3 and plan.dp > 1:
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
            out.append(Fix("gpus", {"gpus": bigger.gpus, "nodes": bigger.nodes, "plan": r.best.plan.label()},
                           r.best.estimate))
            break
    return tuple(sorted(out, key=lambda f: f.estimate.step.total))


def _replace_recipe(workload: Workload, recipe) -> Workload:
    from dataclasses import replace

    return replace(workload, recipe=recipe)
