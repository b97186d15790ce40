"""Feed every export of a fixed set of plans to the launchers' own parsers and validators; record what they read.

Not run by ``make test`` (it needs torch, Megatron-LM, torchtitan and DeepSpeed); the tests read only its output,
``tests/data/launcher_verdicts.json``. How it was run (the file's ``how`` field says the same)::

    python3.11 -m venv /work/launchers-venv
    /work/launchers-venv/bin/pip install torch==2.13.0            # the CPU wheel, first, so nothing pulls CUDA
    /work/launchers-venv/bin/pip install numpy packaging einops pydantic hjson psutil py-cpuinfo msgpack tqdm \\
        tomli tyro pyyaml tokenizers fsspec
    /work/launchers-venv/bin/pip install --no-deps deepspeed==0.19.8
    /work/launchers-venv/bin/pip install --no-deps torchdata     # torchtitan's dataloader imports it
    /work/launchers-venv/bin/pip install tensorboard datasets      # imported by torchtitan's metrics and datasets
    # Megatron-LM d98e8a64 and torchtitan 238fa995 as source trees (git archive of those commits):
    #   /work/launchers-src/megatron   (the repository's megatron/ package)
    #   /work/launchers-src/tt/torchtitan
    /work/launchers-venv/bin/python tools/record_launchers.py /work/launchers-src

What runs, per launcher (each in its own child process, all entries of that launcher in it):

* Megatron-LM: ``megatron.training.arguments.parse_args`` on the export's flags (``sys.argv`` set to them,
  ``WORLD_SIZE`` to the torchrun line's nodes x GPUs, ``RANK=0``, and the export's own
  ``CUDA_DEVICE_MAX_CONNECTIONS`` line), then ``validate_args``. Degrees read: ``args.data_parallel_size``
  (which validate_args derives from the world size), tensor/pipeline/context/expert sizes,
  ``virtual_pipeline_model_parallel_size``, micro and global batch; and the precision it settled on
  (``fp8``, ``fp8_recipe``, ``fp8_param_gather``, ``accumulate_allreduce_grads_in_fp32``).
* torchtitan: ``ConfigManager().parse_args(["--job.config_file", FILE])`` (tyro over the TOML: an unknown
  key or a bad value is an error), ``ParallelDims(...)`` from the parsed degrees at the plan's world size
  (its ``_validate``), ``build_mesh()`` on a fake process group (``torch.testing._internal.distributed
  .fake_pg``), and for PP ``pipeline_llm`` itself up to the stage split: its stage count, its
  divisibility and stages-per-rank checks, ``generate_llm_fqn_per_model_part``; the chunks read are the
  stage count / PP and the layers per stage are counted from the module names it returns; and the parsed
  ``model.converters`` and ``quantize.linear.float8`` fields.
* DeepSpeed: ``DeepSpeedConfig(FILE)`` (hjson, so the ``#`` header is read as comments) with a fake
  process group of the plan's world size, as ``deepspeed.initialize`` builds it for a model without a
  PipelineModule (mpu=None): its batch assertion, ZeRO and precision sections.

Stubbed, exactly:

* Megatron-LM modules that ``import triton`` at the top (MoE paged stash and Mamba/SSM kernels:
  every file under ``megatron/`` matching ``^import triton|^from triton``) are replaced by empty mock
  modules; none of them runs during argument validation. ``typing.override`` is shimmed (Python 3.11).
  ``get_device_arch_version`` (which asks CUDA for the GPU) returns 9 (Hopper; the A100's 8 takes the same
  branches of validate_args: both are below 10).
* torchtitan ``torchtitan.models.moe.kernels`` (imports triton) is a mock module. In ``pipeline_llm``
  the two calls after the split is decided are stubbed: ``pipeline_module_split`` raises a sentinel
  carrying the module names per stage (no model is built); ``ParallelDims.get_mesh("pp")`` is the fake
  mesh's. The trainer's batch rule (``train.py``: ``global_batch_size % (local_batch_size x
  batch_degree) == 0``) and the pipeline schedule's micro-batch rules (``pipeline_parallel.py``
  ``build_pipeline_schedule``: ``local_batch_size % pipeline_parallel_microbatch_size == 0`` and at
  least as many micro-batches as stages) are re-stated here, not called: they live in the trainer and
  schedule constructors, which need a built model.
* DeepSpeed: nothing of DeepSpeed's; torch.distributed is a fake process group, which
  ``deepspeed.comm.init_distributed`` wraps as it wraps an initialised torch group.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "launcher_verdicts.json"
sys.path.insert(0, str(ROOT))

DEVICE = "h100-sxm-80gb"

# (name, model preset, GPUs, GPUs per node, global batch, seq_len or None, recipe (None: the launcher's stack's),
#  plan label, launchers)
PLANS = [
    ("dense-ddp", "gpt2-1.5b", 8, 8, 64, None, None, "DP8 mb2", ("megatron", "torchtitan", "deepspeed")),
    ("dense-zero1", "gpt2-1.5b", 8, 8, 64, None, None, "DP8 ZeRO-1 mb2", ("megatron", "deepspeed")),
    ("dense-zero2", "gpt2-1.5b", 8, 8, 64, None, None, "DP8 ZeRO-2 mb2", ("megatron", "deepspeed")),
    ("dense-zero3", "llama3-8b", 8, 8, 64, None, None, "DP8 ZeRO-3 mb1",
     ("megatron", "torchtitan", "deepspeed")),
    ("dense-zero3-fp32grad", "llama2-7b", 16, 8, 128, None, "bf16-adam-fp32grad", "DP16 ZeRO-3 mb1 full",
     ("megatron",)),
    ("dense-zero3-bf16grad", "llama2-7b", 16, 8, 128, None, "bf16-adam", "DP16 ZeRO-3 mb1 full", ("megatron",)),
    ("tp-overlap", "llama3-8b", 8, 8, 64, None, None, "DP4 TP2 SP tp-overlap mb1 selective", ("megatron",)),
    ("dense-zero1-fp32", "gpt2-1.5b", 16, 8, 128, None, "fp32-adam", "DP16 ZeRO-1 mb1", ("megatron", "deepspeed")),
    ("dense-zero2-16", "llama2-7b", 16, 8, 128, None, None, "DP16 ZeRO-2 mb1", ("megatron", "deepspeed")),
    ("dense-zero3-16", "llama2-7b", 16, 8, 128, None, None, "DP16 ZeRO-3 mb2", ("deepspeed",)),
    ("tp-sp-selective", "llama3-8b", 8, 8, 64, None, None, "DP4 TP2 SP mb1 selective", ("megatron",)),
    ("tp-nosp", "llama2-7b", 8, 8, 64, None, None, "DP4 TP2 mb1 full", ("megatron",)),
    ("tp-zero3-sp", "llama3-70b", 64, 8, 512, None, None, "DP16 TP4 ZeRO-3 SP mb1 selective",
     ("megatron",)),
    ("tp-zero3-sp-full", "llama3-70b", 64, 8, 512, None, None, "DP16 TP4 ZeRO-3 SP mb1 full",
     ("megatron", "torchtitan")),
    ("tp-zero2-sp", "llama2-13b", 32, 8, 256, None, None, "DP16 TP2 ZeRO-2 SP mb2", ("megatron",)),
    ("pp-1f1b", "llama3-8b", 16, 8, 128, None, None, "DP2 TP4 PP2 ZeRO-1 SP mb1 1f1b", ("megatron",)),
    ("pp-1f1b-ddp", "llama3-70b", 64, 8, 512, None, None, "DP2 TP8 PP4 SP mb1 selective 1f1b",
     ("megatron",)),
    ("pp-interleaved", "llama3-70b", 64, 8, 512, None, None, "DP8 TP4 PP2 ZeRO-1 SP mb1 full interleaved×4",
     ("megatron",)),
    ("pp-interleaved-2", "llama3-8b", 16, 8, 128, None, None, "DP2 TP2 PP4 ZeRO-1 SP mb1 interleaved×2",
     ("megatron",)),
    ("pp-fsdp-1f1b", "llama3-70b", 64, 8, 512, None, None, "DP8 TP4 PP2 ZeRO-3 SP mb1 full 1f1b",
     ("torchtitan",)),
    ("pp-fsdp-interleaved", "llama3-8b", 16, 8, 128, None, None, "DP4 PP4 ZeRO-3 mb1 full interleaved×2",
     ("torchtitan",)),
    ("pp-fsdp-gpipe", "llama3-8b", 16, 8, 128, None, None, "DP4 PP4 ZeRO-3 mb2 gpipe", ("torchtitan",)),
    ("pp-gpipe-tp", "llama3-8b", 16, 8, 128, None, None, "DP2 TP2 PP4 ZeRO-3 SP mb1 full gpipe",
     ("torchtitan",)),
    ("hsdp-zero3", "llama3-8b", 16, 8, 128, None, None, "DP16 ZeRO-3/shard8 mb1 full", ("torchtitan",)),
    ("hsdp-zero1", "llama2-13b", 32, 8, 256, None, None, "DP32 ZeRO-1/shard8 mb2 full", ("megatron",)),
    ("hsdp-zero3-tp", "llama3-70b", 64, 8, 512, None, None, "DP16 TP4 ZeRO-3/shard2 SP mb1 full",
     ("torchtitan",)),
    ("moe-ep-zero1", "mixtral-8x7b", 64, 8, 256, None, None, "DP16 TP4 ZeRO-1 SP EP8 mb1 full",
     ("megatron",)),
    ("moe-ep-fsdp", "mixtral-8x7b", 16, 8, 64, None, None, "DP16 ZeRO-3 EP8 mb1 full",
     ("megatron", "torchtitan")),
    ("moe-ep-tp", "mixtral-8x7b", 32, 8, 128, None, None, "DP8 TP4 ZeRO-1 SP EP4 mb1 selective",
     ("megatron",)),
    ("moe-ep-pp", "mixtral-8x7b", 32, 8, 128, None, None, "DP4 TP4 PP2 ZeRO-1 SP EP4 mb1 full 1f1b",
     ("megatron",)),
    ("moe-dense-ep1", "mixtral-8x7b", 16, 8, 64, None, None, "DP4 TP4 ZeRO-1 SP mb1 full", ("megatron",)),
    ("moe-ep-overlap", "mixtral-8x7b", 32, 8, 128, None, None, "DP8 TP4 ZeRO-1 SP EP4 ep-overlap mb1 selective",
     ("megatron",)),
    ("moe-ep-overlap-pp", "mixtral-8x7b", 32, 8, 128, None, None,
     "DP4 TP4 PP2 ZeRO-1 SP EP4 ep-overlap mb1 interleaved×2", ("megatron",)),
    ("moe-deepep", "mixtral-8x7b", 32, 8, 128, None, None, "DP32 ZeRO-1 EP8 deepep mb1 full", ("megatron",)),
    ("moe-hybridep-tp", "mixtral-8x7b", 32, 8, 128, None, None, "DP8 TP4 ZeRO-1 SP EP4 hybridep mb1 selective",
     ("megatron",)),
    ("recompute-block", "llama3-8b", 8, 8, 64, None, None, "DP4 PP2 ZeRO-1 mb1 full rl4 1f1b", ("megatron",)),
    ("recompute-layer-sac", "llama3-8b", 8, 8, 64, None, None, "DP4 PP2 ZeRO-3 mb1 full rl4 1f1b", ("torchtitan",)),
    ("recompute-op", "llama3-8b", 8, 8, 64, None, None, "DP8 ZeRO-3 mb1 op", ("torchtitan",)),
    ("cp-zero1", "llama3-8b", 16, 8, 64, 32768, None, "DP2 TP4 CP2 ZeRO-1 SP mb1 full", ("megatron",)),
    ("cp-fsdp", "llama3-8b", 16, 8, 64, 32768, None, "DP2 TP4 CP2 ZeRO-3 SP mb1 full",
     ("megatron", "torchtitan")),
    ("cp-long", "llama3-8b", 8, 8, 8, 131072, None, "DP1 TP4 CP2 SP mb1 full", ("megatron", "torchtitan")),
    ("cp-pp", "llama3-70b", 64, 8, 64, 65536, None, "DP1 TP8 PP4 CP2 SP mb1 full 1f1b", ("megatron",)),
    ("pp-layout-interleaved", "llama3-70b", 64, 8, 512, None, None,
     "DP4 TP4 PP4 ZeRO-1 SP tp-overlap mb1 L19/21x2/19 interleaved×2", ("megatron",)),
    ("pp-layout-uneven", "llama3-8b", 16, 8, 128, None, None, "DP2 TP2 PP4 ZeRO-1 SP mb1 L7/8/9/8 1f1b",
     ("megatron",)),
    ("fp8-te", "llama3-8b", 8, 8, 64, None, "fp8-adam-fp32grad", "DP8 ZeRO-1 mb1 selective", ("megatron",)),
    ("fp8-te-bf16grad", "llama2-13b", 16, 8, 128, None, "fp8-adam-bf16grad", "DP4 PP4 ZeRO-1 mb1 interleaved×5",
     ("megatron",)),
    ("fp8-params", "llama3-70b", 64, 8, 512, None, "fp8-params-bf16grad",
     "DP8 TP4 PP2 ZeRO-1 SP tp-overlap mb1 interleaved×4", ("megatron",)),
    ("fp8-params-fsdp", "llama3-8b", 8, 8, 64, None, "fp8-params-bf16grad", "DP8 ZeRO-3 mb1 full", ("megatron",)),
    ("fp8-float8", "llama3-8b", 8, 8, 64, None, "fp8-compute-fp32-adam", "DP8 ZeRO-3 mb1 op", ("torchtitan",)),
    ("fp8-float8-tp", "llama3-70b", 64, 8, 512, None, "fp8-compute-fp32-adam", "DP16 TP4 ZeRO-3 SP mb1 full",
     ("torchtitan",)),
]


def cases():
    """Every (entry inputs, export text) of the fixed set, exported by this checkout's parallelsel."""
    import parallelsel as ps
    from parallelsel.core.launchers import LAUNCHER_SOURCES, export, refusals
    from parallelsel.core.plan import constraint_violations
    from parallelsel.render.reasons import read_plan

    out = []
    for name, model, gpus, gpn, batch, seq, recipe_key, label, launchers in PLANS:
        plan = read_plan(label)
        c = ps.Cluster(ps.DEVICES[DEVICE], nodes=max(1, gpus // gpn), gpus_per_node=min(gpn, gpus))
        assert plan.gpus == gpus, (name, plan.gpus, gpus)
        for launcher in launchers:
            stack = LAUNCHER_SOURCES[launcher]["stack"]
            recipe = recipe_key or ps.STACKS[stack].recipe
            w = ps.Workload(ps.MODELS[model], recipe=ps.RECIPES[recipe], global_batch=batch, seq_len=seq, stack=stack)
            assert not constraint_violations(w, plan, c), (name, constraint_violations(w, plan, c))
            bad = refusals(w, plan, launcher)
            assert not bad, (name, launcher, bad)
            out.append({"name": name, "launcher": launcher, "model": model, "device": DEVICE, "gpus": gpus,
                        "gpus_per_node": gpn,
                        "global_batch": batch, "seq_len": w.seq_len, "recipe": recipe, "plan": plan.label(),
                        "expected": {"dp": plan.dp, "tp": plan.tp, "pp": plan.pp, "cp": plan.cp, "ep": plan.ep,
                                     "chunks": plan.chunks, "micro_batch": plan.micro_batch,
                                     "global_batch": batch, "layers_per_stage": w.model.layers // (plan.pp * plan.chunks)},
                        "export": export(w, plan, launcher, c)})
    return out


# -- the launchers' own code, one child process per launcher ---------------------------------------------
def _stub(names):
    import importlib.abc
    import importlib.machinery
    from unittest import mock

    class Stub(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path, target=None):
            return importlib.machinery.ModuleSpec(name, self, is_package=True) if name in names else None

        def create_module(self, spec):
            m = mock.MagicMock(name=spec.name)
            m.__path__, m.__spec__ = [], spec
            return m

        def exec_module(self, module):
            pass

    sys.meta_path.insert(0, Stub())


def _fake_pg(world):
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if dist.is_initialized():
        dist.destroy_process_group()
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world)


def run_megatron(src: Path, entries):
    import re
    import shlex
    import typing

    if not hasattr(typing, "override"):
        typing.override = lambda f: f
    triton_users = [str(p.relative_to(src))[:-3].replace("/", ".") for p in (src / "megatron").rglob("*.py")
                    if re.search(r"^(import|from) triton", p.read_text(errors="ignore"), re.M)]
    _stub(set(triton_users))
    sys.path.insert(0, str(src))
    import megatron.training.arguments as MA

    MA.get_device_arch_version = lambda: 9
    results = []
    for e in entries:
        text = e["export"]
        env = dict(re.findall(r"^export (\w+)=(\S+)$", text, re.M))
        unset = re.findall(r"^unset (\w+)$", text, re.M)
        words = shlex.split(" ".join(l for l in text.replace("\\\n", " ").splitlines()
                                     if not l.startswith(("#", "export ", "unset "))))
        i = words.index("pretrain_gpt.py")
        tr = dict(zip(words[1:i:2], words[2:i:2]))
        world = int(tr["--nnodes"]) * int(tr["--nproc-per-node"])
        os.environ.update(WORLD_SIZE=str(world), RANK="0", LOCAL_RANK="0", **env)
        for k in unset:
            os.environ.pop(k, None)
        sys.argv = ["pretrain_gpt.py"] + words[i + 1:]
        try:
            args = MA.parse_args()
            MA.validate_args(args)
            vp = args.virtual_pipeline_model_parallel_size or 1
            read = {"dp": args.data_parallel_size, "tp": args.tensor_model_parallel_size,
                    "pp": args.pipeline_model_parallel_size, "cp": args.context_parallel_size,
                    "ep": args.expert_model_parallel_size, "chunks": vp, "micro_batch": args.micro_batch_size,
                    "global_batch": args.global_batch_size,
                    "layers_per_stage": args.num_layers // (args.pipeline_model_parallel_size * vp),
                    "params_dtype": str(args.params_dtype), "sequence_parallel": bool(args.sequence_parallel),
                    "use_distributed_optimizer": bool(args.use_distributed_optimizer),
                    "data_parallel_sharding_strategy": args.data_parallel_sharding_strategy if args.use_megatron_fsdp
                    else None, "overlap_grad_reduce": bool(args.overlap_grad_reduce),
                    "recompute_granularity": args.recompute_granularity,
                    "recompute_method": args.recompute_method, "recompute_num_layers": args.recompute_num_layers,
                    "moe_router_topk": args.moe_router_topk if args.num_experts else None,
                    "moe_token_dispatcher_type": args.moe_token_dispatcher_type if args.num_experts else None,
                    "overlap_moe_expert_parallel_comm": bool(args.overlap_moe_expert_parallel_comm),
                    "moe_flex_dispatcher_backend": args.moe_flex_dispatcher_backend
                    if args.num_experts and args.moe_token_dispatcher_type == "flex" else None,
                    "fp8": args.fp8, "fp8_recipe": args.fp8_recipe if args.fp8 else None,
                    "fp8_param_gather": bool(args.fp8_param_gather),
                    "grads_fp32": bool(args.accumulate_allreduce_grads_in_fp32)}
            read["stage_layers"] = _megatron_layout_split(args)
            results.append({"accepted": True, "error": None, "read": read})
        except BaseException as exc:  # noqa: BLE001 - argparse exits, validators assert
            results.append({"accepted": False, "error": f"{type(exc).__name__}: {exc}"[:400], "read": None})
    return results


def _megatron_layout_split(args):
    """Transformer layers per pipeline rank as Megatron-Core reads ``--pipeline-model-parallel-layout``
    (``PipelineParallelLayerLayout`` and its ``validate_layer_layout``, which TransformerConfig runs); None without one."""
    if args.pipeline_model_parallel_layout is None:
        return None
    from megatron.core.transformer.enums import LayerType
    from megatron.core.transformer.pipeline_parallel_layer_layout import PipelineParallelLayerLayout

    layout = PipelineParallelLayerLayout(args.pipeline_model_parallel_layout, args.pipeline_model_parallel_size)
    layout.validate_layer_layout(args.num_layers, args.mtp_num_layers)
    return [sum(stage.count(LayerType.decoder) for stage in row) for row in layout.layout]


def run_torchtitan(src: Path, entries):
    import tempfile

    _stub({"torchtitan.models.moe.kernels"})
    sys.path.insert(0, str(src / "tt"))
    import torchtitan.distributed.pipeline_parallel as PPmod
    from torchtitan.config.manager import ConfigManager
    from torchtitan.distributed.parallel_dims import ParallelDims

    class Split(Exception):
        pass

    def fake_split(model, pp_mesh, schedule, device, names):
        raise Split(names)

    PPmod.pipeline_module_split = fake_split
    results = []
    for e in entries:
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
            f.write(e["export"])
        try:
            cfg = ConfigManager().parse_args(["--job.config_file", f.name])
            p, t = cfg.parallelism, cfg.training
            world = e["gpus"]
            _fake_pg(world)
            dims = ParallelDims(dp_replicate=p.data_parallel_replicate_degree, dp_shard=p.data_parallel_shard_degree,
                                cp=p.context_parallel_degree, tp=p.tensor_parallel_degree,
                                pp=p.pipeline_parallel_degree, ep=p.expert_parallel_degree,
                                etp=p.expert_tensor_parallel_degree, world_size=world)
            dims.build_mesh()
            batch_degree = dims.dp_replicate * dims.dp_shard
            gb = t.global_batch_size if t.global_batch_size > 0 else t.local_batch_size * batch_degree
            assert gb % (t.local_batch_size * batch_degree) == 0, "train.py: global batch not divisible"
            import parallelsel as ps

            layers = ps.MODELS[e["model"]].layers
            chunks, lps, mb = 1, layers, t.local_batch_size
            if dims.pp > 1:
                class Args:
                    n_layers = layers
                try:
                    PPmod.pipeline_llm(None, dims, cfg, "cpu", Args(), None, None)
                    raise AssertionError("pipeline_llm returned without splitting")
                except Split as s:
                    names = s.args[0]
                stages = len(names)
                chunks = stages // dims.pp
                per = [sum(n.startswith("layers.") for n in stage) for stage in names]
                assert len(set(per)) == 1, f"uneven split {per}"
                lps = per[0]
                mb = p.pipeline_parallel_microbatch_size
                assert t.local_batch_size % mb == 0, "build_pipeline_schedule: batch % microbatch"
                assert t.local_batch_size // mb >= stages, "build_pipeline_schedule: fewer microbatches than stages"
            read = {"dp": batch_degree, "tp": dims.tp, "pp": dims.pp, "cp": dims.cp, "ep": dims.ep, "chunks": chunks,
                    "micro_batch": mb, "global_batch": gb, "layers_per_stage": lps,
                    "fsdp_reshard_after_forward": p.fsdp_reshard_after_forward,
                    "activation_checkpoint": cfg.activation_checkpoint.mode,
                    "selective_ac_option": str(cfg.activation_checkpoint.selective_ac_option),
                    "mixed_precision_param": t.mixed_precision_param, "optimizer": cfg.optimizer.name,
                    "converters": list(cfg.model.converters),
                    "float8_all_gather": cfg.quantize.linear.float8.enable_fsdp_float8_all_gather,
                    "float8_filter_fqns": list(cfg.quantize.linear.float8.filter_fqns)}
            results.append({"accepted": True, "error": None, "read": read})
        except BaseException as exc:  # noqa: BLE001
            results.append({"accepted": False, "error": f"{type(exc).__name__}: {exc}"[:400], "read": None})
        finally:
            os.unlink(f.name)
    return results


def run_deepspeed(src: Path, entries):
    import tempfile

    results = []
    for e in entries:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write(e["export"])
        try:
            _fake_pg(e["gpus"])
            import deepspeed.comm as dcomm
            import deepspeed.comm.comm as dcomm_state
            from deepspeed.runtime.config import DeepSpeedConfig

            dcomm_state.cdb = None  # let deepspeed.comm wrap this entry's (fake) process group
            dcomm.init_distributed(dist_backend="gloo", auto_mpi_discovery=False)

            c = DeepSpeedConfig(f.name)
            read = {"dp": c.world_size, "tp": 1, "pp": 1, "cp": 1, "ep": 1, "chunks": 1,
                    "micro_batch": c.train_micro_batch_size_per_gpu, "global_batch": c.train_batch_size,
                    "layers_per_stage": e["expected"]["layers_per_stage"], "zero_stage": c.zero_optimization_stage,
                    "bf16": bool(c.bfloat16_config.enabled), "grad_accum_dtype": c.grad_accum_dtype,
                    "optimizer": c.optimizer_name,
                    "gradient_accumulation_steps": c.gradient_accumulation_steps}
            results.append({"accepted": True, "error": None, "read": read})
        except BaseException as exc:  # noqa: BLE001
            results.append({"accepted": False, "error": f"{type(exc).__name__}: {exc}"[:400], "read": None})
        finally:
            os.unlink(f.name)
    return results


STUBBED = [
    "megatron: modules under megatron/ that import triton at the top are empty mock modules (none runs in argument "
    "validation); typing.override shimmed on Python 3.11; get_device_arch_version returns 9 (no GPU to ask)",
    "torchtitan: torchtitan.models.moe.kernels (imports triton) is a mock module; pipeline_llm's pipeline_module_split "
    "raises with the module names per stage (no model is built); the trainer's global-batch rule (train.py) and "
    "build_pipeline_schedule's micro-batch rules are re-stated, not called",
    "all: torch.distributed is a fake process group (torch.testing._internal.distributed.fake_pg) at the plan's world size",
]


RUNNERS = {"megatron": run_megatron, "torchtitan": run_torchtitan, "deepspeed": run_deepspeed}
VERSIONS = {"megatron": "NVIDIA/Megatron-LM d98e8a64", "torchtitan": "pytorch/torchtitan 238fa995",
            "deepspeed": "deepspeed 0.19.8"}


def child(launcher: str, src: str, path: str) -> None:
    entries = json.loads(Path(path).read_text())
    import io
    import contextlib

    with contextlib.redirect_stdout(io.StringIO()):
        res = RUNNERS[launcher](Path(src), entries)
    Path(path).write_text(json.dumps(res))


def main(src: str) -> None:
    import tempfile

    import torch

    entries = cases()
    for launcher in RUNNERS:
        mine = [e for e in entries if e["launcher"] == launcher]
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(mine, f)
        subprocess.run([sys.executable, __file__, "--child", launcher, src, f.name], check=True,
                       stderr=open(f"/tmp/record_{launcher}.log", "w"))
        res = json.loads(Path(f.name).read_text())
        os.unlink(f.name)
        for e, r in zip(mine, res):
            e.update(r)
            e["degrees_equal"] = bool(r["read"]) and all(r["read"][k] == v for k, v in e["expected"].items())
    data = {"launchers": VERSIONS, "torch": torch.__version__, "python": sys.version.split()[0],
            "how": "tools/record_launchers.py (its docstring says what runs and what was stubbed)",
            "stubbed": STUBBED,
            "entries": entries}
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    bad = [(e["name"], e["launcher"], e["error"] or e["read"]) for e in entries
           if not (e["accepted"] and e["degrees_equal"])]
    print(f"{len(entries)} exports, {len(entries) - len(bad)} accepted with equal degrees")
    for b in bad:
        print("  ", *b)


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        child(*sys.argv[2:5])
    else:
        main(sys.argv[1])
