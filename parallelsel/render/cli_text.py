"""What the ``parallelsel`` command prints for people: help texts, headers and each subcommand's report.

:mod:`parallelsel.render.cli` parses arguments, calls the library and prints JSON; every sentence and table it shows a
person is written here (Chinese, with the English term beside it where the lesson gives one). Reasons come
from :mod:`parallelsel.render.reasons` in the language asked for (``--lang``).
"""

from __future__ import annotations

from parallelsel.render.reasons import join, plan_label, text
from parallelsel.render.tables import fmt_bytes, fmt_count, fmt_flops, fmt_pct, fmt_rate, fmt_time, markdown_table
from .lesson_text import verdict_word

__all__ = ["ERROR", "HELP", "bubble_text", "calibration_text", "fix_text", "header", "keys_text", "matrix_text",
           "memory_text", "plan_text", "presets_text", "why_text"]

ERROR = "错误 error"
"""The word before every one-line error on stderr."""

HELP = {
    # argument groups
    "group_model": "模型 model（--model、形状参数或 --params 三选一）",
    "group_cluster": "集群 cluster（--nodes 与 --gpus 二选一）",
    "group_plan": "并行设置 plan",
    "group_measured": "实测校准 calibration（ps.calibrate：按一次实测拟合算子效率）",
    # model
    "model": "模型预设：{keys}（parallelsel presets models 列出来源）",
    "params": "约 N 个参数的 GPT 形模型：hidden≈(128N/12)^(1/3)，头宽 128，头数取 8 的倍数（TP 2/4/8 可整除）",
    "layers": "层数 layers",
    "hidden": "隐藏维度 hidden",
    "heads": "注意力头数 heads",
    "kv_heads": "KV 头数（GQA）",
    "ffn_hidden": "FFN 宽度（默认 4×hidden）",
    "vocab": "词表大小（默认 51200）",
    "seq_len": "序列长度（默认：模型的 seq_len）",
    "recipe": "精度与优化器：{keys}（默认：--stack 所选框架栈自己的 bf16 混合精度配方）",
    "stack": "训练框架栈（决定集合通信的数据类型、模型状态字节、默认重叠）：{keys}（默认 {default}）",
    "compile": "用 torch.compile 运行模型（只有提供编译模式的框架栈可选）",
    "global_batch": "全局批量，即每步的序列数（不给则按每卡 1 条估算，并标明“未说明”）",
    "attention": "注意力内核：flash（融合内核，不存 s×s 分数；默认）/ standard（Korthikanti 的记账）",
    # cluster
    "device": "设备预设：{keys}（默认 {default}）",
    "nodes": "节点数（默认 1）",
    "gpus": "总卡数（按每节点卡数分成节点；少于一节点时即单节点 N 卡）",
    "gpus_per_node": "每节点卡数（默认 8）",
    "intra": "节点内互联：{keys}（默认按设备的常见配置，并标明是假定）",
    "inter": "节点间互联（同上；默认按设备的常见网卡）",
    "headroom": "预留比例 F：放得下要求每卡内存 ≤ 上限 = 可用显存 ×(1−F)，F 在 0 到 0.99 之间（默认 {default:g}）",
    # plan
    "dp": "数据并行度",
    "tp": "张量并行度",
    "pp": "流水线段数",
    "cp": "上下文并行度（每条序列切成的段数）",
    "ep": "专家并行度（MoE，取自 DP 组）",
    "zero": "ZeRO 阶段 0-3（3 = FSDP FULL_SHARD）",
    "micro_batch": "微批次大小",
    "recompute": "重算：none / selective / full",
    # calibration
    "measured_step": "实测的每步秒数",
    "measured_mfu": "实测的 MFU（0-1 之间的比例）",
    "measured_plan": "实测所用的方案，如 \"DP8·TP8·PP1·mb1\"；给了 --measured-step/--measured-mfu 时必填",
    # common and the parser
    "json": "输出 JSON（键见 CLI 参考页） machine-readable output",
    "lang": "理由与解释的语言：zh（默认）或 en（language of reasons and explanations）",
    "prog": "为大模型训练选择 DP / FSDP / TP / PP（Choose DP, FSDP, TP, PP）",
    # subcommands
    "matrix": "选择矩阵：四种策略各自的判断与理由",
    "matrix_description": ("选择矩阵 selection matrix：DP、FSDP、TP、PP 单独使用时是否可行、是否优先，附理由。"
                           "未给 --global-batch 或 --intra 时，相应判断可能是“需更多信息”。"),
    "plan": "搜索混合并行方案并排名",
    "plan_description": ("搜索 search：枚举 dp×tp×pp、ZeRO、微批次、重算与调度，排除不可行者，按步时排名并解释。"
                         "--dp/--tp/--pp 等固定某一维。"),
    "top": "输出前 N 名（默认 10，至多 1000）",
    "why": ("解释一个方案，如 \"DP16·TP4·PP1·ZeRO-3\"（不给 PLAN 时用 --dp/--tp/--pp 等固定的值）："
            "能否运行、为何被排除、排第几"),
    "export": ("把第一名（或 --why 的方案）输出为 Megatron-LM 启动脚本、torchtitan TOML 或 DeepSpeed JSON（带注释头）；"
               "第一名该启动器跑不了时，导出它能跑的最好方案，并在 stderr 说明"),
    "check": "评估一个已有作业：Megatron 启动脚本/参数、torchtitan TOML 或 DeepSpeed JSON",
    "check_description": ("检查 check：读入启动器的配置文件，还原它描述的方案，判断放不放得下（内存分项）、步时与 MFU、"
                          "暴露的通信、本库的首选与差距，以及单改一项的修法。文件没写的（模型、集群）用与 plan 相同的选项补上。"),
    "file": "配置文件（Megatron 启动脚本或参数文件、torchtitan .toml、DeepSpeed .json）",
    "launcher": "文件属于哪个启动器（默认按内容判断）",
    "bubble": "流水线气泡：公式与模拟",
    "bubble_description": ("流水线气泡 pipeline bubble：闭式 (p-1)/(v·m+p-1) 与事件模拟，可输出甘特图 SVG。"
                           "模拟的规模上限：p×m×v ≤ {max_passes}（几秒内算完）。"),
    "stages": "流水线段数 p",
    "microbatches": "微批次数 m",
    "schedule": "调度（默认 1f1b）",
    "chunks": "每卡虚拟段数（interleaved）",
    "svg": "把甘特图写入 SVG 文件",
    "memory": "给定方案的每卡内存与步时",
    "memory_description": ("内存 memory：给定 dp/tp/pp/ZeRO/微批次/重算，算每卡内存分项、是否放得下与步时。"
                           "--dp 默认取满集群：卡数 ÷ (tp×pp)；未给集群时，按方案需要的卡数组成集群。"),
    "sp": "开启序列并行（tp>1 时）",
    "memory_schedule": "流水线调度（默认 1f1b）",
    "presets": "列出预设（模型、设备、互联、配方）及其来源",
    "presets_description": "预设 presets：--model、--device、--intra/--inter、--recipe 可用的键，每个附出处。",
    "kind": "只列一类（默认全部）",
}
"""Every help text of the command, by argument or subcommand; ``{placeholders}`` are filled by the CLI."""


