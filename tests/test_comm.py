"""Collective costs (alpha-beta, ring) and each strategy's traffic placed on its link."""

from __future__ import annotations


import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import parallelsel.core.comm as comm
from parallelsel import DEVICES, LINKS, MODELS, Cluster, Link, Plan, Workload
from parallelsel.core.comm import OPS, collective_time, traffic

LINK = Link("test", bandwidth=100e9, latency=2e-6)
A100 = DEVICES["a100-80gb"]


# --------------------------------------------------------------------- collective_time by hand
@pytest.mark.parametrize(
    "op,steps,factor",
    [  # Thakur, Rabenseifner & Gropp 2005 §4 (ring): latency steps and per-rank volume factor
        ("all-reduce", 2 * 7, 2 * 7 / 8),
        ("all-gather", 7, 7 / 8),
        ("reduce-scatter", 7, 7 / 8),
        ("all-to-all", 7, 7 / 8),
    ],
)
def test_ring_costs(op, steps, factor):
    n, N = 8, 1e9
    assert collective_time(op, N, n, LINK) == pytest.approx(steps * 2e-6 + factor * N / 100e9)


def test_p2p_and_trivial_cases():
    assert collective_time("p2p", 1e6, 2, LINK) == pytest.approx(2e-6 + 1e6 / 100e9)
    for op in OPS:
        assert collective_time(op, 1e9, 1, LINK) == 0.0
        assert collective_time(op, 0, 8, LINK) == 0.0


def test_all_reduce_is_reduce_scatter_plus_all_gather():
    # Rabenseifner: all-reduce = reduce-scatter followed by all-gather (Thakur et al. 2005 §4.4).
    for n in (2, 3, 8, 64):
        ar = collective_time("all-reduce", 3e8, n, LINK)
        rs_ag = collective_time("reduce-scatter", 3e8, n, LINK) + collective_time("all-gather", 3e8, n, LINK)
        assert ar == pytest.approx(rs_ag)


@settings(max_examples=50, deadline=None)
@given(op=st.sampled_from(OPS), n=st.integers(1, 4096), a=st.floats(0, 1e12), extra=st.floats(0, 1e12))
def test_time_grows_with_bytes(op, n, a, extra):
    assert collective_time(op, a + extra, n, LINK) >= collective_time(op, a, n, LINK)


@pytest.mark.parametrize(
    "args,name",
    [
        (("broadcast", 1e6, 8, LINK), "op"),
        (("all-reduce", -1, 8, LINK), "nbytes"),
        (("all-reduce", 1e6, 0, LINK), "ranks"),
        (("all-reduce", 1e6, 8, "nvlink"), "link"),
    ],
)
def test_bad_input(args, name):
    with pytest.raises(ValueError, match=name):
        collective_time(*args)


def test_bus_factor_bad_input():
    with pytest.raises(ValueError, match="op"):
        comm.bus_factor("gather", 4)
    with pytest.raises(ValueError, match="n"):
        comm.bus_factor("all-reduce", 0)


# ---------------------------------------------------------------------------- traffic per step
def _by(items, strategy):
    return [t for t in items if t.strategy == strategy]


def test_dp_all_reduce_volume_and_link():
    m = MODELS["gpt2-1.5b"]
    w = Workload(m, global_batch=32, stack="deepspeed")  # ZeRO's own stack: bf16 gradients on the wire
    cl = Cluster(A100, nodes=2)
    (dp,) = traffic(w, Plan(dp=8), cl)
    # ZeRO §7.1: one all-reduce of 2Ψ gradient bytes per step; 8 ranks fit in one node (NVLink).
    assert (dp.strategy, dp.op, dp.calls, dp.group, dp.link) == ("DP", "all-reduce", 1, 8, "NVLink3")
    assert dp.nbytes == 2 * m.params
    assert dp.time == pytest.approx(collective_time("all-reduce", 2 * m.params, 8, LINKS["nvlink3"]))
    (dp16,) = traffic(w, Plan(dp=16), cl)
    assert dp16.link == LINKS["ib-hdr"].name


