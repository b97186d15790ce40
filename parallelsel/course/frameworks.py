"""What PyTorch's DDP and FSDP2 hold and send per rank, tensor by tensor (bytes).

:mod:`parallelsel.core.memory` counts bytes per parameter; the engines work per *tensor*, which adds three
effects this module models, each as PyTorch 2.13 implements it (checked against a recorded gloo run,
``parallelsel/course/data/torch_ddp_fsdp.json``, from ``tools/record_torch_ddp_fsdp.py``):

* **DDP buckets** (``torch/nn/parallel/distributed.py``, ``BucketCapacityConfig``): without
  ``find_unused_parameters`` or ``static_graph`` the first step puts every gradient in one bucket;
  afterwards the reducer rebuilds the buckets in the order gradients became ready, closing a bucket
  once it reaches its limit -- 1 MiB for the first (``dist._DEFAULT_FIRST_BUCKET_BYTES``), then
  ``bucket_cap_mb`` (25 MiB). One all-reduce per bucket. The bucket buffers are extra memory
  unless ``gradient_as_bucket_view=True`` makes the gradients views into them.
* **FSDP2 dim-0 padding** (``torch/distributed/fsdp/_fully_shard/_fsdp_param.py``): each parameter
  is split on dim 0 into ``ceil(d0 / world)``-row chunks (``torch.chunk``), the last ranks getting
  fewer rows or none; the kept shard is padded to the full chunk, and the all-gather sends
  the padded shards.
* **Adam's per-tensor step** (``torch/optim/adam.py``): besides ``exp_avg`` and ``exp_avg_sq`` each
  parameter tensor has a float32 scalar ``step`` (4 bytes).

The FSDP units are :func:`parallelsel.core.memory.fsdp_units` (one block per transformer layer, resharded
after forward; the root, not), so this module and the memory model share one wrapping rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from parallelsel.core._check import ParallelselError, flag, positive_int
from parallelsel.core.memory import fsdp_units
from parallelsel.core.model import Transformer

__all__ = ["FIRST_BUCKET_BYTES", "BUCKET_CAP_BYTES", "STEP_BYTES", "Collective", "DdpRank", "Fsdp2Rank",
           "parameter_shapes", "ddp_buckets", "ddp", "fsdp2"]

FIRST_BUCKET_BYTES = 1024 * 1024
"""DDP's first bucket after the rebuild: ``torch.distributed._DEFAULT_FIRST_BUCKET_BYTES`` (1 MiB, torch 2.13)."""
BUCKET_CAP_BYTES = 25 * 1024 * 1024
"""DDP's default ``bucket_cap_mb=25`` (``DistributedDataParallel``'s signature, torch 2.13), in bytes."""
STEP_BYTES = 4
"""``torch.optim.Adam``'s per-parameter ``step``: a float32 scalar tensor (``_get_scalar_dtype()``)."""


def parameter_shapes(model: Transformer) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """``(name, shape)`` of every parameter tensor, in registration order, as torchtitan's Llama 3
    lays the model out (``torchtitan/models/llama3/model/model.py``): ``tok_embeddings``; per layer
    ``attention.{wq,wk,wv,wo}``, ``feed_forward.{w1,w2,w3}``, ``attention_norm``, ``ffn_norm``; then
    ``norm`` and ``output``. Linear weights are ``(out, in)``. Only the dense Llama architecture
    (gated MLP, RMSNorm, no biases, untied head, rotary positions) is laid out here.
    """
    if not isinstance(model, Transformer):
        raise ParallelselError(f"model={model!r}: must be a Transformer")
    llama = model.gated_mlp and not model.tied_embeddings and not model.bias and model.position == "rotary"
    if not llama or model.is_moe or model.norm != "rmsnorm":
        raise ParallelselError(f"model={model!r}: must be a dense Llama-architecture Transformer "
                               f"(architecture='llama'; other layouts are not modelled tensor by tensor)")
    h, kv, f, v = model.hidden, model.kv_dim, model.ffn_hidden, model.vocab
    out = [("tok_embeddings.weight", (v, h))]
    for i in range(model.layers):
        p = f"layers.{i}."
        out += [(p + "attention.wq.weight", (h, h)), (p + "attention.wk.weight", (kv, h)), (p + "attention.wv.weight", (kv, h)),
                (p + "attention.wo.weight", (h, h)), (p + "feed_forward.w1.weight", (f, h)), (p + "feed_forward.w2.weight", (h, f)),
                (p + "feed_forward.w3.weight", (f, h)), (p + "attention_norm.weight", (h,)), (p + "ffn_norm.weight", (h,))]
    return tuple(out + [("norm.weight", (h,)), ("output.weight", (v, h))])


