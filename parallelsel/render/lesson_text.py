"""The lesson's words: the four-column matrix's cells, the paper cases' names, the verdict words, and the
validation page's names for the published figures.

Chinese lesson text that :mod:`parallelsel.course.lesson` puts beside the library's data (the strategy, its
collectives, the workloads); kept here because only ``render/`` holds Chinese. The cells cite their sources
in :mod:`parallelsel.course.lesson`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path

from parallelsel.course.lesson import COLLECTIVES, paper_cases
from parallelsel.render.reasons import WORDS

__all__ = ["CASE_NAMES", "FOUR_COLUMNS", "FOUR_COLUMN_CELLS", "StrategyFacts", "MODEL_NAMES", "named_paper_cases", "verdict_word", "FOUR_COLUMN_HEADERS", "REFERENCE_LABELS_ZH", "REFERENCE_UNITS_ZH",
           "VERDICT_WORDS", "reference_label", "reference_unit"]

FOUR_COLUMN_HEADERS = ("策略", "解决的瓶颈", "主要通信", "适用条件", "代价")
"""The table's header row: strategy, then the lesson's four columns."""

# strategy -> (name, bottleneck, communication, conditions, cost)
FOUR_COLUMN_CELLS: dict[str, tuple[str, str, str, str, str]] = {
    'DP': (
        '数据并行 (DP)',
        '单卡吞吐：每卡放一份完整模型，各算一部分 batch',
        '梯度 all-reduce，每步一次：缓冲 2Ψ 字节（bf16 梯度，Ψ 为参数量），ring 下每卡收发 2(n−1)/n × 2Ψ',
        '完整训练状态（约 16Ψ 字节）加激活能放进单卡；全局批量能被 n × 微批次整除',
        '每卡复制全部状态；n 受全局批量限制，n 太大会逼大 batch 或让每卡微批次过小',
    ),
    'FSDP': (
        '全分片数据并行 (FSDP/ZeRO)',
        '训练状态放不下单卡：把参数、梯度、优化器状态分片到 n 卡（约 16Ψ/n）',
        'ZeRO-3/FSDP：前向、反向各 all-gather 一次参数（2Ψ 字节），反向 reduce-scatter 梯度（2Ψ 字节），每卡收发 3(n−1)/n × 2Ψ，约为 DP 的 1.5 倍；ZeRO-1/2 与 DP 同量',
        '一层（一个 FSDP 单元）gather 后的参数和梯度加激活放得下；通信能被计算掩盖',
        '通信更频繁（每个微批次都 gather）；gather 峰值、预取与分组策略等实现细节',
    ),
    'TP': (
        '张量并行 (TP)',
        '单层矩阵放不下或单层计算太慢：把每层的矩阵按列/行切到 t 卡',
        '每层每微批次 4 次 all-reduce（前向 2、反向 2），每次 b·s·h 个激活（×2 字节），每卡收发 2(t−1)/t × 2bsh；完全重算时前向的 2 次再做一遍',
        't 整除头数和 FFN 宽度；组内有高速互联（NVLink），通常 t ≤ 每节点卡数',
        '通信在关键路径上、频率高，跨慢链路代价大；t 大时矩阵变小、kernel 效率下降',
    ),
    'PP': (
        '流水线并行 (PP)',
        '模型层数多、整体放不下：按层切成 p 段，每段放一部分层',
        '相邻段之间 p2p：每微批次前向传 b·s·h 个激活、反向传同样大小的梯度（×2 字节），量小且只到邻居',
        '层数能被 p（×虚拟段）整除；每段至少一整层放得下；微批次数 m 远大于 p',
        '气泡 (p−1)/(m+p−1)；段间负载不均、调度与调试复杂；首段要存多个微批次的激活',
    ),
    'SP/CP': (
        '序列并行 / 上下文并行 (SP/CP)',
        '长序列的激活和注意力计算：SP 在 TP 组内切 LayerNorm/Dropout 的激活，CP 把序列切到 c 卡',
        'SP：把 TP 的 all-reduce 换成等量的 all-gather + reduce-scatter，通信量不变；CP：每层在 CP 组内轮转（ring）或 all-gather K、V 块，每卡约 2(c−1)/c · b·s·h_kv 个元素，反向再传 dK、dV',
        'SP 随 TP 使用；CP 用在序列很长（数万 token 以上）、单卡激活放不下时',
        'CP 的注意力需要按块计算与负载均衡（因果掩码）；实现与调试复杂',
    ),
    'EP': (
        '专家并行 (EP)',
        'MoE 模型的专家参数：把 E 个专家分到 e 卡，每卡只存 E/e 个',
        '每个 MoE 层前向 2 次 all-to-all（分发 dispatch、合并 combine）、反向 2 次，每次 b·s·h·k 个激活（k 为 top-k），每卡收发 (e−1)/e 之',
        'MoE 模型且专家数能被 e 整除；路由负载均衡（辅助损失或路由偏置）',
        'all-to-all 在关键路径上、对拓扑敏感（要与另一微批次的计算重叠才藏得住）；路由不均时最忙的专家拖慢整层，不丢 token 时还要按最坏情况留激活内存',
    ),
}

CASE_NAMES = {"fits_one_gpu": "模型可单卡", "state_exceeds_gpu": "状态超单卡", "layer_exceeds_gpu": "单层超单卡"}
"""The lesson's names of its three paper cases (最小练习 1), by the case keys of :func:`parallelsel.course.lesson.paper_cases`."""




