"""The library beside PyTorch 2.13 as recorded from the real engine: the records, and what agrees.

JSON records in ``parallelsel/course/data/`` (package data, so the validation page and the tests read the same
files from an installed package; each written by ``tools/record_torch_*.py`` from a multi-process gloo run, its
``how`` field says how):

* ``torch_pipeline_schedules.json``: each ``torch.distributed.pipelining`` schedule class's per-rank runtime order
  (or torch's refusal) over a grid of stages, micro-batches and chunks;
* ``torch_ddp_fsdp.json``: DDP and FSDP2 bytes per rank and collectives per step for a small Llama-shaped model;
* ``torch_fsdp_accumulation.json``: FSDP2 over several micro-batches, with and without resharding and gradient sync;
* ``torch_names.json``: whether each torch name the generated plan code may use exists, and its parameters
  (``tools/record_torch_names.py``; read by the code page and ``tests/test_plan_code.py``);
* ``torch_dropout.json``: the bytes autograd keeps for a residual dropout and an attention-probability dropout at
  p = 0 and p = 0.1 (``tools/record_torch_dropout.py``; read by ``tests/test_memory.py``).

The functions here compare the library with a record and return numbers and flags; :mod:`parallelsel.render` and the
validation page word them.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..core import pipeline
from ..core.model import Transformer
from . import frameworks

__all__ = ["RECORDS", "ScheduleAgreement", "accumulation_agreement", "by_op", "fsdp_padding", "library_orders",
           "record", "record_model", "schedule_agreement"]

DATA = Path(__file__).resolve().parent / "data"
RECORDS = ("torch_pipeline_schedules.json", "torch_ddp_fsdp.json", "torch_fsdp_accumulation.json", "torch_names.json",
           "torch_dropout.json")


@lru_cache(maxsize=None)
def _load(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def record(name: str) -> dict:
    """A fresh copy of one recorded run (one of :data:`RECORDS`)."""
    if name not in RECORDS:
        raise ValueError(f"name={name!r}: must be one of {', '.join(RECORDS)}")
    return json.loads(_load(name))


def record_model() -> Transformer:
    """The Llama-shaped model the DDP/FSDP2 records were taken on."""
    return Transformer(architecture="llama", **record("torch_ddp_fsdp.json")["model"])


def library_orders(kind: str, p: int, m: int, v: int):
    """Every rank's ``[global stage, action, micro-batch]`` list from the library, or the ValueError it raises."""
    try:
        sched = pipeline.schedule(kind, p, m, chunks=v)
    except ValueError as error:
        return error
    return [[list(a) for a in sched.rank_order(r)] for r in range(p)]


@dataclass(frozen=True)
class ScheduleAgreement:
    """One schedule kind against torch's record: settings torch ran, ranks in them, ranks whose order equals
    torch's, settings torch refused, of those the ones the library refuses too, and each refusal with the
    library's answer (``(entry, ValueError or orders)``)."""

    ran: int
    ranks: int
    equal: int
    refused: int
    both: int
    refusals: tuple


def schedule_agreement(kind: str, entries) -> ScheduleAgreement:
    """Compare the library's rank orders with torch's recorded ones, setting by setting (``entries`` from
    ``torch_pipeline_schedules.json``'s ``settings``)."""
    ran = ranks = equal = refused = both = 0
    refusals = []
    for e in entries:
        ours = library_orders(kind, e["stages"], e["microbatches"], e["chunks"])
        if "refused" in e:
            refused += 1
            both += isinstance(ours, ValueError)
            refusals.append((e, ours))
        else:
            ran += 1
            ranks += e["stages"]
            equal += 0 if isinstance(ours, ValueError) else sum(a == b for a, b in zip(ours, e["ranks"]))
    return ScheduleAgreement(ran, ranks, equal, refused, both, tuple(refusals))


def by_op(calls) -> dict:
    """``(op, phase) -> (calls, input bytes, output bytes)`` of one step's ``(op, phase, input, output)`` calls."""
    out: dict = {}
    for op, phase, i, o in calls:
        n, a, b = out.get((op, phase), (0, 0, 0))
        out[op, phase] = (n + 1, a + i, b + o)
    return out


def fsdp_padding(world: int, rank: int, fsdp2_record: dict, shapes: dict) -> list[tuple[str, int, int, int]]:
    """The tensors whose rows do not split evenly over ``world`` (torch.chunk's rows, rounded up), as
    ``(name, rows, rows this rank holds, rows per chunk)``, read off the record's fp32 local bytes."""
    out = []
    for name, local in fsdp2_record["params"]["local_by_name"].items():
        shape = shapes[name]
        inner = 1
        for d in shape[1:]:
            inner *= d
        chunk, held = -(-shape[0] // world), local // (4 * inner)
        if held < chunk:
            out.append((name, shape[0], held, chunk))
    return out


def accumulation_agreement(model: Transformer, run: dict, k: int, microbatches: int):
    """Setting ``k`` of one world's FSDP2 accumulation record against :func:`parallelsel.course.frameworks.fsdp2`:
    whether every rank's collectives (op, phase, bytes) and unsharded peaks agree, and rank 0's counts
    ``(library ops, torch ops, library backward peak, torch backward peak)``."""
    w = run["world"]
    setting = run["ranks"][0][k]
    raf, sync = setting["reshard_after_forward"], setting["sync"]
    agree, counts = True, None
    for r, rank in enumerate(run["ranks"]):
        rec = rank[k]
        ours = frameworks.fsdp2(model, w, r, reshard_after_forward=raf, microbatches=microbatches,
                                no_sync=sync == "last")
        calls = [(c.op, c.phase, c.input_bytes, c.output_bytes) for c in ours.collectives]
        agree &= all(calls == [(c["op"], c["phase"], c["input_bytes"], c["output_bytes"]) for c in step]
                     for step in rec["collectives_per_step"])
        agree &= (ours.unsharded_forward, ours.unsharded_backward) == (rec["unsharded_peak"]["forward"],
                                                                       rec["unsharded_peak"]["backward"])
        if r == 0:
            counts = (Counter(c.op for c in ours.collectives), Counter(c["op"] for c in rec["collectives_per_step"][0]),
                      ours.unsharded_backward, rec["unsharded_peak"]["backward"])
    return agree, counts