def keys_text(catalogue) -> str:
    """A catalogue's keys, sorted, as a help text lists them."""
    return "、".join(sorted(catalogue))


def see_help(prog: str, message: str) -> str:
    """An argparse error as one line: what is wrong, and where the usage is."""
    return f"{prog}: {ERROR}: {' '.join(message.split())}（见 {prog} --help）"


def header(w, c) -> str:
    """The first two lines of every report: the model and workload, then the cluster (and what was assumed)."""
    m = w.model
    names = {"intra": "--intra", "inter": "--inter"}
    assumed = ""
    if c.assumed:
        flags = " / ".join(names[x] for x in c.assumed)
        assumed = f"（未给 {flags}：按 {c.device.name} 服务器的常见配置假定）"
    return (f"模型 {m.name}（{fmt_count(m.params)} 参数，{m.layers} 层，hidden {m.hidden}，{m.heads} 头），"
            f"全局批量 {w.global_batch} × 序列 {w.seq_len}，{w.recipe.name}\n"
            f"集群 {c.nodes} 节点 × {c.gpus_per_node} 卡 {c.device.name}（每卡 {fmt_bytes(c.device.memory)}），"
            f"节点内 {c.intra.name}，节点间 {c.inter.name}{assumed}\n")


def calibration_text(cal) -> str:
    """One line saying what a measured step changed (empty without a calibration)."""
    if cal is None:
        return ""
    return (f"按实测校准：{plan_label(cal.before.plan)} 实测 {fmt_time(cal.measured, 2)}（模型原估 "
            f"{fmt_time(cal.before.step.total, 2)}），算子效率上限 × {cal.scale:.3f} = "
            f"{fmt_pct(cal.device.gemm_efficiency)}；以下都按校准后的常数估算\n")


