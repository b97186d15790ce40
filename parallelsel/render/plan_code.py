"""A plan as PyTorch code: the device mesh, the pipeline split, the TP plan, FSDP per block, the pipeline stage and schedule.

The code is generated from a :class:`~parallelsel.Plan` and a :class:`~parallelsel.Workload`; it is a skeleton that
parses (``ast``) and uses only names that exist in the torch version recorded in ``parallelsel/course/data/torch_names.json``
(``tools/record_torch_names.py`` imports each of them and records its parameters; the test
``tests/test_plan_code.py`` checks every import, call and keyword of the generated code against that record).
The model itself is the reader's: the code assumes a Llama-style module with torchtitan's attribute names
(``tok_embeddings``, ``layers`` as an ``nn.ModuleDict`` keyed "0".."L-1", each block with ``attention_norm``,
``attention.wq/wk/wv/wo``, ``ffn_norm``, ``feed_forward.w1/w2/w3``; then ``norm`` and ``output``), the naming of
torchtitan's ``models/llama3/model/model.py`` (pytorch/torchtitan 238fa995).

What each piece does, with its source:

* ``init_device_mesh(device_type, mesh_shape, mesh_dim_names=...)`` (``torch/distributed/device_mesh.py``): the ranks laid
  out as an n-d array; the last dimension is the fastest-varying, so TP (last) gets consecutive ranks, i.e. one node's
  GPUs under torchrun's rank order (the placement :func:`parallelsel.core.placement.placement` assumes).
* Pipeline split by deleting the other stages' blocks (torchtitan's ``pipeline_module_split`` does the same), stages
  laid out loop-style ``rank + k * pp`` for interleaved schedules (``torch/distributed/pipelining/schedules.py``,
  ``ScheduleInterleaved1F1B`` takes a rank's stages in that order).
* TP plan per block: Q/K/V and the MLP's input matrices column-wise, the output projections row-wise
  (Megatron-LM, Shoeybi et al. 2019 §3); with sequence parallelism (Korthikanti et al. 2022 §4.2) the norms run on
  sequence shards (``SequenceParallel``) and the row-wise outputs reduce-scatter to ``Shard(1)``.
* ``fully_shard`` on each block, then on the root (``torch/distributed/fsdp/_fully_shard/_fully_shard.py``):
  ``reshard_after_forward=True`` is ZeRO-3, ``False`` keeps the gathered weights until the backward (ZeRO-2's memory).
"""

from __future__ import annotations

from ..core._check import ParallelselError
from ..core.launchers import TORCH_SCHEDULES
from ..core.plan import Plan, Workload, with_stack_split

__all__ = ["METHOD_OWNERS", "SCHEDULE_CLASSES", "torch_sections", "torch_code"]

SCHEDULE_CLASSES = {kind: "Schedule" + name for kind, name in TORCH_SCHEDULES.items()}
"""Our schedule kinds -> the ``torch.distributed.pipelining`` class that runs them (ScheduleGPipe, Schedule1F1B: one stage
per rank; ScheduleInterleaved1F1B: several), from the schedule names torchtitan takes (core/launchers.py)."""

METHOD_OWNERS = {"mesh": "torch.distributed.device_mesh.DeviceMesh"}
"""Receivers of method calls in the generated code and the class whose method is called (checked like the imports)."""


def _check(workload: Workload, plan: Plan) -> None:
    if not isinstance(workload, Workload):
        raise ParallelselError(f"workload={workload!r}: must be a Workload")
    if not isinstance(plan, Plan):
        raise ParallelselError(f"plan={plan!r}: must be a Plan")
    if plan.zero == 1 or (plan.zero == 0 and plan.dp > 1):
        raise ParallelselError(f"plan.zero={plan.zero} with dp={plan.dp}: this generator writes FSDP2 (fully_shard), which "
                               "shards weights too (ZeRO-2/3); use the Megatron-LM export for ZeRO-0/1 data parallelism")
    if plan.shard is not None and plan.shard < plan.dp:
        raise ParallelselError(f"plan.shard={plan.shard}: hybrid sharding (HSDP) is not generated; use the torchtitan export")
    if plan.pp > 1 and plan.schedule not in SCHEDULE_CLASSES:
        raise ParallelselError(f"plan.schedule={plan.schedule!r}: must be one of {', '.join(SCHEDULE_CLASSES)} here")
    if plan.stage_layers is not None and plan.chunks > 1:
        raise ParallelselError(f"plan.stage_layers={plan.stage_layers}: an uneven split over interleaved chunks is not generated")
    if plan.ep > 1 or plan.cp > 1:
        raise ParallelselError(f"plan.ep={plan.ep}, plan.cp={plan.cp}: expert and context parallelism are not generated")


