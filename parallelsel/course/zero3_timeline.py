"""ZeRO-3 as DeepSpeed's 2021 parameter coordinator runs it: a timeline, weight tensor by weight tensor.

The general FSDP model of :mod:`parallelsel.core.estimate` hides the gathers and reduce-scatters behind
the whole pass they run beside. DeepSpeed's ZeRO-3 of 2021 -- the one Narayanan et al. 2021 §5.2
compared with PTD-P ("We integrated ZeRO into our codebase using the DeepSpeed Python library") --
could not: its ``PartitionedParameterCoordinator`` (``deepspeed/runtime/zero/stage3.py``, unchanged
from v0.3.13, March 2021, to v0.5.0, August 2021) works submodule by submodule, and the source fixes
how much overlaps:

* **one tensor ahead.** Before a submodule runs, ``fetch_sub_module`` all-gathers its parameters (or
  waits for them) and ``prefetch_next_sub_modules`` starts the gather of the next parameters of the
  recorded trace that are not resident, until ``stage3_prefetch_bucket_size`` elements are on the way
  (the bucket check comes after adding a tensor, so at least one) and only when nothing is in flight
  and fewer than ``stage3_max_live_parameters`` elements are resident. So a weight's gather overlaps
  only the kernels of the submodule before it.
* **device-wide synchronisation.** Each fetch that waits and each gather that starts calls
  ``torch.cuda.synchronize()`` (``stage3.py`` ``_synchronize_communication``;
  ``partition_parameters.py`` ``_allgather_param``): the gradient reduce-scatter launched after a
  submodule's backward must finish before the next gather starts, so it is never hidden.
* **release by reuse distance.** After a submodule runs, its parameters are partitioned again unless
  the trace reuses them within ``stage3_max_reuse_distance`` elements (``_keep_for_later``). With
  activation recomputation the forward is re-run inside backward: every weight is gathered again for
  it, and only the layer's last weight is still resident for its own backward.
* tensors below ``stage3_param_persistence_threshold`` elements (biases, norms) stay resident.

:func:`coordinator_time` runs these rules over a trace; :func:`deepspeed_zero3_step` builds the trace
of a dense GPT (:func:`parallelsel.core.kernels.weight_pieces`, embeddings tied to the output layer as in
Megatron-LM) and prices each collective with :func:`parallelsel.core.comm.collective_time` on the link the
DP group crosses (:mod:`parallelsel.core.placement`). Not modelled: the copies into and out of the list of
per-rank tensors that ``torch.distributed.all_gather`` / ``reduce_scatter`` take, launch gaps, and the SMs the
overlapped gathers hold (which :func:`parallelsel.core.estimate.estimate` charges as ``StepTime.contention``).

Examples:
    >>> import parallelsel as ps
    >>> w = ps.Workload(ps.MODELS["gpt3-175b"], global_batch=1536, attention="standard")
    >>> c = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=192)
    >>> t = deepspeed_zero3_step(w, ps.Plan(dp=1536, zero=3, recompute="full"), c)
    >>> t.communication > 0.4 * t.compute    # one tensor ahead, device-wide syncs: little of the traffic hides
    True
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core._check import ParallelselError, positive_number
from ..core.comm import collective_time
from ..core.estimate import StepTime
from ..core.hardware import Cluster
from ..core.kernels import gemm_time, optimizer_time, weight_pieces
from ..core.placement import group_link
from ..core.plan import Plan, Workload

__all__ = ["DEEPSPEED_2021", "CoordinatorTime", "Piece", "Zero3Config", "coordinator_time", "deepspeed_zero3_step",
           "deepspeed_zero3_timeline", "gpt_trace"]


@dataclass(frozen=True)
class Zero3Config:
    """The ZeRO-3 settings that decide overlap, in elements (DeepSpeed's ``zero_optimization`` keys)."""

    prefetch_bucket_size: float
    max_live_parameters: float
    max_reuse_distance: float
    param_persistence_threshold: float

    def __post_init__(self):
        for f in ("prefetch_bucket_size", "max_live_parameters", "max_reuse_distance", "param_persistence_threshold"):
            positive_number(f, getattr(self, f), allow_zero=True)


DEEPSPEED_2021 = Zero3Config(prefetch_bucket_size=5e7, max_live_parameters=1e9, max_reuse_distance=1e9,
                             param_persistence_threshold=1e5)
"""DeepSpeed's defaults from v0.3.13 to v0.5.0 (``deepspeed/runtime/zero/constants.py``:
``stage3_prefetch_bucket_size`` 50,000,000, ``stage3_max_live_parameters`` and
``stage3_max_reuse_distance`` 1,000,000,000, ``stage3_param_persistence_threshold`` 100,000). Narayanan
et al. 2021 do not give their DeepSpeed configuration; the defaults are the assumption."""


@dataclass(frozen=True)
class Piece:
    """One submodule call of the trace: the weight it uses (``name``, ``params`` elements), the kernel
    seconds it runs, and whether its backward produces that weight's gradient (then reduce-scattered)."""

    name: str
    params: float
    compute: float
    grads: bool = False


@dataclass(frozen=True)
class CoordinatorTime:
    """Seconds of the passes through a trace: ``total`` (wall clock), ``compute`` (kernels), ``gather`` and
    ``reduce_scatter`` (time the link is busy with each), ``gathered`` (elements all-gathered),
    ``calls`` (collectives issued)."""

    total: float
    compute: float
    gather: float
    reduce_scatter: float
    gathered: float
    calls: int


def _reuse_distances(trace) -> list:
    # Per call k, the elements the trace touches between it and the next call of the same weight (None: never
    # again): one pass from the end over prefix sums, not a scan ahead from every call.
    prefix, upcoming, out = [0.0], {}, [None] * len(trace)
    for p in trace:
        prefix.append(prefix[-1] + p.params)
    for k in range(len(trace) - 1, -1, -1):
        j = upcoming.get(trace[k].name)
        out[k] = None if j is None else prefix[j] - prefix[k + 1]
        upcoming[trace[k].name] = k
    return out


def coordinator_time(trace, gather, reduce_scatter, config: Zero3Config = DEEPSPEED_2021,
                     repeats: int = 1) -> CoordinatorTime:
    """Run DeepSpeed's 2021 coordinator rules (module docstring) over ``trace`` (:class:`Piece` calls in
    order), ``repeats`` times (micro-batches); ``gather(params)`` / ``reduce_scatter(params)`` give the
    seconds of one collective. One link carries both; kernels run on one stream."""
    trace = tuple(trace)
    gathered_on = [p.params >= config.param_persistence_threshold for p in trace]
    keep = [(d is not None and d < config.max_reuse_distance) for d in _reuse_distances(trace)]
    resident, flight = set(), {}
    live = t = link = busy_g = busy_rs = n_g = compute = 0.0
    calls = 0
    for _ in range(repeats):
        for k, p in enumerate(trace):
            if p.name in flight:                      # prefetched: wait for it (and, synchronising, for all)
                t = max(t, flight.pop(p.name), link)
                resident.add(p.name)
            elif gathered_on[k] and p.name not in resident:
                t = max(t, link) + gather(p.params)   # fetched on demand: nothing to hide behind
                link, busy_g, n_g, live = t, busy_g + gather(p.params), n_g + p.params, live + p.params
                resident.add(p.name)
                calls += 1
            if not flight and live < config.max_live_parameters:
                ahead = 0.0
                for j in range(k + 1, len(trace)):
                    q = trace[j]
                    if not gathered_on[j] or q.name in resident or q.name in flight:
                        continue
                    t = max(t, link)                  # _allgather_param synchronises the device first
                    link = t + gather(q.params)
                    flight[q.name], busy_g, n_g, live = link, busy_g + gather(q.params), n_g + q.params, live + q.params
                    ahead += q.params
                    calls += 1
                    if ahead >= config.prefetch_bucket_size:
                        break
            t += p.compute
            compute += p.compute
            if p.grads and gathered_on[k]:
                link = max(t, link) + reduce_scatter(p.params)
                busy_rs += reduce_scatter(p.params)
                calls += 1
            if gathered_on[k] and not keep[k] and p.name in resident:
                resident.discard(p.name)
                live -= p.params
    return CoordinatorTime(max(t, link), compute, busy_g, busy_rs, n_g, calls)


def gpt_trace(workload: Workload, plan: Plan, device) -> tuple[Piece, ...]:
    """The submodule calls of one micro-batch of a dense GPT without model parallelism, in the order
    the coordinator records them: word and position embeddings, each layer's four weights
    (:func:`parallelsel.core.kernels.weight_pieces`), the output layer on the tied word embeddings; then
    backward layer by layer from the top -- with full recomputation, each layer's forward again first
    (Megatron-LM's ``checkpoint`` per layer) -- and the embeddings' gradients last."""
    model, s, b = workload.model, workload.seq_len, plan.micro_batch
    h, v = model.hidden, model.vocab
    pieces = weight_pieces(model, b, s, device, 1, workload.attention)
    emb = [Piece("wte", v * h, 0.0)]
    if model.position == "learned":
        emb.append(Piece("wpe", s * h, 0.0))
    out = list(emb)
    for layer in range(model.layers):
        out += [Piece(f"{p.name}{layer}", p.params, p.forward) for p in pieces]
    tokens = b * s
    out.append(Piece("wte", v * h, gemm_time(tokens, v, h, device)))
    out.append(Piece("wte", v * h, gemm_time(tokens, h, v, device) + gemm_time(h, v, tokens, device)))
    for layer in reversed(range(model.layers)):
        if plan.recompute == "full":
            out += [Piece(f"{p.name}{layer}", p.params, p.forward) for p in pieces]
        out += [Piece(f"{p.name}{layer}", p.params, p.backward, True) for p in reversed(pieces)]
    out += [Piece(e.name, e.params, 0.0, True) for e in reversed(emb)]
    return tuple(out)


def _check_plan(workload: Workload, plan: Plan) -> None:
    if not isinstance(plan, Plan) or plan.zero != 3 or plan.gpus != plan.dp or workload.model.is_moe:
        raise ParallelselError(f"plan={plan!r}: the DeepSpeed 2021 timeline covers ZeRO-3 over data parallelism "
                               "alone (zero=3, tp=pp=cp=1) on a dense model")


def deepspeed_zero3_timeline(workload: Workload, plan: Plan, cluster: Cluster,
                             config: Zero3Config = DEEPSPEED_2021) -> CoordinatorTime:
    """:func:`coordinator_time` over :func:`gpt_trace` for each micro-batch of ``plan`` (ZeRO-3 over all of
    DP, no TP/PP/CP, a dense model) on ``cluster``: gathers of ``recipe.weights`` and reduce-scatters of
    ``recipe.grads`` bytes per element over the DP ring, priced by :func:`parallelsel.core.comm.collective_time`
    (so each call pays (n - 1) ring steps of the link's latency) on the link the ring crosses."""
    _check_plan(workload, plan)
    dp, recipe = plan.dp, workload.recipe
    link = group_link(cluster, dp, dp, 1)
    gather = lambda n: collective_time("all-gather", recipe.weights * n, dp, link)          # noqa: E731
    reduce = lambda n: collective_time("reduce-scatter", recipe.grads * n, dp, link)        # noqa: E731
    m = max(1, plan.microbatches(workload))
    return coordinator_time(gpt_trace(workload, plan, cluster.device), gather, reduce, config, m)


def deepspeed_zero3_step(workload: Workload, plan: Plan, cluster: Cluster,
                         config: Zero3Config = DEEPSPEED_2021) -> StepTime:
    """Step time of ``plan`` as DeepSpeed's 2021 ZeRO-3 runs it: :func:`deepspeed_zero3_timeline` plus one
    Adam step over this GPU's shard (:func:`parallelsel.core.kernels.optimizer_time`). ``communication`` is
    the wall clock not spent in kernels; ``communication_total`` the time the link is busy."""
    ct = deepspeed_zero3_timeline(workload, plan, cluster, config)
    dp, device = plan.dp, cluster.device
    opt = optimizer_time(workload.model.params / dp, device)
    total, compute = ct.total + opt, ct.compute + opt
    model_flops = workload.model.model_flops_per_token(workload.seq_len) * workload.tokens
    return StepTime(compute=compute, communication=total - compute, communication_total=ct.gather + ct.reduce_scatter,
                    bubble=0.0, total=total, tokens_per_s=workload.tokens / total,
                    mfu=model_flops / (total * device.peak_flops * dp), exposed=(("ZeRO-3", total - compute),))
