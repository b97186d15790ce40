"""The code the 从方案到代码 page prints (render/plan_code.py) parses and uses only torch names that exist.

The independent reference is ``parallelsel/course/data/torch_names.json``: what torch 2.13.0 itself answered when
``tools/record_torch_names.py`` imported each name and read its signature. Every ``from torch... import``,
every call of an imported name (with each keyword it passes), every ``torch.*`` attribute and every method called
on the device mesh must be in that record with ``exists: true``; keywords must be among the recorded parameters.
The exports beside the code come from the CLI's own export (core/launchers.py): the TOML parses and its degrees
multiply to the plan's GPU count.
"""

from __future__ import annotations

import ast
import json
from dataclasses import replace
import tomllib
from pathlib import Path

import pytest

import parallelsel as ps
from parallelsel.core._check import ParallelselError
from parallelsel.core.launchers import export, refusals
from parallelsel.core.search import search
from parallelsel.render.plan_code import METHOD_OWNERS, torch_code

RECORD = json.loads((Path(__file__).resolve().parent.parent / "parallelsel" / "course" / "data" / "torch_names.json").read_text(encoding="utf-8"))
NAMES = RECORD["names"]
W70 = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512)
PLANS = [
    ps.Plan(dp=2, tp=4, pp=8, zero=3, sp=True),
    ps.Plan(dp=2, tp=4, pp=4, zero=3, sp=True, schedule="interleaved", chunks=2, recompute="full"),
    ps.Plan(dp=4, tp=8, pp=2, zero=2, sp=False, schedule="gpipe", micro_batch=2, recompute="selective"),
    ps.Plan(dp=64, zero=3),
    ps.Plan(tp=8, pp=8, sp=True),
    ps.Plan(dp=2, tp=8, pp=4, zero=3, sp=True, stage_layers=(19, 21, 21, 19)),
]


def _dotted(node) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def uses(code: str) -> list[tuple[str, tuple[str, ...]]]:
    """(torch name, keywords passed) for every import, torch attribute, call of an imported name and mesh method."""
    tree = ast.parse(code)
    imported, out = {}, []
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}  # torch.cuda inside torch.cuda.set_device
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module.startswith("torch"):
            for a in node.names:
                imported[a.asname or a.name] = f"{node.module}.{a.name}"
                out.append((f"{node.module}.{a.name}", ()))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            kws = tuple(k.arg for k in node.keywords if k.arg)
            f = node.func
            if isinstance(f, ast.Name) and f.id in imported:
                out.append((imported[f.id], kws))
            elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Subscript) and \
                    isinstance(f.value.value, ast.Name) and f.value.value.id in METHOD_OWNERS:
                out.append((f"{METHOD_OWNERS[f.value.value.id]}.{f.attr}", kws))
            elif _dotted(f) and _dotted(f).startswith("torch."):
                out.append((_dotted(f), kws))
        elif isinstance(node, ast.Attribute) and (_dotted(node) or "").startswith("torch.") and id(node) not in inner:
            out.append((_dotted(node), ()))
    return out


def test_record_is_torch_2_13():
    assert RECORD["torch"].startswith("2.13.")


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: p.label())
def test_generated_code_parses_and_uses_recorded_torch_names(plan):
    code = torch_code(W70, plan)
    used = uses(code)
    assert used, "no torch name found: the checker is not reading the code"
    for name, kws in used:
        entry = NAMES.get(name)
        assert entry is not None, f"{name} is not in the recorded vocabulary (tools/record_torch_names.py NAMES)"
        assert entry["exists"], f"{name} does not exist in torch {RECORD['torch']}"
        params = entry.get("params") or []
        if "kwargs" not in params:
            assert set(kws) <= set(params), f"{name} has no parameter(s) {set(kws) - set(params)} in torch {RECORD['torch']}"


def test_the_checker_catches_a_wrong_name_and_keyword():
    bad = "from torch.distributed.fsdp import fully_shard\nfully_shard(m, mesh=x, reshard_after_fwd=True)\n"
    [(name, kws)] = [u for u in uses(bad) if u[1]]
    assert name == "torch.distributed.fsdp.fully_shard" and "reshard_after_fwd" not in NAMES[name]["params"]
    assert ("torch.distributed.fsdp.FullyShard", ()) in uses("from torch.distributed.fsdp import FullyShard\n")


def test_the_plan_shapes_the_code():
    code = torch_code(W70, PLANS[0])
    assert 'init_device_mesh("cuda", (8, 2, 4), mesh_dim_names=("pp", "dp", "tp"))' in code
    assert "n_microbatches=256" in code  # 512 sequences / (dp 2 x micro-batch 1)
    assert "keep = range(stage * 10, (stage + 1) * 10)" in code  # 80 layers / 8 stages
    inter = torch_code(W70, PLANS[1])
    assert "ScheduleInterleaved1F1B(stages," in inter and "num_stages=8" in inter and "checkpoint_wrapper(block)" in inter
    assert "keep = range([0, 19, 40, 61, 80][stage], [0, 19, 40, 61, 80][stage + 1])" in torch_code(W70, PLANS[5])
    assert "fully_shard" not in torch_code(W70, PLANS[4]) and "reshard_after_forward=False" in torch_code(W70, PLANS[2])


@pytest.mark.parametrize("plan", [ps.Plan(dp=8, zero=1), ps.Plan(dp=8), ps.Plan(pp=8, schedule="zb-h1"),
                                  ps.Plan(dp=8, zero=3, shard=4)])
def test_plans_the_generator_cannot_write_are_refused(plan):
    with pytest.raises(ParallelselError):
        torch_code(W70, plan)


def test_the_search_plan_of_the_page_exports_consistently():
    cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8, gpus_per_node=8)
    titan = ps.Workload(W70.model, global_batch=W70.global_batch, stack="torchtitan")  # the page's job, PyTorch-native
    ranked = search(titan, cluster, top=20, fixed={"cp": 1, "stage_layers": None}).results  # as the page pins it
    plan = next(r.plan for r in ranked if r.plan.dp > 1 and r.plan.tp > 1 and r.plan.pp > 1 and r.plan.zero == 3)
    ast.parse(torch_code(titan, plan))
    toml = tomllib.loads(export(titan, plan, "torchtitan"))
    par = toml["parallelism"]
    degrees = par["data_parallel_replicate_degree"] * par["data_parallel_shard_degree"] * par["tensor_parallel_degree"] \
        * par["pipeline_parallel_degree"]
    assert degrees == plan.gpus == cluster.gpus
    assert "launcher_pp_zero" in [c for c, _ in refusals(W70, plan, "megatron")]