def _numels(model: Transformer) -> list[int]:
    shapes = parameter_shapes(model)
    numels = [prod(s) for _, s in shapes]
    if sum(numels) != model.params:  # the layout must be the model's own count
        raise RuntimeError(f"tensor layout has {sum(numels)} parameters, the model {model.params}")
    return numels


def ddp_buckets(sizes_ready_order, first: int = FIRST_BUCKET_BYTES, cap: int = BUCKET_CAP_BYTES) -> list[int]:
    """Bucket bytes the DDP reducer forms from gradient sizes given in ready order: each bucket is
    closed as soon as it reaches its limit (``first`` for the first bucket, ``cap`` after), as
    ``compute_bucket_assignment_by_size`` in torch's ``reducer.cpp`` does."""
    out, cur, limit = [], 0, positive_int("first", first)
    cap = positive_int("cap", cap)
    for size in sizes_ready_order:
        cur += size
        if cur >= limit:
            out.append(cur)
            cur, limit = 0, cap
    return out + ([cur] if cur else [])


@dataclass(frozen=True)
class DdpRank:
    """One DDP rank's bytes. ``all_reduce`` lists bucket bytes per step (one all-reduce each)."""

    params: int
    grads: int
    bucket_buffers: int
    optimizer: int
    all_reduce: tuple[tuple[int, ...], ...]


def ddp(model: Transformer, dtype_bytes: int = 4, gradient_as_bucket_view: bool = False, steps: int = 2) -> DdpRank:
    """Per-rank bytes of DDP with Adam, and the all-reduce buckets of the first ``steps`` steps.

    Every rank holds the whole model: parameters and gradients ``dtype_bytes`` each, Adam's two
    states plus ``STEP_BYTES`` per tensor. Step 1 all-reduces one bucket of every gradient; later
    steps the rebuilt buckets (:func:`ddp_buckets`) over the gradients in ready order, taken as the
    reverse of registration order (DDP's own assumption: gradients are produced in reverse of use).
    The bucket buffers add as much as the gradients unless ``gradient_as_bucket_view``.
    """
    b = positive_int("dtype_bytes", dtype_bytes)
    sizes = [n * b for n in _numels(model)]
    total = sum(sizes)
    rebuilt = tuple(ddp_buckets(reversed(sizes)))
    per_step = tuple((total,) if s == 0 else rebuilt for s in range(positive_int("steps", steps)))
    return DdpRank(params=total, grads=total, bucket_buffers=0 if gradient_as_bucket_view else total,
                   optimizer=2 * total + STEP_BYTES * len(sizes), all_reduce=per_step)


@dataclass(frozen=True)
class Collective:
    """One collective call of a step: op, phase, FSDP unit, and the bytes in and out on this rank."""

    op: str
    phase: str
    unit: str
    input_bytes: int
    output_bytes: int


@dataclass(frozen=True)
class Fsdp2Rank:
    """One FSDP2 rank's bytes: the local (unpadded) and padded shards, gradients and Adam states on
    the local shard, the collectives of one step in issue order, the unsharded parameter bytes
    materialised at once in forward and in backward; ``moments``: for the two points of backward
    where unsharded bytes peak -- ``"block"`` (the first block's backward) and ``"root"`` (the root's,
    after the last block) -- the unsharded parameter and gradient bytes held then; ``grad_params``:
    the parameters whose unsharded gradients are held during the first block's backward."""

    local_params: int
    padded_shard: int
    grads: int
    optimizer: int
    collectives: tuple[Collective, ...]
    unsharded_forward: int
    unsharded_backward: int
    moments: tuple[tuple[str, int, int], ...] = ()
    grad_params: tuple[str, ...] = ()

    @property
    def unsharded_grads(self) -> int:
        """The most unsharded gradient bytes held at once."""
        return max((g for _, _, g in self.moments), default=0)


def _units(model: Transformer, reshard_after_forward: bool = True) -> list[tuple[str, list[tuple[str, tuple[int, ...]]], bool]]:
    """``(unit name, [(parameter, shape)], reshard_after_forward)`` in forward order: root, blocks 0..L-1."""
    shapes = dict(parameter_shapes(model))
    units = {u.name: u for u in fsdp_units(model, reshard_after_forward=reshard_after_forward)}
    root = [(n, shapes[n]) for n in ("tok_embeddings.weight", "norm.weight", "output.weight")]
    blocks = [[(n, s) for n, s in shapes.items() if n.startswith(f"layers.{i}.")] for i in range(model.layers)]
    head = sum(prod(s) for n, s in root if n != "tok_embeddings.weight")
    if (sum(prod(s) for _, s in root) != units["root"].params or head != units["root"].early_grads
            or any(sum(prod(s) for _, s in b) != units["block"].params for b in blocks)):
        raise RuntimeError("memory.fsdp_units and the tensor layout disagree on what a unit holds")
    return ([("root", root, units["root"].reshard_after_forward)]
            + [(f"block{i}", b, units["block"].reshard_after_forward) for i, b in enumerate(blocks)])


