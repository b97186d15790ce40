"""Library input validation: numpy integers, bools, strings, non-finite and out-of-range numbers.

The property test throws arbitrary values at every public constructor and at the functions that
compute times and bytes: the only exceptions allowed are ValueError and TypeError, and whatever is
computed is a finite, non-negative number.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import parallelsel as ps
from parallelsel.core.comm import OPS, collective_time
from parallelsel.core.memory import model_states

WEIRD = st.one_of(
    st.none(), st.booleans(), st.text(max_size=3), st.just(float("nan")), st.just(float("inf")),
    st.just(-float("inf")), st.just(1e309), st.just(5e-324), st.just(10**400), st.just(-1), st.just(0),
    st.just(np.int32(2**31 - 1)), st.just(np.int64(-5)), st.just(np.float32(1.5)), st.just([1]),
)


def counts(lo=1, hi=64):
    """Valid counts as Python ints, numpy ints of several widths or whole floats."""
    good = st.integers(lo, hi)
    return st.one_of(good, good.map(np.int32), good.map(np.uint64), good.map(np.int64), good.map(float))


def reals(lo=1e-3, hi=1e15):
    good = st.floats(lo, hi, allow_nan=False, allow_infinity=False)
    branches = [good, good.map(np.float64)]
    if hi >= 1:  # whole numbers given as ints
        branches.append(st.integers(max(1, math.ceil(lo)), int(hi)))
    return st.one_of(*branches)


FIELDS = {
    "layers": counts(1, 16), "heads": st.sampled_from([1, 2, 4, 8]), "head_dim": counts(1, 64),
    "seq": counts(1, 4096), "vocab": counts(1, 50000), "experts": st.one_of(st.just(1), counts(1, 8)),
    "gated": st.booleans(), "memory": reals(1e6, 1e12), "flops": reals(1e9, 1e16), "bw": reals(1e6, 1e13),
    "lat": st.one_of(st.just(0.0), reals(1e-9, 1e-3)), "nodes": counts(1, 4), "gpn": counts(1, 8),
    "batch": counts(1, 256), "dp": counts(1, 8), "tp": counts(1, 8), "pp": counts(1, 4), "zero": counts(0, 3),
    "mb": counts(1, 4), "sp": st.one_of(st.booleans(), st.just(np.bool_(True))),
    "recompute": st.sampled_from(["none", "selective", "full"]), "weights": reals(1, 4), "nbytes": reals(0, 1e12),
    "op": st.sampled_from(OPS),
}


def finite_nonneg(x) -> bool:
    return isinstance(x, float | int) and math.isfinite(x) and x >= 0


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_constructors_raise_only_value_or_type_errors_and_compute_finite_numbers(data):
    """Valid values in any numeric type compute finite numbers; one odd value anywhere raises ValueError/TypeError."""
    v = {k: data.draw(s, label=k) for k, s in FIELDS.items()}
    odd = data.draw(st.one_of(st.none(), st.sampled_from(list(FIELDS))), label="odd field")  # about half all-valid
    if odd is not None:
        v[odd] = data.draw(st.one_of(WEIRD, st.integers(-2, 2**70), st.floats(), st.sampled_from(["x", 1, "bcast"])),
                           label="odd value")
    try:
        integral = all(isinstance(v[k], int | np.integer) and not isinstance(v[k], bool) for k in ("heads", "head_dim"))
        hidden = int(v["heads"]) * int(v["head_dim"]) if integral else v["head_dim"]
        model = ps.Transformer(layers=v["layers"], hidden=hidden, heads=v["heads"], seq_len=v["seq"], vocab=v["vocab"],
                               experts=v["experts"], top_k=1, gated_mlp=v["gated"])
        device = ps.Device("d", v["memory"], v["flops"])
        link = ps.Link("l", v["bw"], v["lat"])
        cluster = ps.Cluster(device, nodes=v["nodes"], gpus_per_node=v["gpn"], intra=link, inter=link)
        recipe = ps.Recipe("r", v["weights"], v["weights"], 12)
        work = ps.Workload(model, recipe=recipe, global_batch=v["batch"])
        plan = ps.Plan(dp=v["dp"], tp=v["tp"], pp=v["pp"], zero=v["zero"], micro_batch=v["mb"], sp=v["sp"],
                       recompute=v["recompute"])
        e = ps.estimate(work, plan, cluster)
        t = collective_time(v["op"], v["nbytes"], plan.dp, link)
        s = model_states(model.params, recipe, dp=plan.dp, zero=plan.zero)
    except (ValueError, TypeError):
        event("refused")
        return
    event("computed")
    # Everything that was accepted was normalised to plain Python numbers.
    for x in (model.layers, model.hidden, model.params, plan.dp, plan.zero, cluster.nodes, work.global_batch):
        assert type(x) is int
    assert type(plan.sp) is bool and type(device.memory) is float
    st_ = e.step
    for x in (st_.compute, st_.communication, st_.bubble, st_.total, st_.tokens_per_s, st_.mfu, t, s.total,
              *e.memory.as_dict().values(), *(it.time for it in e.traffic)):
        assert finite_nonneg(x), x
    assert st_.mfu <= 1.0, st_.mfu


def test_numpy_int32_shape_counts_like_python_ints():
    """A Llama 3 70B shape given as int32 values used to wrap around (1.83B parameters); now it is exact."""
    ref = ps.MODELS["llama3-70b"]
    f = {k: np.int32(getattr(ref, k)) for k in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab",
                                                 "seq_len")}
    m = ps.Transformer(**f, architecture="llama")
    assert m.params == ref.params  # 70.55B, Dubey et al. 2024 Table 3 shape
    w = ps.Workload(m, global_batch=np.int32(2048), seq_len=np.int32(8192))
    assert w.tokens == 2048 * 8192 and w.tokens > 0


def test_plan_normalises_whole_floats_and_refuses_string_flags():
    assert ps.Plan(dp=2.0, pp=4.0).label().startswith("DP2 · TP1 · PP4")
    with pytest.raises(ValueError, match=r"sp='no': must be True or False"):
        ps.Plan(sp="no", tp=2)
    with pytest.raises(ValueError, match=r"dp=True"):
        ps.Plan(dp=True)
    with pytest.raises(ValueError, match=r"dp='8'"):
        ps.Plan(dp="8")


@pytest.mark.parametrize("call,name", [
    (lambda: ps.Cluster(ps.DEVICES["a100-80gb"], nodes=10**20), "nodes"),
    (lambda: ps.Device("d", float("inf"), 1e12), "memory"),
    (lambda: ps.Device("d", 80e9, 1e-320), "peak_flops"),
    (lambda: ps.Link("l", 1e309, 0), "bandwidth"),
    (lambda: ps.Link("l", 1e9, float("nan")), "latency"),
    (lambda: model_states(float("inf")), "params"),
    (lambda: model_states(10**400), "params"),
    (lambda: collective_time("all-reduce", 1e309, 8, ps.LINKS["nvlink3"]), "nbytes"),
    (lambda: ps.Transformer(layers=10**12, hidden=64, heads=1, seq_len=8, vocab=8), "layers"),
    (lambda: ps.pipeline.schedule("interleaved", 8, 8, chunks=10**30), "chunks"),
    (lambda: ps.pipeline.schedule("interleaved", 8, 8, chunks=10**6), "stages x microbatches x chunks"),
])
def test_huge_tiny_and_non_finite_values_raise_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError) as exc:
        call()
    assert str(exc.value).startswith(name)


def test_links_follow_the_device_and_say_they_were_assumed():
    h100 = ps.Cluster(ps.DEVICES["h100-sxm-80gb"])
    assert h100.intra is ps.LINKS["nvlink4"] and h100.inter is ps.LINKS["ib-ndr"]  # DGX H100
    assert h100.assumed == ("intra", "inter")
    assert ps.Cluster(ps.DEVICES["h200-141gb"]).intra is ps.LINKS["nvlink4"]
    assert ps.Cluster(ps.DEVICES["v100-32gb"]).intra is ps.LINKS["nvlink2"]
    assert ps.Cluster(ps.DEVICES["rtx4090-24gb"], gpus_per_node=1).intra is ps.LINKS["pcie4"]  # no NVLink on Ada
    given = ps.Cluster(ps.DEVICES["a100-80gb"], intra=ps.LINKS["pcie4"])
    assert given.assumed == ("inter",)


def test_search_enumerates_pinned_values_outside_its_grid():
    w = ps.Workload(ps.MODELS["llama2-7b"], global_batch=48)
    r = ps.search(w, ps.Cluster(ps.DEVICES["a100-80gb"]), top=3, fixed={"micro_batch": 3})
    assert r.results and all(x.plan.micro_batch == 3 for x in r.results)
    w = ps.Workload(ps.MODELS["llama2-70b"], global_batch=64)
    r = ps.search(w, ps.Cluster(ps.DEVICES["a100-80gb"], nodes=4), top=3, fixed={"schedule": "gpipe", "pp": 4})
    assert r.results and all(x.plan.schedule == "gpipe" and x.plan.pp == 4 for x in r.results)


def test_a_plan_larger_than_any_cluster_is_refused_before_anything_enumerates_its_ranks():
    """Plan(tp=2**31 - 1) used to be accepted and estimate() enumerated its ranks until the machine ran out of
    memory (a fuzz example OOM-killed at 24 GB); no cluster has more than hardware.MAX_GPUS GPUs."""
    with pytest.raises(ValueError, match=r"dp x tp x pp x cp = 7 x 2147483647 x 3 x 1: must be <= 1048576 GPUs"):
        ps.Plan(dp=7, tp=np.int32(2**31 - 1), pp=3)


def test_a_preset_key_stands_for_its_record():
    # As on the command line (--model llama3-8b --recipe fp8-adam-fp32grad): the key gives the same workload.
    by_key = ps.Workload("llama3-70b", recipe="fp8-adam-fp32grad", global_batch=64)
    by_record = ps.Workload(ps.MODELS["llama3-70b"], recipe=ps.RECIPES["fp8-adam-fp32grad"], global_batch=64)
    assert by_key == by_record
    assert model_states(7e9, recipe="bf16-adam").total == model_states(7e9, recipe=ps.RECIPES["bf16-adam"]).total
    for kwargs, name in ((dict(model="llama3-9b"), "model"), (dict(model="llama3-8b", recipe="fp9"), "recipe")):
        with pytest.raises(ValueError, match=rf"{name}='.*': must be a .* or a key of ps\.") as info:
            ps.Workload(**kwargs)
        assert "llama3-8b" in str(info.value) or "bf16-adam" in str(info.value)  # the known keys are listed


def test_a_cluster_takes_device_and_link_keys():
    by_key = ps.Cluster("h100-sxm-80gb", nodes=4, inter="ib-hdr")
    assert by_key == ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=4, inter=ps.LINKS["ib-hdr"])
    assert by_key.assumed == ("intra",)
    with pytest.raises(ValueError, match=r"device='h100': must be a Device or a key of ps\.DEVICES"):
        ps.Cluster("h100")
    with pytest.raises(ValueError, match=r"inter='ib-xdr': must be a Link or a key of ps\.LINKS"):
        ps.Cluster("a100-80gb", inter="ib-xdr")
