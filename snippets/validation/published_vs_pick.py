# The papers' measured runs: each published plan beside the plan search's pick on the same job, timed by one model
# (estimate): step of the published plan over step of the pick, with the run's recompute mode and the options its
# software offered pinned (course.measured.era_pins); which fields differ, and what measurement would decide.
import markdown  # markdown-exec: hide
from parallelsel.core.memory import TIGHT_MARGIN
from parallelsel.core.search import TIE
from parallelsel.course.measured import published_vs_pick
from parallelsel.course.references import MEASURED_RUNS, NARAYANAN_ZERO3
from parallelsel.render.comparisons import pick_summary, pick_table
from parallelsel.render.tables import fmt_pct, folded_html
from parallelsel.render.units import fmt_bytes

cases = [published_vs_pick(r) for r in MEASURED_RUNS + NARAYANAN_ZERO3]
assert all(c.ratio is not None for c in cases)  # every published plan fits: each ran
assert [c.run.label for c in cases if c.published.tight] == ["ZeRO-3 530B 640"]  # the page's note names it
print(pick_summary("论文的实测（Megatron-LM 与 DeepSpeed，A100）", cases, TIE) + "\n")
for c in cases:
    e = c.published
    if e.tight:  # accepted, with less than TIGHT_MARGIN of the usable memory left (the note below)
        print(f"偏紧的公布方案：{c.run.label}：本库估每卡 {fmt_bytes(e.memory.total)}，可用 {fmt_bytes(e.usable)}，"
              f"只空出 {fmt_pct(e.margin, 1)}（偏紧门槛 {fmt_pct(TIGHT_MARGIN, 0)}）。\n")
print(folded_html("深入：论文每一行的公布方案、本库首选与差距",  # markdown-exec: hide
                  markdown.markdown(pick_table(cases), extensions=["tables"])))  # markdown-exec: hide
