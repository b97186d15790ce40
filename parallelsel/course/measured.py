"""The step-time model beside published, measured runs (:data:`parallelsel.course.references.MEASURED_RUNS`).

Each run becomes the library's workload, plan and cluster exactly as its paper describes it (the
GPT shape of Narayanan et al. 2021 §5.1, the standard attention kernel both papers used, the
paper's TP, PP, micro-batch, interleaving and recomputation), and :func:`parallelsel.core.estimate`
predicts it with one set of device constants. Throughput rows compare teraFLOP/s per GPU counted
as the paper counts it (eq. 3, full recomputation: 96 B s l h^2 (1 + s/6h + V/16lh) per iteration);
iteration-time rows compare seconds.

Examples:
    >>> from parallelsel.course.references import KORTHIKANTI_TABLE5
    >>> row = compare(KORTHIKANTI_TABLE5[1])
    >>> row.metric, row.published, abs(row.error) < 0.15
    ('seconds', 13.75, True)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..core.estimate import Estimate, estimate
from ..core.hardware import DEVICES, Cluster, Device
from ..core.model import Transformer
from ..core.plan import Plan, Workload
from ..core.search import DECIDERS, TIE, search
from .references import NARAYANAN_GPT, NARAYANAN_THROUGHPUT, NARAYANAN_ZERO3, MeasuredRun
from .zero3_timeline import deepspeed_zero3_step

__all__ = ["MEAN_LIMIT", "MEMORY_LIMIT", "ROW_LIMIT", "Compared", "PickCompared", "StackCompared", "async_tp_pairs", "compare", "compare_all", "compare_stack", "eq3_flops", "era_pins",
           "published_vs_pick", "run_estimate", "stack_estimate"]


ROW_LIMIT, MEAN_LIMIT, MEMORY_LIMIT = 0.20, 0.08, 0.10
"""Issue 28's acceptance lines for the step-time model against measured runs: every row's throughput error, the mean
absolute error over rows, and the peak-memory error where a source prints it."""


def _model(run: MeasuredRun) -> Transformer:
    l, h, a = run.shape
    return Transformer(layers=l, hidden=h, heads=a, tied_embeddings=True, position="learned", bias=True,
                       norm="layernorm", **NARAYANAN_GPT)


def run_estimate(run: MeasuredRun, device: Device | None = None) -> Estimate:
    """The library's estimate of ``run`` on ``device`` (default: the A100-80GB preset, DGX A100 nodes); a
    run of DeepSpeed's 2021 ZeRO-3 (``run.stack``) is timed by :func:`parallelsel.course.zero3_timeline.deepspeed_zero3_step`."""
    device = DEVICES["a100-80gb"] if device is None else device
    dp = run.gpus // (run.tp * run.pp)
    # The papers' Megatron-LM waited for each pipeline send as it posted it (overlap_p2p_comm came in 4eeff55,
    # 2023-10-12), so their plans say so rather than take today's stack default.
    plan = Plan(dp=dp, tp=run.tp, pp=run.pp, zero=run.zero, micro_batch=run.micro_batch, sp=run.sp,
                recompute=run.recompute, schedule="interleaved" if run.chunks > 1 else "1f1b", chunks=run.chunks,
                p2p_overlap=False if run.pp > 1 else None)
    # The ZeRO-3 runs and MT-NLG ran on DeepSpeed (fp16 states and collectives: 2 + 2 + 12), the others on Megatron-LM.
    stack = "deepspeed" if run.stack in ("deepspeed-2021", "deepspeed") else "megatron-core"
    work = Workload(_model(run), global_batch=run.global_batch, attention="standard", stack=stack)
    cluster = Cluster(device, nodes=max(1, run.gpus // 8))
    e = estimate(work, plan, cluster)
    if run.stack == "deepspeed-2021":
        # DeepSpeed's 2021 ZeRO-3 overlaps by its coordinator's rules, not the general FSDP model's.
        e = dataclasses.replace(e, step=deepspeed_zero3_step(work, plan, cluster))
    return e


def eq3_flops(run: MeasuredRun) -> float:
    """FLOPs per iteration as Narayanan et al. 2021 eq. 3 counts them (full recomputation)."""
    l, h, _ = run.shape
    s, v, b = NARAYANAN_GPT["seq_len"], NARAYANAN_GPT["vocab"], run.global_batch
    return 96 * b * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h))


