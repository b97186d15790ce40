"""Hand a plan to the launcher that will run it: Megatron-LM arguments, a torchtitan TOML section, a DeepSpeed JSON config.

Each export carries everything the launcher needs to run the plan as the library models it: degrees,
ZeRO/FSDP, micro-batch and global batch, sequence parallelism, recomputation, schedule and stage split
(in the launcher's own counting), the model's shape and sequence length (MoE experts and top-k), the
recipe's precision and optimizer, the overlap the estimate assumes, and what the launcher's validator
demands around them (Megatron-FSDP's checkpoint format, ``CUDA_DEVICE_MAX_CONNECTIONS``). It starts with
a comment header (:func:`header`: parallelsel version, plan, model, cluster, stack, launcher and the
commit or version whose options were checked). A plan or recipe a launcher cannot run as modelled is
refused: :func:`refusals` lists why, as ``(code, values)`` pairs, and :func:`export` raises
:class:`LauncherError` carrying them. Every export of a fixed set of plans was fed to the launchers' own
parsers and validators (``tools/record_launchers.py``; verdicts in ``tests/data/launcher_verdicts.json``).
:func:`read_config` is the way back: the plan a launcher's file describes.

Option names are the launchers' own, checked against their source at these commits:

* Megatron-LM ``megatron/training/arguments.py`` (NVIDIA/Megatron-LM d98e8a64, 2026-08-22). Parallel
  sizes come from ``ModelParallelConfig`` fields turned into flags by ``ArgumentGroupFactory``
  (``--tensor-model-parallel-size``, ``--pipeline-model-parallel-size``, ``--sequence-parallel``,
  ``--context-parallel-size``, ``--expert-model-parallel-size``, ``--expert-tensor-parallel-size``: unset, the
  dense TP, arguments.py L587-588), batch sizes from ``TrainingConfig``
  (``--micro-batch-size``, ``--global-batch-size``), recomputation from ``TransformerConfig``
  (``--recompute-granularity {full,selective}``, ``--recompute-method {uniform,block}``,
  ``--recompute-num-layers``), FP8 from ``TransformerConfig`` (``--fp8-format``, ``--fp8-recipe``) and
  ``--fp8-param-gather``. ``virtual_pipeline_model_parallel_size`` is excluded from the CLI;
  interleaving is asked for with ``--num-layers-per-virtual-pipeline-stage``. ZeRO-1 is
  ``--use-distributed-optimizer`` (``--num-distributed-optimizer-instances`` replicas for a partial
  shard); ZeRO-2/3 is Megatron-FSDP, ``--use-megatron-fsdp`` with ``--data-parallel-sharding-strategy
  {optim_grads, optim_grads_params}``. Megatron-LM's schedules are 1F1B and interleaved 1F1B.
* torchtitan ``torchtitan/config/job_config.py`` (pytorch/torchtitan 238fa995, 2026-02-23, the last
  version read from TOML files; commit 9810191b moved the job config to Python dataclasses with the
  same ``ParallelismConfig`` field names): ``[parallelism]`` ``data_parallel_replicate_degree``,
  ``data_parallel_shard_degree``, ``fsdp_reshard_after_forward``, ``tensor_parallel_degree``,
  ``pipeline_parallel_degree``, ``pipeline_parallel_schedule``, ``pipeline_parallel_layers_per_stage``,
  ``pipeline_parallel_microbatch_size``, ``context_parallel_degree``, ``expert_parallel_degree``,
  ``expert_tensor_parallel_degree`` (default 1, "either 1 or the same as tp");
  ``[training]`` ``local_batch_size``, ``global_batch_size``, ``seq_len``; ``[activation_checkpoint]``
  ``mode {selective, full, none}`` with ``selective_ac_option = "op"`` (op-level selective checkpointing;
  its default ``"2"`` would checkpoint every second whole layer instead); ``[model]`` ``converters``
  with ``"quantize.linear.float8"`` and ``[quantize.linear.float8]`` for Float8 training. torchtitan's TP always shards the norms by sequence (its TP plan
  uses ``SequenceParallel``), it has no optimizer-only sharding (ZeRO-1), plain DDP
  (``data_parallel_replicate_degree`` alone) cannot be combined with another dimension
  (``parallelize.py``: "DDP has not supported > 1D parallelism"), and schedule names are
  ``torch.distributed.pipelining``'s (``GPipe``, ``1F1B``, ``Interleaved1F1B``, ...).
* DeepSpeed ``deepspeed/runtime/constants.py`` and ``deepspeed/runtime/zero/config.py``
  (deepspeedai/DeepSpeed edaa7221, 2026-08-22): ``train_batch_size``, ``train_micro_batch_size_per_gpu``,
  ``gradient_accumulation_steps`` (``config.py`` asserts train_batch_size == micro x accumulation x data-parallel
  world size), ``bf16.enabled``, ``zero_optimization.stage``. Pipeline stages are set in model code
  (``deepspeed.pipe.PipelineModule``), not in this JSON, and ``pipe/engine.py`` asserts "ZeRO-2 and
  ZeRO-3 are incompatible with pipeline parallelism"; tensor parallelism and recomputation are not
  JSON switches either (Megatron-DeepSpeed or model code set them).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass

from ._check import ParallelselError, choice
from .model import RECOMPUTE
from .plan import DISPATCHERS, Plan, Workload, megatron_split, rank_layers, torchtitan_split, with_stack_split
from .stacks import STACKS

__all__ = ["LAUNCHERS", "LAUNCHER_SOURCES", "LaunchConfig", "LauncherError", "export", "header", "options",
           "read_config", "recipe_key", "refusals", "sniff"]

LAUNCHERS = ("megatron", "torchtitan", "deepspeed")

LAUNCHER_SOURCES = {
    "megatron": {"name": "Megatron-LM", "checked": "NVIDIA/Megatron-LM d98e8a64", "stack": "megatron-core",
                 "files": "megatron/training/arguments.py (parse_args, validate_args)"},
    "torchtitan": {"name": "torchtitan", "checked": "pytorch/torchtitan 238fa995", "stack": "torchtitan",
                   "files": "torchtitan/config/job_config.py, distributed/parallel_dims.py, "
                            "distributed/pipeline_parallel.py"},
    "deepspeed": {"name": "DeepSpeed", "checked": "deepspeed 0.19.8", "stack": "deepspeed",
                  "files": "deepspeed/runtime/config.py (DeepSpeedConfig)"},
}
"""Each launcher: its name, the commit or release whose options the exports were checked against
(``tools/record_launchers.py`` runs exactly these), the :data:`parallelsel.STACKS` key of the stack it
runs, and the files that read the options. torchtitan 238fa995 is the last commit that reads TOML
job files (commit 9810191b moved the job config to Python; the 0.3.0 release reads command-line
overrides only)."""

_TORCH_SCHEDULES = {"gpipe": "GPipe", "1f1b": "1F1B", "interleaved": "Interleaved1F1B"}
TORCH_SCHEDULES = _TORCH_SCHEDULES  # public: render/plan_code.py names the torch schedule classes from it
"""Our schedule kinds -> torch.distributed.pipelining schedule class names that torchtitan accepts."""

# Recipes (parallelsel.core.recipe.RECIPES keys) each launcher runs, and the options that give them.
# Megatron-LM validate_args: --bf16 sets bf16 parameters and, unless --grad-reduce-in-bf16, accumulates
# and reduces gradients in fp32 (main_grads, 4 bytes); without --bf16 parameters are fp32. Its
# optimizers are adam (default) and sgd; the optimizer keeps fp32 master weights and moments.
# FP8 (transformer_config.py L587-605 @d98e8a6): --fp8-format hybrid (E4M3 forward, E5M2 gradients) runs the
# linears' GEMMs in FP8 through Transformer Engine, with --fp8-recipe's scaling (default "delayed", the
# amax-history scaling NeMo 24.07's fp8_hybrid ran); --fp8-param-gather keeps the weights in FP8 and
# all-gathers them so (validate_args: only with the distributed optimizer or an FSDP), as Megatron-Bridge's
# bf16_with_fp8_current_scaling_mixed runs it with tensorwise (current) scaling and bf16 gradients.
_MEGATRON_RECIPES = {
    "bf16-adam": {"--bf16": True, "--grad-reduce-in-bf16": True, "--optimizer": "adam"},
    "bf16-adam-fp32grad": {"--bf16": True, "--optimizer": "adam"},
    "fp32-adam": {"--optimizer": "adam"},
    "sgd-momentum": {"--optimizer": "sgd"},
    "fp8-adam-fp32grad": {"--bf16": True, "--optimizer": "adam", "--fp8-format": "hybrid"},
    "fp8-adam-bf16grad": {"--bf16": True, "--grad-reduce-in-bf16": True, "--optimizer": "adam", "--fp8-format": "hybrid"},
    "fp8-params-bf16grad": {"--bf16": True, "--grad-reduce-in-bf16": True, "--optimizer": "adam",
                            "--fp8-format": "hybrid", "--fp8-recipe": "tensorwise", "--fp8-param-gather": True},
}
# transformer_config.py L151 @d98e8a6 (attention_backend, an AttnBackend: flash, fused, unfused, local, auto; default
# auto); language_module.py L130-139: flash sets NVTE_FLASH_ATTN=1 and NVTE_FUSED_ATTN=0 (FlashAttention-2 through
# Transformer Engine), fused the reverse (cuDNN), unfused Transformer Engine's unfused kernel, which stores the scores.
_MEGATRON_ATTENTION = {"fa2": "flash", "standard": "unfused"}
_MEGATRON_READ_ATTENTION = {"flash": "fa2", "unfused": "standard", "local": "standard", "fused": "flash", "auto": "flash"}
_MEGATRON_FP8_GATHER = "fp8-params-bf16grad"  # the recipe whose weights are FP8 (needs ZeRO >= 1)
# torchtitan job_config.py [training]: dtype float32 keeps fp32 parameters and optimizer state, and
# FSDP's mixed_precision_param casts the compute copy (bfloat16 by default); gradients are reduced in
# mixed_precision_reduce = float32. Optimizers: Adam and AdamW (components/optimizer.py).
# That is the torchtitan stack's recipe, bf16-compute-fp32-adam (4 + 4 + 8 bytes per parameter).
# Float8 (238fa995: job_config.py Float8Linear, components/quantization/float8.py L238 registers the converter
# "quantize.linear.float8"): torchao's Float8Linear with tensorwise scaling, the output layer left in bf16
# (filter_fqns, as the llama3 train configs set it), weights all-gathered in FP8 under FSDP with their scales
# precomputed once per step -- the benchmarks' settings that fp8-compute-fp32-adam prices.
_TORCHTITAN_RECIPES = {
    "bf16-compute-fp32-adam": {"training": {"mixed_precision_param": "bfloat16"}, "optimizer": {"name": "AdamW"}},
    "fp32-adam": {"training": {"mixed_precision_param": "float32"}, "optimizer": {"name": "AdamW"}},
    "fp8-compute-fp32-adam": {
        "training": {"mixed_precision_param": "bfloat16"}, "optimizer": {"name": "AdamW"},
        "model": {"converters": ["quantize.linear.float8"]},
        "quantize.linear.float8": {"enable_fsdp_float8_all_gather": True,
                                   "precompute_float8_dynamic_scale_for_fsdp": True, "filter_fqns": ["output"]}},
}
_TITAN_FLOAT8 = ("quantize.linear.float8", "float8")  # converter names: 238fa995's, and the older alias
# DeepSpeed runtime/config.py: bf16.enabled, data_types.grad_accum_dtype ("fp32" or "bf16"), optimizer
# type "Adam" (DEEPSPEED_OPTIMIZERS has no plain SGD).
_DEEPSPEED_RECIPES = {
    "bf16-adam": {"bf16": {"enabled": True}, "data_types": {"grad_accum_dtype": "bf16"}, "optimizer": {"type": "Adam"}},
    "bf16-adam-fp32grad": {"bf16": {"enabled": True}, "data_types": {"grad_accum_dtype": "fp32"},
                           "optimizer": {"type": "Adam"}},
    "fp32-adam": {"bf16": {"enabled": False}, "optimizer": {"type": "Adam"}},
}
_RECIPES = {"megatron": _MEGATRON_RECIPES, "torchtitan": _TORCHTITAN_RECIPES, "deepspeed": _DEEPSPEED_RECIPES}


class LauncherError(ParallelselError):
    """A plan the launcher cannot run; ``reasons`` holds ``(code, values)`` pairs."""

    def __init__(self, launcher: str, reasons):
        self.launcher = launcher
        self.reasons = tuple(reasons)
        super().__init__(f"launcher={launcher!r} cannot run this plan: "
                         + "; ".join(f"{c} {v}" for c, v in self.reasons))


def recipe_key(recipe) -> str | None:
    """The :data:`parallelsel.RECIPES` key of ``recipe`` (None for a recipe not in the catalogue)."""
    from .recipe import RECIPES

    return next((k for k, r in RECIPES.items() if r == recipe), None)


def refusals(workload: Workload, plan: Plan, launcher: str) -> tuple[tuple[str, dict], ...]:
    """Why ``launcher`` cannot run ``plan`` as the library models it (empty when it can), each as ``(code, values)``.

    Rules in the module docstring; besides the degrees and schedules, a recipe the launcher has no
    options for (``launcher_recipe``) and a recomputation policy it does not implement
    (``launcher_recompute``) are refused rather than exported as something else.
    """
    choice("launcher", launcher, LAUNCHERS)
    plan = with_stack_split(workload, plan)  # a job that states no split runs its stack's (as estimate prices it)
    out: list[tuple[str, dict]] = []
    stack = LAUNCHER_SOURCES[launcher]["stack"]
    if workload.stack != stack:
        # The estimate follows the workload's stack (dtypes, overlap, state bytes): priced for another one,
        # the plan is not what this launcher would run.
        out.append(("launcher_stack", {"stack": workload.stack, "launcher_stack": stack}))
    sharded_part = plan.zero > 0 and plan.shard is not None and plan.shard < plan.dp
    key = recipe_key(workload.recipe)
    if key not in _RECIPES[launcher]:
        out.append(("launcher_recipe", {"recipe": key or workload.recipe.name, "supported": list(_RECIPES[launcher])}))
    # PyTorch FSDP's options (Plan docstring): torchtitan maps reshard_after_forward=False to
    # fsdp_reshard_after_forward="never" and has no switch to skip the per-micro-batch gradient sync;
    # DeepSpeed asserts no_sync is incompatible with ZeRO-2/3 (DeepSpeedEngine.no_sync) and has no
    # reshard-after-forward switch; the Megatron-FSDP flags written here have neither.
    fsdp_opts = [o for o, on in (("reshard_after_forward", not plan.reshard_after_forward), ("no_sync", plan.no_sync))
                 if on and plan.pp == 1 and not (launcher == "torchtitan" and o == "reshard_after_forward")]
    out += [("launcher_fsdp_option", {"option": o}) for o in fsdp_opts]
    if plan.tp_overlap and plan.tp > 1 and launcher == "deepspeed":
        out.append(("launcher_tp_overlap", {"tp": plan.tp}))
    if plan.ep_overlap and launcher != "megatron":   # Megatron-Core's combined 1F1B schedule has no counterpart
        out.append(("launcher_ep_overlap", {"ep": plan.ep}))
    if plan.dispatcher and launcher != "megatron":   # Megatron-Core's flex dispatcher (DeepEP, HybridEP) alone
        out.append(("launcher_flex_dispatcher", {"dispatcher": plan.dispatcher}))
    if launcher == "torchtitan":
        out += _refuse_torchtitan(plan, STACKS[stack], sharded_part, workload.model.layers)
    elif launcher == "megatron":
        out += _refuse_megatron(plan, STACKS[stack], sharded_part, key)
    else:
        out += _refuse_deepspeed(plan, STACKS[stack], sharded_part)
    return tuple(out)


def _ends_and_middle(plan: Plan) -> tuple[int, int, int] | None:
    """``(first, middle, last)`` layers of ``plan``'s uneven split when every middle stage holds the same number
    (what Megatron-Core's first/last flags and torchtitan's less-layers options state), else None."""
    sl = plan.stage_layers
    if sl is None or plan.chunks > 1:
        return None
    middle = set(sl[1:-1])
    if len(middle) > 1:
        return None
    m = middle.pop() if middle else max(sl[0], sl[-1])
    return sl[0], m, sl[-1]


def _torchtitan_less(plan: Plan) -> tuple[int, int] | None:
    """``(first_less, last_less)`` with which torchtitan, given no ``pipeline_parallel_layers_per_stage``, builds
    ``plan``'s split itself (:func:`parallelsel.core.plan.torchtitan_split` over its default virtual stages, one a
    rank or two with the interleaved schedule, as :func:`_torchtitan_stages` reads them), or None when no pair does."""
    sl = plan.stage_layers
    if sl is None or plan.chunks != (2 if plan.schedule == "interleaved" else 1):
        return None
    layers = sum(sl)
    for a in range(max(sl) + 1):
        for b in range(max(sl) + 1):
            try:
                if rank_layers(torchtitan_split(layers, plan.pp * plan.chunks, a, b), plan.pp, plan.schedule) == sl:
                    return a, b
            except ParallelselError:
                continue
    return None


def _refuse_split(plan: Plan) -> list:
    """An uneven split torchtitan's options cannot express (interleaved, or middle stages that differ and not as
    its own default spreads them: :func:`_torchtitan_less`) is refused (Megatron-LM states any split in its
    explicit layout: :func:`_megatron_layout`)."""
    if plan.stage_layers is None or _ends_and_middle(plan) is not None or _torchtitan_less(plan) is not None:
        return []
    return [("launcher_stage_layers", {"stage_layers": "/".join(map(str, plan.stage_layers))})]


def _refuse_megatron(plan: Plan, stack, sharded_part: bool, key: str | None = None) -> list:
    """Megatron-LM's refusals (schedules and recomputation modes from the megatron-core stack's facts; ``key``: the
    recipe, whose FP8 weights need a sharded optimizer). Every split is expressible (:func:`_megatron_layout`)."""
    out: list = []
    if plan.pp > 1 and plan.schedule not in stack.schedules:
        out.append(("launcher_schedule", {"schedule": plan.schedule, "supported": list(stack.schedules)}))
    if key == _MEGATRON_FP8_GATHER and plan.zero == 0:
        out.append(("launcher_recipe_zero", {"recipe": key, "zero": plan.zero}))
    if plan.pp > 1 and plan.zero >= 2:
        # The library prices FSDP with PP as torchtitan runs it (parallelsel.core.stacks); Megatron-LM's
        # PP shards only the optimizer state (--use-distributed-optimizer).
        out.append(("launcher_pp_zero", {"pp": plan.pp, "zero": plan.zero, "supported_zero": [0, 1]}))
    if sharded_part and plan.zero >= 2:
        out.append(("launcher_hsdp_zero", {"zero": plan.zero, "shard": plan.shard, "supported_zero": [1]}))
    offered = stack.recompute
    if plan.recompute not in offered:
        out.append(("launcher_recompute", {"recompute": plan.recompute, "supported": list(offered)}))
    return out


def _layer_sac_every(workload, plan: Plan, layers: int | None = None) -> int | None:
    """torchtitan's ``selective_ac_option`` N whose every-N-th-block AC recomputes ``plan.recompute_layers`` blocks of
    each stage (floor(stage layers / N) of them), or None when no N does."""
    per = (layers if workload is None else workload.model.layers) // (plan.pp * plan.chunks)
    k = plan.recompute_layers
    n = per // k if k else 0
    return n if n >= 1 and per // n == k else None


def _refuse_torchtitan(plan: Plan, stack, sharded_part: bool, layers: int = 0) -> list:
    """torchtitan's refusals (job_config.py, parallelize.py, activation_checkpoint.py)."""
    out: list = _refuse_split(plan)
    ends = _ends_and_middle(plan)
    if ends is not None and (ends[0] > ends[1] or ends[2] > ends[1]):
        # first/last_stage_less_layers only take layers away from the end stages (they are >= 0).
        out.append(("launcher_stage_layers", {"stage_layers": "/".join(map(str, plan.stage_layers))}))
    if plan.pp > 1 and plan.schedule not in _TORCH_SCHEDULES:
        out.append(("launcher_schedule", {"schedule": plan.schedule, "supported": list(_TORCH_SCHEDULES)}))
    elif plan.pp > 1 and plan.schedule == "interleaved" and plan.chunks < 2:
        # pipeline_llm: a multi-stage schedule (Interleaved1F1B) needs two or more stages a rank, else it refuses
        out.append(("launcher_schedule_chunks", {"schedule": _TORCH_SCHEDULES[plan.schedule], "chunks": plan.chunks}))
    if plan.zero not in stack.zero_stages:
        # FSDP2 either reshards after forward (ZeRO-3) or keeps the gathered weights until backward
        # and gathers again each micro-batch ("never"); neither is ZeRO-1/2's whole weights.
        out.append(("launcher_zero", {"zero": plan.zero, "supported": list(stack.zero_stages)}))
    if stack.tp_sp_always and plan.tp > 1 and not plan.sp:
        out.append(("launcher_tp_without_sp", {"tp": plan.tp}))
    if stack.ddp_alone and plan.zero == 0 and plan.dp > 1 and plan.gpus != plan.dp:
        out.append(("launcher_ddp_multi_dim", {"dp": plan.dp, "tp": plan.tp, "pp": plan.pp}))
    if plan.etp is not None and (plan.ep == 1 or plan.etp != 1):
        # job_config.py expert_tensor_parallel_degree: "either 1 or ... the same as tp", and "no effect ... when ep = 1"
        out.append(("launcher_etp", {"etp": plan.etp, "tp": plan.tp, "ep": plan.ep}))
    if plan.ep > 1 and sharded_part and (plan.shard * plan.cp * plan.tp) % plan.expert_split:
        # parallel_dims.py: the experts fold over dp_shard x cp x tp (efsdp = dp_shard x cp x tp / (etp x ep)),
        # never over the HSDP replicas
        out.append(("launcher_ep_hsdp", {"ranks": plan.shard * plan.cp * plan.tp, "split": plan.expert_split}))
    if plan.recompute_layers is not None and _layer_sac_every(None, plan, layers) is None:
        out.append(("launcher_recompute_layers", {"recompute_layers": plan.recompute_layers,
                                                  "stage_layers": layers // (plan.pp * plan.chunks)}))
    # torchtitan's "selective" is op-level SAC (saves matmul outputs, activation_checkpoint.py);
    # Korthikanti's selective recomputation of the attention core is not one of its modes.
    ok = ["none", "full"] + (["op"] if "op" in RECOMPUTE else [])
    if plan.recompute not in ok:
        out.append(("launcher_recompute", {"recompute": plan.recompute, "supported": ok}))
    return out


def _refuse_deepspeed(plan: Plan, stack, sharded_part: bool) -> list:
    """DeepSpeed's refusals: what its JSON config cannot set, or sets with another meaning."""
    out: list = []
    if plan.pp > 1:
        out.append(("launcher_pp_in_code", {"pp": plan.pp}))
    if plan.tp > 1:
        # DeepSpeedConfig accepts tensor_parallel.autotp_size, but deepspeed.initialize builds the config
        # with mpu=None, so its batch assertion (config.py _batch_assertion) counts every rank as DP:
        # train_batch_size = micro x accumulation x world, not the plan's micro x accumulation x dp
        # (deepspeed/__init__.py initialize, runtime/config.py DeepSpeedConfig.__init__). AutoTP also
        # has no sequence parallelism.
        out.append(("launcher_tp_batch", {"tp": plan.tp}))
    if plan.recompute != "none":
        out.append(("launcher_recompute_in_code", {"recompute": plan.recompute}))
    if sharded_part:
        out.append(("launcher_hsdp", {"shard": plan.shard, "dp": plan.dp}))
    if plan.ep > 1 or plan.cp > 1:
        out.append(("launcher_ep_cp_in_code", {"ep": plan.ep, "cp": plan.cp}))
    return out


def options(workload: Workload, plan: Plan, launcher: str) -> dict:
    """The launcher's options for ``plan``, as data (flag -> value, or section -> {key: value}); raises if refused.

    Megatron flags map to a value, or to ``True`` for a switch given without one.
    """
    if not isinstance(workload, Workload):
        raise ParallelselError(f"workload={workload!r}: must be a Workload")
    if not isinstance(plan, Plan):
        raise ParallelselError(f"plan={plan!r}: must be a Plan")
    plan = with_stack_split(workload, plan)
    bad = refusals(workload, plan, launcher)
    if bad:
        raise LauncherError(launcher, bad)
    return {"megatron": _megatron, "torchtitan": _torchtitan, "deepspeed": _deepspeed}[launcher](workload, plan)


def _megatron_model(workload: Workload) -> dict:
    """Megatron-LM's model flags: shape, sequence length, position, norm, MLP, bias, tying, vocabulary, MoE."""
    m = workload.model
    o: dict = {"--num-layers": m.layers, "--hidden-size": m.hidden, "--num-attention-heads": m.heads,
               "--ffn-hidden-size": m.ffn_hidden}
    if m.head_dim * m.heads != m.hidden:
        o["--kv-channels"] = m.head_dim   # Megatron's per-head width; hidden // heads when not given
    if m.kv_heads != m.heads:
        o["--group-query-attention"] = True
        o["--num-query-groups"] = m.kv_heads
    o["--seq-length"] = workload.seq_len
    o["--max-position-embeddings"] = max(workload.seq_len, m.seq_len)
    o["--position-embedding-type"] = "rope" if m.position == "rotary" else "learned_absolute"
    if m.position == "rotary":
        o["--no-rope-fusion"] = True  # the fused RoPE kernel needs Transformer Engine; same numbers without it
    o["--normalization"] = "RMSNorm" if m.norm == "rmsnorm" else "LayerNorm"
    if m.gated_mlp:
        o["--swiglu"] = True
    if not m.bias:
        o["--disable-bias-linear"] = True
    if not m.tied_embeddings:
        o["--untie-embeddings-and-output-weights"] = True
    o["--tokenizer-type"] = "NullTokenizer"
    o["--vocab-size"] = m.vocab
    if m.is_moe:
        o["--num-experts"] = m.experts
        o["--moe-router-topk"] = m.top_k
    if workload.attention in _MEGATRON_ATTENTION:  # "flash": the default (auto: Transformer Engine picks the kernel)
        o["--attention-backend"] = _MEGATRON_ATTENTION[workload.attention]
    return o


def _megatron(workload: Workload, plan: Plan) -> dict:
    """Megatron-LM flags (``arguments.py``): model shape, sizes, batches, SP, recomputation, ZeRO, precision, overlap."""
    m = workload.model
    o = _megatron_model(workload)
    o["--tensor-model-parallel-size"] = plan.tp
    o["--pipeline-model-parallel-size"] = plan.pp
    ends = _ends_and_middle(plan)
    layout = plan.stage_layers is not None and plan.pp > 1 and ends is None
    if ends is not None:
        # transformer_config.py: the first and last stage take these many layers, the rest split evenly
        # (parallelsel.core.plan.megatron_split is the inverse).
        o["--decoder-first-pipeline-num-layers"], o["--decoder-last-pipeline-num-layers"] = ends[0], ends[2]
    elif layout:  # any other split, interleaved or not: the explicit layout (one of it and the VP flags)
        o["--pipeline-model-parallel-layout"] = _megatron_layout(plan)
    if plan.pp > 1 and plan.schedule == "interleaved" and plan.chunks > 1:
        if not layout:
            o["--num-layers-per-virtual-pipeline-stage"] = m.layers // (plan.pp * plan.chunks)
        if plan.p2p_overlap is False:
            o["--no-overlap-p2p-communication"] = True  # on by default with the interleaved schedule
    if plan.cp > 1:
        o["--context-parallel-size"] = plan.cp
    o.update(_megatron_experts(plan))
    o["--micro-batch-size"] = plan.micro_batch
    o["--global-batch-size"] = workload.global_batch
    if plan.sp and plan.tp > 1:
        o["--sequence-parallel"] = True
        if plan.tp_overlap:
            o["--tp-comm-overlap"] = True  # Transformer Engine userbuffers; validate_args: needs --sequence-parallel
    if plan.recompute == "selective":
        o["--recompute-granularity"] = "selective"  # --recompute-modules defaults to core_attn
    elif plan.recompute == "full" and plan.recompute_layers is not None:
        # transformer_config.py: block = "recompute only the first recompute_num_layers layers per pipeline stage"
        o["--recompute-granularity"] = "full"
        o["--recompute-method"] = "block"
        o["--recompute-num-layers"] = plan.recompute_layers
    elif plan.recompute == "full":
        o["--recompute-granularity"] = "full"
        o["--recompute-method"] = "uniform"
        o["--recompute-num-layers"] = 1
    o.update(_MEGATRON_RECIPES[recipe_key(workload.recipe)])
    if plan.zero == 1:
        o["--use-distributed-optimizer"] = True
        if plan.shard is not None and plan.shard < plan.dp:
            o["--num-distributed-optimizer-instances"] = plan.dp // plan.shard
    elif plan.zero >= 2:
        o["--use-megatron-fsdp"] = True
        o["--data-parallel-sharding-strategy"] = {2: "optim_grads", 3: "optim_grads_params"}[plan.zero]
        o["--ckpt-format"] = "fsdp_dtensor"  # validate_args: "Megatron-FSDP requires the fsdp_dtensor checkpointing format"
    # The estimate hides DP/ZeRO traffic behind compute (parallelsel.core.estimate); Megatron does so
    # only when asked (overlap_grad_reduce / overlap_param_gather default False).
    if plan.dp * plan.cp > 1:
        o["--overlap-grad-reduce"] = True
        if plan.zero >= 1:
            o["--overlap-param-gather"] = True
    return o


def _megatron_experts(plan: Plan) -> dict:
    """Megatron-LM's expert-parallel flags: the degrees, the token dispatcher and EP overlap."""
    o: dict = {}
    if plan.ep > 1:
        o["--expert-model-parallel-size"] = plan.ep
        # The dispatcher the library prices (comm._ep_items); transformer_config.py L891 defaults to allgather.
        o["--moe-token-dispatcher-type"] = "alltoall"
        if plan.ep_overlap:
            o["--overlap-moe-expert-parallel-comm"] = True   # model_parallel_config.py L343
    if plan.dispatcher:   # transformer_config.py L891-902 @d98e8a6: the flex dispatcher and its backend
        o["--moe-token-dispatcher-type"] = "flex"
        o["--moe-flex-dispatcher-backend"] = plan.dispatcher
    if plan.etp is not None:  # arguments.py L587-588 @d98e8a6: unset, the experts take --tensor-model-parallel-size
        o["--expert-tensor-parallel-size"] = plan.etp
    return o


def _megatron_layout(plan: Plan) -> str:
    """``--pipeline-model-parallel-layout`` for ``plan``'s split (``core/transformer/pipeline_parallel_layer_layout.py``
    @d98e8a6): the virtual stages in model order (virtual stage v of rank r is entry v x pp + r), ``|`` between them,
    ``E`` the embedding (first), ``t`` a transformer layer, ``L`` the loss (last). A rank's layers spread over its
    chunks as evenly as they go, the shorter chunks where the embedding and the loss sit (as Megatron's
    ``--account-for-embedding/loss-in-pipeline-split`` place them); the estimate times a rank's layers, not how its
    chunks share them."""
    p, v = plan.pp, plan.chunks
    chunks = []
    for r, n in enumerate(plan.stage_layers):
        base, extra = divmod(n, v)
        counts = [base + (i < extra) for i in range(v)]
        chunks.append(counts[::-1] if r == 0 else counts)  # rank 0: the short chunk first, beside the embedding
    stages = ["t" * chunks[r][c] for c in range(v) for r in range(p)]
    stages[0], stages[-1] = "E" + stages[0], stages[-1] + "L"
    return "|".join(stages)


def _unroll(match) -> str:
    return match.group(1) * int(match.group(2))


def _read_layout(text: str, pp: int) -> dict:
    """``stage_layers`` and ``chunks`` from a ``--pipeline-model-parallel-layout`` (its ``(...)*n`` and ``x*n`` repeats
    unrolled as Megatron unrolls them; ``m`` MTP layers are not modelled and refused)."""
    flat = text.replace(",", "")
    for pattern in (r"\(([^)]+)\)\*(\d+)", r"(.)\*(\d+)"):
        flat = re.sub(pattern, _unroll, flat)
    stages = flat.split("|")
    if set(flat) - set("EtL|") or len(stages) % pp:
        _bad("--pipeline-model-parallel-layout", text, f"must list E, t and L stages, a multiple of PP = {pp} of them")
    v = len(stages) // pp
    split = tuple(sum(stages[c * pp + r].count("t") for c in range(v)) for r in range(pp))
    return {"stage_layers": split, **({"schedule": "interleaved", "chunks": v} if v > 1 else {})}


def megatron_env(plan: Plan) -> dict:
    """Environment a Megatron-LM launch needs (``validate_args``): CUDA_DEVICE_MAX_CONNECTIONS=1 with TP or CP on
    GPUs before Blackwell, and not 1 with Megatron-FSDP (``None`` = unset); 32 with EP overlap, whose all-to-alls
    need a second hardware queue beside the compute (arguments.py L1466-1475 @d98e8a6: "1 or 32, which depends on
    which parallelization you want to prioritize"; the estimate counts the overlap)."""
    if plan.zero >= 2:
        return {"CUDA_DEVICE_MAX_CONNECTIONS": None}
    if plan.ep_overlap:
        return {"CUDA_DEVICE_MAX_CONNECTIONS": "32"}
    if plan.tp > 1 or plan.cp > 1:
        return {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}
    return {}


_TORCHTITAN_FLAVORS = {"Llama-3 8B": ("llama3", "8B"), "Llama-3 70B": ("llama3", "70B"),
                       "Llama-3 405B": ("llama3", "405B")}
"""Model presets that are torchtitan flavors (torchtitan/models/llama3/__init__.py ``llama3_args``)."""


def _torchtitan_pipeline(workload: Workload, plan: Plan) -> dict:
    """The ``[parallelism]`` pipeline keys of ``plan`` (pp > 1): schedule, split, micro-batch size."""
    par = {"pipeline_parallel_schedule": _TORCH_SCHEDULES[plan.schedule],
           "pipeline_parallel_layers_per_stage": workload.model.layers // (plan.pp * plan.chunks),
           # torchtitan counts the embedding and the output as one layer each unless told otherwise
           # (pipeline_parallel.py: stages = ceil((layers + first_less + last_less) / layers_per_stage)).
           "pipeline_parallel_first_stage_less_layers": 0, "pipeline_parallel_last_stage_less_layers": 0}
    ends = _ends_and_middle(plan)
    less = None if ends is not None else _torchtitan_less(plan)
    if ends is not None:  # an uneven split: the end stages hold fewer layers than the middle ones
        par["pipeline_parallel_layers_per_stage"] = ends[1]
        par["pipeline_parallel_first_stage_less_layers"] = ends[1] - ends[0]
        par["pipeline_parallel_last_stage_less_layers"] = ends[1] - ends[2]
    elif less is not None:  # middle stages differ as torchtitan spreads them itself: one stage a rank
        del par["pipeline_parallel_layers_per_stage"]
        par["pipeline_parallel_first_stage_less_layers"], par["pipeline_parallel_last_stage_less_layers"] = less
    par["pipeline_parallel_microbatch_size"] = plan.micro_batch
    return par


def _torchtitan(workload: Workload, plan: Plan) -> dict:
    """torchtitan's job sections (``job_config.py``): model flavor, parallelism, training, optimizer, activation checkpoint."""
    b, B = plan.micro_batch, workload.global_batch
    if plan.zero == 0:
        replicate, shard = plan.dp, 1
    else:
        shard = plan.shard_size
        replicate = plan.dp // shard
    out: dict = {}
    flavor = _TORCHTITAN_FLAVORS.get(workload.model.name)
    if flavor:
        out["model"] = {"name": flavor[0], "flavor": flavor[1]}
    par: dict = {"data_parallel_replicate_degree": replicate, "data_parallel_shard_degree": shard}
    if plan.zero == 3:
        # With PP torchtitan's "default" keeps the weights for the step (apply_fsdp: reshard_after_forward
        # = not pp_enabled), which is what the library models (parallelsel.core.stacks).
        par["fsdp_reshard_after_forward"] = ("default" if plan.pp > 1 else
                                             "always" if plan.reshard_after_forward else "never")
    par["tensor_parallel_degree"] = plan.tp
    if plan.tp_overlap and plan.tp > 1:
        par["enable_async_tensor_parallel"] = True  # job_config.py: effective only with compile
    par["pipeline_parallel_degree"] = plan.pp
    if plan.pp > 1:
        par.update(_torchtitan_pipeline(workload, plan))
    par["context_parallel_degree"] = plan.cp
    par["expert_parallel_degree"] = plan.ep
    if plan.ep > 1 and plan.expert_tp != 1:  # torchtitan's default is 1 (experts not split by TP)
        par["expert_tensor_parallel_degree"] = plan.expert_tp
    out["parallelism"] = par
    # Without PP, local_batch_size is one micro-batch and the trainer accumulates
    # global / (local x dp) of them; with PP the pipeline takes all of a rank's micro-batches at once.
    local = b if plan.pp == 1 else B // plan.dp
    rec = _TORCHTITAN_RECIPES[recipe_key(workload.recipe)]
    if "model" in rec:
        out["model"] = {**out.get("model", {}), **rec["model"]}
    out["training"] = {"local_batch_size": local, "global_batch_size": B, "seq_len": workload.seq_len,
                       **rec["training"]}
    out["optimizer"] = dict(rec["optimizer"])
    out.update({k: dict(v) for k, v in rec.items() if k.startswith("quantize.")})
    if workload.compile:
        out["compile"] = {"enable": True, "components": ["model"] if workload.compile == "model" else ["model", "loss"]}
    if plan.recompute == "op":
        out["activation_checkpoint"] = {"mode": "selective", "selective_ac_option": "op"}
    elif plan.recompute == "full" and plan.recompute_layers is not None:
        # Layer SAC: full AC on every N-th block of a stage (parallelize.py), N chosen so that the stage's
        # floor(layers / N) blocks are the plan's recompute_layers (refusals checks that one exists).
        out["activation_checkpoint"] = {"mode": "selective",
                                        "selective_ac_option": str(_layer_sac_every(workload, plan))}
    else:
        out["activation_checkpoint"] = {"mode": plan.recompute}
    return out


def _deepspeed(workload: Workload, plan: Plan) -> dict:
    """DeepSpeed's JSON config (``runtime/constants.py``, ``runtime/zero/config.py``): batches, precision, optimizer,
    ZeRO stage with overlapped communication."""
    o = {"train_batch_size": workload.global_batch, "train_micro_batch_size_per_gpu": plan.micro_batch,
         "gradient_accumulation_steps": plan.microbatches(workload)}
    o.update(json.loads(json.dumps(_DEEPSPEED_RECIPES[recipe_key(workload.recipe)])))
    zero: dict = {"stage": plan.zero}
    if plan.zero >= 1:
        zero["overlap_comm"] = True  # the estimate hides ZeRO traffic behind compute
    o["zero_optimization"] = zero
    return o


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (str, list, tuple)):
        return json.dumps(list(v) if isinstance(v, tuple) else v)  # JSON strings and arrays are TOML's basic ones
    return str(v)


def header(workload: Workload, plan: Plan, launcher: str, cluster=None) -> list[str]:
    """The export's header as ``key: value`` lines (ASCII): what wrote it, for which plan, model, cluster and launcher."""
    from . import VERSION

    src = LAUNCHER_SOURCES[launcher]
    m, plan = workload.model, with_stack_split(workload, plan)
    moe = f", experts {m.experts} top-{m.top_k}" if m.is_moe else ""
    lines = [f"parallelsel {VERSION} export for {src['name']}",
             f"plan: {plan.label()}",
             f"model: {m.name} (layers {m.layers}, hidden {m.hidden}, heads {m.heads}, kv_heads {m.kv_heads}, "
             f"{'' if m.q_dim == m.hidden else f'head_dim {m.head_dim}, '}"
             f"ffn {m.ffn_hidden}, vocab {m.vocab}{moe}), seq_len {workload.seq_len}, global batch "
             f"{workload.global_batch}, recipe {recipe_key(workload.recipe) or workload.recipe.name}"
             + ("" if workload.attention == "flash" else f", attention {workload.attention}")]  # (the default unsaid)
    if cluster is not None:
        lines.append(f"cluster: {cluster.nodes} x {cluster.gpus_per_node} {cluster.device.name}, "
                     f"intra {cluster.intra.name}, inter {cluster.inter.name}")
    st = STACKS[workload.stack]
    lines += [f"stack: {st.key} (facts of {st.name} {st.version})" + (", torch.compile" + (" (blocks only)" if workload.compile == "model" else "") if workload.compile else ""),
              f"launcher: {src['name']}, options checked against {src['checked']} ({src['files']})"]
    return lines


def export(workload: Workload, plan: Plan, launcher: str, cluster=None) -> str:
    """``plan`` as a Megatron-LM launch script, a torchtitan TOML job file or a DeepSpeed JSON config, after a
    ``#`` comment header (:func:`header`; DeepSpeed reads its config with hjson, which allows comments)."""
    o = options(workload, plan, launcher)
    head = "".join(f"# {line}\n" for line in header(workload, plan, launcher, cluster))
    if launcher == "megatron":
        env = "".join(f"export {k}={v}\n" if v is not None else f"unset {k}\n" for k, v in megatron_env(plan).items())
        gpn = cluster.gpus_per_node if cluster is not None else min(8, plan.gpus)
        gpn = gpn if plan.gpus % gpn == 0 else 1
        parts = [f"torchrun --nnodes {plan.gpus // gpn} --nproc-per-node {gpn} pretrain_gpt.py"]
        parts += [f"  {k}" if v is True else f"  {k} {shlex.quote(str(v))}" for k, v in o.items()]
        return head + env + " \\\n".join(parts) + "\n"
    if launcher == "torchtitan":
        out = []
        for section, kv in o.items():
            out.append(f"[{section}]")
            out.extend(f"{k} = {_toml_value(v)}" for k, v in kv.items())
            out.append("")
        return head + "\n".join(out)
    return head + json.dumps(o, indent=2) + "\n"


# -- the way back: the plan a launcher's file describes ----------------------------------------------
@dataclass(frozen=True)
class LaunchConfig:
    """What a launcher's file says: ``plan`` fields, the job (global batch, sequence length, recipe key),
    the model shape it gives (Transformer fields; empty when the file names none), the world size when the
    file states it (``torchrun --nnodes --nproc-per-node``), and ``notes``: ``(code, values)`` for settings
    that change what runs (a launcher default that differs from the model, a missing option its validator
    demands)."""

    launcher: str
    plan: dict
    global_batch: int | None
    seq_len: int | None
    recipe: str | None
    model: dict
    world: int | None
    notes: tuple = ()
    compile: bool = False
    attention: str | None = None  # the Workload.attention the file asks for; None: it names no kernel
    attention_from: str | None = None  # the setting that says so (a flag or an environment line), for messages


def sniff(text: str) -> str:
    """Which launcher's file ``text`` is: JSON (DeepSpeed), TOML sections (torchtitan), else Megatron flags."""
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")).strip()
    if body.startswith("{"):
        return "deepspeed"
    if re.search(r"^\s*\[[A-Za-z_]+\]\s*$", body, re.M):
        return "torchtitan"
    if "--" in body:
        return "megatron"
    raise ParallelselError("FILE: neither a DeepSpeed JSON config, a torchtitan TOML job file nor Megatron-LM flags")


def read_config(text: str, launcher: str | None = None, world: int | None = None, layers: int | None = None) -> LaunchConfig:
    """The job ``text`` describes (a Megatron-LM launch script or flags file, a torchtitan TOML, a DeepSpeed JSON).

    ``world`` (GPUs) fills in a size the file leaves to the launcher (Megatron's DP from the world size,
    torchtitan's ``data_parallel_shard_degree = -1``); ``layers`` lets torchtitan's layers per stage be read
    as virtual stages when the file names no model flavor.
    """
    if world is not None:
        world = _int("world", world)
    if layers is not None:
        layers = _int("layers", layers)
    launcher = launcher or sniff(text)
    choice("launcher", launcher, LAUNCHERS)
    return {"megatron": _read_megatron, "torchtitan": _read_torchtitan, "deepspeed": _read_deepspeed}[launcher](
        text, world, layers)


def _bad(what: str, value, rule: str):
    raise ParallelselError(f"{what}={value!r}: {rule}")


def _int(name: str, v, minimum: int = 1) -> int:
    """``v`` as an integer of at least ``minimum`` (a degree or a size unless the field allows less), or a
    ValueError naming the field."""
    try:
        out = int(v)
    except (TypeError, ValueError, OverflowError):   # (OverflowError: JSON's Infinity)
        _bad(name, v, "must be an integer")
    if isinstance(v, bool) or out != float(v):
        _bad(name, v, "must be an integer")
    if out < minimum:
        _bad(name, v, f"must be an integer >= {minimum}")
    return out


def _auto_int(name: str, v, auto: str) -> int:
    """A positive integer, or -1 for the launcher's own choice (``auto`` says which)."""
    out = _int(name, v, minimum=-1)
    if out == 0:
        _bad(name, v, f"must be a positive integer or -1 ({auto})")
    return out


def _section(cfg, name: str) -> dict:
    """A table (TOML) or object (JSON) of the config, empty when absent; anything else is refused."""
    sec = cfg.get(name, {})
    if not isinstance(sec, dict):
        _bad(name, sec, "must be a table of settings")
    return sec


def _megatron_words(text: str) -> tuple[dict, dict, int | None]:
    """A launch script's environment lines, its Megatron flags (``--flag value``; a bare switch is True) and the
    world size its ``torchrun --nnodes --nproc-per-node`` gives (None without them)."""
    world = None
    env: dict = {}
    joined = re.sub(r"\\\n", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))
    tokens: list[str] = []
    for line in joined.splitlines():
        try:
            words = shlex.split(line, comments=True)
        except ValueError as exc:
            _bad("FILE", line.strip()[:60], f"cannot be read as shell words ({exc})")
        if len(words) >= 2 and words[0] in ("export", "unset"):
            for w in words[1:]:
                k, _, v = w.partition("=")
                env[k] = v if words[0] == "export" else None
            continue
        tokens += words
    flags: dict = {}
    nodes = nproc = None
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t.startswith("--"):
            k, eq, v = t.partition("=")
            if not eq:
                if i + 1 < len(tokens) and not tokens[i + 1].startswith("--"):
                    v = tokens[i + 1]
                    i += 1
                else:
                    v = True
            if k in ("--nnodes", "--nproc-per-node", "--nproc_per_node") and "pretrain" not in " ".join(flags):
                if k == "--nnodes":
                    nodes = _int(k, str(v).split(":")[-1])
                else:
                    nproc = _int(k, v)
            else:
                flags[k] = v
        i += 1
    if not flags:
        _bad("FILE", text.strip()[:60], "has no Megatron-LM flags (--tensor-model-parallel-size ...)")
    if nodes is not None and nproc is not None:
        world = nodes * nproc
    return env, flags, world


def _megatron_model_fields(g, notes: list) -> dict:
    """The Transformer fields Megatron's model flags give (``g`` reads a flag); appends a note for a default taken."""
    model: dict = {}
    for flag, field in (("--num-layers", "layers"), ("--hidden-size", "hidden"), ("--num-attention-heads", "heads"),
                        ("--ffn-hidden-size", "ffn_hidden"), ("--vocab-size", "vocab"), ("--num-experts", "experts"),
                        ("--moe-router-topk", "top_k"), ("--kv-channels", "head_dim")):
        if g(flag) is not None:
            model[field] = _int(flag, g(flag))
    if model:
        model.update(gated_mlp=bool(g("--swiglu")), bias=not g("--disable-bias-linear"),
                     tied_embeddings=not g("--untie-embeddings-and-output-weights"),
                     norm="rmsnorm" if g("--normalization") == "RMSNorm" else "layernorm",
                     position="rotary" if g("--position-embedding-type", "learned_absolute") == "rope" else "learned")
    if g("--group-query-attention") and g("--num-query-groups") is not None:
        model["kv_heads"] = _int("--num-query-groups", g("--num-query-groups"))
    if g("--num-experts") is not None and g("--moe-router-topk") is None:
        model["top_k"] = 2  # Megatron-LM's default moe_router_topk (transformer_config.py)
        notes.append(("launcher_default", {"option": "--moe-router-topk", "value": 2}))
    return model


def _megatron_split_flags(g, pp: int, n_layers: int | None) -> dict:
    """``{"stage_layers": ...}`` from ``--decoder-first/last-pipeline-num-layers`` or the explicit layout (with its
    virtual stages; empty without them)."""
    if g("--pipeline-model-parallel-layout") is not None and pp > 1:
        return _read_layout(str(g("--pipeline-model-parallel-layout")), pp)
    first, last = g("--decoder-first-pipeline-num-layers"), g("--decoder-last-pipeline-num-layers")
    if pp == 1 or (first is None and last is None):
        return {}
    if n_layers is None:
        _bad("--decoder-first-pipeline-num-layers", first, "needs --num-layers to split the rest")
    ends = {k: None if v is None else _int(f"--decoder-{k}-pipeline-num-layers", v)
            for k, v in (("first", first), ("last", last))}
    return {"stage_layers": megatron_split(n_layers, pp, **ends)}


def _read_megatron(text: str, world: int | None, layers: int | None) -> LaunchConfig:
    env, flags, stated = _megatron_words(text)
    world = stated if stated is not None else world
    g = lambda k, d=None: flags.get(k, d)  # noqa: E731
    notes: list = []
    tp, pp = _int("--tensor-model-parallel-size", g("--tensor-model-parallel-size", 1)), \
        _int("--pipeline-model-parallel-size", g("--pipeline-model-parallel-size", 1))
    cp, ep = _int("--context-parallel-size", g("--context-parallel-size", 1)), \
        _int("--expert-model-parallel-size", g("--expert-model-parallel-size", 1))
    n_layers = _int("--num-layers", g("--num-layers")) if g("--num-layers") is not None else layers
    plan: dict = {"tp": tp, "pp": pp, "cp": cp, "ep": ep,
                  "micro_batch": _int("--micro-batch-size", g("--micro-batch-size", 1)),
                  "sp": bool(g("--sequence-parallel")) and tp > 1}
    if g("--expert-tensor-parallel-size") is not None:
        plan["etp"] = _int("--expert-tensor-parallel-size", g("--expert-tensor-parallel-size"))
    if g("--tp-comm-overlap"):
        plan["tp_overlap"] = True
    if ep > 1 or g("--moe-token-dispatcher-type") == "flex":   # (flex over expert TP alone: EP 1, ETP > 1)
        plan.update(_megatron_moe(g, notes))
    if g("--no-overlap-p2p-communication") and pp > 1:
        plan["p2p_overlap"] = False
    if world is not None:
        if world % (tp * pp * cp):
            _bad("world size", world, f"must be divisible by TP x PP x CP = {tp * pp * cp}")
        plan["dp"] = world // (tp * pp * cp)
    plan.update(_megatron_split_flags(g, pp, n_layers))
    plan.update(_megatron_virtual_stages(g("--num-layers-per-virtual-pipeline-stage"), pp, n_layers))
    gran = g("--recompute-granularity")
    if gran is not None:
        choice("--recompute-granularity", gran, ("full", "selective"))
        plan["recompute"] = gran
        if gran == "full" and g("--recompute-method") == "block":
            plan["recompute_layers"] = _int("--recompute-num-layers", g("--recompute-num-layers", 1))
    if g("--use-megatron-fsdp"):
        strategy = g("--data-parallel-sharding-strategy", "no_shard")
        choice("--data-parallel-sharding-strategy", strategy, ("no_shard", "optim", "optim_grads", "optim_grads_params"))
        plan["zero"] = {"no_shard": 0, "optim": 1, "optim_grads": 2, "optim_grads_params": 3}[strategy]
        if g("--ckpt-format") != "fsdp_dtensor":
            notes.append(("launcher_missing_option", {"option": "--ckpt-format fsdp_dtensor"}))
    elif g("--use-distributed-optimizer"):
        plan["zero"] = 1
        inst = _int("--num-distributed-optimizer-instances", g("--num-distributed-optimizer-instances", 1))
        if inst > 1 and "dp" in plan:
            plan["shard"] = plan["dp"] // inst
    if (tp > 1 or cp > 1) and plan.get("zero", 0) < 2 and env.get("CUDA_DEVICE_MAX_CONNECTIONS", "") != "1" \
            and env and not plan.get("ep_overlap"):
        notes.append(("launcher_missing_option", {"option": "CUDA_DEVICE_MAX_CONNECTIONS=1"}))
    if plan.get("dp", 1) * cp > 1 and not g("--overlap-grad-reduce"):
        notes.append(("launcher_no_overlap", {"option": "--overlap-grad-reduce"}))
    recipe = _megatron_recipe(g)
    if not g("--bf16") and not g("--fp16"):
        notes.append(("launcher_fp32_params", {"option": "--bf16"}))
    model = _megatron_model_fields(g, notes)
    seq = _int("--seq-length", g("--seq-length")) if g("--seq-length") is not None else None
    gb = _int("--global-batch-size", g("--global-batch-size")) if g("--global-batch-size") is not None else None
    attention, said = _megatron_attention(g, env)
    return LaunchConfig("megatron", plan, gb, seq, recipe, model, world, tuple(notes), attention=attention,
                        attention_from=said)


def _megatron_moe(g, notes: list) -> dict:
    """The EP plan fields a Megatron-LM script sets beyond the degrees (``--overlap-moe-expert-parallel-comm``, the
    flex dispatcher's backend: ``--moe-flex-dispatcher-backend``, default deepep, or the deprecated
    ``--moe-enable-deepep``), and a note when its token dispatcher is one the library does not price (``allgather``,
    Megatron-Core's default, transformer_config.py L891 @d98e8a6, or flex's ``ncclep`` backend, priced as the
    all-to-all)."""
    out = {"ep_overlap": True} if g("--overlap-moe-expert-parallel-comm") else {}
    dispatcher = g("--moe-token-dispatcher-type")
    backend = g("--moe-flex-dispatcher-backend", "deepep")
    choice("--moe-flex-dispatcher-backend", backend, ("deepep", "hybridep", "ncclep"))   # transformer_config.py L898
    if g("--moe-enable-deepep"):   # deprecated: flex only, not beside hybridep, then deepep (L1743-1748)
        if dispatcher != "flex" or backend == "hybridep":
            _bad("--moe-enable-deepep", True, "needs --moe-token-dispatcher-type flex and not the hybridep "
                                              "--moe-flex-dispatcher-backend (Megatron-Core refuses it otherwise)")
        backend = "deepep"
    if dispatcher is None:
        notes.append(("launcher_default", {"option": "--moe-token-dispatcher-type", "value": "allgather"}))
    elif dispatcher == "flex":
        if backend in DISPATCHERS:
            out["dispatcher"] = backend
        else:   # ncclep: NCCL's own EP kernels, priced as the all-to-all
            notes.append(("launcher_dispatcher", {"dispatcher": f"flex ({backend})"}))
    elif dispatcher != "alltoall":
        notes.append(("launcher_dispatcher", {"dispatcher": dispatcher}))
    return out


def _megatron_virtual_stages(vp, pp: int, n_layers: int | None) -> dict:
    """The interleaved schedule's plan fields ``--num-layers-per-virtual-pipeline-stage`` gives (none without it)."""
    if vp is None or pp <= 1:
        return {}
    name = "--num-layers-per-virtual-pipeline-stage"
    if n_layers is None:
        _bad(name, vp, "needs --num-layers to count virtual stages")
    per_vp = _int(name, vp)
    if (n_layers // pp) % per_vp:
        _bad(name, vp, f"must divide the {n_layers // pp} layers of a stage")
    return {"schedule": "interleaved", "chunks": n_layers // pp // per_vp}


def _megatron_attention(g, env: dict) -> tuple[str | None, str | None]:
    """The :class:`Workload` ``attention`` a Megatron-LM script asks for, and the setting that says so: its
    ``--attention-backend``, else its Transformer Engine switches (``export NVTE_FUSED_ATTN=0`` and
    ``NVTE_FLASH_ATTN``, each backend on unless set to 0, as language_module.py L126-139 @d98e8a6 pairs them with
    the backends); (None, None) when it says nothing. A flag and switches that disagree are refused, as Megatron
    refuses them (language_module.py L126: "unset NVTE_FLASH_ATTN, NVTE_FUSED_ATTN ...")."""
    backend = g("--attention-backend")
    switches = {k: env[k] for k in ("NVTE_FUSED_ATTN", "NVTE_FLASH_ATTN") if env.get(k) is not None}
    by_env = None
    if switches:
        fused, flash = (switches.get(k, "1") != "0" for k in ("NVTE_FUSED_ATTN", "NVTE_FLASH_ATTN"))
        by_env = "flash" if fused else "fa2" if flash else "standard"
    said_env = " ".join(f"{k}={v}" for k, v in switches.items())
    if backend is None:
        return (by_env, said_env) if switches else (None, None)
    if backend is True:
        _bad("--attention-backend", "(no value)", f"needs one of {', '.join(_MEGATRON_READ_ATTENTION)}")
    choice("--attention-backend", backend, tuple(_MEGATRON_READ_ATTENTION))
    attention = _MEGATRON_READ_ATTENTION[backend]
    if by_env is not None and backend != "auto" and by_env != attention:
        _bad("--attention-backend", backend, f"disagrees with the script's {said_env} (attention {by_env}): "
                                             f"Megatron-LM refuses both set")
    return attention, f"--attention-backend {backend}"


def _megatron_recipe(g) -> str | None:
    """The :data:`parallelsel.RECIPES` key Megatron-LM's precision and optimizer flags give (None: none of them,
    e.g. FP8 with a scaling or gather the catalogue's FP8 recipes do not price)."""
    bf16, opt, fp8 = bool(g("--bf16")), g("--optimizer", "adam"), g("--fp8-format")
    if opt == "sgd":
        return "sgd-momentum" if not bf16 and fp8 is None else None
    if opt != "adam":
        return None
    if fp8 is not None:
        found = {k: v for k, v in _MEGATRON_RECIPES.items() if "--fp8-format" in v}
        flags = {f: g(f) for f in ("--bf16", "--grad-reduce-in-bf16", "--fp8-format", "--fp8-param-gather")}
        scale = g("--fp8-recipe", "delayed")
        return next((k for k, v in found.items() if all(v.get(f) == (x or None) for f, x in flags.items())
                     and v.get("--fp8-recipe", "delayed") == scale), None)
    return "fp32-adam" if not bf16 else "bf16-adam" if g("--grad-reduce-in-bf16") else "bf16-adam-fp32grad"


def _torchtitan_stages(par: dict, plan: dict, layers: int | None, local: int) -> list:
    """Schedule, micro-batch and virtual stages from ``[parallelism]`` into ``plan``, counted as ``pipeline_llm``
    counts them (embedding and output weigh ``first/last_stage_less_layers`` layers); returns the notes."""
    pp = plan["pp"]
    if pp == 1:
        plan["micro_batch"] = local
        return []
    sched = par.get("pipeline_parallel_schedule", "1F1B")
    kinds = {v: k for k, v in _TORCH_SCHEDULES.items()}
    if sched not in kinds:
        _bad("pipeline_parallel_schedule", sched, f"parallelsel models {', '.join(kinds)}")
    plan["schedule"] = kinds[sched]
    plan["micro_batch"] = _int("pipeline_parallel_microbatch_size", par.get("pipeline_parallel_microbatch_size", 1))
    lps = par.get("pipeline_parallel_layers_per_stage")
    first = _int("first_stage_less_layers", par.get("pipeline_parallel_first_stage_less_layers", 1), minimum=0)
    last = _int("last_stage_less_layers", par.get("pipeline_parallel_last_stage_less_layers", 1), minimum=0)
    single = plan["schedule"] != "interleaved"  # GPipe and 1F1B run one stage a rank (PipelineScheduleSingle)
    plan["chunks"] = 1 if single else 2  # pipeline_llm's stages a rank without layers_per_stage
    if lps is not None and layers is not None:
        # pipeline_llm: ceil((layers + first + last) / layers_per_stage) virtual stages, a multiple of the PP
        # degree; one a rank for a single-stage schedule, at least two for a multi-stage one -- else it refuses.
        lps = _int("pipeline_parallel_layers_per_stage", lps)
        stages = -(-(layers + first + last) // lps)
        per_rank, rem = divmod(stages, pp)
        if rem or (per_rank != 1 if single else per_rank < 2):
            _bad("pipeline_parallel_layers_per_stage", lps, f"gives {stages} stages for {layers} layers (embedding and "
                 f"output weigh {first} and {last}): torchtitan needs a multiple of pipeline_parallel_degree={pp}, "
                 f"{'one' if single else 'two or more'} a rank with {sched}")
        plan["chunks"] = per_rank
    notes = []
    if layers is not None:
        # torchtitan spreads the layers over its virtual stages itself (generate_llm_fqn_per_model_part), the
        # embedding and the output weighing first/last_stage_less_layers (default 1 each): not evenly by default.
        try:
            split = rank_layers(torchtitan_split(layers, pp * plan["chunks"], first, last), pp, plan["schedule"])
        except ParallelselError:
            _bad("pipeline_parallel_degree", pp, f"leaves a stage of the {layers} layers empty")
        if len(set(split)) > 1:
            plan["stage_layers"] = split
        if first or last:
            notes.append(("launcher_stage_weights", {"first": first, "last": last}))
    return notes


def _titan_degrees(par: dict, world: int | None) -> tuple[dict, int, int]:
    """The plan degrees a torchtitan ``[parallelism]`` section sets, with its replicate and shard degrees."""
    rep = _int("data_parallel_replicate_degree", par.get("data_parallel_replicate_degree", 1))
    shard = _auto_int("data_parallel_shard_degree", par.get("data_parallel_shard_degree", -1), "the ranks left over")
    tp = _int("tensor_parallel_degree", par.get("tensor_parallel_degree", 1))
    pp = _int("pipeline_parallel_degree", par.get("pipeline_parallel_degree", 1))
    cp = _int("context_parallel_degree", par.get("context_parallel_degree", 1))
    ep = _int("expert_parallel_degree", par.get("expert_parallel_degree", 1))
    if shard < 0:  # parallel_dims.py: -1 takes the ranks left over
        if world is None:
            _bad("data_parallel_shard_degree", shard, "-1 needs the world size (give --gpus or --nodes)")
        shard = world // (rep * cp * tp * pp)
        if shard < 1:
            _bad("world", world, f"leaves no ranks for data_parallel_shard_degree=-1 (replicate x cp x tp x pp = "
                                 f"{rep * cp * tp * pp})")
    plan: dict = {"dp": rep * shard, "tp": tp, "pp": pp, "cp": cp, "ep": ep, "sp": tp > 1}
    if ep > 1:  # expert_tensor_parallel_degree: default 1, the experts not split by TP
        plan["etp"] = _int("expert_tensor_parallel_degree", par.get("expert_tensor_parallel_degree", 1))
    return plan, rep, shard


def _torchtitan_dispatcher(par: dict, notes: list) -> None:
    """Note a torchtitan job's DeepEP backend (``expert_parallel_comm_backend``, job_config.py L474 @238fa995), which
    only its DeepSeek-V3 model code runs (``models/deepseek_v3/infra/parallelize.py`` L99-121; the other MoE models
    build the plain all-to-all MoE): priced as the all-to-all."""
    backend = par.get("expert_parallel_comm_backend", "standard")
    choice("expert_parallel_comm_backend", backend, ("standard", "deepep"))
    if backend == "deepep":
        notes.append(("launcher_dispatcher", {"dispatcher": "deepep"}))


def _read_torchtitan(text: str, world: int | None, layers: int | None) -> LaunchConfig:
    import tomllib

    try:
        cfg = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        _bad("FILE", "TOML", f"cannot be parsed ({exc})")
    par, tr = _section(cfg, "parallelism"), _section(cfg, "training")
    ac = _section(cfg, "activation_checkpoint")
    plan, rep, shard = _titan_degrees(par, world)
    tp, pp = plan["tp"], plan["pp"]
    if par.get("enable_async_tensor_parallel") and tp > 1:
        plan["tp_overlap"] = True
    if shard > 1:
        plan["zero"] = 3
        if rep > 1:
            plan["shard"] = shard
        if pp == 1 and par.get("fsdp_reshard_after_forward", "default") == "never":
            plan["reshard_after_forward"] = False
    local = _int("local_batch_size", tr.get("local_batch_size", 8))
    flavor = (_section(cfg, "model").get("name"), _section(cfg, "model").get("flavor"))
    model: dict = {}
    for name, key in _TORCHTITAN_FLAVORS.items():
        if key == flavor:
            from .model import MODELS

            m = next(m for m in MODELS.values() if m.name == name)
            model = {"preset": next(k for k, v in MODELS.items() if v is m)}
            layers = m.layers
    return_notes = _torchtitan_stages(par, plan, layers, local)
    _torchtitan_dispatcher(par, return_notes)
    mode = ac.get("mode", "selective")  # job_config.py ActivationCheckpoint.mode default
    if mode == "selective":
        opt = str(ac.get("selective_ac_option", "2"))
        if opt == "op":
            plan["recompute"] = "op"
        elif opt.isdigit() and int(opt) >= 1 and layers is not None:
            per = layers // (plan["pp"] * plan.get("chunks", 1))  # every N-th block of a stage, full AC
            plan.update(recompute="full", recompute_layers=max(1, per // int(opt)))
        else:
            _bad("activation_checkpoint.selective_ac_option", opt, "must be 'op' or a positive integer N (full AC on "
                 "every N-th block; the model's layers must be known)")
    else:
        choice("activation_checkpoint.mode", mode, ("none", "full"))
        plan["recompute"] = mode
    gb = _auto_int("global_batch_size", tr.get("global_batch_size", -1), "local_batch_size x DP")
    gb = gb if gb > 0 else local * plan["dp"]  # train.py: defaults to local_batch_size x DP degree
    recipe = _torchtitan_recipe(cfg, tr)
    seq = _int("seq_len", tr.get("seq_len", 2048))
    return LaunchConfig("torchtitan", plan, gb, seq, recipe, model, world, tuple(return_notes),
                        compile=_titan_compile(_section(cfg, "compile")))


def _torchtitan_recipe(cfg: dict, tr: dict) -> str | None:
    """The :data:`parallelsel.RECIPES` key of a torchtitan job's precision: its FSDP compute dtype, and Float8Linear
    priced as fp8-compute-fp32-adam only as the benchmarks ran it (tensorwise scaling, FP8 all-gather)."""
    recipe = "bf16-compute-fp32-adam" if tr.get("mixed_precision_param", "bfloat16") == "bfloat16" else "fp32-adam"
    converters = _section(cfg, "model").get("converters", ())
    if not isinstance(converters, list) or not set(map(str, converters)) & set(_TITAN_FLOAT8):
        return recipe
    f8 = _section(_section(_section(cfg, "quantize"), "linear"), "float8") or _section(cfg, "float8")
    same = all(f8.get(k) == v for k, v in _TORCHTITAN_RECIPES["fp8-compute-fp32-adam"]["quantize.linear.float8"]
               .items() if k != "filter_fqns") and f8.get("recipe_name") in (None, "tensorwise")
    return "fp8-compute-fp32-adam" if same and recipe == "bf16-compute-fp32-adam" else None


def _titan_compile(section: dict):
    """``Workload(compile=)`` from torchtitan's ``[compile]``: off, the blocks only (``components = ["model"]``),
    or model and loss (the default components, ``torchtitan/config/configs.py``)."""
    if not section.get("enable", False):
        return False
    parts = section.get("components", ["model", "loss"])
    if not isinstance(parts, list) or "model" not in parts:
        _bad("compile.components", parts, "must include 'model' (the library times the model's blocks compiled)")
    return True if "loss" in parts else "model"


def _read_deepspeed(text: str, world: int | None, layers: int | None) -> LaunchConfig:
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    try:
        cfg = json.loads(body)
    except json.JSONDecodeError as exc:
        _bad("FILE", "JSON", f"cannot be parsed ({exc})")
    if not isinstance(cfg, dict):
        _bad("FILE", type(cfg).__name__, "a DeepSpeed config is a JSON object")
    tp = _int("tensor_parallel.autotp_size", _section(cfg, "tensor_parallel").get("autotp_size", 1) or 1)
    mb = cfg.get("train_micro_batch_size_per_gpu")
    gas = cfg.get("gradient_accumulation_steps")
    tb = cfg.get("train_batch_size")
    dp = None if world is None else world // tp
    if tb is not None and mb is not None and gas is not None:
        per_rank = _int("train_micro_batch_size_per_gpu", mb) * _int("gradient_accumulation_steps", gas)
        if _int("train_batch_size", tb) % per_rank:
            _bad("train_batch_size", tb, f"must be micro-batch x accumulation steps ({per_rank}) x the DP ranks "
                                         f"(runtime/config.py _batch_assertion)")
        dp = tb // per_rank
    elif world is None:
        _bad("FILE", "DeepSpeed config", "needs train_batch_size, train_micro_batch_size_per_gpu and "
             "gradient_accumulation_steps, or the world size (--gpus)")
    if dp is not None and dp < 1:
        _bad("world", world, f"is smaller than tensor_parallel.autotp_size={tp}")
    if mb is None:
        mb = _int("train_batch_size", tb) // (dp * _int("gradient_accumulation_steps", gas or 1))
    if tb is None:
        tb = _int("train_micro_batch_size_per_gpu", mb) * _int("gradient_accumulation_steps", gas or 1) * dp
    plan = {"dp": dp, "tp": tp, "micro_batch": _int("train_micro_batch_size_per_gpu", mb),
            "zero": _int("zero_optimization.stage", _section(cfg, "zero_optimization").get("stage", 0), minimum=0)}
    choice("zero_optimization.stage", plan["zero"], (0, 1, 2, 3))
    bf16 = bool(_section(cfg, "bf16").get("enabled", False))
    grad = _section(cfg, "data_types").get("grad_accum_dtype")
    opt = str(_section(cfg, "optimizer").get("type", "Adam")).lower()
    recipe = None if opt not in ("adam", "adamw") else (
        "fp32-adam" if not bf16 else "bf16-adam-fp32grad" if grad == "fp32" else "bf16-adam")
    notes = []
    if plan["zero"] >= 1 and not _section(cfg, "zero_optimization").get("overlap_comm", False):
        notes.append(("launcher_no_overlap", {"option": "zero_optimization.overlap_comm"}))
    return LaunchConfig("deepspeed", plan, _int("train_batch_size", tb), None, recipe, {}, world if world else
                        dp * tp, tuple(notes))
