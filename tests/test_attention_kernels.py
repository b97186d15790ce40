"""The attention kernel each stack runs: cuDNN's fused attention under Transformer Engine on Hopper, FlashAttention-2
under PyTorch's SDPA (torchtitan), FlashAttention-2 everywhere on Ampere.

Sources: Transformer Engine picks FusedAttention over FlashAttention on sm90 since v1.2 (transformer_engine/pytorch/
attention.py, commit 32db392, 2023-12-07); PyTorch made cuDNN SDPA opt-in after 2.5 (pytorch/pytorch#138522), and
pytorch/pytorch#142132 measured SDPA at 329 against cuDNN's 631 TFLOP/s on an H100 (nightly 2.6.0.dev20241204).
Shah et al. 2024 (FlashAttention-3), Figs. 5-6, put cuDNN 1.5-1.7x ahead of FlashAttention-2 at 4k-8k tokens on the
H100 SXM5 (forward causal 518-529 against 319-333 TFLOP/s, backward 499-518 against 310-318).
"""

from __future__ import annotations

import dataclasses

import pytest

import parallelsel as ps
from parallelsel.core.kernels import compute_time
from parallelsel.core.stacks import stack_fused


def _attention(device, stack: str) -> float:
    w = ps.Workload("llama3-8b", global_batch=8, seq_len=8192, stack=stack)
    return compute_time(w.model, 1, 8192, device, fused=stack_fused(w)).attention


def test_megatron_core_runs_cudnn_attention_on_hopper():
    h100 = ps.DEVICES["h100-sxm-80gb"]
    ratio = _attention(h100, "torchtitan") / _attention(h100, "megatron-core")
    assert 1.5 <= ratio <= 1.75   # the FA3 paper's cuDNN over FlashAttention-2 at these lengths


def test_ampere_has_one_attention_kernel_for_every_stack():
    a100 = ps.DEVICES["a100-80gb"]
    assert a100.cudnn_attention_efficiency == 0
    assert _attention(a100, "megatron-core") == _attention(a100, "torchtitan")


def test_a_device_without_a_cudnn_rate_falls_back_to_flashattention():
    mine = dataclasses.replace(ps.DEVICES["h100-sxm-80gb"], cudnn_attention_efficiency=0.0)
    assert _attention(mine, "megatron-core") == _attention(mine, "torchtitan")


@pytest.mark.parametrize("value", [1.5, -0.1])
def test_the_cudnn_rate_is_a_share_of_peak(value):
    with pytest.raises(ValueError, match="cudnn_attention_efficiency"):
        dataclasses.replace(ps.DEVICES["h100-sxm-80gb"], cudnn_attention_efficiency=value)


def test_fa2_is_flashattention_2_where_the_stack_would_run_cudnn():
    # Transformer Engine with NVTE_FUSED_ATTN=0 runs FlashAttention-2: the H100 rate SDPA (torchtitan) runs, the same
    # memory as any fused kernel, and on Ampere, where there is one kernel, no change at all.
    h100, a100 = ps.DEVICES["h100-sxm-80gb"], ps.DEVICES["a100-80gb"]
    mc = ps.Workload("llama3-8b", global_batch=8, seq_len=8192, stack="megatron-core")
    fa2 = dataclasses.replace(mc, attention="fa2")
    assert compute_time(mc.model, 1, 8192, h100, fused=stack_fused(fa2), attention="fa2").attention == pytest.approx(
        _attention(h100, "torchtitan"))
    assert compute_time(mc.model, 1, 8192, a100, fused=stack_fused(fa2), attention="fa2").attention == \
        _attention(a100, "megatron-core")
    plan, cluster = ps.Plan(dp=8, zero=1), ps.Cluster(h100, nodes=1)
    e_cudnn, e_fa2 = ps.estimate(mc, plan, cluster), ps.estimate(fa2, plan, cluster)
    assert e_fa2.memory.total == e_cudnn.memory.total
    assert e_fa2.step.total > e_cudnn.step.total
