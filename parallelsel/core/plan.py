"""What is being trained (Workload) and how it is split (Plan), with the hard constraints between them.

A plan places ``dp * tp * pp`` ranks. Rank order is TP fastest, then DP, then PP (Megatron-LM's
default order), so a TP group is ``tp`` consecutive GPUs, a DP group strides by ``tp``, and a PP
group strides by ``tp * dp``. FSDP maps onto ZeRO: FULL_SHARD = ZeRO-3, SHARD_GRAD_OP = ZeRO-3 with
``reshard_after_forward=False`` (sharded at rest, gathered from each forward to its backward; not
DeepSpeed's ZeRO-2, whose weights stay whole), NO_SHARD = ZeRO-0 (plain DP), HYBRID_SHARD = ZeRO-3
inside a shard group of ``shard`` ranks and replication across groups (Zhao et al. 2023, PyTorch
FSDP, §3.2.1; the FSDP docs' ShardingStrategy).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache

from ._check import cached_hash, state_without_hash, MAX_INT, ParallelselError, choice, flag, positive_int, record, store
from .hardware import MAX_GPUS, Cluster
from .model import ATTENTION, MODELS, RECOMPUTE, SHAPE_LIMITS, Transformer
from .reasons import Reason
from .recipe import Recipe
from .stacks import DEFAULT_STACK, P2P_OVERLAP_SCHEDULES, STACKS

SCHEDULES = ("gpipe", "1f1b", "interleaved", "zb-h1")
"""Pipeline schedules a Plan may name (the one list; :mod:`parallelsel.core.pipeline` simulates more kinds)."""

def expert_ranks(tp: int, ep: int, etp: int | None) -> int:
    """The ranks one MoE layer's experts are split over: expert TP x EP, the expert TP ``etp`` or, None, the dense
    ``tp`` (``Plan.expert_split``)."""
    return (tp if etp is None else etp) * ep


DISPATCHERS = ("alltoall", "deepep", "hybridep")
"""How an MoE layer's tokens reach their experts (``Plan.dispatcher``): Megatron-Core's NCCL all-to-all, which sends
each (token, expert) copy (``--moe-token-dispatcher-type alltoall``), or its flex dispatcher with the DeepEP or HybridEP
backend (``--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep|hybridep``), which "removes redundant
tokens during cross-node communication" (``megatron/core/transformer/moe/README.md`` @d98e8a6, Token Dispatching)."""

MICRO_BATCHES = (1, 2, 4, 8)
"""Micro-batch sizes the search and the selection matrix try (a pinned value outside them is also tried)."""

MAX_GLOBAL_BATCH = 2**30
"""Largest global batch (sequences per step) accepted: far beyond any published run (Llama 3 405B
peaks at 16M tokens, 2,048 sequences of 8,192; Dubey et al. 2024 §3.4.1), small enough that tokens
per step stay exact in float64."""

FSDP_STRATEGIES = {"NO_SHARD": (0, True), "SHARD_GRAD_OP": (3, False), "FULL_SHARD": (3, True), "HYBRID_SHARD": (3, True)}
"""PyTorch FSDP's ShardingStrategy -> (ZeRO stage of the resident state, reshard_after_forward): the
FSDP docs' definitions (``torch.distributed.fsdp.ShardingStrategy``; FSDP2's ``reshard_after_forward``)."""


@dataclass(frozen=True)
class Workload:
    """A training job: model, recipe, global batch (sequences per optimizer step), sequence length and attention kernel.

    ``model`` and ``recipe`` take a record or its key in ``ps.MODELS`` / ``ps.RECIPES`` (``"llama3-70b"``,
    ``"fp8-params-bf16grad"``), as the command line does.

    ``attention`` is ``"flash"`` (default: the stack's fused kernel, as every current training stack uses),
    ``"fa2"`` (FlashAttention-2's kernel where the stack would pick cuDNN's: Transformer Engine with
    ``NVTE_FUSED_ATTN=0``; the same memory as ``"flash"``) or ``"standard"`` (the s x s scores are stored,
    Korthikanti et al. 2022's accounting); see :data:`parallelsel.core.model.ATTENTION` and
    :func:`parallelsel.core.memory.activations_per_layer`.

    ``stack``: the framework the job runs on, a key of :data:`parallelsel.core.stacks.STACKS`
    (``"megatron-core"``, ``"torchtitan"``, ``"deepspeed"``; default
    :data:`~parallelsel.core.stacks.DEFAULT_STACK`, Megatron-Core): the dtype of each collective, the
    model-state bytes (``recipe`` defaults to the stack's: 18 bytes a parameter on Megatron-Core, 16 on
    torchtitan and DeepSpeed), what overlaps and which operators are fused follow it. ``compile``: the model
    runs under ``torch.compile`` (refused on a stack that does not offer it); ``True`` compiles what the stack
    compiles, ``"model"`` the blocks only with the loss eager (:data:`parallelsel.core.stacks.COMPILE_SCOPES`).
    """

    model: Transformer
    recipe: Recipe = None  # type: ignore[assignment]
    global_batch: int = 1
    seq_len: int | None = None
    attention: str = "flash"
    stack: str = DEFAULT_STACK
    compile: bool | str = False

    def __post_init__(self):
        from .recipe import RECIPES  # local: avoids a cycle at import time

        object.__setattr__(self, "model", record("model", self.model, Transformer, MODELS))
        choice("stack", self.stack, tuple(STACKS))
        if self.recipe is None:  # the stack's own bf16 mixed-precision states (Stack.recipe)
            object.__setattr__(self, "recipe", RECIPES[STACKS[self.stack].recipe])
        object.__setattr__(self, "recipe", record("recipe", self.recipe, Recipe, RECIPES))
        store(self, "global_batch", positive_int("global_batch", self.global_batch, maximum=MAX_GLOBAL_BATCH))
        if self.seq_len is None:
            object.__setattr__(self, "seq_len", self.model.seq_len)
        store(self, "seq_len", positive_int("seq_len", self.seq_len, maximum=SHAPE_LIMITS["seq_len"]))
        choice("attention", self.attention, ATTENTION)
        if not (isinstance(self.compile, str) and self.compile == "model"):  # the one non-boolean scope
            try:
                store(self, "compile", flag("compile", self.compile))
            except ParallelselError:
                raise ParallelselError(f"compile={self.compile!r}: must be True, False or 'model' (the blocks "
                                       f"compiled, the loss eager)") from None
        STACKS[self.stack].mode(self.compile)  # raises if the stack has no compiled mode

    @property
    def tokens(self) -> int:
        """Tokens per optimizer step."""
        return self.global_batch * self.seq_len


