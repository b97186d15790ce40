"""The selection matrix: the lesson's three paper cases (最小练习 1), the topology variant, the static table, and
Narayanan et al. 2021 Table 1 configurations fitting 80 GB A100s."""

from __future__ import annotations

import pytest

import parallelsel as ps
from parallelsel.core.estimate import estimate
from parallelsel.course.lesson import paper_cases, topology_variant
from parallelsel.render.lesson_text import FOUR_COLUMNS
from parallelsel.core.matrix import FACTS, SLOWER, MatrixRow, Verdict, selection_matrix
from parallelsel.core.reasons import Reason, codes, first
from parallelsel.core.placement import spans_nodes

V = Verdict


def _verdicts(rows):
    return {r.strategy: r.verdict for r in rows}


def _row(rows, strategy):
    return next(r for r in rows if r.strategy == strategy)


def _codes(rows, strategy):
    return codes(_row(rows, strategy).reasons)


def _reason(rows, strategy, code):
    r = first(_row(rows, strategy).reasons, code)
    assert r is not None, (strategy, code, _codes(rows, strategy))
    return r


# Usable memory of an A100-80GB (driver-reported 81920 MiB minus the 512 MiB CUDA context and NCCL's two 688 MiB
# buffers, parallelsel.core.memory.usable_memory's documented reserve); the default headroom is none.
A100_80_BUDGET = (81920 - 512 - 2 * 688) * 2**20


@pytest.fixture(scope="module")
def cases():
    out = {}
    for name, w, c in paper_cases():
        out[name] = (selection_matrix(w, c), selection_matrix(w, topology_variant(c)), w, c)
    return out


def test_verdict_is_an_ascii_str_enum_and_render_words_it():
    from parallelsel.render.lesson_text import verdict_word

    assert [v.value for v in Verdict] == ["infeasible", "feasible", "not_preferred", "need_info"]
    assert Verdict.FEASIBLE == "feasible" and str(Verdict.NEED_INFO) == "need_info" == Verdict.NEED_INFO.code
    assert [verdict_word(v) for v in Verdict] == ["不可行", "可行", "不优先", "需更多信息"]


def test_rows_shape(cases):
    rows = cases["fits_one_gpu"][0]
    assert [r.strategy for r in rows] == ["DP", "FSDP", "TP", "PP"]
    for r in rows:
        assert isinstance(r, MatrixRow) and r.reasons and all(isinstance(x, Reason) for x in r.reasons)
        assert (r.best is None) == (r.verdict is V.INFEASIBLE)
        if r.best is not None:
            assert r.best.fits


def test_case1_model_fits_one_card(cases):
    rows, _, w, c = cases["fits_one_gpu"]
    assert _verdicts(rows) == {"DP": V.FEASIBLE, "FSDP": V.NOT_PREFERRED, "TP": V.NOT_PREFERRED, "PP": V.NOT_PREFERRED}
    assert "tp_dp_fits" in _codes(rows, "TP") and "pp_dp_fits" in _codes(rows, "PP")
    dp = _row(rows, "DP").best
    assert dict(_reason(rows, "TP", "tp_dp_fits").values) == {"bytes": dp.memory.total, "budget": dp.budget}
    assert _reason(rows, "FSDP", "dp_fits_not_slower")["seconds"] == dp.step.total
    assert _codes(rows, "DP")[:3] == ("best_setting", "dp_group", "dp_simplest")


