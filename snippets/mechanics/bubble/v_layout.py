# Which global stages each rank holds with 2 chunks per rank: the loop layout (interleaved) vs the V layout (ZBV, DualPipeV).
from parallelsel import pipeline
from parallelsel.render.tables import markdown_table

p, m, v = 4, 8, 2
loop = pipeline.schedule("interleaved", p, m, chunks=v)
vee = pipeline.schedule("zbv", p, m, chunks=v)

rows = [[f"卡 {r}", "、".join(str(loop.virtual_stage(r, c)) for c in range(v)),
         "、".join(str(vee.virtual_stage(r, c)) for c in range(v))] for r in range(p)]
print(markdown_table(["卡（rank）", "交错布局（loop）持有的段", "V 形布局持有的段"], rows, align="lll"))

for name, s in [("交错布局", loop), ("V 形布局", vee)]:
    ranks = [s.place(stage)[0] for stage in range(s.virtual_stages)]  # the rank running each global stage, in order
    hops = sum(a != b for a, b in zip(ranks, ranks[1:]))
    print(f"\n{name}：一个微批次的前向依次经过卡 {' → '.join(map(str, ranks))}，跨卡发送 {hops} 次；"
          f"第一段在卡 {ranks[0]}，最后一段（算 loss 的那个）在卡 {ranks[-1]}。")
