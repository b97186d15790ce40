# C_device: what the driver reports, minus what the runtime takes before the first tensor, minus a headroom.
import parallelsel as ps
from parallelsel import memory
from parallelsel.render.tables import fmt_bytes, fmt_pct, markdown_table
from parallelsel.render.reasons import plan_label

plan = ps.Plan(dp=8, tp=8)      # a typical hybrid plan: world, DP and TP process groups
rows = []
for key in ("a100-80gb", "h100-sxm-80gb", "h200-141gb"):
    d = ps.DEVICES[key]
    rows.append([d.name, f"{d.memory / 2**20:,.0f} MiB", fmt_bytes(d.memory), fmt_bytes(memory.runtime_reserve(plan)),
                 fmt_bytes(memory.usable_memory(d, plan)), fmt_bytes(memory.budget(d, plan))])
print(f"方案 {plan_label(plan)}：{memory.communicators(plan)} 个 NCCL 通信组，"
      f"每个约 {fmt_bytes(memory.NCCL_COMMUNICATOR_BYTES, 'MiB', 0)}；CUDA 上下文约 "
      f"{fmt_bytes(memory.CUDA_CONTEXT_BYTES, 'MiB', 0)}；默认预留比例 {fmt_pct(memory.DEFAULT_HEADROOM, 0)}，"
      f"余量低于 {fmt_pct(memory.TIGHT_MARGIN, 0)}（偏紧门槛）的方案照样接受、标为偏紧\n")
print(markdown_table(["卡", "nvidia-smi 报告", "合 GiB", "运行时预留", "可用 C_device", "上限（可用 ×(1−预留比例)）"], rows,
                     align="lrrrrr"))
