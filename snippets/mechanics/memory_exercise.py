# Exercise: (1) is pure DP possible for Llama-3 8B on an A100-80GB? (2) smallest FSDP degree that fits Llama-3 70B on H100.
import parallelsel as ps
from parallelsel import memory
from parallelsel.render.tables import fmt_bytes

m8 = ps.MODELS["llama3-8b"]
a100 = ps.DEVICES["a100-80gb"]
m_model = memory.model_states(m8.params, ps.RECIPES["bf16-adam"]).total
print(f"(1) {m8.name}: M_model = {fmt_bytes(m_model)}，C_device = {fmt_bytes(a100.memory)}，"
      f"纯 DP {'被排除' if m_model > a100.memory else '不被容量排除'}")

m70 = ps.MODELS["llama3-70b"]
h100 = ps.DEVICES["h100-sxm-80gb"]
workload = ps.Workload(m70, global_batch=1024)
for recompute in ("selective", "full"):
    for P in (2**k for k in range(0, 11)):
        total = memory.breakdown(workload, ps.Plan(dp=P, zero=3, recompute=recompute)).total
        if total <= h100.memory:
            print(f"(2) {m70.name}，重算={recompute}：最小 P = {P}（每卡 {fmt_bytes(total)}）")
            break
    else:
        print(f"(2) {m70.name}，重算={recompute}：P 到 1024 仍放不下（每卡 {fmt_bytes(total)}），要另加 TP/PP 或 SP/CP 切激活")
