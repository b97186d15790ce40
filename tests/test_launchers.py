"""Exports to Megatron-LM, torchtitan and DeepSpeed, checked against each project's own option names and rules.

The reference tables below were read from the projects' source (not from parallelsel):

* Megatron-LM (NVIDIA/Megatron-LM d98e8a64): flag, type and choices of each option in
  ``megatron/training/arguments.py`` and the dataclass fields it turns into flags
  (``megatron/core/model_parallel_config.py``, ``transformer/transformer_config.py``,
  ``training/config/training_config.py``, ``core/distributed/distributed_data_parallel_config.py``);
  rules from ``validate_args``: world size = tp x pp x cp x dp, global batch divisible by
  micro x dp, layers divisible by pp, layers per stage divisible by layers per virtual stage.
* torchtitan (pytorch/torchtitan 238fa995, ``torchtitan/config/job_config.py``): field names and
  types of ``Training``, ``Parallelism`` and ``ActivationCheckpoint``; ``ParallelDims`` asserts
  dp_replicate x dp_shard x cp x tp x pp == world size; schedule names from
  ``torch.distributed.pipelining.schedules.get_schedule_class``.
* DeepSpeed (deepspeedai/DeepSpeed edaa7221): ``runtime/constants.py`` key names and
  ``runtime/config.py::_batch_assertion``: train_batch_size == micro x accumulation x DP world size.
"""

from __future__ import annotations

import argparse
import json
import shlex
import tomllib

import pytest

import parallelsel as ps
from parallelsel.render.cli import main
from parallelsel.core.launchers import LAUNCHER_SOURCES, LauncherError, export, options, read_config, refusals

MEGATRON_FLAGS = {  # flag: (type, choices) as declared in Megatron-LM
    "--tensor-model-parallel-size": (int, None),
    "--pipeline-model-parallel-size": (int, None),
    "--num-layers-per-virtual-pipeline-stage": (int, None),
    "--context-parallel-size": (int, None),
    "--expert-model-parallel-size": (int, None),
    "--expert-tensor-parallel-size": (int, None),
    "--num-experts": (int, None),
    "--micro-batch-size": (int, None),
    "--global-batch-size": (int, None),
    "--sequence-parallel": (bool, None),
    "--recompute-granularity": (str, ("full", "selective")),
    "--recompute-method": (str, ("uniform", "block")),
    "--recompute-num-layers": (int, None),
    "--use-distributed-optimizer": (bool, None),
    "--num-distributed-optimizer-instances": (int, None),
    "--use-megatron-fsdp": (bool, None),
    "--data-parallel-sharding-strategy": (str, ("no_shard", "optim", "optim_grads", "optim_grads_params")),
    "--num-layers": (int, None), "--hidden-size": (int, None), "--num-attention-heads": (int, None),
    "--ffn-hidden-size": (int, None), "--group-query-attention": (bool, None), "--num-query-groups": (int, None),
    "--kv-channels": (int, None),
    "--seq-length": (int, None), "--max-position-embeddings": (int, None),
    "--position-embedding-type": (str, ("learned_absolute", "rope", "mrope", "relative", "none")),
    "--no-rope-fusion": (bool, None), "--normalization": (str, ("LayerNorm", "RMSNorm")), "--swiglu": (bool, None),
    "--disable-bias-linear": (bool, None), "--untie-embeddings-and-output-weights": (bool, None),
    "--tokenizer-type": (str, None), "--vocab-size": (int, None), "--moe-router-topk": (int, None),
    "--bf16": (bool, None), "--grad-reduce-in-bf16": (bool, None), "--optimizer": (str, ("adam", "sgd")),
    "--ckpt-format": (str, None), "--overlap-grad-reduce": (bool, None), "--overlap-param-gather": (bool, None),
    # transformer_config.py L151 (attention_backend: AttnBackend), argument_utils.py L109-118 (an enum's flag takes
    # a member's name), transformer/enums.py L51-58 (the members)
    "--attention-backend": (str, ("flash", "fused", "unfused", "local", "auto")),
    # transformer_config.py L891 (moe_token_dispatcher_type), model_parallel_config.py L343
    "--moe-token-dispatcher-type": (str, ("allgather", "alltoall", "flex")),
    "--overlap-moe-expert-parallel-comm": (bool, None),
}

