"""The orderings docs/core/hybrid.md states in prose ("not a law" section and exercise 2), checked here
as well as in the snippets, so a change of the time model that flips one fails a test that names it."""

import pytest

import parallelsel as ps

A100 = ps.DEVICES["a100-80gb"]
W = ps.Workload(ps.MODELS["llama2-13b"], global_batch=256)
PLANS = {"TP8": ps.Plan(dp=4, tp=8, sp=True, recompute="selective"),
         "FSDP": ps.Plan(dp=32, zero=3, recompute="selective"),
         "HSDP": ps.Plan(dp=32, zero=3, shard=8, recompute="selective")}


def _steps(intra, inter):
    c = ps.Cluster(A100, nodes=4, gpus_per_node=8, intra=ps.LINKS[intra], inter=ps.LINKS[inter])
    out = {k: ps.estimate(W, p, c) for k, p in PLANS.items()}
    assert all(e.fits for e in out.values())
    return out


@pytest.mark.parametrize("intra", ["nvlink3", "pcie4"])
def test_fsdp_and_hsdp_beat_tp_inside_the_node_with_a_hca_per_gpu(intra):
    # With one HCA per GPU NCCL runs eight rings a node (one per HCA): FSDP over all 32 GPUs gathers at
    # 8 x 24 GB/s, so it and HSDP tie (within the search's tie band) and both beat TP8.
    from parallelsel.core.search import TIE

    e = _steps(intra, "ib-hdr")
    fsdp, hsdp, tp = (e[k].step.total for k in ("FSDP", "HSDP", "TP8"))
    assert abs(fsdp - hsdp) <= TIE * min(fsdp, hsdp) and max(fsdp, hsdp) < tp
    # TP's collectives sit on the critical path; HSDP's hide behind compute.
    assert e["TP8"].step.critical > 0 and e["HSDP"].step.critical == 0


@pytest.mark.parametrize("intra", ["nvlink3", "pcie4"])
def test_tp_inside_the_node_wins_again_over_a_shared_ethernet_nic(intra):
    e = _steps(intra, "eth-100g")
    assert min(e, key=lambda k: e[k].step.total) == "TP8"
    # The mechanism the answer gives: HSDP all-reduces across nodes once per micro-batch, DP once per step.
    (hsdp,) = [t for t in e["HSDP"].traffic if t.strategy == "HSDP"]
    (dp,) = [t for t in e["TP8"].traffic if t.strategy == "DP"]
    assert hsdp.op == dp.op == "all-reduce" and hsdp.link == dp.link == ps.LINKS["eth-100g"].name
    assert hsdp.calls == PLANS["HSDP"].microbatches(W) > 1 and dp.calls == 1
