"""The lesson's own tables and cases, as data at the top layer: what the pages teach with, not the library's rules.

* :data:`COLLECTIVES` -- the collectives each strategy of the lesson's four-column table (bottleneck --
  main communication -- conditions -- cost) names, for DP, FSDP/ZeRO, TP, PP, SP/CP and EP (Rajbhandari et al.
  2020 §7; Shoeybi et al. 2019 §3; Narayanan et al. 2021 §2.2; Korthikanti et al. 2022 §4.2.2; Liu et al. 2023
  Ring Attention; Lepikhin et al. 2021 GShard §2.2). The table itself, words included, is
  :data:`parallelsel.render.lesson_text.FOUR_COLUMNS`.
* :func:`paper_cases` -- the three paper cases of the lesson's first exercise, and
  :func:`topology_variant`, the cluster of its third (fast links inside a node, a slow one between nodes).

The selection matrix (:mod:`parallelsel.core.matrix`) judges any workload; these are the ones the pages judge.

Examples:
    >>> from parallelsel.core.matrix import selection_matrix
    >>> name, w, c = paper_cases()[0]
    >>> [(r.strategy, r.verdict.code) for r in selection_matrix(w, c)]
    [('DP', 'feasible'), ('FSDP', 'not_preferred'), ('TP', 'not_preferred'), ('PP', 'not_preferred')]
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..core._check import ParallelselError
from ..core.hardware import DEVICES, LINKS, Cluster
from ..core.model import MODELS, Transformer
from ..core.plan import Workload

__all__ = ["CASES", "COLLECTIVES", "WIDE_LAYER", "paper_cases", "topology_variant"]


COLLECTIVES = {"DP": ("all-reduce",), "FSDP": ("all-gather", "reduce-scatter"), "TP": ("all-reduce",),
               "PP": ("p2p",), "SP/CP": ("all-gather", "reduce-scatter"), "EP": ("all-to-all",)}
"""The collectives each strategy's communication cell names (the operations of :mod:`parallelsel.core.comm`)."""



WIDE_LAYER = Transformer(
    layers=2, hidden=24576, heads=192, seq_len=2048, vocab=51200, tied_embeddings=True,
    position="learned", bias=True, norm="layernorm", name="Wide-2x24576",
)
"""Case 3's model: GPT-shaped, 2 layers of hidden 24576 (7.25B parameters a layer: 108 GiB of
bf16-Adam state, and an FSDP gather peak of 42.9 GiB -- both more than an A100-40GB can use),
small enough in total (15.8B) for 8-way TP. The figures are checked by :func:`paper_cases`' example."""

CASES = ("fits_one_gpu", "state_exceeds_gpu", "layer_exceeds_gpu")
"""The paper cases' keys, in the lesson's order; their names are :data:`parallelsel.render.lesson_text.CASE_NAMES`."""


def paper_cases() -> list[tuple[str, Workload, Cluster]]:
    """The lesson's three paper cases (exercise 1, docs/exercises/index.md): ``(case id, workload, cluster)``;
    the lesson's names for them are :data:`parallelsel.render.lesson_text.CASE_NAMES`.

    1. ``fits_one_gpu``: GPT-2 1.5B (Radford et al. 2019), batch 512 x 1024 tokens, 8 x A100-80GB.
    2. ``state_exceeds_gpu`` (one layer still fits): Llama-2 70B (Touvron et al. 2023), batch 1024 x 4096
       tokens (4M tokens, as in the paper), 4 nodes x 8 A100-80GB with InfiniBand HDR between nodes
       (1.1 TB of state > 80 GB; one layer is 0.86B parameters, 13.7 GB of state).
    3. ``layer_exceeds_gpu``: :data:`WIDE_LAYER` on 8 x A100-40GB (one layer's state and its FSDP gather
       peak both exceed what one card can use; figures below, in GiB as the pages print them).

    NVLink 3 inside each node (DGX A100); :func:`topology_variant` makes the slow-inter-node version.

    Examples:
        >>> import parallelsel as ps
        >>> from parallelsel.core.memory import budget, gather_peak, layer_shape
        >>> _, w, c = paper_cases()[2]
        >>> layer = layer_shape(w.model).dense_layer
        >>> round(layer / 1e9, 2), round(16 * layer / 2**30), round(gather_peak(w.model) / 2**30, 1)
        (7.25, 108, 42.9)
        >>> round(budget(c.device, ps.Plan(dp=8, zero=3)) / 2**30, 1)   # what one card can use
        38.2
    """
    a100, a100_40 = DEVICES["a100-80gb"], DEVICES["a100-40gb"]
    node = dict(nodes=1, gpus_per_node=8, intra=LINKS["nvlink3"], inter=LINKS["ib-hdr"])
    pod = dict(node, nodes=4)
    cases = {
        "fits_one_gpu": (Workload(MODELS["gpt2-1.5b"], global_batch=512), Cluster(a100, **node)),
        "state_exceeds_gpu": (Workload(MODELS["llama2-70b"], global_batch=1024), Cluster(a100, **pod)),
        "layer_exceeds_gpu": (Workload(WIDE_LAYER, global_batch=64), Cluster(a100_40, **node)),
    }
    return [(k, *cases[k]) for k in CASES]


def topology_variant(cluster: Cluster, nodes: int = 2, inter: str = "eth-25g") -> Cluster:
    """Exercise 3: the same GPUs per node with fast links inside (NVLink 3) and a slow link between ``nodes`` nodes."""
    if not isinstance(cluster, Cluster):
        raise ParallelselError(f"cluster={cluster!r}: must be a Cluster")
    if inter not in LINKS:
        raise ParallelselError(f"inter={inter!r}: unknown preset; known: {', '.join(sorted(LINKS))}")
    return replace(cluster, nodes=max(nodes, cluster.nodes), intra=LINKS["nvlink3"], inter=LINKS[inter])