FIXES = {
    "zh": {"recipe": "改用 8-bit Adam（--recipe {recipe}）", "recompute": "完全重算（--recompute {recompute}）",
           "zero": "ZeRO-{zero}（--zero {zero}）", "sp": "开启序列并行",
           "micro_batch": "微批次 {micro_batch}（--micro-batch {micro_batch}）",
           "gpus": "加到 {gpus} 卡（{nodes} 节点），最快的是 {plan}"},
    "en": {"recipe": "switch to 8-bit Adam (--recipe {recipe})", "recompute": "full recomputation (--recompute {recompute})",
           "zero": "ZeRO-{zero} (--zero {zero})", "sp": "turn on sequence parallelism",
           "micro_batch": "micro-batch {micro_batch} (--micro-batch {micro_batch})",
           "gpus": "grow to {gpus} GPUs ({nodes} nodes); the fastest plan there is {plan}"},
}
"""The sentence of each single change :func:`parallelsel.core.search.fixes` finds, by its code, per language;
the fields are the change's ``values`` (``plan`` is written as its label)."""

_FIX_RESULT = {"zh": "{fix}：每卡 {bytes}，步时 {step}", "en": "{fix}: {bytes} per GPU, step {step}"}


def fix_text(f, lang: str = "zh") -> str:
    """One single change that makes a plan fit (:func:`parallelsel.core.search.fixes`), with its memory and step."""
    values = {k: plan_label(v, lang) if k == "plan" else v for k, v in f.values.items()}
    return _FIX_RESULT[lang].format(fix=FIXES[lang][f.code].format(**values), bytes=fmt_bytes(f.estimate.memory.total),
                                    step=fmt_time(f.estimate.step.total, 2, lang))


def matrix_text(w, c, rows, unknown, lang: str = "zh") -> str:
    """``parallelsel matrix``: the header, what the scenario leaves open, the table, then each row's reasons."""
    from parallelsel.render.matrix_tables import matrix_table

    out = [header(w, c)]
    if unknown:
        names = {"global_batch": f"全局批量（按每卡 1 条、共 {w.global_batch} 条估算；用 --global-batch 指定）",
                 "interconnect": f"节点内互联（按 {c.intra.name} 估算；用 --intra 指定）"}
        out.append("未说明：" + "；".join(names[u] for u in unknown) + "\n")
    out.append("\n" + matrix_table(rows, reasons=False) + "\n")
    for r in rows:
        out.append(f"{r.strategy}：{verdict_word(r.verdict)}\n")
        out.extend(f"  - {text(x, lang)}\n" for x in r.reasons)
    return "".join(out)


