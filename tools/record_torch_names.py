"""Record which torch names the generated plan code (parallelsel/render/plan_code.py) may use, and their parameters.

Not run by ``make test`` (it needs torch); the tests read only its output, ``parallelsel/course/data/torch_names.json``.
How it was run (the file records the torch version it saw)::

    /work/launchers-venv/bin/python tools/record_torch_names.py   # any venv with torch 2.13.0+cpu

For each dotted name below it imports the module part and walks the attributes; it records whether the name
exists and, for a callable, the names of its parameters (``inspect.signature``; for a class, its ``__init__``).
The list is the vocabulary the generator draws from; tests/test_plan_code.py checks that every import, call and
keyword in the generated code is in this record with ``exists: true``.
"""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path

NAMES = [
    "torch.device",
    "torch.bfloat16",
    "torch.float32",
    "torch.cuda.set_device",
    "torch.distributed.device_mesh.init_device_mesh",
    "torch.distributed.device_mesh.DeviceMesh.get_local_rank",
    "torch.distributed.device_mesh.DeviceMesh.get_group",
    "torch.distributed.fsdp.fully_shard",
    "torch.distributed.fsdp.MixedPrecisionPolicy",
    "torch.distributed.tensor.parallel.parallelize_module",
    "torch.distributed.tensor.parallel.ColwiseParallel",
    "torch.distributed.tensor.parallel.RowwiseParallel",
    "torch.distributed.tensor.parallel.SequenceParallel",
    "torch.distributed.tensor.parallel.PrepareModuleInput",
    "torch.distributed.tensor.Shard",
    "torch.distributed.tensor.Replicate",
    "torch.distributed.algorithms._checkpoint.checkpoint_wrapper.checkpoint_wrapper",
    "torch.distributed.pipelining.PipelineStage",
    "torch.distributed.pipelining.ScheduleGPipe",
    "torch.distributed.pipelining.Schedule1F1B",
    "torch.distributed.pipelining.ScheduleInterleaved1F1B",
    "torch.distributed.pipelining.Schedule1F1B.step",
]


def resolve(dotted: str):
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def params(obj) -> list[str] | None:
    target = obj.__init__ if inspect.isclass(obj) else obj
    try:
        return [p for p in inspect.signature(target).parameters if p != "self"]
    except (TypeError, ValueError):
        return None


def main() -> None:
    import torch

    out = {"torch": torch.__version__, "how": "tools/record_torch_names.py: import, getattr, inspect.signature", "names": {}}
    for name in NAMES:
        try:
            obj = resolve(name)
        except (ImportError, AttributeError) as e:
            out["names"][name] = {"exists": False, "error": f"{type(e).__name__}: {e}"}
            continue
        out["names"][name] = {"exists": True, "params": params(obj) if callable(obj) else None}
    path = Path(__file__).resolve().parent.parent / "parallelsel" / "course" / "data" / "torch_names.json"
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(path, sum(v["exists"] for v in out["names"].values()), "of", len(NAMES), "exist")


main()
