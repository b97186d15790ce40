"""Plans NVIDIA published as measured on DGX-H100 (Megatron-Bridge performance summary, NeMo container 25.11:
docs/performance-summary.md @97ad8cc of NVIDIA-NeMo/Megatron-Bridge), run with the recipe their perf scripts set
(r0.2.0 @0465189: FP8 current scaling with fp8_param_gather=True, grad_reduce_in_fp32=False, distributed optimizer,
no recomputation, TP communication overlap; the 405B recipe counts the embedding and the loss in the pipeline
split). They trained, so each must fit and the search must walk it."""

from __future__ import annotations

import pytest

import parallelsel as ps
from parallelsel.core.plan import megatron_split
from parallelsel.core.search import enumerates
from parallelsel.core.stacks import STACKS, wire_bytes
from parallelsel.course.measured import stack_estimate
from parallelsel.course.stack_runs import MEGATRON_BRIDGE_H100

ROWS = {r.label: r for r in MEGATRON_BRIDGE_H100}
LLAMA70 = "Megatron-Bridge Llama3 70B (64 H100, FP8)"


def _job(label):
    e = stack_estimate(ROWS[label])
    return e.workload, e.plan, e.cluster


@pytest.mark.parametrize("label", list(ROWS))
def test_published_megatron_bridge_plans_fit_and_are_enumerated(label):
    work, plan, cluster = _job(label)
    e = ps.estimate(work, plan, cluster)
    assert e.fits, (label, [(r.code, dict(r.values)) for r in e.reasons])
    assert enumerates(work, cluster, plan)


def test_the_405b_rows_use_megatrons_split():
    # The rows state the split the recipe's account-for flags give: checked against the rule, not copied from it.
    for label, run in ROWS.items():
        if run.model == "llama3-405b":
            assert run.plan["stage_layers"] == megatron_split(126, 8, account_for_embedding=True, account_for_loss=True)


def test_the_405b_split_counts_embedding_and_loss():
    # 126 layers + 2 over 8 x 8 virtual stages of 2: the first and the last rank hold one layer fewer.
    assert megatron_split(126, 8, account_for_embedding=True, account_for_loss=True) == (15,) + (16,) * 6 + (15,)


def test_megatron_core_reduces_gradients_in_the_buffer_dtype():
    # grad_reduce_in_fp32=False (--grad-reduce-in-bf16): the bf16 main-grad buffer is what is reduce-scattered.
    mc = STACKS["megatron-core"]
    assert wire_bytes(mc, ps.RECIPES["bf16-adam-fp32grad"]) == (4.0, 2.0)
    assert wire_bytes(mc, ps.RECIPES["fp8-params-bf16grad"]) == (2.0, 1.0)   # and FP8 weights gathered in FP8
    work, plan, cluster = _job(LLAMA70)
    fp32 = ps.Workload(work.model, recipe="fp8-adam-fp32grad", global_batch=128, seq_len=8192)

    def zero_bytes(w):
        return {t.op: t.nbytes for t in ps.estimate(w, plan, cluster).traffic if t.strategy.startswith("ZeRO")}

    assert zero_bytes(work)["reduce-scatter"] * 2 == pytest.approx(zero_bytes(fp32)["reduce-scatter"])
    assert zero_bytes(work)["all-gather"] * 2 == pytest.approx(zero_bytes(fp32)["all-gather"])


def test_fp8_weights_replace_the_bf16_copy():
    # --fp8-param-gather: Transformer Engine's FP8 weights (rowwise + columnwise, 1 + 1 bytes) are the weights;
    # without it TE keeps both FP8 copies beside the bf16 weight.
    work, plan, cluster = _job(LLAMA70)
    own = ps.estimate(work, plan, cluster).memory
    copies = ps.estimate(ps.Workload(work.model, recipe="fp8-adam-fp32grad", global_batch=128, seq_len=8192),
                         plan, cluster).memory
    assert own.params < copies.params and own.params == pytest.approx(
        ps.estimate(ps.Workload(work.model, recipe="bf16-adam", global_batch=128, seq_len=8192), plan, cluster).memory.params)


def test_te_fp8_saves_linear_inputs_in_one_byte():
    # Under FP8 a TE linear keeps its input as cast (1 byte, columnwise only on Hopper); torchao's Float8Linear
    # (torchtitan) keeps the 16-bit input, so only Megatron-Core's activations shrink.
    work, plan, cluster = _job(LLAMA70)
    bf16 = ps.Workload(work.model, recipe="bf16-adam", global_batch=128, seq_len=8192)
    assert ps.estimate(work, plan, cluster).memory.activations < ps.estimate(bf16, plan, cluster).memory.activations
    a = ps.Workload(work.model, recipe="fp8-compute-fp32-adam", global_batch=128, seq_len=8192, stack="torchtitan")
    b = ps.Workload(work.model, recipe="bf16-compute-fp32-adam", global_batch=128, seq_len=8192, stack="torchtitan")
    tt = plan.with_(tp_overlap=False, schedule="1f1b", chunks=1)
    assert ps.estimate(a, tt, cluster).memory.activations == ps.estimate(b, tt, cluster).memory.activations
