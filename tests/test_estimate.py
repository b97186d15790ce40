"""Step-time estimates: fit, reasons, scaling, overlap rules, bubble, MFU and E(P)."""

from __future__ import annotations


import pytest

from parallelsel import DEVICES, LINKS, MODELS, Cluster, Plan, Workload
from parallelsel.core.estimate import (
    DEFAULT_EFFICIENCY,
    Estimate,
    bubble_overhead_for,
    estimate,
    scaling_efficiency,
)

A100 = DEVICES["a100-80gb"]
GPT2 = MODELS["gpt2-1.5b"]


def test_small_model_fits_on_one_a100_and_dp_scales():
    w = Workload(GPT2, global_batch=64)
    cl = Cluster(A100, nodes=1)
    # The flat model (efficiency= given): FLOPs / (peak x efficiency).
    one = estimate(w, Plan(micro_batch=4), cl, efficiency=DEFAULT_EFFICIENCY)
    assert isinstance(one, Estimate) and one.fits and one.reasons == ()
    assert one.memory.total < A100.memory
    # One device, no communication: MFU is exactly the compute efficiency.
    assert one.step.mfu == pytest.approx(DEFAULT_EFFICIENCY)
    assert one.step.communication == 0 and one.step.bubble == 0
    # The kernel model: no kernel beats the device's matmul ceiling, so MFU stays below it.
    assert 0 < estimate(w, Plan(micro_batch=4), cl).step.mfu < A100.gemm_efficiency
    eight = estimate(w, Plan(dp=8, micro_batch=4), cl, efficiency=DEFAULT_EFFICIENCY)
    assert eight.fits
    # Compute divides by 8; the NVLink all-reduce is almost fully hidden.
    assert eight.step.compute == pytest.approx(one.step.compute / 8)
    assert 7.5 < eight.step.tokens_per_s / one.step.tokens_per_s <= 8


def test_compute_time_by_hand():
    # compute = FLOPs per GPU per step / (peak x efficiency), FLOPs with recompute.
    w = Workload(GPT2, global_batch=16)
    e = estimate(w, Plan(dp=4, micro_batch=2, recompute="full"), Cluster(A100), efficiency=0.4)
    flops = GPT2.flops_per_token("full") * 16 * 1024
    assert e.step.compute == pytest.approx(flops / 4 / (312e12 * 0.4))
    # MFU counts model FLOPs only (no recompute).
    mfu = GPT2.model_flops_per_token() * 16 * 1024 / (e.step.total * 312e12 * 4)
    assert e.step.mfu == pytest.approx(mfu)


def test_gpt3_pure_dp_does_not_fit():
    w = Workload(MODELS["gpt3-175b"], global_batch=1536)
    e = estimate(w, Plan(dp=64), Cluster(A100, nodes=8))
    assert not e.fits
    # 16 bytes x 174.6B parameters alone are 2.6 TiB per device.
    (reason,) = e.reasons
    # A100-80GB reports 81920 MiB; the CUDA context (512 MiB) and two NCCL communicators (world, DP;
    # 688 MiB each) leave 78.2 GiB usable, all of it the limit by default (no headroom).
    usable = (81920 - 512 - 2 * 688) / 1024
    assert reason.code == "memory_exceeds_device" and reason["bytes"] == e.memory.total
    assert f"{reason['usable'] / 2**30:.1f}" == f"{usable:.1f}" and reason["capacity"] == pytest.approx(usable * 2**30)
    assert reason["headroom"] == 0.0 and reason["stage"] is None
    # A reserve asked for lowers the limit: 3% of 78.2 GiB leaves 75.8 GiB.
    reserved = estimate(w, Plan(dp=64), Cluster(A100, nodes=8), headroom=0.03).reasons[0]
    assert round(reserved["capacity"] / 2**30, 1) == 75.8 and reserved["headroom"] == 0.03
    # 16 bytes per parameter: more than 2.5 TiB per device.
    assert e.memory.total > 16 * 174.6e9


