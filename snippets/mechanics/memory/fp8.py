# FP8 training: what changes and what does not. Llama-3 70B on 64 H100s, the search's best BF16 plan, with its GEMMs
# at FP8's peak (the upper bound: every GEMM in FP8 at full rate); communication and model states unchanged.
import parallelsel as ps
from parallelsel.core.estimate import bubble_overhead_for
from parallelsel.core.memory import breakdown
from parallelsel.render.tables import fmt_bytes, fmt_time, markdown_table
from parallelsel.core.search import search
from parallelsel.render.reasons import plan_label

FP8_SPEEDUP = 2.0   # H100 SXM datasheet: 1,979 dense FP8 TFLOPS vs 989 BF16, the GEMM ceiling; nothing else speeds up
work = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512)
cluster = ps.Cluster(ps.DEVICES["h100-sxm-80gb"], nodes=8, gpus_per_node=8)
best = search(work, cluster, top=1).best
st, plan = best.estimate.step, best.plan
compute = st.kernels / FP8_SPEEDUP + st.contention  # (the SMs NCCL holds: as the traffic)
bubble = bubble_overhead_for(plan, plan.microbatches(work)) * (compute + st.critical)
fp8_total = compute + st.communication + bubble
mem = breakdown(work, plan, cluster.device)
rows = [["计算", fmt_time(st.compute), fmt_time(compute)],
        ["暴露的通信", fmt_time(st.communication), fmt_time(st.communication)],
        ["气泡", fmt_time(st.bubble), fmt_time(bubble)],
        ["每步合计", fmt_time(st.total), fmt_time(fp8_total)],
        ["模型状态（权重 + 梯度 + 优化器）每卡", fmt_bytes(mem.params + mem.grads + mem.optimizer),
         fmt_bytes(mem.params + mem.grads + mem.optimizer)]]
print(f"{work.model.name}，{cluster.gpus} × {cluster.device.name}，{plan_label(plan)}；"
      f"FP8 列按全部 GEMM 以 FP8 峰值（BF16 的 {FP8_SPEEDUP:g} 倍）计，是上限\n")
print(markdown_table(["", "BF16", "FP8（上限）"], rows, align="lrr"))
print(f"\n整步最多快 {st.total / fp8_total:.2f} 倍，不到 {FP8_SPEEDUP:g} 倍：通信 {fmt_time(st.communication)} 一点没少，"
      f"它在步时里的占比从 {st.communication / st.total:.0%} 升到 {st.communication / fp8_total:.0%}。")
