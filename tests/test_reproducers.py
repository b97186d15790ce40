"""Fuzz and probe defects of issue 33, each with its reproducer: refused with the rule named, or answered right.

Plus a property test over plans with pipelines, schedules, chunks and batches that do not split: whatever
is accepted computes finite, non-negative times and bytes and an MFU of at most 1.
"""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import parallelsel as ps
from parallelsel.core import pipeline, reliability
from parallelsel.core._check import ParallelselError
from parallelsel.core.plan import parse_plan
from parallelsel.render.reasons import read_plan

A100 = ps.DEVICES["a100-80gb"]
TINY = ps.Transformer(layers=4, hidden=256, heads=4, seq_len=128, vocab=1000)


@pytest.mark.parametrize("f,b,w", [(1.0, 2.0, 5.0), (1.0, 2.0, 2.0), (2.0, 1.0, 1.5), (1.0, 1.0, 1.01)])
def test_zb_h1_closed_form_refuses_weight_above_forward_or_backward_instead_of_a_wrong_bubble(f, b, w):
    with pytest.raises(ValueError, match=r"weight=.*min\(forward, backward\)"):
        pipeline.zb_h1_bubble_time(4, f, b, w)
    # What the event simulator measures there: (p-1) max(T_F, T_B), above what the form would say.
    tl = pipeline.simulate(pipeline.schedule("zb-h1", 4, 8), forward=f, backward=b, weight=w)
    assert max(tl.idle) == pytest.approx(3 * max(f, b))


@pytest.mark.parametrize("f,b", [(1.0, 2.0), (2.0, 1.0), (3.0, 3.0)])
def test_zb_h1_closed_form_agrees_with_the_simulator_up_to_its_edge(f, b):
    w = min(f, b)  # the edge of validity (Qi et al. 2024, Figure 3 has T_F = T_B = T_W)
    tl = pipeline.simulate(pipeline.schedule("zb-h1", 4, 8), forward=f, backward=b, weight=w)
    assert tl.idle == pytest.approx([pipeline.zb_h1_bubble_time(4, f, b, w)] * 4)


def test_a_batch_that_does_not_split_counts_only_the_sequences_it_times():
    """B=7 with micro-batch 4 is timed as one micro-batch of 4: its throughput is that of B=4, not 7/4 of it."""
    cl = ps.Cluster(A100, nodes=1, gpus_per_node=1)
    m = ps.MODELS["gpt2-1.5b"]
    odd = ps.estimate(ps.Workload(m, global_batch=7), ps.Plan(micro_batch=4), cl)
    even = ps.estimate(ps.Workload(m, global_batch=4), ps.Plan(micro_batch=4), cl)
    assert [r.code for r in odd.reasons][:1] == ["batch_not_divisible"]
    assert odd.step.total == pytest.approx(even.step.total)
    assert odd.step.tokens_per_s == pytest.approx(even.step.tokens_per_s)
    assert odd.step.mfu == pytest.approx(even.step.mfu) and odd.step.mfu <= A100.gemm_efficiency
    flat = ps.estimate(ps.Workload(m, global_batch=7), ps.Plan(micro_batch=4), cl, efficiency=0.5)
    assert flat.step.mfu <= 0.5 + 1e-12


def test_search_with_pinned_chunks_never_ranks_a_plan_whose_stages_exceed_the_layers():
    w = ps.Workload(TINY, global_batch=8)
    r = ps.search(w, ps.Cluster(A100, nodes=1, gpus_per_node=8), fixed={"dp": 2, "chunks": 2}, top=1000)
    assert r.results and all(x.estimate.fits and not x.estimate.reasons for x in r.results)
    assert r.excluded.get("stages_exceed_layers")  # PP4 x 2 chunks = 8 virtual stages > 4 layers, counted
    assert sum(r.excluded.values()) + len(r.results) == r.considered


def test_search_pins_that_leave_no_plan_are_an_error_naming_the_rule():
    w = ps.Workload(TINY, global_batch=8)
    with pytest.raises(ValueError, match=r"interleaving needs a pipeline.*4 GPUs"):
        ps.search(w, ps.Cluster(A100, nodes=1, gpus_per_node=4), fixed={"tp": 2, "dp": 2, "chunks": 2})
    with pytest.raises(ValueError, match=r"interleaving needs a pipeline"):
        ps.search(w, ps.Cluster(A100, nodes=1, gpus_per_node=4), fixed={"pp": 1, "chunks": 2})


def test_checkpoint_bytes_takes_a_recipe_key_and_refuses_an_unknown_one():
    r = ps.RECIPES["bf16-adam"]
    assert reliability.checkpoint_bytes(1e9, "bf16-adam") == reliability.checkpoint_bytes(1e9, r)
    # Mixed precision with Adam keeps bf16 weights (2 B) + fp32 master, momentum, variance (12 B): Rajbhandari et al. 2020 §3.1.
    assert reliability.checkpoint_bytes(1e9, r) == pytest.approx(14e9)
    with pytest.raises(ValueError, match=r"recipe='nope'"):
        reliability.checkpoint_bytes(1e9, "nope")


