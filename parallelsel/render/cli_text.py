"""What the ``parallelsel`` command prints for people: help texts, headers and each subcommand's report.

:mod:`parallelsel.render.cli` parses arguments, calls the library and prints JSON; every sentence and table it shows a
person is written here (Chinese, with the English term beside it where the lesson gives one). Reasons come
from :mod:`parallelsel.render.reasons` in the language asked for (``--lang``).
"""

from __future__ import annotations

from parallelsel.render.reasons import TEMPLATES, fix, join, plan_label, text
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
    "head_dim": "每个头的宽度（默认 hidden÷heads；Megatron 的 --kv-channels）",
    "ffn_hidden": "FFN 宽度（默认 4×hidden）",
    "vocab": "词表大小（默认 51200）",
    "experts": "MoE 每层的专家数（默认 1，即稠密模型；与 --model 同用时改写预设）；--ffn-hidden 是每个专家的 FFN 宽度",
    "top_k": "MoE 每个词元选的专家数（top-k，默认 1，不超过 --experts）",
    "architecture": "自定义形状的结构：gpt（默认：GeLU MLP、LayerNorm、学习的位置编码、输入输出共用词嵌入）或 llama"
                    "（SwiGLU、RMSNorm、旋转位置编码、不共用；Mixtral、Qwen3 等同类）；--model 与 --params 自带结构，不与它同用",
    "seq_len": "序列长度（默认：模型的 seq_len）",
    "recipe": "精度与优化器：{keys}（默认：--stack 所选框架栈自己的 bf16 混合精度配方）",
    "stack": "训练框架栈（决定集合通信的数据类型、模型状态字节、默认重叠）：{keys}（默认 {default}）",
    "compile": "用 torch.compile 运行模型（只有提供编译模式的框架栈可选）：编译框架栈编译的全部（torchtitan：模型与损失）",
    "compile_model_only": "只编译 Transformer 块、损失照常 eager 运行（torchtitan 的 components = [\"model\"]，以及 2025 年 4 月前的版本）",
    "global_batch": "全局批量，即每步的序列数（不给则按每卡 1 条估算，并标明“未说明”）",
    "attention": "注意力内核：flash（框架默认的融合内核，不存 s×s 分数；默认）/ fa2（指定 FlashAttention-2 内核，如 NVTE_FUSED_ATTN=0；显存同 flash）/ standard（Korthikanti 的记账）；check 时文件里的 --attention-backend 或 NVTE_FUSED_ATTN 优先，与之矛盾则报错",
    # cluster
    "device": "设备预设：{keys}（默认 {default}）",
    "nodes": "节点数（默认 1）",
    "gpus": "总卡数（按每节点卡数分成节点；少于一节点时即单节点 N 卡）",
    "gpus_per_node": "每节点卡数，即节点内链路连起的卡数（默认 8；GB200 NVL72 填作业在一个机柜 NVLink 域里的卡数）",
    "intra": "节点内互联：{keys}（默认按设备的常见配置，并标明是假定）",
    "inter": "节点间互联（同上；默认按设备的常见网卡）",
    "headroom": "预留比例 F：放得下要求每卡内存 ≤ 上限 = 可用显存 ×(1−F)，F 在 0 到 0.99 之间（默认 {default:g}：不超过可用显存就接受，余量偏紧的方案会标出来）",
    # plan
    "dp": "数据并行度",
    "tp": "张量并行度",
    "pp": "流水线段数",
    "cp": "上下文并行度（每条序列切成的段数）",
    "ep": "专家并行度（MoE，取自 DP 组）",
    "etp": "专家的张量并行度（MoE 并行折叠；etp×ep 须整除 tp×cp×dp）。估算单个方案时不给即与 --tp 相同；"
           "搜索时不给则两种都试，给 1 只试整专家，给与 --tp 相同的值只试按 TP 切",
    "zero": "ZeRO 阶段 0-3（3 = FSDP FULL_SHARD）",
    "micro_batch": "微批次大小",
    "recompute": "重算策略：none / selective（Megatron 核心注意力）/ op（torchtitan 算子级选择性重算）/ full",
    "recompute_layers": "只对每个模型段的前 K 层做完全重算（Megatron --recompute-num-layers；torchtitan 每 N 层一次）",
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
    "stage_layers": "不均匀的流水线切分：每段的层数，逗号分隔（共 pp 个，和为层数；默认均分）",
    "tp_overlap": "TP 通信与矩阵乘重叠（Megatron-Core 的 --tp-comm-overlap、torchtitan 的异步 TP；默认按框架栈）",
    "no_p2p_overlap": "流水线段间的发送不与计算重叠（默认按框架栈：Megatron-Core 的交错调度重叠）",
    "no_tp_overlap": "只搜不重叠 TP 通信的方案（默认：框架栈提供的 TP 重叠都打开来搜）",
    "ep_overlap": "专家并行的 all-to-all 藏到另一个微批次的计算后面（Megatron-Core 的 --overlap-moe-expert-parallel-comm；默认关）",
    "no_ep_overlap": "只搜不重叠 EP 通信的方案（默认：框架栈提供 EP 重叠时，开与不开都搜）",
    "dispatcher": ("MoE 的令牌分发器：alltoall（每个 (令牌, 专家) 发一份）或 Megatron-Core flex 分发器的 deepep / hybridep"
                   "（跨节点每个令牌每个目标节点只发一份）；plan 不给时两种都搜"),
    "memory_schedule": "流水线调度（默认 1f1b）",
    "presets": "列出预设（模型、设备、互联、配方）及其来源",
    "presets_description": "预设 presets：--model、--device、--intra/--inter、--recipe 可用的键，每个附出处。",
    "kind": "只列一类（默认全部）",
}
"""Every help text of the command, by argument or subcommand; ``{placeholders}`` are filled by the CLI."""


