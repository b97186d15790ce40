"""``parallelsel check FILE`` on hand-written launcher files, and ``plan --export L`` falling back to a plan L can run.

The round trip of every recorded export through ``check`` is in tests/test_launcher_record.py; here the files are
written by hand the way a user would, each with a mistake whose consequence is known from the launcher's source:
Megatron-LM without ``--bf16`` keeps fp32 parameters (validate_args sets params_dtype only under --bf16/--fp16), and
Megatron-FSDP without ``--ckpt-format fsdp_dtensor`` is refused by validate_args.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import parallelsel as ps
from parallelsel.core.launchers import read_config
from parallelsel.render.cli import main

FIX = Path(__file__).parent / "fixtures" / "launchers"


def _check(capsys, *args):
    code = main(["check", *map(str, args), "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def test_megatron_script_without_bf16_is_priced_in_fp32_and_does_not_fit(capsys):
    got = _check(capsys, FIX / "llama3_70b_no_bf16.sh")
    assert got["launcher"] == "megatron" and got["recipe"] == "fp32-adam"
    assert got["model"]["params"] == ps.MODELS["llama3-70b"].params  # the shape flags give Llama 3 70B exactly
    assert got["cluster"]["gpus"] == 64 and got["plan"]["dp"] == 8 and got["plan"]["tp"] == 8
    assert [n["code"] for n in got["notes"]] == ["launcher_fp32_params"]
    note = got["notes"][0]
    assert note["fix_memory_bytes"] < got["memory_bytes"]  # bf16 weights: 2 bytes instead of 4
    assert not got["fits"] and got["fixes"]
    # 16 bytes of fp32 state per parameter over TP8 (ZeRO-1 shards only the 8 optimizer bytes over DP8).
    per_gpu = ps.MODELS["llama3-70b"].params / 8
    assert abs(got["components_bytes"]["params"] - 4 * per_gpu) / (4 * per_gpu) < 0.02
    assert got["best"] is not None and got["step_vs_best"] is None  # it does not fit, so no ratio


def test_megatron_fsdp_without_its_checkpoint_format_is_flagged(tmp_path):
    f = tmp_path / "flags.txt"
    f.write_text("--tensor-model-parallel-size 1 --micro-batch-size 1 --global-batch-size 64 --bf16 "
                 "--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params --overlap-grad-reduce\n")
    cfg = read_config(f.read_text(), world=8)
    assert cfg.plan["zero"] == 3 and cfg.plan["dp"] == 8
    assert ("launcher_missing_option", {"option": "--ckpt-format fsdp_dtensor"}) in cfg.notes


def test_check_needs_the_world_size_when_the_file_omits_it(tmp_path, capsys):
    f = tmp_path / "flags.txt"
    f.write_text("--tensor-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 64 --bf16\n")
    assert main(["check", str(f), "--model", "llama3-8b"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--gpus" in err
    got = _check(capsys, f, "--model", "llama3-8b", "--gpus", "8")
    assert (got["plan"]["dp"], got["plan"]["tp"]) == (4, 2) and got["recipe"] == "bf16-adam-fp32grad"


def test_torchtitan_toml_with_default_stage_weights(tmp_path, capsys):
    f = tmp_path / "job.toml"
    f.write_text('[model]\nname = "llama3"\nflavor = "8B"\n[parallelism]\ndata_parallel_shard_degree = -1\n'
                 'pipeline_parallel_degree = 2\npipeline_parallel_layers_per_stage = 17\n[training]\n'
                 'local_batch_size = 16\nseq_len = 8192\n[activation_checkpoint]\nmode = "full"\n')
    got = _check(capsys, f, "--gpus", "16")
    # 32 layers + 1 + 1 (torchtitan counts embedding and output as a layer each) = 34 = 2 stages of 17.
    assert got["plan"]["pp"] == 2 and got["plan"]["chunks"] == 1 and got["plan"]["dp"] == 8
    assert [n["code"] for n in got["notes"]] == ["launcher_stage_weights"]
    assert got["global_batch"] == 16 * 8 and got["model"]["name"] == "Llama-3 8B"


def test_export_falls_back_to_the_best_plan_the_launcher_runs(capsys):
    # Llama 3 405B on 16 DGX A100 nodes, global batch 256, torchtitan's stack: the top plan interleaves an uneven
    # split, which torchtitan's less-layers options cannot state (launcher_stage_layers), so the export falls back
    # to the best plan it can.
    args = ["plan", "--model", "llama3-405b", "--nodes", "16", "--global-batch", "256", "--lang", "en",
            "--stack", "torchtitan"]
    assert main(args + ["--top", "1", "--json"]) == 0
    top = json.loads(capsys.readouterr().out)["results"][0]
    assert top["stage_layers"] and top["chunks"] > 1
    assert main(args + ["--export", "torchtitan"]) == 0
    out, err = capsys.readouterr()
    assert err.startswith("parallelsel plan: the top plan") and "cannot run on torchtitan" in err
    assert len(err.strip().splitlines()) == 1 and top["plan"] in err
    cfg = read_config(out, world=128, layers=ps.MODELS["llama3-405b"].layers)
    assert ps.Plan(**cfg.plan).label() != top["plan"]
    assert out.startswith("# parallelsel ") and "# stack: torchtitan" in out


def test_plan_with_pinned_ep(capsys):
    """``plan --ep N`` searches only plans with EP N (it used to fail: the pinned EP was checked against DP 1)."""
    assert main(["plan", "--model", "mixtral-8x7b", "--nodes", "4", "--global-batch", "256", "--ep", "8", "--top", "5",
                 "--json"]) == 0
    res = json.loads(capsys.readouterr().out)["results"]
    assert res and all(r["ep"] == 8 and r["dp"] % 8 == 0 for r in res)
    for model, ep, words in (("llama3-8b", 2, "MoE"), ("mixtral-8x7b", 3, "experts")):
        assert main(["plan", "--model", model, "--nodes", "1", "--ep", str(ep)]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and f"ep={ep}" in err and words in err


def test_uneven_split_exports_in_each_launchers_own_options_and_reads_back():
    # Llama 3 405B's 126 layers on PP16, first and last stage one layer fewer (Dubey et al. 2024 §3.3.2).
    from parallelsel.core.launchers import export, refusals
    from parallelsel.core.plan import megatron_split

    m = ps.MODELS["llama3-405b"]
    c = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=2048)
    split = megatron_split(m.layers, 16, first=7, last=7)
    mcore = ps.Workload(m, global_batch=2048)
    plan = ps.Plan(dp=128, tp=8, pp=16, sp=True, zero=1, recompute="full", stage_layers=split)
    flags = export(mcore, plan, "megatron", c)
    assert "--decoder-first-pipeline-num-layers 7" in flags and "--decoder-last-pipeline-num-layers 7" in flags
    assert ps.Plan(**read_config(flags, world=c.gpus, layers=m.layers).plan) == plan
    titan = ps.Workload(m, global_batch=2048, stack="torchtitan", recipe=ps.RECIPES["bf16-compute-fp32-adam"])
    fsdp = plan.with_(zero=3)
    par = tomllib.loads(export(titan, fsdp, "torchtitan", c))["parallelism"]
    assert (par["pipeline_parallel_layers_per_stage"], par["pipeline_parallel_first_stage_less_layers"],
            par["pipeline_parallel_last_stage_less_layers"]) == (8, 1, 1)
    assert ps.Plan(**read_config(export(titan, fsdp, "torchtitan", c), world=c.gpus, layers=m.layers).plan) == fsdp
    # A split whose middle stages differ: Megatron-LM states it as an explicit layout (read back the same);
    # torchtitan's options cannot, so it is refused, not rewritten.
    odd = plan.with_(stage_layers=(8,) * 14 + (6, 8))
    flags = export(mcore, odd, "megatron", c)
    assert "--pipeline-model-parallel-layout" in flags and "--decoder-first-pipeline-num-layers" not in flags
    assert ps.Plan(**read_config(flags, world=c.gpus, layers=m.layers).plan) == odd
    assert "launcher_stage_layers" in [r[0] for r in refusals(titan, odd.with_(zero=3), "torchtitan")]