def test_reasons_include_plan_constraints():
    w = Workload(MODELS["gpt3-175b"], global_batch=100)
    e = estimate(w, Plan(dp=8, tp=7), Cluster(A100, nodes=1))
    assert ("heads_not_divisible", {"heads": 96, "tp": 7}) in [(r.code, dict(r.values)) for r in e.reasons]
    assert ("cluster_too_small", {"gpus": 56, "cluster_gpus": 8}) in [(r.code, dict(r.values)) for r in e.reasons]


def test_tp_across_nodes_on_inter_link_is_slower():
    w = Workload(MODELS["gpt3-175b"], global_batch=64)
    cl = Cluster(A100, nodes=4)
    inside = estimate(w, Plan(dp=4, tp=8, recompute="full"), cl)
    across = estimate(w, Plan(dp=2, tp=16, recompute="full"), cl)
    (tp,) = [t for t in across.traffic if t.strategy == "TP"]
    assert tp.link == LINKS["ib-hdr"].name
    # TP traffic is on the critical path: exposed in full.
    assert dict(across.step.exposed)["TP"] == pytest.approx(tp.time)
    assert across.step.communication > inside.step.communication


def test_decomposition_sums_to_total():
    w = Workload(MODELS["llama2-70b"], global_batch=512)
    e = estimate(w, Plan(dp=16, tp=8, pp=4, zero=1, sp=True, recompute="selective"), Cluster(A100, nodes=64))
    d = e.step.decomposition
    assert set(d) == {"compute", "communication", "bubble"}
    assert sum(d.values()) == pytest.approx(e.step.total)
    assert e.step.tokens_per_s == pytest.approx(512 * 4096 / e.step.total)
    assert sum(v for _, v in e.step.exposed) == pytest.approx(e.step.communication)
    assert e.step.communication <= e.step.communication_total


def test_dp_overlap_hides_all_but_the_last_bucket_and_only_behind_the_last_micro_batch():
    # PyTorch DDP (Li et al. 2020, VLDB, §3.2.3 and §3.2.4): each gradient bucket's all-reduce starts while the
    # backward still computes earlier layers, so only the last bucket's all-reduce is left after the backward ends;
    # under gradient accumulation (no_sync) the all-reduce runs during the last micro-batch's backward only.
    cl = Cluster(A100, nodes=4)

    def dp_exposed(micro_batch, inter=None):
        c = cl if inter is None else Cluster(A100, nodes=4, inter=LINKS[inter])
        e = estimate(Workload(GPT2, global_batch=1024), Plan(dp=32, micro_batch=micro_batch), c)
        (dp,) = e.traffic
        return e.step.communication, dp

    # On 100 GbE the all-reduce (about 1.3 s) fits behind the backward of one micro-batch of 32, not of one of 1.
    one_pass, dp = dp_exposed(32, inter="eth-100g")
    assert dp.units > 1 and one_pass == pytest.approx(dp.time / dp.units)  # exactly the last bucket
    accumulated, _ = dp_exposed(1, inter="eth-100g")  # 32 micro-batches: only the last one's (short) backward hides it
    assert accumulated > 10 * one_pass
    slow, dp_slow = dp_exposed(1, inter="eth-25g")  # a ten times slower link: most of it is exposed
    assert accumulated < slow <= dp_slow.time and slow > 0.9 * dp_slow.time


def test_hidden_collectives_slow_the_compute_by_the_sms_nccl_holds():
    # NCCL runs a collective on SMs no compute kernel shares, as few as the platform's bandwidth needs
    # (NVIDIA/nccl#689: 16 SMs on a DGX with 8 NICs at 190 GB/s, 2 on one NIC), so a fully hidden all-reduce still
    # lengthens the backward it hides behind; the flat model's efficiency already holds that cost.
    w = Workload(GPT2, global_batch=1024)
    plan = Plan(dp=32, micro_batch=32)
    e = estimate(w, plan, Cluster(A100, nodes=4))          # a DGX A100's eight HDR NICs
    (dp,) = e.traffic
    assert 14 <= dp.sms <= 18                                # the maintainer's DGX figure
    assert e.step.communication == pytest.approx(dp.time / dp.units)      # hidden but the last bucket
    assert 0 < e.step.contention < dp.time * dp.sms / A100.sms
    assert e.step.total == pytest.approx(sum(e.step.decomposition.values()))
    # With TP 8 in each node, a DP group has one GPU a node and crosses on that GPU's own NIC: about 2 SMs.
    one_nic = estimate(w, Plan(dp=4, tp=8, sp=True, micro_batch=32), Cluster(A100, nodes=4))
    (dp_one,) = [t for t in one_nic.traffic if t.strategy == "DP"]
    assert 1 <= dp_one.sms <= 3 and one_nic.step.contention < e.step.contention
    assert estimate(w, plan, Cluster(A100, nodes=4), efficiency=0.4).step.contention == 0


