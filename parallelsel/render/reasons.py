"""Sentences for reasons: each :class:`parallelsel.core.reasons.Reason` code mapped to a Chinese (``ZH``) and an
English (``EN``) template. The only place a decision becomes prose.

A template is a string whose ``{name}`` / ``{name:spec}`` placeholders take ``reason.values[name]``.
Specs (all numbers through :mod:`parallelsel.render.units`, so a value reads the same everywhere):

* ``size`` bytes (GiB/TiB, never "0.0" for a non-zero size), ``secs`` seconds, ``rate`` bytes/s
  (decimal GB/s), ``count`` a parameter count (69.0B), ``pct`` a fraction as a whole percentage,
  ``pct1`` with one decimal, ``x`` a ratio with one decimal, ``g`` a number as ``:g``;
* a word table below (``stage``, ``recompute``, ...): the value is looked up in that language's table;
* no spec: the value as it is (ints as digits).

A ``[...]`` segment is printed only when every value named inside it is present and truthy (not
None, 0, False or empty), e.g. ``[，gather 峰值 {gather_peak:size}]``. A template never ends in a
colon and never prints a zero for a non-zero value (``tests/test_reasons.py``).

To add a code: one entry in ``ZH`` and one in ``EN``, naming the same values (see
:mod:`parallelsel.core.reasons` for the whole recipe).

Examples:
    >>> from parallelsel.core.reasons import Reason
    >>> text(Reason("heads_not_divisible", {"heads": 96, "tp": 7}))
    '注意力头数 96 不能被 TP=7 整除'
    >>> text(Reason("heads_not_divisible", {"heads": 96, "tp": 7}), lang="en")
    '96 attention heads are not divisible by TP=7'
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Mapping

from parallelsel.core._check import ParallelselError
from parallelsel.core.plan import label_parts, parse_plan
from parallelsel.core.reasons import Reason
from parallelsel.render.units import fmt_count, fmt_pct, fmt_rate, fmt_size, fmt_time

__all__ = ["EN", "FIX_EN", "FIX_ZH", "LANGS", "STAGES_EN", "STAGES_ZH", "TEMPLATES", "TITLES_EN", "TITLES_ZH", "WORDS", "ZH",
           "as_json", "fix", "join", "plan_label", "read_plan", "stage_title", "text", "title"]

LANGS = ("zh", "en")

# -- sentences ---------------------------------------------------------------------------------
ZH: dict[str, str] = {
    # hard constraints (parallelsel.core.plan.constraint_violations)
    "cluster_too_small": "需要 {gpus} 张卡（dp×tp×pp×cp），集群只有 {cluster_gpus} 张",
    "tp_exceeds_heads": "TP={tp} 大于注意力头数 {heads}",
    "heads_not_divisible": "注意力头数 {heads} 不能被 TP={tp} 整除",
    "kv_heads_not_divisible": "KV 头数 {kv_heads} 不能被 TP={tp} 整除（GQA 的每个 TP 分片要持有整数个 KV 组）",
    "ffn_not_divisible": "FFN 宽度 {ffn_hidden} 不能被 TP={tp} 整除",
    "stages_exceed_layers": "PP×虚拟段={stages} 大于层数 {layers}",
    "layers_not_divisible": "层数 {layers} 不能被 PP×虚拟段={stages} 整除",
    "stage_layers_sum": "各段层数 {stage_layers} 之和不等于模型的 {layers} 层",
    "batch_below_dp": "全局批量 {global_batch} 小于 DP 度 × 微批次={per_step}，DP 度太大",
    "batch_not_divisible": "全局批量 {global_batch} 不能被 DP 度 × 微批次={per_step} 整除",
    "interleave_microbatches": "交错调度要求微批次数 {microbatches} 能被 PP={pp} 整除",
    "ep_needs_moe": "EP={ep} 只适用于 MoE 模型，{model} 是稠密模型",
    "etp_needs_moe": "专家张量并行 ETP={etp} 只适用于 MoE 模型，{model} 是稠密模型",
    "experts_not_divisible": "专家数 {experts} 不能被 EP={ep} 整除",
    "recompute_not_in_stack": "{stack} 没有 {recompute} 重算策略（它提供：{offered}）",
    "recompute_layers_exceed_chunk": "重算层数 {recompute_layers} 大于每个模型段的层数 {layers}",
    "fp8_not_supported": "{device} 没有 FP8 张量核心，不能用 {recipe}",
    # memory (parallelsel.core.estimate)
    "memory_exceeds_device": "每卡内存 {bytes:size} > 上限 {capacity:size}[（可用 {usable:size} × (1 − 预留比例 {headroom:pct})）]{stage:stage}",
    "seq_not_divisible_cp": "序列长度 {seq_len} 不是 2×CP 的倍数（CP={cp}）",
    "tp_overlap_not_offered": "框架栈 {stack} 不提供 TP 通信与 GEMM 的重叠",
    "ep_overlap_not_offered": "框架栈 {stack} 不提供把专家并行的 all-to-all 藏到另一个微批次计算后面的重叠",
    "ep_overlap_needs_ep": "EP 通信重叠要求 MoE 模型且专家并行度 EP>1（这里 EP={ep}）",
    "dispatcher_not_offered": "框架栈 {stack} 没有 {dispatcher} 令牌分发器（Megatron-Core 的 flex 分发器才有）",
    "dispatcher_needs_ep": "{dispatcher} 分发器要求 MoE 模型且专家分布在多张卡上（专家 TP×EP>1，这里 EP={ep}）",
    "ep_overlap_recompute": "Megatron-Core 的 EP 通信重叠不能与完全重算（{recompute}）同用",
    "ep_overlap_needs_interleaved": "有流水线（PP{pp}）时 EP 通信重叠要求交错调度（虚拟流水段），这里是 {schedule}",
    "ep_overlap_needs_16bit": "Megatron-Core 的 EP 通信重叠只支持 bf16/fp16 模型，配方 {recipe} 是 fp32",
    "p2p_overlap_not_offered": "框架栈 {stack} 在 {schedule:schedule} 调度下不让流水线的 p2p 与计算重叠",
    "tp_overlap_needs_sp": "{stack} 的 TP 通信重叠要求开启序列并行（SP），TP={tp} 的方案没有开",
    "tp_overlap_needs_compile": "{stack} 的异步 TP 要求用 torch.compile 编译模型（Workload(compile=True)）",
    # search: plans left out without being timed, and the closest miss when nothing fits
    "gpipe_dominated": "GPipe：气泡与 1F1B 相同、在途激活更多（被支配）",
    "closest_miss": "最接近的是 {plan:plan}：每卡 {bytes:size}，比上限 {budget:size} 多 {gap:size}",
    # search: why a ranked plan is where it is (parallelsel.core.search.why)
    "memory_tight": ("偏紧：只空出可用显存的 {margin:pct1}（{free:size}），低于 {reserve:pct}；本模型没算的临时缓冲和优化器峰值"
                     "可能吃掉它，定方案前先实测峰值（torch.cuda.max_memory_reserved）"),
    "fits_memory": ("放得下：每卡 {bytes:size} ≤ 上限 = 可用 {usable:size}[ × (1 − 预留比例 {headroom:pct})]（余量 {margin:pct1}；"
                    "状态 {states:size}，激活 {activations:size}[，gather 峰值 {gather_peak:size}]）"),
    "batch_split": "batch 能整除：全局批量 {global_batch} = DP {dp} × 微批次 {micro_batch} × {microbatches} 个微批次（梯度累积）",
    "tp_group": "TP={tp} 组在节点内，每层的集合通信走 {link}（{bandwidth:rate}）",
    "tp_group_spans_nodes": ("TP={tp} 的 {crossing}/{groups} 组跨节点（每节点 {gpus_per_node} 卡）："
                             "每层的集合通信走 {link}（{bandwidth:rate}）"),
    "pp_group": "PP={pp} 段{spans_nodes:where}，相邻段 p2p 走 {link}（{bandwidth:rate}），{schedule:schedule}[（每卡 {chunks} 段）]",
    "cp_group": ("CP={cp}：每条序列切成 {cp} 段，每卡 {tokens} 个 token，K/V 块沿环 p2p 传递，{spans_nodes:where}，"
                 "走 {link}（{bandwidth:rate}）"),
    "ep_group": "EP={ep}：每层两次 all-to-all 分发与收回 token[（经 {dispatcher} 分发器：每个 token 对每个目标节点只发一份，到节点内再经 NVLink 转发）]，{spans_nodes:where}，走 {link}（{bandwidth:rate}）",
    "dp_group": "DP={dp}：{zero:dp_sync} {spans_nodes:where}，走 {link}（{bandwidth:rate}）",
    "step_split": ("步时 {total:secs}，以{main:part}为主：计算 {compute_share:pct}、暴露的通信 {communication_share:pct}、"
                   "气泡 {bubble_share:pct}[；通信主要来自 {top_strategy}（{top_seconds:secs}）]；MFU {mfu:pct}"),
    # search: what it makes of one given plan (parallelsel.core.search.explain, plan --why)
    "uses_other_gpu_count": "用 {gpus} 卡，集群有 {cluster_gpus} 卡：搜索只枚举用满集群的方案，所以它不在排名里",
    "dominated_by": "被支配：重算更少的 {plan:plan} 也放得下，计算更少，搜索不会为它计时",
    "nothing_fits": "搜索中没有任何方案放得下",
    "ranked": "在搜索的前 {top} 名中排第 {rank}",
    "within_tie": "与第一名 {best:plan} 相差 {ratio:x2} 倍，在模型实测误差 {band:pct1} 之内：排名分不出谁快",
    "tie_set": "前 {count} 个方案的步时相差不到 {band:pct1}（模型的实测误差），分不出谁快；它们在 {differ} 上不同，要靠实测（{decide:decide}）来定",
    "below_top": "不在前 {top} 名：步时 {seconds:secs}，是第一名 {best:plan}（{best_seconds:secs}）的 {ratio:x2} 倍",
    "dominated_by_less_recompute": "同一配置已有重算更少的方案放得下",
    "ranked_below_top": "排名在前 {top} 之后",
    "bound_exceeds_best": "仅计算与气泡就慢于前 {top} 名（未计算内存、未计时）",
    # the selection matrix (parallelsel.core.matrix): a strategy alone that fits nowhere
    "tp_no_degree": "没有可试的 TP 度：它要大于 1、整除注意力头数 {heads}，且不超过卡数 {gpus}",
    "pp_no_degree": "没有可试的 PP 段数：它要大于 1、整除层数 {layers}，且不超过卡数 {gpus}",
    "no_degree_passes": "试过的 {tried} 种{strategy:degree}都违反硬约束",
    "dp_state_exceeds_device": ("训练状态 {bytes:size}（{bytes_per_param:g} B/参数 × {params:count} 参数）> 单卡 "
                                "{capacity:size}（{device}）：纯 DP 每卡都要存一整份"),
    "dp_total_exceeds_device": ("训练状态 {states:size} 放得下，但加上激活后每卡 {bytes:size} > 单卡 {capacity:size}"
                                "（最省的设置 {plan:plan}）"),
    "thriftiest_exceeds_device": "最省的设置（{plan:plan}）每卡仍需 {bytes:size} > 单卡 {capacity:size}",
    "fsdp_one_rank": "只有 {dp} 个数据并行副本：FSDP 无从分片，与纯 DP 相同",
    "fsdp_exceeds_device": ("ZeRO-{zero} 分到 {shards} 卡后每卡状态 {states:size}[，加上 gather 峰值 {gather_peak:size}]、"
                            "激活 {activations:size}，每卡 {bytes:size} > 单卡 {capacity:size}"),
    "fsdp_unit_exceeds_device": ("一层 {params:count} 参数必须整层 gather：ZeRO-3 的 gather 峰值 {gather_peak:size}"
                                 "（两层参数（预取）+ 一层梯度，加常驻的嵌入与输出层）> 单卡 {capacity:size}，"
                                 "FSDP 在卡上聚不齐一层，分片再多也没用"),
    "fsdp_unit_dominates": ("一层 {params:count} 参数必须整层 gather：ZeRO-3 的 gather 峰值 {gather_peak:size}，"
                            "分片再多也省不掉这一项（单卡 {capacity:size}）"),
    "pp_layer_exceeds_device": ("每段至少放一整层：一层的训练状态 {bytes:size}（{params:count} 参数 × {bytes_per_param:g} B）"
                                "> 单卡 {capacity:size}，PP 切不开一层"),
    "pp_exceeds_device": "PP 最多切 {degree} 段，最省的设置（{plan:plan}）每卡仍需 {bytes:size} > 单卡 {capacity:size}",
    "tp_exceeds_device": "TP 最多 {degree} 路，最省的设置（{plan:plan}）每卡仍需 {bytes:size} > 单卡 {capacity:size}",
    # the selection matrix: a strategy alone that fits
    "best_setting": "最佳设置 {plan:plan}：每卡 {bytes:size} ≤ 上限 {budget:size}（余量 {margin:pct1}），步时 {seconds:secs}",
    "single_replica": "只用 {gpus} 卡：没有跨卡通信",
    "step_communication": ("每步通信 {total:secs}，其中掩盖不掉的 {exposed:secs}（占步时 {share:pct}）"
                           "[；被掩盖的部分仍让 NCCL 占着一些 SM，计算因此多花 {contention:secs}]"),
    "communication_hidden": "每步通信 {total:secs}，全部被计算掩盖[，但仍让 NCCL 占着一些 SM，计算因此多花 {contention:secs}]",
    "dp_simplest": "模型与优化器状态放得下单卡，DP 最简单：{dp} 卡各算 {sequences} 条序列",
    "dp_batch_limits_degree": "全局批量 {global_batch} 只能整除到 {dp} 路 DP，{idle} 卡闲置",
    "fsdp_shards_states": "ZeRO-{zero} 把状态分到 {shards} 卡：每卡状态 {states:size}[，gather 峰值 {gather_peak:size}]",
    "dp_fits_not_slower": "DP 已能放下且不更慢（步时 {seconds:secs}），分片只多出通信和实现细节",
    "fsdp_faster_than_dp": "DP 也能放下，但 ZeRO-{zero} 的步时 {seconds:secs} 比 DP 的 {dp_seconds:secs} 短[ {shorter:pct1}]{gain:gain}",
    "tp_alone_idle": "纯 TP 只用 {tp} 卡，其余 {idle} 卡闲置（实际会与 DP/PP 组合）",
    "tp_dp_fits": "模型放得下单卡（纯 DP 每卡 {bytes:size} ≤ {budget:size}）：DP/FSDP 更简单，TP 每层 4 次 all-reduce 纯属额外代价",
    "tp_crosses_nodes": "高频的 TP 通信不该跨慢链路：组内要放进一个节点（≤ {gpus_per_node} 卡）",
    "tp_within_node": "TP 限在节点内（≤ {gpus_per_node} 卡）；再大就要跨 {link}（{bandwidth:rate}）",
    "pp_bubble": "{pp} 段、{microbatches} 个微批次：气泡占比 (p−1)/(m+p−1) = {bubble:pct1}",
    "pp_alone_idle": "纯 PP 只用 {pp} 卡，其余 {idle} 卡闲置（实际会与 DP 组合）",
    "pp_dp_fits": "模型放得下单卡（纯 DP 每卡 {bytes:size} ≤ {budget:size}）：DP 更简单，PP 只会带来气泡和调度复杂度",
    "pp_bubble_too_large": "全局批量只给出 {microbatches} 个微批次，气泡 {bubble:pct1} > {limit:pct}",
    "costlier_per_gpu": ("每步 GPU·秒（步时 × 所用卡数）{gpu_seconds:secs} 是最省方案（{best_strategy}，"
                         "{best_gpu_seconds:secs}）的 {ratio:x} 倍"),
    # the selection matrix: what an unknown fact would decide
    "unknown_global_batch_dp": "DP 用满 {gpus} 卡要求全局批量 ≥ {gpus} 且能被整除；场景没给全局批量，它决定 DP 度和每卡微批次",
    "unknown_global_batch_fsdp": "FSDP 的分片度（此处 {dp}）也受全局批量限制；场景没给全局批量",
    "unknown_interconnect_tp": ("TP 每层每微批次 4 次 all-reduce，是否划算取决于组内互联是否为 NVLink 级；"
                                "场景没说明（此处假设 {link}）"),
    "unknown_global_batch_bubble": "气泡 {bubble:pct1} 取决于微批次数，即全局批量；场景没给全局批量",
    "unknown_global_batch_pp": "气泡 (p−1)/(m+p−1) 取决于微批次数 m（此处 {microbatches}），即全局批量；场景没给全局批量",
    # PP with ZeRO/FSDP: which stacks run it (parallelsel.core.stacks)
    "pp_zero1_stacks": ("PP={pp} 配 ZeRO-{zero}：Megatron-LM 的分布式优化器（只分片优化器状态）和 DeepSpeed 的流水线引擎"
                        "都这样跑，每步一次梯度 reduce-scatter、一次参数 all-gather"),
    "pp_zero2_no_stack": ("PP={pp} 配 ZeRO-{zero} 没有框架这样跑：DeepSpeed 的流水线引擎只接受 ZeRO 阶段 < 2，"
                          "Megatron-LM 只有类 ZeRO-1 的分布式优化器，torchtitan 的 FSDP2 + PP 是另一种做法"),
    "pp_fsdp_torchtitan": ("PP={pp} 配 ZeRO-{zero}（FSDP）按 torchtitan 的 FSDP2 + PP 计：前向后不重分片，梯度到最后一个微批次才 "
                           "reduce-scatter，一步只 gather 一次，峰值时本段参数与梯度完整在卡上（内存同 ZeRO-1）；"
                           "DeepSpeed 的流水线引擎不接受 ZeRO-3"),
}

EN: dict[str, str] = {
    "cluster_too_small": "needs {gpus} GPUs (dp×tp×pp×cp), the cluster has {cluster_gpus}",
    "tp_exceeds_heads": "TP={tp} exceeds the {heads} attention heads",
    "heads_not_divisible": "{heads} attention heads are not divisible by TP={tp}",
    "kv_heads_not_divisible": "{kv_heads} KV heads are not divisible by TP={tp} (with GQA each TP shard holds whole KV groups)",
    "ffn_not_divisible": "FFN width {ffn_hidden} is not divisible by TP={tp}",
    "stages_exceed_layers": "PP×virtual stages={stages} exceeds the {layers} layers",
    "layers_not_divisible": "{layers} layers are not divisible by PP×virtual stages={stages}",
    "stage_layers_sum": "the stages' layers {stage_layers} do not add up to the model's {layers}",
    "batch_below_dp": "global batch {global_batch} is smaller than dp×micro_batch={per_step}: DP degree too large",
    "batch_not_divisible": "global batch {global_batch} is not divisible by dp×micro_batch={per_step}",
    "interleave_microbatches": "the interleaved schedule needs the {microbatches} micro-batches divisible by PP={pp}",
    "ep_needs_moe": "EP={ep} applies to MoE models only; {model} is dense",
    "etp_needs_moe": "expert TP ETP={etp} applies to MoE models only; {model} is dense",
    "experts_not_divisible": "{experts} experts are not divisible by EP={ep}",
    "recompute_not_in_stack": "{stack} has no {recompute} recomputation policy (it offers: {offered})",
    "recompute_layers_exceed_chunk": "recompute_layers={recompute_layers} exceeds the {layers} layers of a model chunk",
    "fp8_not_supported": "{device} has no FP8 tensor cores for {recipe}",
    "memory_exceeds_device": "memory per GPU {bytes:size} > limit {capacity:size}[ (usable {usable:size} × (1 − headroom {headroom:pct}))]{stage:stage}",
    "seq_not_divisible_cp": "sequence length {seq_len} is not a multiple of 2×CP (CP={cp})",
    "tp_overlap_not_offered": "stack {stack} does not overlap TP communication with GEMMs",
    "ep_overlap_not_offered": "stack {stack} does not hide the expert-parallel all-to-alls under another micro-batch's compute",
    "ep_overlap_needs_ep": "EP communication overlap needs an MoE model with expert parallelism EP > 1 (here EP={ep})",
    "dispatcher_not_offered": "stack {stack} has no {dispatcher} token dispatcher (Megatron-Core's flex dispatcher has)",
    "dispatcher_needs_ep": "the {dispatcher} dispatcher needs an MoE model whose experts span ranks (expert TP x EP > 1; here EP={ep})",
    "ep_overlap_recompute": "Megatron-Core's EP communication overlap does not go with full recomputation ({recompute})",
    "ep_overlap_needs_interleaved": "with a pipeline (PP{pp}) EP communication overlap needs the interleaved schedule's virtual stages, not {schedule}",
    "ep_overlap_needs_16bit": "Megatron-Core's EP communication overlap supports only bf16/fp16 models; the recipe {recipe} is fp32",
    "p2p_overlap_not_offered": "stack {stack} does not overlap the pipeline's p2p with compute under {schedule:schedule}",
    "tp_overlap_needs_sp": "TP communication overlap on {stack} needs sequence parallelism (SP), off in this TP={tp} plan",
    "tp_overlap_needs_compile": "async TP on {stack} needs the model under torch.compile (Workload(compile=True))",
    "gpipe_dominated": "GPipe: the same bubble as 1F1B with more activations in flight (dominated)",
    "closest_miss": "the closest is {plan:plan}: {bytes:size} per GPU, {gap:size} over the limit {budget:size}",
    "memory_tight": ("tight: only {margin:pct1} of the usable memory ({free:size}) is left, under {reserve:pct}; "
                     "buffers and optimizer peaks this model does not count may take it: measure the peak "
                     "(torch.cuda.max_memory_reserved) before committing"),
    "fits_memory": ("fits: {bytes:size} per GPU ≤ limit = usable {usable:size}[ × (1 − headroom {headroom:pct})] (margin {margin:pct1}; "
                    "states {states:size}, activations {activations:size}[, gather peak {gather_peak:size}])"),
    "batch_split": ("the batch divides: global batch {global_batch} = DP {dp} × micro-batch {micro_batch} × "
                    "{microbatches} micro-batches (gradient accumulation)"),
    "tp_group": "TP={tp} groups within a node, each layer's collectives on {link} ({bandwidth:rate})",
    "tp_group_spans_nodes": ("{crossing}/{groups} TP={tp} groups span nodes ({gpus_per_node} GPUs per node): "
                             "each layer's collectives on {link} ({bandwidth:rate})"),
    "pp_group": ("PP={pp} stages {spans_nodes:where}, p2p between neighbours on {link} ({bandwidth:rate}), "
                 "{schedule:schedule}[ ({chunks} stages per GPU)]"),
    "cp_group": ("CP={cp}: each sequence cut into {cp} chunks, {tokens} tokens per GPU, K/V blocks passed round a "
                 "ring by p2p, {spans_nodes:where}, on {link} ({bandwidth:rate})"),
    "ep_group": "EP={ep}: two all-to-alls per layer send tokens out and back[ (through the {dispatcher} dispatcher: one copy of a token per destination node, forwarded over NVLink inside it)], {spans_nodes:where}, on {link} ({bandwidth:rate})",
    "dp_group": "DP={dp}: {zero:dp_sync} {spans_nodes:where}, on {link} ({bandwidth:rate})",
    "step_split": ("step {total:secs}, mostly {main:part}: compute {compute_share:pct}, exposed communication "
                   "{communication_share:pct}, bubble {bubble_share:pct}[; communication mostly from {top_strategy} "
                   "({top_seconds:secs})]; MFU {mfu:pct}"),
    "uses_other_gpu_count": ("uses {gpus} GPUs, the cluster has {cluster_gpus}: the search enumerates only plans "
                             "that use the whole cluster, so it is not ranked"),
    "dominated_by": "dominated: {plan:plan}, with less recomputation, fits too and computes less; the search never times this one",
    "nothing_fits": "no plan of the search fits",
    "ranked": "ranked {rank} in the search's top {top}",
    "within_tie": "{ratio:x2} times the best, {best:plan}: within the model's measured error {band:pct1}, the ranking cannot tell them apart",
    "tie_set": ("the first {count} plans are within {band:pct1} of each other (the model's measured error), so the "
                "ranking cannot order them; they differ in {differ}, and a measurement decides ({decide:decide})"),
    "below_top": ("not in the top {top}: step {seconds:secs}, {ratio:x2} times that of the best, {best:plan} "
                  "({best_seconds:secs})"),
    "dominated_by_less_recompute": "the same plan with less recomputation already fits",
    "ranked_below_top": "ranked below the top {top}",
    "bound_exceeds_best": "compute and bubble alone slower than the top {top} (neither sized nor timed)",
    "tp_no_degree": "no TP degree to try: it must exceed 1, divide the {heads} attention heads and not exceed the {gpus} GPUs",
    "pp_no_degree": "no PP stage count to try: it must exceed 1, divide the {layers} layers and not exceed the {gpus} GPUs",
    "no_degree_passes": "each of the {tried} {strategy:degree} tried breaks a hard constraint",
    "dp_state_exceeds_device": ("training state {bytes:size} ({bytes_per_param:g} B/parameter × {params:count} parameters) "
                                "> one GPU's {capacity:size} ({device}): pure DP keeps a whole copy on every GPU"),
    "dp_total_exceeds_device": ("training state {states:size} fits, but with activations each GPU needs {bytes:size} > "
                                "{capacity:size} (thriftiest setting {plan:plan})"),
    "thriftiest_exceeds_device": "the thriftiest setting ({plan:plan}) still needs {bytes:size} per GPU > {capacity:size}",
    "fsdp_one_rank": "only {dp} data-parallel replica: FSDP has nothing to shard over and equals pure DP",
    "fsdp_exceeds_device": ("ZeRO-{zero} over {shards} GPUs leaves {states:size} of state per GPU[, plus a gather peak of "
                            "{gather_peak:size}], activations {activations:size}: {bytes:size} per GPU > {capacity:size}"),
    "fsdp_unit_exceeds_device": ("a layer's {params:count} parameters must be gathered whole: ZeRO-3's gather peak "
                                 "{gather_peak:size} (two layers' weights with prefetch + one layer's gradients, plus the "
                                 "resident embedding and head) > one GPU's {capacity:size}; no shard count helps"),
    "fsdp_unit_dominates": ("a layer's {params:count} parameters must be gathered whole: ZeRO-3's gather peak "
                            "{gather_peak:size} remains whatever the shard count (one GPU {capacity:size})"),
    "pp_layer_exceeds_device": ("every stage holds at least one layer: a layer's state {bytes:size} ({params:count} "
                                "parameters × {bytes_per_param:g} B) > one GPU's {capacity:size}; PP cannot split a layer"),
    "pp_exceeds_device": ("PP splits into at most {degree} stages, and its thriftiest setting ({plan:plan}) still needs "
                          "{bytes:size} per GPU > {capacity:size}"),
    "tp_exceeds_device": ("TP goes at most {degree} ways, and its thriftiest setting ({plan:plan}) still needs "
                          "{bytes:size} per GPU > {capacity:size}"),
    "best_setting": "best setting {plan:plan}: {bytes:size} per GPU ≤ limit {budget:size} (margin {margin:pct1}), step {seconds:secs}",
    "single_replica": "uses {gpus} GPU: no communication between GPUs",
    "step_communication": ("communication {total:secs} per step, of which {exposed:secs} is not hidden "
                           "({share:pct} of the step)[; the SMs the hidden part holds slow the compute by "
                           "{contention:secs}]"),
    "communication_hidden": ("communication {total:secs} per step, all hidden behind compute[, though the SMs it "
                             "holds slow the compute by {contention:secs}]"),
    "dp_simplest": "model and optimizer state fit one GPU, DP is simplest: {dp} GPUs each compute {sequences} sequences",
    "dp_batch_limits_degree": "global batch {global_batch} divides only into {dp}-way DP: {idle} GPUs idle",
    "fsdp_shards_states": "ZeRO-{zero} shards the state over {shards} GPUs: {states:size} per GPU[, gather peak {gather_peak:size}]",
    "dp_fits_not_slower": ("DP already fits and is not slower (step {seconds:secs}); sharding adds only communication "
                           "and implementation detail"),
    "fsdp_faster_than_dp": "DP fits too, but ZeRO-{zero}'s step {seconds:secs} is[ {shorter:pct1}] shorter than DP's {dp_seconds:secs}{gain:gain}",
    "tp_alone_idle": "pure TP uses only {tp} GPUs, the other {idle} idle (in practice combined with DP/PP)",
    "tp_dp_fits": ("the model fits one GPU (pure DP {bytes:size} per GPU ≤ {budget:size}): DP/FSDP are simpler, TP's "
                   "4 all-reduces per layer are pure extra cost"),
    "tp_crosses_nodes": "frequent TP communication should not cross a slow link: keep the group in one node (≤ {gpus_per_node} GPUs)",
    "tp_within_node": "TP stays within a node (≤ {gpus_per_node} GPUs); larger groups would cross {link} ({bandwidth:rate})",
    "pp_bubble": "{pp} stages, {microbatches} micro-batches: bubble fraction (p−1)/(m+p−1) = {bubble:pct1}",
    "pp_alone_idle": "pure PP uses only {pp} GPUs, the other {idle} idle (in practice combined with DP)",
    "pp_dp_fits": ("the model fits one GPU (pure DP {bytes:size} per GPU ≤ {budget:size}): DP is simpler, PP only adds "
                   "a bubble and scheduling complexity"),
    "pp_bubble_too_large": "the global batch gives only {microbatches} micro-batches: bubble {bubble:pct1} > {limit:pct}",
    "costlier_per_gpu": ("GPU-seconds per step (step × GPUs used) {gpu_seconds:secs} are {ratio:x} times the cheapest "
                         "({best_strategy}, {best_gpu_seconds:secs})"),
    "unknown_global_batch_dp": ("DP over all {gpus} GPUs needs a global batch ≥ {gpus} that divides; the scenario gives "
                                "no global batch, and it decides the DP degree and the micro-batch"),
    "unknown_global_batch_fsdp": "FSDP's shard count (here {dp}) is limited by the global batch too; the scenario gives none",
    "unknown_interconnect_tp": ("TP's 4 all-reduces per layer and micro-batch pay off only on NVLink-class links inside "
                                "the group; the scenario does not say (assumed here: {link})"),
    "unknown_global_batch_bubble": "the bubble {bubble:pct1} depends on the micro-batch count, i.e. the global batch; the scenario gives none",
    "unknown_global_batch_pp": ("the bubble (p−1)/(m+p−1) depends on the micro-batch count m (here {microbatches}), "
                                "i.e. the global batch; the scenario gives none"),
    "pp_zero1_stacks": ("PP={pp} with ZeRO-{zero}: Megatron-LM's distributed optimizer (optimizer state sharded) and "
                        "DeepSpeed's pipeline engine run it, with one gradient reduce-scatter and one weight all-gather per step"),
    "pp_zero2_no_stack": ("PP={pp} with ZeRO-{zero} is run by no stack: DeepSpeed's pipeline engine accepts only ZeRO "
                          "stages below 2, Megatron-LM offers only its ZeRO-1-like distributed optimizer, torchtitan's "
                          "FSDP2 + PP works differently"),
    "pp_fsdp_torchtitan": ("PP={pp} with ZeRO-{zero} (FSDP) counted as torchtitan's FSDP2 + PP: no reshard after forward, "
                           "gradients reduce-scattered at the last micro-batch, one gather per step, the stage's weights "
                           "and gradients whole at the peak (ZeRO-1's memory); DeepSpeed's pipeline engine refuses ZeRO-3"),
}

# Category names for the search's exclusion table (a count of plans per code, so no per-plan numbers).
TITLES_ZH: dict[str, str] = {
    "cluster_too_small": "需要的卡数多于集群",
    "tp_exceeds_heads": "TP 大于注意力头数",
    "heads_not_divisible": "头数不能被 TP 整除",
    "kv_heads_not_divisible": "KV 头数不能被 TP 整除",
    "ffn_not_divisible": "FFN 宽度不能被 TP 整除",
    "stages_exceed_layers": "PP 段数大于层数",
    "recompute_layers_exceed_chunk": "固定的重算层数多于每个模型段的层数",
    "layers_not_divisible": "层数不能被 PP 整除",
    "stage_layers_sum": "各段层数之和不等于层数",
    "batch_below_dp": "全局批量小于 DP 度 × 微批次",
    "batch_not_divisible": "全局批量不能整除",
    "interleave_microbatches": "交错调度要求微批次数能被 PP 整除",
    "ep_needs_moe": "EP 只适用于 MoE",
    "etp_needs_moe": "ETP 只适用于 MoE",
    "experts_not_divisible": "专家数不能被 EP 整除",
    "memory_exceeds_device": "内存放不下",
    "dominated_by_less_recompute": "重算更多的同配置方案（被支配）",
    "ranked_below_top": "排名在前 {top} 之后",
    "bound_exceeds_best": "仅计算与气泡就慢于前 {top} 名（未算内存、未计时）",
    "pp_zero2_no_stack": "PP 配 ZeRO-2（没有框架这样跑）",
    "seq_not_divisible_cp": "序列长度不是 2×CP 的倍数",
    "tp_overlap_not_offered": "框架栈不提供 TP 通信重叠",
    "ep_overlap_not_offered": "框架栈不提供 EP 通信重叠",
    "ep_overlap_needs_ep": "EP 通信重叠需要 EP>1 的 MoE",
    "dispatcher_not_offered": "框架栈没有该令牌分发器",
    "dispatcher_needs_ep": "flex 分发器需要专家跨卡的 MoE",
    "ep_overlap_recompute": "EP 通信重叠不能配完全重算",
    "ep_overlap_needs_interleaved": "有流水线时 EP 通信重叠需要交错调度",
    "ep_overlap_needs_16bit": "EP 通信重叠需要 16 位模型",
    "p2p_overlap_not_offered": "该调度下没有流水线 p2p 重叠",
    "tp_overlap_needs_sp": "TP 通信重叠需要 SP",
    "tp_overlap_needs_compile": "异步 TP 需要 torch.compile",
    "gpipe_dominated": "GPipe：气泡与 1F1B 相同、在途激活更多（被支配）",
}

TITLES_EN: dict[str, str] = {
    "cluster_too_small": "needs more GPUs than the cluster has",
    "tp_exceeds_heads": "TP exceeds the attention heads",
    "heads_not_divisible": "heads not divisible by TP",
    "kv_heads_not_divisible": "KV heads not divisible by TP",
    "ffn_not_divisible": "FFN width not divisible by TP",
    "stages_exceed_layers": "more PP stages than layers",
    "recompute_layers_exceed_chunk": "pinned recomputed layers exceed a model chunk's",
    "layers_not_divisible": "layers not divisible by PP",
    "stage_layers_sum": "stage layers do not add up to the layers",
    "batch_below_dp": "global batch below dp×micro-batch",
    "batch_not_divisible": "global batch not divisible",
    "interleave_microbatches": "interleaving needs micro-batches divisible by PP",
    "ep_needs_moe": "EP applies to MoE only",
    "etp_needs_moe": "ETP applies to MoE only",
    "experts_not_divisible": "experts not divisible by EP",
    "memory_exceeds_device": "does not fit in memory",
    "dominated_by_less_recompute": "same plan with more recomputation (dominated)",
    "ranked_below_top": "ranked below the top {top}",
    "bound_exceeds_best": "compute and bubble alone slower than the top {top}",
    "pp_zero2_no_stack": "PP with ZeRO-2 (no stack runs it)",
    "seq_not_divisible_cp": "sequence not a multiple of 2×CP",
    "tp_overlap_not_offered": "the stack has no TP communication overlap",
    "ep_overlap_not_offered": "the stack has no EP communication overlap",
    "ep_overlap_needs_ep": "EP communication overlap needs an MoE with EP > 1",
    "dispatcher_not_offered": "the stack has no such token dispatcher",
    "dispatcher_needs_ep": "a flex dispatcher needs an MoE whose experts span ranks",
    "ep_overlap_recompute": "EP communication overlap with full recomputation",
    "ep_overlap_needs_interleaved": "EP communication overlap with a pipeline needs the interleaved schedule",
    "ep_overlap_needs_16bit": "EP communication overlap needs a 16-bit model",
    "p2p_overlap_not_offered": "no pipeline p2p overlap under this schedule",
    "tp_overlap_needs_sp": "TP communication overlap needs SP",
    "tp_overlap_needs_compile": "async TP needs torch.compile",
    "gpipe_dominated": "GPipe: 1F1B's bubble with more in flight (dominated)",
}

# The stages of the search's funnel (parallelsel.core.search.SearchResult.funnel).
STAGES_ZH: dict[str, str] = {"considered": "枚举", "passed_constraints": "约束通过", "fitting": "内存可放下",
                             "ranked": "排名前 {top}"}
STAGES_EN: dict[str, str] = {"considered": "enumerated", "passed_constraints": "passed the constraints",
                             "fitting": "fit in memory", "ranked": "top {top}"}

# The single changes that make a plan fit (parallelsel.core.search.fixes), by their code; ``{plan:plan}`` is a label.
FIX_ZH: dict[str, str] = {
    "recipe": "改用 8-bit Adam（--recipe {recipe}）", "recompute": "完全重算（--recompute {recompute}）",
    "recompute_layers": "完全重算，但每个模型段只重算 {recompute_layers} 层（--recompute {recompute} --recompute-layers {recompute_layers}）",
    "zero": "ZeRO-{zero}（--zero {zero}）", "sp": "开启序列并行",
    "micro_batch": "微批次 {micro_batch}（--micro-batch {micro_batch}）",
    "gpus": "加到 {gpus} 卡（{nodes} 节点），搜索的首选是 {plan:plan}",
}
FIX_EN: dict[str, str] = {
    "recipe": "switch to 8-bit Adam (--recipe {recipe})", "recompute": "full recomputation (--recompute {recompute})",
    "recompute_layers": "full recomputation of only {recompute_layers} layers a model chunk (--recompute {recompute} "
                        "--recompute-layers {recompute_layers})",
    "zero": "ZeRO-{zero} (--zero {zero})", "sp": "turn on sequence parallelism",
    "micro_batch": "micro-batch {micro_batch} (--micro-batch {micro_batch})",
    "gpus": "grow to {gpus} GPUs ({nodes} nodes); the search's first pick there is {plan:plan}",
}

# -- words ---------------------------------------------------------------------------------------
WORDS: dict[str, dict[str, Mapping]] = {
    "zh": {
        "verdict": {"infeasible": "不可行", "feasible": "可行", "not_preferred": "不优先", "need_info": "需更多信息"},
        "stage": {None: "", "first": "（首段）", "middle": "（中间段）", "last": "（末段）"},
        "decide": {"measure_collectives": "用 nccl-tests 测这些组的总线带宽", "profile_pipeline": "剖析一步，看各段前后向时间与气泡",
                   "measure_overlap": "用 profiler 看 DP/ZeRO 通信被计算掩盖了多少",
                   "measure_kernels": "测这个尺寸下 GEMM 与逐元素算子的效率",
                   "measure_memory": "测真实峰值内存，看更少的重算能否放下"},
        "recompute": {"none": "不重算", "selective": "选择性重算", "op": "算子级选择性重算", "full": "完全重算"},
        "where": {True: "跨节点", False: "在节点内"},
        "schedule": {"gpipe": "GPipe", "1f1b": "1F1B", "interleaved": "交错 1F1B", "zb-h1": "ZB-H1", "looped-bfs": "Looped BFS",
                     "interleaved-zb": "交错零气泡", "zbv": "ZBV（V 形）", "dualpipev": "DualPipeV（V 形）"},
        "dp_sync": {0: "梯度 all-reduce", 1: "ZeRO-1 梯度 reduce-scatter", 2: "ZeRO-2 梯度 reduce-scatter",
                    3: "ZeRO-3 参数 all-gather 与梯度 reduce-scatter"},
        "part": {"compute": "计算", "recompute": "重算", "communication": "暴露的通信", "bubble": "流水线气泡"},
        "degree": {"DP": "DP 度", "FSDP": "FSDP 分片度", "TP": "TP 度", "PP": "PP 段数"},
        "gain": {None: "", "micro_batch": "：省下的内存换来了更大的微批次", "recompute": "：省下的内存换来了更少的重算",
                 "both": "：省下的内存换来了更大的微批次和更少的重算"},
    },
    "en": {
        "verdict": {"infeasible": "infeasible", "feasible": "feasible", "not_preferred": "not preferred",
                    "need_info": "needs more information"},
        "stage": {None: "", "first": " (first stage)", "middle": " (a middle stage)", "last": " (last stage)"},
        "decide": {"measure_collectives": "the groups' bus bandwidth, with nccl-tests",
                   "profile_pipeline": "one profiled step: the stages' forward/backward times and the bubble",
                   "measure_overlap": "how much DP/ZeRO traffic hides behind compute, in a profiler trace",
                   "measure_kernels": "GEMM and elementwise efficiency at that size",
                   "measure_memory": "the real peak memory: whether less recomputation fits"},
        "recompute": {"none": "no recompute", "selective": "selective recompute", "op": "op-level selective recompute",
                      "full": "full recompute"},
        "where": {True: "across nodes", False: "within a node"},
        "schedule": {"gpipe": "GPipe", "1f1b": "1F1B", "interleaved": "interleaved 1F1B", "zb-h1": "ZB-H1",
                     "looped-bfs": "Looped BFS", "interleaved-zb": "interleaved zero bubble", "zbv": "ZBV (V-shaped)",
                     "dualpipev": "DualPipeV (V-shaped)"},
        "dp_sync": {0: "gradient all-reduce", 1: "ZeRO-1 gradient reduce-scatter", 2: "ZeRO-2 gradient reduce-scatter",
                    3: "ZeRO-3 weight all-gather and gradient reduce-scatter"},
        "part": {"compute": "compute", "recompute": "recomputation", "communication": "exposed communication",
                 "bubble": "pipeline bubble"},
        "degree": {"DP": "DP degrees", "FSDP": "FSDP shard counts", "TP": "TP degrees", "PP": "PP stage counts"},
        "gain": {None: "", "micro_batch": ": the memory saved buys a larger micro-batch",
                 "recompute": ": the memory saved buys less recomputation",
                 "both": ": the memory saved buys a larger micro-batch and less recomputation"},
    },
}

_NUMBER_SPECS = {  # value, language -> text
    "size": lambda v, lang: fmt_size(v),
    "secs": lambda v, lang: fmt_time(v, lang=lang),  # to the model's precision (units.places), as the tables
    "rate": lambda v, lang: fmt_rate(v),
    "count": lambda v, lang: fmt_count(v),
    "pct": lambda v, lang: fmt_pct(v, 0),
    "pct1": lambda v, lang: fmt_pct(v, 1),
    "x": lambda v, lang: f"{v:.1f}",
    "x2": lambda v, lang: f"{v:.2f}",
    "g": lambda v, lang: f"{v:g}",
}

TEMPLATES: dict[str, dict[str, dict[str, str]]] = {
    "zh": {"reason": ZH, "title": TITLES_ZH, "stage": STAGES_ZH, "fix": FIX_ZH},
    "en": {"reason": EN, "title": TITLES_EN, "stage": STAGES_EN, "fix": FIX_EN},
}
"""The one template table: per language, a sentence per reason code (``reason``), a category title per exclusion
code (``title``), a name per funnel stage (``stage``) and a sentence per single change (``fix``).
``tests/test_reasons.py`` checks that every code the library can emit has each language's template."""