@dataclass(frozen=True)
class Compared:
    """A measured run beside the prediction, in the paper's metric; ``error`` = predicted / published - 1."""

    run: MeasuredRun
    estimate: Estimate
    metric: str
    published: float
    predicted: float

    @property
    def error(self) -> float:
        return self.predicted / self.published - 1


def compare(run: MeasuredRun, device: Device | None = None) -> Compared:
    """``run`` beside the library's prediction on ``device`` (e.g. a calibrated one, :func:`parallelsel.core.calibrate`)."""
    e = run_estimate(run, device)
    if run.metric == "seconds":
        predicted = e.step.total
    else:
        predicted = eq3_flops(run) / (e.step.total * run.gpus) / 1e12
    return Compared(run, e, run.metric, run.value, predicted)


def compare_all(runs, device: Device | None = None) -> tuple[Compared, ...]:
    """:func:`compare` for each of ``runs``."""
    return tuple(compare(r, device) for r in runs)


# -- the stacks' own measured runs (parallelsel.course.stack_runs) ----------------------------------------
def stack_estimate(run, device: Device | None = None) -> Estimate:
    """The library's estimate of a :class:`parallelsel.course.stack_runs.StackRun`: its model, stack, recipe,
    ``compile``, attention kernel, global batch and sequence, the plan the source states, on the part it names (or ``device``),
    in nodes of the run's NVLink domain (``StackRun.nvlink_domain``: an NVL72 rack's share of the job) or of eight GPUs
    (one node of fewer for a run on fewer)."""
    from ..core.hardware import DEVICES as _DEVICES
    from ..core.recipe import RECIPES
    from .stack_runs import stack_model

    model = stack_model(run)
    recipe = RECIPES[run.recipe] if run.recipe else None
    work = Workload(model, recipe=recipe, global_batch=run.global_batch, seq_len=run.seq_len, stack=run.stack,
                    compile=run.compile, attention=run.attention)
    device = _DEVICES[run.device] if device is None else device
    node = min(run.nvlink_domain or 8, run.gpus)
    if run.gpus % node:
        raise ValueError(f"run {run.label!r}: gpus={run.gpus} must fill nodes of {node} GPUs (nvlink_domain)")
    return estimate(work, Plan(**run.plan), Cluster(device, nodes=run.gpus // node, gpus_per_node=node))


@dataclass(frozen=True)
class StackCompared:
    """A stack's measured run beside the prediction: ``error`` = predicted / published - 1 in the run's metric
    (tokens/s or teraFLOP/s per GPU); ``memory_error`` the same for peak memory where the source prints it."""

    run: object
    estimate: Estimate
    published: float
    predicted: float
    memory_published: float | None
    memory_predicted: float

    @property
    def error(self) -> float:
        return self.predicted / self.published - 1

    @property
    def memory_error(self) -> float | None:
        if self.memory_published is None:
            return None
        return self.memory_predicted / self.memory_published - 1


def async_tp_pairs(compared) -> list[tuple[StackCompared, StackCompared]]:
    """Each run of ``compared`` (:class:`StackCompared` rows) measured with async TP beside the same run measured
    without it: the labels ``"<run>, async TP"`` and ``"<run>"`` (torchtitan's benchmarks publish such pairs)."""
    by_label = {c.run.label: c for c in compared}
    suffix = ", async TP"
    return [(by_label[label[:-len(suffix)]], c) for label, c in by_label.items()
            if label.endswith(suffix) and label[:-len(suffix)] in by_label]


def compare_stack(run, device: Device | None = None) -> StackCompared:
    """``run`` (a :class:`parallelsel.course.stack_runs.StackRun`) beside the library's prediction."""
    from .stack_runs import source_flops

    e = stack_estimate(run, device)
    if run.metric == "tflops":
        predicted = source_flops(run) / (e.step.total * run.gpus) / 1e12
    else:
        predicted = e.step.tokens_per_s / run.gpus
    mem = None if run.memory_gib is None else run.memory_gib * 2**30
    return StackCompared(run, e, run.value, predicted, mem, e.memory.total)


# -- the published plan beside the search's pick ---------------------------------------------------
def era_pins(run) -> dict:
    """The options ``run``'s software did not offer, as ``search(fixed=...)`` pins, so the search it is compared
    with picks only plans its authors could have run. Megatron-LM as Narayanan et al. 2021 and Korthikanti et al.
    2022 ran it: no ZeRO in any of their runs (Narayanan et al. 2021 §5.2 ran ZeRO-3 on DeepSpeed, as the
    comparison), even pipeline splits only (Megatron-LM's ``--decoder-first/last-pipeline-num-layers`` came in
    2024), pipeline sends not overlapped with compute (``overlap_p2p_comm`` came in 2023), and for the 2021 runs
    no sequence parallelism (introduced by Korthikanti et al. 2022). A stack's own
    runs, DeepSpeed's 2021 ZeRO-3 rows and MT-NLG on its pipeline engine need none: their stack record already
    refuses what the stack refused."""
    if getattr(run, "stack", "") in ("megatron-core", "torchtitan", "deepspeed-2021", "deepspeed"):
        return {}
    pins = {"zero": 0, "stage_layers": None, "p2p_overlap": False}
    if run in NARAYANAN_THROUGHPUT + NARAYANAN_ZERO3:
        pins["sp"] = False
    return pins


@dataclass(frozen=True)
class PickCompared:
    """A published run's plan beside the search's pick on the same job: ``published`` (its estimate, from
    :func:`parallelsel.core.estimate.estimate` like the pick's, so the two are timed by one model), ``pick`` (the
    search's first plan, the run's recompute mode and :func:`era_pins` pinned; None if nothing fits), ``ratio``
    (published step / pick step), ``differ`` (plan fields that differ) and ``decide`` (what would tell them apart:
    :data:`parallelsel.core.search.DECIDERS` codes); ``within_tie``: the ratio is inside the model's measured error
    (:data:`parallelsel.core.search.TIE`)."""

    run: object
    published: Estimate
    pick: object
    ratio: float | None
    differ: tuple[str, ...]
    decide: tuple[str, ...]
    within_tie: bool


def published_vs_pick(run) -> PickCompared:
    """``run`` (a :class:`~parallelsel.course.references.MeasuredRun` or a stack run) beside the search's pick."""
    if hasattr(run, "plan"):
        e = stack_estimate(run)
    else:  # the search's own timing, also for the DeepSpeed-2021 rows (whose validation row uses their timeline)
        e = run_estimate(run)
        e = estimate(e.workload, e.plan, e.cluster)
    if not e.fits:
        return PickCompared(run, e, None, None, (), (), False)
    # top=1: the bound still times every plan within the tie band of the best, so the pick is the same as with more.
    # The publication's recomputation pinned whole: its mode and how many layers it recomputes (None: all of them).
    pins = {"recompute": e.plan.recompute, **({"recompute_layers": e.plan.recompute_layers}
                                              if e.plan.recompute == "full" else {})}
    best = search(e.workload, e.cluster, top=1, fixed={**pins, **era_pins(run)}).best
    ratio = e.step.total / best.estimate.step.total
    mine, theirs = e.plan.as_dict(), best.plan.as_dict()
    differ = tuple(f for f in DECIDERS if mine.get(f) != theirs.get(f))
    return PickCompared(run, e, best, ratio, differ, tuple(sorted({DECIDERS[f] for f in differ})), ratio <= 1 + TIE)