def test_zero3_is_one_and_a_half_times_dp():
    # ZeRO §7.2.2: P_os+g+p moves 3Ψ per step against DP's 2Ψ (all-gather twice + reduce-scatter).
    m = MODELS["llama2-7b"]
    w = Workload(m, global_batch=64, stack="deepspeed")  # ZeRO's own stack: 2-byte volumes throughout
    cl = Cluster(A100, nodes=8)

    def volume(items):
        return sum(t.calls * t.nbytes * comm._bus(t.op, t.group) for t in items)
    dp = volume(traffic(w, Plan(dp=64, micro_batch=1), cl)) * 64  # m = 1 micro-batch
    z3 = volume(traffic(w, Plan(dp=64, zero=3, micro_batch=1), cl)) * 64
    # ZeRO's 1.5x re-gathers every unit in backward. FSDP2 as torchtitan wraps it keeps the root
    # (embedding, final norm, head: 32000 x 4096 x 2 + 4096 parameters) gathered from forward to
    # backward, so the backward all-gather skips it: (3Ψ - root) / 2Ψ.
    root = 32000 * 4096 * 2 + 4096
    assert z3 / dp == pytest.approx(1.5 - root / (2 * m.params))
    # ZeRO-1 (reduce-scatter + all-gather) moves the same as the all-reduce.
    z1 = volume(traffic(w, Plan(dp=64, zero=1, micro_batch=1), cl)) * 64
    assert z1 / dp == pytest.approx(1.0)


def test_zero3_gathers_every_micro_batch():
    w = Workload(MODELS["llama2-7b"], global_batch=64)
    items = traffic(w, Plan(dp=8, zero=3, micro_batch=2), Cluster(A100, nodes=1))
    assert {t.calls for t in items} == {4}  # 64 / (8 * 2) micro-batches


def test_hsdp_adds_replica_all_reduce_across_nodes():
    w = Workload(MODELS["llama2-7b"], global_batch=64)
    items = traffic(w, Plan(dp=32, zero=3, shard=8), Cluster(A100, nodes=4))
    fsdp = _by(items, "FSDP")
    assert {t.link for t in fsdp} == {"NVLink3"} and {t.group for t in fsdp} == {8}
    (rep,) = _by(items, "HSDP")
    assert (rep.op, rep.group, rep.link) == ("all-reduce", 4, LINKS["ib-hdr"].name)


def test_tp_volume_shoeybi():
    # Shoeybi et al. 2019 §3: 2 all-reduces forward + 2 backward per layer of b·s·h activations.
    m = MODELS["gpt3-175b"]
    w = Workload(m, global_batch=64)
    cl = Cluster(A100, nodes=8)
    (tp,) = _by(traffic(w, Plan(dp=8, tp=8), cl), "TP")
    assert (tp.op, tp.nbytes, tp.calls, tp.link) == ("all-reduce", 2 * 2048 * 12288, 96 * 8 * 4, "NVLink3")
    # Full recomputation repeats the two forward ones.
    (tp,) = _by(traffic(w, Plan(dp=8, tp=8, recompute="full"), cl), "TP")
    assert tp.calls == 96 * 8 * 6
    # With SP: all-gather + reduce-scatter pairs, same time in the bandwidth term (Korthikanti §4.2.2).
    sp = _by(traffic(w, Plan(dp=8, tp=8, sp=True), cl), "TP")
    assert sorted(t.op for t in sp) == ["all-gather", "reduce-scatter"]


def test_tp_across_nodes_uses_inter_link():
    w = Workload(MODELS["gpt3-175b"], global_batch=64)
    cl = Cluster(A100, nodes=2, gpus_per_node=8)
    (tp,) = _by(traffic(w, Plan(tp=16), cl), "TP")
    assert tp.link == LINKS["ib-hdr"].name
    assert tp.overlappable is False


def test_pp_p2p_per_micro_batch_and_chunk():
    # Narayanan et al. 2021: one activation forward and one gradient backward per micro-batch (and
    # chunk); §4.1 scatter/gather: each of the tp ranks sends 1/tp of b·s·h.
    m = MODELS["gpt3-175b"]
    w = Workload(m, global_batch=64)
    cl = Cluster(A100, nodes=16)
    fwd, bwd = _by(traffic(w, Plan(dp=2, tp=8, pp=8, schedule="interleaved", chunks=2), cl), "PP")
    for pp, phase in ((fwd, "forward"), (bwd, "backward")):
        assert (pp.op, pp.nbytes, pp.calls, pp.phase) == ("p2p", 2 * 2048 * 12288 / 8, 32 * 2, phase)
        # stages are tp*dp = 16 GPUs apart: adjacent stages sit on different nodes
        assert pp.link == LINKS["ib-hdr"].name


def test_ep_all_to_all():
    m = MODELS["mixtral-8x7b"]
    w = Workload(m, global_batch=64)
    (ep,) = _by(traffic(w, Plan(dp=8, ep=8), Cluster(A100, nodes=1)), "EP")
    assert (ep.op, ep.group, ep.nbytes, ep.calls) == ("all-to-all", 8, 4096 * 4096 * 2 * 2, 32 * 8 * 4)
    # expert gradients are averaged over dp/ep = 1 rank: no expert all-reduce
    assert not [t for t in traffic(w, Plan(dp=8, ep=8), Cluster(A100, nodes=1)) if "experts" in t.strategy]