def _imports(plan: Plan, cls: str) -> list[str]:
    out = ["import os", "", "import torch", "from torch.distributed.device_mesh import init_device_mesh"]
    if plan.dp > 1 or plan.zero:
        out.append("from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard")
    if plan.tp > 1:
        names = ["ColwiseParallel", "RowwiseParallel", "parallelize_module"]
        if plan.sp:
            names = ["ColwiseParallel", "PrepareModuleInput", "RowwiseParallel", "SequenceParallel", "parallelize_module"]
        out.append(f"from torch.distributed.tensor.parallel import {', '.join(names)}")
        if plan.sp:
            out.append("from torch.distributed.tensor import Replicate, Shard")
    if plan.recompute == "full":
        out.append("from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper")
    if plan.pp > 1:
        out.append(f"from torch.distributed.pipelining import PipelineStage, {cls}")
    return out + ["", "from my_model import Transformer, loss_fn  # your model (see the page for the attribute names)"]


def _mesh(plan: Plan) -> list[str]:
    dims = [(n, d) for n, d in (("pp", plan.pp), ("dp", plan.dp), ("tp", plan.tp)) if d > 1] or [("dp", 1)]
    comma = "," if len(dims) == 1 else ""
    shape = ", ".join(str(d) for _, d in dims) + comma
    names = ", ".join(f'"{n}"' for n, _ in dims) + comma
    return [f"# {plan.gpus} GPUs = " + " x ".join(f"{n} {d}" for n, d in dims) + "; the last dimension varies fastest",
            'device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))',
            "torch.cuda.set_device(device)",
            f'mesh = init_device_mesh("cuda", ({shape}), mesh_dim_names=({names}))',
            "model = Transformer()  # build on the meta device in practice, then materialise after sharding"]


def _pipeline(plan: Plan, layers: int, chunks: int) -> list[str]:
    if plan.pp == 1:
        return ["parts = [model]"]
    stages = plan.pp * chunks
    per = layers // stages
    split = plan.stage_layers or (per,) * stages
    bounds = [sum(split[:k]) for k in range(stages + 1)]
    keep = (f"    keep = range(stage * {per}, (stage + 1) * {per})" if len(set(split)) == 1
            else f"    keep = range({bounds}[stage], {bounds}[stage + 1])  # uneven split: {list(split)} blocks per stage")
    head = (f"# {layers} blocks in {stages} stages of {per}" if len(set(split)) == 1
            else f"# {layers} blocks in {stages} stages of {', '.join(map(str, split))}")
    return [head + (f"; this rank runs stages rank + k * {plan.pp}" if chunks > 1 else ""),
            'pp_rank = mesh["pp"].get_local_rank()',
            f"stage_ids = [pp_rank + k * {plan.pp} for k in range({chunks})]" if chunks > 1 else "stage_ids = [pp_rank]",
            "", "",
            "def stage_module(full, stage):",
            keep,
            "    for name in list(full.layers.keys()):",
            "        if int(name) not in keep:",
            "            del full.layers[name]",
            "    if stage != 0:",
            "        full.tok_embeddings = None",
            f"    if stage != {stages - 1}:",
            "        full.norm = None",
            "        full.output = None",
            "    return full",
            "", "",
            ("parts = [stage_module(Transformer(), s) for s in stage_ids]" if chunks > 1
             else "parts = [stage_module(model, pp_rank)]")]


