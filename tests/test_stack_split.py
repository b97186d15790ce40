"""A job that states no pipeline split, on layers that do not divide over its pipeline, runs the split its stack
builds (parallelsel.core.plan.stack_split): DeepSpeed's PipelineModule partitioner, torchtitan's stage builder;
Megatron-Core refuses it. References: DeepSpeed's partition_balanced algorithm (its dynamic programme, written out
below), the splits torchtitan's published runs state, BLOOM's published plan, and the launchers' round trip."""

from __future__ import annotations

import math

import pytest

import parallelsel as ps
from parallelsel.core.launchers import export, read_config
from parallelsel.core.plan import stack_split, torchtitan_split
from parallelsel.course.stack_runs import STACK_RUNS
from parallelsel.course.measured import stack_estimate
from parallelsel.render.cli import main


def _deepspeed_partition_balanced(weights, parts):
    """deepspeed/runtime/utils.py partition_balanced (DeepSpeed 0.19): the linear partition of ``weights`` into
    ``parts`` contiguous parts minimising (heaviest - lightest), a later cut replacing an equal one; the items per part."""
    n = len(weights)
    pre = [0]
    for w in weights:
        pre.append(pre[-1] + w)
    hi = [[math.inf] * (parts + 1) for _ in range(n + 1)]
    lo = [[math.inf] * (parts + 1) for _ in range(n + 1)]
    cost = [[math.inf] * (parts + 1) for _ in range(n + 1)]
    cut = [[0] * (parts + 1) for _ in range(n + 1)]
    hi[0][0] = cost[0][0] = 0
    for i in range(1, n + 1):
        for j in range(1, min(i, parts) + 1):
            for k in range(i):
                s = pre[i] - pre[k]
                h, l_ = max(hi[k][j - 1], s), min(lo[k][j - 1], s)
                if cost[i][j] >= h - l_:
                    cost[i][j], hi[i][j], lo[i][j], cut[i][j] = h - l_, h, l_, k
    bounds = [n]
    for j in range(parts, 0, -1):
        bounds.append(cut[bounds[-1]][j])
    bounds.reverse()
    return tuple(pre[bounds[j + 1]] - pre[bounds[j]] for j in range(parts))


@pytest.mark.parametrize("layers", [30, 41, 70, 95, 105, 126])
def test_deepspeed_split_is_its_partitioners(layers):
    # Megatron-DeepSpeed's GPTModelPipe: partition_method='type:transformer' weighs each transformer layer 1 and
    # the embedding, norms and output 0 (two items before the layers, three after).
    items = [0, 0] + [1] * layers + [0, 0, 0]
    for pp in range(2, 17):
        if layers % pp == 0:
            assert stack_split("deepspeed", layers, pp) is None   # the even split: a plan without a split states it
            continue
        assert stack_split("deepspeed", layers, pp) == _deepspeed_partition_balanced(items, pp), pp


def test_torchtitan_split_is_the_one_its_published_405b_runs_state():
    # torchtitan's Table 5/6 runs (126 layers on 8 ranks, 1F1B, and 16 virtual stages looped) state 15/16x6/15.
    published = {r.plan["stage_layers"] for r in STACK_RUNS if r.stack == "torchtitan" and r.plan.get("pp", 1) == 8}
    assert published == {(15,) + (16,) * 6 + (15,)}
    assert stack_split("torchtitan", 126, 8) == (15,) + (16,) * 6 + (15,)
    assert stack_split("torchtitan", 126, 8, chunks=2, schedule="interleaved") == (15,) + (16,) * 6 + (15,)
    # V-shaped schedules hold stages r and 2 pp - 1 - r: the two thin end stages land on rank 0.
    assert stack_split("torchtitan", 126, 8, chunks=2, schedule="zbv") == (14,) + (16,) * 7
    assert stack_split("megatron-core", 126, 8) is None


