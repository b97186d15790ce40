"""Token policies of an MoE layer (parallelsel.core.moe): the capacity rule against the Switch Transformer paper's own
example, dropless against its definition, and the busiest rank's cost against the step model's balanced routing."""

import pytest

import parallelsel as ps
from parallelsel.core.kernels import gemm_time, layer_gemms
from parallelsel.core.memory import activations_per_layer
from parallelsel.core.moe import expert_cost, route

MIXTRAL, H100 = ps.MODELS["mixtral-8x7b"], ps.DEVICES["h100-sxm-80gb"]


@pytest.mark.parametrize("factor, capacity, dropped", [(1.0, 2, 1), (1.5, 3, 0)])
def test_capacity_matches_switch_transformer_figure_3(factor, capacity, dropped):
    # Fedus et al. 2022, Figure 3: 6 tokens, 3 experts, top-1; capacity factor 1.0 gives each expert 2 slots and
    # the overflowing expert drops a token; 1.5 gives 3 slots and nothing is dropped.
    r = route((3, 2, 1), "capacity", factor)
    assert r.computed == (capacity,) * 3
    assert r.dropped == dropped


def test_dropless_computes_every_token_and_reports_the_imbalance():
    r = route((10, 4, 3, 3), "dropless")
    assert r.computed == r.routed and r.dropped == 0 and r.dropped_fraction == 0
    assert r.imbalance == pytest.approx(10 / 5)


def test_balanced_routing_costs_what_the_step_model_counts():
    # One expert per rank, 4096 tokens per rank: the step model (kernels.layer_gemms) routes tokens x top_k x ep /
    # experts tokens to each local expert; a perfectly balanced router sends every expert exactly that.
    tokens = MIXTRAL.seq_len
    per_expert = tokens * MIXTRAL.top_k
    cost = expert_cost(MIXTRAL, route((per_expert,) * MIXTRAL.experts, "dropless"), H100)
    experts = [g for g in layer_gemms(MIXTRAL, tokens, ep=MIXTRAL.experts) if g.name in ("fc1", "fc2")]
    forward = sum(gemm_time(g.m, g.n, g.k, H100, g.count) for g in experts)
    assert cost.seconds == pytest.approx(3 * forward, rel=1e-12)
    assert cost.seconds == pytest.approx(cost.balanced_seconds, rel=1e-12)


def test_expert_activations_are_the_layers_mlp_share():
    # The memory model's layer (uniform routing, no EP) minus the same model made dense with one expert's MLP
    # removed: what the experts store per token, top_k copies. expert_cost must store that per routed token.
    tokens = MIXTRAL.seq_len
    per_expert = tokens * MIXTRAL.top_k // MIXTRAL.experts
    cost = expert_cost(MIXTRAL, route((per_expert,) * MIXTRAL.experts, "dropless"), H100, ep=1)
    dense_mlp = activations_per_layer(ps.Transformer(layers=1, hidden=MIXTRAL.hidden, heads=MIXTRAL.heads,
                                                     kv_heads=MIXTRAL.kv_heads, seq_len=tokens, vocab=MIXTRAL.vocab,
                                                     ffn_hidden=MIXTRAL.ffn_hidden, gated_mlp=True,
                                                     experts=MIXTRAL.experts, top_k=MIXTRAL.top_k), 1)
    no_mlp = activations_per_layer(ps.Transformer(layers=1, hidden=MIXTRAL.hidden, heads=MIXTRAL.heads,
                                                  kv_heads=MIXTRAL.kv_heads, seq_len=tokens, vocab=MIXTRAL.vocab,
                                                  ffn_hidden=MIXTRAL.ffn_hidden, gated_mlp=True,
                                                  experts=MIXTRAL.experts, top_k=1), 1)
    f_wide = (dense_mlp - no_mlp) / (MIXTRAL.top_k - 1)           # one copy of the f-wide tensors, all tokens
    inputs = 2 * MIXTRAL.hidden * tokens * MIXTRAL.top_k          # the dispatched input of each routed token
    assert cost.activation_bytes == pytest.approx(f_wide * MIXTRAL.top_k + inputs, rel=1e-12)