def _shard_rows(d0: int, world: int, rank: int) -> tuple[int, int]:
    """(rows rank holds, rows of the padded chunk) of a dim-0 size ``d0``: torch.chunk's split."""
    chunk = -(-d0 // world)
    return max(0, min(chunk, d0 - rank * chunk)), chunk


def fsdp2(model: Transformer, world: int, rank: int = 0, dtype_bytes: int = 4, reshard_after_forward: bool = True,
          microbatches: int = 1, no_sync: bool = False) -> Fsdp2Rank:
    """Per-rank bytes and one step's collectives of FSDP2 (``fully_shard`` per block, then the root).

    Each of the ``microbatches`` passes all-gathers the root, then each block, in forward (FSDP2
    reshards every unit after backward, so each micro-batch gathers again). Backward re-gathers each
    block resharded after forward (``reshard_after_forward``, passed to the blocks' ``fully_shard``),
    in reverse, one unit ahead (FSDP2 prefetches the next backward all-gather before it
    reduce-scatters the current unit), reduce-scatters every block, and the root last. With
    ``no_sync`` (``set_requires_gradient_sync(False)`` on all but the last micro-batch) only the last
    micro-batch reduce-scatters. All-gather input is this rank's padded shard of the unit, output
    ``world`` times that; reduce-scatter the reverse.

    Unsharded parameters peak at root + one block in both passes, or at every unit when the blocks
    keep theirs. Unsharded gradients: with sync, the root's head gradients (final norm and output,
    computed first, reduce-scattered with the root after the last block) beside one block's during
    the blocks' backward, and the whole root's at the end; with ``no_sync``, every parameter's.
    """
    w = positive_int("world", world)
    r = positive_int("rank", rank, minimum=0, maximum=w - 1)
    b = positive_int("dtype_bytes", dtype_bytes)
    m = positive_int("microbatches", microbatches)
    units = _units(model, flag("reshard_after_forward", reshard_after_forward))
    local = padded = 0
    shard: dict[str, int] = {}
    for name, tensors, _ in units:
        rows = [_shard_rows(s[0], w, r) for _, s in tensors]
        local += sum(have * prod(s[1:]) for (have, _), (_, s) in zip(rows, tensors)) * b
        shard[name] = sum(chunk * prod(s[1:]) for (_, chunk), (_, s) in zip(rows, tensors)) * b
        padded += shard[name]
    full = {name: sum(prod(s) for _, s in tensors) * b for name, tensors, _ in units}
    order = [c for mb in range(m) for c in _fsdp_calls(units, sync=not flag("no_sync", no_sync) or mb == m - 1)]
    calls = tuple(Collective(op, phase, u, shard[u] if op == "all-gather" else w * shard[u],
                             w * shard[u] if op == "all-gather" else shard[u]) for op, phase, u in order)
    n_tensors = sum(len(t) for _, t, _ in units)
    kept = all(not reshard for _, _, reshard in units)
    blocks = [n for n, _, _ in units if n != "root"]
    peak = sum(full.values()) if kept else full["root"] + max(full[n] for n in blocks)
    sizes = dict(parameter_shapes(model))
    if flag("no_sync", no_sync) and m > 1:  # the last micro-batch starts its backward with every gradient
        grad_params = tuple(n for _, tensors, _ in units for n, _ in tensors)
        at_root = sum(full.values())
    else:
        last = units[-1][1]  # the first block in backward, beside the root's head gradients
        grad_params = tuple(n for n, _ in units[0][1] if n != "tok_embeddings.weight") + tuple(n for n, _ in last)
        at_root = full["root"]
    moments = (("block", peak, sum(prod(sizes[n]) for n in grad_params) * b),
               ("root", full["root"], at_root))  # every block was resharded after its backward
    return Fsdp2Rank(local, padded, local, 2 * local + STEP_BYTES * n_tensors, calls, peak, peak, moments, grad_params)


def _fsdp_calls(units, sync: bool = True) -> list[tuple[str, str, str]]:
    """(op, phase, unit) of one micro-batch in issue order (see :func:`fsdp2`); without ``sync`` no reduce-scatter."""
    calls = [("all-gather", "forward", name) for name, _, _ in units]
    back = [(name, reshard) for name, _, reshard in reversed(units) if name != "root"]
    for i, (name, reshard) in enumerate(back):
        if i == 0 and reshard:
            calls.append(("all-gather", "backward", name))
        if i + 1 < len(back) and back[i + 1][1]:  # prefetch the next unit before reducing this one
            calls.append(("all-gather", "backward", back[i + 1][0]))
        if sync:
            calls.append(("reduce-scatter", "backward", name))
    return calls + ([("reduce-scatter", "backward", "root")] if sync else [])
