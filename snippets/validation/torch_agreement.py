# The library beside PyTorch 2.13 as recorded from the real engine (tools/record_torch_*.py -> parallelsel/course/data/):
# pipeline schedules rank by rank, DDP and FSDP2 bytes per rank and collectives per step.
# --8<-- [start:setup]
from collections import Counter
from math import prod

from parallelsel.course import frameworks
from parallelsel.course.torch_records import (accumulation_agreement, by_op, fsdp_padding, record, record_model,
                                              schedule_agreement)
from parallelsel.render.tables import fmt_bytes, markdown_table

SCHEDULES = record("torch_pipeline_schedules.json")   # torch's per-rank runtime order, every schedule class
ENGINES = record("torch_ddp_fsdp.json")               # DDP and FSDP2 bytes per rank, collectives per step
ACCUMULATION = record("torch_fsdp_accumulation.json")  # FSDP2 over micro-batches, with and without resharding / sync
MODEL = record_model()


def exact(n):
    return fmt_bytes(n, "B", 0)


def same(flag):
    return "相同" if flag else "**不同**"
# --8<-- [end:setup]
# --8<-- [start:compare]
def compare(kind):
    """The library beside torch's record for one schedule kind (parallelsel.course.torch_records)."""
    return schedule_agreement(kind, [e for e in SCHEDULES["settings"] if e["kind"] == kind])
# --8<-- [end:compare]
# --8<-- [start:schedules]
rows, totals = [], Counter()
for kind, torch_class in SCHEDULES["classes"].items():
    a = compare(kind)
    totals.update(ran=a.ran, ranks=a.ranks, equal=a.equal, refused=a.refused, both=a.both)
    rows.append([f"`{kind}`", f"`{torch_class}`", a.ran, f"{a.equal} / {a.ranks}", a.refused, a.both])
t = totals
rows.append(["合计", "", t["ran"], f"{t['equal']} / {t['ranks']}", t["refused"], t["both"]])
print(f"torch {SCHEDULES['torch']}，p ∈ {{{', '.join(map(str, SCHEDULES['grid']['stages']))}}}、"
      f"m ∈ {{{', '.join(map(str, SCHEDULES['grid']['microbatches']))}}}、每卡段数 v ∈ "
      f"{{{', '.join(map(str, SCHEDULES['grid']['chunks']))}}} 的全部组合，另加几个探测拒绝规则的设置（“torch 运行”“torch 拒绝”数的是设置，“逐 rank 相同”数的是 rank）：\n")
print(markdown_table(["本库的 kind", "torch 的类", "torch 运行", "逐 rank 相同", "torch 拒绝", "本库也拒绝"],
                     rows, align="llrrrr"))
zb = [e for e in SCHEDULES["settings"] if e["kind"] == "interleaved-zb" and e["chunks"] == 1]
a = schedule_agreement("zb-h1", zb)
print(f"\n`zb-h1` 是本库对每卡一段的 `interleaved-zb` 的叫法：与同样 {a.ran} 个设置对照，{a.equal} / {a.ranks} 个 rank 的顺序相同。")
# --8<-- [end:schedules]
# --8<-- [start:refusals]
def settings_text(entries):
    """The (p, m, v) of ``entries``: as a product of sets when they form one, else one by one."""
    triples = sorted((e["stages"], e["microbatches"], e["chunks"]) for e in entries)
    axes = [sorted({t[i] for t in triples}) for i in range(3)]
    if len(triples) == prod(len(a) for a in axes):
        return "，".join(f"{n} = {a[0]}" if len(a) == 1 else f"{n} ∈ {{{', '.join(map(str, a))}}}" for n, a in zip("pmv", axes))
    return "；".join(f"p={p}, m={m}, v={v}" for p, m, v in triples)


refusals = {kind: compare(kind).refusals for kind in SCHEDULES["classes"]}
groups = {}  # (kind, torch's error with the numbers masked) -> [(entry, library error)]
for kind, found in refusals.items():
    for e, ours in found:
        message = "".join("#" if c.isdigit() else c for c in e["refused"]["message"])
        groups.setdefault((kind, e["refused"]["type"], message), []).append((e, ours))
rows = []
for (kind, kind_of_error, _), found in groups.items():
    (e, ours), n = found[0], len(found)
    rows.append([f"`{kind}`", settings_text([f[0] for f in found]),
                 f"`{kind_of_error}: {e['refused']['message']}`",
                 f"`ValueError: {ours}`" if isinstance(ours, ValueError) else "**本库接受**"])
print(f'??? note "torch 拒绝的 {sum(len(f) for f in refusals.values())} 个设置，与本库在同一设置上报的 ValueError"')
print("    每组列出一个设置上的两条报错（数字取自该组第一个设置）。\n")
print("\n".join("    " + line for line in markdown_table(
    ["调度", "torch 拒绝的设置", "torch 2.13 的报错", "本库的 ValueError"], rows).splitlines()))
