"""Devices, links and clusters: the hardware side of every estimate.

Units: bytes, FLOP/s, bytes/s and seconds. Link bandwidth is per direction. A link is either one
per GPU (NVLink, PCIe, a rail-optimised network with one NIC per GPU: ``per="gpu"``) or a number of
NICs a whole node shares (``per="node"``, ``nics`` of them); :mod:`parallelsel.core.placement` turns the
latter into each GPU's share. Per-GPU bandwidth is the quantity that alpha-beta collective costs use
(NCCL's "bus bandwidth" is measured against it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._check import cached_hash, state_without_hash, Catalogue, ParallelselError, flag, positive_int, positive_number, record, store

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

    ``fp8_flops``: dense FP8 tensor-core FLOP/s from the datasheet (0: the part has no FP8 tensor
    cores, so an FP8 recipe is refused); ``fp8_efficiency``: the share of it a large FP8 GEMM reaches,
    as ``gemm_efficiency`` is for 16-bit. ``attention_efficiency``: the share of ``peak_flops`` the fused
    attention kernel reaches during a training step (0: :data:`parallelsel.core.kernels.FLASH_SHARE` of
    ``gemm_efficiency``, the A100 measurement). ``cudnn_attention_efficiency``: the same for cuDNN's fused
    attention, which Transformer Engine runs on Hopper (0: no cuDNN figure for the part, FlashAttention's rate
    is used). ``source``: where the numbers come from (datasheet, the
    nvidia-smi report of its memory, the measurements behind the efficiencies).
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
    fp8_flops: float = 0.0
    fp8_efficiency: float = 0.8
    attention_efficiency: float = 0.0
    source: str = field(default="", compare=False)
    """Where the record's numbers come from (paper and table, datasheet, measurement); every preset names one."""
    cudnn_attention_efficiency: float = 0.0   # (after ``source``: positional arguments keep their places)
    fp8_transpose: bool = True
    """Whether an FP8 tensor needs a separate, physically transposed copy to be read columnwise (the weight in the
    input-gradient GEMM): True on Hopper and Ada, False on Blackwell (Transformer Engine's
    ``performance_considerations.rst``, "Architecture differences"), where one FP8 copy serves both uses."""

    __hash__ = cached_hash
    __getstate__ = state_without_hash

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise ParallelselError(f"name={self.name!r}: must be a string")
        if not isinstance(self.source, str):
            raise ParallelselError(f"source={self.source!r}: must be a string")
        store(self, "memory", positive_number("memory", self.memory))
        store(self, "peak_flops", positive_number("peak_flops", self.peak_flops))
        store(self, "fp8_flops", positive_number("fp8_flops", self.fp8_flops, allow_zero=True))
        store(self, "hbm_bandwidth", positive_number("hbm_bandwidth", self.hbm_bandwidth))
        store(self, "sms", positive_int("sms", self.sms, maximum=MAX_SMS))
        for f in ("attention_efficiency", "cudnn_attention_efficiency"):
            value = positive_number(f, getattr(self, f), allow_zero=True)
            if value > 1:
                raise ParallelselError(f"{f}={value!r}: must be in [0, 1]")
            store(self, f, value)
        for f in ("gemm_efficiency", "memory_efficiency", "fp8_efficiency"):
            value = positive_number(f, getattr(self, f))
            if value > 1:
                raise ParallelselError(f"{f}={value!r}: must be in (0, 1] (a share of the datasheet peak)")
            store(self, f, value)
        store(self, "fp8_transpose", flag("fp8_transpose", self.fp8_transpose))
        for f in ("intra", "inter"):
            key = getattr(self, f)
            if key is not None and not isinstance(key, str):
                raise ParallelselError(f"{f}={key!r}: must be a key of ps.LINKS or None")

    @property
    def memory_rate(self) -> float:
        """Bytes/s a memory-bound kernel moves: HBM bandwidth x ``memory_efficiency``."""
        return self.hbm_bandwidth * self.memory_efficiency


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
    source: str = field(default="", compare=False)
    """Where the record's numbers come from (paper and table, datasheet, measurement); every preset names one."""

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
        node's NICs together). :mod:`parallelsel.core.placement` multiplies it by the rings NCCL
        runs over the node boundary."""
        if self.per == "gpu":
            return self.bandwidth
        return self.nics * self.bandwidth / max(1, senders)


@dataclass(frozen=True)
class Cluster:
    """``nodes`` x ``gpus_per_node`` identical devices; ``intra`` links GPUs inside a node, ``inter`` links nodes.

    A node is what ``intra`` joins: eight GPUs in a DGX/HGX server; on a GB200 NVL72 rack, whose trays of four
    GPUs share one NVLink domain, the GPUs of the rack the job holds (Megatron-Bridge asks Slurm for blocks of up
    to 18 trays in one rack, ``scripts/performance/utils/executors.py`` @067f987), not the tray."""

    device: Device
    nodes: int = 1
    gpus_per_node: int = 8
    intra: Link = None  # type: ignore[assignment]
    inter: Link = None  # type: ignore[assignment]
    assumed: tuple[str, ...] = field(default=(), init=False, compare=False, repr=False)
    """``"intra"`` and/or ``"inter"``: the links that were not given and were taken from the device's
    usual pairing (:attr:`Device.intra` / :attr:`Device.inter`, else NVLink 3 and InfiniBand HDR)."""

    def __post_init__(self):
        object.__setattr__(self, "device", record("device", self.device, Device, DEVICES))
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
            object.__setattr__(self, name, record(name, getattr(self, name), Link, LINKS))

    @property
    def gpus(self) -> int:
        """Total number of devices."""
        return self.nodes * self.gpus_per_node

    @property
    def nics_per_node(self) -> int:
        """Network ports (HCAs/NICs) per node on the inter-node link: one per GPU for a per-GPU
        (rail-optimised) link, ``inter.nics`` for NICs the node shares."""
        return self.gpus_per_node if self.inter.per == "gpu" else self.inter.nics


# Presets. Memory is what the driver reports as the card's total (nvidia-smi ``memory.total``, in
# MiB; the vendor's "80 GB" is a marketing capacity, and H100 reports less than A100 80GB); peak_flops
# is dense BF16 tensor-core throughput from the vendor's datasheet (FP16 for V100, which has no BF16).
#
# Usual links (intra, inter): the NVLink generation of the SXM part (NVIDIA's datasheets) and the NIC
# of NVIDIA's reference server for it -- DGX-1 V100: four 100 Gb/s EDR InfiniBand ports for eight
# GPUs (DGX-1 with Tesla V100 System Architecture whitepaper: ``ib-edr-4hca``);
# DGX A100: eight ConnectX-6 HDR 200 Gb/s (DGX A100 User Guide); DGX H100 and DGX H200: eight
# ConnectX-7 NDR 400 Gb/s (DGX H100/H200 User Guide). The RTX 4090 has no NVLink (Ada whitepaper:
# PCIe 4.0 x16 only); consumer-GPU servers have no reference design, so commodity 25 GbE is assumed.
# Kernel constants (parallelsel.core.kernels). gemm_efficiency is TRAINING_SHARE of the Maximum Achievable
# Matmul FLOPS (MAMF) over the datasheet peak, as measured by stas00/ml-engineering's mamf-finder (BF16, no
# sparsity, best shape; compute/accelerator/README.md, "Maximum Achievable Matmul FLOPS comparison
# table"): A100 SXM 267.9 of 312 TFLOPS (85.9%, CUDA 12.1), H100 SXM 792.1 of 989 (80.1%, CUDA 12.1); the
# Blackwell rows of the same table at 68cd2e5: B200 SXM 1745.0 of 2250 (77.6%, torch 2.7.1+cu128) and GB200
# 1822.0 of 2500 (72.9%, torch 2.10 nightly + cu130).
MAMF = {"a100": 267.9 / 312, "h100": 792.1 / 989, "b200": 1745.0 / 2250, "gb200": 1822.0 / 2500, "assumed": 0.8}
"""Measured matmul ceilings over peak; "assumed" (80%, the lower of the two Ampere/Hopper ones) for V100 and
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