def test_case2_state_exceeds_card_layer_fits(cases):
    rows, _, w, c = cases["state_exceeds_gpu"]
    assert _verdicts(rows) == {"DP": V.INFEASIBLE, "FSDP": V.FEASIBLE, "TP": V.INFEASIBLE, "PP": V.FEASIBLE}
    # DP's reason carries the numbers: state = 18 B (Megatron-Core's bf16 weights, fp32 gradients, fp32 Adam:
    # Megatron-LM dist_optimizer.md) x 69.0B parameters = 1.13 TiB > one card's budget.
    (dp,) = _row(rows, "DP").reasons
    assert w.stack == "megatron-core"
    assert dp.code == "dp_state_exceeds_device" and dp["bytes_per_param"] == 18 and dp["params"] == w.model.params
    assert dp["bytes"] == 18 * w.model.params and dp["capacity"] == pytest.approx(A100_80_BUDGET)
    # Llama-2 70B has 8 KV groups (GQA), so TP alone stops at 8 ways (Megatron-LM's rule: TP=16 does not
    # divide the KV heads), and 1/8 of the 1.00 TiB state plus activations is still more than one card.
    tp = _row(rows, "TP").reasons
    assert codes(tp) == ("tp_exceeds_device", "kv_heads_not_divisible")
    assert tp[0]["degree"] == 8 and tp[0]["bytes"] > tp[0]["capacity"] == pytest.approx(A100_80_BUDGET)
    assert dict(tp[1].values) == {"kv_heads": 8, "tp": 16}
    # Pure PP=20 uses 20 of the 32 GPUs: its step is far longer than FSDP's on all 32, but per
    # GPU-second (step x GPUs used) it is within about a tenth (the last of its 4-layer stages also runs
    # the output layer and sets the pace: docs/core/pp.md), far inside SLOWER, so it is not "slower" (issue 17).
    by = {r.strategy: r.best for r in rows}
    fsdp, pp = by["FSDP"], by["PP"]
    assert pp.plan.gpus == 20 and fsdp.plan.gpus == 32
    assert pp.step.total > 1.5 * fsdp.step.total
    assert pp.step.total * 20 < 1.15 * fsdp.step.total * 32
    assert "costlier_per_gpu" not in _codes(rows, "PP")


def test_case3_single_layer_exceeds_card(cases):
    rows, _, w, c = cases["layer_exceeds_gpu"]
    assert _verdicts(rows) == {"DP": V.INFEASIBLE, "FSDP": V.INFEASIBLE, "TP": V.FEASIBLE, "PP": V.INFEASIBLE}
    layer_state = w.recipe.per_param * w.model.layer_params
    assert layer_state > c.device.memory  # the case's defining property
    # The regime it names: FSDP must all-gather a whole layer (two bf16 copies with prefetch + bf16
    # grads = 6 bytes x 12h^2 parameters at h = 24576: 43.5 GB) on one 40 GB card, which no shard
    # count removes; TP splits the layer instead.
    h = 24576
    gather = 6 * (12 * h * h + 13 * h)
    assert gather > c.device.memory
    unit = _reason(rows, "FSDP", "fsdp_unit_exceeds_device")
    zero3 = estimate(w, ps.Plan(dp=8, zero=3, recompute="full"), c)
    assert unit["gather_peak"] == zero3.memory.gather_peak >= gather and unit["params"] == w.model.layer_params
    assert unit["gather_peak"] > unit["capacity"] and round(unit["capacity"] / 2**30, 1) == 38.2
    (pp,) = _row(rows, "PP").reasons
    assert pp.code == "pp_layer_exceeds_device" and pp["bytes"] == layer_state and pp["capacity"] == unit["capacity"]
    tp = next(r for r in rows if r.strategy == "TP")
    assert tp.best.plan.tp == 8 and not spans_nodes(c, tp.best.plan.tp)


