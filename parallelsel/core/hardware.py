"""Devices, links and clusters: the hardware side of every estimate.

Units: bytes, FLOP/s, bytes/s and seconds. Link bandwidth is per direction. A link is either one
per GPU (NVLink, PCIe, a rail-optimised network with one NIC per GPU: ``per="gpu"``) or a number of
NICs a whole node shares (``per="node"``, ``nics`` of them); :mod:`parallelsel.core.placement` turns the
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

MAX_SMS = 2**12
"""Largest streaming-multiprocessor count accepted (a B200 has 148)."""

MAX_GPUS_PER_NODE = 2**10
"""Largest node accepted (a DGX GB200 NVL72 rack -- 72 GPUs in one NVLink domain -- is far below it)."""


@dataclass(frozen=True)
class Device:
    """An accelerator: the memory its driver reports (bytes, nvidia-smi's ``memory.total``) and peak dense 16-bit tensor FLOP/s.

    What a training process can use is less: :func:`parallelsel.core.memory.usable_memory` deducts the
    runtime reserve (CUDA context, NCCL communicators) from ``memory``.

    ``intra`` / ``inter``: keys of :data:`LINKS` for the links a server built around this device
    usually has (its NVLink generation or PCIe inside a node, the NIC between nodes); a
    :class:`Cluster` uses them when it is not given links, and records that it assumed them.

    The kernel model (:mod:`parallelsel.core.kernels`) reads four more: ``hbm_bandwidth`` (bytes/s, the
    datasheet's memory bandwidth), ``sms`` (streaming multiprocessors, which set GEMM wave
    quantization), ``gemm_efficiency`` (the share of ``peak_flops`` a large, perfectly shaped
    matmul reaches: a measured ceiling, not a guess) and ``memory_efficiency`` (the share of
    ``hbm_bandwidth`` a streaming kernel reaches). Override any of them with
    ``dataclasses.replace(device, ...)``; :func:`parallelsel.core.calibrate` fits ``gemm_efficiency``
    to a measured step.
    """

    name: str
    memory: float
    peak_flops: float
    intra: str | None = None
    inter: str | None = None
    hbm_bandwidth: float = 2.0e12
    sms: int = 108
    gemm_efficiency: float = 0.8
    memory_efficiency: float = 0.85

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise ParallelselError(f"name={self.name!r}: must be a string")
        store(self, "memory", positive_number("memory", self.memory))
        store(self, "peak_flops", positive_number("peak_flops", self.peak_flops))
        store(self, "hbm_bandwidth", positive_number("hbm_bandwidth", self.hbm_bandwidth))
        store(self, "sms", positive_int("sms", self.sms, maximum=MAX_SMS))
        for f in ("gemm_efficiency", "memory_efficiency"):
            value = positive_number(f, getattr(self, f))
            if value > 1:
                raise ParallelselError(f"{f}={value!r}: must be in (0, 1] (a share of the datasheet peak)")
            store(self, f, value)
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
    them at once is decided by the placement (:func:`parallelsel.core.placement.group_placement`).

    ``efficiency``: the share of the line rate that collectives reach for large messages -- the
    bus bandwidth nccl-tests reports (``doc/PERFORMANCE.md``) over ``bandwidth``; 1.0 for a link
    given by hand. :attr:`achieved` is what :mod:`parallelsel.core.comm` charges.
    """

    name: str
    bandwidth: float
    latency: float = 0.0
    per: str = "gpu"
    nics: int = 1
    efficiency: float = 1.0

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise ParallelselError(f"name={self.name!r}: must be a string")
        store(self, "bandwidth", positive_number("bandwidth", self.bandwidth))
        eff = positive_number("efficiency", self.efficiency)
        if eff > 1:
            raise ParallelselError(f"efficiency={eff!r}: must be in (0, 1] (achieved bus bandwidth / line rate)")
        store(self, "efficiency", eff)
        store(self, "latency", positive_number("latency", self.latency, allow_zero=True))
        if self.per not in ("gpu", "node"):
            raise ParallelselError(f"per={self.per!r}: must be 'gpu' (one port per GPU) or 'node' (NICs shared by a node)")
        store(self, "nics", positive_int("nics", self.nics, maximum=MAX_GPUS_PER_NODE))
        if self.per == "gpu" and self.nics != 1:
            raise ParallelselError(f"nics={self.nics}: only a per='node' link has several NICs (per GPU there is one port)")

    @property
    def achieved(self) -> float:
        """Bytes/s per port that a large collective reaches: ``bandwidth x efficiency``."""
        return self.bandwidth * self.efficiency

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
# Kernel constants (parallelsel.core.kernels). gemm_efficiency is TRAINING_SHARE of the Maximum Achievable
# Matmul FLOPS (MAMF) over the datasheet peak, as measured by stas00/ml-engineering's mamf-finder (BF16, no
# sparsity, best shape; compute/accelerator/README.md, "Maximum Achievable Matmul FLOPS comparison
# table"): A100 SXM 267.9 of 312 TFLOPS (85.9%, CUDA 12.1), H100 SXM 792.1 of 989 (80.1%, CUDA 12.1).
MAMF = {"a100": 267.9 / 312, "h100": 792.1 / 989, "assumed": 0.8}
"""Measured matmul ceilings over peak; "assumed" (80%, the lower of the two measured ones) for V100 and
RTX 4090, which have no row in the MAMF table."""
TRAINING_SHARE = 0.8875
"""Share of the MAMF ceiling that the GEMMs of a whole training step reach. MAMF times a short loop
of one best shape; a training step runs for seconds at the power-limited sustained clock (NVIDIA
quotes A100's HPL peak at 1305 MHz, not its 1410 MHz boost) with epilogues and other kernels in
between. Fitted once, by :func:`parallelsel.core.calibrate`, to one published measured step -- Korthikanti
et al. 2022 Table 5, GPT-3 175B on 64 A100s, 13.75 s (refitted when the pipeline model began pricing each
stage's own layers, the logits on the last) -- and checked against the 13 other Megatron-LM
runs on the validation page (tests/test_step_time.py). Applied to every device (an assumption for
the H100, H200, V100 and RTX 4090, which that fit did not see)."""
_GEMM = {k: v * TRAINING_SHARE for k, v in MAMF.items()}
_HBM_SHARE = 0.9
"""Share of the datasheet memory bandwidth a streaming kernel reaches: an assumption in line with
device-to-device copy measurements (about 90% of the HBM peak on A100/H100 class parts)."""

DEVICES: dict[str, Device] = Catalogue("device", {
    # NVIDIA Tesla V100 SXM2 datasheet: 32 GB HBM2 at 900 GB/s, 125 TFLOPS FP16 tensor; NVLink 2 (300 GB/s);
    # 80 SMs (Volta whitepaper). nvidia-smi reports 32510MiB on "Tesla V100-SXM2" 32 GB (deepspeedai/DeepSpeed issue
    # #192, driver 396.37).
    "v100-32gb": Device("V100-32GB", 32510 * MiB, 125e12, intra="nvlink2", inter="ib-edr", hbm_bandwidth=900e9,
                        sms=80, gemm_efficiency=_GEMM["assumed"], memory_efficiency=_HBM_SHARE),
    # NVIDIA A100 datasheet (2021): 40/80 GB HBM2/HBM2e at 1,555/2,039 GB/s (SXM), 312 TFLOPS BF16 dense; NVLink 3
    # (600 GB/s); 108 SMs (A100 whitepaper). nvidia-smi reports 40960MiB and 81920MiB (modal-labs/modal-client PR #2797).
    "a100-40gb": Device("A100-40GB", 40960 * MiB, 312e12, intra="nvlink3", inter="ib-hdr", hbm_bandwidth=1555e9,
                        sms=108, gemm_efficiency=_GEMM["a100"], memory_efficiency=_HBM_SHARE),
    "a100-80gb": Device("A100-80GB", 81920 * MiB, 312e12, intra="nvlink3", inter="ib-hdr", hbm_bandwidth=2039e9,
                        sms=108, gemm_efficiency=_GEMM["a100"], memory_efficiency=_HBM_SHARE),
    # NVIDIA H100 SXM5 datasheet: 80 GB HBM3 at 3.35 TB/s, 989 TFLOPS BF16 dense (1979 with sparsity); NVLink 4
    # (900 GB/s); 132 SMs. nvidia-smi reports 81559MiB for "NVIDIA H100 80GB HBM3" (modal-labs/modal-client PR #2797).
    "h100-sxm-80gb": Device("H100-SXM-80GB", 81559 * MiB, 989e12, intra="nvlink4", inter="ib-ndr",
                            hbm_bandwidth=3.35e12, sms=132, gemm_efficiency=_GEMM["h100"],
                            memory_efficiency=_HBM_SHARE),
    # NVIDIA H200 SXM datasheet: 141 GB HBM3e at 4.8 TB/s, same tensor cores and SMs as H100 SXM; NVLink 4.
    # Memory: 143771 MiB is an assumption -- the memory.total seen in nvidia-smi outputs of "NVIDIA H200" posted in
    # public, none of which could be tied to a citable page.
    "h200-141gb": Device("H200-141GB", 143771 * MiB, 989e12, intra="nvlink4", inter="ib-ndr", hbm_bandwidth=4.8e12,
                         sms=132, gemm_efficiency=_GEMM["h100"], memory_efficiency=_HBM_SHARE),
    # NVIDIA Ada Lovelace whitepaper, GeForce RTX 4090: 24 GB GDDR6X at 1,008 GB/s, 165.2 TFLOPS BF16 (FP32
    # accumulate), 128 SMs. nvidia-smi reports 24564MiB (e.g. RLinf/RLinf issue #255).
    "rtx4090-24gb": Device("RTX4090-24GB", 24564 * MiB, 165.2e12, intra="pcie4", inter="eth-25g",
                           hbm_bandwidth=1008e9, sms=128, gemm_efficiency=_GEMM["assumed"],
                           memory_efficiency=_HBM_SHARE),
})

# Per-GPU, per-direction bandwidth (line rate) and the share of it that collectives reach for
# large messages (efficiency = nccl-tests bus bandwidth / line rate; doc/PERFORMANCE.md defines busbw).
# Measured: 8x A100-SXM4 over NVLink 3, all_reduce_perf busbw about 200-208 GB/s of 300 (NVIDIA/nccl-tests
# issues #149 and #178); four HDR HCAs for eight A100s, busbw up to 96 GB/s of 100 (nccl-tests #119);
# NDR 400 Gb/s ConnectX-7, 46-49 GB/s per NIC of 50 (nccl-tests #290 and #267, NVIDIA's answers);
# RoCE, 600 of 800 Gb/s on eight 100 Gb/s NICs (NVIDIA/nccl #495). Latencies are typical small-message
# figures (order of magnitude from nccl-tests); they matter only for small messages.
_NVLINK3 = 204e9 / 300e9   # midpoint of 200 and 208 GB/s
_IB_HDR = 96 / 100
_IB_NDR = 47 / 50           # midpoint of 46-48 GB/s
_ROCE = 600 / 800
LINKS: dict[str, Link] = Catalogue("link", {
    # NVLink 2 (V100 SXM2): 300 GB/s total = 150 GB/s each way; achieved share assumed as NVLink 3's.
    "nvlink2": Link("NVLink2", 150e9, 3e-6, efficiency=_NVLINK3),
    # NVLink 3 (A100 SXM): 600 GB/s total = 300 GB/s each way.
    "nvlink3": Link("NVLink3", 300e9, 3e-6, efficiency=_NVLINK3),
    # NVLink 4 (H100 SXM): 900 GB/s total = 450 GB/s each way. A ring reaches about 80% (an assumption:
    # nccl-tests #290's 476 GB/s all-reduce uses NVLink SHARP, in-switch reduction, not a ring).
    "nvlink4": Link("NVLink4", 450e9, 3e-6, efficiency=0.8),
    # PCIe 4.0 / 5.0 x16: 32 / 64 GB/s each way (nominal); about 80% after TLP headers (assumed).
    "pcie4": Link("PCIe4 x16", 32e9, 5e-6, efficiency=0.8),
    "pcie5": Link("PCIe5 x16", 64e9, 5e-6, efficiency=0.8),
    # InfiniBand with one HCA per GPU, per="gpu" (DGX-1: EDR 100 Gb/s; DGX A100 user guide: eight
    # single-port ConnectX-6 HDR 200 Gb/s adapters for the compute fabric; DGX H100 user guide: eight
    # ConnectX-7 NDR 400 Gb/s). EDR's achieved share assumed as HDR's.
    "ib-edr": Link("InfiniBand EDR 100Gb/s", 12.5e9, 5e-6, efficiency=_IB_HDR),
    "ib-hdr": Link("InfiniBand HDR 200Gb/s", 25e9, 5e-6, efficiency=_IB_HDR),
    "ib-ndr": Link("InfiniBand NDR 400Gb/s", 50e9, 5e-6, efficiency=_IB_NDR),
    # Commodity Ethernet: NICs that all GPUs of a node share, per="node"; one NIC per node unless
    # stated (an assumption for a generic server: pass dataclasses.replace(link, nics=2) for two).
    "eth-25g": Link("Ethernet 25GbE", 25e9 / 8, 30e-6, per="node", nics=1, efficiency=_ROCE),
    "eth-100g": Link("Ethernet 100GbE", 100e9 / 8, 20e-6, per="node", nics=1, efficiency=_ROCE),
})

DEVICE_SOURCES: dict[str, str] = {
    "v100-32gb": "NVIDIA Tesla V100 datasheet (SXM2); DGX-1 with Tesla V100 System Architecture whitepaper; "
                 "nvidia-smi 32510 MiB: deepspeedai/DeepSpeed issue #192",
    "a100-40gb": "NVIDIA A100 Tensor Core GPU datasheet (2021); DGX A100 User Guide; "
                 "nvidia-smi 40960 MiB: modal-labs/modal-client PR #2797",
    "a100-80gb": "NVIDIA A100 Tensor Core GPU datasheet (2021); DGX A100 User Guide; "
                 "nvidia-smi 81920 MiB: modal-labs/modal-client PR #2797",
    "h100-sxm-80gb": "NVIDIA H100 Tensor Core GPU datasheet (SXM5); DGX H100 User Guide; "
                     "nvidia-smi 81559 MiB: modal-labs/modal-client PR #2797",
    "h200-141gb": "NVIDIA H200 Tensor Core GPU datasheet (SXM); DGX H200 User Guide; "
                  "nvidia-smi 143771 MiB assumed (no citable nvidia-smi output found)",
    "rtx4090-24gb": "NVIDIA Ada Lovelace GPU architecture whitepaper (GeForce RTX 4090); no NVLink, PCIe 4.0 x16; "
                    "nvidia-smi 24564 MiB: RLinf/RLinf issue #255, vllm-project/vllm issue #7553",
}
"""Where each :data:`DEVICES` preset's memory (the datasheet, and the nvidia-smi ``memory.total`` it is
set to), FLOP/s and usual links come from."""

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
"""Where each :data:`LINKS` preset's bandwidth comes from; the achieved shares and latencies are cited beside
:data:`LINKS` (nccl-tests measurements)."""
