"""Pipeline sends overlapped with compute, as the stacks run them.

Megatron-LM overlaps the interleaved schedule's stage-to-stage sends with the next chunk's compute by default
(``megatron/training/arguments.py`` @d98e8a6: ``--no-overlap-p2p-communication`` is a ``store_false`` flag, so
``overlap_p2p_comm`` is on, since commit 4eeff55 of 2023-10-12; L1010-1012 turn it off for every other schedule)
and Megatron-Bridge sets it whenever there are virtual pipeline stages (``training/comm_overlap.py``). The
papers' Megatron-LM of 2021-2022 waited for each send as it posted it, so their validation rows pin it off.
"""

from __future__ import annotations

import pytest

import parallelsel as ps
from parallelsel.core.comm import traffic
from parallelsel.core.launchers import export, read_config
from parallelsel.core.plan import parse_plan
from parallelsel.course.measured import run_estimate
from parallelsel.course.references import MEASURED_RUNS

WORK = ps.Workload("llama3-70b", global_batch=256, seq_len=8192)
CLUSTER = ps.Cluster("h100-sxm-80gb", nodes=8)
INTERLEAVED = ps.Plan(dp=4, tp=4, pp=4, sp=True, zero=1, schedule="interleaved", chunks=5)


def _pp(workload, plan, traffic_=None):
    """The pipeline's forward sends, after checking the backward ones match (from ``traffic_``, else the traffic of
    ``plan`` on CLUSTER)."""
    items = [t for t in (traffic_ or traffic(workload, plan, CLUSTER)) if t.strategy == "PP"]
    assert [t.phase for t in items] == ["forward", "backward"]   # activations, then their gradients
    assert len({t.overlappable for t in items}) == 1
    return items[0]


def test_megatron_core_overlaps_the_interleaved_schedules_sends_only():
    assert _pp(WORK, INTERLEAVED).overlappable
    assert not _pp(WORK, INTERLEAVED.with_(schedule="1f1b", chunks=1)).overlappable
    assert not _pp(WORK, INTERLEAVED.with_(p2p_overlap=False)).overlappable
    titan = ps.Workload("llama3-70b", global_batch=256, seq_len=8192, stack="torchtitan")
    assert not _pp(titan, INTERLEAVED.with_(sp=True)).overlappable


def test_overlapped_sends_leave_the_critical_path():
    on = ps.estimate(WORK, INTERLEAVED, CLUSTER)
    off = ps.estimate(WORK, INTERLEAVED.with_(p2p_overlap=False), CLUSTER)
    exposed = {k: v for k, v in off.step.exposed}
    assert exposed["PP"] > 0 and dict(on.step.exposed).get("PP", 0.0) < exposed["PP"]
    assert on.step.total < off.step.total and on.step.compute == off.step.compute
    # The sends hide in a pool of their own: what the DP/ZeRO collectives leave exposed does not change (over
    # 100 GbE Ethernet, where ZeRO's gradient reduce-scatter does not hide).
    slow = ps.Cluster("h100-sxm-80gb", nodes=8, inter="eth-100g")
    zero_on, zero_off = (dict(ps.estimate(WORK, p, slow).step.exposed)["ZeRO"]
                         for p in (INTERLEAVED, INTERLEAVED.with_(p2p_overlap=False)))
    assert zero_on == zero_off > 1.0


def test_a_pipeline_without_virtual_stages_never_overlaps():
    # Megatron-LM keeps overlap_p2p_comm only with virtual stages (arguments.py L1000-1017).
    one_chunk = INTERLEAVED.with_(chunks=1)
    assert not _pp(WORK, one_chunk).overlappable
    assert "p2p_overlap_not_offered" in [r.code for r in ps.estimate(WORK, one_chunk.with_(p2p_overlap=True),
                                                                      CLUSTER).reasons]


def test_overlap_where_no_stack_offers_it_is_refused():
    codes = [r.code for r in ps.estimate(WORK, INTERLEAVED.with_(schedule="1f1b", chunks=1, p2p_overlap=True),
                                         CLUSTER).reasons]
    assert "p2p_overlap_not_offered" in codes
    assert "p2p_overlap_not_offered" not in [r.code for r in ps.estimate(WORK, INTERLEAVED.with_(p2p_overlap=True),
                                                                          CLUSTER).reasons]
    titan = ps.Workload("llama3-70b", global_batch=256, seq_len=8192, stack="torchtitan")
    assert "p2p_overlap_not_offered" in [r.code for r in ps.estimate(titan, INTERLEAVED.with_(p2p_overlap=True),
                                                                      CLUSTER).reasons]


def test_label_parse_and_megatron_flag_round_trip():
    off = INTERLEAVED.with_(p2p_overlap=False)
    assert "no-p2p-overlap" in off.label() and parse_plan(off.label()) == off
    assert "p2p-overlap" not in INTERLEAVED.label()   # the default says nothing
    text = export(WORK, off, "megatron")
    assert "--no-overlap-p2p-communication" in text
    cfg = read_config(text, world=64, layers=80)
    assert ps.Plan(**cfg.plan).p2p_overlap is False
    assert "--no-overlap-p2p-communication" not in export(WORK, INTERLEAVED, "megatron")


def test_search_pins_it_off_and_refuses_to_pin_it_on():
    r = ps.search(WORK, CLUSTER, top=3, fixed={"schedule": "interleaved", "p2p_overlap": False})
    assert r.results and all(x.plan.p2p_overlap is False for x in r.results)
    with pytest.raises(ValueError, match="p2p_overlap"):
        ps.search(WORK, CLUSTER, fixed={"p2p_overlap": True})


def test_the_papers_runs_wait_for_their_sends():
    for run in MEASURED_RUNS:
        e = run_estimate(run)
        if run.pp > 1:
            assert not _pp(e.workload, e.plan, e.traffic).overlappable
            # (pinned off where today's stack would overlap; a 1F1B plan has nothing to pin)
            assert e.plan.p2p_overlap is (False if run.chunks > 1 else None)



def test_the_search_walks_the_setting_it_would_run():
    from parallelsel.core.search import enumerates

    off = INTERLEAVED.with_(p2p_overlap=False)
    assert enumerates(WORK, CLUSTER, INTERLEAVED) and not enumerates(WORK, CLUSTER, off)
    assert enumerates(WORK, CLUSTER, off, fixed={"p2p_overlap": False})


def test_explain_ranks_the_default_setting_spelt_out():
    from parallelsel.core.search import explain

    best = ps.search(WORK, CLUSTER, top=20).results
    plan = next((x.plan for x in best if x.plan.chunks > 1), None)
    if plan is None:
        pytest.skip("no interleaved plan in the top 20 of this search")
    spelt = plan.with_(p2p_overlap=True)   # what Megatron-Core does by default with virtual stages
    assert spelt != plan and explain(WORK, CLUSTER, spelt, top=20).rank == explain(WORK, CLUSTER, plan, top=20).rank