def why_text(w, c, x, fx, lang: str = "zh") -> str:
    """``parallelsel plan --why``: whether the plan runs, why not, the changes that would make it fit, its rank."""
    e, p = x.estimate, x.plan
    out = [header(w, c) + f"\n方案 {plan_label(p, lang)}\n"]
    verdict = list(x.verdict)
    if not x.gpus_match:
        out.append(f"  - {text(verdict.pop(0), lang)}\n")
    if e.reasons:
        out.append("  - 排除（不可行）：" + "；".join(text(r, lang) for r in e.reasons) + "\n")
        out.extend(f"  - 可行的改法：{fix_text(f, lang)}\n" for f in fx)
        if x.gpus_match and not fx:
            out.append("  - 单独改一项（8-bit Adam、完全重算、ZeRO-3、序列并行、微批次 1、加卡）都放不下\n")
    out.extend(f"  - {text(y, lang)}\n" for y in list(x.why) + verdict[len(e.reasons):])
    out.append(f"  - 每卡内存 {fmt_bytes(e.memory.total)}（上限 {fmt_bytes(e.budget)} = 可用显存 ×(1 − 预留比例 {e.headroom:.0%})），"
               f"估计步时 {fmt_time(e.step.total, 2)}\n")
    return "".join(out)


def _no_plan_text(r, miss, lang: str) -> str:
    """What ``plan`` says when nothing fits: the closest miss and the single changes that would fix it."""
    if miss is None:
        return "没有能放下的方案，也没有通过其余约束的方案：检查全局批量、头数与层数能否整除。\n"
    _, fx = miss
    out = [f"没有能放下的方案。{text(r.closest_miss_reason, lang)}。\n"]
    if fx:
        out.append("单独改一项就能放下的改法（按步时从快到慢）：\n")
        out.extend(f"  - {fix_text(f, lang)}\n" for f in fx)
    else:
        out.append("单独改一项（8-bit Adam、完全重算、ZeRO-3、序列并行、微批次 1、加到至多 16 倍的卡）都放不下。\n")
    return "".join(out)


def plan_text(w, c, r, miss, cal, batch_assumed: bool, lang: str = "zh") -> str:
    """``parallelsel plan``: the funnel, the exclusions, then the ranked plans with their chain of decisions."""
    from parallelsel.render.matrix_tables import excluded_table, funnel_table, top_table

    out = [header(w, c), calibration_text(cal)]
    if batch_assumed:
        out.append(f"未给 --global-batch：按每卡 1 条序列（global batch = {w.global_batch}）估算\n")
    out.append(f"\n搜索用时 {fmt_time(r.seconds)}\n\n" + funnel_table(r) + "\n" + excluded_table(r) + "\n")
    if not r.results:
        return "".join(out) + _no_plan_text(r, miss, lang)
    out.append(top_table(r) + "\n")
    for x in r.results:
        out.append(f"{x.rank}. {plan_label(x.plan, lang)}\n")
        out.extend(f"   - {text(y, lang)}\n" for y in x.why)
    return "".join(out)


def bubble_text(schedule: str, stages: int, microbatches: int, chunks: int, fraction: float, overhead: float, tl,
                svg: str | None) -> str:
    """``parallelsel bubble``: the closed forms beside the simulation."""
    out = [f"调度 {schedule}，p={stages}，m={microbatches}，v={chunks}；前向 1、反向 2（单位：一次前向的耗时）\n\n"]
    out.append(markdown_table(["量", "公式", "模拟"], [
        ["气泡占比 bubble_fraction = 空闲 / 总时长", fmt_pct(fraction), fmt_pct(tl.bubble_fraction)],
        ["气泡开销 bubble_overhead = 空闲 / 理想时长", fmt_pct(overhead), fmt_pct(tl.bubble_overhead)],
        ["一步总时长（前向耗时的倍数）", "—", f"{tl.makespan:g}"],
    ], align="lrr"))
    if schedule not in ("1f1b", "interleaved") or (schedule == "interleaved" and chunks > 1):
        out.append("（公式按 1F1B/GPipe 的 (p-1)/(v·m+p-1) 计；ZB-H1 的气泡更小，以模拟为准）\n")
    if svg is not None:
        out.append(f"\n甘特图已写入 {svg}\n")
    return "".join(out)