# --8<-- [end:refusals]
# --8<-- [start:ddp]
def ddp_rows():
    ranks = [(run["world"], rank) for run in ENGINES["runs"] for rank in run["ranks"]]
    worlds = [run["world"] for run in ENGINES["runs"]]
    ours = frameworks.ddp(MODEL, steps=len(ranks[0][1]["ddp"][0]["all_reduce_per_step"]))
    quantities = [
        ("参数", ours.params, lambda r: r["params"]["bytes"], exact),
        ("梯度", ours.grads, lambda r: r["grads"]["bytes"], exact),
        ("Adam 状态（两个矩与每个张量的 step）", ours.optimizer, lambda r: r["optimizer"]["total"], exact),
    ] + [
        (f"第 {i + 1} 步的 all-reduce", list(b), lambda r, i=i: r["all_reduce_per_step"][i]["buckets"],
         lambda bs: f"{len(bs)} 次：" + " + ".join(map(exact, bs)))
        for i, b in enumerate(ours.all_reduce)
    ]
    rows = []
    for name, mine, theirs, fmt in quantities:
        recs = {w: [theirs(rank["ddp"][0]) for ww, rank in ranks if ww == w] for w in worlds}
        rows.append([name, fmt(mine)] + [fmt(recs[w][0]) for w in worlds]
                    + [same(all(x == mine for w in worlds for x in recs[w]))])
    return worlds, rows


worlds, rows = ddp_rows()
print(markdown_table(["量（每个 rank）", "本库"] + [f"torch（world={w}，rank 0）" for w in worlds] + ["全部 rank 与本库"],
                     rows, align="l" + "r" * (len(worlds) + 1) + "l"))
view = {d["gradient_as_bucket_view"]: d for d in ENGINES["runs"][0]["ranks"][0]["ddp"]}
on, off = frameworks.ddp(MODEL, gradient_as_bucket_view=True), frameworks.ddp(MODEL, gradient_as_bucket_view=False)
print('\n??? note "`gradient_as_bucket_view`：梯度是不是桶的视图"')
print(f"    默认 `False`：torch 的梯度是 {view[False]['grads']['distinct_storages']} 个独立张量（模型有 "
      f"{view[False]['params']['tensors']} 个参数张量），桶缓冲另占一份，本库记为 {exact(off.bucket_buffers)}。"
      f"设为 `True` 时梯度是桶的视图：torch 的梯度只落在 {view[True]['grads']['distinct_storages']} 块存储上，"
      f"等于本库第二步起的桶数 {len(on.all_reduce[-1])}，本库记的额外桶缓冲是 {exact(on.bucket_buffers)}。"
      f"两种设置下的参数、梯度、Adam 状态与 all-reduce 字节都与上表相同。")
# --8<-- [end:ddp]
# --8<-- [start:fsdp]
rows, extra, padding = [], [], []
for run in ENGINES["runs"]:
    w = run["world"]
    for r, rank in enumerate(run["ranks"]):
        rec, ours = rank["fsdp2"], frameworks.fsdp2(MODEL, w, r)
        others = [(ours.grads, rec["grads"]["bytes"]), (ours.optimizer, rec["optimizer"]["total"]),
                  (ours.unsharded_forward, rec["unsharded_peak"]["forward"]),
                  (ours.unsharded_backward, rec["unsharded_peak"]["backward"])]
        rows.append([f"{w} / {r}", exact(ours.local_params), exact(rec["params"]["local_bytes"]), exact(ours.padded_shard),
                     exact(rec["params"]["padded_shard_bytes"])])
        rows[-1].append(same(ours.local_params == rec["params"]["local_bytes"]
                             and ours.padded_shard == rec["params"]["padded_shard_bytes"] and all(a == b for a, b in others)))
        extra.append([f"{w} / {r}"] + [f"{exact(a)} / {exact(b)}" for a, b in others])
        shapes = run["ranks"][0]["fsdp2"]["shapes"]  # as torch's module registers them
        padding += [(w, r, *t) for t in fsdp_padding(w, r, rec, shapes)]
print(markdown_table(["world / rank", "本地参数（本库）", "本地参数（torch）", "补齐后的分片（本库）", "补齐后的分片（torch）",
                      "各项与 torch"], rows, align="lrrrrl"))
print('\n??? note "梯度、Adam 状态和未分片参数的峰值（本库 / torch）"')
print("\n".join("    " + line for line in markdown_table(
    ["world / rank", "梯度", "Adam 状态", "前向未分片峰值", "反向未分片峰值"], extra, align="lrrrr").splitlines()))
