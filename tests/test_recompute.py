"""Recomputation policies as the frameworks define them (``Plan(recompute=..., recompute_layers=...)``).

References are the frameworks' own policy code, quoted by file and line:

* torchtitan op-level SAC: ``torchtitan/models/llama3/parallelize_llama.py`` @820504e L218-227 (``_save_list``:
  ``aten.mm``, the flash / efficient SDPA ops, ``_c10d_functional.reduce_scatter_tensor``, ``aten.max``) and
  L254-268 ("Saves output of all compute ops, except every second mm"); the Llama call order from
  ``torchtitan/models/llama3/model.py`` @820504e L238 (wq, wk, wv), L263 (wo), L302 (``w2(F.silu(w1(x)) * w3(x))``).
* torchtitan layer SAC: same file L281-289 (full AC on every N-th block, none on the others).
* Megatron-Core: ``megatron/core/transformer/transformer_config.py`` @d98e8a6 L532-582 (granularity, method,
  num_layers, modules; selective = ``core_attn``), L1919-1925 (num_layers in 1..layers/PP).
"""

from __future__ import annotations

import pytest

import parallelsel as ps
from parallelsel.core.kernels import compute_time
from parallelsel.core.memory import op_saved_bytes
from parallelsel.core.model import block_matmuls, op_saved_matmuls

L8 = ps.MODELS["llama3-8b"]
H100 = ps.DEVICES["h100-sxm-80gb"]


def test_llama_matmul_call_order_is_torchtitans():
    # model.py L238: xq, xk, xv = self.wq(x), self.wk(x), self.wv(x); L263: self.wo(output);
    # L302: self.w2(F.silu(self.w1(x)) * self.w3(x)) -- Python evaluates w1 before w3, then w2.
    assert [n for n, _, _ in block_matmuls(L8)] == ["wq", "wk", "wv", "wo", "w1", "w3", "w2"]


def test_op_sac_saves_every_other_matmul_from_the_first():
    # L254-268: mm_count is incremented per aten.mm, and an mm whose count is even is PREFER_RECOMPUTE:
    # counts 1, 3, 5, 7 are saved -- wq, wv, w1, w2; wk, wo, w3 are recomputed.
    assert op_saved_matmuls(L8) == ("wq", "wv", "w1", "w2")


def test_op_sac_saved_tensors_are_the_policy_list():
    s, b, h, kv, f, heads = 8192, 1, 4096, 1024, 14336, 32
    saved = op_saved_bytes(L8, s, b)
    # The checkpoint's input, the saved mm outputs (bf16), the SDPA output (bf16) and logsumexp (fp32 per head
    # and row); nothing of RMSNorm, RoPE, SiLU, the gating product or the residual adds.
    expected = {"input": 2 * s * h, "wq": 2 * s * h, "wv": 2 * s * kv, "w1": 2 * s * f, "w2": 2 * s * h,
                "sdpa": 2 * s * h + 4 * s * heads}
    assert saved == expected
    assert ps.memory.activations_per_layer(L8, b, recompute="op") == sum(expected.values())


def test_op_sac_with_tp_keeps_row_parallel_partial_sums_and_reduce_scatter_outputs():
    # Row-parallel w2's local mm output is the full-width partial sum (before its reduce-scatter); with
    # sequence parallelism the reduce-scatter outputs are in _save_list too.
    s, t, h = 8192, 8, 4096
    saved = op_saved_bytes(L8, s, 1, t, sp=True)
    assert saved["w2"] == 2 * s * h
    assert saved["wq"] == 2 * s * h / t
    assert saved["reduce_scatter"] == 2 * 2 * s * h / t
    assert saved["input"] == 2 * s * h / t


def test_policies_order_by_memory_and_by_time():
    mem = {r: ps.memory.activations_per_layer(L8, 2, recompute=r) for r in ps.core.model.RECOMPUTE}
    assert mem["none"] > mem["selective"] > mem["op"] > mem["full"]
    t = {r: compute_time(L8, 2, 8192, H100, recompute=r).total for r in ps.core.model.RECOMPUTE}
    # Core-attention recompute re-runs the attention forward, op-level SAC three matmuls and the memory-bound
    # work: which costs more depends on the sequence and the part; both cost less than the whole layer.
    assert t["none"] < t["selective"] < t["full"] and t["none"] < t["op"] < t["full"]