def keys_text(catalogue) -> str:
    """A catalogue's keys, sorted, as a help text lists them."""
    return "、".join(sorted(catalogue))


def see_help(prog: str, message: str, lang: str = "zh") -> str:
    """An argparse error as one line: what is wrong, and where the usage is."""
    see = f"（见 {prog} --help）" if lang == "zh" else f" (see {prog} --help)"
    return f"{prog}: {ERRORS[lang]}: {' '.join(message.split())}{see}"


ERRORS = {"zh": ERROR, "en": "error"}
"""The word before a one-line error on stderr, per ``--lang`` (the Chinese one keeps the English word beside it)."""

TEXT: dict[str, dict[str, str]] = {
    "zh": {
        "assumed": "（未给 {flags}：按 {device} 服务器的常见配置假定）",
        "header": ("模型 {model}（{params} 参数，{layers} 层，hidden {hidden}，{heads} 头），"
                   "全局批量 {global_batch} × 序列 {seq_len}，{recipe}{attention}\n"
                   "集群 {nodes} 节点 × {gpn} 卡 {device}（每卡 {memory}），节点内 {intra}，节点间 {inter}{assumed}\n"),
        "calibration": ("按实测校准：{plan} 实测 {measured}（模型原估 {before}），算子效率上限 × {scale:.3f} = "
                        "{efficiency}；以下都按校准后的常数估算\n"),
        "fix_result": "{fix}：每卡 {bytes}，步时 {step}",
        "unknown": "未说明：", "sep": "；",
        "unknown_global_batch": "全局批量（按每卡 1 条、共 {global_batch} 条估算；用 --global-batch 指定）",
        "unknown_interconnect": "节点内互联（按 {link} 估算；用 --intra 指定）",
        "verdict_line": "{strategy}：{verdict}\n",
        "plan": "\n方案 {plan}\n",
        "excluded": "  - 排除（不可行）：",
        "fix_line": "  - 可行的改法：{fix}\n",
        "no_single_fix": "  - 单独改一项（8-bit Adam、完全重算、ZeRO-3、序列并行、微批次 1、加卡）都放不下\n",
        "why_memory": "  - 每卡内存 {bytes}（上限 {budget} = 可用显存 ×(1 − 预留比例 {headroom})），估计步时 {step}\n",
        "nothing_passes": "没有能放下的方案，也没有通过其余约束的方案：检查全局批量、头数与层数能否整除。\n",
        "nothing_fits": "没有能放下的方案。{reason}。\n",
        "fixes_follow": "单独改一项就能放下的改法（按步时从快到慢）：\n",
        "no_fix": "单独改一项（8-bit Adam、完全重算、ZeRO-3、序列并行、微批次 1、加到至多 16 倍的卡）都放不下。\n",
        "batch_assumed": "未给 --global-batch：按每卡 1 条序列（global batch = {global_batch}）估算\n",
        "search_time": "\n搜索用时 {seconds}\n\n",
        "memory_plan": "方案 {plan}（最满的一段：{stage}）\n\n",
        "first": "首段", "last": "末段",
        "memory_header": "每卡内存（GiB）", "size": "大小", "total": "合计", "capacity": "驱动报告",
        "usable": "可用（减去 CUDA 上下文与 NCCL）", "budget": "上限（可用 ×(1 − 预留比例 {headroom})）",
        "margin": "余量（可用显存中空着的比例）",
        "fits": "放得下", "does_not_fit": "放不下：{reasons}",
        "step": "步时 {step}，{tokens} tokens/s，MFU {mfu}\n",
        "check_plan": "\n{launcher} 配置描述的方案：{plan}\n",
        "check_note": "  - 注意：{note}\n",
        "check_note_fix": "    加上 {option}：每卡 {bytes}（{fits}），步时 {step}\n",
        "still_does_not_fit": "仍放不下",
        "check_step": ("步时 {step}（计算 {compute}，暴露的通信 {communication}，气泡 {bubble}），{tokens} tokens/s，"
                       "MFU {mfu}\n"),
        "check_exposed": "暴露的通信：{parts}\n", "list_sep": "，",
        "check_is_best": "本库的首选就是这个方案\n",
        "check_best": "本库的首选：{plan}，步时 {step}{ratio}{rank}\n",
        "check_ratio": "，本作业是它的 {ratio:.2f} 倍", "check_rank": "（本作业排第 {rank}）",
        "attention_kernel": "，注意力内核 {kernel}",
    },
    "en": {
        "assumed": " (no {flags}: assumed the usual {device} server)",
        "attention_kernel": ", attention kernel {kernel}",
        "header": ("model {model} ({params} parameters, {layers} layers, hidden {hidden}, {heads} heads), "
                   "global batch {global_batch} × sequence {seq_len}, {recipe}{attention}\n"
                   "cluster {nodes} nodes × {gpn} {device} ({memory} each), intra-node {intra}, inter-node {inter}"
                   "{assumed}\n"),
        "calibration": ("calibrated to a measurement: {plan} measured {measured} (model estimate {before}), kernel "
                        "efficiency ceiling × {scale:.3f} = {efficiency}; everything below uses the calibrated constants\n"),
        "fix_result": "{fix}: {bytes} per GPU, step {step}",
        "unknown": "not given: ", "sep": "; ",
        "unknown_global_batch": "global batch (estimated at one per GPU, {global_batch} in all; set --global-batch)",
        "unknown_interconnect": "intra-node link (estimated as {link}; set --intra)",
        "verdict_line": "{strategy}: {verdict}\n",
        "plan": "\nplan {plan}\n",
        "excluded": "  - excluded (infeasible): ",
        "fix_line": "  - a change that fits: {fix}\n",
        "no_single_fix": ("  - no single change (8-bit Adam, full recompute, ZeRO-3, sequence parallelism, micro-batch 1, "
                          "more GPUs) makes it fit\n"),
        "why_memory": "  - memory per GPU {bytes} (limit {budget} = usable memory × (1 − headroom {headroom})), step {step}\n",
        "nothing_passes": ("no plan fits, and none passes the other constraints: check that the global batch, heads and "
                           "layers divide.\n"),
        "nothing_fits": "no plan fits; {reason}.\n",
        "fixes_follow": "single changes that make it fit (fastest step first):\n",
        "no_fix": ("no single change (8-bit Adam, full recompute, ZeRO-3, sequence parallelism, micro-batch 1, up to "
                   "16 times the GPUs) makes it fit.\n"),
        "batch_assumed": "no --global-batch: estimated at one sequence per GPU (global batch = {global_batch})\n",
        "search_time": "\nsearch took {seconds}\n\n",
        "memory_plan": "plan {plan} (the fullest stage: {stage})\n\n",
        "first": "first", "last": "last",
        "memory_header": "memory per GPU (GiB)", "size": "size", "total": "total", "capacity": "driver reports",
        "usable": "usable (minus CUDA context and NCCL)", "budget": "limit (usable × (1 − headroom {headroom}))",
        "margin": "margin (share of usable memory left free)",
        "fits": "fits", "does_not_fit": "does not fit: {reasons}",
        "step": "step {step}, {tokens} tokens/s, MFU {mfu}\n",
        "check_plan": "\nthe plan the {launcher} config describes: {plan}\n",
        "check_note": "  - note: {note}\n",
        "check_note_fix": "    with {option}: {bytes} per GPU ({fits}), step {step}\n",
        "still_does_not_fit": "still does not fit",
        "check_step": ("step {step} (compute {compute}, exposed communication {communication}, bubble {bubble}), "
                       "{tokens} tokens/s, MFU {mfu}\n"),
        "check_exposed": "exposed communication: {parts}\n", "list_sep": ", ",
        "check_is_best": "this is the library's own pick\n",
        "check_best": "the library's pick: {plan}, step {step}{ratio}{rank}\n",
        "check_ratio": ", this job takes {ratio:.2f} times as long", "check_rank": " (this job ranks {rank})",
    },
}
"""Every line the ``matrix``, ``plan`` and ``memory`` reports print, per ``--lang``; percentages and ratios go
through :func:`parallelsel.render.units.fmt_pct` (a headroom reads ``3%`` everywhere)."""