def test_bubble_follows_schedule():
    # Narayanan et al. 2021 §2.2: (p-1)/m for 1F1B, (p-1)/(v·m) interleaved; ZB-H1 a third of 1F1B.
    assert bubble_overhead_for(Plan(pp=4), 8) == pytest.approx(3 / 8)
    assert bubble_overhead_for(Plan(pp=4, schedule="gpipe"), 8) == pytest.approx(3 / 8)
    assert bubble_overhead_for(Plan(pp=4, schedule="interleaved", chunks=2), 8) == pytest.approx(3 / 16)
    assert bubble_overhead_for(Plan(pp=4, schedule="zb-h1"), 8) == pytest.approx(1 / 8)
    assert bubble_overhead_for(Plan(), 8) == 0
    w = Workload(MODELS["llama2-13b"], global_batch=64)
    cl = Cluster(A100, nodes=4)
    one = estimate(w, Plan(dp=8, pp=4), cl)
    inter = estimate(w, Plan(dp=8, pp=4, schedule="interleaved", chunks=2), cl)
    assert inter.step.bubble < one.step.bubble
    # The bubble is what the event simulator idles with each rank's own forward and backward (the logits on
    # the last rank): its makespan minus m x the slowest rank's work (m = 64 / 8 = 8, no TP).
    from parallelsel.core.pipeline import schedule, simulate

    forward, backward = one.stage_pass_times()
    assert forward[-1] > forward[0] == forward[1] == forward[2]
    tl = simulate(schedule("1f1b", 4, 8), forward=forward, backward=backward)
    slowest = max(f + b for f, b in zip(forward, backward))
    assert one.step.bubble == pytest.approx(tl.makespan - 8 * slowest, rel=0.02)


def test_scaling_efficiency():
    w = Workload(GPT2, global_batch=64)
    cl = Cluster(A100, nodes=4)
    plans = {1: Plan(micro_batch=2), 8: Plan(dp=8, micro_batch=2), 32: Plan(dp=32, micro_batch=2)}
    pts = scaling_efficiency(w, plans, cl)
    assert [p.gpus for p in pts] == [1, 8, 32]
    assert pts[0].efficiency == pytest.approx(1.0)
    # E falls once DP crosses nodes. On DGX A100 nodes (eight HDR HCAs each) NCCL runs one ring per
    # HCA, 8 x 24 GB/s, so little of the loss is communication; with one 100 GbE NIC a node's eight
    # GPUs share, the loss is communication. The communication loss also holds what the hidden all-reduce's SMs
    # cost the backward (StepTime.contention): on the DGX that is most of it.
    assert pts[2].efficiency < pts[1].efficiency <= 1
    st = pts[2].estimate.step
    assert st.communication / st.total < 0.05 and st.contention > st.communication
    assert pts[2].loss["communication"] == pytest.approx((st.communication + st.contention) / st.total)
    eth = scaling_efficiency(w, plans, Cluster(A100, nodes=4, inter=LINKS["eth-100g"]))
    assert eth[2].loss["communication"] > 0.1 and eth[2].efficiency < pts[2].efficiency
    # Normalised to the smallest configuration that fits (P0 = 1 here), not to an ideal GPU: with the
    # same micro-batch, E(P) is at most the useful share of the step relative to P0's (the per-step
    # optimizer update, which does not shrink with fewer tokens per GPU, only lowers it further).
    assert all(p.reference == 1 for p in pts)
    useful = [1 - sum(p.loss.values()) for p in pts]
    for p, u in zip(pts, useful):
        assert p.efficiency <= u / useful[0] * (1 + 1e-9)
    # A series whose smallest configuration does not fit is measured against the smallest that does.
    big = Workload(MODELS["llama2-13b"], global_batch=64)
    series = scaling_efficiency(big, [Plan(dp=1, micro_batch=1), Plan(dp=8, zero=3, micro_batch=1)], cl)
    assert not series[0].estimate.fits and series[1].estimate.fits
    assert series[1].reference == 8 and series[1].efficiency == pytest.approx(1.0)
    # Recompute shows as its own loss: 1/3 more layer FLOPs (Narayanan et al. eq. 3 vs 3x forward).
    (r,) = scaling_efficiency(w, [Plan(micro_batch=2, recompute="full")], cl)
    assert r.loss["recompute"] > 0.2


