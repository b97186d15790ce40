"""PP with ZeRO/FSDP follows the stack that runs it (parallelsel.core.stacks)."""

import pytest

import parallelsel as ps
from parallelsel.core.comm import traffic
from parallelsel.core.memory import stage_params
from parallelsel.core.stacks import effective_zero, pp_zero_stack

H100 = ps.DEVICES["h100-sxm-80gb"]
CLUSTER = ps.Cluster(H100, nodes=8, intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
W = ps.Workload(ps.MODELS["llama3-70b"], global_batch=64)


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
    assert any(x.plan.zero for x in r.results)
    for x in r.results:
        if x.plan.zero:
            assert x.estimate.stack is not None and x.estimate.stack in x.why
        else:
            assert x.estimate.stack is None
