"""Step timelines: lanes that add up to the estimate, overlap only where the model says it happens."""

import pytest

import parallelsel as ps
from parallelsel.course.steptrace import step_trace

MODEL = ps.Transformer(layers=32, hidden=2560, heads=32, seq_len=2048, vocab=50304)
WORK = ps.Workload(MODEL, global_batch=64)
CLUSTER = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=2, gpus_per_node=8)
PLANS = {
    "dp": ps.Plan(dp=16, micro_batch=1, recompute="selective"),
    "fsdp": ps.Plan(dp=16, zero=3, micro_batch=1, recompute="selective"),
    "zero1": ps.Plan(dp=16, zero=1, micro_batch=2, recompute="selective"),
    "tp": ps.Plan(dp=4, tp=4, micro_batch=2, recompute="selective"),
    "pp": ps.Plan(dp=4, pp=4, micro_batch=1, recompute="selective"),
    "3d": ps.Plan(dp=2, tp=2, pp=4, micro_batch=1, recompute="selective", schedule="interleaved", chunks=2),
    # Critical-path traffic partly hidden (Traffic.hidden): TP overlap under its GEMMs, the CP ring under attention.
    "tp-overlap": ps.Plan(dp=4, tp=4, sp=True, tp_overlap=True, micro_batch=2, recompute="selective"),
    "cp": ps.Plan(dp=4, cp=4, zero=1, micro_batch=1, recompute="selective"),
}


@pytest.mark.parametrize("name", PLANS)
def test_trace_adds_up_to_the_estimate(name):
    est = ps.estimate(WORK, PLANS[name], CLUSTER)
    if name in ("tp-overlap", "cp"):
        assert any(t.hidden > 0 for t in est.traffic if not t.overlappable), name
    trace = step_trace(est)
    assert trace.total == pytest.approx(est.step.total, rel=1e-9)
    busy = sum(s.duration for s in trace.lane("compute") if s.kind in ("forward", "backward"))
    assert busy == pytest.approx(est.step.compute, rel=1e-9)
    assert trace.exposed == pytest.approx(est.step.communication, rel=1e-9)


@pytest.mark.parametrize("name", PLANS)
def test_compute_lane_is_one_stream(name):
    lane = step_trace(ps.estimate(WORK, PLANS[name], CLUSTER)).lane("compute")
    for a, b in zip(lane, lane[1:]):
        assert b.start == pytest.approx(a.end, abs=1e-12)


@pytest.mark.parametrize("name", PLANS)
def test_overlapped_communication_lies_under_its_own_pass(name):
    trace = step_trace(ps.estimate(WORK, PLANS[name], CLUSTER), blocks=3)
    passes = {}
    for s in trace.lane("compute"):
        if s.kind in ("forward", "backward"):
            lo, hi = passes.get((s.kind, s.microbatch), (s.start, s.end))
            passes[(s.kind, s.microbatch)] = (min(lo, s.start), max(hi, s.end))
    for s in trace.lane("comm"):
        if s.kind == "overlapped":
            spans = [v for (kind, mb), v in passes.items() if mb == s.microbatch]
            assert any(lo - 1e-12 <= s.start and s.end <= hi + 1e-12 for lo, hi in spans), s


def test_dp_last_bucket_is_exposed_after_the_backward():
    # Li et al. 2020 §3.2.3: the last gradient bucket is ready only when the backward ends.
    est = ps.estimate(WORK, PLANS["dp"], CLUSTER)
    trace = step_trace(est)
    (item,) = [t for t in est.traffic if t.strategy == "DP"]
    last_backward = max(s.end for s in trace.lane("compute") if s.kind == "backward")
    tail = sum(s.duration for s in trace.lane("compute") if s.kind == "wait" and s.start >= last_backward - 1e-12)
    assert tail >= item.time / item.units * (1 - 1e-9)


def test_tp_waits_follow_every_block_of_every_pass():
    est = ps.estimate(WORK, PLANS["tp"], CLUSTER)
    m = PLANS["tp"].microbatches(WORK)
    trace = step_trace(est, blocks=5)
    waits = [s for s in trace.lane("compute") if s.kind == "wait" and s.strategy == "TP"]
    assert len(waits) == 5 * 2 * m


def test_pipeline_bubble_sits_at_both_ends():
    trace = step_trace(ps.estimate(WORK, PLANS["pp"], CLUSTER))
    lane = trace.lane("compute")
    assert lane[0].kind == lane[-1].kind == "bubble"
    assert lane[0].duration + lane[-1].duration == pytest.approx(trace.bubble)


def test_bad_input():
    with pytest.raises(ValueError):
        step_trace("not an estimate")
    with pytest.raises(ValueError):
        step_trace(ps.estimate(WORK, PLANS["dp"], CLUSTER), blocks=0)
