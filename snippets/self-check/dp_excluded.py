# Self-check 1: what rules out pure DP in each paper case (the selection matrix's own reason).

from parallelsel.core.matrix import selection_matrix
from parallelsel.render.reasons import join
from parallelsel.render.tables import markdown_table
from parallelsel.render.lesson_text import named_paper_cases, verdict_word

rows = []
for name, w, c in named_paper_cases():
    dp = selection_matrix(w, c)[0]
    rows.append([name, verdict_word(dp.verdict), join(dp.reasons[:1])])
print(markdown_table(["案例", "纯 DP", "理由"], rows, align="lcl"))
