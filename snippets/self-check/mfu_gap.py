# Self-check 7: why the MFU of paper case 2's best plan is below the rate its kernels reach.

from parallelsel.render.tables import markdown_table
from parallelsel.core.search import search
from parallelsel.render.reasons import plan_label
from parallelsel.render.lesson_text import named_paper_cases

name, work, cluster = named_paper_cases()[1]
e = search(work, cluster, top=1).best.estimate
st = e.step
model_flops = work.model.model_flops_per_token(work.seq_len) * work.tokens
train_flops = work.model.flops_per_token(e.plan.recompute, work.seq_len) * work.tokens
# The kernel model's compute time, read back as a share of peak (GEMM shapes, attention, memory-bound work); the
# SMs hidden collectives hold (StepTime.contention) count with the communication.
achieved = train_flops / (st.kernels * cluster.device.peak_flops * e.plan.gpus)
recompute = st.kernels * (1 - model_flops / train_flops)
comm = st.communication + st.contention
assert abs(achieved * (1 - (recompute + comm + st.bubble) / st.total) - st.mfu) < 1e-9
rows = [["算子按本方案的矩阵形状实际达到的峰值占比", f"{achieved:.1%}"],
        ["其中花在重算上的步时占比", f"{recompute / st.total:.1%}"],
        ["通信占比（暴露的部分，加上藏住的部分让 NCCL 占去 SM 的代价）", f"{comm / st.total:.1%}"],
        ["气泡占比", f"{st.bubble / st.total:.1%}"],
        ["MFU = 算子实际效率 × (1 − 以上三项)", f"{st.mfu:.1%}"]]
print(f"{name}：{plan_label(e.plan)}\n")
print(markdown_table(["量", "值"], rows, align="lr"))
