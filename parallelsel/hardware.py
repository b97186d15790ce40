"""Devices, links and clusters: the hardware side of every estimate.

Units: bytes, FLOP/s, bytes/s and seconds. Link bandwidth is per direction. A link is either one
per GPU (NVLink, PCIe, a rail-optimised network with one NIC per GPU: ``per="gpu"``) or a number of
NICs a whole node shares (``per="node"``, ``nics`` of them); :mod:`parallelsel.placement` turns the
latter into each GPU's share. Per-GPU bandwidth is the quantity that alpha-beta collective costs use
(NCCL's "bus bandwidth" is measured against it).
"""

from __future__ import annotations

from dataclasses import dataclass

from ._check import Catalogue, ParallelselError, positive_int, positive_number

GiB = 2**30
MiB = 2**20


@dataclass(frozen=True)
class Device:
    """An accelerator: the memory its driver reports (bytes, nvidia-smi's ``memory.total``) and peak dense 16-bit tensor FLOP/s.

    What a training process can use is less: :func:`parallelsel.memory.usable_memory` deducts the
    runtime reserve (CUDA context, NCCL communicators) from ``memory``.
    """

    name: str
    memory: float
    peak_flops: float

    def __post_init__(self):
        positive_number("memory", self.memory)
        positive_number("peak_flops", self.peak_flops)


@dataclass(frozen=True)
class Link:
    """An interconnect: per-direction bandwidth (bytes/s) of one port and per-message latency (s).

    The alpha-beta model (Hockney 1994; Thakur, Rabenseifner & Gropp 2005) charges a message of
    n bytes ``latency + n / bandwidth``. ``per="gpu"``: every GPU has its own port of
    ``bandwidth`` (NVLink, PCIe, one InfiniBand HCA per GPU). ``per="node"``: the node has ``nics``
    ports of ``bandwidth`` that all its GPUs share (commodity Ethernet); how many GPUs send through
    them at once is decided by the placement (:func:`parallelsel.placement.group_placement`).
    """

    name: str
    bandwidth: float
    latency: float = 0.0
    per: str = "gpu"
    nics: int = 1

    def __post_init__(self):
        positive_number("bandwidth", self.bandwidth)
        positive_number("latency", self.latency, allow_zero=True)
        if self.per not in ("gpu", "node"):
            raise ParallelselError(f"per={self.per!r}: must be 'gpu' (one port per GPU) or 'node' (NICs shared by a node)")
        positive_int("nics", self.nics)
        if self.per == "gpu" and self.nics != 1:
            raise ParallelselError(f"nics={self.nics}: only a per='node' link has several NICs (per GPU there is one port)")

    def share(self, senders: int) -> float:
        """Bandwidth each of ``senders`` GPUs of one node gets at once: ``bandwidth`` per GPU for a
        per-GPU link; ``nics x bandwidth / senders`` for NICs a node shares (never more than the
        node's NICs together)."""
        if self.per == "gpu":
            return self.bandwidth
        return self.nics * self.bandwidth / max(1, senders)