MEMORY_PARTS = {"params": "参数", "grads": "梯度", "optimizer": "优化器状态", "activations": "激活",
                "embeddings": "嵌入/logits 激活", "gather_peak": "FSDP gather 峰值", "allocator": "分配器开销"}
"""The names of :class:`parallelsel.core.memory.MemoryBreakdown`'s parts in ``parallelsel memory``'s table."""


def memory_text(w, c, plan, e, cal, lang: str = "zh") -> str:
    """``parallelsel memory``: the per-GPU breakdown against the budget, whether it fits, the step."""
    mem = e.memory
    out = [header(w, c), calibration_text(cal),
           f"方案 {plan_label(plan)}（最满的一段：{'首段' if mem.stage == 'first' else '末段'}）\n\n"]
    rows = [[MEMORY_PARTS[k], fmt_bytes(v)] for k, v in mem.as_dict().items()]
    rows.append(["合计", fmt_bytes(mem.total)])
    rows.append(["驱动报告", fmt_bytes(c.device.memory)])
    rows.append(["可用（减去 CUDA 上下文与 NCCL）", fmt_bytes(e.usable)])
    rows.append([f"上限（可用 ×(1 − 预留比例 {e.headroom:g})）", fmt_bytes(e.budget)])
    rows.append(["余量（可用显存中空着的比例）", fmt_pct(e.margin)])
    out.append(markdown_table(["每卡内存（GiB）", "大小"], rows, align="lr") + "\n")
    out.append(("放得下" if e.fits else "放不下：" + join(e.reasons, lang)) + "\n")
    out.append(f"步时 {fmt_time(e.step.total, 2)}，{e.step.tokens_per_s:,.0f} tokens/s，MFU {fmt_pct(e.step.mfu)}\n")
    return "".join(out)


def _model_row(k, m) -> list:
    moe = f"，{m.experts} 专家 top-{m.top_k}" if m.is_moe else ""
    return [k, m.name, fmt_count(m.params), f"{m.layers} 层，hidden {m.hidden}，{m.heads} 头"
            f"（KV {m.kv_heads}），FFN {m.ffn_hidden}，词表 {m.vocab}，序列 {m.seq_len}{moe}"]


def _preset_rows(kind: str, catalogue) -> tuple[list[str], list[list]]:
    """The headers and rows of one preset catalogue (models, devices, links, recipes)."""
    if kind == "models":
        return ["键", "名称", "参数", "形状"], [_model_row(k, m) for k, m in catalogue.items()]
    if kind == "devices":
        return (["键", "名称", "显存", "峰值 BF16", "常见互联（节点内 / 节点间）"],
                [[k, d.name, fmt_bytes(d.memory), fmt_flops(d.peak_flops), f"{d.intra} / {d.inter}"]
                 for k, d in catalogue.items()])
    if kind == "links":
        return (["键", "名称", "每卡单向带宽", "延迟"],
                [[k, x.name, fmt_rate(x.bandwidth), fmt_time(x.latency)] for k, x in catalogue.items()])
    if kind == "stacks":
        return (["键", "名称", "版本", "梯度归约 / 参数收集", "配方"],
                [[k, x.name, x.version, f"{x.grad_reduce_dtype} / {x.param_gather_dtype}", x.recipe]
                 for k, x in catalogue.items()])
    return (["键", "名称", "每参数字节（权重 + 梯度 + 优化器）"],
            [[k, r.name, f"{r.weights:g} + {r.grads:g} + {r.optimizer:g} = {r.per_param:g}"] for k, r in catalogue.items()])


