"""What is being trained (Workload) and how it is split (Plan), with the hard constraints between them.

A plan places ``dp * tp * pp`` ranks. Rank order is TP fastest, then DP, then PP (Megatron-LM's
default order), so a TP group is ``tp`` consecutive GPUs, a DP group strides by ``tp``, and a PP
group strides by ``tp * dp``. FSDP maps onto ZeRO: FULL_SHARD = ZeRO-3, SHARD_GRAD_OP = ZeRO-2,
NO_SHARD = ZeRO-0 (plain DP), HYBRID_SHARD = ZeRO-3 inside a shard group of ``shard`` ranks and
replication across groups (Zhao et al. 2023, PyTorch FSDP, §3.2.1; the FSDP docs' ShardingStrategy).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ._check import ParallelselError, choice, flag, positive_int, store
from .hardware import Cluster
from .model import ATTENTION, RECOMPUTE, SHAPE_LIMITS, Transformer
from .recipe import Recipe

SCHEDULES = ("gpipe", "1f1b", "interleaved", "zb-h1")

MAX_GLOBAL_BATCH = 2**30
"""Largest global batch (sequences per step) accepted: far beyond any published run (Llama 3 405B
peaks at 16M tokens, 2,048 sequences of 8,192; Dubey et al. 2024 §3.4.1), small enough that tokens
per step stay exact in float64."""

FSDP_STRATEGIES = {"NO_SHARD": 0, "SHARD_GRAD_OP": 2, "FULL_SHARD": 3, "HYBRID_SHARD": 3}


@dataclass(frozen=True)
class Workload:
    """A training job: model, recipe, global batch (sequences per optimizer step), sequence length and attention kernel.

    ``attention`` is ``"flash"`` (default: a fused kernel, as every current training stack uses) or
    ``"standard"`` (the s x s scores are stored, Korthikanti et al. 2022's accounting); see
    :func:`parallelsel.memory.activations_per_layer`.
    """

    model: Transformer
    recipe: Recipe = None  # type: ignore[assignment]
    global_batch: int = 1
    seq_len: int | None = None
    attention: str = "flash"

    def __post_init__(self):
        from .recipe import RECIPES  # local: avoids a cycle at import time

        if not isinstance(self.model, Transformer):
            raise ParallelselError(f"model={self.model!r}: must be a Transformer (e.g. ps.MODELS['llama3-8b'])")
        if self.recipe is None:
            object.__setattr__(self, "recipe", RECIPES["bf16-adam"])
        if not isinstance(self.recipe, Recipe):
            raise ParallelselError(f"recipe={self.recipe!r}: must be a Recipe (e.g. ps.RECIPES['bf16-adam'])")
        store(self, "global_batch", positive_int("global_batch", self.global_batch, maximum=MAX_GLOBAL_BATCH))
        if self.seq_len is None:
            object.__setattr__(self, "seq_len", self.model.seq_len)
        store(self, "seq_len", positive_int("seq_len", self.seq_len, maximum=SHAPE_LIMITS["seq_len"]))
        choice("attention", self.attention, ATTENTION)

    @property
    def tokens(self) -> int:
        """Tokens per optimizer step."""
        return self.global_batch * self.seq_len


@dataclass(frozen=True)
class Plan:
    """Degrees of each parallel dimension and the knobs that go with them.

    ``zero``: ZeRO stage 0-3 across the DP group (3 = FSDP FULL_SHARD). ``shard``: size of the
    ZeRO/FSDP shard group (None = the whole DP group; smaller = HSDP). ``sp``: Megatron sequence
    parallelism inside the TP group. ``chunks``: virtual pipeline stages per GPU (interleaved).
    ``ep``: expert-parallel degree, carved out of the DP group (MoE only).
    """

    dp: int = 1
    tp: int = 1
    pp: int = 1
    zero: int = 0
    micro_batch: int = 1
    sp: bool = False
    recompute: str = "none"
    schedule: str = "1f1b"
    chunks: int = 1
    shard: int | None = None
    ep: int = 1

    def __post_init__(self):
        for f in ("dp", "tp", "pp", "micro_batch", "chunks", "ep"):
            store(self, f, positive_int(f, getattr(self, f)))
        try:
            store(self, "zero", positive_int("zero", self.zero, minimum=0, maximum=3))
        except ParallelselError:
            raise ParallelselError(f"zero={self.zero!r}: must be a ZeRO stage 0, 1, 2 or 3") from None
        store(self, "sp", flag("sp", self.sp))
        choice("recompute", self.recompute, RECOMPUTE)
        choice("schedule", self.schedule, SCHEDULES)
        if self.chunks > 1 and self.schedule != "interleaved":
            raise ParallelselError(f"chunks={self.chunks}: virtual stages need schedule='interleaved', got {self.schedule!r}")
        if self.shard is not None:
            store(self, "shard", positive_int("shard", self.shard))
            if self.dp % self.shard:
                raise ParallelselError(f"shard={self.shard}: must divide dp={self.dp} (HSDP shard groups tile the DP group)")
        if self.dp % self.ep:
            raise ParallelselError(f"ep={self.ep}: must divide dp={self.dp} (experts are spread over DP ranks)")

    @property
    def gpus(self) -> int:
        return self.dp * self.tp * self.pp

    @property
    def shard_size(self) -> int:
        """Ranks that ZeRO/FSDP shards states over (1 when zero == 0)."""
        if self.zero == 0:
            return 1
        return self.dp if self.shard is None else self.shard

    def microbatches(self, workload: Workload) -> int:
        """Micro-batches per pipeline per step (gradient-accumulation steps): B / (dp * b)."""
        return workload.global_batch // (self.dp * self.micro_batch)

    def with_(self, **changes) -> "Plan":
        return replace(self, **changes)

    def as_dict(self) -> dict:
        """The plan's fields as a plain dict (what a reason's ``values`` carry for a plan)."""
        return {f: getattr(self, f) for f in self.__dataclass_fields__}

    @property
    def dims(self) -> int:
        """How many parallel dimensions are in use (a proxy for operational complexity)."""
        return sum(d > 1 for d in (self.dp, self.tp, self.pp, self.ep)) + (self.zero > 0) + bool(self.sp and self.tp > 1)

    def label(self) -> str:
        parts = [f"DP{self.dp}", f"TP{self.tp}", f"PP{self.pp}"]
        if self.zero:
            parts.append(f"ZeRO-{self.zero}" + (f"/shard{self.shard}" if self.shard and self.shard != self.dp else ""))
        if self.sp and self.tp > 1:
            parts.append("SP")
        if self.ep > 1:
            parts.append(f"EP{self.ep}")
        parts.append(f"mb{self.micro_batch}")
        if self.recompute != "none":
            parts.append({"selective": "选择性重算", "full": "完全重算"}[self.recompute])
        if self.pp > 1:
            parts.append(self.schedule + (f"×{self.chunks}" if self.chunks > 1 else ""))
        return " · ".join(parts)


def fsdp_plan(strategy: str, dp: int, shard: int | None = None, **kw) -> Plan:
    """A Plan for a PyTorch FSDP ShardingStrategy (see the module docstring for the mapping)."""
    choice("strategy", strategy, tuple(FSDP_STRATEGIES))
    if strategy == "HYBRID_SHARD" and shard is None:
        raise ParallelselError("shard=None: HYBRID_SHARD needs the shard group size (usually GPUs per node)")
    return Plan(dp=dp, zero=FSDP_STRATEGIES[strategy], shard=shard if strategy == "HYBRID_SHARD" else None, **kw)


def constraint_violations(workload: Workload, plan: Plan, cluster: Cluster | None = None) -> list[str]:
    """Every hard constraint (other than memory) that ``plan`` violates, as sentences (Chinese, for the site).

    Divisibility rules are Megatron-LM's (Shoeybi et al. 2019 §3; Narayanan et al. 2021 §2):
    heads, KV groups (GQA) and FFN width split over TP, layers over PP x virtual chunks, the global batch into
    dp x micro_batch x micro-batches, and the interleaved schedule needs micro-batches divisible by PP.
    """
    m = workload.model
    out: list[str] = []
    if cluster is not None and plan.gpus > cluster.gpus:
        out.append(f"需要 {plan.gpus} 张卡（dp×tp×pp），集群只有 {cluster.gpus} 张")
    if plan.tp > m.heads:
        out.append(f"TP={plan.tp} 大于注意力头数 {m.heads}")
    elif m.heads % plan.tp:
        out.append(f"注意力头数 {m.heads} 不能被 TP={plan.tp} 整除")
    elif m.kv_heads % plan.tp:
        # Grouped-query attention: each TP rank must hold whole K/V groups (Megatron-LM asserts
        # num_query_groups % tensor_model_parallel_size == 0; Ainslie et al. 2023 for GQA).
        out.append(f"KV 头数 {m.kv_heads} 不能被 TP={plan.tp} 整除（GQA 的每个 TP 分片要持有整数个 KV 组）")
    if m.ffn_hidden % plan.tp:
        out.append(f"FFN 宽度 {m.ffn_hidden} 不能被 TP={plan.tp} 整除")
    if plan.pp * plan.chunks > m.layers:
        out.append(f"PP×虚拟段={plan.pp * plan.chunks} 大于层数 {m.layers}")
    elif m.layers % (plan.pp * plan.chunks):
        out.append(f"层数 {m.layers} 不能被 PP×虚拟段={plan.pp * plan.chunks} 整除")
    per_step = plan.dp * plan.micro_batch
    if workload.global_batch < per_step:
        out.append(f"global batch {workload.global_batch} 小于 dp×micro_batch={per_step}，DP 度太大")
    elif workload.global_batch % per_step:
        out.append(f"global batch {workload.global_batch} 不能被 dp×micro_batch={per_step} 整除")
    elif plan.schedule == "interleaved" and plan.pp > 1 and plan.microbatches(workload) % plan.pp:
        out.append(f"交错调度要求微批次数 {plan.microbatches(workload)} 能被 PP={plan.pp} 整除")
    if plan.ep > 1:
        if not m.is_moe:
            out.append(f"EP={plan.ep} 只适用于 MoE 模型，{m.name} 是稠密模型")
        elif m.experts % plan.ep:
            out.append(f"专家数 {m.experts} 不能被 EP={plan.ep} 整除")
    return out


_LABEL_RECOMPUTE = {"选择性重算": "selective", "selective": "selective", "完全重算": "full", "full": "full",
                    "none": "none"}


def parse_plan(text: str) -> Plan:
    """The :class:`Plan` a label names: the inverse of :meth:`Plan.label`, also in plain ASCII.

    Parts are separated by ``·``, spaces or commas, case-insensitive: ``DP16``, ``TP4``, ``PP2``,
    ``EP8``, ``ZeRO-3`` (or ``ZeRO3``, ``FSDP`` = ZeRO-3), ``ZeRO-3/shard8`` (HSDP), ``SP``, ``mb2``,
    a recomputation (``selective``/``full`` or the label's Chinese words) and a schedule (``1f1b``,
    ``gpipe``, ``zb-h1``, ``interleaved×4`` or ``interleaved4``). Unnamed fields keep Plan's defaults.

    Examples:
        >>> parse_plan("DP16·TP4·PP1·ZeRO-3").label()
        'DP16 · TP4 · PP1 · ZeRO-3 · mb1'
        >>> parse_plan(Plan(dp=2, pp=4, schedule="interleaved", chunks=2, micro_batch=2).label()).chunks
        2
    """
    import re

    if not isinstance(text, str) or not text.strip():
        raise ParallelselError(f"plan={text!r}: must be a plan label such as 'DP16·TP4·PP1·ZeRO-3'")
    kw: dict = {}
    for raw in re.split(r"[·\s,]+", text.strip()):
        if not raw:
            continue
        t = raw.lower()
        m = re.fullmatch(r"(dp|tp|pp|ep)(\d+)", t)
        if m:
            kw[m.group(1)] = int(m.group(2))
            continue
        m = re.fullmatch(r"zero-?(\d)(?:/shard(\d+))?", t)
        if m:
            kw["zero"] = int(m.group(1))
            if m.group(2):
                kw["shard"] = int(m.group(2))
            continue
        if t == "fsdp":
            kw["zero"] = 3
            continue
        if t == "sp":
            kw["sp"] = True
            continue
        m = re.fullmatch(r"mb(\d+)", t)
        if m:
            kw["micro_batch"] = int(m.group(1))
            continue
        if raw in _LABEL_RECOMPUTE or t in _LABEL_RECOMPUTE:
            kw["recompute"] = _LABEL_RECOMPUTE.get(raw, _LABEL_RECOMPUTE.get(t))
            continue
        m = re.fullmatch(r"interleaved(?:[×x*]?(\d+))?", t)
        if m:
            kw["schedule"] = "interleaved"
            if m.group(1):
                kw["chunks"] = int(m.group(1))
            continue
        if t in SCHEDULES:
            kw["schedule"] = t
            continue
        raise ParallelselError(f"plan={text!r}: cannot read {raw!r}; parts are DP<n> TP<n> PP<n> EP<n> ZeRO-<0..3>"
                               f"[/shard<n>] SP mb<n> selective|full and a schedule ({', '.join(SCHEDULES)}; "
                               f"interleaved×<v>)")
    return Plan(**kw)