def plan_label(plan, lang: str = "zh") -> str:
    """A plan (a :class:`parallelsel.Plan` or its ``as_dict()``) as ``DP8 · TP1 · PP1 · mb1``: the parts of
    :func:`parallelsel.core.plan.label_parts`, with recomputation in words of ``lang``."""
    p = plan if isinstance(plan, Mapping) else plan.as_dict()
    return " · ".join(WORDS[lang]["recompute"][text] if field == "recompute" else text
                      for field, text in label_parts(p))


def read_plan(text: str):
    """The :class:`parallelsel.Plan` a label names, worded (:func:`plan_label`, any language) or ASCII
    (:meth:`parallelsel.Plan.label`): the words become mode codes, then :func:`parallelsel.core.plan.parse_plan` reads it.

    Examples:
        >>> from parallelsel import Plan
        >>> read_plan(plan_label(Plan(dp=2, recompute="full"))) == Plan(dp=2, recompute="full")
        True
    """
    if not isinstance(text, str):
        return parse_plan(text)
    words = sorted(((w, mode) for lang in WORDS.values() for mode, w in lang["recompute"].items()),
                   key=lambda x: -len(x[0]))
    coded, used = text, {}
    for word, mode in words:
        if word in coded:
            coded, used[mode] = coded.replace(word, mode), word
    try:
        return parse_plan(coded)
    except ParallelselError as e:  # name the label and its parts as the user wrote them
        msg = str(e).replace(f"plan={coded!r}", f"plan={text!r}", 1)
        for mode, word in used.items():
            msg = msg.replace(f"{mode!r} and", f"{word!r} and").replace(f"and {mode!r} both", f"and {word!r} both")
        raise ParallelselError(msg) from None