PRESET_TITLES = {"models": "模型 --model", "devices": "设备 --device", "links": "互联 --intra / --inter",
                 "recipes": "配方 --recipe", "stacks": "框架栈 --stack"}


def presets_text(catalogues: dict) -> str:
    """``parallelsel presets``: one table per kind, ``catalogues`` = {kind: (presets, sources)}."""
    out = []
    for kind, (cat, sources) in catalogues.items():
        headers, rows = _preset_rows(kind, cat)
        out.append(f"{PRESET_TITLES[kind]}\n\n" + markdown_table(headers + ["来源"],
                   [row + [sources[k]] for row, k in zip(rows, cat)]) + "\n")
    return "".join(out)


_LAUNCHER_NAMES = {"megatron": "Megatron-LM", "torchtitan": "torchtitan", "deepspeed": "DeepSpeed"}


def check_text(w, c, x, fx, cfg, notes, lang: str = "zh") -> str:
    """``parallelsel check FILE``: the plan the file describes, memory, step and MFU, what is exposed, the library's pick
    and the distance to it, single-change fixes, and what the file's settings mean for the launcher."""
    e, p = x.estimate, x.plan
    mem = e.memory
    out = [header(w, c), f"\n{_LAUNCHER_NAMES[cfg.launcher]} 配置描述的方案：{plan_label(p, lang)}\n"]
    for n in notes:
        out.append(f"  - 注意：{n['text']}\n")
        if "fix_step_s" in n:
            out.append(f"    加上 {n['values']['option']}：每卡 {fmt_bytes(n['fix_memory_bytes'])}"
                       f"（{'放得下' if n['fix_fits'] else '仍放不下'}），步时 {fmt_time(n['fix_step_s'], 2)}\n")
    rows = [[MEMORY_PARTS[k], fmt_bytes(v)] for k, v in mem.as_dict().items()]
    rows.append(["合计", fmt_bytes(mem.total)])
    rows.append([f"上限（可用 ×(1 − 预留比例 {e.headroom:g})）", fmt_bytes(e.budget)])
    out.append("\n" + markdown_table(["每卡内存（GiB）", "大小"], rows, align="lr") + "\n")
    if e.fits:
        out.append("放得下\n")
    else:
        out.append("放不下：" + join(e.reasons, lang) + "\n")
        out.extend(f"  - 可行的改法：{fix_text(f, lang)}\n" for f in fx)
        if x.gpus_match and not fx:
            out.append("  - 单独改一项（8-bit Adam、完全重算、ZeRO-3、序列并行、微批次 1、加卡）都放不下\n")
    s = e.step
    out.append(f"步时 {fmt_time(s.total, 2)}（计算 {fmt_time(s.compute, 2)}，暴露的通信 {fmt_time(s.communication, 2)}，"
               f"气泡 {fmt_time(s.bubble, 2)}），{s.tokens_per_s:,.0f} tokens/s，MFU {fmt_pct(s.mfu)}\n")
    exposed = [(k, v) for k, v in s.exposed if v > 0]
    if exposed:
        out.append("暴露的通信：" + "，".join(f"{k} {fmt_time(v, 2)}" for k, v in exposed) + "\n")
    if x.best is not None:
        b = x.best
        if x.rank == 1:
            out.append(f"本库的首选就是这个方案\n")
        else:
            ratio = f"，本作业是它的 {s.total / b.estimate.step.total:.2f} 倍" if e.fits else ""
            rank = f"（本作业排第 {x.rank}）" if x.rank is not None else ""
            out.append(f"本库的首选：{plan_label(b.plan, lang)}，步时 {fmt_time(b.estimate.step.total, 2)}{ratio}{rank}\n")
    out.extend(f"  - {text(y, lang)}\n" for y in x.verdict if y.code not in {r.code for r in e.reasons})
    return "".join(out)
