"""Per-device memory: model states, activations, in-flight micro-batches, FSDP gather peak, breakdown."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import parallelsel.core.memory as memory
import parallelsel.core.pipeline as pl
from parallelsel.core import pipeline_orders
from parallelsel import MODELS, RECIPES, Plan, Transformer, Workload
from parallelsel.core.memory import (
    ALLOCATOR_OVERHEAD,
    activations_per_layer,
    breakdown,
    embedding_activations,
    gather_peak,
    inflight_microbatches,
    logits_activations,
    model_states,
    stage_params,
)

GPT3 = MODELS["gpt3-175b"]


# ------------------------------------------------------------------------------ model states
def test_model_states_fields_and_recipe():
    # ZeRO §3.1 with fp32 gradients (Megatron's main_grad): 2 + 4 + 12 bytes per parameter.
    s = model_states(1e9, RECIPES["bf16-adam-fp32grad"], dp=8, zero=2)
    assert (s.params, s.grads, s.optimizer) == (2e9, 4e9 / 8, 12e9 / 8)
    assert s.total == 2e9 + 0.5e9 + 1.5e9


def test_model_states_dp_without_zero_replicates():
    # Plain DP keeps the full (2 + 2 + 12)Ψ on every rank whatever the degree (ZeRO §5).
    assert model_states(1e9, dp=1024, zero=0).total == 16e9


@settings(max_examples=50, deadline=None)
@given(params=st.floats(1e3, 1e13), dp=st.integers(1, 4096), zero=st.integers(0, 2))
def test_states_never_grow_with_stage(params, dp, zero):
    assert model_states(params, dp=dp, zero=zero + 1).total <= model_states(params, dp=dp, zero=zero).total


@settings(max_examples=50, deadline=None)
@given(params=st.floats(1e3, 1e13), dp=st.integers(1, 4096), zero=st.integers(0, 3))
def test_states_never_grow_with_dp(params, dp, zero):
    assert model_states(params, dp=dp + 1, zero=zero).total <= model_states(params, dp=dp, zero=zero).total


@pytest.mark.parametrize(
    "kwargs,name",
    [
        ({"params": 0}, "params"),
        ({"params": -5}, "params"),
        ({"params": 1e9, "dp": 0}, "dp"),
        ({"params": 1e9, "dp": 2.5}, "dp"),
        ({"params": 1e9, "zero": 4}, "zero"),
        ({"params": 1e9, "zero": True}, "zero"),
        ({"params": 1e9, "recipe": "bf16-adamw"}, "recipe"),  # a key must name a preset
    ],
)
def test_model_states_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        model_states(**kwargs)


# ------------------------------------------------------------------------------- activations
def test_gqa_gated_generalisation_term_by_term():
    # Korthikanti §4.1 breakdown evaluated by hand for Llama-3 8B (GQA kv=1024, SwiGLU f=14336), which trains
    # without dropout (no masks: PyTorch's dropout at p = 0 returns its input):
    # shared (TP-replicated): norm inputs 4sbh + QKV input 2sbh + MLP input 2sbh
    # split: Q 2sbh + K,V 2 x 2sb·kv + out-proj input 2sbh + 3 f-wide tensors 3 x 2sbf
    # scores: the softmax output 2as²b (the product with V reads it; no dropout output or mask).
    m = MODELS["llama3-8b"]
    s, b, h, kv, f, a = 8192, 2, 4096, 1024, 14336, 32
    shared = s * b * h * 8
    split = s * b * (2 * h + 4 * kv + 2 * h + 6 * f)
    scores = 2 * a * s * s * b
    std = {"attention": "standard"}
    # The same shape trained with dropout keeps the paper's two 1-byte masks (2sbh) and 5as²b of scores.
    dropped = dataclasses.replace(m, dropout=True)
    assert activations_per_layer(dropped, b, **std) == shared + 2 * s * b * h + split + 5 * a * s * s * b
    assert activations_per_layer(m, b, **std) == shared + split + scores
    assert activations_per_layer(m, b, tp=4, **std) == shared + (split + scores) / 4
    assert activations_per_layer(m, b, tp=4, sp=True, **std) == (shared + split + scores) / 4
    assert activations_per_layer(m, b, tp=4, recompute="selective", **std) == shared + split / 4
    assert activations_per_layer(m, b, tp=4, sp=True, recompute="full", **std) == 2 * s * b * h / 4


def test_fused_attention_stores_output_and_logsumexp_only():
    # FlashAttention-2 (Dao 2023, Algorithms 1-2): forward saves O and one fp32 logsumexp per head
    # and query row; backward recomputes P from Q, K, V, O, L. So for Llama-3 8B at s = 8192 the
    # 5as²b of the standard kernel becomes 4asb bytes, and O is the output-projection input already
    # counted in the split part. Recompute modes are unchanged.
    m = MODELS["llama3-8b"]
    s, b, h, kv, f, a = 8192, 2, 4096, 1024, 14336, 32
    shared = s * b * h * 8   # no dropout masks (test_gqa_gated_generalisation_term_by_term)
    split = s * b * (2 * h + 4 * kv + 2 * h + 6 * f)
    lse = 4 * a * s * b
    assert activations_per_layer(m, b) == shared + split + lse
    assert activations_per_layer(m, b, attention="flash", tp=8, sp=True) == (shared + split + lse) / 8
    for r in ("selective", "full"):
        assert activations_per_layer(m, b, recompute=r) == activations_per_layer(m, b, recompute=r, attention="standard")
    # GPT-3 (Table 2's shape): sbh(34 + 5as/h) = sbh(34 + 80) standard; sbh(34 + 4a/h) fused.
    g = activations_per_layer(GPT3, 1)
    assert g == 2048 * 12288 * 34 + 4 * 96 * 2048
    assert activations_per_layer(GPT3, 1, attention="standard") / g == pytest.approx(114 / (34 + 4 * 96 / 12288))
    with pytest.raises(ValueError, match="attention"):
        activations_per_layer(GPT3, 1, attention="sdpa")


def test_moe_stores_top_k_expert_tensors():
    # Each token passes through top_k experts, so the MLP's f-wide tensors are stored top_k times.
    dense = Transformer(layers=2, hidden=64, heads=4, seq_len=32, vocab=100, gated_mlp=True)
    moe = Transformer(layers=2, hidden=64, heads=4, seq_len=32, vocab=100, gated_mlp=True, experts=8, top_k=2)
    extra = 32 * 1 * 2 * 3 * 256  # one more copy of three f-wide (f = 4h = 256) 2-byte tensors
    assert activations_per_layer(moe, 1) - activations_per_layer(dense, 1) == extra


def test_seq_len_and_act_bytes():
    # sbh(34 + 5as/h) at s = 1024 for GPT-3: 5 * 96 * 1024 / 12288 = 40.
    assert activations_per_layer(GPT3, 1, seq_len=1024, attention="standard") == 1024 * 12288 * (34 + 40)
    # 4-byte activations: 2-byte terms double, the 1-byte masks do not: sbh(66 + 9as/h).
    assert activations_per_layer(GPT3, 1, act_bytes=4, attention="standard") == 2048 * 12288 * (66 + 9 * 80 / 5)


@settings(max_examples=50, deadline=None)
@given(
    key=st.sampled_from(sorted(MODELS)),
    b=st.integers(1, 8),
    tp_exp=st.integers(0, 3),
    sp=st.booleans(),
    r=st.sampled_from(["none", "selective", "full"]),
)
def test_activations_never_grow_with_tp_sp_recompute(key, b, tp_exp, sp, r):
    m = MODELS[key]
    tp = 2**tp_exp
    here = activations_per_layer(m, b, tp=tp, sp=sp, recompute=r)
    assert activations_per_layer(m, b, tp=2 * tp, sp=sp, recompute=r) <= here
    assert activations_per_layer(m, b, tp=tp, sp=True, recompute=r) <= here
    order = ["none", "selective", "full"]
    for stronger in order[order.index(r):]:
        assert activations_per_layer(m, b, tp=tp, sp=sp, recompute=stronger) <= here


@pytest.mark.parametrize(
    "kwargs,name",
    [
        ({"micro_batch": 0}, "micro_batch"),
        ({"micro_batch": 1, "tp": 0}, "tp"),
        ({"micro_batch": 1, "sp": "yes"}, "sp"),
        ({"micro_batch": 1, "recompute": "some"}, "recompute"),
        ({"micro_batch": 1, "seq_len": -1}, "seq_len"),
    ],
)
def test_activations_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        activations_per_layer(GPT3, **kwargs)


def test_activations_needs_a_transformer():
    with pytest.raises(ValueError, match="model"):
        activations_per_layer("gpt3", 1)


# ------------------------------------------------------------- embeddings and logits (§4.3)
def test_embedding_and_logits_section_4_3():
    s, h, v, t = 2048, 12288, 51200, 8
    # Embedding dropout mask: sbh/t with SP (1 byte per element), sbh without.
    assert embedding_activations(GPT3, 1, tp=t, sp=True) == s * h / t
    assert embedding_activations(GPT3, 1, tp=t) == s * h
    # Final norm, output projection and fp32 logits with SP: 4sbh/t (1 + v/h).
    assert logits_activations(GPT3, 1, tp=t, sp=True) == pytest.approx(4 * s * h / t * (1 + v / h))
    # Without SP the two sbh inputs are replicated: 4sbh + 4sbv/t.
    assert logits_activations(GPT3, 1, tp=t) == pytest.approx(4 * s * h + 4 * s * v / t)


# ------------------------------------------------------------------- in-flight micro-batches
@pytest.mark.parametrize(
    "schedule,p,m,v,stage,want",
    [
        ("gpipe", 4, 8, 1, 0, 8),          # GPipe: all m forwards before any backward
        ("gpipe", 4, 8, 1, 3, 8),
        ("1f1b", 4, 8, 1, 0, 4),           # 1F1B: first stage min(p, m)
        ("1f1b", 4, 2, 1, 0, 2),
        ("1f1b", 4, 8, 1, 3, 1),           # last stage: one
        ("zb-h1", 4, 8, 1, 0, 4),          # ZB-H1: same first-stage peak as 1F1B
        ("zb-h1", 4, 8, 1, 3, 4),          # ... but every stage keeps its inputs until W: min(p, m)
        ("1f1b", 4, 2, 1, 2, 2),           # m < p (Megatron runs it): min(p - i, m)
        ("interleaved", 4, 8, 2, 0, 4 * (1 + 3 / 8)),   # Korthikanti §4.2.3: p(1 + (p-1)/(pv))
        ("interleaved", 8, 16, 4, 0, 8 * (1 + 7 / 32)),
        ("1f1b", 1, 8, 1, 0, 1),           # no pipeline: gradient accumulation, one at a time
    ],
)
def test_inflight(schedule, p, m, v, stage, want):
    assert inflight_microbatches(schedule, p, m, v, stage) == pytest.approx(want)


def _accepted(kind, p, m, v):
    try:
        pl.schedule(kind, p, m, chunks=v)
    except ValueError:
        return False
    return True


def _held_on_torchs_order(order) -> int:
    """The most activations a rank of torch's recorded order holds at once, counted here from the record alone: an F
    stores one, a full B or a W releases it (``torch.distributed.pipelining`` frees a stage's stored input after the
    pass that last reads it; I keeps it for W)."""
    held = peak = 0
    for _, action, _ in order:
        held += {"F": 1, "B": -1, "W": -1}.get(action, 0)
        peak = max(peak, held)
    return peak


def test_inflight_equals_the_peak_of_torchs_recorded_orders():
    """Memory's in-flight count, every rank of every setting torch 2.13 ran (parallelsel/course/data/), against the
    peak counted on the order torch executed: the reference is torch's order, not the library's generator."""
    from parallelsel.course.torch_records import record

    ran = [e for e in record("torch_pipeline_schedules.json")["settings"] if "ranks" in e]
    kinds = {e["kind"] for e in ran}
    assert {"gpipe", "1f1b", "interleaved", "looped-bfs", "interleaved-zb", "zbv", "dualpipev"} <= kinds
    wrong = [(e["kind"], e["stages"], e["microbatches"], e["chunks"], r, got, want)
             for e in ran for r, order in enumerate(e["ranks"])
             for got, want in [(inflight_microbatches(e["kind"], e["stages"], e["microbatches"], e["chunks"], r),
                                _held_on_torchs_order(order) / e["chunks"])] if got != want]
    assert wrong == []


@pytest.mark.parametrize("kind,p,m", [("1f1b", p, m) for p in (2, 4, 8) for m in range(1, p)]
                         + [("zb-h1", 4, 9), ("zb-h1", 4, 11), ("zb-h1", 3, 7)])
def test_inflight_one_chunk_settings_torch_refuses(kind, p, m):
    # 1F1B with m < p (Megatron runs it) and ZB-H1 with m not a multiple of the rounds: the one-chunk order
    # is still complete, so it simulates to the end, and memory holds that order's peak.
    gen = pipeline_orders.ORDERS[kind][0]
    sched = pl.Schedule.from_rank_orders([[(r, a, mb) for a, mb, _ in gen(p, m, 1, r)] for r in range(p)])
    assert sorted(op.microbatch for op in sched.ops[0] if op.kind == "F") == list(range(m))
    pl.simulate(sched)  # raises on a deadlock or a missing pass
    assert [inflight_microbatches(kind, p, m, 1, i) for i in range(p)] == list(sched.peak_inflight())


@pytest.mark.parametrize("p", [2, 3, 4, 8])
@pytest.mark.parametrize("m", [1, 2, 3, 5, 8, 16])
def test_closed_forms_match_the_schedule_where_they_apply(p, m):
    # Published closed forms (the docstring's): GPipe m (Huang et al. 2019); 1F1B min(p - i, m)
    # (Narayanan et al. 2021 §2.2.1); interleaved, m a multiple of p: min(mv, 2(p-i-1) + (v-1)p + 1)/v,
    # p(1 + (p-1)/(pv)) on the first stage (Korthikanti et al. 2022 §4.2.3).
    for i in range(p):
        assert inflight_microbatches("gpipe", p, m, 1, i) == m
        assert inflight_microbatches("1f1b", p, m, 1, i) == min(p - i, m)
    for v in (2, 3, 4):
        mm = m * p
        for i in range(p):
            want = min(mm * v, 2 * (p - i - 1) + (v - 1) * p + 1) / v
            assert inflight_microbatches("interleaved", p, mm, v, i) == pytest.approx(want)
        if mm >= p * v:
            assert inflight_microbatches("interleaved", p, mm, v, 0) == pytest.approx(p * (1 + (p - 1) / (p * v)))


def test_counted_peaks_equal_a_walk_of_each_order():
    # peak_inflight counts GPipe, 1F1B and interleaved 1F1B without walking their orders; every setting torch
    # accepts up to p = 8 (m not a multiple of p included: torch's rounds) against the walk of the order that
    # tests/test_pipeline_torch.py holds to torch's recorded runs. Lists every setting that differs.
    wrong = []
    for kind in ("gpipe", "1f1b", "interleaved"):
        gen = pipeline_orders.ORDERS[kind][0]
        for p in range(2, 9):
            for v in ((1,) if kind != "interleaved" else (1, 2, 3, 5)):
                for m in range(p if kind == "interleaved" else 1, 4 * p + 2):
                    try:
                        pipeline_orders.check(kind, p, m, v)
                    except ValueError:
                        continue
                    for r in range(p):
                        walked = pl._held_peak(a for a, _, _ in gen(p, m, v, r))
                        if pl.peak_inflight(kind, p, m, v, r) != walked:
                            wrong.append((kind, p, m, v, r, walked))
    assert wrong == []


def test_zb_h1_memory_holds_p_on_the_last_stage():
    # The issue's case: ZB-H1's last stage keeps p micro-batches, not 1F1B's one.
    w = Workload(MODELS["llama3-8b"], global_batch=64)
    one = memory._stage_breakdown(w, Plan(dp=1, pp=4, micro_batch=1, schedule="1f1b"), 3)
    zb = memory._stage_breakdown(w, Plan(dp=1, pp=4, micro_batch=1, schedule="zb-h1"), 3)
    assert (one.inflight, zb.inflight) == (1, 4)
    assert zb.activations == pytest.approx(4 * one.activations)


def test_inflight_bad_stage():
    with pytest.raises(ValueError, match="stage"):
        inflight_microbatches("1f1b", 4, 8, 1, 4)
    with pytest.raises(ValueError, match="schedule"):
        inflight_microbatches("pipedream", 4, 8)


# ---------------------------------------------------------------- parameters and gather peak
def test_stage_params_gpt3():
    # First stage: 96/8 = 12 layers + the word and position embeddings, split by tp = 8.
    m = GPT3
    dense, expert = stage_params(m, tp=8, pp=8, stage=0)
    assert expert == 0
    assert dense == (12 * m.layer_params + 51200 * 12288 + 2048 * 12288) / 8
    # Last stage: 12 layers + final LayerNorm + its copy of the tied word embedding.
    dense, _ = stage_params(m, tp=8, pp=8, stage=7)
    assert dense == (12 * m.layer_params + 2 * 12288 + 51200 * 12288) / 8


def test_stage_params_moe_divides_experts_by_ep():
    m = MODELS["mixtral-8x7b"]
    dense, expert = stage_params(m, tp=1, pp=1, ep=8)
    assert expert == 32 * 8 * m.expert_params / 8
    assert dense + expert * 8 == m.params


def test_gather_peak_is_largest_unit():
    # Zhao et al. 2023 §3.2-§3.3: two blocks of bf16 weights (prefetch) + one block of bf16 grads,
    # beside the root unit (torchtitan's wrapping: embedding, final norm, head), whose bf16 weights
    # stay gathered from forward to backward. Llama-3 8B: embedding 128256 x 4096 = 525M, a layer 218M.
    m = MODELS["llama3-8b"]
    emb, layer = 128256 * 4096, m.layer_params
    assert gather_peak(m, stage=0, pp=2) == 2 * emb + 6 * layer
    # without prefetch the root's own backward (weights + grads of the embedding) is the larger moment
    assert gather_peak(m, stage=0, pp=2, prefetch=False) == max(2 * emb + 4 * layer, 4 * emb) == 4 * emb
    # A middle stage of a 4-stage pipeline has only blocks.
    assert gather_peak(m, pp=4, stage=1) == 6 * layer
    # One stage: the root holds embedding, head and final norm. The head's bf16 grads, computed first, wait
    # for the root's reduce-scatter after the last block (as the recorded torch run shows:
    # parallelsel/course/data/torch_fsdp_accumulation.json), so they sit beside the first block's backward, which is
    # then larger than the root's own backward (weights + grads, 4 bytes a parameter).
    root, head = 2 * emb + 4096, emb + 4096
    assert gather_peak(m) == max(2 * root + 2 * head + 6 * layer, 4 * root) == 2 * root + 2 * head + 6 * layer
    # SHARD_GRAD_OP (reshard_after_forward=False): every block's weights stay gathered until its backward.
    assert gather_peak(m, reshard_after_forward=False) == 2 * (root + 32 * layer) + 2 * head + 2 * layer
    units = {u.name: u for u in memory.fsdp_units(m)}
    assert units["block"].count == 32 and units["root"].params == root and not units["root"].reshard_after_forward


# ---------------------------------------------------------------------------------- breakdown
def test_breakdown_single_device_by_hand():
    m = MODELS["gpt2-1.5b"]
    w = Workload(m, global_batch=4, attention="standard", stack="deepspeed")  # 2 + 2 + 12 by hand
    br = breakdown(w, Plan(micro_batch=2))
    s, h, b, a, v = 1024, 1600, 2, 25, 50257
    assert br.params == 2 * m.params and br.grads == 2 * m.params and br.optimizer == 12 * m.params
    # 48 layers of sbh(34 + 5as/h), one micro-batch in flight (gradient accumulation)
    assert br.activations == pytest.approx(48 * s * b * h * (34 + 5 * a * s / h))
    # The default fused kernel: 48 layers of sbh(34) + 4asb (output and logsumexp, no s x s scores).
    fused = breakdown(Workload(m, global_batch=4), Plan(micro_batch=2))
    assert fused.activations == pytest.approx(48 * (s * b * h * 34 + 4 * a * s * b))
    # embedding dropout mask sbh and final norm + output input 4sbh + fp32 logits 4sbv; DeepSpeed runs the model's
    # own eager loss, whose log-softmax backward holds two more fp32 tensors of the logits' size (8sbv)
    assert br.embeddings == pytest.approx(s * b * h + 4 * s * b * h + 4 * s * b * v + 8 * s * b * v)
    assert br.gather_peak == 0
    rest = br.params + br.grads + br.optimizer + br.activations + br.embeddings
    assert br.allocator == pytest.approx(ALLOCATOR_OVERHEAD * rest)
    assert br.total == pytest.approx(rest * (1 + ALLOCATOR_OVERHEAD))
    assert sum(br.as_dict().values()) == pytest.approx(br.total)


def test_breakdown_zero3_and_hsdp_shard_over_shard_group():
    m = MODELS["llama2-7b"]
    w = Workload(m, global_batch=64, stack="deepspeed")  # 2 + 2 + 12 by hand
    full = breakdown(w, Plan(dp=64, zero=3))
    hsdp = breakdown(w, Plan(dp=64, zero=3, shard=8))
    assert full.params == pytest.approx(2 * m.params / 64)
    assert hsdp.params == pytest.approx(2 * m.params / 8)
    # DeepSpeed gathers module by module (its parameter coordinator), not FSDP's block units: by hand from its
    # defaults (stage3_prefetch_bucket_size 5e7, max_live_parameters 1e9, reduce_bucket_size 5e8, fp16/bf16):
    # the largest module is the 32000 x 4096 embedding, prefetching one more of that size, plus its gradient
    # and the 5e8-element contiguous gradient bucket.
    emb = 32000 * 4096
    assert full.gather_peak == pytest.approx(2 * (emb + emb) + 2 * (emb + 5e8))
    assert full.gather_peak != gather_peak(m)  # (FSDP's two blocks and a block's gradient: torchtitan's rule)


def test_breakdown_reports_worst_stage():
    # Both ends of the pipeline are computed (first: embedding + p in-flight micro-batches; last:
    # output head + fp32 logits of a 128k vocabulary) and the larger is returned.
    w = Workload(MODELS["llama3-8b"], global_batch=32)
    br = breakdown(w, Plan(dp=1, pp=2, micro_batch=1))
    first = memory._stage_breakdown(w, Plan(dp=1, pp=2, micro_batch=1), 0)
    last = memory._stage_breakdown(w, Plan(dp=1, pp=2, micro_batch=1), 1)
    assert br.total == max(first.total, last.total)
    assert br.stage == ("first" if first.total >= last.total else "last")


def test_breakdown_recompute_and_pipeline_reduce_memory():
    w = Workload(GPT3, global_batch=1536)
    base = breakdown(w, Plan(dp=12, tp=8, pp=16))
    assert breakdown(w, Plan(dp=12, tp=8, pp=16, recompute="full")).activations < base.activations
    assert breakdown(w, Plan(dp=12, tp=8, pp=16, sp=True)).activations < base.activations
    # GPipe holds all m = 128 micro-batches; 1F1B only p = 16 on the first stage.
    assert breakdown(w, Plan(dp=12, tp=8, pp=16, schedule="gpipe")).activations > base.activations


def test_fsdp_options_bad_input_names_the_rule():
    with pytest.raises(ValueError, match=r"no_sync=True: needs zero=3"):
        Plan(dp=8, zero=2, no_sync=True)
    with pytest.raises(ValueError, match=r"reshard_after_forward=False: needs zero=3"):
        Plan(dp=8, zero=1, reshard_after_forward=False)
    with pytest.raises(ValueError, match=r"no_sync='yes': must be True or False"):
        Plan(dp=8, zero=3, no_sync="yes")


def test_no_sync_and_shard_grad_op_memory_by_hand():
    # Llama-3 8B, FSDP over 8 ranks, bf16 + Adam: with no_sync each rank holds the whole model's bf16
    # gradients (2 bytes a parameter) instead of 1/8 of them; SHARD_GRAD_OP gathers every block's weights.
    # (PyTorch FSDP's options: torchtitan's stack, with the 2 + 2 + 12 recipe to keep the arithmetic by hand.)
    m = MODELS["llama3-8b"]
    w = Workload(m, recipe=RECIPES["bf16-adam"], global_batch=32, stack="torchtitan")
    base = breakdown(w, Plan(dp=8, zero=3))
    nosync = breakdown(w, Plan(dp=8, zero=3, no_sync=True))
    assert base.grads == 2 * m.params / 8 and nosync.grads == 2 * m.params
    keep = breakdown(w, Plan(dp=8, zero=3, reshard_after_forward=False))
    assert keep.params == base.params and keep.gather_peak > 2 * m.params  # every weight gathered, bf16


def test_dropout_masks_follow_what_torch_keeps():
    # parallelsel/course/data/torch_dropout.json (tools/record_torch_dropout.py, torch's autograd on CPU, bf16): at
    # p = 0 dropout adds nothing to what autograd keeps; at p > 0 it adds one tensor per dropped element after a
    # residual branch (the mask) and two on the attention probabilities (the mask and the dropped output, which the
    # product with V then reads instead of the softmax output). The library's per-element counts, Llama's shape
    # with dropout and without, are those numbers of tensors.
    from parallelsel.course.torch_records import record

    rows = {r["p"]: r for r in record("torch_dropout.json")["rows"]}
    dtype_bytes = 2   # bf16: on CPU the kept noise has the input's dtype (CUDA's fused kernel keeps 1 byte)
    extra = {key: (rows[0.1][f"{key}_bytes"] - rows[0.0][f"{key}_bytes"]) / (rows[0.1][elems] * dtype_bytes)
             for key, elems in (("residual_block", "residual_dropped_elements"),
                                ("attention_scores", "scores_dropped_elements"))}
    assert extra == {"residual_block": 1, "attention_scores": 2}
    m = MODELS["llama3-8b"]
    assert m.dropout is False and GPT3.dropout is True
    dropped = dataclasses.replace(m, dropout=True)
    s, b, h, a = 8192, 1, m.hidden, m.heads
    std = {"attention": "standard"}
    # Two residual dropouts a layer (after attention and after the MLP), 1-byte masks on CUDA.
    flash_extra = activations_per_layer(dropped, b) - activations_per_layer(m, b)
    assert flash_extra == 2 * extra["residual_block"] * s * b * h * 1
    # The probabilities: a 1-byte mask and a 2-byte dropped output a score.
    std_extra = activations_per_layer(dropped, b, **std) - activations_per_layer(m, b, **std) - flash_extra
    assert std_extra == a * s * s * b * (1 + 2) and extra["attention_scores"] == 2
    # ... and the embedding's one mask.
    assert memory.embedding_activations(m, b) == 0 < memory.embedding_activations(dropped, b) == s * b * h


def test_fp8_weight_copies_follow_whether_the_part_reads_fp8_columnwise():
    # Transformer Engine docs/features/low_precision_training/performance_considerations/
    # performance_considerations.rst @44a8e03, "Architecture differences": on Hopper a columnwise FP8 tensor "needs
    # to be physically transposed in memory"; Blackwell "supports columnwise access natively, so no transpose is
    # needed". So beside bf16 weights TE keeps two FP8 copies of each linear weight on an H100 and one on a B200,
    # and with FP8 weights (fp8_param_gather) the weight alone on a B200. Norms and embeddings are not linears.
    import parallelsel as ps

    assert all(d.fp8_transpose for k, d in ps.DEVICES.items() if k.startswith("h") and d.fp8_flops)
    assert not ps.DEVICES["b200-180gb"].fp8_transpose and not ps.DEVICES["gb200-186gb"].fp8_transpose
    m = MODELS["llama3-8b"]
    linear = m.layers * (m.layer_params - 2 * m.norm_params)
    plan = Plan(dp=8, zero=1)
    hopper = ps.DEVICES["h100-sxm-80gb"]
    blackwell_like = dataclasses.replace(hopper, fp8_transpose=False)
    for recipe, fewer in (("fp8-adam-bf16grad", 1), ("fp8-params-bf16grad", 1), ("bf16-adam", 0)):
        w = Workload(m, recipe=ps.RECIPES[recipe], global_batch=8, stack="megatron-core")
        h = memory.breakdown(w, plan, hopper).params
        b = memory.breakdown(w, plan, blackwell_like).params
        assert h - b == pytest.approx(fewer * linear), recipe
    # Experts are sharded over dp / ep under ZeRO-3, so their copies are too: Mixtral 8x7B on 8 GPUs, EP 8, FP8
    # weights: every GPU holds one expert per layer whole and 1/8 of the dense weights.
    mx = MODELS["mixtral-8x7b"]
    w = Workload(mx, recipe=ps.RECIPES["fp8-params-bf16grad"], global_batch=8, stack="megatron-core")
    plan3 = Plan(dp=8, ep=8, zero=3)
    h = memory.breakdown(w, plan3, hopper).params
    b = memory.breakdown(w, plan3, blackwell_like).params
    assert h - b == pytest.approx(mx.layers * (mx.attention_params / 8 + mx.expert_params))
    # Without a device the breakdown is Hopper's.
    w = Workload(m, recipe=ps.RECIPES["fp8-adam-bf16grad"], global_batch=8, stack="megatron-core")
    assert memory.breakdown(w, plan).params == memory.breakdown(w, plan, hopper).params
