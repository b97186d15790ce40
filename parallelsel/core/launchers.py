"""Hand a plan to the launcher that will run it: Megatron-LM arguments, a torchtitan TOML section, a DeepSpeed JSON config.

Each export sets only the options a launcher has for what a :class:`~parallelsel.Plan` decides (degrees,
ZeRO/FSDP, micro-batch and global batch, sequence parallelism, recomputation, schedule); the model's
own shape, data and optimizer settings stay the user's. A plan that a launcher cannot express is
refused: :func:`refusals` lists why, as ``(code, values)`` pairs, and :func:`export` raises
:class:`LauncherError` carrying them.

Option names are the launchers' own, checked against their source at these commits:

* Megatron-LM ``megatron/training/arguments.py`` (NVIDIA/Megatron-LM d98e8a64, 2026-08-22). Parallel
  sizes come from ``ModelParallelConfig`` fields turned into flags by ``ArgumentGroupFactory``
  (``--tensor-model-parallel-size``, ``--pipeline-model-parallel-size``, ``--sequence-parallel``,
  ``--context-parallel-size``, ``--expert-model-parallel-size``), batch sizes from ``TrainingConfig``
  (``--micro-batch-size``, ``--global-batch-size``), recomputation from ``TransformerConfig``
  (``--recompute-granularity {full,selective}``, ``--recompute-method {uniform,block}``,
  ``--recompute-num-layers``). ``virtual_pipeline_model_parallel_size`` is excluded from the CLI;
  interleaving is asked for with ``--num-layers-per-virtual-pipeline-stage``. ZeRO-1 is
  ``--use-distributed-optimizer`` (``--num-distributed-optimizer-instances`` replicas for a partial
  shard); ZeRO-2/3 is Megatron-FSDP, ``--use-megatron-fsdp`` with ``--data-parallel-sharding-strategy
  {optim_grads, optim_grads_params}``. Megatron-LM's schedules are 1F1B and interleaved 1F1B.
* torchtitan ``torchtitan/config/job_config.py`` (pytorch/torchtitan 238fa995, 2026-02-23, the last
  version read from TOML files; commit 9810191b moved the job config to Python dataclasses with the
  same ``ParallelismConfig`` field names): ``[parallelism]`` ``data_parallel_replicate_degree``,
  ``data_parallel_shard_degree``, ``fsdp_reshard_after_forward``, ``tensor_parallel_degree``,
  ``pipeline_parallel_degree``, ``pipeline_parallel_schedule``, ``pipeline_parallel_layers_per_stage``,
  ``pipeline_parallel_microbatch_size``, ``context_parallel_degree``, ``expert_parallel_degree``;
  ``[training]`` ``local_batch_size``, ``global_batch_size``, ``seq_len``; ``[activation_checkpoint]``
  ``mode {selective, full, none}`` with ``selective_ac_option = "op"`` (op-level selective checkpointing;
  its default ``"2"`` would checkpoint every second whole layer instead). torchtitan's TP always shards the norms by sequence (its TP plan
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

from ._check import ParallelselError, choice
from .plan import Plan, Workload

__all__ = ["LAUNCHERS", "LauncherError", "export", "options", "refusals"]

LAUNCHERS = ("megatron", "torchtitan", "deepspeed")

_TORCH_SCHEDULES = {"gpipe": "GPipe", "1f1b": "1F1B", "interleaved": "Interleaved1F1B"}
"""Our schedule kinds -> torch.distributed.pipelining schedule class names that torchtitan accepts."""


class LauncherError(ParallelselError):
    """A plan the launcher cannot run; ``reasons`` holds ``(code, values)`` pairs."""

    def __init__(self, launcher: str, reasons):
        self.launcher = launcher
        self.reasons = tuple(reasons)
        super().__init__(f"launcher={launcher!r} cannot run this plan: "
                         + "; ".join(f"{c} {v}" for c, v in self.reasons))


def _ep(plan: Plan) -> int:
    return plan.ep


def _cp(plan: Plan) -> int:
    return plan.cp


def refusals(workload: Workload, plan: Plan, launcher: str) -> tuple[tuple[str, dict], ...]:
    """Why ``launcher`` cannot run ``plan`` (empty when it can), each as ``(code, values)``; rules in the module docstring."""
    choice("launcher", launcher, LAUNCHERS)
    out: list[tuple[str, dict]] = []
    sharded_part = plan.zero > 0 and plan.shard is not None and plan.shard < plan.dp
    # PyTorch FSDP's options (Plan docstring): torchtitan maps reshard_after_forward=False to
    # fsdp_reshard_after_forward="never" and has no switch to skip the per-micro-batch gradient sync;
    # DeepSpeed asserts no_sync is incompatible with ZeRO-2/3 (DeepSpeedEngine.no_sync) and has no
    # reshard-after-forward switch; the Megatron-FSDP flags written here have neither.
    fsdp_opts = [o for o, on in (("reshard_after_forward", not plan.reshard_after_forward), ("no_sync", plan.no_sync))
                 if on and plan.pp == 1 and not (launcher == "torchtitan" and o == "reshard_after_forward")]
    out += [("launcher_fsdp_option", {"option": o}) for o in fsdp_opts]
    if launcher == "megatron":
        if plan.pp > 1 and plan.schedule not in ("1f1b", "interleaved"):
            out.append(("launcher_schedule", {"schedule": plan.schedule, "supported": ["1f1b", "interleaved"]}))
        if sharded_part and plan.zero >= 2:
            out.append(("launcher_hsdp_zero", {"zero": plan.zero, "shard": plan.shard, "supported_zero": [1]}))
    elif launcher == "torchtitan":
        if plan.pp > 1 and plan.schedule not in _TORCH_SCHEDULES:
            out.append(("launcher_schedule", {"schedule": plan.schedule, "supported": list(_TORCH_SCHEDULES)}))
        if plan.zero == 1:
            out.append(("launcher_zero", {"zero": 1, "supported": [0, 2, 3]}))
        if plan.tp > 1 and not plan.sp:
            out.append(("launcher_tp_without_sp", {"tp": plan.tp}))
        if plan.zero == 0 and plan.dp > 1 and plan.gpus != plan.dp:
            out.append(("launcher_ddp_multi_dim", {"dp": plan.dp, "tp": plan.tp, "pp": plan.pp}))
    else:
        if plan.pp > 1:
            out.append(("launcher_pp_in_code", {"pp": plan.pp}))
        if plan.tp > 1:
            out.append(("launcher_tp_in_code", {"tp": plan.tp}))
        if plan.recompute != "none":
            out.append(("launcher_recompute_in_code", {"recompute": plan.recompute}))
        if sharded_part:
            out.append(("launcher_hsdp", {"shard": plan.shard, "dp": plan.dp}))
        if _ep(plan) > 1 or _cp(plan) > 1:
            out.append(("launcher_ep_cp_in_code", {"ep": _ep(plan), "cp": _cp(plan)}))
    return tuple(out)


def options(workload: Workload, plan: Plan, launcher: str) -> dict:
    """The launcher's options for ``plan``, as data (flag -> value, or section -> {key: value}); raises if refused.

    Megatron flags map to a value, or to ``True`` for a switch given without one.
    """
    if not isinstance(workload, Workload):
        raise ParallelselError(f"workload={workload!r}: must be a Workload")
    if not isinstance(plan, Plan):
        raise ParallelselError(f"plan={plan!r}: must be a Plan")
    bad = refusals(workload, plan, launcher)
    if bad:
        raise LauncherError(launcher, bad)
    return {"megatron": _megatron, "torchtitan": _torchtitan, "deepspeed": _deepspeed}[launcher](workload, plan)


def _megatron(workload: Workload, plan: Plan) -> dict:
    """Megatron-LM flags (``arguments.py``): sizes, batches, SP, recomputation, distributed optimizer or Megatron-FSDP."""
    m = workload.model
    o: dict = {"--tensor-model-parallel-size": plan.tp, "--pipeline-model-parallel-size": plan.pp}
    if plan.pp > 1 and plan.schedule == "interleaved" and plan.chunks > 1:
        o["--num-layers-per-virtual-pipeline-stage"] = m.layers // (plan.pp * plan.chunks)
    if _cp(plan) > 1:
        o["--context-parallel-size"] = _cp(plan)
    if _ep(plan) > 1:
        o["--expert-model-parallel-size"] = _ep(plan)
        o["--num-experts"] = m.experts
    o["--micro-batch-size"] = plan.micro_batch
    o["--global-batch-size"] = workload.global_batch
    if plan.sp and plan.tp > 1:
        o["--sequence-parallel"] = True
    if plan.recompute == "selective":
        o["--recompute-granularity"] = "selective"
    elif plan.recompute == "full":
        o["--recompute-granularity"] = "full"
        o["--recompute-method"] = "uniform"
        o["--recompute-num-layers"] = 1
    if plan.zero == 1:
        o["--use-distributed-optimizer"] = True
        if plan.shard is not None and plan.shard < plan.dp:
            o["--num-distributed-optimizer-instances"] = plan.dp // plan.shard
    elif plan.zero >= 2:
        o["--use-megatron-fsdp"] = True
        o["--data-parallel-sharding-strategy"] = {2: "optim_grads", 3: "optim_grads_params"}[plan.zero]
    return o


def _torchtitan(workload: Workload, plan: Plan) -> dict:
    """torchtitan's ``[parallelism]``, ``[training]`` and ``[activation_checkpoint]`` sections (``job_config.py``)."""
    b, B = plan.micro_batch, workload.global_batch
    if plan.zero == 0:
        replicate, shard = plan.dp, 1
    else:
        shard = plan.shard_size
        replicate = plan.dp // shard
    par: dict = {"data_parallel_replicate_degree": replicate, "data_parallel_shard_degree": shard}
    if plan.zero == 2:
        par["fsdp_reshard_after_forward"] = "never"
    elif plan.zero == 3:
        par["fsdp_reshard_after_forward"] = "always" if plan.reshard_after_forward else "never"
    par["tensor_parallel_degree"] = plan.tp
    par["pipeline_parallel_degree"] = plan.pp
    if plan.pp > 1:
        par["pipeline_parallel_schedule"] = _TORCH_SCHEDULES[plan.schedule]
        par["pipeline_parallel_layers_per_stage"] = workload.model.layers // (plan.pp * plan.chunks)
        par["pipeline_parallel_microbatch_size"] = b
    par["context_parallel_degree"] = _cp(plan)
    par["expert_parallel_degree"] = _ep(plan)
    # Without PP, local_batch_size is one micro-batch and the trainer accumulates
    # global / (local x dp) of them; with PP the pipeline takes all of a rank's micro-batches at once.
    local = b if plan.pp == 1 else B // plan.dp
    return {"parallelism": par,
            "training": {"local_batch_size": local, "global_batch_size": B, "seq_len": workload.seq_len},
            "activation_checkpoint": ({"mode": "selective", "selective_ac_option": "op"}
                                      if plan.recompute == "selective" else {"mode": plan.recompute})}


def _deepspeed(workload: Workload, plan: Plan) -> dict:
    """DeepSpeed's JSON config (``runtime/constants.py``, ``runtime/zero/config.py``): batches, bf16, ZeRO stage."""
    return {"train_batch_size": workload.global_batch, "train_micro_batch_size_per_gpu": plan.micro_batch,
            "gradient_accumulation_steps": plan.microbatches(workload),
            "bf16": {"enabled": True}, "zero_optimization": {"stage": plan.zero}}


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    return str(v)


def export(workload: Workload, plan: Plan, launcher: str) -> str:
    """``plan`` as Megatron-LM command-line arguments, a torchtitan TOML fragment or a DeepSpeed JSON config."""
    o = options(workload, plan, launcher)
    if launcher == "megatron":
        parts = [k if v is True else f"{k} {v}" for k, v in o.items()]
        return " \\\n".join(parts) + "\n"
    if launcher == "torchtitan":
        out = []
        for section, kv in o.items():
            out.append(f"[{section}]")
            out.extend(f"{k} = {_toml_value(v)}" for k, v in kv.items())
            out.append("")
        return "\n".join(out)
    return json.dumps(o, indent=2) + "\n"
