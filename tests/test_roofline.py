"""Roofline thresholds: checked against the alpha-beta collective times and the model's own parameter count,
and against the published finding that tensor parallelism stops paying once it leaves the NVLink domain."""

import pytest

import parallelsel as ps
from parallelsel.core.comm import collective_time
from parallelsel.core.roofline import (
    conditions, dp_comm_to_compute, dp_critical_tokens, fsdp_comm_to_compute, fsdp_critical_tokens, intensity,
    pp_comm_to_compute, pp_critical_hidden_layers, tp_comm_to_compute, tp_critical_hidden,
)

A100, H100 = ps.DEVICES["a100-80gb"], ps.DEVICES["h100-sxm-80gb"]


def _no_latency(link):
    return ps.Link(name=link.name, bandwidth=link.bandwidth, latency=0.0)


@pytest.mark.parametrize("link", ["nvlink3", "ib-hdr", "eth-100g"])
@pytest.mark.parametrize("ranks", [2, 8, 64, 1024])
def test_dp_threshold_is_where_all_reduce_equals_backward(link, ranks):
    link = _no_latency(ps.LINKS[link])
    params = ps.MODELS["llama2-13b"].params
    t_star = dp_critical_tokens(A100, link, ranks)
    all_reduce = collective_time("all-reduce", 2 * params, ranks, link)   # bf16 gradients
    for tokens, longer in ((t_star / 2, "comm"), (t_star * 2, "compute")):
        backward = 4 * params * tokens / A100.peak_flops
        assert (all_reduce > backward) == (longer == "comm")
    assert all_reduce == pytest.approx(4 * params * t_star / A100.peak_flops, rel=1e-12)


@pytest.mark.parametrize("ranks", [2, 16, 256])
def test_fsdp_threshold_is_where_gathers_and_scatter_equal_the_step(ranks):
    link = _no_latency(ps.LINKS["ib-ndr"])
    params = ps.MODELS["llama2-70b"].params
    t_star = fsdp_critical_tokens(H100, link, ranks)
    comm = 2 * collective_time("all-gather", 2 * params, ranks, link) + collective_time("reduce-scatter", 2 * params, ranks, link)
    assert comm == pytest.approx(6 * params * t_star / H100.peak_flops, rel=1e-12)


def test_tp_closed_form_matches_a_gpt_layer():
    # A GPT layer without biases or norms has exactly 12 h^2 GEMM weights, the closed form's assumption.
    h = 12288
    at_threshold = tp_critical_hidden(8, A100, ps.LINKS["nvlink3"])
    assert tp_comm_to_compute(round(at_threshold), 12 * round(at_threshold) ** 2, 8, A100, ps.LINKS["nvlink3"]) == pytest.approx(1.0, rel=1e-3)
    assert tp_comm_to_compute(h, 12 * h * h, 8, A100, ps.LINKS["nvlink3"]) == pytest.approx(at_threshold / h, rel=1e-12)


def test_tp_inside_node_pays_and_across_nodes_does_not():
    # Narayanan et al. 2021, §5.4 / takeaway 1: keep TP within the NVLink domain of a DGX A100 node;
    # GPT-3 175B with TP=8 over InfiniBand would spend longer in all-reduce than in its GEMMs.
    m = ps.MODELS["gpt3-175b"]
    assert tp_comm_to_compute(m.hidden, m.layer_params, 8, A100, ps.LINKS["nvlink3"]) < 0.25
    assert tp_comm_to_compute(m.hidden, m.layer_params, 8, A100, ps.LINKS["ib-hdr"]) > 1.0


def test_pp_is_compute_bound_even_on_ethernet_for_real_models():
    m = ps.MODELS["llama2-7b"]
    assert m.hidden * 1 > pp_critical_hidden_layers(A100, ps.LINKS["eth-100g"])