@dataclass(frozen=True)
class Plan:
    """Degrees of each parallel dimension and the knobs that go with them.

    ``zero``: ZeRO stage 0-3 across the DP group (3 = FSDP FULL_SHARD). ``shard``: size of the
    ZeRO/FSDP shard group (None = the whole DP group; smaller = HSDP). ``sp``: Megatron sequence
    parallelism inside the TP group. ``chunks``: virtual pipeline stages per GPU (interleaved).
    ``ep``: expert-parallel degree (MoE only). ``etp``: the experts' own tensor-parallel degree (Megatron-Core's
    ``--expert-tensor-parallel-size``; MoE parallel folding, Liu et al. 2025 §3); None is the dense TP, Megatron's
    default (``arguments.py`` L587-588 @d98e8a6). The experts have a grid of their own, ETP x EP x expert-DP, over
    the same tp x cp x dp ranks of a pipeline stage (``parallel_state.py``'s expert rank generator since
    core_r0.10.0: ETP fastest, then EP, no CP axis), so ``etp x ep`` must divide ``tp x cp x dp``, EP groups are
    ``etp`` ranks apart and may reach across CP (and, with etp < tp, TP) ranks. ``cp``: context-parallel
    degree: each sequence is split into ``cp`` chunks on ``cp`` ranks that pass K/V blocks round a
    ring (ring attention; Liu et al. 2023), so a plan uses ``dp x tp x pp x cp`` GPUs; rank order
    is TP, CP, DP, PP fastest first (Megatron-LM's default order ``tp-cp-ep-dp-pp``).

    Two FSDP (``zero=3``) options, in PyTorch's meaning (FSDP2 ``fully_shard``; FSDP1 names in brackets):

    * ``reshard_after_forward``: True frees each block's gathered weights after its forward and
      all-gathers them again for its backward (FULL_SHARD); False keeps them from forward to backward,
      one all-gather per micro-batch and every block's weights unsharded at the peak (SHARD_GRAD_OP).
      Either way the weights are resharded after backward, so each micro-batch gathers again.
    * ``no_sync``: gradient accumulation without synchronisation until the last micro-batch
      (FSDP2 ``set_requires_gradient_sync(False)``; FSDP1 ``no_sync()``): the stage's gradients stay
      unsharded on every rank and are reduce-scattered once per step instead of once per micro-batch.
      Only with ``zero=3``: DP and ZeRO-1 already synchronise once per step, and DeepSpeed refuses
      ``no_sync`` with ZeRO-2/3 (``DeepSpeedEngine.no_sync`` asserts the gradients are not partitioned).

    With PP both follow the stack that runs FSDP with PP (:mod:`parallelsel.core.stacks`: torchtitan keeps
    weights and gradients unsharded for the step), so they change nothing there.

    ``recompute``: a policy of :data:`parallelsel.core.model.RECOMPUTE` (``"none"``, ``"selective"``
    -- Megatron's core-attention recompute --, ``"op"`` -- torchtitan's op-level SAC --, ``"full"``).
    ``recompute_layers``: with ``recompute="full"`` only, recompute k layers of each pipeline model
    chunk fully and store everything for the others (None: all of them). Megatron-Core's
    ``--recompute-method block --recompute-num-layers k`` ("recompute only the first
    recompute_num_layers layers per pipeline stage", ``transformer_config.py`` L543-551 @d98e8a6; per
    model chunk with virtual stages) and torchtitan's layer SAC ``selective_ac_option="N"`` (full AC on
    every N-th block, the others none: k = floor(layers of the stage / N); ``parallelize_llama.py``
    L281-289 @820504e). Megatron's ``uniform`` method with k = 1 is plain ``"full"``.
    ``tp_overlap``: TP collectives overlap the GEMMs beside them -- Megatron-Core's ``--tp-comm-overlap``
    (Transformer Engine userbuffers; needs ``sp``), torchtitan's async TP (needs ``compile``);
    None takes the workload's stack default (off on all three: ``Stack.overlap_tp_comm``). Priced by
    :func:`parallelsel.core.comm.traffic` from the GEMM each collective hides under.
    ``p2p_overlap``: the pipeline's stage-to-stage sends overlap the next chunk's compute instead of sitting
    on the critical path -- Megatron-LM's ``overlap_p2p_comm``, on by default with the interleaved schedule
    since 2023-10 (``--no-overlap-p2p-communication`` turns it off); None takes the stack default for the
    plan's schedule (``Stack.overlap_pp_p2p``). False where no stack overlaps (no pipeline, or a schedule
    outside :data:`parallelsel.core.stacks.P2P_OVERLAP_SCHEDULES` or without virtual stages:
    :func:`p2p_overlappable`) is stored as None, the same setting; so is any value without a pipeline.

    ``ep_overlap``: the experts' all-to-alls of one micro-batch run under another micro-batch's compute --
    Megatron-Core's ``--overlap-moe-expert-parallel-comm`` (``model_parallel_config.py`` L343 @d98e8a6), which
    pairs each forward with a backward layer by layer (``pipeline_parallel/combined_1f1b.py``), one layer's
    activations more at the peak (``schedules.py`` L966-969 adds a warm-up forward); it needs EP, no full
    recomputation, a 16-bit model and, with a pipeline, virtual stages (``transformer_config.py`` L3002-3036).
    None or False:
    off, every stack's default. Priced by :func:`parallelsel.core.comm.traffic`.
    ``dispatcher``: how the experts' tokens travel (:data:`DISPATCHERS`): None or ``"alltoall"`` (the default, one
    copy per (token, expert)), ``"deepep"`` or ``"hybridep"`` (Megatron-Core's flex dispatcher: each token crosses
    the network once per node that hosts one of its experts and is forwarded over NVLink inside it; needs an
    MoE layer whose expert TP x EP > 1, Megatron-Core only). Priced by :func:`parallelsel.core.comm.traffic`.

    ``stage_layers``: an uneven pipeline split, the transformer layers of each pipeline rank in stage
    order (``pp`` entries summing to the model's layers; with ``chunks`` > 1 each rank's layers are
    spread over its chunks, so every entry must be at least ``chunks``). None (the default) splits
    the layers evenly, ``layers / pp`` per rank; where they do not divide, it means the split the workload's
    stack builds for a job that states none (:func:`stack_split`: DeepSpeed and torchtitan split unevenly by
    themselves, Megatron-Core refuses), which :func:`parallelsel.core.estimate.estimate` writes into its plan.
    The embedding sits on the first rank and the output layer and loss on the last, whatever the split; memory, step time and the pipeline's pace follow
    each rank's own layers (:func:`stage_layer_counts`). Build it from the launchers' flags with
    :func:`megatron_split` (``--decoder-first/last-pipeline-num-layers``,
    ``--account-for-embedding/loss-in-pipeline-split``) or :func:`torchtitan_split`
    (``pipeline_parallel_first/last_stage_less_layers``), or let :func:`balanced_split` choose it.
    """

    dp: int = 1
    tp: int = 1
    pp: int = 1
    zero: int = 0
    micro_batch: int = 1
    sp: bool = False
    recompute: str = "none"
    schedule: str = "1f1b"
    chunks: int = 1
    shard: int | None = None
    ep: int = 1
    cp: int = 1
    reshard_after_forward: bool = True
    no_sync: bool = False
    recompute_layers: int | None = None
    tp_overlap: bool | None = None
    stage_layers: tuple[int, ...] | None = None
    p2p_overlap: bool | None = None
    etp: int | None = None
    ep_overlap: bool | None = None
    dispatcher: str | None = None

    __hash__ = cached_hash
    __getstate__ = state_without_hash

    def __post_init__(self):
        # Fast enough for the search to build every plan it tries through here (about 2 µs).
        for f in ("dp", "tp", "pp", "micro_batch", "chunks", "ep", "cp"):
            v = getattr(self, f)
            if type(v) is not int or not 1 <= v <= MAX_INT:  # (a positive Python int needs no normalising)
                store(self, f, positive_int(f, v))
        if self.dp * self.tp * self.pp * self.cp > MAX_GPUS:  # no cluster is larger (hardware.MAX_GPUS)
            raise ParallelselError(f"dp x tp x pp x cp = {self.dp} x {self.tp} x {self.pp} x {self.cp}: "
                                   f"must be <= {MAX_GPUS} GPUs")
        try:
            zero = positive_int("zero", self.zero, minimum=0, maximum=3)
        except ParallelselError:
            raise ParallelselError(f"zero={self.zero!r}: must be a ZeRO stage 0, 1, 2 or 3") from None
        if zero is not self.zero:
            store(self, "zero", zero)
        if flag("sp", self.sp) is not self.sp:
            store(self, "sp", flag("sp", self.sp))
        choice("recompute", self.recompute, RECOMPUTE)
        choice("schedule", self.schedule, SCHEDULES)
        if self.chunks > 1 and self.schedule != "interleaved":
            raise ParallelselError(f"chunks={self.chunks}: virtual stages need schedule='interleaved', got {self.schedule!r}")
        if self.shard is not None:
            store(self, "shard", positive_int("shard", self.shard))
            if self.dp % self.shard:
                raise ParallelselError(f"shard={self.shard}: must divide dp={self.dp} (HSDP shard groups tile the DP group)")
        if self.etp is not None:
            store(self, "etp", positive_int("etp", self.etp))
            if self.etp == self.tp:
                store(self, "etp", None)   # the default: experts split like the dense layers
        if (self.cp * self.dp * self.tp) % self.expert_split:
            raise ParallelselError(f"ep={self.ep}: expert TP x EP = {self.expert_tp} x {self.ep} must divide tp x cp x "
                                   f"dp = {self.tp * self.cp * self.dp} (the experts' grid covers the ranks of one "
                                   f"pipeline stage; with etp=None, the dense TP, ep must divide cp x dp = "
                                   f"{self.cp * self.dp})")
        if self.reshard_after_forward is not True or self.no_sync is not False:
            self._check_fsdp_options()
        if self.recompute_layers is not None:
            store(self, "recompute_layers", positive_int("recompute_layers", self.recompute_layers))
            if self.recompute != "full":
                raise ParallelselError(f"recompute_layers={self.recompute_layers}: needs recompute='full' (Megatron "
                                       f"--recompute-num-layers goes with full granularity; torchtitan's every-N-th "
                                       f"layer AC is full AC), got recompute={self.recompute!r}")
        if self.tp_overlap is not None:
            store(self, "tp_overlap", flag("tp_overlap", self.tp_overlap))
        if self.ep_overlap is not None:
            store(self, "ep_overlap", flag("ep_overlap", self.ep_overlap) or None)   # off is the default: None
        if self.dispatcher is not None:
            choice("dispatcher", self.dispatcher, DISPATCHERS)
            if self.dispatcher == "alltoall":
                store(self, "dispatcher", None)   # the default: one setting, one value
        if self.p2p_overlap is not None:
            store(self, "p2p_overlap", flag("p2p_overlap", self.p2p_overlap))
            if self.pp == 1 or (not self.p2p_overlap and not p2p_overlappable(self)):
                store(self, "p2p_overlap", None)   # no sends, or none a stack overlaps: off is the only setting
        if self.stage_layers is not None:
            self._check_stage_layers()

    def _check_stage_layers(self) -> None:
        split = self.stage_layers
        if isinstance(split, (str, bytes)) or not hasattr(split, "__iter__"):
            raise ParallelselError(f"stage_layers={split!r}: must be a sequence of layers per pipeline stage")
        if type(split) is not tuple or not all(type(n) is int and 1 <= n <= MAX_INT for n in split):
            split = tuple(positive_int(f"stage_layers[{i}]", n) for i, n in enumerate(split))
        if len(split) != self.pp:
            raise ParallelselError(f"stage_layers={split!r}: has {len(split)} entries; must have one per pipeline "
                                   f"stage (pp={self.pp})")
        if min(split) < self.chunks:
            raise ParallelselError(f"stage_layers={split!r}: every stage needs at least chunks={self.chunks} layers "
                                   f"(one per virtual stage)")
        store(self, "stage_layers", split)

    def _check_fsdp_options(self) -> None:
        for f in ("reshard_after_forward", "no_sync"):
            store(self, f, flag(f, getattr(self, f)))
        if not self.reshard_after_forward and self.zero != 3:
            raise ParallelselError(f"reshard_after_forward=False: needs zero=3 (FSDP), got zero={self.zero} "
                                   f"(ZeRO-0/1/2 keep whole weights on every rank; nothing is resharded)")
        if self.no_sync and self.zero != 3:
            raise ParallelselError(f"no_sync=True: needs zero=3 (FSDP), got zero={self.zero} (DP and ZeRO-1 "
                                   f"synchronise gradients once per step already; DeepSpeed refuses no_sync with ZeRO-2)")

    @property
    def gpus(self) -> int:
        return self.dp * self.tp * self.pp * self.cp

    @property
    def expert_tp(self) -> int:
        """Ways each expert's matrices are split: ``etp``, or ``tp`` by default; also the ranks between consecutive
        members of an EP group (the experts' grid: expert TP fastest, then EP; Megatron-Core's expert rank generator
        since core_r0.10.0)."""
        return self.tp if self.etp is None else self.etp

    @property
    def expert_split(self) -> int:
        """Ways one layer's expert weights are split over a pipeline stage's ranks: expert TP x EP."""
        return expert_ranks(self.tp, self.ep, self.etp)

    @property
    def expert_dp(self) -> int:
        """Ranks that hold the same expert shard (the experts' data-parallel group): tp x cp x dp / (etp x ep)."""
        return self.tp * self.cp * self.dp // self.expert_split

    def recompute_share(self, model: Transformer) -> float:
        """Share of the model's layers that recompute: 1 unless ``recompute_layers`` picks k of each chunk's
        layers (capped at the chunk's layers), 0 without recomputation."""
        if self.recompute == "none":
            return 0.0
        if self.recompute_layers is None:
            return 1.0
        per_chunk = model.layers / (self.pp * self.chunks)
        return min(1.0, self.recompute_layers / per_chunk)

    @property
    def shard_size(self) -> int:
        """Ranks that ZeRO/FSDP shards states over (1 when zero == 0)."""
        if self.zero == 0:
            return 1
        return self.dp if self.shard is None else self.shard

    def microbatches(self, workload: Workload) -> int:
        """Micro-batches per pipeline per step (gradient-accumulation steps): B / (dp * b)."""
        return workload.global_batch // (self.dp * self.micro_batch)

    def layers_per_stage(self, layers: int) -> tuple[int, ...]:
        """Transformer layers on each pipeline rank for a model of ``layers`` layers: :attr:`stage_layers`,
        or the even split (:func:`stage_layer_counts`)."""
        return stage_layer_counts(layers, self.pp, self.stage_layers)

    def with_(self, **changes) -> "Plan":
        return replace(self, **changes)

    def as_dict(self) -> dict:
        """The plan's fields as a plain dict (what a reason's ``values`` carry for a plan)."""
        return {f: getattr(self, f) for f in self.__dataclass_fields__}

    @property
    def dims(self) -> int:
        """How many parallel dimensions are in use (a proxy for operational complexity)."""
        return sum(d > 1 for d in (self.dp, self.tp, self.pp, self.ep, self.cp)) + (self.zero > 0) + bool(self.sp and self.tp > 1)

    def label(self) -> str:
        """The plan as ``DP8 · TP1 · PP1 · mb1`` in ASCII (recomputation as its mode code); :func:`parse_plan`
        reads it back. :func:`parallelsel.render.reasons.plan_label` writes the same parts with the
        recomputation in words."""
        return " · ".join(text for _, text in label_parts(self.as_dict()))


