"""The selection matrix: DP, FSDP/ZeRO, TP and PP judged for one workload on one cluster.

:func:`selection_matrix` runs the lesson's method (its further-study section): hard constraints first, then
cost. Each strategy is tried *alone* at every degree the cluster allows, with micro-batch sizes 1-8 and
recompute none / selective / full, through :func:`parallelsel.core.estimate.estimate`. A :class:`Verdict` is
``infeasible`` only when no setting fits; ``feasible`` / ``not_preferred`` come from the cost comparison;
``need_info`` when the answer turns on a fact the caller declares unknown. Each verdict's reasons are
:class:`~parallelsel.core.reasons.Reason` objects (a code and the numbers); :mod:`parallelsel.render.reasons`
writes their sentences. The lesson's own cases and its static four-column table are in :mod:`parallelsel.course.lesson`.

Unknown facts: a :class:`~parallelsel.Workload` always carries a global batch and a
:class:`~parallelsel.Cluster` always has links (defaults fill them in). When the scenario does not
actually state them, pass ``unknown={"global_batch"}`` and/or ``unknown={"interconnect"}``
(see :data:`FACTS`); the estimate still uses the values given, but a verdict that depends on them
becomes ``need_info`` and its reason names the fact.

Examples:
    >>> import parallelsel as ps
    >>> w = ps.Workload(ps.MODELS["gpt2-1.5b"], global_batch=512)
    >>> rows = selection_matrix(w, ps.Cluster(ps.DEVICES["a100-80gb"], nodes=1))
    >>> [(r.strategy, r.verdict.code) for r in rows]
    [('DP', 'feasible'), ('FSDP', 'not_preferred'), ('TP', 'not_preferred'), ('PP', 'not_preferred')]
    >>> rows[0].reasons[0].code, rows[0].reasons[0]["plan"]["dp"]
    ('best_setting', 8)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from ._check import ParallelselError, choice
from .estimate import Estimate, estimate
from .memory import DEFAULT_HEADROOM, check_headroom, gather_peak
from .hardware import Cluster
from .model import RECOMPUTE
from .pipeline import bubble_fraction
from .placement import group_reasons, placement
from .plan import MICRO_BATCHES, Plan, Workload, batch_violations, constraint_violations, divisors
from .reasons import Reason
from .stacks import STACKS

__all__ = ["BUBBLE_LIMIT", "FACTS", "MatrixRow", "RULES", "Rule", "SLOWER", "Verdict", "selection_matrix"]

STRATEGIES = ("DP", "FSDP", "TP", "PP")

FACTS = ("global_batch", "interconnect")
"""Facts a scenario may leave open: the global batch (decides DP's degree and PP's bubble) and
whether the links are fast (decides whether TP's per-layer collectives are affordable)."""

RECOMPUTES = RECOMPUTE  # lightest first

SLOWER = 1.5
"""A feasible strategy whose best step costs more than SLOWER x the GPU-seconds (step time x GPUs
used) of the cheapest feasible strategy is ``not_preferred`` (works, but another choice is clearly better
here). Per GPU, because a strategy used alone may leave GPUs free for other work (pure PP=20 on 32
GPUs). A judgement threshold, not a law; it is far outside the step-time model's measured error
(mean 3.4%, worst 9% on the validation page's 14 runs)."""

BUBBLE_LIMIT = 0.2
"""PP alone is ``not_preferred`` when its bubble fraction (p-1)/(m+p-1) exceeds this share of the step."""


def _gpu_seconds(e) -> float:
    """GPU-seconds per optimizer step: step time x the GPUs the plan uses (equal ranking to per-GPU throughput
    for a fixed amount of work per step)."""
    return e.step.total * e.plan.gpus



# -- verdicts ---------------------------------------------------------------------------------
class Verdict(str, Enum):
    """The lesson's three words plus the hard no, as stable ASCII codes (``infeasible``, ``feasible``,
    ``not_preferred``, ``need_info``); :func:`parallelsel.render.lesson_text.verdict_word` gives the lesson's
    word."""

    INFEASIBLE = "infeasible"
    FEASIBLE = "feasible"
    NOT_PREFERRED = "not_preferred"
    NEED_INFO = "need_info"

    def __str__(self) -> str:
        return self.value

    @property
    def code(self) -> str:
        """The verdict's stable ASCII code (its value; kept as a name of its own for callers that read ``.code``)."""
        return self.value


@dataclass(frozen=True)
class Rule:
    """One step of :func:`selection_matrix`'s rule order, as data (the decision-flow chart is drawn from it).

    ``stage``: ``"hard"`` (a hard-constraint exclusion, tried per setting in :func:`_try`), ``"cost"`` (the
    comparison among the strategies that fit, :func:`_feasible_row`) or ``"info"`` (a fact the caller left open);
    ``code``: the rule's stable name; ``verdict``: what a strategy caught by it gets; ``reasons``: the
    :class:`~parallelsel.core.reasons.Reason` codes a verdict caught by this rule carries (``tests/test_decision_flow.py``
    checks them against what the matrix emits); ``value``: the threshold the rule uses, if any."""

    stage: str
    code: str
    verdict: Verdict
    reasons: tuple[str, ...]
    value: float | None = None


RULES: tuple[Rule, ...] = (
    # hard constraints first (plan.constraint_violations, then the memory budget), per setting
    Rule("hard", "divisibility", Verdict.INFEASIBLE,
         ("cluster_too_small", "tp_exceeds_heads", "heads_not_divisible", "kv_heads_not_divisible", "ffn_not_divisible",
          "stages_exceed_layers", "layers_not_divisible", "tp_no_degree", "pp_no_degree", "no_degree_passes")),
    Rule("hard", "global_batch", Verdict.INFEASIBLE, ("batch_below_dp", "batch_not_divisible", "interleave_microbatches")),
    Rule("hard", "memory", Verdict.INFEASIBLE,
         ("dp_state_exceeds_device", "dp_total_exceeds_device", "fsdp_exceeds_device", "fsdp_unit_exceeds_device",
          "pp_layer_exceeds_device", "tp_exceeds_device", "pp_exceeds_device", "thriftiest_exceeds_device")),
    # then cost, among the strategies that fit (_ROWS, then _feasible_row)
    Rule("cost", "dp_fits", Verdict.NOT_PREFERRED, ("dp_fits_not_slower", "tp_dp_fits", "pp_dp_fits")),
    Rule("cost", "tp_crosses_nodes", Verdict.NOT_PREFERRED, ("tp_crosses_nodes",)),
    Rule("cost", "bubble", Verdict.NOT_PREFERRED, ("pp_bubble_too_large",), BUBBLE_LIMIT),
    Rule("cost", "costlier_per_gpu", Verdict.NOT_PREFERRED, ("costlier_per_gpu",), SLOWER),
    # last, a verdict that turns on a fact the scenario leaves open
    Rule("info", "unknown_fact", Verdict.NEED_INFO,
         ("unknown_global_batch_dp", "unknown_global_batch_fsdp", "unknown_interconnect_tp", "unknown_global_batch_bubble",
          "unknown_global_batch_pp")),
)
"""The order :func:`selection_matrix` applies its rules in; a strategy no rule catches is ``feasible``."""


@dataclass(frozen=True)
class MatrixRow:
    """One strategy's verdict with its reasons (:class:`~parallelsel.core.reasons.Reason`: code and values) and the best
    setting found, if any.

    ``best``: the fastest fitting :class:`~parallelsel.core.estimate.Estimate` for the strategy alone
    (None when nothing fits); ``closest``: the least-memory attempt that satisfied the non-memory
    hard constraints (what the infeasible numbers come from), None when no degree satisfied them.
    """

    strategy: str
    verdict: Verdict
    reasons: tuple[Reason, ...]
    best: Estimate | None = None
    closest: Estimate | None = None


@dataclass
class _Trial:
    """What trying one strategy alone found: the fastest fitting estimate, the least-memory attempt that
    passed the hard constraints, and each degree that failed them with its violations."""

    strategy: str
    best: Estimate | None = None
    closest: Estimate | None = None
    failed: dict[int, tuple[Reason, ...]] = field(default_factory=dict)
    passed: set[int] = field(default_factory=set)
    tried: set[int] = field(default_factory=set)


def _dp_degree(workload: Workload, cluster: Cluster) -> int:
    """The largest data-parallel degree <= GPUs that the global batch splits over, one sequence per micro-batch
    at least (:func:`parallelsel.core.plan.batch_violations`)."""
    return max(d for d in divisors(cluster.gpus) + [workload.global_batch] if d <= cluster.gpus
               and not batch_violations(workload.global_batch, d, 1))


def _degrees(strategy: str, workload: Workload, cluster: Cluster) -> list[int]:
    """The degrees a strategy alone is tried at: DP/FSDP the largest DP degree the batch allows; TP the
    divisors of the head count, PP the divisors of the layer count, in (1, GPUs]."""
    m = workload.model
    if strategy in ("DP", "FSDP"):
        return [_dp_degree(workload, cluster)]
    count = m.heads if strategy == "TP" else m.layers
    return [d for d in divisors(count) if 1 < d <= cluster.gpus]


def _plans(strategy: str, degree: int):
    """Every setting of one strategy alone at one degree: ZeRO stage (FSDP), micro-batch and recompute."""
    if strategy == "DP":
        base = [dict(dp=degree)]
    elif strategy == "FSDP":
        base = [dict(dp=degree, zero=z) for z in ((3, 2, 1) if degree > 1 else (0,))]
    elif strategy == "TP":
        base = [dict(tp=degree, sp=True)]
    else:
        base = [dict(pp=degree, schedule="1f1b")]
    for kw in base:
        for b in MICRO_BATCHES:
            for r in RECOMPUTES:
                yield Plan(micro_batch=b, recompute=r, **kw)


def _degree_of(strategy: str, plan: Plan) -> int:
    return {"DP": plan.dp, "FSDP": plan.dp, "TP": plan.tp, "PP": plan.pp}[strategy]


def _try(strategy: str, workload: Workload, cluster: Cluster, headroom: float = DEFAULT_HEADROOM) -> _Trial:
    trial = _Trial(strategy)
    for degree in _degrees(strategy, workload, cluster):
        trial.tried.add(degree)
        for plan in _plans(strategy, degree):
            if plan.recompute not in STACKS[workload.stack].recompute:
                continue  # a policy the stack does not offer is not one of its settings
            hard = constraint_violations(workload, plan, cluster)
            if hard:
                trial.failed.setdefault(degree, tuple(hard))
                continue
            trial.passed.add(degree)
            e = estimate(workload, plan, cluster, headroom=headroom)
            if trial.closest is None or e.memory.total < trial.closest.memory.total:
                trial.closest = e
            if e.fits and (trial.best is None or _key(e) < _key(trial.best)):
                trial.best = e
    for degree in trial.passed:
        trial.failed.pop(degree, None)  # some setting of that degree passed: not a degree the constraints rule out
    return trial


def _key(e: Estimate):
    return (e.step.total, e.memory.total)


# -- reasons for infeasible (codes; render/reasons.py writes the sentences) ------------------------
def _no_degree(t: _Trial, workload: Workload, cluster: Cluster) -> list[Reason]:
    """No degree passed the hard constraints: say there was none to try, or show what each tried one broke."""
    m = workload.model
    if not t.tried:
        if t.strategy == "TP":
            return [Reason("tp_no_degree", {"heads": m.heads, "gpus": cluster.gpus})]
        return [Reason("pp_no_degree", {"layers": m.layers, "gpus": cluster.gpus})]
    shown: list[Reason] = []
    for degree in sorted(t.failed):
        shown.extend(v for v in t.failed[degree] if v not in shown)
    return [Reason("no_degree_passes", {"strategy": t.strategy, "tried": len(t.tried)})] + shown[:3]


def _next_limit(t: _Trial, degree: int) -> list[Reason]:
    """Why no larger degree was usable: the first hard constraint the next larger tried degree broke."""
    larger = [d for d in sorted(t.failed) if d > degree]
    return [t.failed[larger[0]][0]] if larger else []


def _infeasible_reasons(t: _Trial, workload: Workload, cluster: Cluster) -> list[Reason]:
    m, r = workload.model, workload.recipe
    if t.closest is None:
        return _no_degree(t, workload, cluster)
    c = t.closest
    mem, cap, p = c.memory, c.budget, c.plan  # budget: usable memory x (1 - headroom) for that plan
    if t.strategy == "DP":
        states = r.per_param * m.params
        if states > cap:
            return [Reason("dp_state_exceeds_device", {"bytes": states, "bytes_per_param": r.per_param,
                                                       "params": m.params, "capacity": cap,
                                                       "device": cluster.device.name})]
        return [Reason("dp_total_exceeds_device", {"states": mem.states, "bytes": mem.total, "capacity": cap,
                                                   "plan": p.as_dict()})]
    if t.strategy == "FSDP":
        return _fsdp_infeasible(c, workload)
    if t.strategy == "PP":
        layer = r.per_param * m.layer_params
        if layer > cap:
            return [Reason("pp_layer_exceeds_device", {"bytes": layer, "params": m.layer_params,
                                                       "bytes_per_param": r.per_param, "capacity": cap})]
    top = max(t.passed)
    return [Reason("pp_exceeds_device" if t.strategy == "PP" else "tp_exceeds_device",  # literal: tests/test_reasons.py
                   {"degree": top, "plan": p.as_dict(), "bytes": mem.total, "capacity": cap})] + _next_limit(t, top)


def _fsdp_infeasible(c: Estimate, workload: Workload) -> list[Reason]:
    """FSDP's closest miss, and whether the gather of one unit (a layer) alone is what no shard count removes."""
    m, r, mem, cap, p = workload.model, workload.recipe, c.memory, c.budget, c.plan
    if p.shard_size == 1:
        return [Reason("fsdp_one_rank", {"dp": p.dp}),
                Reason("thriftiest_exceeds_device", {"plan": p.as_dict(), "bytes": mem.total, "capacity": cap})]
    out = [Reason("fsdp_exceeds_device", {
        "zero": p.zero, "shards": p.shard_size, "states": mem.states, "gather_peak": mem.gather_peak,
        "activations": mem.activations + mem.embeddings, "bytes": mem.total, "capacity": cap})]
    gather = gather_peak(m, r)  # what ZeRO-3 must hold unsharded at its peak, whatever the shard count
    values = {"params": m.layer_params, "gather_peak": gather, "capacity": cap}
    if gather > cap:
        out.append(Reason("fsdp_unit_exceeds_device", values))
    elif mem.gather_peak > 0 and gather > cap - mem.states:
        out.append(Reason("fsdp_unit_dominates", values))
    return out


# -- reasons for the feasible ------------------------------------------------------------------
def _crosses(strategy: str, e: Estimate, cluster: Cluster) -> bool:
    """Whether the strategy's own group crosses the inter-node link (:func:`parallelsel.core.placement.placement`)."""
    return placement(e.plan, cluster)[{"FSDP": "DP"}.get(strategy, strategy)].spans_nodes


def _comm_reason(e: Estimate) -> Reason:
    st = e.step
    # contention: what the hidden collectives' SMs cost the compute (StepTime.contention); 0 leaves it unsaid
    if st.communication <= 0:
        return Reason("communication_hidden", {"total": st.communication_total, "contention": st.contention})
    return Reason("step_communication", {"total": st.communication_total, "exposed": st.communication,
                                         "share": st.communication / st.total, "contention": st.contention})


def _best_reasons(e: Estimate, workload: Workload, cluster: Cluster) -> list[Reason]:
    """The best setting found (memory against the budget, step time) and where its groups sit."""
    out = [Reason("best_setting", {"plan": e.plan.as_dict(), "bytes": e.memory.total, "budget": e.budget,
                                   "margin": e.margin, "seconds": e.step.total})]
    out += e.advisories   # memory_tight: it fits with little of the usable memory left
    out += group_reasons(e.plan, workload, cluster)
    if e.plan.dp == 1 and e.plan.tp == 1 and e.plan.pp == 1:
        out.append(Reason("single_replica", {"gpus": e.plan.gpus}))
    return out


@dataclass
class _Row:
    """A verdict being built: the reasons so far and the facts it would need (see :func:`selection_matrix`)."""

    verdict: Verdict
    reasons: list[Reason]
    needs: list[Reason] = field(default_factory=list)


def _dp_row(e: Estimate, row: _Row, ctx) -> None:
    workload, cluster, trials, unknown = ctx
    d = e.plan.dp
    row.reasons.append(Reason("dp_simplest", {"dp": d, "sequences": workload.global_batch // d}))
    if d < cluster.gpus:
        row.reasons.append(Reason("dp_batch_limits_degree", {"global_batch": workload.global_batch, "dp": d,
                                                             "idle": cluster.gpus - d}))
    if _crosses("DP", e, cluster):
        row.reasons.append(_comm_reason(e))
    if "global_batch" in unknown:
        row.needs.append(Reason("unknown_global_batch_dp", {"gpus": cluster.gpus}))


def _fsdp_row(e: Estimate, row: _Row, ctx) -> None:
    workload, cluster, trials, unknown = ctx
    p = e.plan
    if p.shard_size == 1:
        row.reasons.append(Reason("fsdp_one_rank", {"dp": p.dp}))
    else:
        row.reasons.append(Reason("fsdp_shards_states", {"zero": p.zero, "shards": p.shard_size,
                                                         "states": e.memory.states,
                                                         "gather_peak": e.memory.gather_peak}))
    if _crosses("FSDP", e, cluster):
        row.reasons.append(_comm_reason(e))
    dp_best = trials["DP"].best
    if dp_best is not None and e.step.total >= dp_best.step.total * 0.99:
        row.verdict = Verdict.NOT_PREFERRED
        row.reasons.append(Reason("dp_fits_not_slower", {"seconds": dp_best.step.total}))
    elif dp_best is not None:
        bigger = p.micro_batch > dp_best.plan.micro_batch
        lighter = RECOMPUTES.index(p.recompute) < RECOMPUTES.index(dp_best.plan.recompute)
        gain = {(True, True): "both", (True, False): "micro_batch", (False, True): "recompute"}.get((bigger, lighter))
        row.reasons.append(Reason("fsdp_faster_than_dp", {"zero": p.zero, "seconds": e.step.total,
                                                          "dp_seconds": dp_best.step.total, "gain": gain}))
    if "global_batch" in unknown:
        row.needs.append(Reason("unknown_global_batch_fsdp", {"dp": p.dp}))


def _dp_fits(trials) -> dict:
    dp = trials["DP"].best
    return {"bytes": dp.memory.total, "budget": dp.budget}


def _tp_row(e: Estimate, row: _Row, ctx) -> None:
    workload, cluster, trials, unknown = ctx
    t = e.plan.tp
    if t < cluster.gpus:
        row.reasons.append(Reason("tp_alone_idle", {"tp": t, "idle": cluster.gpus - t}))
    if trials["DP"].best is not None:
        row.verdict = Verdict.NOT_PREFERRED
        row.reasons.append(Reason("tp_dp_fits", _dp_fits(trials)))
    if _crosses("TP", e, cluster):
        row.verdict = Verdict.NOT_PREFERRED
        row.reasons.append(Reason("tp_crosses_nodes", {"gpus_per_node": cluster.gpus_per_node}))
    elif cluster.nodes > 1:
        row.reasons.append(Reason("tp_within_node", {"gpus_per_node": cluster.gpus_per_node,
                                                     "link": cluster.inter.name, "bandwidth": cluster.inter.bandwidth}))
    if "interconnect" in unknown:
        row.needs.append(Reason("unknown_interconnect_tp", {"link": cluster.intra.name}))


def _pp_row(e: Estimate, row: _Row, ctx) -> None:
    workload, cluster, trials, unknown = ctx
    p = e.plan.pp
    mb = e.plan.microbatches(workload)
    bf = bubble_fraction(p, mb)
    row.reasons.append(Reason("pp_bubble", {"pp": p, "microbatches": mb, "bubble": bf}))
    if p < cluster.gpus:
        row.reasons.append(Reason("pp_alone_idle", {"pp": p, "idle": cluster.gpus - p}))
    if trials["DP"].best is not None:
        row.verdict = Verdict.NOT_PREFERRED
        row.reasons.append(Reason("pp_dp_fits", _dp_fits(trials)))
    if bf > BUBBLE_LIMIT:
        if row.verdict is not Verdict.NOT_PREFERRED and "global_batch" in unknown:
            row.needs.append(Reason("unknown_global_batch_bubble", {"bubble": bf}))
        row.verdict = Verdict.NOT_PREFERRED
        row.reasons.append(Reason("pp_bubble_too_large", {"microbatches": mb, "bubble": bf, "limit": BUBBLE_LIMIT}))
    elif "global_batch" in unknown:
        row.needs.append(Reason("unknown_global_batch_pp", {"microbatches": mb}))


_ROWS = {"DP": _dp_row, "FSDP": _fsdp_row, "TP": _tp_row, "PP": _pp_row}


def _feasible_row(s: str, trials, workload: Workload, cluster: Cluster, unknown) -> MatrixRow:
    """The verdict of a strategy that fits: its own rules (:data:`_ROWS`), then cost against the cheapest."""
    e = trials[s].best
    row = _Row(Verdict.FEASIBLE, _best_reasons(e, workload, cluster))
    _ROWS[s](e, row, (workload, cluster, trials, unknown))
    # Strategies alone can use fewer GPUs than the cluster has (pure PP=20 of 32): compare the GPU-seconds
    # each spends per step (step time x the GPUs it uses), i.e. throughput per GPU, not raw step time.
    costs = {x: _gpu_seconds(trials[x].best) for x in STRATEGIES if trials[x].best is not None}
    winner = min(costs, key=costs.get)
    if costs[s] > SLOWER * costs[winner] and row.verdict is Verdict.FEASIBLE:
        row.verdict = Verdict.NOT_PREFERRED
        row.reasons.append(Reason("costlier_per_gpu", {"gpu_seconds": costs[s], "best_strategy": winner,
                                                       "best_gpu_seconds": costs[winner],
                                                       "ratio": costs[s] / costs[winner]}))
    if row.needs and row.verdict is Verdict.FEASIBLE:
        row.verdict = Verdict.NEED_INFO
        row.reasons.extend(row.needs)
    return MatrixRow(s, row.verdict, tuple(row.reasons), e, e)


# -- the matrix -------------------------------------------------------------------------------
def selection_matrix(workload: Workload, cluster: Cluster, unknown=(), headroom: float = DEFAULT_HEADROOM) -> list[MatrixRow]:
    """Verdicts for DP, FSDP, TP and PP used alone, with reasons; see the module docstring.

    Rules, in order (the lesson's further-study section: hard constraints, then cost):

    1. infeasible: no degree / micro-batch (1, 2, 4, 8) / recompute (none, selective, full) fits the
       device or satisfies the divisibility and batch constraints; the reason gives the numbers.
    2. not_preferred: TP or PP when DP already fits one card (simpler, no per-layer or pipeline cost);
       FSDP when DP fits and is not slower; TP whose group crosses the inter-node link; PP whose
       bubble fraction exceeds :data:`BUBBLE_LIMIT`; any strategy costing more than :data:`SLOWER` x
       the GPU-seconds per step of the cheapest feasible one (per GPU, since strategies alone may
       leave GPUs idle).
    3. need_info: a verdict that would be feasible (or not_preferred only because of the bubble) but depends on
       a fact listed in ``unknown`` (see :data:`FACTS`).
    4. feasible otherwise.

    Every reason is a :class:`~parallelsel.core.reasons.Reason` (code and values in library units);
    :mod:`parallelsel.render.reasons` writes its sentence.

    ``headroom``: a plan fits when its memory is at most the usable memory x (1 - headroom)
    (:func:`parallelsel.core.memory.budget`).
    """
    if not isinstance(workload, Workload):
        raise ParallelselError(f"workload={workload!r}: must be a Workload")
    if not isinstance(cluster, Cluster):
        raise ParallelselError(f"cluster={cluster!r}: must be a Cluster")
    if isinstance(unknown, str):
        unknown = (unknown,)
    unknown = frozenset(choice("unknown", u, FACTS) for u in unknown)

    check_headroom(headroom)
    trials = {s: _try(s, workload, cluster, headroom) for s in STRATEGIES}
    rows = []
    for s in STRATEGIES:
        t = trials[s]
        if t.best is None:
            rows.append(MatrixRow(s, Verdict.INFEASIBLE, tuple(_infeasible_reasons(t, workload, cluster)), None,
                                  t.closest))
        else:
            rows.append(_feasible_row(s, trials, workload, cluster, unknown))
    return rows