def test_conditions_bundle_and_intensity():
    c = conditions(A100, ps.LINKS["ib-hdr"], ranks=64, tp=8)
    assert c.intensity == intensity(A100, ps.LINKS["ib-hdr"]) == pytest.approx(312e12 / 25e9)
    assert c.dp_tokens == pytest.approx(c.fsdp_tokens)  # bf16 weights and grads: 2 x (n-1)/n x 2 / 4 == (n-1)/n x 6 / 6


@pytest.mark.parametrize("call", [
    lambda: dp_critical_tokens(A100, ps.LINKS["ib-hdr"], 0),
    lambda: fsdp_critical_tokens(A100, ps.LINKS["ib-hdr"], -3),
    lambda: tp_critical_hidden(0, A100, ps.LINKS["nvlink3"]),
    lambda: intensity("a100", ps.LINKS["nvlink3"]),
    lambda: intensity(A100, "nvlink3"),
    lambda: dp_comm_to_compute(0, A100, ps.LINKS["ib-hdr"], 8),
    lambda: fsdp_comm_to_compute(-1, A100, ps.LINKS["ib-hdr"], 8),
    lambda: pp_comm_to_compute(4096, 0, A100, ps.LINKS["ib-hdr"]),
])
def test_bad_input_is_a_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_ep_ratio_matches_all_to_all_time_and_compute():
    from parallelsel.core.roofline import ep_comm_to_compute
    m, link = ps.MODELS["mixtral-8x7b"], _no_latency(ps.LINKS["ib-hdr"])
    tokens = 4096
    # four all-to-alls (dispatch, combine; forward and backward) of top_k copies of each token's hidden vector
    comm = 4 * collective_time("all-to-all", tokens * m.top_k * m.hidden * 2, 8, link)
    compute = 6 * tokens * (m.attention_params + m.top_k * m.expert_params) / A100.peak_flops
    assert ep_comm_to_compute(m, 8, A100, link) == pytest.approx(comm / compute, rel=1e-12)


def test_ep_ratio_refuses_dense_models():
    from parallelsel.core.roofline import ep_comm_to_compute
    with pytest.raises(ValueError):
        ep_comm_to_compute(ps.MODELS["llama2-7b"], 8, A100, ps.LINKS["ib-hdr"])


# The ratios the roofline charts draw, checked against the collectives' own alpha-beta times (no latency) and the
# FLOPs of the model's parameters, not against the thresholds they are written with.
@pytest.mark.parametrize("tokens", [1024, 8192, 131072])
def test_dp_and_fsdp_ratios_are_collective_time_over_compute(tokens):
    link, ranks = _no_latency(ps.LINKS["ib-hdr"]), 64
    params = ps.MODELS["llama2-7b"].params
    all_reduce = collective_time("all-reduce", 2 * params, ranks, link)
    assert dp_comm_to_compute(tokens, A100, link, ranks) == pytest.approx(
        all_reduce / (4 * params * tokens / A100.peak_flops), rel=1e-12)
    fsdp = 2 * collective_time("all-gather", 2 * params, ranks, link) + collective_time("reduce-scatter", 2 * params, ranks, link)
    assert fsdp_comm_to_compute(tokens, A100, link, ranks) == pytest.approx(
        fsdp / (6 * params * tokens / A100.peak_flops), rel=1e-12)


@pytest.mark.parametrize("layers_per_stage", [1, 4, 12])
def test_pp_ratio_is_p2p_time_over_stage_compute(layers_per_stage):
    # GPT-3's layer: 12 h^2 GEMM weights (plus biases, hence the tolerance); one token sends one bf16 activation
    # forward and one gradient back across a boundary.
    m, link = ps.MODELS["gpt3-175b"], _no_latency(ps.LINKS["eth-25g"])
    p2p = 2 * collective_time("p2p", 2 * m.hidden, 2, link)
    stage = 6 * m.layer_params * layers_per_stage / A100.peak_flops
    assert pp_comm_to_compute(m.hidden, layers_per_stage, A100, link) == pytest.approx(p2p / stage, rel=1e-3)