def test_op_recompute_flops_are_the_unsaved_matmuls():
    # wk (h x kv), wo (h x h), w3 (h x f) run twice; attention does not (SDPA output saved).
    h, kv, f, l = 4096, 1024, 14336, 32
    extra = L8.flops_per_token("op") - L8.flops_per_token("none")
    assert extra == 2 * l * (h * kv + h * h + h * f)


def test_recompute_layers_interpolates_between_none_and_full_per_chunk():
    w = ps.Workload(L8, global_batch=8, stack="torchtitan")
    none = ps.memory.breakdown(w, ps.Plan(dp=8, zero=3)).activations
    full = ps.memory.breakdown(w, ps.Plan(dp=8, zero=3, recompute="full")).activations
    half = ps.memory.breakdown(w, ps.Plan(dp=8, zero=3, recompute="full", recompute_layers=16)).activations
    every = ps.memory.breakdown(w, ps.Plan(dp=8, zero=3, recompute="full", recompute_layers=32)).activations
    assert every == full
    # torchtitan's selective_ac_option="2" wraps 16 of 32 blocks: half the layers store everything.
    assert none > half > full


def test_recompute_layers_rules():
    with pytest.raises(ValueError, match="recompute_layers=2: needs recompute='full'"):
        ps.Plan(recompute="selective", recompute_layers=2)
    with pytest.raises(ValueError, match="recompute_layers"):
        ps.Plan(recompute="full", recompute_layers=0)
    # transformer_config.py L1919-1925: recompute_num_layers must be within the stage's (chunk's) layers.
    w = ps.Workload(L8, global_batch=8)
    codes = [r.code for r in ps.core.plan.constraint_violations(w, ps.Plan(pp=4, recompute="full", recompute_layers=9))]
    assert codes == ["recompute_layers_exceed_chunk"]


def test_stack_offers_its_own_policies():
    # Megatron-Core has no op-level SAC; torchtitan has no core-attention-only mode.
    mc = ps.Workload(L8, global_batch=8, stack="megatron-core")
    tt = ps.Workload(L8, global_batch=8, stack="torchtitan")
    assert [r.code for r in ps.core.plan.constraint_violations(mc, ps.Plan(dp=8, recompute="op"))] == ["recompute_not_in_stack"]
    assert ps.core.plan.constraint_violations(tt, ps.Plan(dp=8, recompute="op")) == []


def test_label_round_trips_recompute_layers():
    p = ps.Plan(dp=4, pp=2, recompute="full", recompute_layers=3)
    assert ps.core.plan.parse_plan(p.label()) == p
    from parallelsel.render.reasons import plan_label, read_plan

    q = ps.Plan(dp=4, recompute="op")
    assert read_plan(plan_label(q)) == q and read_plan(plan_label(q, "en")) == q


def test_search_and_matrix_try_only_the_stacks_policies():
    # Llama 3 8B at 8K on one node of the 500 W H100s with a batch that needs recomputation on some plans.
    cluster = ps.Cluster(ps.DEVICES["h100-hbm2e-96gb"])
    for stack, absent in (("torchtitan", "selective"), ("megatron-core", "op")):
        w = ps.Workload(L8, global_batch=64, stack=stack)
        result = ps.search(w, cluster, top=50)
        assert result.results and all(r.plan.recompute != absent for r in result.results)
        rows = ps.selection_matrix(w, cluster)
        assert all(r.best is None or r.best.plan.recompute != absent for r in rows if hasattr(r, "best"))


def test_fp8_recipe_is_refused_on_a_part_without_fp8():
    w = ps.Workload(L8, global_batch=8, stack="torchtitan", recipe=ps.RECIPES["fp8-compute-fp32-adam"])
    e = ps.estimate(w, ps.Plan(dp=8, zero=3, recompute="op"), ps.Cluster(ps.DEVICES["a100-80gb"]))
    assert "fp8_not_supported" in [r.code for r in e.reasons]
    h = ps.estimate(w, ps.Plan(dp=8, zero=3, recompute="op"), ps.Cluster(ps.DEVICES["h100-sxm-80gb"]))
    assert "fp8_not_supported" not in [r.code for r in h.reasons]
