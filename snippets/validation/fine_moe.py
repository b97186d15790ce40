# Fine-routed MoE runs (128 experts, top-8) Megatron-Bridge measured on DGX-H100, each with the plan and recipe its
# perf script sets: the model's step split into compute, exposed expert communication and bubble, beside the
# measured step.
from parallelsel.core.kernels import layer_gemms
from parallelsel.course.measured import ROW_LIMIT, compare_stack
from parallelsel.course.stack_runs import (MEGATRON_BRIDGE_MOE_H100, QWEN3_30B_RELEASES,
                                           QWEN3_30B_RELEASES_SOURCE)
from parallelsel.render.reasons import plan_label
from parallelsel.render.tables import markdown_table
from parallelsel.render.units import fmt_pct, fmt_time


def measured_step(c):
    """Seconds a step took, from the published tokens/s per GPU."""
    return c.run.global_batch * c.run.seq_len / (c.published * c.run.gpus)


def routed(c):
    """Tokens each local expert receives per micro-batch (balanced routing): the experts' first GEMM's rows."""
    e, p = c.estimate, c.estimate.plan
    tokens = p.micro_batch * c.run.seq_len // p.cp
    return next(g.m for g in layer_gemms(e.workload.model, tokens, p.tp, p.ep, p.etp) if g.name == "fc1")


rows = {c.run.model.name: c for c in map(compare_stack, MEGATRON_BRIDGE_MOE_H100)}
exposed_ep = {name: dict(c.estimate.step.exposed).get("EP", 0.0) for name, c in rows.items()}
print("；".join(f"{m.name}：{m.experts} 个专家选 {m.top_k} 个，专家的 FFN 宽 {m.ffn_hidden}，隐藏维 {m.hidden}，"
               f"每个专家每个微批次分到 {routed(c)} 个词元" for m, c in ((c.run.model, c) for c in rows.values())) + "。\n")
table = []
for name, c in rows.items():
    e = c.estimate
    table.append([name, f"{c.run.gpus} × H100", plan_label(e.plan), f"{c.published:g}", f"{c.predicted:.0f}",
                  f"{c.error:+.1%}", fmt_time(measured_step(c)), fmt_time(e.step.total), fmt_time(e.step.compute),
                  f"{fmt_time(exposed_ep[name])}（{fmt_pct(exposed_ep[name] / e.step.total, 0)}）"])
print(markdown_table(["模型", "卡", "方案", "实测 tokens/s/卡", "本库", "误差", "实测步时", "本库步时", "其中计算",
                      "暴露的专家通信（占本库步时）"], table, align="llllrrrrrr"))

big, small = rows["Qwen3-235B-A22B"], rows["Qwen3-30B-A3B"]
gap = measured_step(small) - small.estimate.step.total
print(f"\n{small.run.model.name} 的实测步时比本库的估计长 {fmt_time(gap)}，"
      f"相当于本库估计的计算时间的 {fmt_pct(gap / small.estimate.step.compute, 0)}，"
      f"或者暴露的专家通信的 {fmt_pct(gap / exposed_ep[small.run.model.name], 0)}：差在哪一边，只凭公布的吞吐分不出来。")
(old_release, old_tps), (new_release, new_tps) = QWEN3_30B_RELEASES
print(f"\n另有一组 {small.run.model.name} 的运行（{small.run.gpus} 张 H100、FP8，并行方案与上表不同），在 {old_release} 与 "
      f"{new_release} 两个相邻的容器版本里表中各并行度相同，公布的吞吐却分别是 {old_tps} 与 {new_tps} tokens/s/卡，"
      f"相差 {new_tps / old_tps:.1f} 倍。")
print("\n来源：" + "；".join(c.run.source for c in rows.values()) + f"；两个版本的对比：{QWEN3_30B_RELEASES_SOURCE}。")
# The reading: the large model is close, the small one priced fast past the row line; the large one's exposed expert
# communication is the larger share of its step, so the miss does not follow the exposed exchange's share.
assert abs(big.error) <= ROW_LIMIT / 2 and small.error > ROW_LIMIT
assert exposed_ep["Qwen3-235B-A22B"] / big.estimate.step.total > exposed_ep["Qwen3-30B-A3B"] / small.estimate.step.total
# ... with as many tokens per expert on both, the experts differing in width (the page's reading of the two shapes).
assert routed(small) == routed(big)
assert small.run.model.ffn_hidden < big.run.model.ffn_hidden and small.run.model.hidden < big.run.model.hidden
assert big.estimate.plan.ep_overlap and not small.estimate.plan.ep_overlap
# ... and one layout's published rate moved by more than twice the row line between two containers of one release.
assert new_tps / old_tps - 1 > 2 * ROW_LIMIT
