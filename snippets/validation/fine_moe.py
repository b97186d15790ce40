# Fine-routed MoE runs (128 experts, top-8) Megatron-Bridge measured on DGX-H100, each with the plan and recipe its
# perf script sets: the model's step split into compute, exposed communication and bubble, beside the measured step.
from parallelsel.course.measured import compare_stack
from parallelsel.course.stack_runs import (MEGATRON_BRIDGE_MOE_H100, QWEN3_30B_RELEASES,
                                           QWEN3_30B_RELEASES_SOURCE)
from parallelsel.render.reasons import plan_label
from parallelsel.render.tables import markdown_table
from parallelsel.render.units import fmt_pct, fmt_time

ROW_LIMIT = 0.20     # issue 28's line for every row

rows = {c.run.model.name: c for c in map(compare_stack, MEGATRON_BRIDGE_MOE_H100)}
print("；".join(f"{m.name}：{m.experts} 个专家选 {m.top_k} 个，专家的 FFN 宽 {m.ffn_hidden}，隐藏维 {m.hidden}"
               for m in (c.run.model for c in rows.values())) + "。\n")
table = []
for name, c in rows.items():
    e = c.estimate
    measured = c.run.global_batch * c.run.seq_len / (c.published * c.run.gpus)   # seconds a step, from tokens/s/GPU
    table.append([name, f"{c.run.gpus} × H100", plan_label(e.plan), f"{c.published:g}", f"{c.predicted:.0f}",
                  f"{c.error:+.1%}", fmt_time(measured), fmt_time(e.step.total), fmt_time(e.step.compute),
                  fmt_time(e.step.communication), fmt_time(e.step.bubble)])
print(markdown_table(["模型", "卡", "方案", "实测 tokens/s/卡", "本库", "误差", "实测步时", "本库步时", "其中计算",
                      "暴露的通信", "气泡"], table, align="llllrrrrrrr"))

big, small = rows["Qwen3-235B-A22B"], rows["Qwen3-30B-A3B"]
gap = small.run.global_batch * small.run.seq_len / (small.published * small.run.gpus) - small.estimate.step.total
print(f"\n{small.run.model.name} 的实测步时比本库的估计长 {fmt_time(gap)}，"
      f"相当于本库估计的计算时间的 {fmt_pct(gap / small.estimate.step.compute, 0)}，"
      f"或者暴露通信的 {fmt_pct(gap / small.estimate.step.communication, 0)}：差在哪一边，只凭公布的吞吐分不出来。")
(old_release, old_tps), (new_release, new_tps) = QWEN3_30B_RELEASES
print(f"\n另有一个 {small.run.model.name} 作业（{small.run.gpus} 张 H100、FP8，方案与上表不同），在 {old_release} 与 "
      f"{new_release} 两个相邻的容器版本里方案没有变，公布的吞吐却分别是 {old_tps} 与 {new_tps} tokens/s/卡，"
      f"相差 {new_tps / old_tps:.1f} 倍。")
print("\n来源：" + "；".join(c.run.source for c in rows.values()) + f"；两个版本的对比：{QWEN3_30B_RELEASES_SOURCE}。")
# The reading: the large model, whose experts' GEMMs are big and whose exchange hides under compute, is close; the
# small one, with experts a quarter as wide and the exchange on the critical path, is priced fast past the row line.
assert abs(big.error) <= 0.10 and small.error > ROW_LIMIT
assert small.run.model.ffn_hidden * 2 == big.run.model.ffn_hidden and small.estimate.step.communication > 0
assert big.estimate.plan.ep_overlap and not small.estimate.plan.ep_overlap
# ... and one job's published rate moved by more than the row line between two containers of one release.
assert new_tps / old_tps - 1 > 2 * ROW_LIMIT