VERDICT_WORDS: dict[str, str] = WORDS["zh"]["verdict"]
"""Verdict code (:class:`parallelsel.core.matrix.Verdict` values) -> the lesson's word (the template table's
``verdict`` words, :data:`parallelsel.render.reasons.WORDS`, which also has them in English)."""

# -- the validation page: published figures' labels and units (parallelsel.course.references, ASCII) in Chinese ----------
REFERENCE_LABELS_ZH = {
    "GPT-3: activations saved by selective recompute": "GPT-3：选择性重算省下的激活",
    "MT-NLG: activations saved by selective recompute": "MT-NLG：选择性重算省下的激活",
    "TP+SP+selective recompute vs TP only": "TP+SP+选择性重算 相比只用 TP",
    "GPT-2 (largest)": "GPT-2（最大）",
    "Mixtral 8x7B (total)": "Mixtral 8x7B（总）",
    "Mixtral 8x7B (active per token)": "Mixtral 8x7B（每 token 激活）",
    "eq. 4: 8TP/(nX)": "式 4：8TP/(nX)",
    "exact FLOPs per token (full recompute)": "本库精确的每 token FLOPs（完全重算）",
}
REFERENCE_UNITS_ZH = {"B params": "B 参数", "M params": "M 参数", "days": "天", "x sbh bytes": "× sbh 字节"}
_SHAPE = re.compile(r"^(\S+) \((l=[^()]*)\)$")  # Narayanan Table 1 rows: "1.7B (l=24, h=2304, a=24)"


def reference_label(label: str) -> str:
    """A published figure's label (:mod:`parallelsel.course.references`) as the validation page prints it."""
    return REFERENCE_LABELS_ZH.get(label) or _SHAPE.sub(r"\1（\2）", label)


def reference_unit(unit: str) -> str:
    """A published figure's unit as the validation page prints it."""
    return REFERENCE_UNITS_ZH.get(unit, unit)


@dataclass(frozen=True)
class StrategyFacts:
    """One row of the four-column matrix. ``collectives`` names the operations in ``communication``."""

    strategy: str
    name: str
    bottleneck: str
    communication: str
    conditions: str
    cost: str
    collectives: tuple[str, ...]


FOUR_COLUMNS: tuple[StrategyFacts, ...] = tuple(
    StrategyFacts(s, *FOUR_COLUMN_CELLS[s], collectives=ops) for s, ops in COLLECTIVES.items())
"""The lesson's four-column table: the cells' words here, each strategy's collectives from
:data:`parallelsel.course.lesson.COLLECTIVES`."""


MODEL_NAMES = {"Wide-2x24576": "宽层 2×24576"}
"""The lesson's names for the models :mod:`parallelsel.course.lesson` names in ASCII (case 3's wide layer)."""


def named_paper_cases():
    """:func:`parallelsel.course.lesson.paper_cases` as the pages show them: each case id replaced by the lesson's
    name for it, and a model with a lesson name (:data:`MODEL_NAMES`) carrying that name."""
    out = []
    for case, w, c in paper_cases():
        if w.model.name in MODEL_NAMES:
            w = replace(w, model=replace(w.model, name=MODEL_NAMES[w.model.name]))
        out.append((CASE_NAMES[case], w, c))
    return out


def verdict_word(verdict, lang: str = "zh") -> str:
    """The lesson's word for a :class:`parallelsel.core.matrix.Verdict` (or its code): 不可行, 可行, 不优先, 需更多信息
    (``lang="en"``: infeasible, feasible, not preferred, needs more information)."""
    return WORDS[lang]["verdict"][getattr(verdict, "value", verdict)]
