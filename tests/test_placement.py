"""One placement rule (parallelsel.core.placement) read by comm, matrix, search and render/placement.

Expected links are worked out by hand from the rank layout (TP fastest, then CP, then DP, then PP;
rank r on node r // gpus_per_node) and the alpha-beta ring cost, not from the library's own formulas.
"""

from dataclasses import replace

import pytest

import parallelsel as ps
from parallelsel.core.comm import traffic
from parallelsel.core.placement import group_placement, groups_on_nodes, placement
from parallelsel.render.placement import group_spans, layout, placement_diagram
from parallelsel.core.placement import link_for, spans_nodes

H100 = ps.DEVICES["h100-sxm-80gb"]
NVL4, PCIE4 = ps.LINKS["nvlink4"], ps.LINKS["pcie4"]
NDR, ETH100 = ps.LINKS["ib-ndr"], ps.LINKS["eth-100g"]
LLAMA8 = ps.MODELS["llama3-8b"]


def _item(items, strategy, op=None):
    return next(t for t in items if t.strategy == strategy and (op is None or t.op == op))


def test_tp6_on_8_gpu_nodes_two_of_four_groups_cross():
    c = ps.Cluster(H100, nodes=3, gpus_per_node=8, intra=NVL4, inter=NDR)
    plan = ps.Plan(tp=6, dp=4)
    tp = placement(plan, c)["TP"]
    # Groups 0-5 (node 0), 6-11 (nodes 0, 1), 12-17 (nodes 1, 2), 18-23 (node 2).
    assert tp.groups == (tuple(range(0, 6)), tuple(range(6, 12)), tuple(range(12, 18)), tuple(range(18, 24)))
    assert tp.nodes == ((0,), (0, 1), (1, 2), (2,))
    assert tp.crossing == 2 and tp.spans_nodes and tp.nodes_per_group == 2
    # The footprint 6 <= 8 GPUs hid this before; the cluster's own helpers now say it. Each crossing
    # group has 2 ranks on one of its nodes (6, 7 on node 0; 16, 17 on node 2): NCCL runs 2 rings over
    # the boundary, one per HCA of those GPUs -- 2 x 50 GB/s.
    assert spans_nodes(c, 6) and link_for(c, 6).bandwidth == 2 * NDR.bandwidth
    # TP traffic is priced on InfiniBand NDR (2 x 50 GB/s, 5 us), not NVLink: one all-reduce of
    # b*s*h*2 bytes over 6 ranks costs 2*5*alpha + 2*5/6*x/beta.
    w = ps.Workload(LLAMA8, global_batch=4)
    it = _item(traffic(w, plan, c), "TP")
    assert it.link == NDR.name
    x = 1 * 8192 * 4096 * 2
    one = 2 * 5 * 5e-6 + 2 * 5 / 6 * x / (2 * 50e9 * NDR.efficiency)  # the share nccl-tests reaches (hardware.LINKS)
    assert it.time == pytest.approx(it.calls * one)
    # render/placement counts the same groups.
    spans = {s.dim: s for s in group_spans(plan, c)}
    assert spans["TP"].crossing == 2 and spans["TP"].groups == 4


