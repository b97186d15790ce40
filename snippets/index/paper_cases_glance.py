# The lesson's three paper cases at a glance: one verdict per strategy, computed by the selection matrix.

from parallelsel.core.matrix import selection_matrix
from parallelsel.render.tables import markdown_table
from parallelsel.render.lesson_text import named_paper_cases, verdict_word

rows = []
for name, work, cluster in named_paper_cases():
    verdicts = {row.strategy: verdict_word(row.verdict) for row in selection_matrix(work, cluster)}
    setting = f"{work.model.name}，{cluster.gpus} × {cluster.device.name}"
    rows.append([name, setting] + [verdicts[s] for s in ("DP", "FSDP", "TP", "PP")])
print(markdown_table(["案例", "模型与集群", "DP", "FSDP", "TP", "PP"], rows, align="llcccc"))
