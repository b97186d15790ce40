"""Every export of the recorded set was accepted by the launcher's own parser and validator, which read the plan's
degrees; the exports have not changed since they were recorded; ``read_config`` (and ``parallelsel check``) of every
export gives back the exported plan.

The record, ``tests/data/launcher_verdicts.json``, is written by ``tools/record_launchers.py`` (Megatron-LM
d98e8a64 ``parse_args``/``validate_args``, torchtitan 238fa995 ``ConfigManager``/``ParallelDims``/``pipeline_llm``,
DeepSpeed 0.19.8 ``DeepSpeedConfig``; its docstring lists what was stubbed). After changing an export, re-run it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import parallelsel as ps
from parallelsel.core.launchers import LAUNCHER_SOURCES, export, read_config
from parallelsel.render.reasons import read_plan

DATA = json.loads((Path(__file__).parent / "data" / "launcher_verdicts.json").read_text())
ENTRIES = DATA["entries"]


def _inputs(e):
    w = ps.Workload(ps.MODELS[e["model"]], recipe=ps.RECIPES[e["recipe"]], global_batch=e["global_batch"],
                    seq_len=e["seq_len"], stack=LAUNCHER_SOURCES[e["launcher"]]["stack"])
    gpn = e["gpus_per_node"]
    c = ps.Cluster(ps.DEVICES[e["device"]], nodes=max(1, e["gpus"] // gpn), gpus_per_node=min(gpn, e["gpus"]))
    return w, read_plan(e["plan"]), c


def _body(text: str) -> str:
    """The export without its version line (a release bump alone is not a change of what the launcher reads)."""
    return "\n".join(line for line in text.splitlines() if not line.startswith("# parallelsel "))


def test_the_record_covers_the_fixed_set():
    plans = {e["name"]: read_plan(e["plan"]) for e in ENTRIES}
    assert len(ENTRIES) >= 30 and len(plans) >= 30
    assert {e["launcher"] for e in ENTRIES} == {"megatron", "torchtitan", "deepspeed"}
    kinds = {
        "dense": any(not ps.MODELS[e["model"]].is_moe for e in ENTRIES),
        "moe_ep": any(p.ep > 1 for p in plans.values()),
        "cp": any(p.cp > 1 for p in plans.values()),
        "zero1": any(p.zero == 1 for p in plans.values()),
        "zero2": any(p.zero == 2 for p in plans.values()),
        "zero3": any(p.zero == 3 for p in plans.values()),
        "interleaved": any(p.schedule == "interleaved" and p.chunks > 1 for p in plans.values()),
        "hsdp": any(p.zero and p.shard_size < p.dp for p in plans.values()),
    }
    assert all(kinds.values()), kinds


@pytest.mark.parametrize("e", ENTRIES, ids=lambda e: f"{e['launcher']}-{e['name']}")
def test_recorded_export_was_accepted_with_the_plans_degrees(e):
    assert e["accepted"], e["error"]
    assert e["degrees_equal"], (e["expected"], e["read"])
    for k, v in e["expected"].items():
        assert e["read"][k] == v, k


@pytest.mark.parametrize("e", ENTRIES, ids=lambda e: f"{e['launcher']}-{e['name']}")
def test_export_unchanged_since_recorded(e):
    w, plan, c = _inputs(e)
    assert _body(export(w, plan, e["launcher"], c)) == _body(e["export"]), \
        "the export changed: re-run tools/record_launchers.py so the launchers judge the new one"


@pytest.mark.parametrize("e", ENTRIES, ids=lambda e: f"{e['launcher']}-{e['name']}")
def test_read_config_round_trips_every_export(e):
    w, plan, c = _inputs(e)
    got = read_config(e["export"], world=e["gpus"], layers=w.model.layers)
    assert got.launcher == e["launcher"]
    assert ps.Plan(**got.plan) == plan
    assert got.global_batch == w.global_batch
    if got.seq_len is not None:
        assert got.seq_len == w.seq_len
    assert got.recipe == e["recipe"]
    fp32 = e["recipe"] in ("fp32-adam", "sgd-momentum")  # no --bf16 on purpose: the note says what that means
    assert [c for c, _ in got.notes] == (["launcher_fp32_params"] if fp32 and e["launcher"] == "megatron" else [])


def test_what_the_launchers_read_matches_the_recipe_and_the_overlap():
    for e in ENTRIES:
        r = e["read"]
        if e["launcher"] == "megatron":
            assert r["params_dtype"] == ("torch.float32" if e["recipe"] in ("fp32-adam", "sgd-momentum")
                                         else "torch.bfloat16")
            assert r["overlap_grad_reduce"] == (r["dp"] * r["cp"] > 1)
        elif e["launcher"] == "deepspeed":
            assert r["bf16"] == e["recipe"].startswith("bf16")


def test_megatron_reads_each_explicit_layout_as_the_plans_split():
    # Splits the first/last flags cannot state (interleaved, or middle stages that differ) go as
    # --pipeline-model-parallel-layout; Megatron-Core's own PipelineParallelLayerLayout read and validated each one.
    layouts = [e for e in ENTRIES if e["launcher"] == "megatron" and e["read"]["stage_layers"] is not None]
    assert {read_plan(e["plan"]).chunks > 1 for e in layouts} == {True, False}
    for e in layouts:
        assert "--pipeline-model-parallel-layout" in e["export"]
        assert tuple(e["read"]["stage_layers"]) == read_plan(e["plan"]).stage_layers


def test_the_launchers_read_each_recipes_fp8_as_the_library_prices_it():
    # What the real parsers read back (Megatron-LM args.fp8 / fp8_param_gather / accumulate_allreduce_grads_in_fp32;
    # torchtitan's model.converters and quantize.linear.float8), against the recipe's own fields.
    fp8_entries = {e["launcher"] for e in ENTRIES if ps.RECIPES[e["recipe"]].gemm == "fp8"}
    assert fp8_entries == {"megatron", "torchtitan"}
    for e in ENTRIES:
        rec, r = ps.RECIPES[e["recipe"]], e["read"]
        if e["launcher"] == "megatron":
            assert (r["fp8"] == "hybrid") == (rec.gemm == "fp8") and (r["fp8"] is None) == (rec.gemm != "fp8")
            assert r["fp8_param_gather"] == rec.fp8_weights
            # fp32 gradients: accumulated in fp32 beside bf16 weights, or the weights themselves fp32
            assert (r["grads_fp32"] or r["params_dtype"] == "torch.float32") == (rec.grads == 4)
        elif e["launcher"] == "torchtitan":
            assert ("quantize.linear.float8" in r["converters"]) == (rec.gemm == "fp8")
            if rec.gemm == "fp8":  # FP8 all-gather under FSDP; the output layer left in bf16, as the model prices it
                assert r["float8_all_gather"] == (rec.gather_bytes == 1.0) and r["float8_filter_fqns"] == ["output"]


def test_megatron_reads_the_dispatcher_and_ep_overlap_the_library_prices():
    # Megatron-LM's args.moe_token_dispatcher_type (default allgather, transformer_config.py L891), the flex
    # dispatcher's backend and overlap_moe_expert_parallel_comm, as its own parser read every expert-parallel export.
    moe = [e for e in ENTRIES if e["launcher"] == "megatron" and read_plan(e["plan"]).ep > 1]
    assert len(moe) >= 6 and any(read_plan(e["plan"]).ep_overlap for e in moe)
    assert {read_plan(e["plan"]).dispatcher for e in moe} == {None, "deepep", "hybridep"}
    for e in moe:
        plan = read_plan(e["plan"])
        assert e["read"]["moe_token_dispatcher_type"] == ("flex" if plan.dispatcher else "alltoall")
        assert e["read"]["moe_flex_dispatcher_backend"] == plan.dispatcher
        assert e["read"]["overlap_moe_expert_parallel_comm"] == bool(plan.ep_overlap)


@pytest.mark.parametrize("e", ENTRIES, ids=lambda e: f"{e['launcher']}-{e['name']}")
def test_cli_check_gives_back_every_exported_plan(e, tmp_path, capsys):
    from parallelsel.render.cli import main

    w, plan, c = _inputs(e)
    f = tmp_path / {"megatron": "launch.sh", "torchtitan": "job.toml", "deepspeed": "ds.json"}[e["launcher"]]
    f.write_text(e["export"])
    args = ["check", str(f), "--json", "--device", e["device"], "--gpus", str(e["gpus"]),
            "--gpus-per-node", str(min(e["gpus_per_node"], e["gpus"])), "--recipe", e["recipe"]]
    if e["launcher"] != "megatron":  # Megatron's script carries the shape; the others name a flavor or nothing
        args += ["--model", e["model"], "--seq-len", str(e["seq_len"])]
    assert main(args) == 0, capsys.readouterr().err
    got = json.loads(capsys.readouterr().out)
    p = got["plan"]
    assert read_plan(p["label"]) == plan
    assert (p["dp"], p["tp"], p["pp"], p["cp"], p["ep"], p["zero"], p["micro_batch"], p["chunks"]) == \
        (plan.dp, plan.tp, plan.pp, plan.cp, plan.ep, plan.zero, plan.micro_batch, plan.chunks)
    assert got["global_batch"] == w.global_batch and got["model"]["layers"] == w.model.layers
    assert got["model"]["params"] == w.model.params or e["launcher"] == "megatron"
    assert got["step_s"] > 0 and 0 < got["mfu"] < 1


def test_what_the_launchers_read_matches_the_recompute_policy():
    for e in ENTRIES:
        plan, r = read_plan(e["plan"]), e["read"]
        if e["launcher"] == "megatron":
            assert r["recompute_granularity"] == {"none": None}.get(plan.recompute, plan.recompute)
            if plan.recompute_layers is not None:
                assert (r["recompute_method"], r["recompute_num_layers"]) == ("block", plan.recompute_layers)
        elif e["launcher"] == "torchtitan":
            want = {"none": "none", "full": "full", "op": "selective"}[plan.recompute]
            if plan.recompute_layers is not None:  # every N-th block of a stage: floor(stage layers / N) blocks
                want = "selective"
                per = ps.MODELS[e["model"]].layers // (plan.pp * plan.chunks)
                assert per // int(r["selective_ac_option"]) == plan.recompute_layers
            assert r["activation_checkpoint"] == want
            if plan.recompute == "op":
                assert r["selective_ac_option"] == "op"
