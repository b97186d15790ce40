# The chosen plan as PyTorch code (torch.distributed: device mesh, pipeline split, TP plan, FSDP2, pipelining schedule),
# generated from the plan by parallelsel.render.plan_code and checked against torch 2.13 (tests/test_plan_code.py).
import ast

import parallelsel as ps
from parallelsel.core.search import search
from parallelsel.render.plan_code import torch_code, torch_sections

workload = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512, stack="torchtitan")  # PyTorch-native: FSDP2 + TP + pipelining
cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8, gpus_per_node=8)
ranked = search(workload, cluster, top=20, fixed={"cp": 1, "stage_layers": None}).results  # what the generator covers
plan = next(r for r in ranked if r.plan.dp > 1 and r.plan.tp > 1 and r.plan.pp > 1 and r.plan.zero == 3).plan
ast.parse(torch_code(workload, plan))  # the whole module parses

captions = {
    "imports": "导入：全部来自 `torch.distributed`（名字已对照 torch 2.13 检查，见页末）。",
    "mesh": f"① 设备网格：{plan.gpus} 张卡排成 pp × dp × tp 三维，最后一维（TP）的相邻编号落在同一节点里。",
    "pipeline": "② 流水线切段：每个 pp 编号只留下自己那一段的层，首段留词嵌入，末段留输出层。",
    "tp": "③ 张量并行计划：每个 Transformer 块里 Q/K/V 与 MLP 的输入矩阵按列切，输出矩阵按行切；开了序列并行时归一化按序列切。",
    "fsdp": "④ FSDP：先对每个块、再对整段调用 `fully_shard`，在 dp 维上分片；`reshard_after_forward=True` 即 ZeRO-3。",
    "schedule": "⑤ 流水线 stage 与调度：每个 pp 编号一个 `PipelineStage`，按方案的调度建 schedule，微批次数由全局批量算出。",
}
for key, code in torch_sections(workload, plan).items():
    if code:
        print(captions[key] + "\n\n```python\n" + code + "```\n")
