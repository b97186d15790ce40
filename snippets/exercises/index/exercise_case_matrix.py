# Exercise 2, answer: the selection matrix of each paper case (DP, FSDP, TP, PP used alone), with reasons.

from parallelsel.core.matrix import selection_matrix
from parallelsel.render.matrix_tables import matrix_table, paper_cases_table, reasons_list
from parallelsel.render.tables import folded
from parallelsel.render.lesson_text import named_paper_cases

results = [(name, selection_matrix(w, c)) for name, w, c in named_paper_cases()]
print(paper_cases_table(results))
for name, rows in results:
    print(f"\n**{name}**\n")
    print(matrix_table(rows, reasons="short"))
    print(folded(f"{name}：每种策略的全部理由", reasons_list(rows)))
