"""The ``parallelsel`` command: selection matrix, ranked plans, pipeline bubble and memory, from a shell.

Subcommands (``parallelsel <cmd> --help`` for each)::

    parallelsel matrix --model llama2-70b --nodes 4 --global-batch 1024
    parallelsel plan   --model llama3-70b --nodes 8 --global-batch 512 --top 5
    parallelsel bubble --stages 4 --microbatches 8 --schedule 1f1b --svg bubble.svg
    parallelsel memory --model llama2-13b --tp 8 --recompute selective

The model comes from ``--model KEY`` (a preset), explicit shape flags (``--layers --hidden --heads``
and optionally ``--vocab --ffn-hidden --kv-heads``; with ``--model`` they override the preset's
fields), or ``--params N``: a GPT-shaped model of about N parameters (see :func:`gpt_like`).

Exit status: 0 on success, 2 on bad input -- one line on stderr saying what is wrong and what is
allowed, never a traceback.

``--json`` prints one JSON object with stable keys:

* ``matrix``: ``{"model", "cluster", "unknown": [...], "rows": [{"strategy", "verdict", "reasons": [...],
  "best": null | {"plan", "memory_bytes", "step_s"}}]}``
* ``plan``: ``{"model", "cluster", "considered", "funnel": [{"stage", "plans"}], "excluded": {reason: n},
  "results": [{"rank", "plan", "dp", "tp", "pp", "zero", "micro_batch", "sp", "recompute", "schedule",
  "chunks", "step_s", "tokens_per_s", "mfu", "memory_bytes", "why": [...]}], "seconds"}``
* ``bubble``: ``{"schedule", "stages", "microbatches", "chunks", "bubble_fraction", "bubble_overhead",
  "simulated_bubble_fraction", "simulated_bubble_overhead", "makespan", "svg": null | path}``
* ``memory``: ``{"model", "cluster", "plan", "fits", "reasons": [...], "capacity_bytes", "total_bytes",
  "components_bytes": {"params", "grads", "optimizer", "activations", "embeddings", "gather_peak",
  "allocator"}, "stage", "step_s", "tokens_per_s", "mfu"}``

``model`` is ``{"name", "params", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab",
"seq_len"}``; ``cluster`` is ``{"device", "nodes", "gpus_per_node", "gpus", "intra", "inter",
"memory_bytes"}``. Sizes are bytes, times seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

from ._check import ParallelselError, positive_int
from .memory import DEFAULT_HEADROOM
from .model import ATTENTION

__all__ = ["main", "gpt_like", "build_parser"]

DEFAULT_DEVICE = "a100-80gb"
DEFAULT_SEQ = 2048


def gpt_like(params: float, seq_len: int = DEFAULT_SEQ, vocab: int = 51200):
    """A GPT-shaped :class:`~parallelsel.Transformer` of roughly ``params`` parameters.

    Derivation: a GPT layer has about 12 h^2 parameters (Narayanan et al. 2021, eq. 2) and large
    GPT models keep h / l near 128 (GPT-3 175B: 12288 / 96; 13B: 5120 / 40; 6.7B: 4096 / 32,
    Brown et al. 2020, Table 2.1). So 12 l h^2 = 12 h^3 / 128 gives h = (128 N / 12)^(1/3),
    rounded to a multiple of 128 (heads of width 128); then l = round((N - V h) / (12 h^2)), at
    least 1, so the embedding (V h) is counted. For N = 175e9 this returns GPT-3's l=96, h=12288.

    Examples:
        >>> m = gpt_like(175e9)
        >>> m.layers, m.hidden, m.heads
        (96, 12288, 96)
    """
    from .model import Transformer

    n = float(params)
    if not n >= 1e6:
        raise ParallelselError(f"params={params!r}: must be a number >= 1e6 (e.g. 7e9)")
    h = max(128, int(round((128 * n / 12) ** (1 / 3) / 128)) * 128)
    layers = max(1, int(round((n - vocab * h) / (12 * h * h))))
    return Transformer(layers=layers, hidden=h, heads=h // 128, seq_len=seq_len, vocab=vocab, tied_embeddings=True,
                       position="learned", bias=True, norm="layernorm", name=f"GPT 形 ~{n / 1e9:g}B")


# -- argument parsing ------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    """argparse that reports errors as one usage line + one error line and exit status 2 (never a traceback)."""

    def error(self, message):  # pragma: no cover - exercised through main()
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: 错误 error: {message}\n")
        raise SystemExit(2)


def _model_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("模型 model（--model、形状参数或 --params 三选一）")
    g.add_argument("--model", metavar="KEY", help="模型预设，如 llama3-70b、gpt3-175b（见 ps.MODELS）")
    g.add_argument("--params", type=float, metavar="N", help="约 N 个参数的 GPT 形模型（h≈(128N/12)^(1/3)，h/l≈128）")
    g.add_argument("--layers", type=int, help="层数 layers")
    g.add_argument("--hidden", type=int, help="隐藏维度 hidden")
    g.add_argument("--heads", type=int, help="注意力头数 heads")
    g.add_argument("--kv-heads", type=int, help="KV 头数（GQA）")
    g.add_argument("--ffn-hidden", type=int, help="FFN 宽度（默认 4×hidden）")
    g.add_argument("--vocab", type=int, help="词表大小（默认 51200）")
    g.add_argument("--seq-len", type=int, metavar="N", help="序列长度（默认：模型的 seq_len）")
    g.add_argument("--recipe", default="bf16-adam", metavar="KEY", help="精度与优化器（默认 bf16-adam；见 ps.RECIPES）")
    g.add_argument("--global-batch", type=int, metavar="N", help="每步的序列数 global batch（不给则视为未知）")
    g.add_argument("--attention", default="flash", metavar="KIND",
                   help="注意力内核：flash（融合内核，不存 s×s 分数；默认）/ standard（Korthikanti 的记账）")


def _cluster_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("集群 cluster")
    g.add_argument("--device", default=DEFAULT_DEVICE, metavar="KEY", help=f"设备预设（默认 {DEFAULT_DEVICE}；见 ps.DEVICES）")
    g.add_argument("--nodes", type=int, default=1, metavar="N", help="节点数（默认 1）")
    g.add_argument("--gpus-per-node", type=int, default=8, metavar="N", help="每节点卡数（默认 8）")
    g.add_argument("--intra", metavar="KEY", help="节点内互联（默认 nvlink3，视为未说明；见 ps.LINKS）")
    g.add_argument("--inter", metavar="KEY", help="节点间互联（默认 ib-hdr；见 ps.LINKS）")
    g.add_argument("--headroom", type=float, default=DEFAULT_HEADROOM, metavar="F",
                   help=f"放得下要求每卡内存 ≤ 可用内存 ×(1−F)（默认 {DEFAULT_HEADROOM:g}）")


def _plan_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("并行设置 plan")
    g.add_argument("--dp", type=int, help="数据并行度")
    g.add_argument("--tp", type=int, help="张量并行度")
    g.add_argument("--pp", type=int, help="流水线段数")
    g.add_argument("--zero", type=int, help="ZeRO 阶段 0-3（3 = FSDP FULL_SHARD）")
    g.add_argument("--micro-batch", type=int, help="微批大小")
    g.add_argument("--recompute", help="重算：none / selective / full")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed so the docs can print its help)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="输出 JSON（键见模块文档） machine-readable output")
    parser = _Parser(prog="parallelsel", description="为大模型训练选择 DP / FSDP / TP / PP（Choose DP, FSDP, TP, PP）")
    sub = parser.add_subparsers(dest="command", metavar="{matrix,plan,bubble,memory}", parser_class=_Parser)
    sub.required = True

    m = sub.add_parser("matrix", parents=[common], help="选择矩阵：四种策略各自的判断与理由",
                       description="选择矩阵 selection matrix：DP、FSDP、TP、PP 单独使用时是否可行、是否优先，附理由。"
                                   "未给 --global-batch 或 --intra 时，相应判断可能是“需更多信息”。")
    _model_args(m)
    _cluster_args(m)

    pl = sub.add_parser("plan", parents=[common], help="搜索混合并行方案并排名",
                        description="搜索 search：枚举 dp×tp×pp、ZeRO、微批、重算与调度，排除不可行者，按步时排名并解释。"
                                    "--dp/--tp/--pp 等固定某一维。")
    _model_args(pl)
    _cluster_args(pl)
    _plan_args(pl)
    pl.add_argument("--top", type=int, default=10, metavar="N", help="输出前 N 名（默认 10）")

    b = sub.add_parser("bubble", parents=[common], help="流水线气泡：公式与模拟",
                       description="流水线气泡 pipeline bubble：闭式 (p-1)/(v·m+p-1) 与事件模拟，可输出甘特图 SVG。")
    b.add_argument("--stages", type=int, required=True, metavar="P", help="流水线段数 p")
    b.add_argument("--microbatches", type=int, required=True, metavar="M", help="微批次数 m")
    b.add_argument("--schedule", default="1f1b", help="调度：gpipe / 1f1b / interleaved / zb-h1（默认 1f1b）")
    b.add_argument("--chunks", type=int, default=1, metavar="V", help="每卡虚拟段数（interleaved）")
    b.add_argument("--svg", metavar="FILE", help="把甘特图写入 SVG 文件")

    mem = sub.add_parser("memory", parents=[common], help="给定方案的每卡内存与步时",
                         description="内存 memory：给定 dp/tp/pp/ZeRO/微批/重算，算每卡内存分项、是否放得下与步时。"
                                     "--dp 默认取满集群：卡数 ÷ (tp×pp)。")
    _model_args(mem)
    _cluster_args(mem)
    _plan_args(mem)
    mem.add_argument("--sp", action="store_true", help="开启序列并行（tp>1 时）")
    mem.add_argument("--schedule", default="1f1b", help="流水线调度（默认 1f1b）")
    mem.add_argument("--chunks", type=int, default=1, metavar="V", help="每卡虚拟段数（interleaved）")
    return parser


# -- building library objects from arguments --------------------------------------------------
def _headroom_arg(a) -> float:
    from .memory import check_headroom

    try:
        return check_headroom(a.headroom)
    except ParallelselError:
        raise ParallelselError(f"--headroom {a.headroom!r}: must be a fraction in [0, 1)") from None


def _model(a):
    from ._check import preset
    from .model import MODELS, Transformer

    shape = {k: getattr(a, k) for k in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab")
             if getattr(a, k) is not None}
    seq = a.seq_len
    if a.model and a.params is not None:
        raise ParallelselError("--model and --params: give only one of them")
    if a.model:
        m = preset("--model", a.model, MODELS)
        if shape:
            m = replace(m, **shape, name=m.name + "（改）")
    elif a.params is not None:
        m = gpt_like(a.params, seq_len=seq or DEFAULT_SEQ)
    elif {"layers", "hidden", "heads"} <= shape.keys():
        m = Transformer(seq_len=seq or DEFAULT_SEQ, **{"vocab": 51200, **shape}, name="自定义")
    else:
        raise ParallelselError("model: give --model KEY, --params N, or at least --layers, --hidden and --heads")
    if seq is not None:
        m = replace(m, seq_len=positive_int("--seq-len", seq))
    return m


def _workload(a, cluster):
    from ._check import preset
    from .plan import Workload
    from .recipe import RECIPES

    batch = a.global_batch
    if batch is None:
        batch = cluster.gpus  # one sequence per GPU; reported as an assumption
    if a.attention not in ATTENTION:
        raise ParallelselError(f"--attention {a.attention!r}: must be one of {', '.join(ATTENTION)}")
    return Workload(_model(a), recipe=preset("--recipe", a.recipe, RECIPES), global_batch=batch,
                    attention=a.attention)


def _cluster(a):
    from ._check import preset
    from .hardware import DEVICES, LINKS, Cluster

    kw = {}
    if a.intra:
        kw["intra"] = preset("--intra", a.intra, LINKS)
    if a.inter:
        kw["inter"] = preset("--inter", a.inter, LINKS)
    return Cluster(preset("--device", a.device, DEVICES), nodes=positive_int("--nodes", a.nodes),
                   gpus_per_node=positive_int("--gpus-per-node", a.gpus_per_node), **kw)


def _model_json(m) -> dict:
    return {"name": m.name, "params": m.params, "layers": m.layers, "hidden": m.hidden, "heads": m.heads,
            "kv_heads": m.kv_heads, "ffn_hidden": m.ffn_hidden, "vocab": m.vocab, "seq_len": m.seq_len}


def _cluster_json(c) -> dict:
    return {"device": c.device.name, "nodes": c.nodes, "gpus_per_node": c.gpus_per_node, "gpus": c.gpus,
            "intra": c.intra.name, "inter": c.inter.name, "memory_bytes": c.device.memory}


def _header(w, c) -> str:
    from .render.tables import fmt_bytes, fmt_count

    m = w.model
    return (f"模型 {m.name}（{fmt_count(m.params)} 参数，{m.layers} 层，hidden {m.hidden}，{m.heads} 头），"
            f"global batch {w.global_batch} × 序列 {w.seq_len}，{w.recipe.name}\n"
            f"集群 {c.nodes} 节点 × {c.gpus_per_node} 卡 {c.device.name}（每卡 {fmt_bytes(c.device.memory)}），"
            f"节点内 {c.intra.name}，节点间 {c.inter.name}\n")


# -- subcommands ------------------------------------------------------------------------------
def _cmd_matrix(a, out) -> None:
    from .matrix import selection_matrix
    from .render.matrix_tables import matrix_table

    c = _cluster(a)
    w = _workload(a, c)
    unknown = []
    if a.global_batch is None:
        unknown.append("global_batch")
    if a.intra is None:
        unknown.append("interconnect")
    rows = selection_matrix(w, c, unknown=unknown, headroom=_headroom_arg(a))
    if a.json:
        data = {"model": _model_json(w.model), "cluster": _cluster_json(c), "unknown": unknown, "rows": [
            {"strategy": r.strategy, "verdict": r.verdict.value, "reasons": list(r.reasons),
             "best": None if r.best is None else {"plan": r.best.plan.label(), "memory_bytes": r.best.memory.total,
                                                   "step_s": r.best.step.total}}
            for r in rows]}
        out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        return
    out.write(_header(w, c))
    if unknown:
        names = {"global_batch": f"global batch（按每卡 1 条、共 {w.global_batch} 条估算；用 --global-batch 指定）",
                 "interconnect": f"节点内互联（按 {c.intra.name} 估算；用 --intra 指定）"}
        out.write("未说明：" + "；".join(names[u] for u in unknown) + "\n")
    out.write("\n" + matrix_table(rows, reasons=False) + "\n")
    for r in rows:
        out.write(f"{r.strategy}：{r.verdict.value}\n")
        for x in r.reasons:
            out.write(f"  - {x}\n")


def _fixed(a) -> dict:
    fixed = {}
    for k in ("dp", "tp", "pp", "zero", "micro_batch", "recompute"):
        v = getattr(a, k, None)
        if v is not None:
            fixed[k] = v
    return fixed


def _cmd_plan(a, out) -> None:
    from .render.matrix_tables import excluded_table, funnel_table, top_table
    from .render.tables import fmt_time
    from .search import search

    c = _cluster(a)
    w = _workload(a, c)
    r = search(w, c, top=a.top, fixed=_fixed(a), headroom=_headroom_arg(a))
    if a.json:
        data = {"model": _model_json(w.model), "cluster": _cluster_json(c), "global_batch": w.global_batch,
                "considered": r.considered,
                "funnel": [{"stage": s, "plans": n} for s, n in r.funnel()], "excluded": dict(r.excluded),
                "results": [{"rank": x.rank, "plan": x.plan.label(), "dp": x.plan.dp, "tp": x.plan.tp,
                             "pp": x.plan.pp, "zero": x.plan.zero, "micro_batch": x.plan.micro_batch,
                             "sp": x.plan.sp, "recompute": x.plan.recompute, "schedule": x.plan.schedule,
                             "chunks": x.plan.chunks, "step_s": x.estimate.step.total,
                             "tokens_per_s": x.estimate.step.tokens_per_s, "mfu": x.estimate.step.mfu,
                             "memory_bytes": x.estimate.memory.total, "why": list(x.why)} for x in r.results],
                "seconds": r.seconds}
        out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        return
    out.write(_header(w, c))
    if a.global_batch is None:
        out.write(f"未给 --global-batch：按每卡 1 条序列（global batch = {w.global_batch}）估算\n")
    out.write(f"\n搜索用时 {fmt_time(r.seconds)}\n\n" + funnel_table(r) + "\n" + excluded_table(r) + "\n")
    if not r.results:
        out.write("没有能放下的方案：换更大显存的卡、加卡，或减小 global batch / 序列长度。\n")
        return
    out.write(top_table(r) + "\n")
    for x in r.results:
        out.write(f"{x.rank}. {x.plan.label()}\n")
        for y in x.why:
            out.write(f"   - {y}\n")


def _cmd_bubble(a, out) -> None:
    from . import pipeline as pl

    sched = pl.schedule(a.schedule, a.stages, a.microbatches, chunks=a.chunks)
    tl = pl.simulate(sched, forward=1.0, backward=2.0)
    v = a.chunks
    closed_f = pl.bubble_fraction(a.stages, a.microbatches, v)
    closed_o = pl.bubble_overhead(a.stages, a.microbatches, v)
    if a.svg:
        from .render.pipeline_charts import gantt

        svg = gantt(tl, salt=f"cli-{a.schedule}-{a.stages}-{a.microbatches}-{v}")
        with open(a.svg, "w", encoding="utf-8") as f:
            f.write(svg)
    if a.json:
        data = {"schedule": a.schedule, "stages": a.stages, "microbatches": a.microbatches, "chunks": v,
                "bubble_fraction": closed_f, "bubble_overhead": closed_o,
                "simulated_bubble_fraction": tl.bubble_fraction, "simulated_bubble_overhead": tl.bubble_overhead,
                "makespan": tl.makespan, "svg": a.svg}
        out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        return
    from .render.tables import fmt_pct, markdown_table

    out.write(f"调度 {a.schedule}，p={a.stages}，m={a.microbatches}，v={v}；前向 1、反向 2（单位：一次前向的耗时）\n\n")
    out.write(markdown_table(["量", "公式", "模拟"], [
        ["气泡占比 bubble_fraction = 空闲 / 总时长", fmt_pct(closed_f), fmt_pct(tl.bubble_fraction)],
        ["气泡开销 bubble_overhead = 空闲 / 理想时长", fmt_pct(closed_o), fmt_pct(tl.bubble_overhead)],
        ["一步总时长（前向耗时的倍数）", "—", f"{tl.makespan:g}"],
    ], align="lrr"))
    if a.schedule in ("gpipe", "zb-h1") or (a.schedule == "interleaved" and v > 1):
        out.write("（公式按 1F1B/GPipe 的 (p-1)/(v·m+p-1) 计；ZB-H1 的气泡更小，以模拟为准）\n")
    if a.svg:
        out.write(f"\n甘特图已写入 {a.svg}\n")


def _cmd_memory(a, out) -> None:
    from .estimate import estimate
    from .plan import Plan, constraint_violations
    from .render.tables import fmt_bytes, fmt_pct, fmt_time, markdown_table

    c = _cluster(a)
    w = _workload(a, c)
    tp = positive_int("--tp", a.tp if a.tp is not None else 1)
    pp = positive_int("--pp", a.pp if a.pp is not None else 1)
    m = w.model
    if m.heads % tp or tp > m.heads:
        raise ParallelselError(f"--tp {tp}: must divide the {m.heads} attention heads of {m.name}")
    if m.layers % pp or pp > m.layers:
        raise ParallelselError(f"--pp {pp}: must divide the {m.layers} layers of {m.name}")
    if a.dp is None:
        if c.gpus % (tp * pp):
            raise ParallelselError(f"--tp {tp} × --pp {pp} = {tp * pp}: must divide the cluster's {c.gpus} GPUs "
                                   f"(or give --dp)")
        dp = c.gpus // (tp * pp)
    else:
        dp = a.dp
    plan = Plan(dp=dp, tp=tp, pp=pp, zero=a.zero or 0, micro_batch=a.micro_batch or 1, sp=a.sp,
                recompute=a.recompute or "none", schedule=a.schedule, chunks=a.chunks)
    hard = constraint_violations(w, plan, c)
    if hard:
        raise ParallelselError(f"plan {plan.label()}: " + "；".join(hard))
    e = estimate(w, plan, c, headroom=_headroom_arg(a))
    mem = e.memory
    if a.json:
        data = {"model": _model_json(w.model), "cluster": _cluster_json(c), "plan": plan.label(), "fits": e.fits,
                "reasons": list(e.reasons), "capacity_bytes": c.device.memory, "usable_bytes": e.usable,
                "headroom": e.headroom, "margin": e.margin, "total_bytes": mem.total,
                "components_bytes": mem.as_dict(), "stage": mem.stage, "step_s": e.step.total,
                "tokens_per_s": e.step.tokens_per_s, "mfu": e.step.mfu}
        out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        return
    names = {"params": "参数", "grads": "梯度", "optimizer": "优化器状态", "activations": "激活",
             "embeddings": "嵌入/logits 激活", "gather_peak": "FSDP gather 峰值", "allocator": "分配器余量"}
    out.write(_header(w, c) + f"方案 {plan.label()}（最满的一段：{'首段' if mem.stage == 'first' else '末段'}）\n\n")
    rows = [[names[k], fmt_bytes(v)] for k, v in mem.as_dict().items()]
    rows.append(["合计", fmt_bytes(mem.total)])
    rows.append(["驱动报告", fmt_bytes(c.device.memory)])
    rows.append(["可用（减去 CUDA 上下文与 NCCL）", fmt_bytes(e.usable)])
    rows.append([f"上限（可用 ×(1−{e.headroom:g})）", fmt_bytes(e.budget)])
    rows.append(["余量", fmt_pct(e.margin)])
    out.write(markdown_table(["每卡内存（GiB）", "大小"], rows, align="lr") + "\n")
    out.write(("放得下" if e.fits else "放不下：" + "；".join(e.reasons)) + "\n")
    out.write(f"步时 {fmt_time(e.step.total, 2)}，{e.step.tokens_per_s:,.0f} tokens/s，MFU {fmt_pct(e.step.mfu)}\n")


_COMMANDS = {"matrix": _cmd_matrix, "plan": _cmd_plan, "bubble": _cmd_bubble, "memory": _cmd_memory}


def main(argv=None) -> int:
    """Run the CLI; returns the exit status (0 ok, 2 bad input) instead of raising."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or an argparse error (2), already printed
        return int(exc.code or 0)
    try:
        _COMMANDS[args.command](args, sys.stdout)
    except (ParallelselError, ValueError) as exc:
        msg = " ".join(str(exc).split())
        sys.stderr.write(f"parallelsel {args.command}: 错误 error: {msg}\n")
        return 2
    except OSError as exc:
        sys.stderr.write(f"parallelsel {args.command}: 错误 error: {exc.strerror or exc}: {exc.filename}\n")
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