def _tp(plan: Plan, heads: int) -> list[str]:
    if plan.tp == 1:
        return []
    out = "RowwiseParallel(output_layouts=Shard(1))" if plan.sp else "RowwiseParallel()"
    lines = ["block_plan = {"]
    if plan.sp:
        lines += ['    "attention_norm": SequenceParallel(),',
                  '    "attention": PrepareModuleInput(input_layouts=(Shard(1), None), desired_input_layouts=(Replicate(), None)),']
    lines += [f'    "attention.{w}": ColwiseParallel(),' for w in ("wq", "wk", "wv")] + [f'    "attention.wo": {out},']
    if plan.sp:
        lines += ['    "ffn_norm": SequenceParallel(),',
                  '    "feed_forward": PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),)),']
    lines += ['    "feed_forward.w1": ColwiseParallel(),', f'    "feed_forward.w2": {out},',
              '    "feed_forward.w3": ColwiseParallel(),', "}"]
    return lines + ["for part in parts:",
                    "    for block in part.layers.values():",
                    f"        # each rank keeps {heads // plan.tp} of {heads} heads; the model's attention must use the local count",
                    '        parallelize_module(block, device_mesh=mesh["tp"], parallelize_plan=block_plan)']


def _fsdp(plan: Plan) -> list[str]:
    out = []
    if plan.recompute == "full":
        out += ["for part in parts:",
                "    for name, block in list(part.layers.items()):",
                "        part.layers[name] = checkpoint_wrapper(block)  # full recompute: keep only each block's input"]
    elif plan.recompute != "none":
        out += [f"# recompute={plan.recompute!r}: op-level selective checkpointing is torchtitan's "
                '[activation_checkpoint] mode = "selective" (see the TOML below)']
    if plan.dp > 1 or plan.zero:
        reshard = plan.zero == 3 and plan.reshard_after_forward
        out += ["mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)",
                "for part in parts:",
                "    for block in part.layers.values():",
                f'        fully_shard(block, mesh=mesh["dp"], mp_policy=mp, reshard_after_forward={reshard})',
                f'    fully_shard(part, mesh=mesh["dp"], mp_policy=mp, reshard_after_forward={reshard})']
    return out


def _schedule(workload: Workload, plan: Plan, cls: str, chunks: int) -> list[str]:
    if plan.pp == 1:
        return []
    mb = plan.microbatches(workload)
    first = "stages" if chunks > 1 else "stages[0]"
    return ["stages = [",
            f'    PipelineStage(part, stage_index=s, num_stages={plan.pp * chunks}, device=device, group=mesh["pp"].get_group())',
            "    for part, s in zip(parts, stage_ids)",
            "]",
            f"# global batch {workload.global_batch} = dp {plan.dp} x {mb} micro-batches of {plan.micro_batch}",
            f"schedule = {cls}({first}, n_microbatches={mb}, loss_fn=loss_fn)",
            "# each step, on every pp rank: schedule.step(tokens) on stage 0, schedule.step(target=labels) on the last"]


def torch_sections(workload: Workload, plan: Plan) -> dict[str, str]:
    """The code, section by section (``imports``, ``mesh``, ``pipeline``, ``tp``, ``fsdp``, ``schedule``); sections a plan
    does not need are empty. Joined in that order they are one module (:func:`torch_code`)."""
    _check(workload, plan)
    plan = with_stack_split(workload, plan)  # layers that do not divide: the split the stack builds
    cls = SCHEDULE_CLASSES.get(plan.schedule, "Schedule1F1B")
    chunks = plan.chunks if plan.pp > 1 and plan.schedule == "interleaved" else 1
    parts = {"imports": _imports(plan, cls), "mesh": _mesh(plan), "pipeline": _pipeline(plan, workload.model.layers, chunks),
             "tp": _tp(plan, workload.model.heads), "fsdp": _fsdp(plan), "schedule": _schedule(workload, plan, cls, chunks)}
    return {k: "\n".join(v) + "\n" if v else "" for k, v in parts.items()}


def torch_code(workload: Workload, plan: Plan) -> str:
    """The whole skeleton as one module: :func:`torch_sections` joined in order."""
    return "\n".join(s for s in torch_sections(workload, plan).values() if s)