MAMF_FP8 = {"h100": 1611.0 / 1979, "b200": 3432.5 / 4500, "gb200": 3615.6 / 5000}
"""Measured FP8 matmul ceiling over the FP8 dense peak: cuBLASLt FP8 (E4M3 inputs, BF16 output, FP32
accumulate) at M = N = K = 8192 on H100-class GPUs, 1608.6 and 1613.7 TFLOP/s per GPU in two runs
(gitea.d-robotics.cc/han.zhao/test_gpu_scripts, ``reports_cublaslt_fp8_crosscheck_20260524.md``; a
third-party report) of the H100 SXM datasheet's 1,979 dense: 81.4%, the same share as BF16's MAMF
(80.1%). TransformerEngine's ``docs/features/low_precision_training/speedups.rst`` (@8f2e6357) measures
the FP8 GEMMs of a 5B model's layer at 1.58-1.90x their BF16 time on H200, i.e. below 2x: the casts
and scaling that :mod:`parallelsel.core.kernels` charges separately. Blackwell: stas00/ml-engineering
``compute/accelerator/README.md`` @68cd2e5, mamf-finder's FP8 table (float8_e4m3fn): B200 SXM 3432.5 of 4,500
dense (76.3%), GB200 3615.6 of 5,000 (72.3%). The H100 figure is not from that table, which prints 1402.6 of 1,979
(70.9%) for the H100 SXM: the two methods differ (one best shape of a brute-force search there, a large square
GEMM in the cuBLASLt report), so the Hopper and Blackwell FP8 ceilings compare with about a 13% uncertainty."""
_FP8 = {k: v * TRAINING_SHARE for k, v in MAMF_FP8.items()}