def test_topology_variant_changes_what_it_should(cases):
    # Case 1: the gradient all-reduce now crosses 25GbE Ethernet, and says so. Megatron-Core reduces fp32
    # gradients (4 B a parameter): DP costs more GPU-seconds than the best plan -> 不优先; DeepSpeed reduces
    # in bf16 (2 B), half the bytes, and DP stays 可行.
    _, slow, w, c = cases["fits_one_gpu"]
    assert _verdicts(slow)["DP"] is V.NOT_PREFERRED and "costlier_per_gpu" in _codes(slow, "DP")
    ds = selection_matrix(ps.Workload(w.model, global_batch=w.global_batch, stack="deepspeed"), topology_variant(c))
    assert _verdicts(ds)["DP"] is V.FEASIBLE
    g = _reason(slow, "DP", "dp_group")
    assert g["spans_nodes"] is True and g["link"] == "Ethernet 25GbE" and "step_communication" in _codes(slow, "DP")
    # Case 2: FSDP's per-micro-batch gathers cross the slow link: FSDP goes from fastest to slower
    # than PP, with most of its step exposed communication; PP tolerates the link -> 可行.
    # (With the fused attention kernel FSDP fits micro-batch 4, so it has 8 gathers per step instead
    # of 16 and stays within SLOWER of PP: 可行 rather than 不优先.) TP alone stays infeasible
    # (capped at 8 ways by the KV groups).
    fast, slow, _, _ = cases["state_exceeds_gpu"]
    assert _verdicts(fast)["FSDP"] is V.FEASIBLE and _verdicts(slow)["FSDP"] is not V.INFEASIBLE
    fsdp = {r.strategy: r for r in slow}["FSDP"].best
    pp = {r.strategy: r for r in slow}["PP"].best
    assert fsdp.step.total > pp.step.total and fsdp.step.communication > 0.5 * fsdp.step.total
    # Per GPU-second (step x GPUs used): FSDP is the cheapest on InfiniBand, and costs SLOWER x more
    # than PP once its gathers cross 25GbE -> 不优先, with the factor in its reason; PP stays 可行.
    assert _verdicts(fast)["FSDP"] is V.FEASIBLE and _verdicts(slow)["FSDP"] is V.NOT_PREFERRED
    assert pp.step.total * pp.plan.gpus * SLOWER < fsdp.step.total * fsdp.plan.gpus
    cost = _reason(slow, "FSDP", "costlier_per_gpu")
    assert cost["best_strategy"] == "PP" and cost["ratio"] == pytest.approx(
        fsdp.step.total * fsdp.plan.gpus / (pp.step.total * pp.plan.gpus))
    assert _verdicts(fast)["PP"] is V.FEASIBLE and _verdicts(slow)["PP"] is V.FEASIBLE
    assert _verdicts(slow)["TP"] is V.INFEASIBLE  # capacity, not the link, rules TP out here
    assert _reason(slow, "FSDP", "dp_group")["link"] == "Ethernet 25GbE"
    # Case 3: TP stays inside a node and stays feasible; the reason says it cannot grow past the node.
    _, slow, _, _ = cases["layer_exceeds_gpu"]
    assert _verdicts(slow)["TP"] is V.FEASIBLE
    within = _reason(slow, "TP", "tp_within_node")
    assert within["link"] == "Ethernet 25GbE" and within["gpus_per_node"] == 8


def test_topology_variant_cluster():
    c = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=1)
    v = topology_variant(c)
    assert v.nodes == 2 and v.gpus_per_node == 8 and v.inter is ps.LINKS["eth-25g"] and v.intra is ps.LINKS["nvlink3"]
    with pytest.raises(ValueError, match="inter='nope'"):
        topology_variant(c, inter="nope")


def test_unknown_facts_give_need_more_info():
    name, w, c = paper_cases()[0]
    rows = selection_matrix(w, c, unknown={"global_batch"})
    assert _verdicts(rows)["DP"] is V.NEED_INFO and _codes(rows, "DP")[-1] == "unknown_global_batch_dp"
    # TP in case 3 is feasible only if the intra-node link is fast: unknown -> needs more information.
    name, w, c = paper_cases()[2]
    rows = selection_matrix(w, c, unknown="interconnect")
    assert _verdicts(rows)["TP"] is V.NEED_INFO and _reason(rows, "TP", "unknown_interconnect_tp")["link"] == c.intra.name
    # Hard "no" does not depend on the unknowns.
    assert _verdicts(rows)["DP"] is V.INFEASIBLE
    with pytest.raises(ValueError, match="unknown='weather'"):
        selection_matrix(w, c, unknown={"weather"})
    assert set(FACTS) == {"global_batch", "interconnect"}


