"""DeepSpeed 2021's ZeRO-3 coordinator rules (deepspeed/runtime/zero/stage3.py, v0.3.13-v0.5.0), one rule a test,
on traces small enough to follow by hand. The published runs these rules predict are in test_step_time.py."""

from __future__ import annotations

import pytest

import parallelsel as ps
from parallelsel.course.zero3_timeline import (DEEPSPEED_2021, Piece, Zero3Config, coordinator_time, deepspeed_zero3_step,
                                      deepspeed_zero3_timeline)

BIG = 1e8          # above the persistence threshold and the prefetch bucket: gathered, one at a time
gather = lambda n: n / BIG       # noqa: E731  one second per BIG-element weight
reduce = lambda n: 2 * n / BIG   # noqa: E731


def test_the_next_weight_gathers_while_the_current_one_computes():
    # a is fetched on demand (1 s); b's prefetch runs beside a's 3 s of kernels; b then computes 3 s.
    t = coordinator_time([Piece("a", BIG, 3.0), Piece("b", BIG, 3.0)], gather, reduce)
    assert t.total == pytest.approx(1 + 3 + 3)
    assert t.calls == 2


def test_a_gather_longer_than_the_kernels_before_it_is_exposed():
    t = coordinator_time([Piece("a", BIG, 0.5), Piece("b", 4 * BIG, 1.0)], gather, reduce)
    assert t.total == pytest.approx(1 + 4 + 1)   # b's 4 s gather hides only a's 0.5 s


def test_reduce_scatter_is_never_hidden():
    # Fetching b synchronises the device, which waits for a's reduce-scatter: gather a, compute a (b's
    # gather beside it), the 2 s reduce-scatter with nothing to hide behind, compute b.
    trace = [Piece("a", BIG, 1.0, grads=True), Piece("b", BIG, 1.0)]
    assert coordinator_time(trace, gather, reduce).total == pytest.approx(1 + 1 + 2 + 1)


def test_small_tensors_stay_resident_and_reused_weights_are_kept():
    small = DEEPSPEED_2021.param_persistence_threshold / 2
    assert coordinator_time([Piece("bias", small, 1.0)], gather, reduce).gather == 0
    # a is used again after b: kept when b is within the reuse distance, gathered again when it is not.
    trace = [Piece("a", BIG, 1.0), Piece("b", BIG, 1.0), Piece("a", BIG, 1.0)]
    near = Zero3Config(5e7, 1e12, 2 * BIG, 1e5)
    far = Zero3Config(5e7, 1e12, BIG / 2, 1e5)
    assert coordinator_time(trace, gather, reduce, near).gathered == 2 * BIG
    assert coordinator_time(trace, gather, reduce, far).gathered == 3 * BIG


def test_no_prefetch_past_the_live_parameter_limit():
    trace = [Piece("a", BIG, 3.0), Piece("b", BIG, 3.0)]
    tight = Zero3Config(5e7, BIG, 1e9, 1e5)   # a alone fills the limit
    assert coordinator_time(trace, gather, reduce, tight).total == pytest.approx(1 + 3 + 1 + 3)


def test_recomputation_gathers_every_weight_again():
    # GPT-3's layers are 1.8e9 elements, beyond the reuse distance: without recomputation each weight is
    # gathered for forward and backward; with it, once more for the recomputed forward, except each
    # layer's last weight, still resident for its own backward.
    w = ps.Workload(ps.MODELS["gpt3-175b"], global_batch=64)
    c = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8)
    plain = deepspeed_zero3_timeline(w, ps.Plan(dp=64, zero=3), c)
    full = deepspeed_zero3_timeline(w, ps.Plan(dp=64, zero=3, recompute="full"), c)
    assert 1.25 < full.gathered / plain.gathered < 1.5


@pytest.mark.parametrize("plan", [ps.Plan(dp=8, tp=8, zero=3), ps.Plan(dp=64, zero=1)])
def test_rejects_plans_outside_its_scope(plan):
    w = ps.Workload(ps.MODELS["gpt2-1.5b"], global_batch=64)
    with pytest.raises(ValueError, match="plan="):
        deepspeed_zero3_step(w, plan, ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8))
