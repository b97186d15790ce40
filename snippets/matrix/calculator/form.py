"""The calculator's form: every choice comes from the library's preset catalogues and the CLI's defaults."""

import html
import json

import parallelsel as ps
from parallelsel.render import calculator, cli
from parallelsel.core.model import ARCHITECTURES, ATTENTION
from parallelsel.render.lesson_text import named_paper_cases

defaults = cli.build_parser().parse_args(["plan"])  # the CLI's own defaults: the page starts where the command does
DEFAULT_MODEL = "llama3-70b"


def options(catalogue, selected, empty=None):
    out = [f'<option value="">{html.escape(empty)}</option>'] if empty else []
    for key, item in catalogue.items():
        sel = " selected" if key == selected else ""
        out.append(f'<option value="{key}"{sel}>{html.escape(item.name)}（{key}）</option>')
    return "".join(out)


def field(name, label, control):
    control = control.replace(f'<select name="{name}"', f'<select name="{name}" id="calc-{name}"', 1)
    message = (f'<span class="ps-calc-msg" id="calc-{name}-msg" aria-live="polite"></span>'
               if "data-rule" in control else "")
    return f'<span class="ps-calc-field"><label for="calc-{name}">{label}</label>{control}{message}</span>'


RULES = calculator.field_rules()  # each number field's rule, read from the CLI flag it becomes


def number(name, value=None, placeholder="", required=False):
    """A text box the page checks with the CLI's own rule for the flag (``data-rule``); a message goes beside it.

    Plain text, not ``type=number``: a browser empties a number box it cannot parse (``4-``) without telling the page,
    which would then run on the default instead of saying what is wrong.
    """
    rule = {**RULES[name], **({"required": True} if required else {})}
    shown = "" if value is None else f"{value:g}" if isinstance(value, float) else str(value)
    return (f'<input type="text" name="{name}" id="calc-{name}" value="{html.escape(shown)}" '
            f'inputmode="{"numeric" if rule["kind"] == "integer" else "decimal"}" autocomplete="off" '
            f'placeholder="{html.escape(placeholder)}" data-rule="{html.escape(json.dumps(rule))}" '
            f'aria-describedby="calc-{name}-msg">')


def key_of(catalogue, value):
    return next((k for k, v in catalogue.items() if v == value), None)


# The paper cases (选择矩阵) whose model and device are presets, as one-click fillings of the form.
scenarios = []
for name, workload, cluster in named_paper_cases():
    model, device = key_of(ps.MODELS, workload.model), key_of(ps.DEVICES, cluster.device)
    if model and device:
        scenarios.append((name, {"model": model, "device": device, "nodes": cluster.nodes,
                                 "gpus_per_node": cluster.gpus_per_node, "global_batch": workload.global_batch,
                                 "seq_len": workload.seq_len, "intra": key_of(ps.LINKS, cluster.intra) or "",
                                 "inter": key_of(ps.LINKS, cluster.inter) or "", "recipe": "",
                                 "stack": workload.stack}))

shape = "".join(field(n, label, number(n)) for n, label in [
    ("layers", "层数 layers"), ("hidden", "隐藏维度 hidden"), ("heads", "注意力头数 heads"),
    ("kv_heads", "KV 头数（GQA，可空）"), ("head_dim", "每头宽度（可空，默认 hidden÷heads）"), ("ffn_hidden", "FFN 宽度（可空）"),
    ("vocab", "词表大小（可空）"), ("experts", "MoE 专家数（可空，默认稠密）"), ("top_k", "每个词元选的专家数 top-k（可空）")])
shape += field("architecture", "结构", '<select name="architecture"><option value="">gpt（默认）</option>'
               + "".join(f'<option value="{k}">{k}</option>' for k in ARCHITECTURES if k != "gpt") + "</select>")
assert set(calculator.SHAPE_FIELDS) == {"layers", "hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "vocab",
                                        "experts", "top_k", "architecture"}

attention = "".join(f'<option value="{k}"{" selected" if k == (defaults.attention or ps.Workload.attention) else ""}>{k}</option>' for k in ATTENTION)


buttons = "".join(
    f'<button type="button" class="md-button ps-calc-scenario" data-fill="{html.escape(json.dumps(values))}">'
    f'{html.escape(name)}</button>' for name, values in scenarios)

print(f"""<form id="calc-form" class="ps-calc" data-assets="../../assets/calculator/" data-search-exclude novalidate hidden>
<p class="ps-calc-scenarios">选择矩阵里的案例：{buttons}</p>
<fieldset><legend>模型与训练</legend>
{field("model", "模型", f'<select name="model">{options(ps.MODELS, DEFAULT_MODEL)}<option value="{calculator.CUSTOM}">自定义形状…</option></select>')}
<div class="ps-calc-shape" hidden>{shape}</div>
{field("seq_len", "序列长度 seq_len", number("seq_len", placeholder="模型的默认值"))}
{field("global_batch", "全局批量（序列数）", number("global_batch", placeholder="不填：未知"))}
{field("recipe", "精度与优化器", f'<select name="recipe">{options(ps.RECIPES, defaults.recipe, "框架栈自己的配方")}</select>')}
{field("attention", "注意力内核 attention", f'<select name="attention">{attention}</select>')}
{field("compile", "执行方式", '<select name="compile"><option value="">框架默认（eager 或 TE）</option><option value="on">torch.compile</option></select>')}
</fieldset>
<fieldset><legend>集群</legend>
{field("device", "GPU", f'<select name="device">{options(ps.DEVICES, defaults.device)}</select>')}
{field("nodes", "节点数", number("nodes", 1 if defaults.nodes is None else defaults.nodes, required=True))}
{field("gpus_per_node", "每节点卡数", number("gpus_per_node", cli.DEFAULT_GPUS_PER_NODE if defaults.gpus_per_node is None
                                             else defaults.gpus_per_node, required=True))}
{field("intra", "节点内互联", f'<select name="intra">{options(ps.LINKS, None, "不说明（按默认估算）")}</select>')}
{field("inter", "节点间互联", f'<select name="inter">{options(ps.LINKS, None, "默认")}</select>')}
{field("headroom", "预留比例 headroom（占可用显存的比例）", number("headroom", defaults.headroom, required=True))}
</fieldset>
<p><button type="submit" class="md-button">运行</button>
<button type="button" id="calc-cancel" class="md-button" hidden>取消</button>
<progress id="calc-progress" max="1" value="0" hidden></progress> <span id="calc-status" role="status" aria-live="polite"></span></p>
</form>
<div id="calc-result" aria-live="polite" data-search-exclude></div>""")