def header(w, c, lang: str = "zh") -> str:
    """The first two lines of every report: the model and workload, then the cluster (and what was assumed)."""
    m, t = w.model, TEXT[lang]
    names = {"intra": "--intra", "inter": "--inter"}
    assumed = ""
    if c.assumed:
        assumed = t["assumed"].format(flags=" / ".join(names[x] for x in c.assumed), device=c.device.name)
    return t["header"].format(model=m.name, params=fmt_count(m.params), layers=m.layers, hidden=m.hidden, heads=m.heads,
                              global_batch=w.global_batch, seq_len=w.seq_len, recipe=w.recipe.name, nodes=c.nodes,
                              attention="" if w.attention == "flash" else t["attention_kernel"].format(kernel=w.attention),
                              gpn=c.gpus_per_node, device=c.device.name, memory=fmt_bytes(c.device.memory),
                              intra=c.intra.name, inter=c.inter.name, assumed=assumed)


def calibration_text(cal, lang: str = "zh") -> str:
    """One line saying what a measured step changed (empty without a calibration)."""
    if cal is None:
        return ""
    return TEXT[lang]["calibration"].format(
        plan=plan_label(cal.before.plan, lang), measured=fmt_time(cal.measured, 2, lang),
        before=fmt_time(cal.before.step.total, 2, lang), scale=cal.scale, efficiency=fmt_pct(cal.device.gemm_efficiency))


