"""Devices, links and clusters: the hardware side of every estimate.

Units: bytes, FLOP/s, bytes/s and seconds. Link bandwidth is per direction. A link is either one
per GPU (NVLink, PCIe, a rail-optimised network with one NIC per GPU: ``per="gpu"``) or a number of
NICs a whole node shares (``per="node"``, ``nics`` of them); :mod:`parallelsel.placement` turns the
latter into each GPU's share. Per-GPU bandwidth is the quantity that alpha-beta collective costs use
(NCCL's "bus bandwidth" is measured against it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._check import Catalogue, ParallelselError, positive_int, positive_number, store

GiB = 2**30
MiB = 2**20

MAX_GPUS = 2**20
"""Largest cluster accepted: 64 times the 16,384 H100s that trained Llama 3 405B (Dubey et al. 2024
§3.3.1). It bounds the plan enumeration, whose cost grows with the divisors of the GPU count."""

MAX_GPUS_PER_NODE = 2**10
"""Largest node accepted (a DGX GB200 NVL72 rack -- 72 GPUs in one NVLink domain -- is far below it)."""


@dataclass(frozen=True)
class Device:
    """An accelerator: the memory its driver reports (bytes, nvidia-smi's ``memory.total``) and peak dense 16-bit tensor FLOP/s.

    What a training process can use is less: :func:`parallelsel.memory.usable_memory` deducts the
    runtime reserve (CUDA context, NCCL communicators) from ``memory``.

    ``intra`` / ``inter``: keys of :data:`LINKS` for the links a server built around this device
    usually has (its NVLink generation or PCIe inside a node, the NIC between nodes); a
    :class:`Cluster` uses them when it is not given links, and records that it assumed them.
    """

    name: str
    memory: float
    peak_flops: float
    intra: str | None = None
    inter: str | None = None

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise ParallelselError(f"name={self.name!r}: must be a string")
        store(self, "memory", positive_number("memory", self.memory))
        store(self, "peak_flops", positive_number("peak_flops", self.peak_flops))
        for f in ("intra", "inter"):
            key = getattr(self, f)
            if key is not None and not isinstance(key, str):
                raise ParallelselError(f"{f}={key!r}: must be a key of ps.LINKS or None")


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
        if not isinstance(self.name, str):
            raise ParallelselError(f"name={self.name!r}: must be a string")
        store(self, "bandwidth", positive_number("bandwidth", self.bandwidth))
        store(self, "latency", positive_number("latency", self.latency, allow_zero=True))
        if self.per not in ("gpu", "node"):
            raise ParallelselError(f"per={self.per!r}: must be 'gpu' (one port per GPU) or 'node' (NICs shared by a node)")
        store(self, "nics", positive_int("nics", self.nics, maximum=MAX_GPUS_PER_NODE))
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
    assumed: tuple[str, ...] = field(default=(), init=False, compare=False, repr=False)
    """``"intra"`` and/or ``"inter"``: the links that were not given and were taken from the device's
    usual pairing (:attr:`Device.intra` / :attr:`Device.inter`, else NVLink 3 and InfiniBand HDR)."""

    def __post_init__(self):
        if not isinstance(self.device, Device):
            raise ParallelselError(f"device={self.device!r}: must be a Device (e.g. ps.DEVICES['a100-80gb'])")
        store(self, "nodes", positive_int("nodes", self.nodes, maximum=MAX_GPUS))
        store(self, "gpus_per_node", positive_int("gpus_per_node", self.gpus_per_node, maximum=MAX_GPUS_PER_NODE))
        if self.nodes * self.gpus_per_node > MAX_GPUS:
            raise ParallelselError(f"nodes x gpus_per_node = {self.nodes} x {self.gpus_per_node}: must be <= {MAX_GPUS} GPUs")
        # Links not given follow the device (its usual NVLink generation and NIC), and are recorded as assumed.
        assumed = []
        for name, fallback in (("intra", "nvlink3"), ("inter", "ib-hdr")):
            if getattr(self, name) is None:
                key = getattr(self.device, name) or fallback
                if key not in LINKS:
                    raise ParallelselError(f"device.{name}={key!r}: unknown link; known: {', '.join(sorted(LINKS))}")
                object.__setattr__(self, name, LINKS[key])
                assumed.append(name)
        object.__setattr__(self, "assumed", tuple(assumed))
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
#
# Usual links (intra, inter): the NVLink generation of the SXM part (NVIDIA's datasheets) and the NIC
# of NVIDIA's reference server for it -- DGX-1 V100: four 100 Gb/s EDR InfiniBand ports for eight
# GPUs (DGX-1 with Tesla V100 System Architecture whitepaper; ``ib-edr`` is one port per GPU, twice
# DGX-1's share: pass ``inter=`` for a DGX-1);
# DGX A100: eight ConnectX-6 HDR 200 Gb/s (DGX A100 User Guide); DGX H100 and DGX H200: eight
# ConnectX-7 NDR 400 Gb/s (DGX H100/H200 User Guide). The RTX 4090 has no NVLink (Ada whitepaper:
# PCIe 4.0 x16 only); consumer-GPU servers have no reference design, so commodity 25 GbE is assumed.
DEVICES: dict[str, Device] = Catalogue("device", {
    # NVIDIA Tesla V100 SXM2 datasheet: 32 GB HBM2, 125 TFLOPS FP16 tensor; NVLink 2 (300 GB/s). nvidia-smi
    # reports 32510MiB on V100-SXM2-32GB / V100-PCIE-32GB (public nvidia-smi logs).
    "v100-32gb": Device("V100-32GB", 32510 * MiB, 125e12, intra="nvlink2", inter="ib-edr"),
    # NVIDIA A100 datasheet (2021): 40/80 GB HBM2/HBM2e, 312 TFLOPS BF16 dense; NVLink 3 (600 GB/s).
    # nvidia-smi reports 40960MiB and 81920MiB (modal-labs/modal-client PR #2797 lists nvidia-smi totals per GPU type).
    "a100-40gb": Device("A100-40GB", 40960 * MiB, 312e12, intra="nvlink3", inter="ib-hdr"),
    "a100-80gb": Device("A100-80GB", 81920 * MiB, 312e12, intra="nvlink3", inter="ib-hdr"),
    # NVIDIA H100 SXM5 datasheet: 80 GB HBM3, 989 TFLOPS BF16 dense (1979 with sparsity); NVLink 4 (900 GB/s).
    # nvidia-smi reports 81559MiB for "NVIDIA H100 80GB HBM3" (modal-labs/modal-client PR #2797; NVIDIA/nccl issue #1264).
    "h100-sxm-80gb": Device("H100-SXM-80GB", 81559 * MiB, 989e12, intra="nvlink4", inter="ib-ndr"),
    # NVIDIA H200 SXM datasheet: 141 GB HBM3e, same tensor cores as H100 SXM; NVLink 4 (900 GB/s).
    # nvidia-smi reports 143771MiB for "NVIDIA H200" (public nvidia-smi logs).
    "h200-141gb": Device("H200-141GB", 143771 * MiB, 989e12, intra="nvlink4", inter="ib-ndr"),
    # NVIDIA Ada Lovelace whitepaper, GeForce RTX 4090: 24 GB GDDR6X, 165.2 TFLOPS BF16 (FP32 accumulate).
    # nvidia-smi reports 24564MiB (e.g. RLinf/RLinf issue #255).
    "rtx4090-24gb": Device("RTX4090-24GB", 24564 * MiB, 165.2e12, intra="pcie4", inter="eth-25g"),
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
    # InfiniBand with one HCA per GPU, per="gpu" (DGX-1: EDR 100 Gb/s; DGX A100 user guide: eight
    # single-port ConnectX-6 HDR 200 Gb/s adapters for the compute fabric; DGX H100 user guide: eight
    # ConnectX-7 NDR 400 Gb/s).
    "ib-edr": Link("InfiniBand EDR 100Gb/s", 12.5e9, 5e-6),
    "ib-hdr": Link("InfiniBand HDR 200Gb/s", 25e9, 5e-6),
    "ib-ndr": Link("InfiniBand NDR 400Gb/s", 50e9, 5e-6),
    # Commodity Ethernet: NICs that all GPUs of a node share, per="node"; one NIC per node unless
    # stated (an assumption for a generic server: pass dataclasses.replace(link, nics=2) for two).
    "eth-25g": Link("Ethernet 25GbE", 25e9 / 8, 30e-6, per="node", nics=1),
    "eth-100g": Link("Ethernet 100GbE", 100e9 / 8, 20e-6, per="node", nics=1),
})

DEVICE_SOURCES: dict[str, str] = {
    "v100-32gb": "NVIDIA Tesla V100 datasheet (SXM2); DGX-1 with Tesla V100 System Architecture whitepaper",
    "a100-40gb": "NVIDIA A100 Tensor Core GPU datasheet (2021); DGX A100 User Guide",
    "a100-80gb": "NVIDIA A100 Tensor Core GPU datasheet (2021); DGX A100 User Guide",
    "h100-sxm-80gb": "NVIDIA H100 Tensor Core GPU datasheet (SXM5); DGX H100 User Guide",
    "h200-141gb": "NVIDIA H200 Tensor Core GPU datasheet (SXM); DGX H200 User Guide",
    "rtx4090-24gb": "NVIDIA Ada Lovelace GPU architecture whitepaper (GeForce RTX 4090); no NVLink, PCIe 4.0 x16",
}
"""Where each :data:`DEVICES` preset's memory, FLOP/s and usual links come from."""

LINK_SOURCES: dict[str, str] = {
    "nvlink2": "NVIDIA V100 datasheet: NVLink 300 GB/s total, 150 GB/s each way",
    "nvlink3": "NVIDIA A100 datasheet: NVLink 600 GB/s total, 300 GB/s each way",
    "nvlink4": "NVIDIA H100 datasheet: NVLink 900 GB/s total, 450 GB/s each way",
    "pcie4": "PCI-SIG PCIe 4.0: 16 GT/s x16, about 32 GB/s each way",
    "pcie5": "PCI-SIG PCIe 5.0: 32 GT/s x16, about 64 GB/s each way",
    "ib-edr": "InfiniBand EDR 100 Gb/s per port, one port per GPU assumed",
    "ib-hdr": "InfiniBand HDR 200 Gb/s per port, one HCA per GPU as in DGX A100",
    "ib-ndr": "InfiniBand NDR 400 Gb/s per port, one HCA per GPU as in DGX H100",
    "eth-25g": "IEEE 802.3by 25 GbE, one NIC per node shared by its GPUs assumed",
    "eth-100g": "IEEE 802.3 100 GbE, one NIC per node shared by its GPUs assumed",
}
"""Where each :data:`LINKS` preset's bandwidth comes from; latencies are nccl-tests' order of magnitude."""
