"""PP with ZeRO/FSDP follows the stack that runs it (parallelsel.core.stacks)."""

import pytest

import parallelsel as ps
from parallelsel.core.comm import traffic
from parallelsel.core.memory import stage_params
from parallelsel.core.stacks import effective_zero, pp_zero_stack

H100 = ps.DEVICES["h100-sxm-80gb"]
CLUSTER = ps.Cluster(H100, nodes=8, intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
W = ps.Workload(ps.MODELS["llama3-70b"], global_batch=64, recipe=ps.RECIPES["bf16-adam"])  # 2 + 2 + 12 by hand


def test_pp_with_fsdp_runs_as_torchtitan_runs_it():
    # torchtitan: reshard_after_forward = not pp_enabled; the pipelining stage syncs gradients only at
    # the last micro-batch. So DP2 x TP4 x PP8 with FSDP holds the stage's bf16 weights and gradients
    # whole (2 + 2 bytes a parameter) and only the 12-byte optimizer state sharded over DP, and it
    # gathers and reduce-scatters once per step -- not per micro-batch.
    plan = ps.Plan(dp=2, tp=4, pp=8, zero=3)
    e = ps.estimate(W, plan, CLUSTER)
    assert e.stack.code == "pp_fsdp_torchtitan" and e.stack.values["pp"] == 8
    assert effective_zero(plan) == 1
    dense, _ = stage_params(W.model, tp=4, pp=8, stage=7 if e.memory.stage == "last" else 0)
    assert e.memory.params == pytest.approx(2 * dense) and e.memory.grads == pytest.approx(2 * dense)
    assert e.memory.optimizer == pytest.approx(12 * dense / 2) and e.memory.gather_peak == 0
    fsdp = [t for t in traffic(W, plan, CLUSTER) if t.strategy == "FSDP"]
    assert {t.op for t in fsdp} == {"all-gather", "reduce-scatter"} and {t.calls for t in fsdp} == {1}
    # Without PP, FSDP re-gathers for every one of the 64 / (16 x 1) = 4 micro-batches.
    flat = [t for t in traffic(W, ps.Plan(dp=16, tp=4, zero=3), CLUSTER) if t.strategy == "FSDP"]
    assert {t.calls for t in flat} == {4}


def test_pp_with_zero2_is_run_by_no_stack():
    # DeepSpeed's PipelineEngine asserts zero_optimization_stage() < 2.
    e = ps.estimate(W, ps.Plan(dp=2, tp=4, pp=8, zero=2), CLUSTER)
    assert not e.fits and e.stack.code == "pp_zero2_no_stack"
    assert pp_zero_stack(ps.Plan(dp=2, tp=4, pp=8, zero=1)).code == "pp_zero1_stacks"
    assert pp_zero_stack(ps.Plan(dp=16, tp=4, zero=2)) is None


def test_search_labels_pp_zero_plans_with_their_stack():
    r = ps.search(W, CLUSTER, top=10, fixed={"pp": 8})
    assert r.results and all(x.plan.zero != 2 for x in r.results)
    assert r.excluded["pp_zero2_no_stack"] > 0
    # The wider space (micro-batches, interleaving depths) fills the top 10 with ZeRO-0 plans here; pin ZeRO-1
    # to see PP x ZeRO plans labelled with their stack.
    sharded = ps.search(W, CLUSTER, top=5, fixed={"pp": 8, "zero": 1, "tp": 2, "cp": 1})
    assert sharded.results and all(x.plan.zero == 1 and x.plan.dp > 1 for x in sharded.results)
    for x in r.results + sharded.results:
        if x.plan.zero:
            assert x.estimate.stack is not None and x.estimate.stack in x.why
        else:
            assert x.estimate.stack is None


# -- ps.STACKS: the frameworks' defaults as data (facts checked against their sources, cited per line) --

def test_stacks_are_the_three_frameworks_and_frozen():
    assert set(ps.STACKS) == {"megatron-core", "torchtitan", "deepspeed"}
    for key, s in ps.STACKS.items():
        assert s.key == key and s.version and key.split("-")[0] in s.source.lower()
        with pytest.raises(AttributeError):
            s.version = "x"  # frozen
        with pytest.raises(TypeError):
            s.fused["eager"] = ()  # read-only mapping


def test_megatron_core_bf16_keeps_18_bytes_per_param():
    # Megatron-LM docs/user-guide/features/dist_optimizer.md table: bf16 params + fp32 grads, 18 bytes
    # non-distributed; 6 + 12/d with the distributed optimizer.
    mc = ps.STACKS["megatron-core"]
    assert mc.model_state_bytes == 18
    assert ps.memory.model_states(1, ps.RECIPES[mc.recipe], dp=8, zero=1).total == pytest.approx(6 + 12 / 8)
    # arguments.py L1204-1217: bf16 forces fp32 gradient all-reduce; the dist-opt all-gathers bf16 params.
    assert (mc.grad_reduce_dtype, mc.param_gather_dtype) == ("fp32", "bf16")
    # arguments.py L3121/L3148 and model_parallel_config.py: no overlap by default; TP overlap needs SP.
    assert mc.overlap_grad_reduce == () and not mc.overlap_tp_comm and mc.tp_overlap_needs == ("sp",)


def test_torchtitan_and_deepspeed_collective_dtypes():
    tt, ds = ps.STACKS["torchtitan"], ps.STACKS["deepspeed"]
    # torchtitan configs.py L94-100: mixed_precision_param bf16, mixed_precision_reduce fp32.
    assert (tt.grad_reduce_dtype, tt.param_gather_dtype) == ("fp32", "bf16")
    # torchtitan fsdp.py L112-137: with PP, parameters are not resharded after forward.
    assert tt.pp_fsdp_reshard is False and 3 in tt.pp_zero
    # DeepSpeed engine.py L1405-1416: communication_data_type defaults to the model dtype (bf16).
    assert ds.grad_reduce_dtype == "bf16" and ds.model_state_bytes == 16
    # DeepSpeed zero/config.py L383-386: overlap_comm defaults to True only for ZeRO-3; pipe/engine.py: ZeRO < 2 with PP.
    assert ds.overlap_grad_reduce == (3,) and ds.pp_zero == (0, 1) and ds.schedules == ("1f1b",)


def test_workload_names_its_stack():
    m = ps.MODELS["llama3-8b"]
    assert ps.Workload(m).stack == "megatron-core" and ps.Workload(m).compile is False
    assert ps.STACKS[ps.Workload(m, stack="torchtitan", compile=True).stack].fused_ops(True)[-1] == "cross_entropy"
    for bad, name in ((dict(stack="nemo"), "stack"), (dict(compile="yes"), "compile"), (dict(compile=True), "compile")):
        with pytest.raises(ValueError, match=name):
            ps.Workload(m, **bad)


# -- bytes as each stack sends them, and state sharded where the stack shards it --

LLAMA8 = ps.MODELS["llama3-8b"]
TWO_NODES = ps.Cluster(H100, nodes=2)


def _bytes(stack, plan, recipe=None):
    w = ps.Workload(LLAMA8, global_batch=16, stack=stack, recipe=recipe)
    out = {}
    for t in traffic(w, plan, TWO_NODES):
        out[t.op] = out.get(t.op, 0.0) + t.nbytes * t.calls
    return out


def test_torchtitan_fsdp2_reduce_scatters_fp32_once_and_gathers_bf16_twice():
    # torchtitan configs.py L94-102: MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32). One micro-batch:
    # bf16 all-gather before forward and again before backward (the root -- embedding, norm, head -- is not
    # resharded after forward, so not re-gathered), one fp32 reduce-scatter: 4 bytes vs 2 + 2 a parameter.
    b = _bytes("torchtitan", ps.Plan(dp=16, zero=3))
    from parallelsel.core.memory import fsdp_units
    root = sum(u.params * u.count for u in fsdp_units(LLAMA8) if not u.reshard_after_forward)
    assert b["reduce-scatter"] == pytest.approx(4 * LLAMA8.params)
    assert b["all-gather"] + 2 * root == pytest.approx(b["reduce-scatter"])


def test_ddp_under_autocast_and_megatron_reduce_fp32_deepspeed_bf16():
    # DDP: fp32 leaf gradients under torch.autocast -> fp32 buckets (PyTorch AMP docs); Megatron-LM bf16 forces
    # fp32 all-reduce (arguments.py L1204-1217); DeepSpeed communication_data_type = model dtype (engine.py L1405).
    for stack, nbytes in (("torchtitan", 4), ("megatron-core", 4), ("deepspeed", 2)):
        assert _bytes(stack, ps.Plan(dp=16))["all-reduce"] == pytest.approx(nbytes * LLAMA8.params), stack
    # Megatron's distributed optimizer: fp32 reduce-scatter, bf16 all-gather of the updated parameters (its docs).
    b = _bytes("megatron-core", ps.Plan(dp=16, zero=1))
    assert (b["reduce-scatter"], b["all-gather"]) == pytest.approx((4 * LLAMA8.params, 2 * LLAMA8.params))
    # An fp32 recipe sends fp32 everywhere (the recorded torch runs in tests/data are fp32).
    assert _bytes("deepspeed", ps.Plan(dp=16), ps.RECIPES["fp32-adam"])["all-reduce"] == pytest.approx(4 * LLAMA8.params)


def test_megatron_core_default_workload_holds_18_bytes_a_parameter():
    # Megatron-LM dist_optimizer.md: 18 bytes/param non-distributed, 6 + 12/d with the distributed optimizer.
    w = ps.Workload(LLAMA8, global_batch=8)
    one = ps.Cluster(H100, nodes=1)
    assert ps.estimate(w, ps.Plan(dp=8), one).memory.states == pytest.approx(18 * LLAMA8.params)
    assert ps.estimate(w, ps.Plan(dp=8, zero=1), one).memory.states == pytest.approx((6 + 12 / 8) * LLAMA8.params)


@pytest.mark.parametrize("stack", list(ps.STACKS))
def test_zero1_dp4_cp2_shards_states_like_dp8(stack):
    # Megatron's distributed optimizer shards over DP x CP (distributed_data_parallel.py L289), torchtitan's
    # fsdp mesh is dp_shard x cp (parallel_dims.py), DeepSpeed ZeRO over DP x SP (utils/groups.py L845-851).
    w = ps.Workload(LLAMA8, seq_len=32768, global_batch=8, stack=stack)
    one = ps.Cluster(H100, nodes=1)
    cp, dp = (ps.estimate(w, p, one).memory for p in (ps.Plan(dp=4, cp=2, zero=1), ps.Plan(dp=8, zero=1)))
    assert cp.optimizer == pytest.approx(dp.optimizer) and cp.states == pytest.approx(dp.states)
    # ... and the traffic: one reduce-scatter over the 8 ranks of DP x CP.
    (rs,) = [t for t in traffic(w, ps.Plan(dp=4, cp=2, zero=1), one) if t.op == "reduce-scatter"]
    assert rs.group == 8


def test_compile_scope_model_leaves_the_loss_eager():
    # torchtitan's [compile] components: ["model"] compiles the blocks only (and torchtitan of 2024-12-18 to
    # 2025-04-02 never compiled the loss: commit e8977b0). The loss then keeps its eager fp32 buffers in memory
    # and its unfused bytes in time; the blocks stay fused. Measured: the December 2024 compiled rows' peak
    # memory is within 10% with it (tests/test_stack_runs.py) and was 16-21% low without it.
    m = ps.MODELS["llama3-8b"]
    plan = ps.Plan(dp=8, zero=3, micro_batch=2, recompute="op")
    cluster = ps.Cluster(ps.DEVICES["h100-hbm2e-96gb"], nodes=1)
    works = {c: ps.Workload(m, global_batch=16, stack="torchtitan", compile=c) for c in (False, True, "model")}
    fused = {c: ps.STACKS["torchtitan"].fused_ops(c) for c in works}
    assert "cross_entropy" in fused[True] and "cross_entropy" not in fused["model"]
    assert set(fused["model"]) == set(fused[True]) - {"cross_entropy"}
    est = {c: ps.estimate(w, plan, cluster) for c, w in works.items()}
    # The eager loss's extra buffers are one micro-batch's logits x 8 bytes (memory.EAGER_LOSS_BYTES) before
    # the allocator's share: the scope-'model' peak sits that far above the fully compiled one, as eager does.
    logits = 2 * 8192 * m.vocab
    assert est["model"].memory.embeddings - est[True].memory.embeddings == pytest.approx(8 * logits)
    assert est["model"].memory.embeddings == pytest.approx(est[False].memory.embeddings)
    assert est[True].step.total < est["model"].step.total < est[False].step.total
    with pytest.raises(ValueError, match=r"compile='blocks'.*'model'"):
        ps.Workload(m, stack="torchtitan", compile="blocks")


def test_compile_scope_in_the_cli_and_the_torchtitan_round_trip(capsys, tmp_path):
    from parallelsel.core.launchers import read_config
    from parallelsel.render.cli import main

    base = ["plan", "--model", "llama3-8b", "--nodes", "1", "--global-batch", "16", "--stack", "torchtitan", "--top", "1"]
    for flag, want in (([], False), (["--compile"], True), (["--compile-model-only"], "model")):
        assert main(base + flag + ["--export", "torchtitan"]) == 0
        toml = capsys.readouterr().out
        assert read_config(toml).compile == want
    assert main(base[:-2] + ["--stack", "megatron-core", "--compile-model-only"]) == 2  # TE runs no torch.compile
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--compile" in err


def test_sequence_parallel_layout_copies_follow_torchs_functional_collectives():
    # torchtitan keeps activations [b, s, h] and shards the sequence as Shard(1); NCCL works on dim 0, so torch 2.13's
    # all_gather_single re-concatenates along dim 1 (a view only when b == 1: _maybe_view_chunk_cat) and
    # reduce_scatter_single always concatenates first (_chunk_or_narrow_cat). Megatron-Core's [s, b, h] needs neither.
    # Checked as a consequence, not a formula: the same plan and recipe on both stacks, the TP items compared.
    from parallelsel.core.comm import traffic

    m = ps.MODELS["llama3-8b"]
    cluster = ps.Cluster(H100, nodes=1)
    recipe = ps.RECIPES["bf16-compute-fp32-adam"]

    def tp_times(stack, b, **kw):
        w = ps.Workload(m, recipe=recipe, global_batch=8 * b, stack=stack, compile=stack == "torchtitan")
        items = traffic(w, ps.Plan(tp=8, sp=True, micro_batch=b, **kw), cluster)
        return {it.op: it.time for it in items if it.strategy == "TP"}

    for b in (1, 2):
        mc, tt = tp_times("megatron-core", b), tp_times("torchtitan", b)
        assert tt["reduce-scatter"] > mc["reduce-scatter"]
        assert (tt["all-gather"] > mc["all-gather"]) == (b > 1)
    # Under TP overlap the item times are the same collectives plus each stack's copies: Transformer Engine's
    # userbuffers work in place; torchtitan's async TP stages its shard through the symmetric-memory buffer, sums
    # the partial products in a pass of its own, and its backward reduce-scatters stay plain (with their copies).
    for b in (1, 2):
        mc, tt = tp_times("megatron-core", b, tp_overlap=True), tp_times("torchtitan", b, tp_overlap=True)
        assert tt["reduce-scatter"] > mc["reduce-scatter"] and tt["all-gather"] > mc["all-gather"]


def test_zero_counts_over_dp_times_cp():
    # Every stack shards ZeRO/FSDP state over DP x CP (Megatron-Core's intra_dp_cp group, torchtitan's dp_shard x cp
    # mesh, DeepSpeed's DP x sequence-parallel group), so a plan with one DP rank and CP 8 still shards: the search
    # tries ZeRO there (torchtitan's Table 2 and 6 ran FSDP1 x CP8), and PP with ZeRO-2 is still no stack's plan.
    from parallelsel.core.search import enumerates

    w = ps.Workload(ps.MODELS["llama3-8b"], global_batch=1, seq_len=65536, stack="torchtitan")
    c = ps.Cluster(H100, nodes=1)
    assert enumerates(w, c, ps.Plan(dp=1, cp=8, zero=3, micro_batch=1, recompute="full"))
    assert ps.estimate(w, ps.Plan(dp=1, cp=8, zero=3, micro_batch=1, recompute="full"), c).memory.optimizer < \
        ps.estimate(w, ps.Plan(dp=1, cp=8, zero=0, micro_batch=1, recompute="full"), c).memory.optimizer / 7
    assert pp_zero_stack(ps.Plan(dp=1, cp=2, pp=2, zero=2)).code == "pp_zero2_no_stack"


def test_torchtitan_sp_saves_the_gathered_linear_inputs():
    # Under TP + SP, Megatron's column-parallel linear saves its sequence shard and gathers it again in backward
    # (Korthikanti et al. 2022 Table 2, "TP + SP" row); torchtitan's DTensor plan gathers the sequence before
    # attention, the MLP and the output layer (PrepareModuleInput / ColwiseParallel to Replicate), and autograd
    # saves that whole input. Its norms and dropout masks stay sharded, so its stored activations sit strictly
    # between the published "TP + SP" and "TP" (no SP) rows.
    model, c = ps.MODELS["llama3-70b"], ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=8)
    plan = ps.Plan(dp=8, tp=8, sp=True, zero=3, micro_batch=1, recompute="none")
    acts = {stack: ps.estimate(ps.Workload(model, global_batch=64, stack=stack), plan, c).memory.activations
            for stack in ("megatron-core", "torchtitan")}
    no_sp = ps.estimate(ps.Workload(model, global_batch=64), plan.with_(sp=False), c).memory.activations
    assert acts["megatron-core"] < acts["torchtitan"] < no_sp