def test_pp_with_few_microbatches_is_not_preferred_with_bubble():
    # Llama-2 13B on 8 GPUs with a global batch of 8: PP alone gets at most 8 micro-batches.
    w = ps.Workload(ps.MODELS["llama2-13b"], global_batch=8)
    c = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=1)
    rows = selection_matrix(w, c)
    pp = next(r for r in rows if r.strategy == "PP")
    big = first(pp.reasons, "pp_bubble_too_large")
    assert pp.verdict is V.NOT_PREFERRED and big is not None
    m = big["microbatches"]
    assert m <= 8 and big["bubble"] == pytest.approx((pp.best.plan.pp - 1) / (m + pp.best.plan.pp - 1))
    assert big["bubble"] > big["limit"]


def test_bad_input():
    name, w, c = paper_cases()[0]
    with pytest.raises(ValueError, match="workload="):
        selection_matrix("w", c)
    with pytest.raises(ValueError, match="cluster="):
        selection_matrix(w, "c")


def test_four_column_static_table():
    assert [r.strategy for r in FOUR_COLUMNS] == ["DP", "FSDP", "TP", "PP", "SP/CP", "EP"]
    for r in FOUR_COLUMNS:
        assert r.bottleneck and r.conditions and r.cost
        assert all(op in r.communication for op in r.collectives)  # the cell names its collective
    by = {r.strategy: r for r in FOUR_COLUMNS}
    assert "2Ψ" in by["DP"].communication and "2(n−1)/n" in by["DP"].communication
    assert "1.5 倍" in by["FSDP"].communication
    assert "4 次 all-reduce" in by["TP"].communication and "b·s·h" in by["TP"].communication
    assert "p2p" in by["PP"].communication and "all-to-all" in by["EP"].communication


# Narayanan et al. 2021 ("Efficient Large-Scale Language Model Training on GPU Clusters Using
# Megatron-LM"), Table 1: params (B), heads, hidden, layers, t, p, GPUs, batch. Sequence 2048,
# vocabulary 51200, A100-80GB (Selene). Every row trained, so with full recomputation (as in the
# paper, §5.1) every configuration must fit.
TABLE1 = [
    (1.7, 24, 2304, 24, 1, 1, 32, 512),
    (3.6, 32, 3072, 30, 2, 1, 64, 512),
    (7.5, 32, 4096, 36, 4, 1, 128, 512),
    (18.4, 48, 6144, 40, 8, 1, 256, 1024),
    (39.1, 64, 8192, 48, 8, 2, 512, 1536),
    (76.1, 80, 10240, 60, 8, 4, 1024, 1792),
    (145.6, 96, 12288, 80, 8, 8, 1536, 2304),
    (310.1, 128, 16384, 96, 8, 16, 1920, 2160),
    (529.6, 128, 20480, 105, 8, 35, 2520, 2520),
    (1008.0, 160, 25600, 128, 8, 64, 3072, 3072),
]


@pytest.mark.parametrize("billions,heads,hidden,layers,t,p,n,batch", TABLE1)
@pytest.mark.parametrize("recipe", ["bf16-adam", "bf16-adam-fp32grad"])
def test_narayanan_table1_configurations_fit(billions, heads, hidden, layers, t, p, n, batch, recipe):
    m = ps.Transformer(layers=layers, hidden=hidden, heads=heads, seq_len=2048, vocab=51200, tied_embeddings=True,
                       position="learned", bias=True, norm="layernorm")
    assert round(m.params / 1e9, 1) == billions
    w = ps.Workload(m, recipe=ps.RECIPES[recipe], global_batch=batch)
    c = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=n // 8)
    e = estimate(w, ps.Plan(dp=n // (t * p), tp=t, pp=p, recompute="full"), c)
    assert e.fits, e.reasons