def _bloom(stack):
    # BLOOM 176B (BigScience 2022, §3.4): 70 layers, hidden 14336, 112 heads, vocabulary 250,880, sequence 2048,
    # global batch 2048 on 384 A100 80GB as DP8 x TP4 x PP12 with ZeRO-1, micro-batch 2, full recomputation.
    model = ps.Transformer(layers=70, hidden=14336, heads=112, seq_len=2048, vocab=250880)
    w = ps.Workload(model, global_batch=2048, seq_len=2048, stack=stack)
    plan = ps.Plan(dp=8, tp=4, pp=12, zero=1, micro_batch=2, recompute="full")
    return w, plan, ps.Cluster(ps.DEVICES["a100-80gb"], nodes=48)


def test_bloom_plan_runs_on_deepspeed_and_megatron_core_refuses_it():
    w, plan, c = _bloom("deepspeed")
    e = ps.estimate(w, plan, c)
    assert "layers_not_divisible" not in [r.code for r in e.reasons] and e.fits
    assert e.plan.stage_layers == (6,) * 10 + (5, 5)
    # The split written out is the same job: the same estimate.
    stated = ps.estimate(w, plan.with_(stage_layers=e.plan.stage_layers), c)
    assert stated.step.total == e.step.total and stated.memory.total == e.memory.total
    w, plan, c = _bloom("megatron-core")
    e = ps.estimate(w, plan, c)
    assert [r.code for r in e.reasons] == ["layers_not_divisible"]   # validate_args asserts it
    assert e.plan.stage_layers is None


def test_torchtitan_405b_without_a_split_is_timed_on_its_own_split():
    run = next(r for r in STACK_RUNS if r.label.endswith("FSDP8 TP8 PP8, 1F1B"))
    stated = stack_estimate(run)
    unstated = stack_estimate(type(run)(**{**run.__dict__, "plan": {k: v for k, v in run.plan.items()
                                                                    if k != "stage_layers"}}))
    assert unstated.plan.stage_layers == stated.plan.stage_layers
    assert unstated.step.total == stated.step.total


def test_torchtitan_toml_without_layers_per_stage_reads_as_torchtitan_builds_it():
    toml = ('[parallelism]\ndata_parallel_shard_degree = 2\npipeline_parallel_degree = 4\n'
            'pipeline_parallel_schedule = "1F1B"\n[training]\nlocal_batch_size = 8\nseq_len = 8192\n')
    cfg = read_config(toml, "torchtitan", world=8, layers=32)
    # 32 layers + embedding + output = 34 units on 4 stages: 9, 9, 8, 8, less one on each end.
    assert cfg.plan["stage_layers"] == torchtitan_split(32, 4) == (8, 9, 8, 7)
    flat = toml.replace("[training]", "pipeline_parallel_first_stage_less_layers = 0\n"
                                      "pipeline_parallel_last_stage_less_layers = 0\n[training]")
    assert "stage_layers" not in read_config(flat, "torchtitan", world=8, layers=32).plan


def test_torchtitan_export_states_its_own_uneven_split_and_reads_back():
    w = ps.Workload(ps.MODELS["llama3-70b"], global_batch=64, seq_len=8192, stack="torchtitan")
    split = stack_split("torchtitan", 80, 6)
    assert split == (13, 14, 14, 14, 13, 12)   # 82 units: 14 x 4 + 13 x 2, one fewer on each end
    plan = ps.Plan(dp=1, tp=8, pp=6, zero=3, sp=True, micro_batch=1, recompute="full", stage_layers=split)
    text = export(w, plan, "torchtitan")
    assert "pipeline_parallel_layers_per_stage" not in text
    assert "pipeline_parallel_first_stage_less_layers = 1" in text
    back = read_config(text, "torchtitan", world=48, layers=80)
    assert back.plan["stage_layers"] == split


