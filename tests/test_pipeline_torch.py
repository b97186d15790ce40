"""The library's schedules against PyTorch's, rank by rank.

The reference is ``parallelsel/course/data/torch_pipeline_schedules.json``: what torch 2.13's
``torch.distributed.pipelining`` executed in a multi-process gloo run (one process per rank, one
``step()`` per setting, each stage's forward/backward calls logged), recorded by
``tools/record_torch_schedules.py``. torch is not needed here.
"""

from __future__ import annotations

import re


import pytest

from parallelsel.course.torch_records import record

from parallelsel import pipeline as pl

DATA = record("torch_pipeline_schedules.json")
SETTINGS = DATA["settings"]


def _id(e: dict) -> str:
    return f"{e['kind']}-p{e['stages']}-m{e['microbatches']}-v{e['chunks']}"


def _as_tuples(order) -> list[tuple[int, str, int]]:
    return [(int(s), str(a), int(mb)) for s, a, mb in order]


def test_the_record_covers_the_grid():
    assert DATA["torch"].startswith("2.13")
    kinds = {"gpipe", "1f1b", "interleaved", "looped-bfs", "interleaved-zb", "zbv", "dualpipev"}
    assert set(DATA["classes"]) == kinds
    have = {(e["kind"], e["stages"], e["microbatches"], e["chunks"]) for e in SETTINGS}
    for k in kinds:
        for p in (2, 4, 8):
            for m in (4, 8, 16):
                for v in (1, 2):
                    assert (k, p, m, v) in have
    # torch ran most of the grid; the refusals are a minority with a stated rule
    ran = [e for e in SETTINGS if "ranks" in e]
    assert len(ran) > len(SETTINGS) / 2


def test_rank_order_equals_torch_runtime():
    """Every recorded setting: torch ran it and the library's order equals torch's on every rank, or torch refused
    it and the library raises a ValueError naming the parameter and the rule. Lists every setting that differs."""
    differ = []
    for entry in SETTINGS:
        kind, p, m, v = entry["kind"], entry["stages"], entry["microbatches"], entry["chunks"]
        if "refused" in entry:
            try:
                pl.schedule(kind, p, m, chunks=v)
                differ.append(f"{_id(entry)}: torch refused, the library accepts")
            except ValueError as e:
                if not re.match(r"(chunks|microbatches)=\d+: must be", str(e)):
                    differ.append(f"{_id(entry)}: refused with {e}")
            continue
        sched = pl.schedule(kind, p, m, chunks=v)
        differ += [f"{_id(entry)} rank {r}" for r in range(p) if sched.rank_order(r) != _as_tuples(entry["ranks"][r])]
    assert differ == []


@pytest.mark.parametrize("entry", [e for e in SETTINGS if e["kind"] == "interleaved-zb" and e["chunks"] == 1], ids=_id)
def test_zb_h1_is_torchs_one_chunk_interleaved_zero_bubble(entry):
    p, m = entry["stages"], entry["microbatches"]
    sched = pl.schedule("zb-h1", p, m)
    assert [sched.rank_order(r) for r in range(p)] == [_as_tuples(o) for o in entry["ranks"]]


def test_1f1b_ir_differs_from_runtime_on_the_last_rank_only():
    # Why the record holds the runtime order: torch 2.13's Schedule1F1B.pipeline_order (its IR) is
    # not what its _step_microbatches runs on the last rank; the library follows the runtime.
    for e in SETTINGS:
        if e["kind"] == "1f1b" and "ranks" in e:
            differs = [r for r in range(e["stages"]) if e["ranks"][r] != e["ir"][r]]
            assert differs == [e["stages"] - 1], _id(e)


def test_simulating_torchs_order_gives_the_same_timeline():
    """Every setting torch ran: torch's order, simulated, gives the library's timeline and peaks, and each rank runs
    forwards of exactly the global stages the library places on it. Lists every setting that differs."""
    differ = []
    for entry in (e for e in SETTINGS if "ranks" in e):
        kind, p, m, v = entry["kind"], entry["stages"], entry["microbatches"], entry["chunks"]
        ours = pl.schedule(kind, p, m, chunks=v)
        theirs = pl.Schedule.from_rank_orders(entry["ranks"], layout=ours.layout)
        a = pl.simulate(ours, forward=1.0, backward=1.0, weight=1.0, p2p=0.1)
        b = pl.simulate(theirs, forward=1.0, backward=1.0, weight=1.0, p2p=0.1)
        if a.makespan != b.makespan or list(a.end) != list(b.end) or list(a.peak_inflight) != list(b.peak_inflight):
            differ.append(f"{_id(entry)}: timeline")
        for rank in range(p):
            stages = {s for s, act, _ in theirs.rank_order(rank) if act == "F"}
            if stages != {ours.virtual_stage(rank, c) for c in range(v)}:
                differ.append(f"{_id(entry)}: rank {rank} stages")
    assert differ == []


def test_v_layout_puts_first_and_last_stage_on_rank_0():
    for e in SETTINGS:
        if e["kind"] in ("zbv", "dualpipev") and "ranks" in e:
            p = e["stages"]
            assert {s for s, _, _ in e["ranks"][0]} == {0, 2 * p - 1}
            assert {s for s, _, _ in pl.schedule(e["kind"], p, e["microbatches"], 2).rank_order(0)} == {0, 2 * p - 1}


def test_single_stage_refusals_are_marked_as_a_type_mismatch():
    # ScheduleGPipe and Schedule1F1B take one stage per rank; handed a list of stages they fail with an
    # AttributeError, which the record keeps (it is what torch does) and explains in a `why` field.
    odd = [e for e in SETTINGS if e.get("refused", {}).get("type") == "AttributeError"]
    assert odd and all(e["kind"] in ("gpipe", "1f1b") and e["chunks"] > 1 and "one stage per rank" in e["refused"]["why"]
                       for e in odd)
    assert all("why" not in e["refused"] for e in SETTINGS if "refused" in e and e not in odd)


def test_the_validation_pages_schedule_agreement_counts_every_rank():
    """parallelsel.course.torch_records.schedule_agreement, which the validation page prints: for each kind every rank
    torch ran is equal and every setting torch refused is refused by the library too; a changed order is counted."""
    from parallelsel.course.torch_records import library_orders, schedule_agreement

    for kind in DATA["classes"]:
        entries = [e for e in SETTINGS if e["kind"] == kind]
        a = schedule_agreement(kind, entries)
        assert (a.equal, a.both) == (a.ranks, a.refused) and a.ran + a.refused == len(entries) and a.ran > 0
        assert all(isinstance(ours, ValueError) for _, ours in a.refusals)
    ran = next(e for e in SETTINGS if e["kind"] == "1f1b" and "ranks" in e)
    changed = {**ran, "ranks": [list(reversed(o)) for o in ran["ranks"]]}
    assert schedule_agreement("1f1b", [changed]).equal == 0
    refused = next(e for e in SETTINGS if "refused" in e)
    assert isinstance(library_orders(refused["kind"], refused["stages"], refused["microbatches"], refused["chunks"]),
                      ValueError)