def test_bad_input():
    w = Workload(GPT2, global_batch=8)
    cl = Cluster(A100)
    with pytest.raises(ValueError, match="efficiency"):
        estimate(w, Plan(), cl, efficiency=1.5)
    with pytest.raises(ValueError, match="plan"):
        estimate(w, "DP8", cl)
    with pytest.raises(ValueError, match="workload"):
        estimate(GPT2, Plan(), cl)
    with pytest.raises(ValueError, match="plans"):
        scaling_efficiency(w, {4: Plan(dp=2)}, cl)


def test_context_parallel_at_a_short_sequence_costs_more_than_data_parallel():
    # Same GEMM shapes (8 sequences of 1,024 tokens a GPU either way), the same ZeRO group: CP8 adds the ring's
    # per-step merges of partial attention outputs and its transfers, which hide under attention only in part at
    # this length, so it never ties DP8 (the search used to rank the two equal) -- and at 128k tokens a sequence,
    # where DP cannot hold the activations, the transfers hide whole under each block's attention.
    import parallelsel as ps

    w = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512, seq_len=8192, stack="megatron-core")
    c = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8)
    dp = ps.estimate(w, ps.Plan(dp=8, tp=8, zero=2, sp=True, tp_overlap=True, micro_batch=1), c)
    cp = ps.estimate(w, ps.Plan(dp=1, cp=8, tp=8, zero=2, sp=True, tp_overlap=True, micro_batch=8), c)
    assert cp.step.compute > dp.step.compute and cp.step.total > dp.step.total
    long = ps.Workload(ps.MODELS["llama3-70b"], global_batch=8, seq_len=131072, stack="megatron-core")
    e = ps.estimate(long, ps.Plan(dp=1, cp=8, tp=8, zero=1, sp=True, micro_batch=1, recompute="full"), c)
    ring = [t for t in e.traffic if t.strategy == "CP"]
    assert ring and all(t.hidden == pytest.approx(t.time) for t in ring)


def test_context_parallel_wider_than_the_sequence_is_refused_not_a_crash():
    # A CP degree above the sequence length leaves each rank no tokens: the estimate says why, it does not divide by 0.
    import parallelsel as ps

    w = ps.Workload(ps.MODELS["llama3-8b"], global_batch=8, seq_len=16)
    e = ps.estimate(w, ps.Plan(dp=1, cp=32, micro_batch=1), ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=4))
    assert not e.fits and "seq_not_divisible_cp" in [r.code for r in e.reasons]


def test_exposed_communication_is_never_negative():
    import parallelsel as ps

    # A CP ring hidden whole under its attention leaves 0 s exposed, not a rounding error below it.
    m = ps.Transformer(layers=5, heads=8, kv_heads=4, seq_len=2048, vocab=1, hidden=640, experts=256, top_k=7,
                       architecture="llama")
    e = ps.estimate(ps.Workload(m, global_batch=128, attention="standard", stack="deepspeed"),
                    ps.Plan(dp=86, cp=3, micro_batch=2, sp=True), ps.Cluster("gb200-186gb", nodes=43, gpus_per_node=6))
    assert all(v >= 0 for _, v in e.step.exposed) and e.step.communication >= 0
