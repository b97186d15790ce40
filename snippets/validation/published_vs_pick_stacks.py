# The stacks' own measured runs (Megatron-Core, torchtitan): each published plan beside the plan search's pick on the
# same job, timed by one model (estimate), with the run's recompute mode pinned; which fields differ, and what
# measurement would decide.
import markdown  # markdown-exec: hide
from parallelsel.core.search import TIE
from parallelsel.course.measured import published_vs_pick
from parallelsel.course.stack_runs import REFUSED, STACK_RUNS
from parallelsel.render.comparisons import pick_summary, pick_table
from parallelsel.render.tables import folded_html

cases = [published_vs_pick(r) for r in STACK_RUNS]
# Every stack's published plan fits but those the stack-runs table above explains (the allocator allowance).
refused = [c.run.label for c in cases if c.ratio is None]
assert tuple(refused) == REFUSED
print(pick_summary("各框架自己的实测", cases, TIE) + f"另有 {len(refused)} 行公布的方案本库判为放不下（见上文），表中列出而不比较。\n")
print(folded_html("深入：各框架每一行的公布方案、本库首选与差距",  # markdown-exec: hide
                  markdown.markdown(pick_table(cases), extensions=["tables"])))  # markdown-exec: hide
