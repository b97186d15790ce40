# Each measured run's published plan beside the plan search's pick on the same job: the model's step for the
# published plan over its step for the pick (both from estimate; the run's recompute mode and the options its
# software offered pinned: course.measured.era_pins), which fields differ, and what measurement would decide.
import statistics

import markdown  # markdown-exec: hide
from parallelsel.core.search import TIE
from parallelsel.course.measured import published_vs_pick
from parallelsel.course.references import MEASURED_RUNS, NARAYANAN_ZERO3
from parallelsel.course.stack_runs import STACK_RUNS
from parallelsel.render.reasons import WORDS, plan_label
from parallelsel.render.tables import fmt_pct, folded_html, markdown_table
from parallelsel.render.units import fmt_bytes

sets = {"论文（Megatron-LM 与 DeepSpeed，A100）": MEASURED_RUNS + NARAYANAN_ZERO3, "各框架自己的实测": STACK_RUNS}
rows, summary, refused = [], [], []
for name, runs in sets.items():
    cs = [published_vs_pick(r) for r in runs]
    timed = [c for c in cs if c.ratio is not None]
    assert len(timed) >= len(cs) - 1  # every published plan fits but one DeepSpeed row (see the note below)
    summary.append(f"{name}：{len(timed)} 行，公布 ÷ 首选的中位数 {statistics.median(c.ratio for c in timed):.2f}，"
                   f"{sum(c.within_tie for c in timed)} 行在平局门槛 {fmt_pct(TIE)} 之内")
    for c in cs:
        if c.ratio is None:
            rows.append([c.run.label, plan_label(c.published.plan), "—（公布的方案本库判为放不下）", "—", "—", "—"])
            e = c.published
            # The page's claim: the gap is inside the model's own margins (the headroom and the allocator's share).
            assert e.memory.total - e.budget <= e.usable * e.headroom + e.memory.allocator, c.run.label
            refused.append(f"{c.run.label}：本库估每卡 {fmt_bytes(e.memory.total)}，上限 {fmt_bytes(e.budget)}"
                           f"（可用 {fmt_bytes(e.usable)} 减去预留比例 {fmt_pct(e.headroom)}），差 {fmt_bytes(e.memory.total - e.budget)}")
            continue
        same = not c.differ
        rows.append([c.run.label, plan_label(c.published.plan), "同一方案" if same else plan_label(c.pick.plan),
                     f"{c.ratio:.2f}", "—" if same else "、".join(f"`{f}`" for f in c.differ),
                     "—" if same or c.within_tie else "；".join(WORDS["zh"]["decide"][d] for d in c.decide)])
print("；".join(summary) + "。\n")
print("放不下的公布方案：" + "；".join(refused) + "。\n" if refused else "")
print(folded_html("深入：每一行的公布方案、本库首选与差距", markdown.markdown(  # markdown-exec: hide
    markdown_table(["运行", "公布的方案", "本库的首选", "步时比（公布 ÷ 首选）", "不同的字段", "差距超过门槛时，靠什么实测来分"],
                   rows, align="lllrll"), extensions=["tables"])))