FIXES = {lang: TEMPLATES[lang]["fix"] for lang in TEMPLATES}
"""The sentence of each single change :func:`parallelsel.core.search.fixes` finds, per language: the ``fix`` part of
the one template table (:data:`parallelsel.render.reasons.TEMPLATES`)."""


def fix_text(f, lang: str = "zh") -> str:
    """One single change that makes a plan fit (:func:`parallelsel.core.search.fixes`), with its memory and step."""
    return TEXT[lang]["fix_result"].format(fix=fix(f.code, f.values, lang), bytes=fmt_bytes(f.estimate.memory.total),
                                           step=fmt_time(f.estimate.step.total, 2, lang))


def matrix_text(w, c, rows, unknown, lang: str = "zh") -> str:
    """``parallelsel matrix``: the header, what the scenario leaves open, the table, then each row's reasons."""
    from parallelsel.render.matrix_tables import matrix_table

    t = TEXT[lang]
    out = [header(w, c, lang)]
    if unknown:
        names = {"global_batch": t["unknown_global_batch"].format(global_batch=w.global_batch),
                 "interconnect": t["unknown_interconnect"].format(link=c.intra.name)}
        out.append(t["unknown"] + t["sep"].join(names[u] for u in unknown) + "\n")
    out.append("\n" + matrix_table(rows, reasons=False, lang=lang) + "\n")
    for r in rows:
        out.append(t["verdict_line"].format(strategy=r.strategy, verdict=verdict_word(r.verdict, lang)))
        out.extend(f"  - {text(x, lang)}\n" for x in r.reasons)
    return "".join(out)


