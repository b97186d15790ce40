# Exercise 1, answer: each case's full training state and one layer's state against one card.
from parallelsel.matrix import paper_cases
from parallelsel.render.tables import fmt_bytes, markdown_table

rows = []
for name, w, c in paper_cases():
    m, r, cap = w.model, w.recipe, c.device.memory
    states = r.per_param * m.params           # weights + grads + optimizer for the whole model
    layer = r.per_param * m.layer_params      # the same for one transformer layer
    verdict = ("整模型放得下" if states <= cap else
               "状态超单卡，一层放得下" if layer <= cap else "单层就超单卡")
    rows.append([name, fmt_bytes(states), fmt_bytes(layer), fmt_bytes(cap), verdict])
print(markdown_table(["案例", "完整训练状态", "一层的训练状态", "单卡", "属于"], rows, align="lrrrl"))
