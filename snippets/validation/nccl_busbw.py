# The collective model beside published nccl-tests figures: all-reduce bus bandwidth over two 8-GPU nodes.
from dataclasses import replace

import parallelsel as ps
from parallelsel.core.placement import group_placement
from parallelsel.course.references import NCCL_BUSBW
from parallelsel.render.tables import fmt_pct, fmt_rate, markdown_table

N, RANKS = 8 * 2**30, 16          # an 8 GiB buffer (bandwidth-bound) over two nodes of 8 GPUs
rows, worst = [], 0.0
for f in NCCL_BUSBW:
    inter = ps.LINKS[f.inter] if f.inter else replace(ps.LINKS[f.port], per="node", nics=f.hcas)
    cluster = ps.Cluster(ps.DEVICES[f.device], nodes=2, gpus_per_node=8, inter=inter)
    g = group_placement(cluster, RANKS, RANKS, 1)
    t = ps.comm.collective_time("all-reduce", N, RANKS, g.link)
    busbw = ps.comm.bus_factor("all-reduce", RANKS) * N / t   # nccl-tests doc/PERFORMANCE.md
    diff = busbw / f.busbw - 1
    worst = max(worst, abs(diff))
    rows.append([f.label, cluster.nics_per_node, g.rings, g.link.name, fmt_rate(busbw), fmt_rate(f.busbw), fmt_pct(diff),
                 f.source])
print(markdown_table(["节点", "每节点网卡", "每节点的环", "限速的链路", "本库", "nccl-tests 公开值", "相对差", "出处"], rows,
                     align="lrrlrrrl"))
print(f"\n最大相对差 {fmt_pct(worst)}。")
assert worst <= 0.15, worst   # tests/test_placement.py checks the same figures within 15%
