# Case 1 with the 全局批量 declared unknown: verdicts that depend on it become 需更多信息, naming the fact.
import parallelsel as ps
from parallelsel.render.reasons import text
from parallelsel.render.tables import markdown_table
from parallelsel.render.lesson_text import named_paper_cases, verdict_word

name, work, cluster = named_paper_cases()[0]
rows = ps.selection_matrix(work, cluster, unknown=("global_batch",))
print(markdown_table(["策略", "判断", "理由（节选）"],
                     [[r.strategy, verdict_word(r.verdict), text(r.reasons[-1])] for r in rows], align="lcl"))
