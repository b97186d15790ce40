# Exercise: (1) is pure DP possible for a model on a device? (2) smallest FSDP degree that fits a larger model.
# --8<-- [start:givens]
import parallelsel as ps

small, big = ps.MODELS["llama3-8b"], ps.MODELS["llama3-70b"]
a100, h100 = ps.DEVICES["a100-80gb"], ps.DEVICES["h100-sxm-80gb"]
recipe, GLOBAL_BATCH = ps.RECIPES["bf16-adam"], 1024
print(f"第 1 题：{small.name} 在 {a100.name} 上，{recipe.name}。\n"
      f"第 2 题：{big.name} 在 {h100.name} 上只用 FSDP（ZeRO-3），全局批量 {GLOBAL_BATCH}。")
# --8<-- [end:givens]
from parallelsel import memory
from parallelsel.render.tables import fmt_bytes
from parallelsel.render.reasons import WORDS

m_model = memory.model_states(small.params, recipe).total
c_device = memory.usable_memory(a100, ps.Plan(dp=8))   # driver-reported memory minus CUDA context and NCCL
print(f"(1) {small.name}: M_model = {fmt_bytes(m_model)}，C_device = {fmt_bytes(c_device)}"
      f"（{a100.name} 驱动报告 {fmt_bytes(a100.memory)}），纯 DP {'被排除' if m_model > c_device else '不被容量排除'}")

workload = ps.Workload(big, recipe=recipe, global_batch=GLOBAL_BATCH)
degrees = [2**k for k in range(0, 11)]
for recompute in ("selective", "full"):
    for P in degrees:
        plan = ps.Plan(dp=P, zero=3, recompute=recompute)
        total = memory.breakdown(workload, plan).total
        if total <= memory.budget(h100, plan):    # usable memory x (1 - default headroom)
            print(f"(2) {big.name}，{WORDS['zh']['recompute'][recompute]}：最小 P = {P}（每卡 {fmt_bytes(total)}）")
            break
    else:
        print(f"(2) {big.name}，{WORDS['zh']['recompute'][recompute]}：P 到 {degrees[-1]} 仍放不下（每卡 {fmt_bytes(total)}），"
              "要另加 TP/PP 或 SP/CP 切激活")
