# Latency-bound vs bandwidth-bound: where alpha and N/beta terms of a ring all-reduce meet.
import parallelsel as ps
from parallelsel import comm
from parallelsel.render.tables import fmt_bytes, fmt_rate, fmt_time, markdown_table

n = 8
small, large = 64 * 2**10, 1 * 2**30       # one small and one large message
rows = []
for key in ("nvlink4", "pcie4", "ib-ndr", "eth-100g"):
    link = ps.LINKS[key]
    # 2(n-1)*alpha == 2(n-1)/n * N/beta  <=>  N = n * alpha * beta
    crossover = n * link.latency * link.bandwidth
    rows.append([link.name, fmt_time(link.latency), fmt_rate(link.bandwidth), fmt_bytes(crossover, "KiB"),
                 fmt_time(comm.collective_time("all-reduce", small, n, link)),
                 fmt_time(comm.collective_time("all-reduce", large, n, link))])
print(f"{n} 个 rank 的 ring all-reduce\n")
print(markdown_table(["链路", "延迟 α", "带宽 β（每方向）", "两项相等的消息大小 nαβ", f"{fmt_bytes(small, 'KiB', digits=0)} 用时", f"{fmt_bytes(large, digits=0)} 用时"],
                     rows, align="lrrrrr"))
