"""Pipeline schedules and simulator against the closed forms (Narayanan et al. 2021; Qi et al. 2024)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parallelsel import pipeline as pl

TOL = 1e-9


# ---------------------------------------------------------------------------- simulator == closed form

GRID = [(p, m) for p in (1, 2, 3, 4, 8) for m in (1, 2, 3, 5, 8, 16, 33)]


@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
@pytest.mark.parametrize("p,m", GRID)
def test_uniform_gpipe_1f1b_match_closed_form(kind, p, m):
    if kind == "1f1b" and m < p:  # torch's Schedule1F1B refuses these (tests/test_pipeline_torch.py)
        with pytest.raises(ValueError, match=rf"microbatches={m}: must be >= stages={p}"):
            pl.schedule(kind, p, m)
        return
    tl = pl.simulate(pl.schedule(kind, p, m), forward=1.0, backward=2.0)
    assert abs(tl.bubble_fraction - pl.bubble_fraction(p, m)) < TOL
    assert abs(tl.bubble_overhead - pl.bubble_overhead(p, m)) < TOL
    # per-stage idle is (p-1)(t_f+t_b) (Narayanan et al. 2021 §2.2.1)
    np.testing.assert_allclose(tl.idle, (p - 1) * 3.0, rtol=0, atol=TOL)


@pytest.mark.parametrize("v", [2, 3, 4])
@pytest.mark.parametrize("p", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_uniform_interleaved_matches_closed_form(p, v, k):
    m = k * p
    tl = pl.simulate(pl.schedule("interleaved", p, m, chunks=v), forward=1.5, backward=2.5)
    assert abs(tl.bubble_fraction - pl.bubble_fraction(p, m, v)) < TOL
    assert abs(tl.bubble_overhead - pl.bubble_overhead(p, m, v)) < TOL
    np.testing.assert_allclose(tl.idle, (p - 1) * 4.0 / v, rtol=0, atol=TOL)


def test_interleaved_one_chunk_keeps_its_warm_up():
    # torch's ScheduleInterleaved1F1B with one chunk warms up with 2(p-1-r) forwards (two per hop),
    # 1F1B with p-r: the same makespan, more activations held on every rank but the last.
    p, m = 4, 8
    inter = pl.simulate(pl.schedule("interleaved", p, m, chunks=1))
    one = pl.simulate(pl.schedule("1f1b", p, m))
    assert inter.makespan == pytest.approx(one.makespan, abs=TOL)
    assert list(inter.peak_inflight) == [min(2 * (p - 1 - r) + 1, m) for r in range(p)]
    assert list(one.peak_inflight) == [p - r for r in range(p)]


def test_closed_forms_known_values():
    assert pl.bubble_fraction(4, 8) == pytest.approx(3 / 11, abs=TOL)
    assert pl.bubble_overhead(4, 8) == pytest.approx(3 / 8, abs=TOL)
    assert pl.bubble_overhead(8, 32, 4) == pytest.approx(7 / 128, abs=TOL)
    o = pl.bubble_overhead(8, 32, 4)
    assert pl.bubble_fraction(8, 32, 4) == pytest.approx(o / (1 + o), abs=TOL)


@pytest.mark.parametrize("p", [2, 3, 4, 8])
@pytest.mark.parametrize("mult", [1, 2, 3])
def test_zb_h1_bubble_is_a_third_of_1f1b(p, mult):
    m = mult * p
    t = 1.0
    zb = pl.simulate(pl.schedule("zb-h1", p, m), forward=t, backward=t, weight=t)
    one = pl.simulate(pl.schedule("1f1b", p, m), forward=t, backward=t, weight=t)
    np.testing.assert_allclose(zb.idle, pl.zb_h1_bubble_time(p, t, t, t), rtol=0, atol=TOL)
    np.testing.assert_allclose(one.idle, pl.onef1b_bubble_time(p, t, t, t), rtol=0, atol=TOL)
    assert pl.zb_h1_bubble_time(p, t, t, t) == pytest.approx((p - 1) * t, abs=TOL)
    assert pl.onef1b_bubble_time(p, t, t, t) == pytest.approx(3 * (p - 1) * t, abs=TOL)
    # same peak memory as 1F1B: p micro-batches, and no stage holds more
    assert zb.peak_inflight.max() == one.peak_inflight.max() == p


@pytest.mark.parametrize("f,b,w", [(1.0, 2.0, 0.5), (2.0, 1.0, 1.0), (1.0, 2.0, 1.0), (1.5, 1.0, 0.25)])
@pytest.mark.parametrize("p,m", [(4, 8), (8, 16), (3, 6)])
def test_zb_h1_bubble_unequal_costs(f, b, w, p, m):
    zb = pl.simulate(pl.schedule("zb-h1", p, m), forward=f, backward=b, weight=w)
    one = pl.simulate(pl.schedule("1f1b", p, m), forward=f, backward=b, weight=w)
    np.testing.assert_allclose(zb.idle, pl.zb_h1_bubble_time(p, f, b, w), rtol=0, atol=TOL)
    np.testing.assert_allclose(one.idle, pl.onef1b_bubble_time(p, f, b, w), rtol=0, atol=TOL)


def test_zb_h1_default_split_is_half_half():
    a = pl.simulate(pl.schedule("zb-h1", 4, 8), forward=1.0, backward=2.0)
    b = pl.simulate(pl.schedule("zb-h1", 4, 8), forward=1.0, backward=1.0, weight=1.0)
    np.testing.assert_array_equal(a.end, b.end)


def test_weight_folds_into_b_for_unsplit_kinds():
    a = pl.simulate(pl.schedule("1f1b", 4, 8), forward=1.0, backward=1.0, weight=1.0)
    b = pl.simulate(pl.schedule("1f1b", 4, 8), forward=1.0, backward=2.0)
    np.testing.assert_array_equal(a.end, b.end)
    assert not (a.kind == "W").any()


# ---------------------------------------------------------------------------- memory

@pytest.mark.parametrize("p,m", [(4, 8), (4, 2), (8, 8), (1, 5), (6, 13)])
def test_peak_inflight(p, m):
    gp = pl.simulate(pl.schedule("gpipe", p, m))
    assert list(gp.peak_inflight) == [m] * p
    if m >= p:  # torch's Schedule1F1B needs m >= p
        one = pl.simulate(pl.schedule("1f1b", p, m))
        assert one.peak_inflight[0] == min(p, m)
        assert list(one.peak_inflight) == [min(p - s, m) for s in range(p)]


def test_interleaved_peak_activations_in_stage_units():
    p, m, v = 4, 8, 2
    tl = pl.simulate(pl.schedule("interleaved", p, m, chunks=v))
    # Megatron's warm-up on stage 0: 2(p-1) + (v-1)p forwards, plus one in the first steady step
    assert tl.peak_inflight[0] == 2 * (p - 1) + (v - 1) * p + 1
    np.testing.assert_allclose(tl.peak_activations, tl.peak_inflight / v)


# ---------------------------------------------------------------------------- schedule structure

@pytest.mark.parametrize("kind,v", [("gpipe", 1), ("1f1b", 1), ("interleaved", 2), ("interleaved", 3), ("zb-h1", 1),
                                    ("looped-bfs", 2), ("interleaved-zb", 2), ("zbv", 2), ("dualpipev", 2)])
@pytest.mark.parametrize("p,m", [(4, 8), (2, 6), (3, 12)])
def test_every_stage_runs_every_pass_once(kind, v, p, m):
    # every (micro-batch, chunk) on every rank: one F, then either one full B or one I and one W after it
    s = pl.schedule(kind, p, m, chunks=v)
    for ops in s.ops:
        seen = [(o.kind, o.microbatch, o.chunk) for o in ops]
        assert len(seen) == len(set(seen))
        for b in range(m):
            for c in range(v):
                got = [k for k, bb, cc in seen if (bb, cc) == (b, c)]
                assert got in (["F", "B"], ["F", "I", "W"]), (b, c, got)


def test_1f1b_order_small():
    s = pl.schedule("1f1b", 3, 4)
    assert [" ".join(map(str, ops)) for ops in s.ops] == [
        "F0 F1 F2 B0 F3 B1 B2 B3",
        "F0 F1 B0 F2 B1 F3 B2 B3",
        "F0 B0 F1 B1 F2 B2 F3 B3",
    ]


def test_deps_rule():
    s = pl.schedule("interleaved", 4, 8, chunks=2)
    # virtual stage 4 = chunk 1 of stage 0; its forward waits for virtual stage 3 = chunk 0 of stage 3
    assert s.deps(0, pl.Op("F", 5, 1)) == ((3, pl.Op("F", 5, 0)),)
    # last virtual stage 7 = chunk 1 of stage 3: B waits for its own F
    assert s.deps(3, pl.Op("B", 2, 1)) == ((3, pl.Op("F", 2, 1)),)
    assert s.deps(3, pl.Op("B", 2, 0)) == ((0, pl.Op("B", 2, 1)),)
    assert s.deps(0, pl.Op("F", 0, 0)) == ()
    z = pl.schedule("zb-h1", 2, 2)
    assert z.deps(1, pl.Op("W", 1)) == ((1, pl.Op("I", 1)),)
    assert z.deps(0, pl.Op("I", 1)) == ((1, pl.Op("I", 1)),)
    # V layout: chunk 1 of rank 0 is the last stage 2p-1; chunk 0 of rank 1 is stage 1, chunk 1 stage 2
    zv = pl.schedule("zbv", 2, 4, chunks=2)
    assert zv.virtual_stage(0, 1) == 3 and zv.place(2) == (1, 1)
    assert zv.deps(1, pl.Op("F", 0, 1)) == ((1, pl.Op("F", 0, 0)),)
    assert zv.deps(0, pl.Op("F", 0, 1)) == ((1, pl.Op("F", 0, 1)),)
    # DualPipeV mixes full and split backwards: an I waits for whichever backward the next stage runs
    d = pl.schedule("dualpipev", 2, 4, chunks=2)
    kinds_on = {(s_, o.chunk, o.microbatch): o.kind for s_, ops in enumerate(d.ops) for o in ops if o.kind in "BI"}
    for (s_, c, mb), k in kinds_on.items():
        g = d.virtual_stage(s_, c)
        if g < 3:
            ns, nc = d.place(g + 1)
            assert d.deps(s_, pl.Op(k, mb, c)) == ((ns, pl.Op(kinds_on[ns, nc, mb], mb, nc)),)


def test_timeline_rows_respect_dependencies():
    s = pl.schedule("interleaved", 4, 8, chunks=2)
    tl = pl.simulate(s, p2p=0.25)
    done = {(st_, op): (a, b) for st_, op, a, b in tl.rows()}
    for (st_, op), (a, b) in done.items():
        for ds, dop in s.deps(st_, op):
            need = done[(ds, dop)][1] + (0.25 if ds != st_ else 0.0)
            assert a >= need - TOL
    for stage in range(4):
        rows = tl.rows(stage)
        assert all(r0[3] <= r1[2] + TOL for r0, r1 in zip(rows, rows[1:]))


def test_deadlock_is_reported():
    good = pl.schedule("1f1b", 2, 2)
    # stage 1 runs B0 before F0: its B waits for its own F, which comes later
    bad_ops = (good.ops[0], (pl.Op("B", 0), pl.Op("F", 0), pl.Op("F", 1), pl.Op("B", 1)))
    bad = pl.Schedule("1f1b", 2, 2, 1, bad_ops)
    with pytest.raises(RuntimeError, match="deadlock: stage"):
        pl.simulate(bad)


# ---------------------------------------------------------------------------- imbalance and latency

@pytest.mark.parametrize("kind", ["gpipe", "1f1b", "zb-h1"])
def test_straggler_increases_bubble(kind):
    p, m = 4, 8
    base = pl.simulate(pl.schedule(kind, p, m))
    fwd = [1.0] * p
    bwd = [2.0] * p
    fwd[2], bwd[2] = 1.5, 3.0
    slow = pl.simulate(pl.schedule(kind, p, m), forward=fwd, backward=bwd)
    assert slow.bubble_fraction > base.bubble_fraction
    # the slow stage cannot start before stages 0..1 forward micro-batch 0 and runs m(1.5+3.0) of work;
    # without a split backward, stages 1..0 must still run the last backward after it
    tail = 0.0 if kind == "zb-h1" else 2 * 2.0
    assert slow.makespan >= 2 * 1.0 + m * (1.5 + 3.0) + tail - TOL


@pytest.mark.parametrize("p,m", [(2, 4), (4, 3), (4, 8), (8, 16)])
def test_gpipe_p2p_adds_two_hops_per_stage(p, m):
    # GPipe: forwards on stage s are contiguous from s(t_f+d); backwards are contiguous on the last
    # stage and reach stage 0 after p-1 hops of t_b+d, so latency adds exactly 2(p-1)d.
    d = 0.3
    base = pl.simulate(pl.schedule("gpipe", p, m)).makespan
    assert pl.simulate(pl.schedule("gpipe", p, m), p2p=d).makespan == pytest.approx(base + 2 * (p - 1) * d, abs=TOL)


@pytest.mark.parametrize("kind,v", [("1f1b", 1), ("interleaved", 2), ("zb-h1", 1)])
def test_p2p_latency_is_monotone_and_at_least_two_hops(kind, v):
    p, m = 4, 8
    spans = [pl.simulate(pl.schedule(kind, p, m, chunks=v), p2p=d).makespan for d in (0.0, 0.1, 0.2, 0.5)]
    assert spans == sorted(spans) and spans[0] < spans[-1]
    # micro-batch 0's forward and the last backward each cross p-1 stage boundaries
    assert spans[-1] >= spans[0] + 2 * (p - 1) * 0.5 - TOL


# ---------------------------------------------------------------------------- errors

@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: pl.schedule("gpipe", 0, 4), r"stages=0: must be an integer >= 1"),
        (lambda: pl.schedule("gpipe", 2.5, 4), r"stages=2.5: must be an integer >= 1"),
        (lambda: pl.schedule("1f1b", 4, 0), r"microbatches=0: must be an integer >= 1"),
        (lambda: pl.schedule("1f1b", 4, "8"), r"microbatches='8': must be an integer >= 1"),
        (lambda: pl.schedule("pipedream", 4, 8), r"kind='pipedream': must be one of"),
        (lambda: pl.schedule("interleaved", 4, 8, chunks=0), r"chunks=0: must be an integer >= 1"),
        (lambda: pl.schedule("1f1b", 4, 8, chunks=2), r"chunks=2: must be 1 for kind='1f1b'"),
        (lambda: pl.schedule("interleaved", 4, 9, chunks=2), r"microbatches=9: must be a multiple of the number of rounds max\(1, m // stages\) = 2"),
        (lambda: pl.schedule("1f1b", 4, 3), r"microbatches=3: must be >= stages=4 for kind='1f1b'"),
        (lambda: pl.schedule("zbv", 4, 8), r"chunks=1: must be 2 for kind='zbv'"),
        (lambda: pl.schedule("dualpipev", 4, 7, chunks=2), r"microbatches=7: must be >= 2 x stages = 8 for kind='dualpipev'"),
        (lambda: pl.schedule("zb-h1", 4, 8, chunks=2), r"chunks=2: must be 1 for kind='zb-h1'"),
        (lambda: pl.schedule("1f1b", 2, 2).rank_order(2), r"rank=2: must be an integer >= 0 and <= 1"),
        (lambda: pl.Schedule.from_rank_orders([[(1, "F", 0)], []]), r"orders\[0\]: stage 1 is not on rank 0"),
        (lambda: pl.simulate(pl.schedule("1f1b", 2, 2)).to_chrome_trace(time_unit=0), r"time_unit=0: must be a finite number > 0"),
        (lambda: pl.simulate(pl.schedule("1f1b", 4, 8), forward=-1), r"forward=-1: must be a finite number > 0"),
        (lambda: pl.simulate(pl.schedule("1f1b", 4, 8), backward=math.nan), r"backward=nan: must be a finite number > 0"),
        (lambda: pl.simulate(pl.schedule("1f1b", 4, 8), weight=-0.5), r"weight=-0.5: must be a finite number >= 0"),
        (lambda: pl.simulate(pl.schedule("1f1b", 4, 8), p2p=math.inf), r"p2p=inf: must be a finite number >= 0"),
        (lambda: pl.simulate(pl.schedule("1f1b", 4, 8), forward=[1, 1, 1]), r"forward=\[1, 1, 1\]: has 3 entries; must have one per stage \(stages=4\)"),
        (lambda: pl.simulate(pl.schedule("1f1b", 2, 8), forward=[1, math.nan]), r"forward\[1\]=nan: must be a finite number > 0"),
        (lambda: pl.simulate(pl.schedule("1f1b", 2, 8), forward="fast"), r"forward='fast': must be a number > 0 or a sequence"),
        (lambda: pl.simulate("1f1b"), r"schedule='1f1b': must be a Schedule"),
        (lambda: pl.bubble_fraction(0, 4), r"stages=0"),
        (lambda: pl.bubble_overhead(4, 4, chunks=0), r"chunks=0"),
        (lambda: pl.zb_h1_bubble_time(4, 1, 0, 1), r"backward=0: must be a finite number > 0"),
    ],
)
def test_bad_input_names_parameter_value_and_rule(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---------------------------------------------------------------------------- properties

kinds = st.sampled_from(list(pl.KINDS))


@st.composite
def schedules(draw):
    kind = draw(kinds)
    p = draw(st.integers(1, 8))
    v = {"interleaved": draw(st.integers(1, 4)), "looped-bfs": draw(st.integers(1, 3)),
         "interleaved-zb": draw(st.integers(1, 3)), "zbv": 2, "dualpipev": 2}.get(kind, 1)
    least = {"1f1b": p, "dualpipev": 2 * p}.get(kind, 1)
    m = draw(st.integers(least, least + 20))
    if kind in ("interleaved", "interleaved-zb", "zb-h1"):
        while m % max(1, m // p):  # torch's rounds rule
            m -= 1
    return pl.schedule(kind, p, m, chunks=v)


costs = st.floats(0.1, 10.0, allow_nan=False)


@settings(max_examples=50, deadline=None)
@given(schedules(), st.data())
def test_bubble_fraction_in_range_and_makespan_covers_busiest_stage(sched, data):
    p = sched.stages
    f = data.draw(st.lists(costs, min_size=p, max_size=p))
    b = data.draw(st.lists(costs, min_size=p, max_size=p))
    d = data.draw(st.floats(0.0, 1.0))
    tl = pl.simulate(sched, forward=f, backward=b, p2p=d)
    assert 0.0 <= tl.bubble_fraction < 1.0
    assert tl.makespan >= tl.busy.max() - TOL
    # a full B costs `backward`; a split one halves it between I and W: every rank's work is m(f + b)
    np.testing.assert_allclose(tl.busy, sched.microbatches * (np.array(f) + np.array(b)), rtol=1e-9)
    assert (tl.idle >= -TOL).all()


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(["gpipe", "1f1b", "interleaved"]), st.integers(1, 8), st.integers(1, 6), st.integers(1, 3))
def test_more_microbatches_never_raise_bubble_fraction(kind, p, k, v):
    if kind != "interleaved":
        v = 1
        m1, m2 = k + (p if kind == "1f1b" else 0), k + 1 + (p if kind == "1f1b" else 0)
    else:
        m1, m2 = k * p, (k + 1) * p
    a = pl.simulate(pl.schedule(kind, p, m1, chunks=v)).bubble_fraction
    b = pl.simulate(pl.schedule(kind, p, m2, chunks=v)).bubble_fraction
    assert b <= a + TOL
    assert pl.bubble_fraction(p, m2, v) <= pl.bubble_fraction(p, m1, v)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 64), st.integers(1, 512), st.integers(1, 8))
def test_closed_forms_agree_and_are_bounded(p, m, v):
    o = pl.bubble_overhead(p, m, v)
    f = pl.bubble_fraction(p, m, v)
    assert 0.0 <= f < 1.0
    assert f == pytest.approx(o / (1 + o), rel=1e-12, abs=1e-15)


# ---------------------------------------------------------------------------- speed and docs

def test_large_interleaved_matches_closed_form():
    # Its speed is a `make bench` row (simulate: interleaved p=64 m=512 chunks=2), not a timed test.
    tl = pl.simulate(pl.schedule("interleaved", 64, 512, chunks=2))
    assert abs(tl.bubble_fraction - pl.bubble_fraction(64, 512, 2)) < TOL


# ---------------------------------------------------------------------------- charts

def test_charts_render_svg_with_measured_numbers():
    from parallelsel.render import pipeline_charts as pc

    tl = pl.simulate(pl.schedule("1f1b", 4, 8))
    svg = pc.gantt(tl, salt="t-gantt")
    assert svg.startswith("<svg") and "1F1B，p=4，m=8：气泡占比 27.3%" in svg and "段 3" in svg
    assert "前向 F" in svg and "反向 B" in svg
    big = pc.gantt(pl.simulate(pl.schedule("gpipe", 32, 40)), title="大", salt="t-big", xlabel="时间（秒）")
    assert "段 31" in big and "时间（秒）" in big
    assert pc.bubble_curve([2, 4], [1, 4, 8], salt="t-curve").startswith("<svg")
    comp = pc.schedule_comparison(4, 8, 2, salt="t-comp")
    assert "峰值在途激活" in comp and "ZB-H1" in comp and "权重梯度 W" in comp
    strag = pc.straggler(4, 8, 2, 1.5, salt="t-strag")
    assert "个百分点" in strag and "段 2 慢 1.5 倍" in strag


def test_v_shaped_chart_names_the_stages_each_rank_holds():
    from parallelsel.render import pipeline_charts as pc

    tls = pc.comparison_timelines(4, 8, 2, kinds=("zbv", "dualpipev"))
    svg = pc.timelines_chart(tls, salt="t-v", title="V")
    # rank r holds stages r and 2p-1-r: the first and the last stage share rank 0
    for label in ("卡 0（段 0、7）", "卡 3（段 3、4）", "ZBV（V 形）", "DualPipeV（V 形）", "输入梯度 I"):
        assert label in svg, label
    bare = pc.timelines_chart(tls, salt="t-v2", title="V", labels=False)
    assert bare.count("<text") < svg.count("<text")  # no micro-batch numbers in the blocks
    base, slow = pc.straggler_timelines(4, 8, 2, 1.5)
    assert slow.makespan > base.makespan and base.makespan == pl.simulate(pl.schedule("1f1b", 4, 8)).makespan


def test_trace_links_carry_each_timeline_as_chrome_trace():
    import base64
    import json
    import re

    from parallelsel.render import pipeline_charts as pc

    a = pl.simulate(pl.schedule("1f1b", 2, 4))
    b = pl.simulate(pl.schedule("1f1b", 2, 4), forward=[1.0, 2.0])
    html = pc.trace_links([a, b], ["uniform", "slow"], prefix="x-")
    links = re.findall(r'<a download="([^"]+)" href="data:application/json;base64,([^"]+)">([^<]+)</a>', html)
    assert [(n, label) for n, _, label in links] == [("x-1f1b-p2-m4-1.json", "uniform"), ("x-1f1b-p2-m4-2.json", "slow")]
    assert [json.loads(base64.b64decode(d)) for _, d, _ in links] == [json.loads(a.to_chrome_trace()), json.loads(b.to_chrome_trace())]
    assert html.startswith('<p class="ps-trace">') and "1.0 ms" in html
    with pytest.raises(ValueError, match=r"labels=\['one'\]: has 1 entries; must have one per timeline \(2\)"):
        pc.trace_links([a, b], ["one"])
    with pytest.raises(ValueError, match=r"timeline=None: must be a Timeline"):
        pc.trace_link(None)
    with pytest.raises(ValueError, match=r"timelines=\[\]: must be a non-empty sequence of Timelines"):
        pc.timelines_chart([], salt="x", title="t")


def test_chart_bad_input():
    from parallelsel.render import pipeline_charts as pc

    with pytest.raises(ValueError, match=r"slow_stage=4: must be a stage index in 0..3"):
        pc.straggler(4, 8, 4, 1.5, salt="x")
    with pytest.raises(ValueError, match=r"slowdown=0: must be a finite number > 0"):
        pc.straggler(4, 8, 1, 0, salt="x")
    with pytest.raises(ValueError, match=r"salt=''"):
        pc.gantt(pl.simulate(pl.schedule("1f1b", 2, 2)), salt="")
    with pytest.raises(ValueError, match=r"timeline=None: must be a Timeline"):
        pc.gantt(None, salt="x")


# ---------------------------------------------------------------------------- chrome trace

@pytest.mark.parametrize("kind,p,m,v", [("1f1b", 4, 8, 1), ("zbv", 4, 8, 2), ("dualpipev", 2, 5, 2)])
def test_chrome_trace_is_valid_json_with_one_track_per_rank(kind, p, m, v):
    import json

    tl = pl.simulate(pl.schedule(kind, p, m, chunks=v), forward=1.0, backward=1.0, weight=1.0)
    doc = json.loads(tl.to_chrome_trace())
    events = doc["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {r: f"rank {r}" for r in range(p)}
    passes = [e for e in events if e["ph"] == "X"]
    assert len(passes) == sum(len(o) for o in tl.schedule.ops)
    for r in range(p):
        mine = sorted((e for e in passes if e["pid"] == r), key=lambda e: e["ts"])
        # the rank's track lists its passes in its order, never overlapping, in microseconds (1 unit = 1 ms)
        assert [(e["args"]["stage"], e["args"]["action"], e["args"]["microbatch"]) for e in mine] == tl.schedule.rank_order(r)
        assert all(a["ts"] + a["dur"] <= b["ts"] + 1e-6 for a, b in zip(mine, mine[1:]))
    assert max(e["ts"] + e["dur"] for e in passes) == pytest.approx(tl.makespan * 1000.0)


def test_peak_inflight_past_the_simulator_size_follows_the_closed_forms_without_building_the_order():
    """A billion micro-batches (a global batch the Workload accepts) used to build a 3e9-pass order and exhaust
    memory; past MAX_PASSES the count comes from the steady pattern and equals the published closed forms:
    1F1B holds p - r on rank r (Narayanan et al. 2021 §2.2.1), GPipe all m, ZB-H1 p on every rank (Qi et al. 2024).
    Run in a child process capped at 2 GiB of address space, so the old behaviour fails instead of eating the machine."""
    import subprocess
    import sys

    script = (
        "import resource; resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))\n"
        "from parallelsel.core.pipeline import MAX_PASSES, peak_inflight\n"
        "m = 10**9; assert 4 * m > MAX_PASSES\n"
        "print([peak_inflight('1f1b', 4, m, rank=r) for r in range(4)], peak_inflight('gpipe', 4, m) == m,\n"
        "      [peak_inflight('zb-h1', 4, m, rank=r) for r in range(4)])\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "[4, 3, 2, 1] True [4, 4, 4, 4]"


@pytest.mark.parametrize("kind,p,m,v", [("gpipe", 4, 8, 1), ("1f1b", 4, 8, 1), ("interleaved", 4, 8, 2),
                                        ("interleaved", 8, 8, 2), ("looped-bfs", 4, 8, 2), ("interleaved-zb", 4, 8, 2),
                                        ("zb-h1", 4, 8, 1), ("zbv", 4, 8, 2), ("dualpipev", 4, 8, 2),
                                        ("gpipe", 4, 2, 1), ("interleaved", 4, 2, 2),
                                        ("interleaved-zb", 4, 3, 2), ("zbv", 4, 3, 2)])
def test_last_stage_inflight_follows_the_simulated_timeline(kind, p, m, v):
    # The loss's tensors live on the last global stage from its forward's end to the end of the backward that
    # consumes them (B, or I where the backward is split). Counted on the simulated timeline -- times, not the
    # rank's pass order that last_stage_inflight walks: the most such intervals open at once.
    from parallelsel.core.pipeline import last_stage_inflight, schedule, simulate
    from parallelsel.core.pipeline_orders import stage_of

    t = simulate(schedule(kind, p, m, v), forward=1.0, backward=2.0, weight=0.7 if "z" in kind else None)
    last = p * v - 1
    rows = list(zip(t.stage, t.kind, t.microbatch, t.chunk, t.start, t.end))
    on_last = [r for r in rows if stage_of(t.schedule.layout, p, int(r[0]), int(r[3])) == last]
    held = {int(r[2]): [float(r[5]), None] for r in on_last if r[1] == "F"}
    for r in on_last:
        if r[1] in ("B", "I"):
            held[int(r[2])][1] = float(r[5])
    events = sorted([(s, 1) for s, _ in held.values()] + [(e, -1) for _, e in held.values()], key=lambda x: (x[0], x[1]))
    count = peak = 0
    for _, d in events:
        count += d
        peak = max(peak, count)
    assert last_stage_inflight(kind, p, m, v) == peak