def label_parts(p: Mapping) -> list[tuple[str, str]]:
    """A plan's fields (``Plan.as_dict()`` or a JSON plan) as label parts ``(field, text)``, in label order.

    The one place that decides what a label shows; :meth:`Plan.label` joins the texts and
    :func:`parallelsel.render.reasons.plan_label` words the ``recompute`` part.
    """
    parts = [("dp", f"DP{p['dp']}"), ("tp", f"TP{p['tp']}"), ("pp", f"PP{p['pp']}")]
    if p.get("cp", 1) > 1:
        parts.append(("cp", f"CP{p['cp']}"))
    if p.get("zero"):
        shard = p.get("shard")
        parts.append(("zero", f"ZeRO-{p['zero']}" + (f"/shard{shard}" if shard and shard != p["dp"] else "")))
        if not p.get("reshard_after_forward", True):
            parts.append(("reshard_after_forward", "no-reshard"))
        if p.get("no_sync"):
            parts.append(("no_sync", "no_sync"))
    if p.get("sp") and p["tp"] > 1:
        parts.append(("sp", "SP"))
    if p.get("ep", 1) > 1:
        parts.append(("ep", f"EP{p['ep']}"))
    if p.get("etp") is not None:
        parts.append(("etp", f"ETP{p['etp']}"))
    if p.get("tp_overlap") and p["tp"] > 1:
        parts.append(("tp_overlap", "tp-overlap"))
    if p.get("ep_overlap"):
        parts.append(("ep_overlap", "ep-overlap"))
    if p.get("dispatcher") not in (None, "alltoall"):
        parts.append(("dispatcher", p["dispatcher"]))
    if p.get("p2p_overlap") is not None and p["pp"] > 1:
        parts.append(("p2p_overlap", "p2p-overlap" if p["p2p_overlap"] else "no-p2p-overlap"))
    parts.append(("micro_batch", f"mb{p['micro_batch']}"))
    if p.get("recompute", "none") != "none":
        parts.append(("recompute", p["recompute"]))
        if p.get("recompute_layers") is not None:
            parts.append(("recompute_layers", f"rl{p['recompute_layers']}"))
    if p.get("stage_layers"):
        parts.append(("stage_layers", "L" + "/".join(str(n) for n in _runs(p["stage_layers"]))))
    if p["pp"] > 1:
        chunks = p.get("chunks", 1)
        parts.append(("schedule", p["schedule"] + (f"×{chunks}" if chunks > 1 else "")))
    return parts