def why_text(w, c, x, fx, lang: str = "zh") -> str:
    """``parallelsel plan --why``: whether the plan runs, why not, the changes that would make it fit, its rank."""
    e, p, t = x.estimate, x.plan, TEXT[lang]
    out = [header(w, c, lang) + t["plan"].format(plan=plan_label(p, lang))]
    verdict = list(x.verdict)
    if not x.gpus_match:
        out.append(f"  - {text(verdict.pop(0), lang)}\n")
    if e.reasons:
        out.append(t["excluded"] + join(e.reasons, lang) + "\n")
        out.extend(t["fix_line"].format(fix=fix_text(f, lang)) for f in fx)
        if x.gpus_match and not fx:
            out.append(t["no_single_fix"])
    out.extend(f"  - {text(y, lang)}\n" for y in list(x.why) + verdict[len(e.reasons):])
    out.append(t["why_memory"].format(bytes=fmt_bytes(e.memory.total), budget=fmt_bytes(e.budget),
                                      headroom=fmt_pct(e.headroom, 0), step=fmt_time(e.step.total, 2, lang)))
    return "".join(out)


def _no_plan_text(r, miss, lang: str) -> str:
    """What ``plan`` says when nothing fits: the closest miss and the single changes that would fix it."""
    t = TEXT[lang]
    if miss is None:
        return t["nothing_passes"]
    _, fx = miss
    out = [t["nothing_fits"].format(reason=text(r.closest_miss_reason, lang))]
    if fx:
        out.append(t["fixes_follow"])
        out.extend(f"  - {fix_text(f, lang)}\n" for f in fx)
    else:
        out.append(t["no_fix"])
    return "".join(out)


def plan_text(w, c, r, miss, cal, batch_assumed: bool, lang: str = "zh") -> str:
    """``parallelsel plan``: the funnel, the exclusions, then the ranked plans with their chain of decisions."""
    from parallelsel.render.matrix_tables import excluded_table, funnel_table, top_table

    t = TEXT[lang]
    out = [header(w, c, lang), calibration_text(cal, lang)]
    if batch_assumed:
        out.append(t["batch_assumed"].format(global_batch=w.global_batch))
    out.append(t["search_time"].format(seconds=fmt_time(r.seconds, 1, lang)) + funnel_table(r, lang) + "\n"
               + excluded_table(r, lang) + "\n")
    if not r.results:
        return "".join(out) + _no_plan_text(r, miss, lang)
    out.append(top_table(r, lang) + "\n")
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


MEMORY_PARTS = {
    "zh": {"params": "参数", "grads": "梯度", "optimizer": "优化器状态", "activations": "激活",
           "embeddings": "嵌入/logits 激活", "gather_peak": "FSDP gather 峰值", "allocator": "分配器开销"},
    "en": {"params": "weights", "grads": "gradients", "optimizer": "optimizer state", "activations": "activations",
           "embeddings": "embedding/logits activations", "gather_peak": "FSDP gather peak", "allocator": "allocator overhead"},
}
"""The names of :class:`parallelsel.core.memory.MemoryBreakdown`'s parts in ``parallelsel memory``'s table."""


