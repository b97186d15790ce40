"""Record what torch.distributed.pipelining's schedules run, rank by rank, into parallelsel/course/data/.

Not run by ``make test`` (it needs torch); the tests read only its output,
``parallelsel/course/data/torch_pipeline_schedules.json``.

How it was run (the recorded file says the same in its ``torch`` and ``how`` fields)::

    python3 -m venv /tmp/torchenv
    /tmp/torchenv/bin/pip install /opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl numpy
    /tmp/torchenv/bin/python tools/record_torch_schedules.py

(torch 2.13.0+cpu, CPU only, gloo backend, Python 3.11.) For every pipeline size ``p`` in
{2, 4, 8} the script starts ``p`` processes joined in one gloo group. In each of them it builds, for
every schedule class and every ``m`` in {4, 8, 16} and ``chunks`` in {1, 2}, ``chunks`` real
``PipelineStage`` objects (one ``nn.Linear(8, 8)`` each; stage indices laid out as the schedule
class wants them: loop style ``rank + k*p``, or V style ``rank`` and ``2p-1-rank`` for ZBV and
DualPipeV) and runs one training ``step()`` with an MSE loss. Each stage's
``forward_one_chunk``, ``backward_one_chunk`` and ``backward_weight_one_chunk`` is wrapped to log
``(stage_index, action, microbatch)`` as the runtime calls it: ``F`` forward, ``B`` full backward
(``full_backward=True``), ``I`` input-gradient backward (``full_backward=False``), ``W``
weight-gradient backward. That is the *runtime* order (what the engine executed, overlapped F&B
actions flattened in the order the runtime performs their sub-actions), not the
``pipeline_order`` IR; the IR is stored beside it (``ir``) for comparison only.

A setting torch refuses (the constructor raises) is stored with the exception type and message.
``ScheduleGPipe`` and ``Schedule1F1B`` are single-stage schedules (``PipelineScheduleSingle``): their
constructor takes one ``PipelineStage`` per rank and reads its ``num_stages``. With ``chunks = 2`` the
script still hands them the rank's list of stages, as it does every other class, so the record shows
what torch does with it: an ``AttributeError`` (a list has no ``num_stages``), not a check of torch's
own. Those entries carry a ``why`` field saying so; the conclusion -- one stage per rank -- is the
rule the library raises as ``chunks=2: must be 1``.
A few settings off the grid (``EXTRA``) probe the refusal rules: interleaved schedules need
``m % max(1, m // p) == 0``; DualPipeV needs ``m >= 2p``; Schedule1F1B needs ``m >= p``.
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
from torch.distributed.pipelining import PipelineStage
from torch.distributed.pipelining import schedules as S

OUT = Path(__file__).resolve().parent.parent / "parallelsel" / "course" / "data" / "torch_pipeline_schedules.json"

CLASSES = {
    "gpipe": "ScheduleGPipe",
    "1f1b": "Schedule1F1B",
    "interleaved": "ScheduleInterleaved1F1B",
    "looped-bfs": "ScheduleLoopedBFS",
    "interleaved-zb": "ScheduleInterleavedZeroBubble",
    "zbv": "ScheduleZBVZeroBubble",
    "dualpipev": "ScheduleDualPipeV",
}
SINGLE = {"gpipe", "1f1b"}  # PipelineScheduleSingle: constructed from one stage, not a list
SINGLE_WHY = ("PipelineScheduleSingle takes one PipelineStage per rank and reads stage.num_stages; given a list of "
              "stages it fails there (not a check of its own): these schedules hold one stage per rank")
V_STYLE = {"zbv", "dualpipev"}
GRID_P, GRID_M, GRID_CHUNKS = (2, 4, 8), (4, 8, 16), (1, 2)
# (kind, p, m, chunks) off the grid, probing the refusal rules named in the docstring.
EXTRA = [
    ("interleaved", 2, 7, 2), ("interleaved-zb", 2, 7, 2), ("interleaved", 4, 6, 2), ("interleaved-zb", 4, 6, 2),
    ("interleaved", 4, 9, 2), ("interleaved", 4, 10, 2), ("interleaved", 4, 3, 2), ("interleaved-zb", 4, 3, 2),
    ("interleaved", 4, 6, 1), ("interleaved-zb", 4, 2, 1), ("looped-bfs", 4, 6, 2), ("zbv", 4, 5, 2),
    ("dualpipev", 4, 7, 2), ("dualpipev", 4, 9, 2), ("1f1b", 4, 3, 1), ("1f1b", 4, 5, 1), ("gpipe", 4, 3, 1),
]
WIDTH = 8


def _settings(p: int):
    for kind in CLASSES:
        for m in GRID_M:
            for v in GRID_CHUNKS:
                yield kind, p, m, v
    for kind, pp, m, v in EXTRA:
        if pp == p:
            yield kind, p, m, v


def _stage_indices(kind: str, rank: int, p: int, v: int) -> list[int]:
    if kind in V_STYLE and v == 2:
        return [rank, 2 * p - 1 - rank]
    return [rank + k * p for k in range(v)]


def _logged_stage(index: int, num_stages: int, group, log: list) -> PipelineStage:
    torch.manual_seed(index)
    stage = PipelineStage(torch.nn.Linear(WIDTH, WIDTH), index, num_stages, torch.device("cpu"), group=group)
    fwd, bwd, wgt = stage.forward_one_chunk, stage.backward_one_chunk, stage.backward_weight_one_chunk

    def forward_one_chunk(fwd_chunk_id, *a, **k):
        log.append((index, "F", fwd_chunk_id))
        return fwd(fwd_chunk_id, *a, **k)

    def backward_one_chunk(bwd_chunk_id, loss=None, full_backward=True, last_backward=False):
        log.append((index, "B" if full_backward else "I", bwd_chunk_id))
        return bwd(bwd_chunk_id, loss=loss, full_backward=full_backward, last_backward=last_backward)

    def backward_weight_one_chunk(bwd_chunk_id, last_backward=False):
        log.append((index, "W", bwd_chunk_id))
        return wgt(bwd_chunk_id, last_backward=last_backward)

    stage.forward_one_chunk = forward_one_chunk
    stage.backward_one_chunk = backward_one_chunk
    stage.backward_weight_one_chunk = backward_weight_one_chunk
    return stage


def _ir(sched, rank: int):
    order = getattr(sched, "pipeline_order", None) or {}
    out = []
    for a in order.get(rank, []):
        if a is None:
            continue
        for sub in (a.sub_actions or (a,)):
            t = sub.computation_type.value
            if t in ("F", "B", "I", "W"):
                out.append((sub.stage_index, t, sub.microbatch_index))
    return out


def _run_one(kind: str, p: int, m: int, v: int, rank: int):
    log: list = []
    num_stages = p * v
    stages = [_logged_stage(i, num_stages, None, log) for i in _stage_indices(kind, rank, p, v)]
    cls = getattr(S, CLASSES[kind])
    loss_fn = torch.nn.MSELoss(reduction="sum")
    try:
        sched = cls(stages[0] if kind in SINGLE and v == 1 else stages, m, loss_fn=loss_fn)
    except Exception as e:  # the refusal is the datum
        refused = {"type": type(e).__name__, "message": str(e).splitlines()[0][:300]}
        if kind in SINGLE and v > 1:
            refused["why"] = SINGLE_WHY
        return {"refused": refused}
    torch.manual_seed(1234)
    x = torch.randn(m, WIDTH)
    y = torch.randn(m, WIDTH)
    has_first = any(s.is_first for s in stages)
    has_last = any(s.is_last for s in stages)
    args = (x,) if has_first else ()
    kwargs = {"target": y, "losses": []} if has_last else {}
    sched.step(*args, **kwargs)
    return {"order": log, "ir": _ir(sched, rank)}


def _worker(rank: int, p: int, init_file: str, out_dir: str):
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=p)
    results = {}
    for kind, pp, m, v in _settings(p):
        results[f"{kind}|{pp}|{m}|{v}"] = _run_one(kind, pp, m, v, rank)
        dist.barrier()
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump(results, f)
    dist.destroy_process_group()


def _record(p: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        init_file = os.path.join(tmp, "init")
        mp.spawn(_worker, args=(p, init_file, tmp), nprocs=p, join=True)
        per_rank = [json.load(open(os.path.join(tmp, f"rank{r}.json"))) for r in range(p)]
    out = {}
    for key in per_rank[0]:
        kind, _, m, v = key.split("|")
        entry = {"kind": kind, "torch_class": CLASSES[kind], "stages": p, "microbatches": int(m), "chunks": int(v)}
        first = per_rank[0][key]
        if "refused" in first:
            assert all("refused" in r[key] for r in per_rank), key
            entry["refused"] = first["refused"]
        else:
            entry["ranks"] = [[list(a) for a in r[key]["order"]] for r in per_rank]
            entry["ir"] = [[list(a) for a in r[key]["ir"]] for r in per_rank]
        out[key] = entry
    return out


def main() -> None:
    settings = {}
    for p in GRID_P:
        settings.update(_record(p))
        print(f"p={p}: recorded", file=sys.stderr)
    doc = {
        "torch": torch.__version__,
        "how": "tools/record_torch_schedules.py: gloo, CPU, one process per rank, one step() per setting, "
               "stage methods wrapped to log the runtime order",
        "grid": {"stages": list(GRID_P), "microbatches": list(GRID_M), "chunks": list(GRID_CHUNKS)},
        "classes": CLASSES,
        "settings": list(settings.values()),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, indent=None, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({len(settings)} settings)", file=sys.stderr)


if __name__ == "__main__":
    main()
