# Where a DeepSpeed 2021 ZeRO-3 step of GPT-3 175B goes (parallelsel.course.zero3_timeline): kernels, the time the
# link is busy (and the part of it that is ring latency, (n - 1) alpha per call), and the wall clock.
from parallelsel.course.measured import run_estimate
from parallelsel.core.placement import group_link
from parallelsel.course.references import NARAYANAN_ZERO3
from parallelsel.render.tables import markdown_table
from parallelsel.render.units import fmt_time
from parallelsel.course.zero3_timeline import deepspeed_zero3_timeline

out = []
for run in (r for r in NARAYANAN_ZERO3 if r.zero == 3 and "175B" in r.label):
    e = run_estimate(run)
    t = deepspeed_zero3_timeline(e.workload, e.plan, e.cluster)
    alpha = group_link(e.cluster, run.gpus, run.gpus, 1).latency
    busy = t.gather + t.reduce_scatter
    out.append([run.gpus, run.micro_batch, fmt_time(t.compute), fmt_time(t.gather), fmt_time(t.reduce_scatter),
                fmt_time(t.calls * (run.gpus - 1) * alpha), fmt_time(max(0.0, t.compute + busy - t.total)),
                fmt_time(e.step.total)])
print(markdown_table(["GPU 数", "微批次", "算子", "all-gather", "reduce-scatter", "其中环上延迟", "被计算掩盖",
                      "每步"], out, align="rrrrrrrr"))
