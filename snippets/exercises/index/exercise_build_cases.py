# Exercise 1, answer: build the three paper cases from one card's capacity, then check them and the site's own three.
import math

import parallelsel as ps

from parallelsel.render.tables import fmt_bytes, fmt_count, markdown_table
from parallelsel.render.lesson_text import named_paper_cases

device, recipe = ps.DEVICES["a100-80gb"], ps.RECIPES["bf16-adam"]
cap, per_param = device.memory, recipe.per_param
# Case 1 needs the whole state on one card: at most cap / per_param parameters.
max_params = cap / per_param
# Case 3 needs one layer's state above the card. A GPT layer holds about 12 h^2 weights, so h > sqrt(cap / (12 per_param)).
min_hidden = math.sqrt(cap / (12 * per_param))
print(f"单卡 {device.name} {fmt_bytes(cap)}，每参数 {per_param:g} 字节（{recipe.name}）：\n")
print(f"- 情形一要求整模型参数 ≤ {fmt_count(max_params)}；")
print(f"- 情形三要求一层的状态超过单卡，GPT 式层约 12h² 个权重，即隐藏维度 h > {min_hidden:,.0f}。\n")


def shape(hidden, layers):
    """A GPT-style shape (head size 128) with the given width and depth."""
    return ps.Transformer(layers=layers, hidden=hidden, heads=hidden // 128, seq_len=2048, vocab=50304)


def snap(x):
    return 128 * math.ceil(x / 128)   # widths are multiples of the head size


own = {
    "情形一：整模型放得下": shape(hidden=2048, layers=24),
    "情形二：状态超单卡，一层放得下": shape(hidden=8192, layers=64),
    "情形三：单层就超单卡": shape(hidden=snap(min_hidden * 1.1), layers=4),
}


def regime(model, recipe, device):
    """Which of the three cases a model is in, from its training state alone (no activations)."""
    states, layer = recipe.per_param * model.params, recipe.per_param * model.layer_params
    return states, layer, ("整模型放得下" if states <= device.memory else
                           "状态超单卡，一层放得下" if layer <= device.memory else "单层就超单卡")


rows = []
checks = [(name, m, recipe, device) for name, m in own.items()]
checks += [(f"本站的{name}", w.model, w.recipe, c.device) for name, w, c in named_paper_cases()]
for name, m, r, d in checks:
    states, layer, got = regime(m, r, d)
    rows.append([name, f"h={m.hidden:,}，{m.layers} 层", fmt_count(m.params), d.name, fmt_bytes(states), fmt_bytes(layer), got])
print(markdown_table(["案例", "形状", "参数量", "单卡", "完整训练状态", "一层的训练状态", "实际属于"], rows, align="llrlrrl"))