TORCHTITAN_FIELDS = {
    "parallelism": {"data_parallel_replicate_degree": int, "data_parallel_shard_degree": int,
                    "fsdp_reshard_after_forward": ("default", "always", "never"), "tensor_parallel_degree": int,
                    "pipeline_parallel_degree": int, "pipeline_parallel_schedule": str,
                    "pipeline_parallel_layers_per_stage": int, "pipeline_parallel_microbatch_size": int,
                    "pipeline_parallel_first_stage_less_layers": int, "pipeline_parallel_last_stage_less_layers": int,
                    "context_parallel_degree": int, "expert_parallel_degree": int,
                    "expert_tensor_parallel_degree": int},
    "training": {"local_batch_size": int, "global_batch_size": int, "seq_len": int,
                 "mixed_precision_param": ("bfloat16", "float32")},
    "model": {"name": str, "flavor": str},
    "optimizer": {"name": ("Adam", "AdamW")},
    "activation_checkpoint": {"mode": ("selective", "full", "memory_budget", "none"), "selective_ac_option": str},
}
TORCH_SCHEDULES = {"1F1B", "Interleaved1F1B", "GPipe", "LoopedBFS", "InterleavedZeroBubble", "ZBVZeroBubble",
                   "DualPipeV", "PipelineScheduleSingle", "PipelineScheduleMulti"}

DEEPSPEED_KEYS = {"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "bf16",
                  "zero_optimization", "data_types", "optimizer"}


def _json(text: str) -> dict:
    """A DeepSpeed export without its ``#`` header (DeepSpeed reads it with hjson, which skips comments)."""
    return json.loads("\n".join(line for line in text.splitlines() if not line.startswith("#")))


def _megatron_flags(text: str) -> list[str]:
    """The flags after ``pretrain_gpt.py`` in a Megatron export (a shell joins the continued lines)."""
    words = shlex.split(" ".join(line for line in text.replace("\\\n", " ").splitlines()
                                 if not line.startswith(("#", "export ", "unset "))))
    return words[words.index("pretrain_gpt.py") + 1:]


def megatron_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(allow_abbrev=False, exit_on_error=False)
    for flag, (typ, choices) in MEGATRON_FLAGS.items():
        if typ is bool:
            p.add_argument(flag, action="store_true")
        else:
            p.add_argument(flag, type=typ, choices=choices)
    return p


PLANS = [  # (model, nodes, global batch, plan)
    ("llama3-70b", 8, 512, ps.Plan(dp=16, tp=4, zero=3, sp=True, recompute="selective")),
    ("llama3-70b", 8, 512, ps.Plan(dp=8, tp=4, pp=2, zero=1, sp=True, schedule="interleaved", chunks=4,
                                   recompute="full")),
    ("llama2-13b", 4, 256, ps.Plan(dp=16, tp=2, zero=2, sp=True, micro_batch=2)),
    ("llama2-13b", 4, 256, ps.Plan(dp=32, zero=1, shard=8, micro_batch=2, recompute="full")),
    ("mixtral-8x7b", 8, 256, ps.Plan(dp=16, tp=4, zero=3, sp=True, ep=8, recompute="full")),
    ("gpt2-1.5b", 1, 64, ps.Plan(dp=8, micro_batch=2)),
    ("gpt2-1.5b", 1, 64, ps.Plan(dp=4, pp=2, zero=0, micro_batch=1, schedule="gpipe")),
]


def _case(model, nodes, batch, plan, launcher="megatron"):
    w = ps.Workload(ps.MODELS[model], global_batch=batch, stack=LAUNCHER_SOURCES[launcher]["stack"])
    return w, plan, nodes * 8


def _w(model, batch, launcher):
    """A workload on the stack ``launcher`` runs (the estimate follows the stack; an export must match it)."""
    return ps.Workload(ps.MODELS[model], global_batch=batch, stack=LAUNCHER_SOURCES[launcher]["stack"])


