"""DDP and FSDP2 bytes per rank against a recorded PyTorch run.

The reference is ``parallelsel/course/data/torch_ddp_fsdp.json``: a multi-process gloo run of torch 2.13 (world 2
and 4, fp32, Adam, two steps) on a small Llama-style decoder, recorded by
``tools/record_torch_ddp_fsdp.py``. No tolerance: bytes are integers. The only adjustment is FSDP2's
documented dim-0 padding, which the library models (``padded_shard`` vs ``local_params``).
"""

from __future__ import annotations


import json

import pytest

from parallelsel.course.torch_records import record

import parallelsel as ps
from parallelsel.course import frameworks as fw

DATA = record("torch_ddp_fsdp.json")
RUNS = DATA["runs"]
MODEL = ps.Transformer(architecture="llama", **DATA["model"])


def test_the_record_is_torch_2_13_at_world_2_and_4():
    assert DATA["torch"].startswith("2.13")
    assert [r["world"] for r in RUNS] == [2, 4]


def test_tensor_layout_matches_torchs_module():
    shapes = RUNS[0]["ranks"][0]["fsdp2"]["shapes"]
    assert [(n, list(s)) for n, s in fw.parameter_shapes(MODEL)] == list(shapes.items())


@pytest.mark.parametrize("run", RUNS, ids=lambda r: f"world{r['world']}")
@pytest.mark.parametrize("view", [False, True])
def test_ddp_bytes_and_buckets(run, view):
    ours = fw.ddp(MODEL, gradient_as_bucket_view=view, steps=2)
    for rank in run["ranks"]:
        rec = next(d for d in rank["ddp"] if d["gradient_as_bucket_view"] == view)
        assert ours.params == rec["params"]["bytes"]
        assert ours.grads == rec["grads"]["bytes"]
        assert ours.optimizer == rec["optimizer"]["total"]
        assert [list(b) for b in ours.all_reduce] == [s["buckets"] for s in rec["all_reduce_per_step"]]
        # gradients are views into the buckets (as many storages as buckets) or separate tensors
        # beside bucket buffers of the same size
        storages = rec["grads"]["distinct_storages"]
        assert storages == (len(ours.all_reduce[-1]) if view else rec["params"]["tensors"])
        assert ours.bucket_buffers == (0 if view else sum(rec["all_reduce_per_step"][-1]["buckets"]))


@pytest.mark.parametrize("run", RUNS, ids=lambda r: f"world{r['world']}")
def test_fsdp2_bytes_per_rank(run):
    w = run["world"]
    for r, rank in enumerate(run["ranks"]):
        rec = rank["fsdp2"]
        ours = fw.fsdp2(MODEL, w, r)
        assert ours.local_params == rec["params"]["local_bytes"]
        assert ours.padded_shard == rec["params"]["padded_shard_bytes"]
        assert ours.grads == rec["grads"]["bytes"]
        assert ours.optimizer == rec["optimizer"]["total"]
        assert ours.unsharded_forward == rec["unsharded_peak"]["forward"]
        assert ours.unsharded_backward == rec["unsharded_peak"]["backward"]
    # padding: the last rank holds fewer rows of the vocabulary-sized tensors, but sends a full chunk
    assert fw.fsdp2(MODEL, w, w - 1).local_params < fw.fsdp2(MODEL, w, w - 1).padded_shard


@pytest.mark.parametrize("run", RUNS, ids=lambda r: f"world{r['world']}")
def test_fsdp2_collectives_per_step(run):
    w = run["world"]
    rec = run["ranks"][0]["fsdp2"]
    ours = [(c.op, c.phase, c.input_bytes, c.output_bytes) for c in fw.fsdp2(MODEL, w, 0).collectives]
    for step in rec["collectives_per_step"]:
        assert ours == [(c["op"], c["phase"], c["input_bytes"], c["output_bytes"]) for c in step]


def test_fsdp2_units_and_reshard_after_forward_match_memory_fsdp_units():
    rec = RUNS[0]["ranks"][0]["fsdp2"]
    units = {u.name: u for u in ps.memory.fsdp_units(MODEL)}
    assert rec["reshard_after_forward"] == {"root": units["root"].reshard_after_forward,
                                            "block": units["block"].reshard_after_forward}
    blocks = [u for u in rec["units"] if u["params"][0].startswith("layers.")]
    assert len(blocks) == units["block"].count


def test_only_the_llama_layout_is_modelled():
    with pytest.raises(ValueError, match="must be a dense Llama-architecture Transformer"):
        fw.parameter_shapes(ps.MODELS["gpt3-175b"])
    with pytest.raises(ValueError, match=r"rank=4: must be an integer >= 0 and <= 3"):
        fw.fsdp2(MODEL, 4, 4)


# ------------------------------------------------- gradient accumulation, reshard_after_forward, no_sync
ACC = record("torch_fsdp_accumulation.json")


def test_the_accumulation_record_covers_both_options():
    assert ACC["torch"].startswith("2.13") and ACC["model"] == DATA["model"] and ACC["microbatches"] > 1
    settings = {(s["reshard_after_forward"], s["sync"]) for run in ACC["runs"] for rank in run["ranks"] for s in rank}
    assert settings == {(True, "every"), (True, "last"), (False, "every"), (False, "last")}


def _acc_cases():
    for run in ACC["runs"]:
        for r, rank in enumerate(run["ranks"]):
            for rec in rank:
                yield pytest.param(run["world"], r, rec, id=f"world{run['world']}-rank{r}-raf{rec['reshard_after_forward']}-"
                                                            f"sync_{rec['sync']}")