class _Formatter(string.Formatter):
    def __init__(self, lang: str):
        super().__init__()
        self.lang = lang

    def format_field(self, value, spec):
        if spec in _NUMBER_SPECS:
            return _NUMBER_SPECS[spec](value, self.lang)
        if spec == "plan":
            return plan_label(value, self.lang)
        if isinstance(value, (list, tuple)):  # a list of codes or fields: each worded by ``spec`` if given
            sep = "、" if self.lang == "zh" else ", "
            return sep.join(self.format_field(v, spec) for v in value)
        if spec in WORDS[self.lang]:
            return WORDS[self.lang][spec][value]
        if spec:
            raise ValueError(f"spec={spec!r}: unknown template spec")
        if value is None:
            return ""
        if isinstance(value, float):
            return f"{value:g}"
        return str(value)


_OPTIONAL = re.compile(r"\[([^\[\]]*)\]")


def _names(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _fill(template: str, values: Mapping, lang: str) -> str:
    def optional(m):
        inner = m.group(1)
        return inner if all(values.get(n) for n in _names(inner)) else ""

    return _Formatter(lang).vformat(_OPTIONAL.sub(optional, template), (), values)


def _check_lang(lang: str) -> None:
    if lang not in LANGS:
        raise ValueError(f"lang={lang!r}: must be one of {', '.join(LANGS)}")


DERIVED = {
    # two step times that round alike at the model's precision (units.places) still differ: say by how much
    "fsdp_faster_than_dp": lambda v: {"shorter": 1 - v["seconds"] / v["dp_seconds"]},
}
"""Values a sentence shows that are computed from the reason's own values (never stored twice in the data)."""


def text(reason: Reason, lang: str = "zh") -> str:
    """The sentence for ``reason`` in ``lang`` ("zh" or "en")."""
    _check_lang(lang)
    table = TEMPLATES[lang]["reason"]
    if reason.code not in table:
        raise KeyError(f"reason code {reason.code!r} has no {lang} sentence in parallelsel/render/reasons.py")
    values = reason.values
    if reason.code in DERIVED:
        values = {**values, **DERIVED[reason.code](values)}
    return _fill(table[reason.code], values, lang)


def title(code: str, values: Mapping | None = None, lang: str = "zh") -> str:
    """The short category name of ``code`` (a row of the search's exclusion table)."""
    _check_lang(lang)
    table = TEMPLATES[lang]["title"]
    if code not in table:
        raise KeyError(f"reason code {code!r} has no {lang} category title in parallelsel/render/reasons.py")
    return _fill(table[code], values or {}, lang)


def stage_title(stage: str, top: int, lang: str = "zh") -> str:
    """The name of a stage of the search's funnel (``considered`` ... ``ranked``)."""
    _check_lang(lang)
    return TEMPLATES[lang]["stage"][stage].format(top=top)


def fix(code: str, values: Mapping, lang: str = "zh") -> str:
    """The sentence of one single change that makes a plan fit (a :class:`parallelsel.core.search.Fix`'s code and values)."""
    _check_lang(lang)
    table = TEMPLATES[lang]["fix"]
    if code not in table:
        raise KeyError(f"fix code {code!r} has no {lang} sentence in parallelsel/render/reasons.py")
    return _fill(table[code], values, lang)


def join(reasons: Iterable[Reason], lang: str = "zh", sep: str | None = None) -> str:
    """The sentences of ``reasons`` joined with "；" (Chinese) or "; " (English)."""
    return (sep if sep is not None else ("；" if lang == "zh" else "; ")).join(text(r, lang) for r in reasons)


def as_json(reason: Reason, lang: str = "zh") -> dict:
    """``{"code", "values", "text"}``: the reason as the CLI's JSON prints it."""
    return {**reason.to_dict(), "text": text(reason, lang)}
