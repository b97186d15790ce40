"""Devices, links and clusters: the hardware side of every estimate.

Units: bytes, FLOP/s, bytes/s and seconds. Link bandwidth is per GPU and per direction, which is
the quantity that alpha-beta collective costs use (NCCL's "bus bandwidth" is measured against it).
"""

from __future__ import annotations

from dataclasses import dataclass

from ._check import Catalogue, ParallelselError, positive_int, positive_number

GiB = 2**30


@dataclass(frozen=True)
class Device:
    """An accelerator: usable memory (bytes) and peak dense 16-bit tensor FLOP/s."""

    name: str
    memory: float
    peak_flops: float

    def __post_init__(self):
        positive_number("memory", self.memory)
        positive_number("peak_flops", self.peak_flops)


@dataclass(frozen=True)
class Link:
    """An interconnect: per-GPU, per-direction bandwidth (bytes/s) and per-message latency (s).

    The alpha-beta model (Hockney 1994; Thakur, Rabenseifner & Gropp 2005) charges a message of
    n bytes ``latency + n / bandwidth``.
    """

    name: str
    bandwidth: float
    latency: float = 0.0

    def __post_init__(self):
        positive_number("bandwidth", self.bandwidth)
        positive_number("latency", self.latency, allow_zero=True)


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
        """Whether a group of ``size`` ranks, ``stride`` apart in rank order, leaves one node.

        Ranks are numbered node-major (rank r sits on node r // gpus_per_node), so a group whose
        footprint ``size * stride`` exceeds a node, or which does not start aligned, crosses nodes.
        """
        size = positive_int("size", size)
        stride = positive_int("stride", stride)
        return size > 1 and size * stride > self.gpus_per_node

    def link_for(self, size: int, stride: int = 1) -> Link:
        """The link a ring over this group is bottlenecked by: intra-node if it fits in a node, else inter-node."""
        return self.inter if self.spans_nodes(size, stride) else self.intra


# Presets. Memory is the capacity the vendor states (binary GiB as nvidia-smi reports it, rounded);
# peak_flops is dense BF16 tensor-core throughput from the vendor's datasheet (FP16 for V100, which
# has no BF16).
DEVICES: dict[str, Device] = Catalogue("device", {
    # NVIDIA Tesla V100 SXM2 datasheet: 32 GB HBM2, 125 TFLOPS FP16 tensor.
    "v100-32gb": Device("V100-32GB", 32 * GiB, 125e12),
    # NVIDIA A100 datasheet (2021): 40/80 GB HBM2/HBM2e, 312 TFLOPS BF16 dense.
    "a100-40gb": Device("A100-40GB", 40 * GiB, 312e12),
    "a100-80gb": Device("A100-80GB", 80 * GiB, 312e12),
    # NVIDIA H100 SXM5 datasheet: 80 GB HBM3, 989 TFLOPS BF16 dense (1979 with sparsity).
    "h100-sxm-80gb": Device("H100-SXM-80GB", 80 * GiB, 989e12),
    # NVIDIA H200 SXM datasheet: 141 GB HBM3e, same tensor cores as H100 SXM.
    "h200-141gb": Device("H200-141GB", 141 * GiB, 989e12),
    # NVIDIA Ada Lovelace whitepaper, GeForce RTX 4090: 24 GB GDDR6X, 165.2 TFLOPS BF16 (FP32 accumulate).
    "rtx4090-24gb": Device("RTX4090-24GB", 24 * GiB, 165.2e12),
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
    # InfiniBand with one HCA per GPU (DGX A100: HDR 200 Gb/s; DGX H100: NDR 400 Gb/s).
    "ib-hdr": Link("InfiniBand HDR 200Gb/s", 25e9, 5e-6),
    "ib-ndr": Link("InfiniBand NDR 400Gb/s", 50e9, 5e-6),
    # Commodity Ethernet, assuming one NIC's share per GPU (divide by GPUs sharing a NIC otherwise).
    "eth-25g": Link("Ethernet 25GbE", 25e9 / 8, 30e-6),
    "eth-100g": Link("Ethernet 100GbE", 100e9 / 8, 20e-6),
})