@pytest.mark.parametrize("label,parts", [
    ("DP8·DP4", ("'DP8'", "'DP4'", "dp")),
    ("DP8·selective·full", ("'selective'", "'full'", "recompute")),
    ("DP8 · TP2 · interleaved×2 · gpipe", ("'interleaved×2'", "'gpipe'", "schedule")),
    ("ZeRO-1 · FSDP", ("'ZeRO-1'", "'FSDP'", "zero")),
])
def test_contradictory_plan_labels_are_refused_naming_both_parts(label, parts):
    for read in (parse_plan, read_plan):
        with pytest.raises(ValueError) as e:
            read(label)
        assert all(p in str(e.value) for p in parts), str(e.value)


def test_worded_contradiction_names_the_words_written():
    with pytest.raises(ValueError, match="'选择性重算' and '完全重算' both set recompute"):
        read_plan("DP8 · 选择性重算 · 完全重算")
    assert read_plan("DP8 · DP8").dp == 8  # a repeated part that agrees is no contradiction


def test_calibration_refuses_a_plan_that_cannot_run_and_keeps_the_assumed_links():
    w = ps.Workload(ps.MODELS["gpt2-1.5b"], global_batch=64)
    cl = ps.Cluster(A100, nodes=1, gpus_per_node=8)
    with pytest.raises(ValueError, match=r"cannot run on this cluster \(cluster_too_small"):
        ps.calibrate(ps.estimate(w, ps.Plan(dp=16, micro_batch=4), cl), measured_step=1.0)
    e = ps.estimate(w, ps.Plan(dp=8, micro_batch=8), cl)
    assert cl.assumed == ("intra", "inter")
    assert ps.calibrate(e, measured_step=2 * e.step.total).cluster.assumed == cl.assumed


def _cli(*args):
    return subprocess.run([sys.executable, "-c", "import sys; from parallelsel.render.cli import main; sys.exit(main())", *args],
                          capture_output=True, text=True, timeout=120)


def test_cli_calibration_on_a_plan_that_cannot_run_is_one_line_and_exit_2():
    p = _cli("plan", "--model", "llama2-7b", "--gpus", "8", "--measured-plan", "DP16", "--measured-step", "10")
    assert p.returncode == 2 and "cannot run on this cluster" in p.stderr and "Traceback" not in p.stderr


def test_cli_memory_refuses_a_schedule_without_a_pipeline():
    p = _cli("memory", "--model", "llama2-7b", "--gpus", "8", "--schedule", "interleaved", "--chunks", "2")
    assert p.returncode == 2 and "--schedule interleaved --chunks 2: applies only to a pipeline" in p.stderr
    assert _cli("memory", "--model", "llama2-7b", "--gpus", "8", "--pp", "2", "--schedule", "interleaved",
                "--chunks", "2").returncode == 0


def _finite_nonneg(x) -> bool:
    return isinstance(x, float | int) and math.isfinite(x) and x >= 0


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layers=st.sampled_from([2, 4, 6, 8]), heads=st.sampled_from([2, 4, 8]), batch=st.integers(1, 70),
       dp=st.sampled_from([1, 2, 3, 4]), tp=st.sampled_from([1, 2, 4]), pp=st.sampled_from([1, 2, 4]),
       mb=st.integers(1, 8), zero=st.integers(0, 3), sched=st.sampled_from(["1f1b", "interleaved", "zb-h1", "gpipe"]),
       chunks=st.sampled_from([1, 2, 3]), recompute=st.sampled_from(["none", "selective", "full"]),
       eff=st.one_of(st.none(), st.floats(0.05, 1.0)), gpn=st.sampled_from([1, 2, 4, 8]))
def test_accepted_inputs_compute_finite_nonnegative_times_and_bytes_and_mfu_at_most_one(
        layers, heads, batch, dp, tp, pp, mb, zero, sched, chunks, recompute, eff, gpn):
    try:
        model = ps.Transformer(layers=layers, hidden=64 * heads, heads=heads, seq_len=256, vocab=4096)
        plan = ps.Plan(dp=dp, tp=tp, pp=pp, zero=zero, micro_batch=mb, recompute=recompute, schedule=sched,
                       chunks=chunks if sched == "interleaved" else 1)
        cl = ps.Cluster(A100, nodes=max(1, plan.gpus // gpn), gpus_per_node=gpn)
        e = ps.estimate(ps.Workload(model, global_batch=batch), plan, cl, efficiency=eff)
    except ValueError:
        event("refused")
        return
    event("computed, fits" if e.fits else "computed, does not fit")
    s = e.step
    for x in (s.compute, s.communication, s.bubble, s.total, s.tokens_per_s, s.mfu, *e.memory.as_dict().values(),
              *(it.time for it in e.traffic)):
        assert _finite_nonneg(x), x
    assert s.mfu <= 1.0, (plan, batch, s.mfu)
    assert s.mfu <= (eff if eff is not None else A100.gemm_efficiency) + 1e-9


def test_cli_why_with_a_contradictory_label_is_refused_naming_the_parts():
    p = _cli("plan", "--model", "llama2-7b", "--gpus", "8", "--why", "DP8·DP4")
    assert p.returncode == 2 and "'DP8' and 'DP4' both set dp" in p.stderr and "Traceback" not in p.stderr