@dataclass(frozen=True)
class Cluster:
    """``nodes`` x ``gpus_per_node`` identical devices; ``intra`` links GPUs inside a node, ``inter`` links nodes."""

    device: Device
    nodes: int = 1
    gpus_per_node: int = 8
    intra: Link = None  # type: ignore[assignment]
    inter: Link = None  # type: ignore[assignment]

    def __post_init__(self):
        if not isinstance(self.device, Device):
            raise ParallelselError(f"device={self.device!r}: must be a Device (e.g. ps.DEVICES['a100-80gb'])")
        positive_int("nodes", self.nodes)
        positive_int("gpus_per_node", self.gpus_per_node)
        # Sensible defaults keep one-node examples short: NVLink inside, InfiniBand HDR between.
        if self.intra is None:
            object.__setattr__(self, "intra", LINKS["nvlink3"])
        if self.inter is None:
            object.__setattr__(self, "inter", LINKS["ib-hdr"])
        for name in ("intra", "inter"):
            if not isinstance(getattr(self, name), Link):
                raise ParallelselError(f"{name}={getattr(self, name)!r}: must be a Link (e.g. ps.LINKS['nvlink3'])")

    @property
    def gpus(self) -> int:
        """Total number of devices."""
        return self.nodes * self.gpus_per_node

    def spans_nodes(self, size: int, stride: int = 1) -> bool:
        """Whether any group of ``size`` ranks, ``stride`` apart in rank order, leaves one node when
        such groups tile the cluster (rank r sits on node r // gpus_per_node).

        Counted by :func:`parallelsel.placement.group_placement`, so a group that does not start
        node-aligned (TP=6 on 8-GPU nodes) is found too.
        """
        from .placement import group_placement  # the placement layer sits above hardware

        size = positive_int("size", size)
        stride = positive_int("stride", stride)
        return group_placement(self, self._tiled(size, stride), size, stride).spans_nodes

    def link_for(self, size: int, stride: int = 1) -> Link:
        """The link a ring over such groups is priced on (:func:`parallelsel.placement.group_placement`):
        the intra-node link inside a node; across nodes the slower of the two links' bandwidths and
        the larger latency, with a per-node NIC shared by the GPUs that send through it."""
        from .placement import group_placement

        size = positive_int("size", size)
        stride = positive_int("stride", stride)
        return group_placement(self, self._tiled(size, stride), size, stride).link

    def _tiled(self, size: int, stride: int) -> int:
        # The largest multiple of one group footprint that fits the cluster (at least one footprint).
        foot = size * stride
        return max(foot, self.gpus // foot * foot)


# Presets. Memory is what the driver reports as the card's total (nvidia-smi ``memory.total``, in
# MiB; the vendor's "80 GB" is a marketing capacity, and H100 reports less than A100 80GB); peak_flops
# is dense BF16 tensor-core throughput from the vendor's datasheet (FP16 for V100, which has no BF16).
DEVICES: dict[str, Device] = Catalogue("device", {
    # NVIDIA Tesla V100 SXM2 datasheet: 32 GB HBM2, 125 TFLOPS FP16 tensor. nvidia-smi reports
    # 32510MiB on V100-SXM2-32GB / V100-PCIE-32GB (public nvidia-smi logs).
    "v100-32gb": Device("V100-32GB", 32510 * MiB, 125e12),
    # NVIDIA A100 datasheet (2021): 40/80 GB HBM2/HBM2e, 312 TFLOPS BF16 dense. nvidia-smi reports
    # 40960MiB and 81920MiB (modal-labs/modal-client PR #2797 lists nvidia-smi totals per GPU type).
    "a100-40gb": Device("A100-40GB", 40960 * MiB, 312e12),
    "a100-80gb": Device("A100-80GB", 81920 * MiB, 312e12),
    # NVIDIA H100 SXM5 datasheet: 80 GB HBM3, 989 TFLOPS BF16 dense (1979 with sparsity). nvidia-smi
    # reports 81559MiB for "NVIDIA H100 80GB HBM3" (modal-labs/modal-client PR #2797; NVIDIA/nccl issue #1264).
    "h100-sxm-80gb": Device("H100-SXM-80GB", 81559 * MiB, 989e12),
    # NVIDIA H200 SXM datasheet: 141 GB HBM3e, same tensor cores as H100 SXM. nvidia-smi reports
    # 143771MiB for "NVIDIA H200" (public nvidia-smi logs).
    "h200-141gb": Device("H200-141GB", 143771 * MiB, 989e12),
    # NVIDIA Ada Lovelace whitepaper, GeForce RTX 4090: 24 GB GDDR6X, 165.2 TFLOPS BF16 (FP32 accumulate).
    # nvidia-smi reports 24564MiB (e.g. RLinf/RLinf issue #255).
    "rtx4090-24gb": Device("RTX4090-24GB", 24564 * MiB, 165.2e12),
})

# Per-GPU, per-direction bandwidth. Latencies are typical small-message figures (order of
# magnitude from nccl-tests); they matter only for small messages.
LINKS: dict[str, Link] = Catalogue("link", {
    # NVLink 2 (V100 SXM2): 300 GB/s total = 150 GB/s each way.
    "nvlink2": Link("NVLink2", 150e9, 3e-6),
    # NVLink 3 (A100 SXM): 600 GB/s total = 300 GB/s each way.
    "nvlink3": Link("NVLink3", 300e9, 3e-6),
    # NVLink 4 (H100 SXM): 900 GB/s total = 450 GB/s each way.
    "nvlink4": Link("NVLink4", 450e9, 3e-6),
    # PCIe 4.0 / 5.0 x16: 32 / 64 GB/s each way (nominal).
    "pcie4": Link("PCIe4 x16", 32e9, 5e-6),
    "pcie5": Link("PCIe5 x16", 64e9, 5e-6),
    # InfiniBand with one HCA per GPU, per="gpu" (DGX A100 user guide: eight single-port ConnectX-6
    # HDR 200 Gb/s adapters for the compute fabric; DGX H100 user guide: eight ConnectX-7 NDR 400 Gb/s).
    "ib-hdr": Link("InfiniBand HDR 200Gb/s", 25e9, 5e-6),
    "ib-ndr": Link("InfiniBand NDR 400Gb/s", 50e9, 5e-6),
    # Commodity Ethernet: NICs that all GPUs of a node share, per="node"; one NIC per node unless
    # stated (an assumption for a generic server: pass dataclasses.replace(link, nics=2) for two).
    "eth-25g": Link("Ethernet 25GbE", 25e9 / 8, 30e-6, per="node", nics=1),
    "eth-100g": Link("Ethernet 100GbE", 100e9 / 8, 20e-6, per="node", nics=1),
})