FA2_HOPPER = 335 / 989 * TRAINING_SHARE
"""Fused attention on Hopper parts: FlashAttention-2 -- the kernel PyTorch's SDPA ran there until
FlashAttention-3 -- reaches "up to 335 TFLOPs/s" forward + backward on H100 (Dao 2023, §4.1: the A100 code
"using no special instructions to make use of new hardware features such as TMA and 4th-gen Tensor
Cores"), 34% of the SXM5's 989, against 50-73% of peak on A100; times :data:`TRAINING_SHARE` for the
sustained clock of a training step, as every other kernel ceiling here."""

FA3_FIGURES_H100 = {
    "fa2": {"forward": (319, 333), "backward": (310, 318)},
    "cudnn": {"forward": (518, 529), "backward": (499, 518)},
}
"""Attention kernels on the H100 SXM5, TFLOP/s at head dimension 128 and sequence 4k and 8k, as Shah et al. 2024
(FlashAttention-3, Fig. 5: forward with the causal mask; Fig. 6: backward) measured FlashAttention-2 and cuDNN 9:
the same shapes, so their ratio is the speed of one kernel over the other whatever FLOP convention is used; and
the two lengths give each kernel's rate as the keys it sweeps grow (:func:`attention_length_factor`)."""


FIGURE_LENGTHS = (4096, 8192)
"""The sequence lengths of :data:`FA3_FIGURES_H100`'s two figures per kernel and pass."""


def attention_length_factor(kernel: str, pass_: str, length: int) -> float:
    """Seconds per FLOP of ``kernel``'s ``pass_`` ("forward" or "backward") over keys of ``length`` tokens, relative
    to the mean of its two measured lengths (:data:`FA3_FIGURES_H100`, the rate the device presets stand for).

    A fused attention kernel pays a fixed cost per query tile (load the tile, write its output and statistics)
    beside work that grows with the keys it sweeps, so its rate rises with the length towards a ceiling:
    r(L) = r_max L / (L + c). The two figures per kernel and pass fix r_max and c (FlashAttention-2's forward:
    c near 380 tokens; cuDNN's: near 180), so a 32k-token sweep runs a few percent faster than the figures' mean
    and a 2k one slower. Outside 4k-8k the curve is an extrapolation of that form, not a measurement. The device
    presets' attention rates are taken as the rates at the figures' mean (FlashAttention-2's preset, Dao 2023's "up
    to 335", is within 3% of its figures' 326).

    Examples:
        >>> [round(attention_length_factor("fa2", "forward", n), 3) for n in (4096, 8192, 32768)]
        [1.021, 0.979, 0.946]
    """
    figures = FA3_FIGURES_H100.get(kernel)
    if figures is None or pass_ not in figures:
        raise ParallelselError(f"kernel={kernel!r}, pass_={pass_!r}: must be one of {sorted(FA3_FIGURES_H100)} and "
                               "'forward' or 'backward'")
    length = positive_int("length", length)
    (l1, l2), (r1, r2) = FIGURE_LENGTHS, figures[pass_]
    c = (r2 - r1) / (r1 / l1 - r2 / l2)
    r_max = r2 * (l2 + c) / l2
    return (1 + c / length) / r_max / ((1 / r1 + 1 / r2) / 2)


def _kernel_seconds(kernel: str) -> float:
    """Seconds per unit of forward work of ``kernel`` (:data:`FA3_FIGURES_H100`): the forward, and the backward's
    2.5x the forward's FLOPs -- the count behind the figures (Dao-AILab/flash-attention
    ``benchmarks/benchmark_flash_attention.py`` ``flops()``: backward 2.5x forward, since it recomputes the
    scores: five matmuls to the forward's two) --, each at its measured rate averaged over the lengths."""
    rates = FA3_FIGURES_H100[kernel]
    fwd = sum(1 / r for r in rates["forward"]) / len(rates["forward"])
    bwd = sum(1 / r for r in rates["backward"]) / len(rates["backward"])
    return fwd + 2.5 * bwd