def test_a_hot_expert_slows_dropless_but_not_a_small_capacity():
    skewed = (16384, 8192, 8192, 8192, 8192, 8192, 4096, 4096)
    dropless = expert_cost(MIXTRAL, route(skewed, "dropless"), H100)
    capped = expert_cost(MIXTRAL, route(skewed, "capacity", 1.0), H100)
    assert dropless.rank_tokens == 16384 and dropless.seconds > 1.5 * dropless.balanced_seconds
    assert capped.rank_tokens == 8192 and capped.seconds == pytest.approx(capped.balanced_seconds)
    assert route(skewed, "capacity", 1.0).dropped == 8192 and dropless.activation_bytes > capped.activation_bytes


@pytest.mark.parametrize("call", [
    lambda: route((1,), "dropless"),
    lambda: route((0, 0), "dropless"),
    lambda: route((3, 1), "capacity"),
    lambda: route((3, 1), "dropless", 1.25),
    lambda: route((3, 1), "greedy"),
    lambda: route((3, -1), "dropless"),
    lambda: expert_cost(ps.MODELS["llama2-7b"], route((3, 1), "dropless"), H100),
    lambda: expert_cost(MIXTRAL, route((3, 1), "dropless"), H100),
    lambda: expert_cost(MIXTRAL, route((1,) * 8, "dropless"), H100, ep=3),
])
def test_bad_input_is_a_value_error(call):
    with pytest.raises(ValueError):
        call()


def _moe_traffic(ep, gpus_per_node, tp=1):
    model = ps.MODELS["mixtral-8x7b"]
    cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=16 * tp // gpus_per_node, gpus_per_node=gpus_per_node,
                         intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
    plan = ps.Plan(dp=16, tp=tp, ep=ep, zero=1, micro_batch=1, sp=tp > 1, recompute="full")
    return ps.estimate(ps.Workload(model, global_batch=64), plan, cluster).traffic


def test_an_all_to_all_across_nodes_sends_only_the_other_nodes_share_over_the_network():
    # NCCL runs an all-to-all as one grouped send/recv per peer: EP8 as 2 nodes x 4 GPUs puts 4 of every rank's 8
    # shares on the network (3 on NVLink, 1 kept), not 7; priced all on InfiniBand it would take 7/4 as long.
    inter, intra = ps.LINKS["ib-ndr"], ps.LINKS["nvlink4"]
    split = next(t for t in _moe_traffic(8, 4) if t.strategy == "EP")
    one = split.time / split.calls
    assert one == pytest.approx(7 * inter.latency + 4 / 8 * split.nbytes / inter.achieved, rel=1e-9)
    assert one < ps.comm.collective_time("all-to-all", split.nbytes, 8, inter)
    inside = next(t for t in _moe_traffic(8, 8) if t.strategy == "EP")
    assert inside.time / inside.calls == pytest.approx(ps.comm.collective_time("all-to-all", inside.nbytes, 8, intra))


def test_moe_layers_all_gather_their_routed_tokens_over_tp():
    # Megatron-Core's all-to-all dispatcher (token_dispatcher.py core_r0.9.0 L531-537, L578-584): with TP the received
    # tokens are all-gathered over TP and the expert outputs reduce-scattered, top_k times a dense layer's SP
    # collective, beside the attention's own pair; not overlapped with a GEMM.
    items = [t for t in _moe_traffic(8, 8, tp=2) if t.strategy == "TP"]
    ops = sorted((t.op, t.nbytes) for t in items)
    dense = min(t.nbytes for t in items)
    k = ps.MODELS["mixtral-8x7b"].top_k
    assert [op for op, _ in ops] == ["all-gather", "all-gather", "reduce-scatter", "reduce-scatter"]
    assert sorted({n for _, n in ops}) == [dense, k * dense]
    assert all(t.hidden == 0 for t in items if t.nbytes == k * dense)
