# The size limits the command enforces, read from the library's own constants (so the page cannot drift).
from parallelsel.render.cli import MAX_PARAMS, MIN_PARAMS
from parallelsel.core.hardware import MAX_GPUS, MAX_GPUS_PER_NODE
from parallelsel.core.model import SHAPE_LIMITS
from parallelsel.core.pipeline import MAX_PASSES
from parallelsel.core.plan import MAX_GLOBAL_BATCH
from parallelsel.render.tables import markdown_table

rows = [  # markdown-exec: hide
    ["`--nodes`、`--gpus`（总卡数）", f"1 – {MAX_GPUS:,}", "枚举方案的代价随卡数的因数增长"],
    ["`--gpus-per-node`", f"1 – {MAX_GPUS_PER_NODE:,}", "单节点的卡数"],
    ["`--params`", f"{MIN_PARAMS:.0e} – {MAX_PARAMS:.0e}", "更小时词表嵌入压过各层"],
    ["`--layers`", f"1 – {SHAPE_LIMITS['layers']:,}", "远超任何已发表模型"],
    ["`--hidden`", f"1 – {SHAPE_LIMITS['hidden']:,}", "同上"],
    ["`--seq-len`", f"1 – {SHAPE_LIMITS['seq_len']:,}", "同上"],
    ["`--global-batch`", f"1 – {MAX_GLOBAL_BATCH:,}", "每步 token 数在 float64 中精确"],
    ["`bubble` 的 p×m×v", f"≤ {MAX_PASSES:,}", "事件模拟几秒内算完"],
]
print(markdown_table(["输入", "允许范围", "为什么"], rows, align="lrl"))
