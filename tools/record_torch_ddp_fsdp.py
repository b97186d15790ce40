"""Record what DDP and FSDP2 hold and send per rank in a real multi-process run, into parallelsel/course/data/.

Not run by ``make test`` (it needs torch); the tests read only its output,
``parallelsel/course/data/torch_ddp_fsdp.json``.

How it was run::

    python3 -m venv /work/torchenv
    /work/torchenv/bin/pip install /opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl numpy
    /work/torchenv/bin/python tools/record_torch_ddp_fsdp.py

(torch 2.13.0+cpu, CPU only, gloo backend, Python 3.11, world sizes 2 and 4, one process per rank.)

The model is a small Llama-style decoder laid out as torchtitan's Llama 3 (``tok_embeddings``,
``layers.<i>`` with ``attention.{wq,wk,wv,wo}``, ``feed_forward.{w1,w2,w3}``, ``attention_norm``,
``ffn_norm``; then ``norm`` and an untied ``output``), fp32, with a shape whose dim-0 sizes do not
all divide the world size (``MODEL`` below), so FSDP2's dim-0 padding shows. Two training steps with
``torch.optim.Adam`` are run in each configuration:

* DDP (``DistributedDataParallel``, default ``bucket_cap_mb``), with ``gradient_as_bucket_view``
  False and True. A communication hook (the default all-reduce, wrapped) logs every bucket's bytes
  per step; each rank reports its parameter, gradient and Adam-state bytes (every state tensor,
  the per-tensor ``step`` included) and whether each gradient is a view into a bucket.
* FSDP2 (``fully_shard`` on every block, then on the root, defaults otherwise). ``dist.all_gather_single``
  and ``dist.reduce_scatter_single`` (what FSDP2 calls in 2.13) are wrapped to log op, input and
  output bytes and the phase (forward / backward); each rank reports its local shard bytes, the
  padded shard bytes FSDP2 keeps, gradient and Adam-state bytes, and the most unsharded parameter
  bytes present at once during forward and during backward, sampled at every module's forward and
  backward pre-hook (reading each FSDP parameter's sharded state).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch import nn

OUT = Path(__file__).resolve().parent.parent / "parallelsel" / "course" / "data" / "torch_ddp_fsdp.json"

# dims: vocab and ffn_hidden not divisible by 4 (dim-0 padding under FSDP2); output weight > 1 MiB
# (DDP's first bucket after the rebuild holds it alone).
MODEL = dict(layers=4, hidden=128, heads=4, kv_heads=2, ffn_hidden=342, vocab=2053, seq_len=16)
BATCH = 2
WORLDS = (2, 4)


class Attention(nn.Module):
    def __init__(self, h: int, heads: int, kv_heads: int) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, h // heads
        self.wq = nn.Linear(h, heads * self.hd, bias=False)
        self.wk = nn.Linear(h, kv_heads * self.hd, bias=False)
        self.wv = nn.Linear(h, kv_heads * self.hd, bias=False)
        self.wo = nn.Linear(heads * self.hd, h, bias=False)

    def forward(self, x):
        b, s, _ = x.shape
        q = self.wq(x).view(b, s, self.heads, self.hd).transpose(1, 2)
        k = self.wk(x).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        v = self.wv(x).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        rep = self.heads // self.kv_heads
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(o.transpose(1, 2).reshape(b, s, -1))


class FeedForward(nn.Module):
    def __init__(self, h: int, ffn: int) -> None:
        super().__init__()
        self.w1 = nn.Linear(h, ffn, bias=False)
        self.w2 = nn.Linear(ffn, h, bias=False)
        self.w3 = nn.Linear(h, ffn, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, c: dict) -> None:
        super().__init__()
        h = c["hidden"]
        self.attention = Attention(h, c["heads"], c["kv_heads"])
        self.feed_forward = FeedForward(h, c["ffn_hidden"])
        self.attention_norm = nn.RMSNorm(h)
        self.ffn_norm = nn.RMSNorm(h)

    def forward(self, x):
        x = x + self.attention(self.attention_norm(x))
        return x + self.feed_forward(self.ffn_norm(x))


class Decoder(nn.Module):
    def __init__(self, c: dict) -> None:
        super().__init__()
        self.tok_embeddings = nn.Embedding(c["vocab"], c["hidden"])
        self.layers = nn.ModuleDict({str(i): Block(c) for i in range(c["layers"])})
        self.norm = nn.RMSNorm(c["hidden"])
        self.output = nn.Linear(c["hidden"], c["vocab"], bias=False)

    def forward(self, tokens):
        x = self.tok_embeddings(tokens)
        for block in self.layers.values():
            x = block(x)
        return self.output(self.norm(x))


def _nbytes(t) -> int:
    t = t.to_local() if hasattr(t, "to_local") else t
    return t.numel() * t.element_size()


def _optimizer_bytes(opt) -> dict:
    states = [v for s in opt.state.values() for v in s.values() if torch.is_tensor(v)]
    return {"total": sum(_nbytes(v) for v in states), "tensors": len(states),
            "step_bytes": sum(_nbytes(s["step"]) for s in opt.state.values())}


def _batch(rank: int, step: int):
    g = torch.Generator().manual_seed(100 * step + rank)
    tokens = torch.randint(0, MODEL["vocab"], (BATCH, MODEL["seq_len"] + 1), generator=g)
    return tokens[:, :-1], tokens[:, 1:]


def _train(model, opt, rank: int, step: int) -> None:
    x, y = _batch(rank, step)
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=False)


def _ddp(rank: int, world: int, as_view: bool) -> dict:
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

    torch.manual_seed(0)
    ddp = DDP(Decoder(MODEL), gradient_as_bucket_view=as_view)
    buckets: list[list[int]] = []

    def hook(state, bucket):
        buckets[-1].append(bucket.buffer().numel() * bucket.buffer().element_size())
        return allreduce_hook(state, bucket)

    ddp.register_comm_hook(None, hook)
    opt = torch.optim.Adam(ddp.parameters(), lr=1e-3)
    for step in range(2):
        buckets.append([])
        _train(ddp, opt, rank, step)
    params = list(ddp.module.parameters())
    grad_storages = {p.grad.untyped_storage().data_ptr(): p.grad.untyped_storage().nbytes() for p in params}
    return {
        "gradient_as_bucket_view": as_view,
        "bucket_cap_bytes": ddp.bucket_bytes_cap,
        "params": {"bytes": sum(_nbytes(p) for p in params), "tensors": len(params)},
        "grads": {"bytes": sum(_nbytes(p.grad) for p in params),
                  "distinct_storage_bytes": sum(grad_storages.values()), "distinct_storages": len(grad_storages)},
        "optimizer": _optimizer_bytes(opt),
        "all_reduce_per_step": [{"calls": len(b), "bytes": sum(b), "buckets": b} for b in buckets],
    }


class _CollectiveLog:
    """Wraps dist.all_gather_single / dist.reduce_scatter_single (what FSDP2 2.13 calls)."""

    def __init__(self) -> None:
        self.calls: list[dict] = []
        self.phase = "forward"
        self._orig = {}

    def __enter__(self):
        for name, op in (("all_gather_single", "all-gather"), ("reduce_scatter_single", "reduce-scatter")):
            orig = getattr(dist, name)
            self._orig[name] = orig

            def wrapped(*a, _orig=orig, _op=op, **k):
                out = k.get("output", a[0] if a else None)
                inp = k.get("input", a[1] if len(a) > 1 else None)
                self.calls.append({"op": _op, "phase": self.phase, "input_bytes": _nbytes(inp), "output_bytes": _nbytes(out)})
                return _orig(*a, **k)

            setattr(dist, name, wrapped)
        return self

    def __exit__(self, *exc):
        for name, orig in self._orig.items():
            setattr(dist, name, orig)


def _unsharded_bytes(fsdp_modules) -> int:
    from torch.distributed.fsdp._fully_shard._fsdp_param import ShardedState

    total = 0
    for m in fsdp_modules:
        group = m._get_fsdp_state()._fsdp_param_group
        if group is None:
            continue
        for fp in group.fsdp_params:
            if fp.sharded_state == ShardedState.UNSHARDED:
                total += fp._orig_size.numel() * (fp.param_dtype or fp.orig_dtype).itemsize
    return total


def _fsdp(rank: int, world: int) -> dict:
    from torch.distributed.fsdp import FSDPModule, fully_shard

    torch.manual_seed(0)
    model = Decoder(MODEL)
    shapes = {n: list(p.shape) for n, p in model.named_parameters()}
    for block in model.layers.values():
        fully_shard(block)
    fully_shard(model)
    fsdp_modules = [m for m in model.modules() if isinstance(m, FSDPModule)]
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    log = _CollectiveLog()
    peaks = {"forward": 0, "backward": 0}

    def sample(*_):
        peaks[log.phase] = max(peaks[log.phase], _unsharded_bytes(fsdp_modules))

    for m in model.modules():
        m.register_forward_pre_hook(sample)
        m.register_forward_hook(sample)
        m.register_full_backward_pre_hook(sample)
    steps = []
    with log:
        for step in range(2):
            start = len(log.calls)
            log.phase = "forward"
            x, y = _batch(rank, step)
            logits = model(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
            log.phase = "backward"
            loss.backward()
            log.phase = "optimizer"
            opt.step()
            opt.zero_grad(set_to_none=False)
            steps.append(log.calls[start:])
    local = {n: _nbytes(p) for n, p in model.named_parameters()}
    padded = 0
    for m in fsdp_modules:
        group = m._get_fsdp_state()._fsdp_param_group
        if group is not None:
            padded += sum(fp._sharded_param_data.numel() * fp._sharded_param_data.element_size() for fp in group.fsdp_params)
    return {
        "shapes": shapes,
        "units": [_unit(m) for m in fsdp_modules],
        "params": {"local_bytes": sum(local.values()), "padded_shard_bytes": padded, "local_by_name": local},
        "grads": {"bytes": sum(_nbytes(p.grad) for p in model.parameters())},
        "optimizer": _optimizer_bytes(opt),
        "collectives_per_step": steps,
        "unsharded_peak": peaks,
        "reshard_after_forward": {"root": _reshard_flag(model), "block": _reshard_flag(model.layers["0"])},
    }


def _unit(module) -> dict:
    group = module._get_fsdp_state()._fsdp_param_group
    fps = group.fsdp_params if group is not None else []
    return {"params": [fp._param_fqn for fp in fps], "reshard_after_forward": bool(group and group.post_forward_mesh_info is not None)}


def _reshard_flag(module) -> bool:
    group = module._get_fsdp_state()._fsdp_param_group
    return bool(group.post_forward_mesh_info is not None)


def _worker(rank: int, world: int, init_file: str, out_dir: str) -> None:
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    res = {"ddp": [_ddp(rank, world, False), _ddp(rank, world, True)], "fsdp2": _fsdp(rank, world)}
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump(res, f)
    dist.destroy_process_group()


def main() -> None:
    runs = []
    for world in WORLDS:
        with tempfile.TemporaryDirectory() as tmp:
            mp.spawn(_worker, args=(world, os.path.join(tmp, "init"), tmp), nprocs=world, join=True)
            ranks = [json.load(open(os.path.join(tmp, f"rank{r}.json"))) for r in range(world)]
        runs.append({"world": world, "ranks": ranks})
        print(f"world={world}: recorded", file=sys.stderr)
    doc = {"torch": torch.__version__, "how": "tools/record_torch_ddp_fsdp.py: gloo, CPU, fp32, Adam, 2 steps",
           "model": MODEL, "batch": BATCH, "optimizer": "torch.optim.Adam (defaults)", "dtype": "float32", "runs": runs}
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
