"""Record FSDP2 with gradient accumulation, per rank, in a real multi-process run, into parallelsel/course/data/.

Not run by ``make test`` (it needs torch); the tests read only its output,
``parallelsel/course/data/torch_fsdp_accumulation.json``.

How it was run (the same environment as ``tools/record_torch_ddp_fsdp.py``)::

    python3.11 -m venv /work/torchenv
    /work/torchenv/bin/pip install /opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl numpy
    /work/torchenv/bin/python tools/record_torch_fsdp_accumulation.py

(torch 2.13.0+cpu, CPU only, gloo backend, Python 3.11, world sizes 2 and 4, one process per rank.)

The model, the wrapping (``fully_shard`` on every block, then on the root) and the collective log are
those of ``tools/record_torch_ddp_fsdp.py``. Each step runs ``MICROBATCHES`` forward-backward passes
before ``optimizer.step()``, in four settings:

* ``reshard_after_forward`` True (the default, FULL_SHARD) or False (SHARD_GRAD_OP: the blocks keep
  their gathered parameters from forward to backward), passed to ``fully_shard`` of every block;
* gradient synchronisation on every micro-batch (the default) or only on the last one
  (``model.set_requires_gradient_sync(False)`` before the others, FSDP2's equivalent of FSDP1's
  ``no_sync()``).

Per setting and rank: every all-gather and reduce-scatter of a step with its phase and micro-batch,
and, sampled at every module's forward pre/post and backward pre-hook, the most unsharded parameter
bytes (per phase) and the most unsharded gradient bytes held at once (``_unsharded_param.grad`` and
``unsharded_accumulated_grad`` of every FSDP parameter), with the parameters those gradients belong to.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record_torch_ddp_fsdp import MODEL, WORLDS, Decoder, _CollectiveLog, _batch, _nbytes, _unsharded_bytes  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "parallelsel" / "course" / "data" / "torch_fsdp_accumulation.json"
MICROBATCHES = 3
SETTINGS = [(reshard, sync) for reshard in (True, False) for sync in ("every", "last")]


def _unsharded_grads(fsdp_modules) -> tuple[int, list[str]]:
    """Bytes of unsharded gradients held now, and the parameters they belong to."""
    total, names = 0, []
    for m in fsdp_modules:
        group = m._get_fsdp_state()._fsdp_param_group
        if group is None:
            continue
        for fp in group.fsdp_params:
            g = getattr(fp, "_unsharded_param", None)
            held = 0
            if g is not None and g.grad is not None:
                held += _nbytes(g.grad)
            if fp.unsharded_accumulated_grad is not None:
                held += _nbytes(fp.unsharded_accumulated_grad)
            if held:
                total += held
                names.append(fp._param_fqn)
    return total, names


def _run(rank: int, reshard: bool, sync: str) -> dict:
    from torch.distributed.fsdp import FSDPModule, fully_shard

    torch.manual_seed(0)
    model = Decoder(MODEL)
    for block in model.layers.values():
        fully_shard(block, reshard_after_forward=reshard)
    fully_shard(model)
    fsdp_modules = [m for m in model.modules() if isinstance(m, FSDPModule)]
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    log = _CollectiveLog()
    peaks = {"forward": 0, "backward": 0, "grads": 0, "grad_params": []}

    def sample(*_):
        peaks[log.phase] = max(peaks[log.phase], _unsharded_bytes(fsdp_modules))
        held, names = _unsharded_grads(fsdp_modules)
        if held > peaks["grads"]:
            peaks["grads"], peaks["grad_params"] = held, names

    for m in model.modules():
        m.register_forward_pre_hook(sample)
        m.register_forward_hook(sample)
        m.register_full_backward_pre_hook(sample)
    steps = []
    with log:
        for step in range(2):
            start = len(log.calls)
            for mb in range(MICROBATCHES):
                model.set_requires_gradient_sync(sync == "every" or mb == MICROBATCHES - 1)
                log.phase = "forward"
                x, y = _batch(rank, 10 * step + mb)
                logits = model(x)
                loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1)) / MICROBATCHES
                log.phase = "backward"
                loss.backward()
                for c in log.calls[start:]:
                    c.setdefault("microbatch", mb)
            log.phase = "optimizer"
            opt.step()
            opt.zero_grad()
            steps.append(log.calls[start:])
    return {"reshard_after_forward": reshard, "sync": sync, "collectives_per_step": steps,
            "unsharded_peak": {"forward": peaks["forward"], "backward": peaks["backward"]},
            "unsharded_grads_peak": {"bytes": peaks["grads"], "params": peaks["grad_params"]}}


def _worker(rank: int, world: int, init_file: str, out_dir: str) -> None:
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    res = [_run(rank, reshard, sync) for reshard, sync in SETTINGS]
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
    doc = {"torch": torch.__version__,
           "how": f"tools/record_torch_fsdp_accumulation.py: gloo, CPU, fp32, Adam, 2 steps of {MICROBATCHES} micro-batches",
           "model": MODEL, "microbatches": MICROBATCHES, "dtype": "float32", "runs": runs}
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
