# The top plans for Llama-3 70B on 8 nodes x 8 A100-80GB (global batch 512), each with its chain of decisions.
import parallelsel as ps
from parallelsel.render.matrix_tables import top_table, why_list
from parallelsel.core.search import search

workload = ps.Workload(ps.MODELS["llama3-70b"], global_batch=512)
cluster = ps.Cluster(ps.DEVICES["a100-80gb"], nodes=8, gpus_per_node=8)
result = search(workload, cluster, top=5)

print(top_table(result))
print(why_list(result, limit=3))
from parallelsel.render.reasons import text  # noqa: E402

if result.tie is not None:  # the plans the model's measured error cannot order, and what would
    print("\n" + text(result.tie))
