"""Plan search: feasibility, ranking, exclusion bookkeeping, explanations, pruning that changes nothing."""

from __future__ import annotations

import pytest

import parallelsel as ps
from parallelsel.search import EXCLUSIONS, Ranked, SearchResult, search


@pytest.fixture(scope="module")
def llama70():
    w = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512)
    c = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8, gpus_per_node=8)
    return search(w, c, top=10), w, c


def test_finds_feasible_plans_for_llama3_70b(llama70):
    r, w, c = llama70
    assert isinstance(r, SearchResult) and len(r.results) == 10
    for x in r.results:
        assert isinstance(x, Ranked) and x.estimate.fits and x.plan.gpus == c.gpus
        assert x.estimate.memory.total <= c.device.memory


def test_ranked_by_step_time(llama70):
    r, _, _ = llama70
    times = [x.estimate.step.total for x in r.results]
    # Ascending, up to the tie tolerance inside which headroom and simplicity decide.
    assert all(b >= a * (1 - 1e-3) for a, b in zip(times, times[1:]))
    assert [x.rank for x in r.results] == list(range(1, 11))


def test_excluded_plus_results_is_considered(llama70):
    r, _, _ = llama70
    assert sum(r.excluded.values()) + len(r.results) == r.considered
    assert all(k in EXCLUSIONS or k.startswith("排名在前") for k in r.excluded)
    assert r.excluded["内存放不下"] > 0
    stages = r.funnel()
    assert [s for s, _ in stages] == ["枚举", "约束通过", "内存可放下", "排名前 10"]
    counts = [n for _, n in stages]
    assert counts == sorted(counts, reverse=True) and counts[0] == r.considered and counts[-1] == 10


def test_why_starts_with_the_fit_statement(llama70):
    r, w, c = llama70
    for x in r.results:
        assert x.why[0].startswith("放得下：每卡") and f"{x.estimate.usable / 2**30:.1f} GiB" in x.why[0]
        # usable = what the driver reports minus the CUDA context and one NCCL buffer set per process group
        assert x.estimate.usable < c.device.memory - 512 * 2**20
        assert x.estimate.memory.total <= x.estimate.usable * (1 - x.estimate.headroom)
        assert x.why[1].startswith("batch 能整除") and str(w.global_batch) in x.why[1]
        assert x.why[-1].startswith("步时")


def test_tp_group_stays_in_a_node(llama70):
    r, _, c = llama70
    for x in r.results:
        assert x.plan.tp <= c.gpus_per_node
        if x.plan.tp > 1:
            assert any("组在节点内" in s for s in x.why)


def test_crossing_tp_is_said():
    # Llama-2 7B: 32 heads, multi-head attention, so TP=16 divides both heads and KV heads.
    w = ps.Workload(ps.MODELS["llama2-7b"], global_batch=16)
    c = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=4)
    r = search(w, c, top=3, fixed={"tp": 16, "pp": 1})
    assert r.results and all(x.plan.tp == 16 for x in r.results)
    assert any("组跨节点" in s for s in r.results[0].why)


def test_exclusion_categories():
    # GPT-2 1.5B: 25 heads, 48 layers; 16 GPUs and a batch of 24.
    w = ps.Workload(ps.MODELS["gpt2-1.5b"], global_batch=24)
    c = ps.Cluster(ps.DEVICES["a100-40gb"], nodes=2)
    r = search(w, c, top=3)
    assert r.excluded["头数或 KV 头数不能被 TP 整除"] > 0
    assert r.excluded["global batch 不能整除"] > 0
    assert sum(r.excluded.values()) + len(r.results) == r.considered


def test_pruning_does_not_change_the_ranking():
    w = ps.Workload(ps.MODELS["llama2-13b"], global_batch=64)
    c = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=2)
    fast = search(w, c, top=8)
    full = search(w, c, top=8, _exhaustive=True)
    assert [x.plan for x in fast.results] == [x.plan for x in full.results]
    assert fast.excluded == full.excluded and fast.funnel() == full.funnel()


def test_nothing_fits():
    w = ps.Workload(ps.MODELS["gpt3-175b"], global_batch=8)
    c = ps.Cluster(ps.DEVICES["rtx4090-24gb"], nodes=1)
    r = search(w, c)
    assert r.results == () and r.best is None
    assert r.excluded["内存放不下"] > 0 and sum(r.excluded.values()) == r.considered


def test_fixed_values_are_validated():
    w = ps.Workload(ps.MODELS["llama2-7b"], global_batch=64)
    c = ps.Cluster(ps.DEVICES["a100-80gb"])
    with pytest.raises(ValueError, match="tp=3"):
        search(w, c, fixed={"tp": 3})
    with pytest.raises(ValueError, match="dp×tp×pp=16"):
        search(w, c, fixed={"dp": 16})
    with pytest.raises(ValueError, match="unknown plan field"):
        search(w, c, fixed={"colour": 1})
    with pytest.raises(ValueError, match="top=0"):
        search(w, c, top=0)
    r = search(w, c, top=3, fixed={"tp": 2, "recompute": "none"})
    assert all(x.plan.tp == 2 and x.plan.recompute == "none" for x in r.results)


def test_large_cluster_405b():
    # 2048 nodes x 8 H100; the enumeration is pruned by divisibility before any estimate.
    w = ps.Workload(ps.MODELS["llama3-405b"], global_batch=2048)
    c = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=2048, intra=ps.LINKS["nvlink4"], inter=ps.LINKS["ib-ndr"])
    r = search(w, c, top=5)
    assert r.results and r.results[0].estimate.fits
    assert sum(r.excluded.values()) + len(r.results) == r.considered


def test_gqa_caps_tp_at_kv_heads():
    # Llama-3 70B: 64 query heads but 8 KV groups; Megatron-LM needs whole KV groups per TP rank,
    # so no plan with TP=16 may appear, and pinning it is refused with the rule.
    w = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512)
    c = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8)
    r = search(w, c, top=20)
    assert r.results and all(x.plan.tp <= 8 for x in r.results)
    with pytest.raises(ValueError, match="8 KV heads"):
        search(w, c, fixed={"tp": 16})
    assert any("KV 头数 8" in s for s in ps.estimate(w, ps.Plan(dp=4, tp=16), c).reasons)


def test_result_is_a_sequence_of_ranked_plans():
    w = ps.Workload(ps.MODELS["llama2-7b"], global_batch=64)
    r = search(w, ps.Cluster(ps.DEVICES["a100-80gb"]), top=3)
    assert len(r) == 3 and list(r) == list(r.results) and r[0] is r.best
    assert [x.rank for x in r] == [1, 2, 3]