@pytest.mark.parametrize("world,rank,rec", list(_acc_cases()))
def test_fsdp2_accumulation_collectives_and_peaks(world, rank, rec):
    ours = fw.fsdp2(MODEL, world, rank, reshard_after_forward=rec["reshard_after_forward"],
                    microbatches=ACC["microbatches"], no_sync=rec["sync"] == "last")
    calls = [(c.op, c.phase, c.input_bytes, c.output_bytes) for c in ours.collectives]
    for step in rec["collectives_per_step"]:
        assert calls == [(c["op"], c["phase"], c["input_bytes"], c["output_bytes"]) for c in step]
    assert (ours.unsharded_forward, ours.unsharded_backward) == (rec["unsharded_peak"]["forward"],
                                                                 rec["unsharded_peak"]["backward"])
    # The record samples at module hooks, all of which fire before the root's backward ends, so it sees
    # the "block" moment (the first block's backward), not the root's.
    seen = rec["unsharded_grads_peak"]
    block = dict((name, g) for name, _, g in ours.moments)["block"]
    if rec["sync"] == "last":  # every gradient unsharded, on every rank
        assert set(ours.grad_params) == set(seen["params"]) and block == seen["bytes"] == ours.unsharded_grads
    else:
        # The last sample inside the first block of backward comes just before that block's first
        # module in forward (attention_norm) computes its gradient.
        missing = set(ours.grad_params) - set(seen["params"])
        assert missing == {f"layers.{MODEL.layers - 1}.attention_norm.weight"}
        assert block - seen["bytes"] == 4 * MODEL.hidden


# The unit-level model (memory.fsdp_units, read by memory and comm) against the tensor-level one, on a
# shape with no dim-0 padding at world 2 and 4 (so per-tensor bytes add up to whole units).
EVEN = ps.Transformer(architecture="llama", layers=4, hidden=128, heads=4, kv_heads=2, ffn_hidden=344, vocab=2048,
                      seq_len=16)
FP32 = ps.RECIPES["fp32-adam"]


@pytest.mark.parametrize("world", [2, 4])
@pytest.mark.parametrize("raf", [True, False])
@pytest.mark.parametrize("no_sync", [False, True])
def test_unit_level_traffic_and_memory_agree_with_the_tensor_level(world, raf, no_sync):
    m = 3
    tensors = fw.fsdp2(EVEN, world, 0, reshard_after_forward=raf, microbatches=m, no_sync=no_sync)
    w = ps.Workload(EVEN, recipe=FP32, global_batch=world * m)
    plan = ps.Plan(dp=world, zero=3, reshard_after_forward=raf, no_sync=no_sync)
    cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=1, gpus_per_node=world)
    units = {}
    for t in ps.comm.traffic(w, plan, cluster):
        assert t.strategy == "FSDP"
        units[t.op, t.phase] = units.get((t.op, t.phase), 0) + t.nbytes * t.calls
    full = {}
    for c in tensors.collectives:  # the unsharded buffer: all-gather output, reduce-scatter input
        full[c.op, c.phase] = full.get((c.op, c.phase), 0) + (c.output_bytes if c.op == "all-gather" else c.input_bytes)
    assert units == full
    mem = ps.memory.breakdown(w, plan)
    if no_sync:
        # gradients unsharded in the states, none in the gather peak: the gathered weights only, plus the
        # block FSDP prefetches in backward (Zhao et al. 2023 §3.3), which the tensor-level count leaves out
        assert mem.grads == tensors.unsharded_grads == 4 * EVEN.params
        assert mem.gather_peak == tensors.unsharded_backward + (4 * EVEN.layer_params if raf else 0)
    else:
        assert mem.grads == 4 * EVEN.params / world
        # without prefetch: the most weights + gradients held at one moment of backward, tensor by tensor
        assert ps.memory.gather_peak(EVEN, FP32, prefetch=False, reshard_after_forward=raf) == \
            max(wb + gb for _, wb, gb in tensors.moments)


def test_the_validation_pages_agreement_functions_find_what_the_record_holds():
    """parallelsel.course.torch_records, which the validation page prints: every recorded FSDP2 accumulation setting
    agrees on every rank, the padded tensors are exactly those whose rows do not split evenly, and a changed record
    is reported as a disagreement (the functions can say no)."""
    from parallelsel.course.torch_records import accumulation_agreement, fsdp_padding, record_model

    model = record_model()
    assert model == MODEL
    for run in ACC["runs"]:
        for k, _ in enumerate(run["ranks"][0]):
            agree, (mine, theirs, peak, their_peak) = accumulation_agreement(model, run, k, ACC["microbatches"])
            assert agree and mine == theirs and peak == their_peak
    broken = json.loads(json.dumps(ACC["runs"][0]))
    broken["ranks"][1][0]["unsharded_peak"]["backward"] += 1
    assert not accumulation_agreement(model, broken, 0, ACC["microbatches"])[0]
    for run in DATA["runs"]:
        w, shapes = run["world"], run["ranks"][0]["fsdp2"]["shapes"]
        for r, rank in enumerate(run["ranks"]):
            found = {name for name, *_ in fsdp_padding(w, r, rank["fsdp2"], shapes)}
            uneven = {name for name, shape in shapes.items() if shape[0] % w and (r + 1) * -(-shape[0] // w) > shape[0]}
            assert found == uneven, (w, r)
