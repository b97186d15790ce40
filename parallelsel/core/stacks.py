"""The training stacks a job runs on (:data:`STACKS`), and which of them run PP together with ZeRO/FSDP.

:data:`STACKS` holds one frozen :class:`Stack` record per framework -- ``"megatron-core"``,
``"torchtitan"``, ``"deepspeed"`` -- with the version it describes and the source of every field: the
dtype each collective runs in, the bytes of model state per parameter, what overlaps by default, the
pipeline schedules and recomputation modes it offers, how it runs FSDP with PP and which operators
run fused in each execution mode. :class:`parallelsel.core.plan.Workload` names one
(``Workload(stack=...)``, default :data:`DEFAULT_STACK`); traffic, memory and time read it from there.

PP with ZeRO/FSDP. Three stacks, three answers (each is data: a :class:`parallelsel.core.reasons.Reason`):

* DeepSpeed's ``PipelineEngine`` accepts ZeRO-1 and refuses ZeRO-2 and ZeRO-3: its constructor
  asserts ``zero_optimization_stage() < 2`` ("ZeRO-2 and ZeRO-3 are incompatible with pipeline
  parallelism", ``deepspeed/runtime/pipe/engine.py``).
* Megatron-LM's distributed optimizer (``--use-distributed-optimizer``) works with PP and shards
  only the optimizer state (fp32 master weights and Adam moments) over the DP x CP group: ZeRO-1-like;
  gradients are reduce-scattered and updated weights all-gathered once per step (Megatron-LM docs,
  "Distributed Optimizer").
* torchtitan composes FSDP2 with PP: ``apply_fsdp`` sets ``reshard_after_forward = not pp_enabled``
  (``torchtitan/models/llama3/infra/parallelize.py``), and PyTorch's pipelining stage keeps
  gradients unsynchronised and parameters unsharded until the last micro-batch's backward
  (``torch.distributed.pipelining.stage``, ``backward_maybe_with_nosync``). So a stage's weights
  are all-gathered once per step and its gradients reduce-scattered once; at the peak the stage
  holds its unsharded weights and gradients, with the optimizer state sharded: the memory of ZeRO-1.

No stack runs PP with ZeRO-2 (DeepSpeed refuses it, Megatron-LM and torchtitan do not offer it).
:func:`effective_zero` is the ZeRO stage whose memory and traffic a plan's stack has.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType

from ._check import Catalogue, ParallelselError, choice
from .reasons import Reason

__all__ = ["COMPILE_SCOPES", "DEFAULT_STACK", "DTYPE_BYTES", "EXEC_MODES", "FUSIBLE_OPS", "P2P_OVERLAP_SCHEDULES",
           "PP_SPLITS", "STACKS", "TP_OVERLAP_PAIRS", "TP_OVERLAP_STAGING", "Stack", "effective_zero", "pp_zero_reason",
           "pp_zero_stack", "recompute_layer_counts", "sp_layout_copies", "stack_fused", "stack_of", "state_shards",
           "wire_bytes", "zero_ranks"]

DTYPE_BYTES = MappingProxyType({"fp32": 4, "bf16": 2})
"""Bytes per element of the dtypes a collective or a state buffer is kept in (IEEE 754 binary32; bfloat16)."""

COMPILE_SCOPES = (False, True, "model")
"""What ``Workload(compile=...)`` compiles: nothing; everything the stack compiles (torchtitan 0.2.2's
default ``[compile] components = ["model", "loss"]``, ``torchtitan/config/configs.py``); or ``"model"``,
the transformer blocks only with the loss run eagerly (``components = ["model"]``, and every torchtitan
before the loss could be compiled: its train.py of late 2024 leaves ``torch.compile(loss_fn)`` commented
out, "compiling loss function causes CUDA errors")."""

EXEC_MODES = ("eager", "compile", "te")
"""How a stack runs the model's operators: PyTorch eager kernels, ``torch.compile`` (Inductor fuses
pointwise ops and reductions into generated kernels), or Transformer Engine modules (fused
norm+GEMM, fused attention, fused activations)."""

P2P_OVERLAP_SCHEDULES = ("interleaved",)
"""The pipeline schedules whose stage-to-stage sends a stack can overlap with compute: the interleaved one,
where each send has another chunk's work to hide behind (Megatron-LM turns ``overlap_p2p_comm`` off for the
others, ``megatron/training/arguments.py`` L1010-1012 @d98e8a6)."""

PP_SPLITS = ("divisible", "ends-as-layers", "earliest-first")
"""How a stack splits the transformer layers over the pipeline when the job states no split
(:attr:`Stack.pp_split`): ``"divisible"`` -- evenly, and the layers must divide (Megatron-LM asserts it; other
splits only with ``--decoder-first/last-pipeline-num-layers`` or ``--pipeline-model-parallel-layout``);
``"ends-as-layers"`` -- the embedding and the output layer count as one layer each and the units are spread as
evenly as they go, the spare ones on the earliest stages (torchtitan); ``"earliest-first"`` -- the layers
alone spread as evenly as they go, the spare ones on the earliest stages (DeepSpeed's ``PipelineModule``)."""

TP_OVERLAP_PAIRS = ("forward", "backward-ag", "backward-rs")
"""Collective-GEMM pairs a TP overlap can fuse: the forward all-gathers and reduce-scatters (and a recomputed
forward's); the backward all-gather of an output gradient; the backward reduce-scatter of an input gradient."""

TP_OVERLAP_STAGING = ("symmetric-memory",)
"""TP overlap implementations with staging copies (PyTorch's micro-pipelined collective matmuls)."""

FUSIBLE_OPS = ("attention", "cudnn_attention", "rmsnorm", "swiglu", "rope", "cross_entropy", "fp8_cast", "cp_merge",
               "moe_permute")
"""The operators of a Llama-style layer that a stack may run as one fused kernel (``attention``: a fused
attention kernel, FlashAttention-2 class; ``cudnn_attention``: that kernel is cuDNN's, where the device has
a rate for it, :attr:`parallelsel.core.hardware.Device.cudnn_attention_efficiency`; ``fp8_cast``: the scaling
and cast of a GEMM input to FP8 fused into the op that produces it; ``cp_merge``: context parallelism's
rescale-and-add of each ring step's partial attention output into the running one; ``moe_permute``: an MoE
layer's token permutation and unpermutation as fused kernels, off in every stack's defaults: Megatron-Core's
``moe_permute_fusion`` defaults to False, torchtitan and DeepSpeed index in eager ops); for the memory-bound ones
:data:`parallelsel.core.kernels.FUSED_BYTES` gives the bytes each moves fused and unfused."""


@dataclass(frozen=True)
class Stack:
    """One training framework's defaults, as data. Every field is a fact of the named ``version``;
    ``source`` says where each comes from (repository, file and line, or documentation page).

    Collective dtypes are those of bf16 mixed-precision training (the recipe every stack's examples
    use); under an fp32 recipe every collective runs in fp32.

    * ``grad_reduce_dtype``: dtype of the gradient all-reduce / reduce-scatter over DP (and ZeRO/FSDP).
      ``reduce_in_grad_buffer``: the stack reduces the buffer it accumulates gradients in, so the reduce runs
      in the recipe's gradient dtype (``Recipe.grads``) rather than ``grad_reduce_dtype``: Megatron-Core's
      buffer is fp32 only with ``grad_reduce_in_fp32`` (``param_and_grad_buffer.py`` L924 @d98e8a6), which
      ``--grad-reduce-in-bf16`` turns off (``arguments.py`` L1213-1214).
    * ``param_gather_dtype``: dtype of the parameter all-gather (ZeRO-1/2's updated weights,
      ZeRO-3/FSDP's weights before forward and backward).
    * ``recipe``: key of :data:`parallelsel.core.recipe.RECIPES` whose bytes per parameter the stack
      keeps (weights, gradients, optimizer state); ``model_state_bytes`` their sum, unsharded.
    * ``optimizer_shard``: the ranks ZeRO/FSDP shards state over: ``"dp"`` or ``"dp_cp"`` (data
      parallel x context/sequence parallel).
    * ``overlap_grad_reduce``: ZeRO stages (0 = plain DP) whose gradient reduction overlaps the
      backward pass by default; ``overlap_param_gather``: the same for the parameter all-gather;
      ``overlap_tp_comm``: whether TP collectives overlap GEMMs by default; ``tp_overlap``: whether
      the stack offers TP overlap at all, and ``tp_overlap_needs`` what it requires
      (``"sp"``: sequence parallelism, ``"compile"``: ``torch.compile``); ``tp_overlap_pairs``: the
      :data:`TP_OVERLAP_PAIRS` it fuses; ``tp_overlap_staging``: :data:`TP_OVERLAP_STAGING` or None (in place).
      ``overlap_pp_p2p``: the pipeline
      schedules whose stage-to-stage sends overlap the next chunk's compute (posted asynchronously and waited
      for only when the data is needed) instead of sitting on the critical path.
    * ``schedules``: the pipeline schedules offered (kinds of :func:`parallelsel.core.pipeline.schedule`);
      ``recompute``: the recomputation modes offered (``"none"``, ``"selective"``, ``"op"``, ``"full"``);
      ``recompute_layers``: how it recomputes only some layers of a chunk fully (``Plan.recompute_layers``):
      ``"any"`` (any count), ``"every-nth"`` (every N-th block: floor(layers / N) of them) or ``""`` (none;
      :func:`recompute_layer_counts`).
    * ``zero_stages``: the ZeRO stages it runs at all (torchtitan's FSDP2 shards everything or nothing: 0 and
      3); ``ep_overlap``: whether it offers to hide the experts' all-to-alls under another micro-batch's compute
      (``Plan.ep_overlap``: Megatron-Core's ``overlap_moe_expert_parallel_comm``, off by default); ``dispatchers``:
      the token dispatchers it offers beside the all-to-all (``Plan.dispatcher``: Megatron-Core's flex dispatcher with
      the DeepEP or HybridEP backend, ``transformer_config.py`` L891-902 @d98e8a6);
      ``ddp_alone``: plain DDP (ZeRO-0 over DP > 1) only as the job's one dimension (torchtitan's
      ``parallelize.py``: "DDP has not supported > 1D parallelism"); ``tp_sp_always``: its TP always comes with
      sequence parallelism (torchtitan's TP plan shards the norms by sequence: ``SequenceParallel``).
    * ``pp_split``: how it splits the layers over the pipeline when the job states no split (:data:`PP_SPLITS`;
      :func:`parallelsel.core.plan.stack_split`); ``pp_reduce_after_flush``: with a pipeline, the gradients are
      reduced over DP (and the updated weights gathered) only after the schedule has drained, so none of that
      traffic overlaps compute.
    * ``pp_zero``: ZeRO stages it runs together with PP; ``pp_fsdp_reshard``: with PP and FSDP,
      whether weights are resharded after each forward (None: it does not run FSDP with PP).
    * ``modes``: the execution modes it runs (:data:`EXEC_MODES`), first the one without
      ``compile``; ``fused``: per mode, the operators of :data:`FUSIBLE_OPS` that run as one kernel.
    * ``zero3_live``: how ZeRO-3 keeps weights gathered. Empty: per FSDP unit, a transformer block with the
      next one prefetched (:func:`parallelsel.core.memory.gather_peak`). Else DeepSpeed's parameter
      coordinator, per module: ``max_live_parameters`` (it prefetches only while fewer are gathered; the
      module about to run is fetched whole whatever its size), ``prefetch_bucket_size`` (what each fetch
      prefetches) and ``reduce_bucket_size`` (the gradient bucket it reduce-scatters from), in elements.
    * ``seq_dim``: the activation dimension sequence parallelism shards: 0 where activations are laid
      out [s, b, h] and the collectives work on the first dimension in place; 1 where they are [b, s, h]
      and PyTorch's functional collectives copy around each one (:func:`sp_layout_copies`).
    * ``sp_gathered_inputs``: under sequence parallelism autograd saves the all-gathered (whole-sequence) input
      of each column-parallel linear (QKV, MLP up-projections, the output layer), as DTensor's
      PrepareModuleInput/ColwiseParallel hand it over; False where the linear saves its sequence shard and
      gathers it again in backward (Megatron's ``LinearWithGradAccumulationAndAsyncCommunication``,
      ``core/tensor_parallel/layers.py`` L604, L667-680 @d98e8a6), as Korthikanti et al. count it.
    * ``loss_parallel``: with TP > 1 an eager loss runs on the vocabulary-sharded logits as a decomposed
      log-softmax whose backward holds more fp32 buffers than aten's fused one
      (:data:`parallelsel.core.memory.LOSS_PARALLEL_BYTES`); False where the loss sees whole logits or runs fused.
    """

    key: str
    name: str
    version: str
    source: str
    grad_reduce_dtype: str
    param_gather_dtype: str
    recipe: str
    optimizer_shard: str
    overlap_grad_reduce: tuple[int, ...]
    overlap_param_gather: tuple[int, ...]
    overlap_tp_comm: bool
    tp_overlap: bool
    tp_overlap_needs: tuple[str, ...]
    schedules: tuple[str, ...]
    recompute: tuple[str, ...]
    pp_zero: tuple[int, ...]
    pp_fsdp_reshard: bool | None
    modes: tuple[str, ...]
    fused: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    seq_dim: int = 0
    sp_gathered_inputs: bool = False
    loss_parallel: bool = False
    reduce_in_grad_buffer: bool = False
    overlap_pp_p2p: tuple[str, ...] = ()
    tp_overlap_pairs: tuple[str, ...] = TP_OVERLAP_PAIRS
    tp_overlap_staging: str | None = None
    recompute_layers: str = ""
    zero_stages: tuple[int, ...] = (0, 1, 2, 3)
    ddp_alone: bool = False
    ep_overlap: bool = False
    dispatchers: tuple[str, ...] = ()
    tp_sp_always: bool = False
    zero3_live: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    pp_split: str = "divisible"
    pp_reduce_after_flush: bool = False

    def __post_init__(self):
        for f in ("grad_reduce_dtype", "param_gather_dtype"):
            choice(f, getattr(self, f), tuple(DTYPE_BYTES))
        choice("optimizer_shard", self.optimizer_shard, ("dp", "dp_cp"))
        for m in self.modes:
            choice("modes", m, EXEC_MODES)
        for m, ops in self.fused.items():
            choice("fused", m, self.modes)
            for op in ops:
                choice("fused op", op, FUSIBLE_OPS)
        object.__setattr__(self, "fused", MappingProxyType(dict(self.fused)))
        object.__setattr__(self, "zero3_live", MappingProxyType(dict(self.zero3_live)))
        choice("seq_dim", self.seq_dim, (0, 1))
        for s in self.overlap_pp_p2p:
            choice("overlap_pp_p2p", s, tuple(x for x in self.schedules if x in P2P_OVERLAP_SCHEDULES))
        for pair in self.tp_overlap_pairs:
            choice("tp_overlap_pairs", pair, TP_OVERLAP_PAIRS)
        if self.tp_overlap_staging is not None:
            choice("tp_overlap_staging", self.tp_overlap_staging, TP_OVERLAP_STAGING)
        choice("recompute_layers", self.recompute_layers, ("", "any", "every-nth"))
        choice("pp_split", self.pp_split, PP_SPLITS)

    @property
    def model_state_bytes(self) -> float:
        """Bytes of model state per parameter without sharding (weights + gradients + optimizer)."""
        from .recipe import RECIPES  # local: recipe presets are data beside this one
        return RECIPES[self.recipe].per_param

    def mode(self, compile: bool = False) -> str:
        """The execution mode a job on this stack runs in: ``"compile"`` when ``compile`` is set, else its first mode."""
        if compile:
            if "compile" not in self.modes:
                raise ParallelselError(f"compile={compile!r}: stack {self.key!r} does not run the model under "
                                       f"torch.compile (its modes: {', '.join(self.modes)})")
            return "compile"
        return self.modes[0]

    def fused_ops(self, compile: bool | str = False) -> tuple[str, ...]:
        """The operators that run fused in the mode :meth:`mode` picks; with ``compile="model"`` (the
        model's blocks compiled, the loss left eager: :data:`COMPILE_SCOPES`) the loss is not among them."""
        fused = tuple(self.fused.get(self.mode(compile), ()))
        return tuple(op for op in fused if op != "cross_entropy") if compile == "model" else fused


_MCORE = "NVIDIA/Megatron-LM @d98e8a6 (core 0.20.0 dev; release core_v0.19.0)"
_TITAN = "pytorch/torchtitan @b5bcd76 (release v0.2.2)"
_DS = "deepspeedai/DeepSpeed @edaa722 (0.19.6 dev; release v0.19.5)"

STACKS: dict[str, Stack] = Catalogue("stack", {
    "megatron-core": Stack(
        key="megatron-core", name="Megatron-Core", version="0.19.0",
        source=(f"{_MCORE}: megatron/training/arguments.py L1204-1217 (bf16 forces fp32 gradient accumulation "
                "and all-reduce), training.py L2635 (grad_reduce_in_fp32); docs/user-guide/features/"
                "dist_optimizer.md (18 bytes/param bf16 params + fp32 grads, 6 + 12/d distributed; reduce-scatter "
                "fp32, all-gather bf16 params); core/distributed/distributed_data_parallel.py L289-293 (dist-opt "
                "over the DP x CP group); arguments.py L3121, L3148 (--overlap-grad-reduce, --overlap-param-gather "
                "off), core/model_parallel_config.py L265-339 (tp_comm_overlap off, needs sequence parallel: "
                "arguments.py L1441); core/pipeline_parallel/schedules.py L53 (no pipelining, 1F1B, interleaved); "
                "core/transformer/transformer_config.py L532-566 (recompute_granularity None / full / selective, in that order; "
                "recompute_method block with recompute_num_layers 1..layers per stage, L1919-1925); "
                "arguments.py --no-bias-swiglu-fusion, --no-rope-fusion (fusions on), Transformer Engine "
                "LayerNormLinear and fused attention; core/tensor_parallel/mappings.py L118, L159 (sequence "
                "parallel gathers and reduce-scatters along the first dimension of [s, b, h]); arguments.py L3118-3120 "
                "(--no-overlap-p2p-communication: overlap on by default since 4eeff55, 2023-10-12) and L1000-1017 "
                "(only with the interleaved schedule); Megatron-Bridge training/comm_overlap.py sets "
                "overlap_p2p_comm when virtual pipeline stages > 1; arguments.py validate_args (\"Number of layers "
                "should be divisible by the pipeline-model-parallel size\" unless --decoder-first/last-pipeline-num-"
                "layers or --pipeline-model-parallel-layout state the split); core/model_parallel_config.py L343 "
                "(overlap_moe_expert_parallel_comm, off), core/pipeline_parallel/combined_1f1b.py (one micro-batch's "
                "forward beside another's backward, the all-to-alls of each under the other's compute)"),
        grad_reduce_dtype="fp32", param_gather_dtype="bf16", recipe="bf16-adam-fp32grad", optimizer_shard="dp_cp",
        reduce_in_grad_buffer=True, overlap_pp_p2p=("interleaved",),
        overlap_grad_reduce=(), overlap_param_gather=(), overlap_tp_comm=False, tp_overlap=True,
        tp_overlap_needs=("sp",), schedules=("1f1b", "interleaved"), recompute=("none", "full", "selective"),
        pp_zero=(0, 1), pp_fsdp_reshard=None, modes=("te",), recompute_layers="any", ep_overlap=True,
        dispatchers=("deepep", "hybridep"),
        fused={"te": ("attention", "cudnn_attention", "rmsnorm", "swiglu", "rope", "fp8_cast", "cp_merge")}),
    "torchtitan": Stack(
        key="torchtitan", name="torchtitan", version="0.2.2",
        source=(f"{_TITAN}: torchtitan/config/configs.py L94-100 (mixed_precision_param bf16, mixed_precision_reduce "
                "fp32; under DDP autocast keeps fp32 parameters and gradients); torchtitan/distributed/fsdp.py "
                "L112-137 (reshard_after_forward = not pp_enabled) and the FSDP mesh dp_shard x cp; PyTorch FSDP "
                "notes (implicit forward prefetch, reduce-scatter on its own stream; fp32 sharded parameters, "
                "gradients and Adam state); configs.py L298-313 (async TP off, needs compile); configs.py L216 and "
                "torch.distributed.pipelining.schedules.get_schedule_class (GPipe, 1F1B, Interleaved1F1B, "
                "LoopedBFS, InterleavedZeroBubble, ZBVZeroBubble, DualPipeV); torchtitan/distributed/"
                "activation_checkpoint.py L333-337 (selective op, full, none; the older layer SAC, every N-th block fully, "
                "is full with recompute_layers: models/llama3/parallelize_llama.py L281-289 @820504e); torch.compile of model and "
                "loss (Inductor fuses pointwise ops and reductions); models/llama3/parallelize_llama.py L141-195 "
                "@820504e (activations [b, s, h], sequence parallelism as Shard(1); L183, L192 PrepareModuleInput "
                "to Replicate before attention and feed_forward, L144-148 the output layer's input Shard(1) gathered: "
                "the linears save the gathered input); torchtitan/components/loss.py "
                "L31-61, L66-214 @b5bcd76 (with TP the loss runs on the vocabulary-sharded logits: "
                "_LossParallelCrossEntropy; before it torch's loss_parallel(), train.py L131-134 and utils.py "
                "L196-201 @9dec370); async TP: torch/_inductor/fx_passes/micro_pipeline_tp.py (a reduce-scatter "
                "fuses only when its input is one matmul; the separate wq/wk/wv, w1/w3 make input gradients sums), "
                "torch/distributed/_symmetric_memory; configs.py Parallelism "
                "pipeline_parallel_first/last_stage_less_layers (default 1) and distributed/pipeline_parallel.py "
                "generate_llm_fqn_per_model_part (embedding and output weigh that many layers, units spread evenly, "
                "the spare ones on the earliest stages)"),
        grad_reduce_dtype="fp32", param_gather_dtype="bf16", recipe="bf16-compute-fp32-adam", optimizer_shard="dp_cp",
        overlap_grad_reduce=(0, 1, 2, 3), overlap_param_gather=(1, 2, 3), overlap_tp_comm=False, tp_overlap=True,
        tp_overlap_needs=("compile",), tp_overlap_pairs=("forward", "backward-ag"),
        tp_overlap_staging="symmetric-memory",
        schedules=("gpipe", "1f1b", "interleaved", "looped-bfs", "interleaved-zb", "zbv", "dualpipev"),
        recompute=("none", "op", "full"), recompute_layers="every-nth", zero_stages=(0, 3), ddp_alone=True, tp_sp_always=True,
        pp_zero=(0, 3), pp_fsdp_reshard=False,
        modes=("eager", "compile"),
        fused={"eager": ("attention",), "compile": ("attention", "rmsnorm", "swiglu", "rope", "fp8_cast", "cross_entropy")},
        seq_dim=1, sp_gathered_inputs=True, loss_parallel=True, pp_split="ends-as-layers"),
    "deepspeed": Stack(
        key="deepspeed", name="DeepSpeed", version="0.19.5",
        source=(f"{_DS}: deepspeed/runtime/constants.py L285-286 and engine.py L1405-1416 (communication_data_type "
                "defaults to the model dtype: bf16 reduce), engine.py L1492-1495 (gradient accumulation in the "
                "model dtype), zero/config.py L138, L383-386 (overlap_comm only for ZeRO-3), utils/groups.py "
                "L845-851 and engine.py L2351-2551 (ZeRO over DP x sequence parallel), runtime/pipe/engine.py "
                "(ZeRO-2/3 refused with PP), runtime/pipe/schedule.py L189-200 (TrainSchedule: 1F1B only), "
                "activation_checkpointing (full layers); ZeRO-3 gathers parameters in the model dtype, module by "
                "module: zero/partitioned_param_coordinator.py fetch_sub_module L310, prefetch capped at max_live_parameters "
                "L452-454; zero/config.py L113 (reduce_bucket_size 5e8), L215 (stage3_prefetch_bucket_size 5e7), L238 "
                "(max_live_parameters 1e9), stage3.py L731-733 (contiguous gradient bucket of reduce_bucket_size); "
                "runtime/pipe/module.py PipelineModule._partition_layers with Megatron-DeepSpeed's GPTModelPipe "
                "partition_method='type:transformer' and runtime/utils.py partition_balanced (the linear partition "
                "minimising the spread of layers a stage; ties go to the later cut, which puts the spare layers on "
                "the earliest stages); runtime/pipe/schedule.py TrainSchedule.steps (ReduceTiedGrads, ReduceGrads and "
                "OptimizerStep only at the last step, after the schedule drains)"),
        grad_reduce_dtype="bf16", param_gather_dtype="bf16", recipe="bf16-adam", optimizer_shard="dp_cp",
        overlap_grad_reduce=(3,), overlap_param_gather=(3,), overlap_tp_comm=False, tp_overlap=False,
        tp_overlap_needs=(), schedules=("1f1b",), recompute=("none", "full"), pp_zero=(0, 1), pp_fsdp_reshard=None,
        modes=("eager", "compile"),
        fused={"eager": ("attention",), "compile": ("attention", "rmsnorm", "swiglu", "rope", "fp8_cast")},
        zero3_live={"max_live_parameters": 1e9, "prefetch_bucket_size": 5e7, "reduce_bucket_size": 5e8},
        pp_split="earliest-first", pp_reduce_after_flush=True),
})
"""The three stacks, keyed as ``Workload(stack=...)`` names them. Fused-operator sets are defaults: eager
PyTorch fuses attention only (``scaled_dot_product_attention``); ``torch.compile`` also fuses the
pointwise chains (norm, activation, rotary, and torchtitan's compiled loss); Megatron-Core with
Transformer Engine fuses norm into the next GEMM, attention (cuDNN's kernel where the part has it:
``cudnn_attention``, :data:`parallelsel.core.hardware.CUDNN_OVER_FA2`), SwiGLU and RoPE (Megatron-LM's
``bias_swiglu_fusion`` and ``apply_rope_fusion`` default on; ``cross_entropy_loss_fusion`` off)."""

DEFAULT_STACK = "megatron-core"
"""The stack a :class:`parallelsel.core.plan.Workload` runs on unless told: Megatron-Core, whose papers
(Shoeybi et al. 2019; Narayanan et al. 2021; Korthikanti et al. 2022) the lesson's TP, PP and SP
formulas and its measured step times come from. The pages name it."""


def sp_layout_copies(stack: Stack, micro_batch: int) -> tuple[int, int]:
    """Full-tensor copies (read and write of the unsharded activations) around each sequence-parallel
    (all-gather, reduce-scatter), for a stack whose activations are [b, s, h] (``seq_dim`` 1): NCCL gathers
    and scatters along the first dimension only, so PyTorch's functional collectives, which DTensor's
    Shard(1) <-> Replicate redistribution calls, rearrange the data: ``all_gather_single`` re-concatenates its
    output along the sequence (``torch.cat(torch.chunk(...))``) unless every dimension before it is 1 (a
    micro-batch of one sequence: ``torch._utils._maybe_view_chunk_cat`` returns a view), and
    ``reduce_scatter_single`` always concatenates its input along dim 0 first (``_chunk_or_narrow_cat``;
    torch 2.13 ``distributed/_functional_collectives.py`` L213-224, L276-277). (0, 0) for [s, b, h]."""
    if stack.seq_dim == 0:
        return 0, 0
    return (0 if micro_batch == 1 else 1), 1


def stack_fused(workload) -> tuple[str, ...]:
    """The operators that run fused for ``workload``: its stack's set in the mode ``workload.compile`` picks."""
    return STACKS[workload.stack].fused_ops(workload.compile)


def stack_of(workload) -> Stack:
    """The :class:`Stack` record a workload runs on."""
    return STACKS[workload.stack]


def wire_bytes(stack: Stack, recipe) -> tuple[float, float]:
    """``(gradient reduce, parameter gather)`` bytes per element on the wire for ``recipe`` on ``stack``.

    A stack's collective dtypes are those of its bf16 mixed-precision training (:class:`Stack`); a
    collective never runs narrower than the recipe computes in (``recipe.activation``: an fp32
    recipe sends fp32 everywhere, as the recorded torch runs in ``tests/data`` do).

    Examples:
        >>> from parallelsel.core.recipe import RECIPES
        >>> wire_bytes(STACKS["torchtitan"], RECIPES["bf16-compute-fp32-adam"])   # FSDP2: fp32 reduce, bf16 gather
        (4.0, 2.0)
        >>> wire_bytes(STACKS["deepspeed"], RECIPES["bf16-adam"]), wire_bytes(STACKS["deepspeed"], RECIPES["fp32-adam"])
        ((2.0, 2.0), (4.0, 4.0))
        >>> wire_bytes(STACKS["megatron-core"], RECIPES["bf16-adam"])   # --grad-reduce-in-bf16: the bf16 buffer
        (2.0, 2.0)
    """
    gather = float(max(recipe.activation, DTYPE_BYTES[stack.param_gather_dtype]))
    if getattr(recipe, "gather_bytes", 0.0):
        gather = float(recipe.gather_bytes)   # an FP8 recipe that all-gathers FP8 weights (Recipe.gather_bytes)
    reduce = recipe.grads if stack.reduce_in_grad_buffer else DTYPE_BYTES[stack.grad_reduce_dtype]
    return float(max(recipe.activation, reduce)), gather


def state_shards(stack: Stack, plan) -> int:
    """Ranks ZeRO/FSDP shards a plan's model state over on ``stack``: the shard group (all of DP, or
    HSDP's ``shard``) times CP where the stack shards over DP x CP -- Megatron-Core's distributed
    optimizer (``distributed_data_parallel.py`` L289, the ``intra_dp_cp`` group), torchtitan's
    ``fsdp`` mesh (``dp_shard x cp``, ``parallel_dims.py``), DeepSpeed's ZeRO over DP x sequence
    parallel (``utils/groups.py`` L845-851). 1 without ZeRO."""
    if plan.zero == 0:
        return 1
    return zero_ranks(stack, plan.shard_size, plan.cp)


def recompute_layer_counts(stack: Stack, per_chunk: int) -> tuple[int, ...]:
    """The counts k < ``per_chunk`` of a chunk's layers that ``stack`` can recompute fully while the rest keep their
    activations (``Plan(recompute="full", recompute_layers=k)``), fewest first: every k under Megatron-Core's
    ``--recompute-method block --recompute-num-layers k``; floor(per_chunk / N) for N >= 2 under torchtitan's
    layer SAC (``selective_ac_option = N``: every N-th block); none where :attr:`Stack.recompute_layers` is empty
    (DeepSpeed's checkpointing is model code).

    Examples:
        >>> recompute_layer_counts(STACKS["torchtitan"], 10), recompute_layer_counts(STACKS["megatron-core"], 4)
        ((1, 2, 3, 5), (1, 2, 3))
    """
    if stack.recompute_layers == "any":
        return tuple(range(1, per_chunk))
    if stack.recompute_layers == "every-nth":
        return tuple(sorted({per_chunk // n for n in range(2, per_chunk + 1)}))
    return ()


def zero_ranks(stack: Stack | None, dp: int, cp: int) -> int:
    """Ranks ZeRO/FSDP can shard over with ``dp`` data-parallel and ``cp`` context-parallel ranks: ``dp``, times
    ``cp`` where ``stack`` shards over both (``optimizer_shard``; None: as every stack of :data:`STACKS` does).
    ZeRO does anything only where this is above 1."""
    return dp * (cp if stack is None or stack.optimizer_shard == "dp_cp" else 1)


def pp_zero_stack(plan, stack: Stack | None = None) -> Reason | None:
    """The stacks that run ``plan``'s PP x ZeRO combination, as a reason; None without both (ZeRO counts where
    :func:`zero_ranks` on ``stack`` is above 1).

    Examples:
        >>> import parallelsel as ps
        >>> pp_zero_stack(ps.Plan(dp=2, pp=8, zero=3)).code
        'pp_fsdp_torchtitan'
        >>> pp_zero_stack(ps.Plan(dp=2, pp=8, zero=2)).code, pp_zero_stack(ps.Plan(dp=2, zero=3))
        ('pp_zero2_no_stack', None)
    """
    return pp_zero_reason(plan.pp, plan.zero, zero_ranks(stack, plan.dp, plan.cp))


@lru_cache(maxsize=1024)  # Reasons are frozen; every estimate asks for one of a few
def pp_zero_reason(pp: int, zero: int, ranks: int) -> Reason | None:
    """:func:`pp_zero_stack` from the degrees alone (what the search knows before it builds a plan); ``ranks``:
    the ranks ZeRO would shard over (:func:`zero_ranks`)."""
    if pp == 1 or zero == 0 or ranks == 1:
        return None
    values = {"pp": pp, "zero": zero}
    if zero == 1:
        return Reason("pp_zero1_stacks", values)
    if zero == 2:
        return Reason("pp_zero2_no_stack", values)
    return Reason("pp_fsdp_torchtitan", values)


def effective_zero(plan) -> int:
    """The ZeRO stage whose memory and traffic ``plan`` has on the stack that runs it.

    ``plan.zero`` except ZeRO-3/FSDP with PP, which runs as torchtitan runs it (see the module
    docstring): weights and gradients unsharded for the step, optimizer state sharded, one
    all-gather and one reduce-scatter per step -- ZeRO-1's memory and traffic.
    """
    return 1 if plan.pp > 1 and plan.zero == 3 else plan.zero