def _runs(split) -> list[str]:
    """A split as runs, ``(7, 8, 8, 8, 7)`` -> ``['7', '8x3', '7']`` (the label's compact form)."""
    out: list[str] = []
    i = 0
    while i < len(split):
        j = i
        while j < len(split) and split[j] == split[i]:
            j += 1
        out.append(f"{split[i]}x{j - i}" if j - i > 1 else str(split[i]))
        i = j
    return out


def stage_layer_counts(layers: int, pp: int, stage_layers=None) -> tuple[int, ...]:
    """Transformer layers on each of ``pp`` pipeline ranks: ``stage_layers`` when given, else ``layers / pp``
    each (rounded up when it does not divide: only a plan the layer rule refuses has that).

    Examples:
        >>> stage_layer_counts(32, 4)
        (8, 8, 8, 8)
    """
    if stage_layers is not None:
        return tuple(stage_layers)
    return (-(-layers // pp),) * pp


def megatron_split(layers: int, pp: int, first: int | None = None, last: int | None = None,
                   account_for_embedding: bool = False, account_for_loss: bool = False) -> tuple[int, ...]:
    """The per-stage layers Megatron-Core builds for ``layers`` transformer layers on ``pp`` stages.

    Megatron-Core (``megatron/core/transformer/transformer_block.py`` ``get_num_layers_to_build`` and
    ``transformer_config.py``'s checks): ``--decoder-first-pipeline-num-layers`` / ``--decoder-last-pipeline-num-layers``
    (``first``, ``last``) fix the first and last stage, and the remaining layers split evenly over the other stages;
    ``--account-for-embedding-in-pipeline-split`` / ``--account-for-loss-in-pipeline-split`` instead count the
    embedding (loss) as one more layer, split ``layers + 1 (+ 1)`` evenly, and build one transformer layer fewer on
    the first (last) stage. The two kinds cannot be combined, and every split must be exact.

    Examples:
        >>> megatron_split(126, 16, first=7, last=7)[:3], megatron_split(126, 16, first=7, last=7)[-1]
        ((7, 8, 8), 7)
        >>> megatron_split(30, 4, account_for_embedding=True, account_for_loss=True)
        (7, 8, 8, 7)
    """
    layers, pp = positive_int("layers", layers), positive_int("pp", pp)
    flag("account_for_embedding", account_for_embedding)
    flag("account_for_loss", account_for_loss)
    if (first is not None or last is not None) and (account_for_embedding or account_for_loss):
        raise ParallelselError("first/last with account_for_embedding/loss: Megatron-Core takes one or the other")
    if account_for_embedding or account_for_loss:
        units = layers + account_for_embedding + account_for_loss
        if units % pp or units // pp < 2:
            raise ParallelselError(f"layers={layers}: layers + embedding/loss = {units} must split evenly over pp={pp} "
                                   f"stages of at least 2")
        split = [units // pp] * pp
        split[0] -= account_for_embedding
        split[-1] -= account_for_loss
        return tuple(split)
    ends = [positive_int(n, v) for n, v in (("first", first), ("last", last)) if v is not None]
    middle = pp - len(ends)
    rest = layers - sum(ends)
    # transformer_config.py L2340-2345 @d98e8a6: middle stages and middle layers both, or neither (pp = 2).
    if middle < 0 or (middle == 0) != (rest == 0) or (middle and (rest < middle or rest % middle)):
        raise ParallelselError(f"first={first}, last={last}: the other {layers - sum(ends)} layers must split evenly "
                               f"over the other {max(middle, 0)} stages (layers={layers}, pp={pp})")
    split = [rest // middle if middle else 0] * pp
    if first is not None:
        split[0] = first
    if last is not None:
        split[-1] = last
    return tuple(split)


def torchtitan_split(layers: int, pp: int, first_less: int = 1, last_less: int = 1) -> tuple[int, ...]:
    """The per-stage layers torchtitan builds: the embedding and the output layer count as layers, and the
    first (last) stage takes ``first_less`` (``last_less``) fewer transformer layers
    (``pipeline_parallel_first_stage_less_layers`` / ``pipeline_parallel_last_stage_less_layers``, default 1
    each; torchtitan's ``generate_llm_fqn_per_model_part``). The ``layers + first_less + last_less`` units
    are spread as evenly as they go, the extra ones on the earliest stages.

    Examples:
        >>> torchtitan_split(126, 16)[:2], torchtitan_split(126, 16)[-2:]
        ((7, 8), (8, 7))
    """
    layers, pp = positive_int("layers", layers), positive_int("pp", pp)
    a = positive_int("first_less", first_less, minimum=0)
    b = positive_int("last_less", last_less, minimum=0)
    units = layers + a + b
    q, r = divmod(units, pp)
    split = [q + (i < r) for i in range(pp)]
    split[0] -= a
    split[-1] -= b
    if min(split) < 1:
        raise ParallelselError(f"pp={pp}: {layers} layers with first/last less {a}/{b} leave a stage empty")
    return tuple(split)


V_SCHEDULES = ("zbv", "dualpipev")
"""Schedules that place two virtual stages a rank in a V (rank r holds stages r and 2 pp - 1 - r; PyTorch's
``generate_stage_to_rank_mapping(style="v")``); the other interleaved schedules loop (r, r + pp, ...)."""


def stack_split(stack: str, layers: int, pp: int, chunks: int = 1, schedule: str = "1f1b") -> tuple[int, ...] | None:
    """The per-rank layers ``stack`` builds when a job of ``layers`` layers on ``pp`` ranks x ``chunks`` virtual
    stages states no split, or None where that is the even split or the stack builds none (Megatron-Core asserts
    that the layers divide: :data:`parallelsel.core.stacks.PP_SPLITS`).

    * torchtitan (``"ends-as-layers"``): :func:`torchtitan_split` over the ``pp x chunks`` virtual stages with
      its default ``pipeline_parallel_first/last_stage_less_layers`` of 1, each rank holding the virtual stages
      its schedule gives it (:data:`V_SCHEDULES`, else looped). Uneven even where the layers divide.
    * DeepSpeed (``"earliest-first"``): ``PipelineModule`` with ``partition_method='type:transformer'`` (the
      default of Megatron-DeepSpeed's GPT pipeline model) balances the transformer layers by the linear partition
      that minimises the spread of layers a stage; its tie rule puts the ``layers mod pp`` spare layers on the
      earliest stages. tests/test_stack_split.py checks this closed form against that dynamic programme. (A job
      may name another method: BLOOM's ``type:transformer|embedding`` counts the embeddings too.)

    :func:`with_stack_split` applies it only where the layers do not divide: a plan without a split otherwise
    means the even one, which every stack can be told to build (torchtitan with less-layers 0, as the export
    writes it).

    Examples:
        >>> stack_split("deepspeed", 70, 12)      # 70 layers on 12 stages, as Megatron-DeepSpeed's default builds them
        (6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5, 5)
        >>> stack_split("torchtitan", 126, 8)     # Llama 3.1 405B on 8 stages
        (15, 16, 16, 16, 16, 16, 16, 15)
        >>> stack_split("megatron-core", 70, 12) is None
        True
    """
    stages = pp * chunks
    if pp == 1 or stages > layers:
        return None
    rule = STACKS[stack].pp_split
    if rule == "divisible" or (rule == "earliest-first" and layers % stages == 0):
        return None
    if rule == "earliest-first":
        q, r = divmod(layers, stages)
        return rank_layers([q + (i < r) for i in range(stages)], pp, schedule)
    try:
        return rank_layers(torchtitan_split(layers, stages), pp, schedule)
    except ParallelselError:
        return None  # a virtual stage would hold no layer: torchtitan refuses too


def rank_layers(virtual, pp: int, schedule: str = "1f1b") -> tuple[int, ...]:
    """Layers on each of ``pp`` ranks from the layers of each virtual stage in pipeline order: a rank holds the
    virtual stages its schedule gives it (:data:`V_SCHEDULES`, else looped: r, r + pp, ...).

    Examples:
        >>> rank_layers([4, 5, 4, 4, 4, 4, 4, 3], 4), rank_layers([4, 5, 4, 4, 4, 4, 4, 3], 4, "zbv")
        ((8, 9, 8, 7), (7, 9, 8, 8))
    """
    virtual = tuple(virtual)
    n = len(virtual)
    if n == pp:
        return virtual
    owner = ([min(i % (2 * pp), 2 * pp - 1 - i % (2 * pp)) for i in range(n)] if schedule in V_SCHEDULES
             else [i % pp for i in range(n)])
    return tuple(sum(k for k, o in zip(virtual, owner) if o == r) for r in range(pp))


def with_stack_split(workload: "Workload", plan: "Plan") -> "Plan":
    """``plan`` with the split its workload's stack builds (:func:`stack_split`) written out where it states none
    and its layers do not divide over the pipeline; else ``plan`` itself. A plan with no split means the even
    split; where there is none, a job that names no split runs its stack's own, and so is timed on that."""
    if plan.stage_layers is not None or plan.pp == 1 or workload.model.layers % (plan.pp * plan.chunks) == 0:
        return plan
    split = stack_split(workload.stack, workload.model.layers, plan.pp, plan.chunks, plan.schedule)
    return plan if split is None else replace(plan, stage_layers=split)


@lru_cache(maxsize=4096)   # (the search asks it again for each group of a PP degree)
def balanced_split(layers: int, pp: int, head: float = 0.0, embedding: float = 0.0, chunks: int = 1) -> tuple[int, ...]:
    """The split of ``layers`` over ``pp`` ranks whose slowest rank is fastest, when the first rank also runs
    the embedding (``embedding`` layers' worth of time) and the last the output layer and loss (``head``).

    The slowest stage sets the pipeline's pace (Narayanan et al. 2021 §3.2; Dubey et al. 2024 §3.3.2 give
    the first and last stage of Llama 3 405B one layer fewer each for this reason). Among the splits with
    the least maximum, the one that takes the spare layers off the first stage first (it holds the most
    micro-batches in flight under 1F1B), then off the last. Every rank keeps at least ``chunks`` layers.

    Examples:
        >>> balanced_split(126, 16, head=0.6)
        (7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7)
        >>> balanced_split(32, 4)
        (8, 8, 8, 8)
    """
    import math

    layers, pp = positive_int("layers", layers), positive_int("pp", pp)
    if pp == 1:
        return (layers,)
    extra = (embedding, 0.0, head)
    def caps(t):
        return [max(0, math.floor(t - (extra[0] if i == 0 else extra[2] if i == pp - 1 else 0.0) + 1e-9))
                for i in range(pp)]
    lo = max(chunks, math.ceil(layers / pp) - 1)
    t = float(lo)
    cands = sorted({n + e for n in range(lo, layers + 1) for e in (0.0, embedding, head)})
    for t in cands:
        c = caps(t)
        if min(c) >= chunks and sum(c) >= layers:
            break
    split = caps(t)
    spare = sum(split) - layers
    order = [0, pp - 1] + list(range(1, pp - 1))
    while spare > 0:
        for i in order:
            if spare and split[i] > chunks:
                split[i] -= 1
                spare -= 1
    return tuple(split)


def balanced_stage_layers(model: Transformer, pp: int) -> tuple[int, ...] | None:
    """The split a PP degree gets from the search and the selection matrix: :func:`balanced_split` with the
    output layer weighed by its forward FLOPs against one layer's (:meth:`Transformer.forward_flops_per_token`),
    or None when that is the even split (the layers divide and moving a layer off the last stage does not pay)."""
    if pp == 1:
        return None
    fw = model.forward_flops_per_token()
    head = fw["logits"] / ((fw["layers"] + fw["attention"]) / model.layers)
    split = balanced_split(model.layers, pp, head=head)
    if model.layers % pp == 0 and max(split) == min(split):
        return None
    return split


def fsdp_plan(strategy: str, dp: int, shard: int | None = None, **kw) -> Plan:
    """A Plan for a PyTorch FSDP ShardingStrategy (see the module docstring for the mapping)."""
    choice("strategy", strategy, tuple(FSDP_STRATEGIES))
    if strategy == "HYBRID_SHARD" and shard is None:
        raise ParallelselError("shard=None: HYBRID_SHARD needs the shard group size (usually GPUs per node)")
    zero, reshard = FSDP_STRATEGIES[strategy]
    kw.setdefault("reshard_after_forward", reshard)
    return Plan(dp=dp, zero=zero, shard=shard if strategy == "HYBRID_SHARD" else None, **kw)


def divisors(n: int) -> list[int]:
    """The divisors of ``n`` in increasing order (the degrees a dimension of ``n`` GPUs can take).

    Examples:
        >>> divisors(12)
        [1, 2, 3, 4, 6, 12]
    """
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


# -- the hard constraints, each written once ------------------------------------------------------
# Every rule below returns the reasons it finds (a list of :class:`parallelsel.core.reasons.Reason`, empty
# when the rule holds). :func:`constraint_violations` applies them all to one plan; the search applies
# each at the level of its enumeration where it first becomes decidable (TP degree, PP degree, ...),
# so a rule is never restated. Divisibility rules are Megatron-LM's (Shoeybi et al. 2019 §3;
# Narayanan et al. 2021 §2).


def cluster_violations(gpus: int, cluster: Cluster | None) -> list[Reason]:
    """A plan of ``gpus`` GPUs must fit on ``cluster``."""
    if cluster is not None and gpus > cluster.gpus:
        return [Reason("cluster_too_small", {"gpus": gpus, "cluster_gpus": cluster.gpus})]
    return []


def tp_violations(model: Transformer, tp: int) -> list[Reason]:
    """Heads, KV groups (GQA) and the FFN width must split evenly over the ``tp`` ranks."""
    out = []
    if tp > model.heads:
        out.append(Reason("tp_exceeds_heads", {"tp": tp, "heads": model.heads}))
    elif model.heads % tp:
        out.append(Reason("heads_not_divisible", {"heads": model.heads, "tp": tp}))
    elif model.kv_heads % tp:
        # Grouped-query attention: each TP rank must hold whole K/V groups (Megatron-LM asserts
        # num_query_groups % tensor_model_parallel_size == 0; Ainslie et al. 2023 for GQA).
        out.append(Reason("kv_heads_not_divisible", {"kv_heads": model.kv_heads, "tp": tp}))
    if model.ffn_hidden % tp:
        out.append(Reason("ffn_not_divisible", {"ffn_hidden": model.ffn_hidden, "tp": tp}))
    return out


def pp_violations(model: Transformer, pp: int, chunks: int = 1, stage_layers=None) -> list[Reason]:
    """The layers must split evenly into ``pp`` x ``chunks`` (virtual) stages, or, with an explicit split
    (:attr:`Plan.stage_layers`), its stages must hold exactly the model's layers."""
    stages = pp * chunks
    if stages > model.layers:
        return [Reason("stages_exceed_layers", {"stages": stages, "layers": model.layers})]
    if stage_layers is not None:
        if sum(stage_layers) != model.layers:
            return [Reason("stage_layers_sum", {"stage_layers": list(stage_layers), "layers": model.layers})]
        return []
    if model.layers % stages:
        return [Reason("layers_not_divisible", {"layers": model.layers, "stages": stages})]
    return []


def batch_violations(global_batch: int, dp: int, micro_batch: int, schedule: str = "1f1b",
                     pp: int = 1) -> list[Reason]:
    """The global batch must split into dp x micro_batch x micro-batches; interleaving needs the
    micro-batches divisible by PP (Narayanan et al. 2021 §2.2.2)."""
    return list(_batch_violations(global_batch, dp, micro_batch, schedule, pp))


@lru_cache(maxsize=65536)
def _batch_violations(global_batch: int, dp: int, micro_batch: int, schedule: str, pp: int) -> tuple[Reason, ...]:
    # Cached: the search asks the same few per group and schedule; Reasons are immutable.
    per_step = dp * micro_batch
    if global_batch < per_step:
        return (Reason("batch_below_dp", {"global_batch": global_batch, "per_step": per_step}),)
    if global_batch % per_step:
        return (Reason("batch_not_divisible", {"global_batch": global_batch, "per_step": per_step}),)
    microbatches = global_batch // per_step
    if schedule == "interleaved" and pp > 1 and microbatches % pp:
        return (Reason("interleave_microbatches", {"microbatches": microbatches, "pp": pp}),)
    return ()


def cp_violations(seq_len: int, cp: int) -> list[Reason]:
    """Context parallelism needs the sequence to be a multiple of 2 x CP: Megatron-LM validate_args,
    "seq-length should be a multiple of 2 * context-parallel-size" (each rank takes two chunks, one
    from each end, to balance causal attention)."""
    if cp > 1 and seq_len % (2 * cp):
        return [Reason("seq_not_divisible_cp", {"seq_len": seq_len, "cp": cp})]
    return []


def ep_violations(model: Transformer, ep: int, etp: int | None = None) -> list[Reason]:
    """Expert parallelism needs an MoE model whose experts split evenly over the ``ep`` ranks; an expert TP
    (``etp``) needs an MoE model too."""
    if etp is not None and not model.is_moe:
        return [Reason("etp_needs_moe", {"etp": etp, "model": model.name})]
    if etp is not None and model.ffn_hidden % etp:   # Megatron splits each expert's FFN etp ways (divide())
        return [Reason("ffn_not_divisible", {"ffn_hidden": model.ffn_hidden, "tp": etp})]
    if ep == 1:
        return []
    if not model.is_moe:
        return [Reason("ep_needs_moe", {"ep": ep, "model": model.name})]
    if model.experts % ep:
        return [Reason("experts_not_divisible", {"experts": model.experts, "ep": ep})]
    return []


def recompute_violations(workload: Workload, plan: Plan) -> list[Reason]:
    """The recomputation policy must be one the workload's stack offers (:data:`parallelsel.core.stacks.STACKS`
    ``recompute``: Megatron-Core has no op-level policy, torchtitan no core-attention one, DeepSpeed only
    full layers), and ``recompute_layers`` at most the layers of a model chunk (Megatron-LM validates
    ``recompute_num_layers`` in 1..num_layers / PP, ``transformer_config.py`` L1919-1925 @d98e8a6)."""
    out = []
    offered = STACKS[workload.stack].recompute
    if plan.recompute not in offered:
        out.append(Reason("recompute_not_in_stack", {"recompute": plan.recompute, "stack": workload.stack,
                                                     "offered": ", ".join(offered)}))
    if plan.recompute_layers is not None:
        per_chunk = min(with_stack_split(workload, plan).layers_per_stage(workload.model.layers)) // plan.chunks
        if plan.recompute_layers > per_chunk:
            out.append(Reason("recompute_layers_exceed_chunk", {"recompute_layers": plan.recompute_layers,
                                                                "layers": per_chunk}))
    return out


def tp_overlap_on(workload: Workload, plan: Plan) -> bool:
    """Whether ``plan``'s TP collectives overlap GEMMs: ``plan.tp_overlap``, or the stack's default when None."""
    on = STACKS[workload.stack].overlap_tp_comm if plan.tp_overlap is None else plan.tp_overlap
    return bool(on) and plan.tp > 1


def p2p_overlappable(plan: Plan) -> bool:
    """Whether any stack can overlap ``plan``'s pipeline sends with compute: a pipeline with virtual stages
    under a schedule of :data:`parallelsel.core.stacks.P2P_OVERLAP_SCHEDULES` (Megatron-LM keeps
    ``overlap_p2p_comm`` only with virtual stages, ``megatron/training/arguments.py`` L1000-1017 @d98e8a6)."""
    return plan.pp > 1 and plan.chunks > 1 and plan.schedule in P2P_OVERLAP_SCHEDULES


def p2p_overlap_on(workload: Workload, plan: Plan) -> bool:
    """Whether ``plan``'s pipeline sends overlap compute: ``plan.p2p_overlap``, or the stack's default for the
    plan's schedule when None."""
    if plan.p2p_overlap is None:
        return p2p_overlappable(plan) and plan.schedule in STACKS[workload.stack].overlap_pp_p2p
    return plan.p2p_overlap


def p2p_overlap_violations(workload: Workload, plan: Plan) -> list[Reason]:
    """Overlapped pipeline sends where the stack offers them: Megatron-Core only with the interleaved schedule
    (``megatron/training/arguments.py`` L1010-1012 @d98e8a6 turns it off for the others)."""
    st = STACKS[workload.stack]
    if plan.p2p_overlap and not (p2p_overlappable(plan) and plan.schedule in st.overlap_pp_p2p):
        return [Reason("p2p_overlap_not_offered", {"stack": st.key, "schedule": plan.schedule})]
    return []


def ep_overlap_violations(workload: Workload, plan: Plan) -> list[Reason]:
    """EP all-to-all overlap as Megatron-Core offers it (``transformer_config.py`` L3002-3029 @d98e8a6): expert
    parallelism of an MoE model, no full recomputation (no recompute method or layer count), and with a pipeline
    the interleaved schedule's virtual stages; no other stack has it (:attr:`parallelsel.core.stacks.Stack.ep_overlap`)."""
    if not plan.ep_overlap:
        return []
    st = STACKS[workload.stack]
    if not st.ep_overlap:
        return [Reason("ep_overlap_not_offered", {"stack": st.key})]
    out = []
    if plan.ep <= 1 or not workload.model.is_moe:
        out.append(Reason("ep_overlap_needs_ep", {"ep": plan.ep}))
    if plan.recompute == "full":
        out.append(Reason("ep_overlap_recompute", {"recompute": plan.recompute}))
    if plan.pp > 1 and (plan.schedule != "interleaved" or plan.chunks < 2):  # (a virtual pipeline size is set)
        out.append(Reason("ep_overlap_needs_interleaved", {"pp": plan.pp, "schedule": plan.schedule}))
    if workload.recipe.activation > 2:   # "only supported with bf16 or fp16 model" (L3034-3036)
        out.append(Reason("ep_overlap_needs_16bit", {"recipe": workload.recipe.name}))
    return out


def dispatcher_violations(workload: Workload, plan: Plan) -> list[Reason]:
    """A flex dispatcher (``Plan.dispatcher`` DeepEP or HybridEP) where the stack offers it -- Megatron-Core only
    (:attr:`parallelsel.core.stacks.Stack.dispatchers`) -- and has tokens to move: an MoE model whose experts span
    more than one rank ("DeepEP dispatcher requires TPxEP > 1", ``token_dispatcher.py`` L1836 @d98e8a6, over the
    experts' TP x EP group)."""
    if plan.dispatcher is None:
        return []
    st = STACKS[workload.stack]
    if plan.dispatcher not in st.dispatchers:
        return [Reason("dispatcher_not_offered", {"stack": st.key, "dispatcher": plan.dispatcher})]
    if not workload.model.is_moe or plan.expert_split <= 1:
        return [Reason("dispatcher_needs_ep", {"dispatcher": plan.dispatcher, "ep": plan.ep})]
    return []


def tp_overlap_violations(workload: Workload, plan: Plan) -> list[Reason]:
    """TP overlap as the workload's stack offers it: Megatron-Core's ``--tp-comm-overlap`` asserts
    sequence parallelism (``megatron/training/arguments.py`` L1441-1442); torchtitan's async TP
    raises without ``torch.compile`` of the model (``torchtitan/config/configs.py`` L307-313);
    DeepSpeed has no TP/GEMM overlap (:data:`parallelsel.core.stacks.STACKS`)."""
    if not tp_overlap_on(workload, plan):
        return []
    st = STACKS[workload.stack]
    if not st.tp_overlap:
        return [Reason("tp_overlap_not_offered", {"stack": st.key})]
    out = []
    if "sp" in st.tp_overlap_needs and not plan.sp:
        out.append(Reason("tp_overlap_needs_sp", {"stack": st.key, "tp": plan.tp}))
    if "compile" in st.tp_overlap_needs and not workload.compile:
        out.append(Reason("tp_overlap_needs_compile", {"stack": st.key}))
    return out


def constraint_violations(workload: Workload, plan: Plan, cluster: Cluster | None = None) -> list[Reason]:
    """Every hard constraint (other than memory) that ``plan`` violates, as :class:`~parallelsel.core.reasons.Reason`
    objects (``str(reason)`` is the sentence; :mod:`parallelsel.render.reasons` writes it).

    The rules (each written once, above): the cluster's GPU count, heads, KV groups (GQA) and FFN
    width over TP, layers over PP x virtual chunks, the global batch into dp x micro_batch x
    micro-batches (and micro-batches over PP when interleaved), the sequence over 2 x CP, experts over EP,
    and a recomputation policy, TP overlap and pipeline-send overlap as the stack offers them.

    Examples:
        >>> import parallelsel as ps
        >>> bad = constraint_violations(ps.Workload(ps.MODELS["gpt3-175b"], global_batch=8), ps.Plan(dp=16, tp=7))
        >>> " ".join(r.code for r in bad)
        'heads_not_divisible ffn_not_divisible batch_below_dp'
    """
    m = workload.model
    plan = with_stack_split(workload, plan)
    return (cluster_violations(plan.gpus, cluster) + tp_violations(m, plan.tp)
            + pp_violations(m, plan.pp, plan.chunks, plan.stage_layers)
            + batch_violations(workload.global_batch, plan.dp, plan.micro_batch, plan.schedule, plan.pp)
            + cp_violations(workload.seq_len, plan.cp) + ep_violations(m, plan.ep, plan.etp)
            + recompute_violations(workload, plan) + tp_overlap_violations(workload, plan)
            + p2p_overlap_violations(workload, plan) + ep_overlap_violations(workload, plan)
            + dispatcher_violations(workload, plan))


_PLAN_PARTS = (
    (r"(dp|tp|pp|ep|cp|etp)(\d+)", lambda g: {g[0]: int(g[1])}),
    (r"zero-?(\d)(?:/shard(\d+))?", lambda g: {"zero": int(g[0]), **({"shard": int(g[1])} if g[1] else {})}),
    (r"fsdp", lambda g: {"zero": 3}),
    (r"sp", lambda g: {"sp": True}),
    (r"no-reshard|shard_grad_op", lambda g: {"reshard_after_forward": False}),
    (r"no[_-]sync", lambda g: {"no_sync": True}),
    (r"tp[_-]overlap", lambda g: {"tp_overlap": True}),
    (r"ep[_-]overlap", lambda g: {"ep_overlap": True}),
    ("(" + "|".join(DISPATCHERS) + ")", lambda g: {"dispatcher": g[0]}),
    (r"no[_-]p2p[_-]overlap", lambda g: {"p2p_overlap": False}),
    (r"p2p[_-]overlap", lambda g: {"p2p_overlap": True}),
    (r"mb(\d+)", lambda g: {"micro_batch": int(g[0])}),
    (r"rl(\d+)", lambda g: {"recompute_layers": int(g[0])}),
    (r"l(\d+(?:x\d+)?(?:/\d+(?:x\d+)?)*)", lambda g: {"stage_layers": _read_runs(g[0])}),
    (r"interleaved(?:[×x*]?(\d+))?", lambda g: {"schedule": "interleaved", **({"chunks": int(g[0])} if g[0] else {})}),
)
"""The parts of a plan label :func:`parse_plan` reads: a pattern (lower case, whole part) -> the Plan fields it sets."""


def parse_plan(text: str) -> Plan:
    """The :class:`Plan` a label names: the inverse of :meth:`Plan.label`, also in plain ASCII.

    Parts are separated by ``·``, spaces or commas, case-insensitive: ``DP16``, ``TP4``, ``PP2``,
    ``CP2``, ``EP8``, ``ETP1``, ``tp-overlap``, ``ep-overlap``, ``deepep`` / ``hybridep``, ``no-p2p-overlap`` (or ``p2p-overlap``), ``ZeRO-3`` (or ``ZeRO3``, ``FSDP`` = ZeRO-3), ``ZeRO-3/shard8`` (HSDP), ``no-reshard``
    (or ``SHARD_GRAD_OP``: ``reshard_after_forward=False``), ``no_sync``, ``SP``, ``mb2``,
    a recomputation (its mode code, e.g. ``selective``/``op``/``full``, and ``rl<k>`` for ``recompute_layers``;
    :func:`parallelsel.render.reasons.read_plan` also reads the words a worded label prints) and a schedule (``1f1b``,
    ``gpipe``, ``zb-h1``, ``interleaved×4`` or ``interleaved4``). Unnamed fields keep Plan's defaults.

    Examples:
        >>> parse_plan("DP16·TP4·PP1·ZeRO-3").label()
        'DP16 · TP4 · PP1 · ZeRO-3 · mb1'
        >>> parse_plan(Plan(dp=2, pp=4, schedule="interleaved", chunks=2, micro_batch=2).label()).chunks
        2
    """
    if not isinstance(text, str) or not text.strip():
        raise ParallelselError(f"plan={text!r}: must be a plan label such as 'DP16·TP4·PP1·ZeRO-3'")
    kw: dict = {}
    source: dict = {}  # field -> the part that set it, to name both sides of a contradiction
    for raw in re.split(r"[·\s,]+", text.strip()):
        if not raw:
            continue
        for name, value in _plan_part(text, raw).items():
            if name in kw and kw[name] != value:
                raise ParallelselError(f"plan={text!r}: {source[name]!r} and {raw!r} both set {name} "
                                       f"({kw[name]!r} vs {value!r}); a label names each field once")
            kw[name], source[name] = value, raw
    return Plan(**kw)


def _read_runs(text: str) -> tuple[int, ...]:
    """``7/8x14/7`` -> (7, 8, ..., 8, 7): the label's split read back."""
    out: list[int] = []
    for run in text.split("/"):
        n, _, k = run.partition("x")
        out += [int(n)] * (int(k) if k else 1)
    return tuple(out)


def _plan_part(text: str, raw: str) -> dict:
    """The Plan fields one part ``raw`` of the label ``text`` sets; raises if it names none."""
    t = raw.lower()
    for pattern, fields in _PLAN_PARTS:
        m = re.fullmatch(pattern, t)
        if m:
            return fields(m.groups())
    if t in RECOMPUTE:
        return {"recompute": t}
    if t in SCHEDULES:
        return {"schedule": t}
    raise ParallelselError(f"plan={text!r}: cannot read {raw!r}; parts are DP<n> TP<n> PP<n> EP<n> ETP<n> ZeRO-<0..3>"
                           f"[/shard<n>] no-reshard no_sync SP mb<n> L<layers/...> selective|op|full rl<k> and a schedule ({', '.join(SCHEDULES)}; "
                           f"interleaved×<v>)")