CUDNN_OVER_FA2 = _kernel_seconds("fa2") / _kernel_seconds("cudnn")
"""How much faster cuDNN's fused attention runs a training step's attention (forward and backward) than
FlashAttention-2 on Hopper, from :data:`FA3_FIGURES_H100`: about 1.6x. Transformer Engine picks cuDNN's
FusedAttention over FlashAttention on sm90 since v1.2 (transformer_engine/pytorch/attention.py, commit 32db392,
2023-12-07: "Select FusedAttention on sm90 and FlashAttention on others for performance"), so Megatron-Core runs
it; PyTorch's ``scaled_dot_product_attention`` kept FlashAttention-2 first on H100 (cuDNN made opt-in after the
2.5 release: pytorch/pytorch#138522; nightly 2.6.0.dev20241204 measured at 329 against cuDNN's 631 TFLOP/s,
pytorch/pytorch#142132), so torchtitan runs FlashAttention-2."""

CUDNN_HOPPER = FA2_HOPPER * CUDNN_OVER_FA2
"""cuDNN's fused attention on Hopper parts: :data:`FA2_HOPPER` times :data:`CUDNN_OVER_FA2`."""

POWER_CAPPED_H100 = (835e12 + 989e12) / 2
"""Dense BF16 peak taken for the 500 W, 96 GB HBM2e H100 of Meta's Grand Teton servers, on which
torchtitan's published benchmarks ran. No datasheet exists for that part; torchtitan's benchmark notes
(``benchmarks/llama3_h100_202412_torchtitan.md`` footnote 2 @b5bcd76) say its "actual peak TFLOPs
number is between SXM and NVL" -- the 700 W SXM5's 989 and the 400 W NVL's 835 (the same 132 SMs at a
lower sustained clock; torchtitan ``tools/utils.py`` L163-171). The midpoint is an assumption."""

_A100 = "NVIDIA A100 Tensor Core GPU datasheet (2021)"
_H100 = ("NVIDIA H100 Tensor Core GPU datasheet (table as reproduced at archive-lib.hpctech.co.jp/gpuproduct/"
         "nvidia-h100.html: BF16 and FP8 given with sparsity, half without)")

def _blackwell(name: str, mib: int, bf16: float, sms: int, key: str, source: str) -> Device:
    # A Blackwell part as both presets are built: FP8 dense twice BF16 dense (NVIDIA's tables), 8 TB/s HBM3e,
    # NVLink 5 inside the node and one NDR NIC per GPU, mamf-finder's measured ceilings (MAMF[key], MAMF_FP8[key]),
    # no attention figure of its own (the FLASH_SHARE fallback) and no transposed FP8 copies.
    return Device(name, mib * MiB, bf16, intra="nvlink5", inter="ib-ndr", hbm_bandwidth=8.0e12, sms=sms,
                  gemm_efficiency=_GEMM[key], memory_efficiency=_HBM_SHARE, fp8_flops=2 * bf16,
                  fp8_efficiency=_FP8[key], fp8_transpose=False,
                  source=f"{source}; GEMM ceilings: stas00/ml-engineering mamf-finder table @68cd2e5")