def memory_text(w, c, plan, e, cal, lang: str = "zh") -> str:
    """``parallelsel memory``: the per-GPU breakdown against the budget, whether it fits, the step."""
    mem, t = e.memory, TEXT[lang]
    out = [header(w, c, lang), calibration_text(cal, lang),
           t["memory_plan"].format(plan=plan_label(plan, lang), stage=t["first" if mem.stage == "first" else "last"])]
    rows = [[MEMORY_PARTS[lang][k], fmt_bytes(v)] for k, v in mem.as_dict().items()]
    rows.append([t["total"], fmt_bytes(mem.total)])
    rows.append([t["capacity"], fmt_bytes(c.device.memory)])
    rows.append([t["usable"], fmt_bytes(e.usable)])
    rows.append([t["budget"].format(headroom=fmt_pct(e.headroom, 0)), fmt_bytes(e.budget)])
    rows.append([t["margin"], fmt_pct(e.margin)])
    out.append(markdown_table([t["memory_header"], t["size"]], rows, align="lr") + "\n")
    out.append((t["fits"] if e.fits else t["does_not_fit"].format(reasons=join(e.reasons, lang))) + "\n")
    if e.advisories:
        out.append(join(e.advisories, lang) + "\n")
    out.append(t["step"].format(step=fmt_time(e.step.total, 2, lang), tokens=f"{e.step.tokens_per_s:,.0f}",
                                mfu=fmt_pct(e.step.mfu)))
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
    """``parallelsel presets``: one table per kind, ``catalogues`` = {kind: presets}; each preset's ``source``."""
    out = []
    for kind, cat in catalogues.items():
        headers, rows = _preset_rows(kind, cat)
        out.append(f"{PRESET_TITLES[kind]}\n\n" + markdown_table(headers + ["来源"],
                   [row + [v.source] for row, v in zip(rows, cat.values())]) + "\n")
    return "".join(out)


_LAUNCHER_NAMES = {"megatron": "Megatron-LM", "torchtitan": "torchtitan", "deepspeed": "DeepSpeed"}


def check_text(w, c, x, fx, cfg, notes, lang: str = "zh") -> str:
    """``parallelsel check FILE``: the plan the file describes, memory, step and MFU, what is exposed, the library's pick
    and the distance to it, single-change fixes, and what the file's settings mean for the launcher."""
    e, p, t = x.estimate, x.plan, TEXT[lang]
    out = [header(w, c, lang), t["check_plan"].format(launcher=_LAUNCHER_NAMES[cfg.launcher], plan=plan_label(p, lang))]
    for n in notes:
        out.append(t["check_note"].format(note=n["text"]))
        if "fix_step_s" in n:
            out.append(t["check_note_fix"].format(option=n["values"]["option"], bytes=fmt_bytes(n["fix_memory_bytes"]),
                                                  fits=t["fits"] if n["fix_fits"] else t["still_does_not_fit"],
                                                  step=fmt_time(n["fix_step_s"], 2, lang)))
    rows = [[MEMORY_PARTS[lang][k], fmt_bytes(v)] for k, v in e.memory.as_dict().items()]
    rows.append([t["total"], fmt_bytes(e.memory.total)])
    rows.append([t["budget"].format(headroom=fmt_pct(e.headroom, 0)), fmt_bytes(e.budget)])
    out.append("\n" + markdown_table([t["memory_header"], t["size"]], rows, align="lr") + "\n")
    out.append((t["fits"] if e.fits else t["does_not_fit"].format(reasons=join(e.reasons, lang))) + "\n")
    out.extend(t["fix_line"].format(fix=fix_text(f, lang)) for f in fx)
    if not e.fits and x.gpus_match and not fx:
        out.append(t["no_single_fix"])
    s = e.step
    out.append(t["check_step"].format(step=fmt_time(s.total, 2, lang), compute=fmt_time(s.compute, 2, lang),
                                      communication=fmt_time(s.communication, 2, lang),
                                      bubble=fmt_time(s.bubble, 2, lang), tokens=f"{s.tokens_per_s:,.0f}",
                                      mfu=fmt_pct(s.mfu)))
    exposed = [f"{k} {fmt_time(v, 2, lang)}" for k, v in s.exposed if v > 0]
    if exposed:
        out.append(t["check_exposed"].format(parts=t["list_sep"].join(exposed)))
    if x.best is not None and x.rank == 1:
        out.append(t["check_is_best"])
    elif x.best is not None:
        b = x.best.estimate.step.total
        out.append(t["check_best"].format(plan=plan_label(x.best.plan, lang), step=fmt_time(b, 2, lang),
                                          ratio=t["check_ratio"].format(ratio=s.total / b) if e.fits else "",
                                          rank=t["check_rank"].format(rank=x.rank) if x.rank is not None else ""))
    codes = {r.code for r in e.reasons}
    out.extend(f"  - {text(y, lang)}\n" for y in x.verdict if y.code not in codes)
    return "".join(out)