def test_pcie_nodes_with_infiniband_between_are_priced_on_pcie():
    w = ps.Workload(LLAMA8, global_batch=16)
    plan = ps.Plan(dp=16, zero=3)
    pcie = ps.Cluster(H100, nodes=2, gpus_per_node=8, intra=PCIE4, inter=NDR)
    nvl = ps.Cluster(H100, nodes=2, gpus_per_node=8, intra=NVL4, inter=NDR)
    # Rings over 16 ranks cross PCIe hops inside each node and IB hops between: NCCL runs 8 rings,
    # one per NDR HCA (8 x 50 GB/s across nodes), and every ring also crosses each GPU's intra-node
    # link, so the slower of the two (PCIe4 32 GB/s; NVLink4 450 GB/s at 80% < 8 NDR rings at 94%)
    # and the larger latency (5 us) set the pace.
    lp, ln = placement(plan, pcie)["DP"].link, placement(plan, nvl)["DP"].link
    assert (lp.bandwidth, lp.latency, lp.name) == (32e9, 5e-6, PCIE4.name)
    assert (ln.bandwidth, ln.latency, ln.name) == (450e9, 5e-6, NVL4.name)
    ag_p, ag_n = _item(traffic(w, plan, pcie), "FSDP", "all-gather"), _item(traffic(w, plan, nvl), "FSDP", "all-gather")
    # FSDP x16 no longer takes the same time on NVLink4 and PCIe4 nodes: per all-gather of N bytes,
    # 15 alpha + 15/16 N / beta.
    n = ag_p.nbytes
    assert ag_p.time == pytest.approx(ag_p.calls * (15 * 5e-6 + 15 / 16 * n / (32e9 * PCIE4.efficiency)))
    assert ag_n.time == pytest.approx(ag_n.calls * (15 * 5e-6 + 15 / 16 * n / (450e9 * NVL4.efficiency)))
    assert ag_p.time > 1.5 * ag_n.time


def test_ethernet_with_two_nics_per_node():
    two = replace(ETH100, nics=2)
    c1 = ps.Cluster(H100, nodes=2, gpus_per_node=8, intra=NVL4, inter=ETH100)
    c2 = ps.Cluster(H100, nodes=2, gpus_per_node=8, intra=NVL4, inter=two)
    # TP8 x DP2: eight DP rings of two ranks (stride 8), one rank per node each: every GPU of a
    # node sends across at once, 8 hops share the node's NICs: 12.5 GB/s x nics / 8.
    hybrid = ps.Plan(tp=8, dp=2)
    d1, d2 = placement(hybrid, c1)["DP"], placement(hybrid, c2)["DP"]
    assert d1.senders == d2.senders == 8
    assert d1.link.bandwidth == pytest.approx(12.5e9 / 8)
    assert d2.link.bandwidth == pytest.approx(2 * 12.5e9 / 8)
    # DP16 alone: one ring through both nodes leaves each node once: the two NICs serve one hop.
    flat = placement(ps.Plan(dp=16), c2)["DP"]
    assert flat.senders == 1 and flat.link.bandwidth == pytest.approx(25e9)
    # The per-GPU share is what the traffic is priced on.
    w = ps.Workload(LLAMA8, global_batch=16)
    ar = _item(traffic(w, hybrid, c2), "DP")
    assert ar.time == pytest.approx(2 * 1 * 20e-6 + 2 * 1 / 2 * ar.nbytes / (2 * 12.5e9 / 8 * ETH100.efficiency))


def test_pipeline_is_a_chain_and_per_gpu_links_keep_their_bandwidth():
    # PP4 over 2 nodes of 2 GPUs (tp=1, dp=1): stages 0,1 on node 0 and 2,3 on node 1: one hop
    # (1 -> 2) leaves a node; a ring would also count 3 -> 0.
    c = ps.Cluster(H100, nodes=2, gpus_per_node=2, intra=NVL4, inter=ETH100)
    pp = placement(ps.Plan(pp=4), c)["PP"]
    assert pp.senders == 1 and pp.link.bandwidth == pytest.approx(12.5e9)
    ring = group_placement(c, 4, 4, 1)
    assert ring.senders == 1  # 1 -> 2 from node 0, 3 -> 0 from node 1: one each
    # InfiniBand with one HCA per GPU: eight concurrent rings still get the full port each.
    ib = ps.Cluster(H100, nodes=2, gpus_per_node=8, intra=NVL4, inter=NDR)
    assert placement(ps.Plan(tp=8, dp=2), ib)["DP"].link.bandwidth == 50e9


