# Bytes each rank sends per byte of buffer (nccl-tests' bus factor) for ring collectives.
from parallelsel import comm
from parallelsel.render.tables import markdown_table

rows = []
for n in (2, 4, 8, 16, 64, 1024):
    rows.append([n] + [f"{comm.bus_factor(op, n):.3f}" for op in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all")])
print(markdown_table(["rank 数 n", "all-reduce 2(n-1)/n", "all-gather (n-1)/n", "reduce-scatter (n-1)/n", "all-to-all (n-1)/n"],
                     rows, align="rrrrr"))