DEVICES: dict[str, Device] = Catalogue("device", {
    # NVIDIA Tesla V100 SXM2 datasheet: 32 GB HBM2 at 900 GB/s, 125 TFLOPS FP16 tensor; NVLink 2 (300 GB/s);
    # 80 SMs (Volta whitepaper). nvidia-smi reports 32510MiB on "Tesla V100-SXM2" 32 GB (deepspeedai/DeepSpeed issue
    # #192, driver 396.37).
    "v100-32gb": Device("V100-32GB", 32510 * MiB, 125e12, intra="nvlink2", inter="ib-edr-4hca", hbm_bandwidth=900e9,
                        sms=80, gemm_efficiency=_GEMM["assumed"], memory_efficiency=_HBM_SHARE,
                        source="NVIDIA Tesla V100 datasheet (SXM2); DGX-1 with Tesla V100 System Architecture "
                               "whitepaper; nvidia-smi 32510 MiB: deepspeedai/DeepSpeed issue #192"),
    # NVIDIA A100 datasheet (2021): 40/80 GB HBM2/HBM2e at 1,555/2,039 GB/s (SXM), 312 TFLOPS BF16 dense; NVLink 3
    # (600 GB/s); 108 SMs (A100 whitepaper). nvidia-smi reports 40960MiB and 81920MiB (modal-labs/modal-client PR #2797).
    "a100-40gb": Device("A100-40GB", 40960 * MiB, 312e12, intra="nvlink3", inter="ib-hdr", hbm_bandwidth=1555e9,
                        sms=108, gemm_efficiency=_GEMM["a100"], memory_efficiency=_HBM_SHARE,
                        source=f"{_A100}: SXM4 40 GB HBM2, 1,555 GB/s, 312 TFLOPS BF16 dense, 400 W; DGX A100 User "
                               "Guide; nvidia-smi 40960 MiB: modal-labs/modal-client PR #2797"),
    "a100-80gb": Device("A100-80GB", 81920 * MiB, 312e12, intra="nvlink3", inter="ib-hdr", hbm_bandwidth=2039e9,
                        sms=108, gemm_efficiency=_GEMM["a100"], memory_efficiency=_HBM_SHARE,
                        source=f"{_A100}: SXM4 80 GB HBM2e, 2,039 GB/s, 312 TFLOPS BF16 dense, 400 W; DGX A100 User "
                               "Guide; nvidia-smi 81920 MiB: modal-labs/modal-client PR #2797"),
    # A100 PCIe: same GA100 die and 312 TFLOPS BF16 dense, 250 W (40 GB) / 300 W (80 GB), HBM 1,555 / 1,935 GB/s,
    # no NVLink switch (PCIe 4.0 x16 between GPUs). Memory as the SXM4 parts of the same capacity (assumption).
    "a100-pcie-40gb": Device("A100-PCIe-40GB", 40960 * MiB, 312e12, intra="pcie4", inter="ib-hdr",
                             hbm_bandwidth=1555e9, sms=108, gemm_efficiency=_GEMM["a100"],
                             memory_efficiency=_HBM_SHARE,
                             source=f"{_A100}: PCIe 40 GB HBM2, 1,555 GB/s, 312 TFLOPS BF16 dense, 250 W; "
                                    "thundercompute.com A100 specs table; memory.total as the SXM4 40 GB (assumed)"),
    "a100-pcie-80gb": Device("A100-PCIe-80GB", 81920 * MiB, 312e12, intra="pcie4", inter="ib-hdr",
                             hbm_bandwidth=1935e9, sms=108, gemm_efficiency=_GEMM["a100"],
                             memory_efficiency=_HBM_SHARE,
                             source=f"{_A100}: PCIe 80 GB HBM2e, 1,935 GB/s, 312 TFLOPS BF16 dense, 300 W; "
                                    "thundercompute.com A100 specs table; memory.total as the SXM4 80 GB (assumed)"),
    # NVIDIA H100 SXM5 datasheet: 80 GB HBM3 at 3.35 TB/s, 989 TFLOPS BF16 dense (1979 with sparsity), FP8 1,979
    # dense; NVLink 4 (900 GB/s); 132 SMs; 700 W. nvidia-smi reports 81559MiB for "NVIDIA H100 80GB HBM3".
    "h100-sxm-80gb": Device("H100-SXM-80GB", 81559 * MiB, 989e12, intra="nvlink4", inter="ib-ndr",
                            hbm_bandwidth=3.35e12, sms=132, gemm_efficiency=_GEMM["h100"],
                            memory_efficiency=_HBM_SHARE, fp8_flops=1979e12, fp8_efficiency=_FP8["h100"], attention_efficiency=FA2_HOPPER, cudnn_attention_efficiency=CUDNN_HOPPER,
                            source=f"{_H100}: SXM5 80 GB HBM3, 3.35 TB/s, 989 BF16 / 1,979 FP8 TFLOPS dense, 700 W; "
                                   "DGX H100 User Guide; nvidia-smi 81559 MiB: modal-labs/modal-client PR #2797"),
    # H100 PCIe: 114 SMs at a lower clock, 756 BF16 / 1,513 FP8 dense, 80 GB HBM2e at 2.0 TB/s, 300-350 W.
    "h100-pcie-80gb": Device("H100-PCIe-80GB", 81559 * MiB, 756e12, intra="pcie5", inter="ib-ndr",
                             hbm_bandwidth=2.0e12, sms=114, gemm_efficiency=_GEMM["h100"],
                             memory_efficiency=_HBM_SHARE, fp8_flops=1513e12, fp8_efficiency=_FP8["h100"], attention_efficiency=FA2_HOPPER, cudnn_attention_efficiency=CUDNN_HOPPER,
                             source=f"{_H100}: PCIe 80 GB HBM2e, 2.0 TB/s, 756 BF16 / 1,513 FP8 TFLOPS dense, "
                                    "300-350 W (NVIDIA product brief PB-11133-001: 350 W maximum); torchtitan "
                                    "tools/utils.py L168-169 (756e12); memory.total as the SXM5 (assumed)"),
    # H100 NVL: per GPU 94 GB HBM3 at 3.9 TB/s, 835 BF16 dense (132 SMs at a lower clock), 350-400 W; sold in
    # NVLink-bridged pairs, PCIe between pairs (PCIe 5.0 assumed for the node).
    "h100-nvl-94gb": Device("H100-NVL-94GB", 94 * 10**9, 835e12, intra="pcie5", inter="ib-ndr",
                            hbm_bandwidth=3.9e12, sms=132, gemm_efficiency=_GEMM["h100"],
                            memory_efficiency=_HBM_SHARE, fp8_flops=1670e12, fp8_efficiency=_FP8["h100"], attention_efficiency=FA2_HOPPER, cudnn_attention_efficiency=CUDNN_HOPPER,
                            source="torchtitan tools/utils.py L166-167 @b5bcd76 (835e12 BF16); 94 GB HBM3, "
                                   "3.9 TB/s, 350-400 W (third-party spec pages); FP8 taken as 2 x BF16 as on "
                                   "every Hopper part; memory.total taken as 94e9 bytes (assumed)"),
    # The 96 GB HBM2e, 500 W H100 of Meta's Grand Teton servers that torchtitan benchmarks on.
    "h100-hbm2e-96gb": Device("H100-HBM2e-96GB-500W", 95 * GiB, POWER_CAPPED_H100, intra="nvlink4", inter="ib-ndr",
                              hbm_bandwidth=2.4e12, sms=132, gemm_efficiency=_GEMM["h100"],
                              memory_efficiency=_HBM_SHARE, fp8_flops=2 * POWER_CAPPED_H100,
                              fp8_efficiency=_FP8["h100"], attention_efficiency=FA2_HOPPER, cudnn_attention_efficiency=CUDNN_HOPPER,
                              source="torchtitan benchmarks/llama3_h100_202412_torchtitan.md @b5bcd76: Grand Teton, "
                                     "8 x H100 per host, NVLink, 96 GB HBM2e at 2.4 TB/s, 500 W power limit, "
                                     "400 Gb/s RDMA per GPU; docs/performance.md @877991a: 95 GB (memory.total "
                                     "taken as 95 GiB); peak between SXM and NVL (POWER_CAPPED_H100)"),
    # H800 SXM: H100 SXM compute and memory, NVLink cut to 400 GB/s total (200 each way).
    "h800-sxm-80gb": Device("H800-SXM-80GB", 81559 * MiB, 989e12, intra="nvlink4-h800", inter="ib-ndr",
                            hbm_bandwidth=3.35e12, sms=132, gemm_efficiency=_GEMM["h100"],
                            memory_efficiency=_HBM_SHARE, fp8_flops=1979e12, fp8_efficiency=_FP8["h100"], attention_efficiency=FA2_HOPPER, cudnn_attention_efficiency=CUDNN_HOPPER,
                            source="H100 SXM5 compute, 80 GB HBM3 at 3.35 TB/s, NVLink 400 GB/s total (third-party "
                                   "comparisons: philisun.com H800 vs H100; no NVIDIA datasheet found); NCCL "
                                   "issue #1374 (H800 all-reduce 215 GB/s bus bandwidth); memory.total as the H100 "
                                   "SXM5 (assumed)"),
    # H20: 148 BF16 / 296 FP8 dense, 96 GB HBM3 at 4.0 TB/s, NVLink 900 GB/s, 400 W; 78 SMs.
    "h20-96gb": Device("H20-96GB", 97871 * MiB, 148e12, intra="nvlink4", inter="ib-ndr", hbm_bandwidth=4.0e12,
                       sms=78, gemm_efficiency=_GEMM["h100"], memory_efficiency=_HBM_SHARE, fp8_flops=296e12,
                       fp8_efficiency=_FP8["h100"], attention_efficiency=FA2_HOPPER, cudnn_attention_efficiency=CUDNN_HOPPER,
                       source="torchtitan tools/utils.py L175-183 @b5bcd76 (148e12 BF16, citing Tom's Hardware); "
                              "96 GB HBM3, 4.0 TB/s, 296 FP8, 400 W, NVLink 900 GB/s (third-party spec page "
                              "willitrunai.com); 78 SMs and memory.total 97871 MiB assumed"),
    # NVIDIA H200 SXM datasheet: 141 GB HBM3e at 4.8 TB/s, same tensor cores and SMs as H100 SXM; NVLink 4.
    # Memory: 143771 MiB is an assumption -- the memory.total seen in nvidia-smi outputs of "NVIDIA H200" posted in
    # public, none of which could be tied to a citable page.
    "h200-141gb": Device("H200-141GB", 143771 * MiB, 989e12, intra="nvlink4", inter="ib-ndr", hbm_bandwidth=4.8e12,
                         sms=132, gemm_efficiency=_GEMM["h100"], memory_efficiency=_HBM_SHARE, fp8_flops=1979e12,
                         fp8_efficiency=_FP8["h100"], attention_efficiency=FA2_HOPPER, cudnn_attention_efficiency=CUDNN_HOPPER,
                         source="NVIDIA H200 Tensor Core GPU datasheet (SXM): 141 GB HBM3e, 4.8 TB/s, 989 BF16 / "
                                "1,979 FP8 dense; DGX H200 User Guide; nvidia-smi 143771 MiB assumed (no citable "
                                "nvidia-smi output found)"),
    # Blackwell. HGX B200 (NVIDIA's HGX platform specifications, per GPU): 4.5 PFLOPS BF16 and 9 PFLOPS FP8 with
    # sparsity, so 2,250 / 4,500 TFLOPS dense; 180 GB HBM3e at 8 TB/s (DGX B200: 64 TB/s for eight); NVLink 5
    # (1.8 TB/s total). GB200 NVL72, per
    # GPU: 5 / 10 PFLOPS with sparsity (2,500 / 5,000 dense), 186 GB HBM3e at 8 TB/s, NVLink 5 across the 72-GPU
    # rack. DGX B200 and GB200 NVL72 connect nodes with ConnectX-7 NDR 400 Gb/s, one per GPU. No attention-kernel
    # figure for Blackwell is sourced here: attention runs at FLASH_SHARE of the GEMM rate (the fallback). Blackwell
    # reads FP8 columnwise natively: no transposed FP8 copies (Device.fp8_transpose).
    "b200-180gb": _blackwell("B200-180GB", 183359, 2250e12, 148, "b200",
                             "NVIDIA HGX B200 specifications (per GPU: 180 GB HBM3e, 4.5 PFLOPS BF16 / 9 PFLOPS FP8 "
                             "sparse, i.e. 2,250 / 4,500 dense, NVLink 5 1.8 TB/s); HBM 8 TB/s as the DGX B200 "
                             "datasheet's 64 TB/s for eight (HGX's table prints 7.7); 148 SMs and nvidia-smi "
                             "memory.total 183359 MiB (third-party B200 reports)"),
    "gb200-186gb": _blackwell("GB200-186GB", 189471, 2500e12, 152, "gb200",
                              "NVIDIA GB200 NVL72 specifications (per GPU: 186 GB HBM3e, 8 TB/s, 5 PFLOPS BF16 / "
                              "10 PFLOPS FP8 sparse, i.e. 2,500 / 5,000 dense, NVLink 5 1.8 TB/s, 72 GPUs in one "
                              "NVLink domain); 152 SMs and nvidia-smi memory.total 189471 MiB (third-party GB200 "
                              "reports)"),
    # NVIDIA Ada Lovelace whitepaper, GeForce RTX 4090: 24 GB GDDR6X at 1,008 GB/s, 165.2 TFLOPS BF16 (FP32
    # accumulate), 128 SMs. nvidia-smi reports 24564MiB (e.g. RLinf/RLinf issue #255).
    "rtx4090-24gb": Device("RTX4090-24GB", 24564 * MiB, 165.2e12, intra="pcie4", inter="eth-25g",
                           hbm_bandwidth=1008e9, sms=128, gemm_efficiency=_GEMM["assumed"],
                           memory_efficiency=_HBM_SHARE,
                           source="NVIDIA Ada Lovelace GPU architecture whitepaper (GeForce RTX 4090); no NVLink, "
                                  "PCIe 4.0 x16; nvidia-smi 24564 MiB: RLinf/RLinf issue #255, vllm-project/vllm "
                                  "issue #7553"),
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
    "nvlink2": Link("NVLink2", 150e9, 3e-6, efficiency=_NVLINK3,
                    source="NVIDIA V100 datasheet: NVLink 300 GB/s total, 150 GB/s each way"),
    # NVLink 3 (A100 SXM): 600 GB/s total = 300 GB/s each way.
    "nvlink3": Link("NVLink3", 300e9, 3e-6, efficiency=_NVLINK3,
                    source="NVIDIA A100 datasheet: NVLink 600 GB/s total, 300 GB/s each way"),
    # NVLink 4 (H100 SXM): 900 GB/s total = 450 GB/s each way. A ring reaches about 80% (an assumption:
    # nccl-tests #290's 476 GB/s all-reduce uses NVLink SHARP, in-switch reduction, not a ring).
    "nvlink4": Link("NVLink4", 450e9, 3e-6, efficiency=0.8,
                    source="NVIDIA H100 datasheet: NVLink 900 GB/s total, 450 GB/s each way"),
    # NVLink 5 (B200, GB200): 1.8 TB/s total = 900 GB/s each way; achieved share assumed as NVLink 4's.
    "nvlink5": Link("NVLink5", 900e9, 3e-6, efficiency=0.8,
                    source="NVIDIA HGX B200 / GB200 NVL72 specifications: NVLink 5, 1.8 TB/s total, 900 GB/s each way"),
    # H800: NVLink 4 with 8 of H100's 18 links, 400 GB/s total = 200 GB/s each way; achieved share as NVLink 4's.
    "nvlink4-h800": Link("NVLink4 (H800)", 200e9, 3e-6, efficiency=0.8,
                         source="H800: 8 NVLink 4 links, 400 GB/s total, 200 GB/s each way (third-party comparisons; NCCL issue #1374)"),
    # PCIe 4.0 / 5.0 x16: 32 / 64 GB/s each way (nominal); about 80% after TLP headers (assumed).
    "pcie4": Link("PCIe4 x16", 32e9, 5e-6, efficiency=0.8,
                  source="PCI-SIG PCIe 4.0: 16 GT/s x16, about 32 GB/s each way"),
    "pcie5": Link("PCIe5 x16", 64e9, 5e-6, efficiency=0.8,
                  source="PCI-SIG PCIe 5.0: 32 GT/s x16, about 64 GB/s each way"),
    # InfiniBand with one HCA per GPU, per="gpu" (DGX-1: EDR 100 Gb/s; DGX A100 user guide: eight
    # single-port ConnectX-6 HDR 200 Gb/s adapters for the compute fabric; DGX H100 user guide: eight
    # ConnectX-7 NDR 400 Gb/s). EDR's achieved share assumed as HDR's.
    "ib-edr": Link("InfiniBand EDR 100Gb/s", 12.5e9, 5e-6, efficiency=_IB_HDR,
                   source="InfiniBand EDR 100 Gb/s per port, one port per GPU assumed"),
    "ib-hdr": Link("InfiniBand HDR 200Gb/s", 25e9, 5e-6, efficiency=_IB_HDR,
                   source="InfiniBand HDR 200 Gb/s per port, one HCA per GPU as in DGX A100 (eight ConnectX-6 per node)"),
    "ib-ndr": Link("InfiniBand NDR 400Gb/s", 50e9, 5e-6, efficiency=_IB_NDR,
                   source="InfiniBand NDR 400 Gb/s per port, one HCA per GPU as in DGX H100 (eight ConnectX-7 per node)"),
    # Nodes with four HCAs for eight GPUs (shared, two GPUs per HCA): DGX-1 (four EDR 100 Gb/s ports;
    # DGX-1 with Tesla V100 System Architecture whitepaper) and the 4 x HDR A100 servers of
    # nccl-tests #119 / NVIDIA/nccl #1048.
    "ib-edr-4hca": Link("InfiniBand EDR 100Gb/s x4 per node", 12.5e9, 5e-6, per="node", nics=4, efficiency=_IB_HDR,
                        source="InfiniBand EDR 100 Gb/s, four ports per 8-GPU node as in DGX-1 (System Architecture whitepaper)"),
    "ib-hdr-4hca": Link("InfiniBand HDR 200Gb/s x4 per node", 25e9, 5e-6, per="node", nics=4, efficiency=_IB_HDR,
                        source="InfiniBand HDR 200 Gb/s, four HCAs per 8-GPU node (NVIDIA/nccl-tests issue #119, NVIDIA/nccl #1048)"),
    # Commodity Ethernet: NICs that all GPUs of a node share, per="node"; one NIC per node unless
    # stated (an assumption for a generic server: pass dataclasses.replace(link, nics=2) for two).
    "eth-25g": Link("Ethernet 25GbE", 25e9 / 8, 30e-6, per="node", nics=1, efficiency=_ROCE,
                    source="IEEE 802.3by 25 GbE, one NIC per node shared by its GPUs assumed"),
    "eth-100g": Link("Ethernet 100GbE", 100e9 / 8, 20e-6, per="node", nics=1, efficiency=_ROCE,
                     source="IEEE 802.3 100 GbE, one NIC per node shared by its GPUs assumed"),
})