def test_cli_memory_takes_a_deepspeed_plan_on_layers_that_do_not_divide(capsys):
    args = ["memory", "--layers", "70", "--hidden", "14336", "--heads", "112", "--vocab", "250880",
            "--device", "a100-80gb", "--gpus", "384", "--tp", "4", "--pp", "12", "--zero", "1", "--micro-batch",
            "2", "--recompute", "full", "--global-batch", "2048", "--seq-len", "2048", "--lang", "en"]
    assert main(args + ["--stack", "deepspeed"]) == 0
    assert "L6x10/5x2" in capsys.readouterr().out
    assert main(args + ["--stack", "megatron-core"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not divisible" in err[0]


def test_an_export_of_a_plan_without_a_split_states_the_split_the_stack_builds():
    # torchtitan given layers_per_stage = 80 // 12 = 6 would build 14 stages for 12 ranks and refuse at launch;
    # with no layers_per_stage and less-layers 1/1 it builds the split the plan was priced on.
    w = ps.Workload(ps.MODELS["llama3-70b"], global_batch=12, seq_len=8192, stack="torchtitan")
    plan = ps.Plan(dp=1, tp=8, pp=12, zero=3, sp=True, micro_batch=1, recompute="full")
    text = export(w, plan, "torchtitan")
    assert "pipeline_parallel_layers_per_stage" not in text
    assert "pipeline_parallel_first_stage_less_layers = 1" in text
    back = read_config(text, "torchtitan", world=96, layers=80)
    assert back.plan["stage_layers"] == ps.estimate(w, plan, ps.Cluster(ps.DEVICES["h200-141gb"], nodes=12)).plan.stage_layers


def test_interleaved_torchtitan_split_reads_and_exports_both_ways():
    toml = ('[parallelism]\ndata_parallel_shard_degree = 2\npipeline_parallel_degree = 4\n'
            'pipeline_parallel_schedule = "Interleaved1F1B"\n[training]\nlocal_batch_size = 8\nseq_len = 8192\n')
    cfg = read_config(toml, "torchtitan", world=8, layers=80)
    assert cfg.plan["chunks"] == 2 and sum(cfg.plan["stage_layers"]) == 80
    assert cfg.plan["stage_layers"] == stack_split("torchtitan", 80, 4, chunks=2, schedule="interleaved")
    w = ps.Workload(ps.MODELS["llama3-70b"], global_batch=16, seq_len=8192, stack="torchtitan")
    plan = ps.Plan(dp=2, pp=4, zero=3, micro_batch=1, schedule="interleaved", chunks=2, recompute="full",
                   stage_layers=cfg.plan["stage_layers"])
    back = read_config(export(w, plan, "torchtitan"), "torchtitan", world=8, layers=80)
    assert back.plan["stage_layers"] == plan.stage_layers and back.plan["chunks"] == 2


def test_explain_and_search_agree_on_a_plan_without_a_split():
    from parallelsel.core.search import enumerates, explain

    w, plan, c = _bloom("deepspeed")
    stated = plan.with_(stage_layers=ps.estimate(w, plan, c).plan.stage_layers)
    assert enumerates(w, c, plan) == enumerates(w, c, stated)
    assert explain(w, c, plan, top=40).rank == explain(w, c, stated, top=40).rank


def test_a_pinned_chunk_count_the_layers_do_not_divide_is_searched_as_torchtitan_builds_it():
    w = ps.Workload(ps.MODELS["llama3-405b"], global_batch=96, seq_len=8192, stack="torchtitan")
    c = ps.Cluster(ps.DEVICES["h200-141gb"], nodes=48)
    plan = ps.Plan(dp=8, tp=8, pp=6, zero=3, sp=True, schedule="interleaved", chunks=2, recompute="full")
    assert ps.estimate(w, plan, c).plan.stage_layers == (21, 22, 21, 21, 21, 20)   # 126 on 12 virtual stages
    r = ps.search(w, c, top=5, fixed={"pp": 6, "chunks": 2, "tp": 8})
    assert r.results and "layers_not_divisible" not in r.excluded
    assert all(x.plan.stage_layers == (21, 22, 21, 21, 21, 20) for x in r.results)
    assert len({x.plan for x in r.results}) == len(r.results)   # each plan once


def test_recompute_layers_may_not_exceed_the_fewest_layers_a_chunk_holds():
    w = ps.Workload(ps.MODELS["llama3-405b"], global_batch=96, seq_len=8192, stack="torchtitan")
    # 126 layers on 12 torchtitan stages: 10/11x10/9 -- the last rank holds 9.
    assert stack_split("torchtitan", 126, 12)[-1] == 9
    codes = [r.code for r in ps.estimate(w, ps.Plan(dp=1, tp=8, pp=12, zero=3, sp=True, recompute="full",
                                                    recompute_layers=10), ps.Cluster(ps.DEVICES["h100-sxm-80gb"],
                                                                                     nodes=12)).reasons]
    assert "recompute_layers_exceed_chunk" in codes


def test_torch_code_builds_every_layer_of_a_split_the_stack_makes():
    from parallelsel.render.plan_code import torch_code

    w = ps.Workload(ps.Transformer(layers=70, hidden=4096, heads=32, seq_len=2048, vocab=32000), global_batch=48,
                    stack="torchtitan")
    code = torch_code(w, ps.Plan(dp=4, pp=12, zero=3, micro_batch=1))
    assert "[5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5]" in code


def test_torchtitan_layers_per_stage_that_leaves_a_partial_round_is_refused():
    toml = ('[parallelism]\ndata_parallel_shard_degree = 8\npipeline_parallel_degree = 12\n'
            'pipeline_parallel_layers_per_stage = 6\n[training]\nlocal_batch_size = 12\nseq_len = 8192\n')
    with pytest.raises(ValueError, match="pipeline_parallel_layers_per_stage=6.*14 stages.*multiple of.*=12"):
        read_config(toml, "torchtitan", world=96, layers=80)   # ceil(82 / 6) = 14 stages for 12 ranks

    base = ('[parallelism]\ndata_parallel_shard_degree = 2\npipeline_parallel_degree = 4\n'
            'pipeline_parallel_schedule = "{}"\npipeline_parallel_layers_per_stage = {}\n'
            '[training]\nlocal_batch_size = 8\nseq_len = 8192\n')
    with pytest.raises(ValueError, match="12 stages.*one a rank with 1F1B"):
        read_config(base.format("1F1B", 3), "torchtitan", world=8, layers=32)   # 34 units: 12 stages, 3 a rank
    with pytest.raises(ValueError, match="4 stages.*two or more a rank with Interleaved1F1B"):
        read_config(base.format("Interleaved1F1B", 9), "torchtitan", world=8, layers=32)   # one a rank


def test_states_floor_bounds_the_breakdown_of_a_plan_without_a_split():
    from parallelsel.core.memory import breakdown, states_floor

    w = ps.Workload(ps.MODELS["llama3-70b"], global_batch=12, seq_len=8192, stack="torchtitan")
    plan = ps.Plan(dp=1, tp=2, pp=12, micro_batch=1, recompute="full")   # 80 layers, 12 ranks: first holds 6
    assert states_floor(w, plan) <= breakdown(w, plan).total   # (priced on 7 a rank, the floor was above it)


def test_deepspeed_pipeline_reduces_gradients_after_the_schedule_drains():
    # DeepSpeed's TrainSchedule issues ReduceGrads and OptimizerStep only at its last step: with PP nothing of
    # the DP traffic hides behind compute; without PP (its plain engine) and on Megatron-Core it does.
    w, plan, c = _bloom("deepspeed")
    dp = [t for t in ps.comm.traffic(w, plan, c) if t.strategy in ("DP", "ZeRO")]
    assert dp and not any(t.overlappable for t in dp)
    mc = ps.Workload(w.model, global_batch=w.global_batch, seq_len=w.seq_len, stack="megatron-core")
    split = ps.estimate(w, plan, c).plan.stage_layers
    assert all(t.overlappable for t in ps.comm.traffic(mc, plan.with_(stage_layers=split), c)
               if t.strategy in ("DP", "ZeRO"))
    no_pp = ps.Plan(dp=96, tp=4, zero=1, micro_batch=1, recompute="full")
    assert all(t.overlappable for t in ps.comm.traffic(w, no_pp, c) if t.strategy in ("DP", "ZeRO"))
