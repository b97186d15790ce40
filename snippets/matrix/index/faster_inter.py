# Case 2 (state exceeds one card) with the slow inter-node link replaced by faster ones: FSDP's verdict and step.
import parallelsel as ps
from parallelsel.render.placement import link_text
from parallelsel.render.tables import fmt_time, markdown_table
from parallelsel.render.lesson_text import named_paper_cases, verdict_word

name, work, cluster = named_paper_cases()[1]
rows, verdicts = [], {}
for key in ("eth-25g", "eth-100g", "ib-hdr", "ib-ndr"):
    c = ps.topology_variant(cluster, inter=key)
    fsdp = next(r for r in ps.selection_matrix(work, c) if r.strategy == "FSDP")
    step = fmt_time(fsdp.best.step.total) if fsdp.best else "—"
    exposed = fmt_time(fsdp.best.step.communication) if fsdp.best else "—"
    rows.append([c.inter.name, link_text(c.inter), verdict_word(fsdp.verdict), step, exposed])
    verdicts[key] = (fsdp.verdict.code, fsdp.best.step.communication if fsdp.best else None)
print(f"{name}：{work.model.name}，{cluster.gpus} × {cluster.device.name}\n")
print(markdown_table(["节点间链路", "带宽", "FSDP 判断", "FSDP 最佳步时", "其中暴露通信"], rows, align="llcrr"))
# What the page says: on the slowest Ethernet FSDP still fits but is not preferred; on InfiniBand it is feasible, and
# the exposed communication falls as the link gets faster.
assert verdicts["eth-25g"][0] == "not_preferred" and verdicts["ib-hdr"][0] == "feasible", verdicts
assert verdicts["eth-25g"][1] > verdicts["eth-100g"][1] > verdicts["ib-hdr"][1], verdicts