@pytest.mark.parametrize("case", PLANS, ids=lambda c: c[3].label())
def test_megatron_export_parses_with_megatrons_flags_and_satisfies_its_rules(case):
    w, plan, world = _case(*case)
    if refusals(w, plan, "megatron"):
        with pytest.raises(LauncherError):
            export(w, plan, "megatron")
        assert plan.schedule == "gpipe"  # the only plan above Megatron cannot run
        return
    args = megatron_parser().parse_args(_megatron_flags(export(w, plan, "megatron")))
    tp, pp = args.tensor_model_parallel_size, args.pipeline_model_parallel_size
    cp = args.context_parallel_size or 1
    dp = world // (tp * pp * cp)
    assert tp * pp * cp * dp == world and (tp, pp, dp) == (plan.tp, plan.pp, plan.dp)
    assert args.global_batch_size % (args.micro_batch_size * dp) == 0
    assert w.model.layers % pp == 0
    if args.num_layers_per_virtual_pipeline_stage:
        assert (w.model.layers // pp) % args.num_layers_per_virtual_pipeline_stage == 0
        assert (w.model.layers // pp) // args.num_layers_per_virtual_pipeline_stage == plan.chunks
    assert args.sequence_parallel == (plan.sp and plan.tp > 1)
    assert args.recompute_granularity == {"none": None}.get(plan.recompute, plan.recompute)
    assert args.use_distributed_optimizer == (plan.zero == 1)
    assert args.use_megatron_fsdp == (plan.zero >= 2)
    if plan.ep > 1:
        assert args.expert_model_parallel_size == plan.ep and args.num_experts % plan.ep == 0


@pytest.mark.parametrize("case", PLANS, ids=lambda c: c[3].label())
def test_torchtitan_export_is_toml_with_its_fields_and_rules(case):
    w, plan, world = _case(*case, "torchtitan")
    bad = refusals(w, plan, "torchtitan")
    if bad:
        codes = {c for c, _ in bad}
        assert codes <= {"launcher_zero", "launcher_ddp_multi_dim", "launcher_tp_without_sp", "launcher_recompute"}
        with pytest.raises(LauncherError):
            export(w, plan, "torchtitan")
        return
    cfg = tomllib.loads(export(w, plan, "torchtitan"))
    for section, kv in cfg.items():
        assert section in TORCHTITAN_FIELDS
        for k, v in kv.items():
            rule = TORCHTITAN_FIELDS[section][k]
            assert (v in rule) if isinstance(rule, tuple) else isinstance(v, rule), (section, k, v)
    par, tr = cfg["parallelism"], cfg["training"]
    dp = par["data_parallel_replicate_degree"] * par["data_parallel_shard_degree"]
    assert dp * par["context_parallel_degree"] * par["tensor_parallel_degree"] * par["pipeline_parallel_degree"] \
        == world
    assert tr["global_batch_size"] % (tr["local_batch_size"] * dp) == 0
    if par["pipeline_parallel_degree"] > 1:
        assert par["pipeline_parallel_schedule"] in TORCH_SCHEDULES
        assert tr["local_batch_size"] % par["pipeline_parallel_microbatch_size"] == 0
        stages = -(-(w.model.layers + par["pipeline_parallel_first_stage_less_layers"]
                     + par["pipeline_parallel_last_stage_less_layers"]) // par["pipeline_parallel_layers_per_stage"])
        assert stages % par["pipeline_parallel_degree"] == 0


@pytest.mark.parametrize("case", PLANS, ids=lambda c: c[3].label())
def test_deepspeed_export_satisfies_the_batch_assertion(case):
    w, plan, world = _case(*case, "deepspeed")
    if refusals(w, plan, "deepspeed"):
        with pytest.raises(LauncherError):
            export(w, plan, "deepspeed")
        assert plan.tp > 1 or plan.pp > 1 or plan.recompute != "none" or plan.shard_size < plan.dp or plan.ep > 1
        return
    cfg = _json(export(w, plan, "deepspeed"))
    assert set(cfg) <= DEEPSPEED_KEYS
    dp_world = world // (plan.tp * plan.pp)
    assert cfg["train_batch_size"] == cfg["train_micro_batch_size_per_gpu"] * cfg["gradient_accumulation_steps"] \
        * dp_world
    assert cfg["zero_optimization"]["stage"] in (0, 1, 2, 3) and cfg["bf16"]["enabled"] is True
    assert cfg["optimizer"]["type"] == "Adam"


def test_each_launcher_refuses_what_it_cannot_run():
    zb = ps.Plan(dp=4, pp=2, schedule="zb-h1")
    assert [c for c, _ in refusals(_w("llama2-7b", 64, "megatron"), zb, "megatron")] == ["launcher_schedule"]
    assert [c for c, _ in refusals(_w("llama2-7b", 64, "torchtitan"), zb, "torchtitan")] == \
        ["launcher_schedule", "launcher_ddp_multi_dim"]
    assert "launcher_pp_in_code" in [c for c, _ in refusals(_w("llama2-7b", 64, "deepspeed"), zb, "deepspeed")]
    assert [c for c, _ in refusals(_w("llama2-7b", 64, "torchtitan"), ps.Plan(dp=2, tp=4, zero=3), "torchtitan")] == \
        ["launcher_tp_without_sp"]
    # Priced for one stack, exported to another's launcher: refused (the estimate would not be that job's).
    assert ("launcher_stack", {"stack": "megatron-core", "launcher_stack": "torchtitan"}) in \
        refusals(_w("llama2-7b", 64, "megatron"), ps.Plan(dp=8, zero=3), "torchtitan")


def test_cli_export_and_refusal(capsys):
    # A ZB-H1 plan, which Megatron-LM has no schedule for: one line, exit 2.
    assert main(["plan", "--model", "llama3-70b", "--nodes", "8", "--global-batch", "512",
                 "--why", "DP1 TP8 PP8 SP mb1 zb-h1", "--export", "megatron"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "ZB-H1" in err
    base = ["plan", "--model", "llama3-70b", "--nodes", "8", "--global-batch", "512", "--pp", "1"]
    assert main(base + ["--export", "megatron"]) == 0
    out = capsys.readouterr().out
    assert "--tensor-model-parallel-size" in out and "--global-batch-size 512" in out
    assert main(base + ["--export", "torchtitan"]) == 0
    assert "data_parallel_shard_degree" in tomllib.loads(capsys.readouterr().out)["parallelism"]
    assert main(base + ["--export", "deepspeed"]) == 2
    err = capsys.readouterr().err
    # One line naming the top plan and what DeepSpeed's JSON cannot carry (TP via AutoTP's batch rule, CP, recompute).
    assert len(err.strip().splitlines()) == 1 and "the top one DP16" in err and "DeepSpeed" in err
    assert main(["plan", "--model", "gpt2-1.5b", "--global-batch", "64", "--why", "DP8 mb2", "--export",
                 "deepspeed"]) == 0
    assert _json(capsys.readouterr().out)["train_batch_size"] == 64


def test_fsdp_options_map_or_are_refused():
    keep = ps.Plan(dp=8, zero=3, reshard_after_forward=False)
    tt = _w("llama3-8b", 64, "torchtitan")
    assert options(tt, keep, "torchtitan")["parallelism"]["fsdp_reshard_after_forward"] == "never"
    assert options(tt, ps.Plan(dp=8, zero=3), "torchtitan")["parallelism"]["fsdp_reshard_after_forward"] == "always"
    for launcher in ("megatron", "deepspeed"):
        assert ("launcher_fsdp_option", {"option": "reshard_after_forward"}) in \
            refusals(_w("llama3-8b", 64, launcher), keep, launcher)
    nosync = ps.Plan(dp=8, zero=3, no_sync=True)
    for launcher in ("megatron", "torchtitan", "deepspeed"):
        assert refusals(_w("llama3-8b", 64, launcher), nosync, launcher) == (("launcher_fsdp_option", {"option": "no_sync"}),)


def test_fp8_recipes_export_where_the_launcher_has_them_and_are_refused_elsewhere():
    from parallelsel.render.launchers import refusal_text

    te = ps.Workload(ps.MODELS["llama3-8b"], recipe=ps.RECIPES["fp8-params-bf16grad"], global_batch=64,
                     stack="megatron-core")
    # validate_args: --fp8-param-gather only with the distributed optimizer or an FSDP.
    bad = refusals(te, ps.Plan(dp=8), "megatron")
    assert bad == (("launcher_recipe_zero", {"recipe": "fp8-params-bf16grad", "zero": 0}),)
    assert "--fp8-param-gather" in refusal_text("megatron", *bad[0], lang="en")
    assert refusals(te, ps.Plan(dp=8, zero=1), "megatron") == ()
    # DeepSpeed's JSON has no FP8 switch; torchtitan's Float8Linear is not Transformer Engine's recipe.
    ds = ps.Workload(ps.MODELS["llama3-8b"], recipe=ps.RECIPES["fp8-adam-fp32grad"], global_batch=64, stack="deepspeed")
    assert [c for c, _ in refusals(ds, ps.Plan(dp=8, zero=1), "deepspeed")] == ["launcher_recipe"]
    tt = ps.Workload(ps.MODELS["llama3-8b"], recipe=ps.RECIPES["fp8-adam-fp32grad"], global_batch=64, stack="torchtitan")
    assert [c for c, _ in refusals(tt, ps.Plan(dp=8, zero=3), "torchtitan")] == ["launcher_recipe"]


def test_reading_fp8_back_names_a_recipe_only_when_the_catalogue_prices_it():
    base = "torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py --bf16 --use-distributed-optimizer"
    assert read_config(base + " --fp8-format hybrid").recipe == "fp8-adam-fp32grad"
    assert read_config(base + " --fp8-format hybrid --grad-reduce-in-bf16").recipe == "fp8-adam-bf16grad"
    gather = " --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather --grad-reduce-in-bf16"
    assert read_config(base + gather).recipe == "fp8-params-bf16grad"
    # E4M3 everywhere, MXFP8 scaling, or FP8 weights with fp32 gradients: no catalogue recipe prices these.
    for other in (" --fp8-format e4m3", " --fp8-format hybrid --fp8-recipe mxfp8",
                  " --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather"):
        assert read_config(base + other).recipe is None, other
    toml = ('[model]\nconverters = ["quantize.linear.float8"]\n[parallelism]\ndata_parallel_shard_degree = 8\n'
            '[quantize.linear.float8]\nenable_fsdp_float8_all_gather = true\n'
            'precompute_float8_dynamic_scale_for_fsdp = true\n[activation_checkpoint]\nmode = "full"\n')
    assert read_config(toml, world=8).recipe == "fp8-compute-fp32-adam"
    rowwise = toml.replace("enable_fsdp_float8_all_gather = true", 'recipe_name = "rowwise"')
    assert read_config(rowwise, world=8).recipe is None
    plain = toml.replace('"quantize.linear.float8"', "")
    assert read_config(plain, world=8).recipe == "bf16-compute-fp32-adam"


def test_check_of_an_fp8_setting_outside_the_catalogue_asks_for_a_recipe(tmp_path, capsys):
    f = tmp_path / "e4m3.sh"
    f.write_text("torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                 "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 --vocab-size 32000 "
                 "--micro-batch-size 1 --global-batch-size 64 --bf16 --use-distributed-optimizer "
                 "--overlap-grad-reduce --fp8-format e4m3\n")
    base = ["check", str(f), "--device", "h100-sxm-80gb", "--lang", "en"]
    assert main(base) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--recipe KEY" in err
    assert main(base + ["--recipe", "fp8-adam-fp32grad", "--json"]) == 0
    assert _json(capsys.readouterr().out)["plan"]["zero"] == 1


def test_an_explicit_megatron_layout_reads_back_per_rank():
    # Megatron's own notation: (...)*n and x*n unrolled, virtual stage v of rank r at entry v x pp + r.
    base = "torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py --num-layers 9 --pipeline-model-parallel-size 2 "
    got = read_config(base + "--pipeline-model-parallel-layout 'Ettt|(tt|)*2,ttL'")
    assert (got.plan["stage_layers"], got.plan["chunks"], got.plan["schedule"]) == ((5, 4), 2, "interleaved")
    with pytest.raises(ValueError, match="pipeline-model-parallel-layout"):
        read_config(base + "--pipeline-model-parallel-layout 'Ettt|mm|tttL'")


def test_a_layout_export_keeps_the_pipeline_send_setting():
    w = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512)
    plan = ps.Plan(dp=4, tp=4, pp=4, sp=True, zero=1, schedule="interleaved", chunks=2, stage_layers=(19, 21, 21, 19),
                   p2p_overlap=False)
    flags = export(w, plan, "megatron")
    assert "--pipeline-model-parallel-layout" in flags and "--no-overlap-p2p-communication" in flags
    assert ps.Plan(**read_config(flags, world=64, layers=80).plan) == plan


def test_a_head_width_that_does_not_tile_hidden_exports_as_kv_channels_and_reads_back():
    # Megatron-LM's --kv-channels (arguments.py: "Projection weights dimension in multi-head attention. This is set
    # to args.hidden_size // args.num_attention_heads if not provided."): Qwen3-30B-A3B's 32 heads of 128 on a
    # 2048-wide residual stream. The export names it only when it differs from hidden // heads.
    qwen = ps.Transformer(layers=48, hidden=2048, heads=32, kv_heads=4, head_dim=128, ffn_hidden=768, experts=128,
                          top_k=8, vocab=151936, seq_len=4096, architecture="llama")
    w = ps.Workload(qwen, global_batch=64, stack="megatron-core")
    plan = ps.Plan(dp=8, ep=8, zero=1)
    text = export(w, plan, "megatron")
    args = megatron_parser().parse_args(_megatron_flags(text))
    assert args.kv_channels == 128 and args.hidden_size == 2048 and args.num_attention_heads == 32
    assert read_config(text, world=8).model["head_dim"] == 128
    plain = megatron_parser().parse_args(_megatron_flags(export(_w("llama3-8b", 64, "megatron"), plan.__class__(dp=8),
                                                                "megatron")))
    assert plain.kv_channels is None


def test_an_expert_tp_exports_and_reads_back_on_megatron_and_torchtitan():
    # Megatron-LM --expert-tensor-parallel-size (unset: the dense TP, arguments.py L587-588 @d98e8a6); torchtitan's
    # parallelism.expert_tensor_parallel_degree (default 1; "either 1 or ... the same as tp").
    m = ps.MODELS["mixtral-8x7b"]
    w = ps.Workload(m, global_batch=64, stack="megatron-core")
    folded = ps.Plan(dp=8, tp=2, ep=16, etp=1, zero=1, sp=True)
    text = export(w, folded, "megatron")
    args = megatron_parser().parse_args(_megatron_flags(text))
    assert args.expert_tensor_parallel_size == 1 and args.expert_model_parallel_size == 16
    assert read_config(text, world=16).plan["etp"] == 1
    default = megatron_parser().parse_args(_megatron_flags(export(w, ps.Plan(dp=8, tp=2, ep=8, zero=1, sp=True),
                                                                  "megatron")))
    assert default.expert_tensor_parallel_size is None
    wt = ps.Workload(m, global_batch=64, stack="torchtitan")
    toml = tomllib.loads(export(wt, ps.Plan(dp=8, tp=2, ep=8, zero=3, sp=True), "torchtitan"))
    assert toml["parallelism"]["expert_tensor_parallel_degree"] == 2
    # Folded (etp=1, torchtitan's default) the key is left out, and reading it back gives the default.
    text = export(wt, ps.Plan(dp=8, tp=2, ep=16, etp=1, zero=3, sp=True), "torchtitan")
    assert "expert_tensor_parallel_degree" not in text and read_config(text, world=16).plan["etp"] == 1
    assert "launcher_etp" in [c for c, _ in refusals(wt, ps.Plan(dp=8, tp=4, ep=8, etp=2, zero=3, sp=True), "torchtitan")]


def test_torchtitan_folds_experts_only_inside_the_hsdp_shard_group():
    # torchtitan parallel_dims.py: the experts' FSDP group is dp_shard x cp x tp / (etp x ep); the HSDP replicas are
    # not in it, so EP8 needs a shard group of at least 8 (with TP1, CP1).
    w = ps.Workload(ps.MODELS["mixtral-8x7b"], global_batch=64, stack="torchtitan")
    assert [c for c, _ in refusals(w, ps.Plan(dp=16, shard=2, ep=8, zero=3), "torchtitan")] == ["launcher_ep_hsdp"]
    assert not refusals(w, ps.Plan(dp=16, shard=8, ep=8, zero=3), "torchtitan")
    from parallelsel.render.launchers import refusal_text

    values = {"ranks": 2, "split": 8}
    assert "8" in refusal_text("torchtitan", "launcher_ep_hsdp", values, "en")
    assert "8" in refusal_text("torchtitan", "launcher_ep_hsdp", values, "zh")


@pytest.mark.parametrize("attention, backend", [("flash", None), ("fa2", "flash"), ("standard", "unfused")])
def test_megatron_attention_backend_round_trips(attention, backend):
    # Megatron-Core's --attention-backend: flash = FlashAttention-2 through Transformer Engine (NVTE_FUSED_ATTN=0,
    # language_module.py L134-135 @d98e8a6), unfused = the scores stored; unset = auto, the stack's own pick.
    w = ps.Workload("llama3-8b", global_batch=64, attention=attention)
    plan = ps.Plan(dp=8, zero=1)
    text = export(w, plan, "megatron")
    args = megatron_parser().parse_args(_megatron_flags(text))
    assert args.attention_backend == backend
    assert (f", attention {attention}" in text.splitlines()[2]) == (attention != "flash")   # the header says it
    cfg = read_config(text, world=8)
    assert cfg.attention == (None if backend is None else attention)


def test_megatron_attention_backend_read_and_checked_by_the_cli(tmp_path, capsys):
    path = tmp_path / "run.sh"
    path.write_text(export(ps.Workload("llama3-8b", global_batch=64, attention="fa2"), ps.Plan(dp=8, zero=1),
                           "megatron"))
    assert main(["check", str(path), "--gpus", "8"]) == 0
    assert "fa2" in capsys.readouterr().out.splitlines()[0]   # the header names the kernel the file asks for
    for given in ("standard", "flash"):   # an explicit --attention that contradicts the file, the default included
        assert main(["check", str(path), "--gpus", "8", "--attention", given]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and f"--attention {given}" in err and "--attention-backend flash" in err and "fa2" in err
    assert main(["check", str(path), "--gpus", "8", "--attention", "fa2"]) == 0
    with pytest.raises(ValueError, match="--attention-backend"):
        read_config("pretrain_gpt.py --attention-backend cudnn --tensor-model-parallel-size 1", world=8)
    with pytest.raises(ValueError, match="--attention-backend.*needs one of"):
        read_config("pretrain_gpt.py --attention-backend --tensor-model-parallel-size 1", world=8)


@pytest.mark.parametrize("env, attention", [
    ("export NVTE_FUSED_ATTN=0", "fa2"),                              # Transformer Engine falls back to flash-attn
    ("export NVTE_FUSED_ATTN=1", "flash"),                            # cuDNN's kernel: the stack's own
    ("export NVTE_FUSED_ATTN=0 NVTE_FLASH_ATTN=0", "standard"),       # neither fused kernel: the unfused one
])
def test_megatron_reader_takes_transformer_engines_switches(env, attention):
    # A launch script that picks the kernel with Transformer Engine's environment switches (the DGX Cloud
    # benchmarks' configure.sh do, e.g. grok1/configure.sh @143b90d) says as much as --attention-backend.
    cfg = read_config(f"{env}\npretrain_gpt.py --tensor-model-parallel-size 1", world=8)
    assert cfg.attention == attention and "NVTE_FUSED_ATTN" in cfg.attention_from


def test_megatron_reader_refuses_a_backend_its_switches_contradict():
    # Megatron-Core asserts the switches agree with --attention-backend (language_module.py L126 @d98e8a6).
    with pytest.raises(ValueError, match="--attention-backend.*NVTE_FUSED_ATTN=1"):
        read_config("export NVTE_FUSED_ATTN=1\npretrain_gpt.py --attention-backend flash", world=8)
    assert read_config("export NVTE_FUSED_ATTN=0\npretrain_gpt.py --attention-backend flash", world=8).attention == "fa2"


@pytest.mark.parametrize("text, launcher, world, field", [
    ("--tensor-model-parallel-size 0", "megatron", 8, "--tensor-model-parallel-size"),
    ("--pipeline-model-parallel-size 2 --num-layers 8 --num-layers-per-virtual-pipeline-stage 0", "megatron", 2,
     "--num-layers-per-virtual-pipeline-stage"),
    ("--pipeline-model-parallel-size 2 --num-layers 2 --num-layers-per-virtual-pipeline-stage 4", "megatron", 2,
     "--num-layers-per-virtual-pipeline-stage"),
    ("[parallelism]\ntensor_parallel_degree = 0\n", "torchtitan", 8, "tensor_parallel_degree"),
    ("[parallelism]\ndata_parallel_shard_degree = 0\n", "torchtitan", 8, "data_parallel_shard_degree"),
    ("parallelism = 3\n[training]\n", "torchtitan", 8, "parallelism"),
    ('{"train_batch_size": 8, "train_micro_batch_size_per_gpu": 0, "gradient_accumulation_steps": 1}', "deepspeed",
     None, "train_micro_batch_size_per_gpu"),
    ('{"train_batch_size": 8, "train_micro_batch_size_per_gpu": 16, "gradient_accumulation_steps": 1}', "deepspeed",
     None, "train_batch_size"),
    ('{"train_batch_size": Infinity, "train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1}',
     "deepspeed", None, "train_batch_size"),
    ('{"zero_optimization": 3, "train_batch_size": 8, "train_micro_batch_size_per_gpu": 1, '
     '"gradient_accumulation_steps": 1}', "deepspeed", None, "zero_optimization"),
    ("[1, 2]", "deepspeed", 8, "FILE"),
    ('{"train_batch_size": 8, "gradient_accumulation_steps": 1}', "deepspeed", 0, "world"),
])
def test_a_file_with_an_impossible_value_is_refused_naming_the_field(text, launcher, world, field):
    # Degrees and sizes of zero, sections of the wrong type, JSON's Infinity: a ValueError that names the field,
    # never a ZeroDivisionError or AttributeError from deeper in.
    with pytest.raises(ValueError, match=f"^{field}="):
        read_config(text, launcher, world=world)


def test_megatron_two_stage_split_named_by_first_and_last_reads_back():
    # transformer_config.py L2340-2345 @d98e8a6: with PP2 both ends set and no middle stages is a valid split.
    w = ps.Workload("llama3-8b", global_batch=64)
    plan = ps.Plan(dp=4, pp=2, stage_layers=(15, 17))
    text = export(w, plan, "megatron")
    assert "--decoder-first-pipeline-num-layers 15" in text and "--decoder-last-pipeline-num-layers 17" in text
    assert read_config(text, "megatron", world=8).plan["stage_layers"] == (15, 17)


def test_torchtitan_refuses_an_interleaved_schedule_with_one_stage_a_rank():
    # pipeline_llm: Interleaved1F1B needs two or more stages on each rank.
    w = ps.Workload("llama3-8b", global_batch=64, stack="torchtitan")
    assert [c for c, _ in refusals(w, ps.Plan(dp=2, pp=4, zero=3, schedule="interleaved"), "torchtitan")] == [
        "launcher_schedule_chunks"]
    assert not refusals(w, ps.Plan(dp=2, pp=4, zero=3, schedule="interleaved", chunks=2), "torchtitan")


def test_megatron_ep_overlap_export_gives_the_all_to_alls_their_own_queue():
    # arguments.py L1466-1475 @d98e8a6: TP/CP want CUDA_DEVICE_MAX_CONNECTIONS=1, EP overlap a larger value ("1 or
    # 32"); the estimate counts the overlap, so the export asks for 32 and its reader does not ask for 1.
    w = ps.Workload("mixtral-8x7b", global_batch=256)
    plan = ps.Plan(dp=8, tp=4, ep=4, zero=1, sp=True, ep_overlap=True)
    text = export(w, plan, "megatron")
    assert "CUDA_DEVICE_MAX_CONNECTIONS=32" in text and "--overlap-moe-expert-parallel-comm" in text
    assert not [n for n in read_config(text, "megatron", world=32).notes if "CUDA_DEVICE_MAX_CONNECTIONS" in str(n)]
    assert "CUDA_DEVICE_MAX_CONNECTIONS=1" in export(w, plan.with_(ep_overlap=None), "megatron")


def test_flex_dispatcher_exports_to_megatron_only_and_reads_back():
    # transformer_config.py L891-902 @d98e8a6: --moe-token-dispatcher-type flex with --moe-flex-dispatcher-backend;
    # the deprecated --moe-enable-deepep means the deepep backend; torchtitan and DeepSpeed have no flex dispatcher.
    w = ps.Workload(ps.MODELS["mixtral-8x7b"], global_batch=128, seq_len=4096)
    plan = ps.Plan(dp=16, ep=8, zero=1, dispatcher="hybridep")
    args = shlex.split(export(w, plan, "megatron").replace("\\\n", " "))
    assert args[args.index("--moe-token-dispatcher-type") + 1] == "flex"
    assert args[args.index("--moe-flex-dispatcher-backend") + 1] == "hybridep"
    assert read_config(export(w, plan, "megatron")).plan["dispatcher"] == "hybridep"
    legacy = export(w, plan.with_(dispatcher=None), "megatron").replace(
        "--moe-token-dispatcher-type alltoall", "--moe-token-dispatcher-type flex --moe-enable-deepep")
    assert read_config(legacy).plan["dispatcher"] == "deepep"
    for launcher in ("torchtitan", "deepspeed"):
        assert "launcher_flex_dispatcher" in [c for c, _ in refusals(w, plan.with_(zero=3), launcher)]
    flex = export(w, plan, "megatron")
    for bad, needle in ((flex.replace("backend hybridep", "backend nccl"), "--moe-flex-dispatcher-backend"),
                        (flex.replace("backend hybridep", "backend hybridep --moe-enable-deepep"), "--moe-enable-deepep"),
                        (legacy.replace("type flex", "type alltoall"), "--moe-enable-deepep")):   # L1743-1748
        with pytest.raises(ValueError, match=needle):
            read_config(bad)


def test_flex_dispatcher_over_expert_tp_alone_reads_back():
    # EP 1 with expert TP 2: the flex dispatcher's tp_ep group is the two expert-TP ranks (TPxEP > 1).
    w = ps.Workload(ps.MODELS["mixtral-8x7b"], global_batch=128, seq_len=4096)
    plan = ps.Plan(dp=1, tp=2, pp=8, sp=True, dispatcher="deepep")
    assert read_config(export(w, plan, "megatron")).plan["dispatcher"] == "deepep"
    both = export(w, plan, "megatron").replace("--moe-flex-dispatcher-backend deepep",
                                               "--moe-flex-dispatcher-backend ncclep --moe-enable-deepep")
    assert read_config(both).plan["dispatcher"] == "deepep"   # Megatron sets deepep over ncclep (L1743-1748)


def test_torchtitan_deepep_backend_is_read_as_a_note():
    # job_config.py L474 @238fa995: expert_parallel_comm_backend is "standard" or "deepep"; only the DeepSeek-V3 model
    # code builds the DeepEP MoE (models/deepseek_v3/infra/parallelize.py L99-121), so it is noted and priced as all-to-all.
    w = ps.Workload(ps.MODELS["mixtral-8x7b"], global_batch=128, seq_len=4096, stack="torchtitan",
                    recipe=ps.RECIPES["bf16-compute-fp32-adam"])
    text = export(w, ps.Plan(dp=16, ep=8, zero=3), "torchtitan")
    assert "expert_parallel_comm_backend" not in text
    deepep = text.replace("[parallelism]\n", '[parallelism]\nexpert_parallel_comm_backend = "deepep"\n', 1)
    cfg = read_config(deepep, "torchtitan", world=16)
    assert ("launcher_dispatcher", {"dispatcher": "deepep"}) in cfg.notes
    assert cfg.plan.get("dispatcher") is None and cfg.plan["ep"] == 8
    with pytest.raises(ValueError, match="expert_parallel_comm_backend"):
        read_config(deepep.replace('"deepep"', '"nccl"'), "torchtitan", world=16)
