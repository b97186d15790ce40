# The papers' measured runs: each published plan beside the plan search's pick on the same job, timed by one model
# (estimate): step of the published plan over step of the pick, with the run's recompute mode and the options its
# software offered pinned (course.measured.era_pins); which fields differ, and what measurement would decide.
import markdown  # markdown-exec: hide
from parallelsel.core.search import TIE
from parallelsel.course.measured import published_vs_pick
from parallelsel.course.references import MEASURED_RUNS, NARAYANAN_ZERO3
from parallelsel.render.comparisons import pick_summary, pick_table
from parallelsel.render.tables import fmt_pct, folded_html
from parallelsel.render.units import fmt_bytes

cases = [published_vs_pick(r) for r in MEASURED_RUNS + NARAYANAN_ZERO3]
refused = [c for c in cases if c.ratio is None]
assert len(refused) <= 1  # every published plan fits but one DeepSpeed row (see the note below)
print(pick_summary("论文的实测（Megatron-LM 与 DeepSpeed，A100）", cases, TIE) + "\n")
for c in refused:
    e = c.published
    # The page's claim: the gap is inside the model's own margins (the headroom and the allocator's share).
    assert e.memory.total - e.budget <= e.usable * e.headroom + e.memory.allocator, c.run.label
    print(f"放不下的公布方案：{c.run.label}：本库估每卡 {fmt_bytes(e.memory.total)}，上限 {fmt_bytes(e.budget)}"
          f"（可用 {fmt_bytes(e.usable)} 减去预留比例 {fmt_pct(e.headroom)}），差 {fmt_bytes(e.memory.total - e.budget)}。\n")
print(folded_html("深入：论文每一行的公布方案、本库首选与差距",  # markdown-exec: hide
                  markdown.markdown(pick_table(cases), extensions=["tables"])))  # markdown-exec: hide
