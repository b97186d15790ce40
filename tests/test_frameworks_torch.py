"""DDP and FSDP2 bytes per rank against a recorded PyTorch run.

The reference is ``tests/data/torch_ddp_fsdp.json``: a multi-process gloo run of torch 2.13 (world 2
and 4, fp32, Adam, two steps) on a small Llama-style decoder, recorded by
``tools/record_torch_ddp_fsdp.py``. No tolerance: bytes are integers. The only adjustment is FSDP2's
documented dim-0 padding, which the library models (``padded_shard`` vs ``local_params``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import parallelsel as ps
from parallelsel import frameworks as fw

DATA = json.loads((Path(__file__).parent / "data" / "torch_ddp_fsdp.json").read_text())
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
