"""Fitting as training runs today: fused attention, driver-reported memory, runtime reserve, headroom."""

import pytest

import parallelsel as ps
from parallelsel.core.memory import budget, communicators, runtime_reserve

MiB, GiB = 2**20, 2**30
H100 = ps.DEVICES["h100-sxm-80gb"]


def test_long_context_fits_only_with_the_fused_kernel():
    # Llama-3 8B at 32k context, FSDP over 8 H100 with full recomputation. Full recompute stores only
    # each layer's input, but the layer being recomputed materialises its activations for backward:
    # with the standard kernel that includes the softmax output, 2 a s^2 b bytes (2 x 32 x 32768^2 = 64 GiB; Llama
    # trains without dropout, so no mask or dropout output beside it); a fused kernel keeps 4 a s b bytes of
    # logsumexp instead (4 MiB).
    m = ps.MODELS["llama3-8b"]
    c = ps.Cluster(H100, nodes=1, gpus_per_node=8, intra=ps.LINKS["nvlink4"])
    plan = ps.Plan(dp=8, zero=3, recompute="full")
    flash = ps.estimate(ps.Workload(m, global_batch=8, seq_len=32768), plan, c)
    std = ps.estimate(ps.Workload(m, global_batch=8, seq_len=32768, attention="standard"), plan, c)
    assert flash.fits and not std.fits
    scores = 2 * 32 * 32768**2
    assert scores / GiB == 64
    assert std.memory.activations - flash.memory.activations == pytest.approx(scores - 4 * 32 * 32768)
    assert std.memory.total > H100.memory > flash.memory.total


def test_usable_memory_is_driver_memory_minus_context_and_communicators():
    # nvidia-smi reports 81559 MiB on an H100 80GB HBM3. DP8 x TP8 creates the world, DP and TP
    # groups: 512 MiB of CUDA context + 3 x 688 MiB of NCCL buffers.
    assert H100.memory == 81559 * MiB
    plan = ps.Plan(dp=8, tp=8)
    assert communicators(plan) == 3 and communicators(ps.Plan()) == 0
    # HSDP: world plus the two DeviceMesh dimensions (replicate, shard) instead of one DP group
    assert communicators(ps.Plan(dp=16, zero=3, shard=8)) == 3
    assert runtime_reserve(plan) == (512 + 3 * 688) * MiB
    assert budget(H100, plan, headroom=0.05) == pytest.approx((81559 - 512 - 3 * 688) * MiB * 0.95)
    with pytest.raises(ValueError, match="headroom=1"):
        budget(H100, plan, headroom=1)
    with pytest.raises(ValueError, match="headroom=-0.1"):
        ps.estimate(ps.Workload(ps.MODELS["gpt2-1.5b"]), ps.Plan(), ps.Cluster(H100, nodes=1), headroom=-0.1)


def _groups_by_hand(plan):
    """The process groups a rank of ``plan`` joins and runs collectives on, named as Megatron-LM's
    parallel_state and PyTorch's DeviceMesh name them (written out here, not taken from the library)."""
    if plan.dp * plan.tp * plan.pp * plan.cp == 1:
        return []
    names = ["world"]
    replicas = plan.dp * plan.cp  # ranks holding the same weights: gradients are reduced over all of them
    if plan.zero > 0 and plan.shard is not None and 1 < plan.shard < replicas:
        names += ["hsdp shard", "hsdp replicate"]
    elif replicas > 1:
        names.append("data parallel with context parallel" if plan.cp > 1 else "data parallel")
    for name, degree in (("tensor", plan.tp), ("pipeline", plan.pp), ("context", plan.cp), ("expert", plan.ep)):
        if degree > 1:
            names.append(name)
    if plan.ep > 1 and replicas // plan.ep > 1:
        names.append("expert data parallel")
    return names


def test_communicators_count_context_and_expert_groups():
    cases = {
        ps.Plan(cp=4): ["world", "data parallel with context parallel", "context"],
        ps.Plan(tp=2, cp=4, dp=4): ["world", "data parallel with context parallel", "tensor", "context"],
        ps.Plan(dp=8, ep=4): ["world", "data parallel", "expert", "expert data parallel"],
        ps.Plan(dp=4, ep=4): ["world", "data parallel", "expert"],
        ps.Plan(dp=16, zero=3, shard=8): ["world", "hsdp shard", "hsdp replicate"],
    }
    for plan, names in cases.items():
        assert _groups_by_hand(plan) == names
        assert communicators(plan) == len(names), plan


def _by_hand_budget(plan, device, headroom):
    return (device.memory - 512 * MiB - 688 * MiB * len(_groups_by_hand(plan))) * (1 - headroom)


@pytest.mark.parametrize("headroom", [0.03, 0.2])
def test_no_search_plan_or_feasible_verdict_above_the_budget(headroom):
    w = ps.Workload(ps.MODELS["llama3-70b"], global_batch=64)
    c = ps.Cluster(H100, nodes=8, gpus_per_node=8, intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
    r = ps.search(w, c, top=10, headroom=headroom)
    assert r.results
    # At 128k tokens the search returns context-parallel plans: their CP groups are charged too.
    long = ps.search(ps.Workload(ps.MODELS["llama3-8b"], global_batch=16, seq_len=131072),
                     ps.Cluster(H100, nodes=4, gpus_per_node=8, intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"]),
                     top=10, headroom=headroom)
    assert any(x.plan.cp > 1 for x in long.results)
    for x in long.results:
        assert x.estimate.memory.total <= _by_hand_budget(x.plan, H100, headroom)
        assert x.estimate.budget == pytest.approx(_by_hand_budget(x.plan, H100, headroom))
    for x in r.results:
        assert x.estimate.memory.total <= _by_hand_budget(x.plan, H100, headroom)
        assert x.estimate.headroom == headroom and x.estimate.margin >= headroom
    if headroom == 0.03:
        # The default accepts plans a 20% headroom would not: the test can fail.
        assert any(x.estimate.memory.total > _by_hand_budget(x.plan, H100, 0.2) for x in r.results)
    for row in ps.selection_matrix(w, c, headroom=headroom):
        if row.verdict is not ps.Verdict.INFEASIBLE:
            assert row.best.memory.total <= _by_hand_budget(row.best.plan, H100, headroom)