short = {}  # (world, rank, rows, rows held, chunk) -> tensor names without their layer prefix, with counts
for w, r, name, d0, held, chunk in padding:
    short.setdefault((w, r, d0, held, chunk), Counter())[name.split(".", 2)[-1] if name.startswith("layers.") else name] += 1
print("\n本地参数比补齐后的分片少，是因为下面这些张量按第 0 维切不匀（行数取自 torch 记录的每个张量的本地字节）；"
      "all-gather 时这个 rank 仍按补齐后的整块发送（dim-0 padding）：\n")
for (w, r, d0, held, chunk), names in short.items():
    tensors = "、".join(f"`{n}`" + (f"（{k} 层各一个）" if k > 1 else "") for n, k in names.items())
    print(f"- world={w}、rank {r}：{tensors}，共 {d0} 行，每块 ⌈{d0}/{w}⌉ = {chunk} 行，这个 rank 只有 {held} 行")


rows = []
for run in ENGINES["runs"]:
    w = run["world"]
    ours = by_op((c.op, c.phase, c.input_bytes, c.output_bytes) for c in frameworks.fsdp2(MODEL, w, 0).collectives)
    steps = [by_op((c["op"], c["phase"], c["input_bytes"], c["output_bytes"]) for c in step)
             for rank in run["ranks"] for step in rank["fsdp2"]["collectives_per_step"]]
    for key, (n, i, o) in ours.items():
        theirs = steps[0].get(key, (0, 0, 0))
        rows.append([w, f"{key[0]}（{'前向' if key[1] == 'forward' else '反向'}）",
                     f"{n} 次，发 {exact(i)}，收 {exact(o)}",
                     f"{theirs[0]} 次，发 {exact(theirs[1])}，收 {exact(theirs[2])}", same(all(s == ours for s in steps))])
print("\n每步的集合通信（按操作合计；“发”是这个 rank 的输入缓冲，“收”是输出缓冲）：\n")
print(markdown_table(["world", "操作（阶段）", "本库", "torch（rank 0，第 1 步）", "全部 rank、全部步"], rows, align="rlrrl"))
# --8<-- [end:fsdp]
# --8<-- [start:accumulation]
rows = []
for run in ACCUMULATION["runs"]:
    w = run["world"]
    for k, setting in enumerate(run["ranks"][0]):
        raf, sync = setting["reshard_after_forward"], setting["sync"]
        agree, counts = accumulation_agreement(MODEL, run, k, ACCUMULATION["microbatches"])
        mine, theirs, peak, their_peak = counts
        rows.append([f"world={w}，`reshard_after_forward={raf}`，{'每个微批次都同步梯度' if sync == 'every' else '只在最后一个微批次同步（no_sync）'}",
                     f"{mine['all-gather']} / {theirs['all-gather']}", f"{mine['reduce-scatter']} / {theirs['reduce-scatter']}",
                     f"{exact(peak)} / {exact(their_peak)}", same(agree)])
print(f"每步 {ACCUMULATION['microbatches']} 个微批次（梯度累积）时的 FSDP2：\n")
print(markdown_table(["设置", "all-gather 次数（本库 / torch）", "reduce-scatter 次数（本库 / torch）",
                      "反向未分片参数峰值（本库 / torch）", "逐次的字节（全部 rank）"], rows, align="lrrrl"))
# --8<-- [end:accumulation]
# --8<-- [start:boundary]
worlds = sorted({run["world"] for run in ENGINES["runs"]} | {run["world"] for run in ACCUMULATION["runs"]})
shape = ENGINES["model"]
print('!!! warning "边界：对照了什么，没有对照什么"')
print(f"    - **对照了**：torch {SCHEDULES['torch']} 实际执行的结果，记录方式见各文件的 `how` 字段："
      f"`{SCHEDULES['how']}`；`{ENGINES['how']}`；`{ACCUMULATION['how']}`。")
print(f"    - 流水线对照的是每个 rank 的执行顺序（p ∈ {{{', '.join(map(str, SCHEDULES['grid']['stages']))}}}）；"
      f"DDP 与 FSDP2 对照的是字节数和集合通信的次数（world ∈ {{{', '.join(map(str, worlds))}}}），"
      f"模型是 {shape['layers']} 层、隐藏维度 {shape['hidden']}、词表 {shape['vocab']} 的小型 Llama 结构，"
      f"`{ENGINES['dtype']}`，`{ENGINES['optimizer']}`。")
print("    - **没有对照**：时间。CPU 上的 gloo 不说明 GPU 上的 kernel 耗时、NCCL 的算法与带宽、通信与计算的重叠，"
      "也不说明 bf16 混合精度下的字节数；这些由[步时与实测](#步时与实测)一节对照论文实测，"
      "流水线的时间线仍是模拟（每段耗时相同的假设下）。")
# --8<-- [end:boundary]