def test_context_parallel_strides_the_dp_group_across_nodes():
    # TP2 x CP4 x DP4 on 4 nodes of 8: rank = t + 2 (c + 4 d). A CP group is ranks {2k + t} inside
    # one 8-GPU node; a DP group strides by tp x cp = 8, one rank on each node, so all 8 DP groups
    # cross nodes. Counting DP with stride tp (ignoring CP) would put each DP group in one node.
    c = ps.Cluster(H100, nodes=4, gpus_per_node=8, intra=NVL4, inter=NDR)
    plan = ps.Plan(tp=2, cp=4, dp=4)
    spans = {s.dim: s for s in group_spans(plan, c)}
    assert list(spans) == ["TP", "CP", "DP", "PP"]
    assert (spans["CP"].size, spans["CP"].stride, spans["CP"].groups, spans["CP"].crossing) == (4, 2, 8, 0)
    assert (spans["DP"].size, spans["DP"].stride, spans["DP"].groups, spans["DP"].crossing) == (4, 8, 8, 8)
    assert spans["DP"].nodes_per_group == 4 and spans["DP"].link == NDR.name
    # The diagram's coordinates: rank 13 = t1 + 2 (c2 + 4 d1) sits on node 1.
    s13 = layout(plan, c)[13]
    assert (s13.node, s13.tp_rank, s13.cp_rank, s13.dp_rank, s13.pp_stage) == (1, 1, 2, 1, 0)
    # Rank 0's DP group (ranks 0, 8, 16, 24) is what the diagram traces, one cell per node.
    assert placement(plan, c)["DP"].groups[0] == (0, 8, 16, 24)
    svg = placement_diagram(plan, c, salt="test-cp")
    assert "rank 0 所在的 CP 组" in svg and "rank 0 所在的 DP 组" in svg and "c = CP 序号" in svg


def test_groups_on_nodes_and_bad_input():
    assert groups_on_nodes(8, 2, 4, 4) == (((0, 4), (1, 5), (2, 6), (3, 7)), ((0, 1),) * 4)
    with pytest.raises(ValueError, match="total=6"):
        groups_on_nodes(6, 4, 1, 8)
    with pytest.raises(ValueError, match="nics=2"):
        ps.Link("x", 1e9, per="gpu", nics=2)
    with pytest.raises(ValueError, match="per='nic'"):
        ps.Link("x", 1e9, per="nic")


# -- Bus bandwidth across nodes against published nccl-tests figures (large messages, all_reduce_perf) --
# Each figure is NVIDIA's (maintainers' answers) or a user's measurement confirmed by them; the model's
# figure is the bus bandwidth nccl-tests would print for an 8 GiB all-reduce over two nodes of 8 GPUs:
# busbw = 2 (n-1)/n x N / t (nccl-tests doc/PERFORMANCE.md).
A100, V100 = ps.DEVICES["a100-80gb"], ps.DEVICES["v100-32gb"]
NCCL_TESTS = [
    # (HCAs per node, device, inter link, published busbw GB/s, source and quote)
    (1, A100, ps.Link("HDR x1", 25e9, 5e-6, per="node", nics=1, efficiency=ps.LINKS["ib-hdr"].efficiency), 24.0,
     "NVIDIA/nccl #1048: 2 nodes x 8 A100, NCCL_IB_HCA=mlx5_0 (one HDR NIC) reached 'the theoretical value (24GB/s)'"),
    (1, V100, ps.Link("EDR x1", 12.5e9, 5e-6, per="node", nics=1, efficiency=ps.LINKS["ib-edr"].efficiency), 12.2,
     "NVIDIA/nccl-tests #29, sjeaugey: '12.2 GB/s (for a 100Gbps card) is as good as you can get'"),
    (4, A100, ps.LINKS["ib-hdr-4hca"], 86.0,
     "NVIDIA/nccl #1048: 86 GB/s on four HDR NICs; NVIDIA/nccl-tests #119: 85-96 GB/s, 4 HDR HCAs per 8 A100"),
    (4, V100, ps.LINKS["ib-edr-4hca"], 48.0,
     "NVIDIA/nccl-tests #29, sjeaugey: 'DGX-1 can get 48 GB/s because we have 4 IB adapters'"),
    (8, A100, ps.LINKS["ib-hdr"], 192.0,
     "NVIDIA/nccl #812, AddyLaddy (NVIDIA) on DGX A100 with 8 HDR: 'we measure 192GB/s AllReduce BusBW'"),
    (8, H100, ps.LINKS["ib-ndr"], 370.0,
     "NVIDIA/nccl-tests #309 (NVIDIA's DGX H100 figure: 'nearly 370 GB/s in a single node, and 380GB/s in a "
     "multi-host'); NVIDIA/nccl-tests #212, sjeaugey: NVLink4 'effective ... 370GB/s' with NCCL_ALGO=RING"),
]


