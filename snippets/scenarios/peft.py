# Small model + LoRA against full fine-tuning: trainable parameters, memory per GPU and GPUs needed.
# LoRA (Hu et al. 2021, §4): each adapted d_in x d_out matrix gains r x (d_in + d_out) trainable parameters;
# the base weights are frozen in bf16, so only the adapters carry gradients and Adam state.
import parallelsel as ps

from parallelsel.core.memory import ALLOCATOR_OVERHEAD, activations_per_layer, budget, logits_activations, model_states
from parallelsel.render.memory_charts import memory_bars
from parallelsel.render.style import figure_html  # markdown-exec: hide
from parallelsel.render.tables import fmt_bytes, fmt_count, markdown_table
from parallelsel.core.search import search
import markdown  # markdown-exec: hide
from parallelsel.render.reasons import plan_label
from parallelsel.render.lesson_text import named_paper_cases

RANK = 16
small, recipe = ps.MODELS["llama2-7b"], ps.RECIPES["bf16-adam"]
a100 = ps.DEVICES["a100-80gb"]
work_small = ps.Workload(small, global_batch=64)

# LoRA on the four attention projections of every layer: Q, O (h x h) and K, V (h x kv_dim).
h, kv = small.hidden, small.kv_dim
lora = small.layers * RANK * (2 * (h + h) + 2 * (h + kv))
states = model_states(lora, recipe)                                # adapters: weights, grads, Adam
frozen = recipe.weights * small.params                             # the base model, bf16, no grads, no optimizer
acts = small.layers * activations_per_layer(small, 1, recompute="selective") + logits_activations(small, 1)
lora_parts = {"params": frozen + states.params, "grads": states.grads, "optimizer": states.optimizer,
              "activations": acts}
lora_parts["allocator"] = ALLOCATOR_OVERHEAD * sum(lora_parts.values())

options = [("LoRA 微调 " + small.name, lora, 1, lora_parts)]
full_small = search(work_small, ps.Cluster(a100, nodes=1, gpus_per_node=8), top=1).best
name, work_big, cluster_big = named_paper_cases()[1]
full_big = search(work_big, cluster_big, top=1).best
for label, best in (("全参数 " + small.name, full_small), ("全参数 " + work_big.model.name, full_big)):
    mem = best.estimate.memory.as_dict()
    parts = {k: mem[k] for k in ("params", "grads", "optimizer")}
    parts["activations"] = mem["activations"] + mem["embeddings"] + mem["gather_peak"]
    parts["allocator"] = mem["allocator"]
    options.append((label + "（" + plan_label(best.plan) + "）", best.estimate.workload.model.params, best.plan.gpus, parts))

rows = [[label.split("（")[0], fmt_count(trainable), gpus, fmt_bytes(sum(parts.values())), label.partition("（")[2][:-1] or "单卡"]
        for label, trainable, gpus, parts in options]
table = markdown_table(["做法", "可训练参数", "GPU 数", "每卡内存", "方案"], rows, align="lrrrl")
keys = ("params", "grads", "optimizer", "activations", "allocator")
svg = memory_bars([label.split("（")[0] for label, *_ in options], {k: [o[3][k] for o in options] for k in keys},
                  title="每卡内存：LoRA 与全参数微调", capacities=[(f"{a100.name} 单卡上限", budget(a100, ps.Plan()))],
                  salt="scn-peft")
print(markdown.markdown(f"LoRA 秩 r = {RANK}，可训练参数占 {small.name} 的 {lora / small.params:.2%}\n\n" + table,
                        extensions=["tables"]))  # markdown-exec: hide
print(figure_html(svg, "LoRA 只给少量适配器参数配梯度和优化器状态，小模型单卡就能放下；全参数微调要把状态分到多卡甚至多节点"))  # markdown-exec: hide