@pytest.mark.parametrize("hcas, device, inter, published, source", NCCL_TESTS,
                         ids=[f"{h}hca-{d.name}" for h, d, *_ in NCCL_TESTS])
def test_bus_bandwidth_across_nodes_matches_nccl_tests(hcas, device, inter, published, source):
    c = ps.Cluster(device, nodes=2, gpus_per_node=8, inter=inter)
    assert c.nics_per_node == hcas
    link = link_for(c, 16)
    n = 8 * 2**30
    t = ps.comm.collective_time("all-reduce", n, 16, link)
    busbw = 2 * 15 / 16 * n / t / 1e9
    assert busbw == pytest.approx(published, rel=0.15), source


def test_rings_follow_the_hcas_a_group_has_on_each_node():
    # DGX A100 (one HDR HCA per GPU): DP16 over two nodes runs 8 rings, one per HCA -- 8 x 24 GB/s,
    # not one HCA's 24 GB/s; TP8 x DP2 puts one rank of each DP group on each node: one ring each on
    # its own HCA. With 4 HCAs shared by 8 GPUs, those 8 one-rank groups share 4 HCAs: half each.
    a = ps.Cluster(A100, nodes=2)
    hdr = ps.LINKS["ib-hdr"]
    dp16 = placement(ps.Plan(dp=16), a)["DP"]
    assert (dp16.rings, dp16.link.achieved) == (8, pytest.approx(8 * hdr.achieved))
    one = placement(ps.Plan(tp=8, dp=2), a)["DP"]
    assert (one.rings, one.link.achieved) == (1, pytest.approx(hdr.achieved))
    four = ps.Cluster(A100, nodes=2, inter=ps.LINKS["ib-hdr-4hca"])
    assert placement(ps.Plan(tp=8, dp=2), four)["DP"].link.achieved == pytest.approx(hdr.achieved / 2)
    # TP2 x DP8 on 2 nodes: each DP group has 4 ranks per node, two groups per node share the 4 HCAs.
    assert placement(ps.Plan(tp=2, dp=8), four)["DP"].link.achieved == pytest.approx(2 * hdr.achieved)
    # The intra-node link bounds it: 8 NDR HCAs (8 x 47 GB/s) exceed what NVLink 4 rings carry.
    h = placement(ps.Plan(dp=16), ps.Cluster(H100, nodes=2))["DP"].link
    assert h.name == NVL4.name and h.achieved == NVL4.achieved


def test_point_to_point_traffic_keeps_one_port_per_hop():
    # Ring attention's K/V sends and MoE all-to-all go GPU to GPU: a crossing hop uses one HCA
    # (all-to-all "does not aggregate NICs", NVIDIA/nccl-tests #267), unlike an all-reduce's rings.
    a = ps.Cluster(A100, nodes=2)
    groups = placement(ps.Plan(cp=16), a)
    assert groups["CP"].link.bandwidth == ps.LINKS["ib-hdr"].bandwidth and groups["CP"].rings == 1
    assert placement(ps.Plan(dp=16), a)["DP"].link.bandwidth == 8 * ps.LINKS["ib-hdr"].bandwidth
