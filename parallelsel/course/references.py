"""Published figures the library is checked against: value, unit and source, as data.

The model-validation page prints these beside the library's own numbers, and the tests assert
them, so both read one table. Every value is the paper's own printed number (with the paper's
rounding, kept in ``digits``), or a formula the paper prints, evaluated for the paper's shape.
Nothing here is computed by the library.

Examples:
    >>> ZERO_FIGURE1[1].value, ZERO_FIGURE1[1].unit
    (31.4, 'GB')
    >>> KORTHIKANTI_TABLE2[0].per_sbh(a=96, s=2048, h=12288, t=8)
    114.0
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

__all__ = [
    "Reference",
    "ActivationRow",
    "ZERO_FIGURE1",
    "ZERO_FIGURE1_SETUP",
    "KORTHIKANTI_GPT3",
    "KORTHIKANTI_TABLE2",
    "KORTHIKANTI_SELECTIVE_SAVING",
    "KORTHIKANTI_MTNLG",
    "MTNLG_RUNS",
    "NARAYANAN_TABLE1",
    "NARAYANAN_GPT",
    "NARAYANAN_EQ4",
    "MODEL_PARAMS",
    "MIXTRAL_ACTIVE",
]


@dataclass(frozen=True)
class Reference:
    """One published number: ``value`` in ``unit``, printed with ``digits`` decimals, from ``source``.

    ``key`` says what it is in this library's terms (a ZeRO stage, a model preset, a shape);
    ``label`` is the paper's own name for it.
    """

    key: object
    label: str
    value: float
    unit: str
    source: str
    digits: int = 1


# -- ZeRO (Rajbhandari et al. 2020), Figure 1 --------------------------------------------------
ZERO_FIGURE1_SETUP = {"params": 7.5e9, "dp": 64, "K": 12}
"""Figure 1's setting: Ψ = 7.5B parameters, N_d = 64 data-parallel ranks, K = 12 (mixed-precision Adam)."""

_ZERO = "Rajbhandari et al. 2020 (ZeRO), Figure 1"
ZERO_FIGURE1 = (
    Reference(0, "Baseline", 120, "GB", _ZERO, 0),
    Reference(1, "P_os", 31.4, "GB", _ZERO),
    Reference(2, "P_os+g", 16.6, "GB", _ZERO),
    Reference(3, "P_os+g+p", 1.9, "GB", _ZERO),
)
"""Model-state memory per device (GB = 1e9 bytes) by ZeRO stage (``key``)."""


# -- Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models" ---
KORTHIKANTI_GPT3 = {"a": 96, "s": 2048, "h": 12288, "t": 8}
"""GPT-3 175B's heads, sequence and hidden size, with the paper's tensor-parallel size t = 8."""

KORTHIKANTI_MTNLG = {"layers": 105, "hidden": 20480, "heads": 128, "seq_len": 2048, "vocab": 51200}
"""MT-NLG 530B's shape (the paper's Table 3)."""


@dataclass(frozen=True)
class ActivationRow:
    """A row of Table 2: activation bytes per layer = sbh x ``per_sbh(a, s, h, t)``."""

    label: str
    tp: bool
    sp: bool
    recompute: str
    formula: str
    per_sbh: Callable[..., float]
    source: str = "Korthikanti et al. 2022, Table 2"


KORTHIKANTI_TABLE2 = (
    ActivationRow("no parallelism", False, False, "none", "sbh(34 + 5as/h)",
                  lambda a, s, h, t: 34 + 5 * a * s / h),
    ActivationRow("tensor parallel (baseline)", True, False, "none", "sbh(10 + 24/t + 5as/(ht))",
                  lambda a, s, h, t: 10 + 24 / t + 5 * a * s / (h * t)),
    ActivationRow("tensor + sequence parallel", True, True, "none", "sbh(34/t + 5as/(ht))",
                  lambda a, s, h, t: 34 / t + 5 * a * s / (h * t)),
    ActivationRow("tensor parallel + selective recompute", True, False, "selective", "sbh(10 + 24/t)",
                  lambda a, s, h, t: 10 + 24 / t),
    ActivationRow("tensor + sequence parallel + selective recompute", True, True, "selective", "sbh(34/t)",
                  lambda a, s, h, t: 34 / t),
    ActivationRow("full activation recompute", False, False, "full", "sbh(2)",
                  lambda a, s, h, t: 2.0),
)
"""Table 2: activation memory per transformer layer under each technique (16-bit activations)."""

KORTHIKANTI_SELECTIVE_SAVING = (
    Reference("gpt3-175b", "GPT-3: activations saved by selective recompute", 70, "%", "Korthikanti et al. 2022, §5", 0),
    Reference("mt-nlg-530b", "MT-NLG: activations saved by selective recompute", 65, "%", "Korthikanti et al. 2022, §5", 0),
    Reference("gpt3-175b", "TP+SP+selective recompute vs TP only", 5, "x", "Korthikanti et al. 2022, abstract", 0),
)
"""§5: share of activation memory (TP + SP) that selective recomputation removes; abstract: the 5x reduction."""


# -- Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters" -----
NARAYANAN_GPT = {"vocab": 51200, "seq_len": 2048}
"""§5.1: every model in Table 1 uses a 51,200-token vocabulary and sequence length 2048."""

_NAR = "Narayanan et al. 2021, Table 1"
NARAYANAN_TABLE1 = tuple(
    Reference({"heads": a, "hidden": h, "layers": l}, f"{b}B (l={l}, h={h}, a={a})", b, "B params", _NAR)
    for b, a, h, l in (
        (1.7, 24, 2304, 24),
        (3.6, 32, 3072, 30),
        (7.5, 32, 4096, 36),
        (18.4, 48, 6144, 40),
        (39.1, 64, 8192, 48),
        (76.1, 80, 10240, 60),
        (145.6, 96, 12288, 80),
        (310.1, 128, 16384, 96),
        (529.6, 128, 20480, 105),
        (1008.0, 160, 25600, 128),
    )
)
"""Table 1: parameter count (billions) of each GPT shape (heads, hidden size, layers)."""

NARAYANAN_EQ4 = Reference(
    {"model": "gpt3-175b", "tokens": 300e9, "gpus": 1024, "flops_per_gpu": 140e12},
    "GPT-3 175B, 300B tokens, 1024 A100s at 140 TFLOP/s", 34, "days", "Narayanan et al. 2021, §5.1 (eq. 4)", 0,
)
"""§5.1: end-to-end training time from eq. 4, 8TP/(nX), "about 34 days"."""


# -- parameter counts the model papers give for the presets -----------------------------------
MODEL_PARAMS = (
    Reference("gpt2-1.5b", "GPT-2 (largest)", 1542, "M params", "Radford et al. 2019, Table 2", 0),
    Reference("gpt3-175b", "GPT-3 175B", 175.0, "B params", "Brown et al. 2020, Table 2.1"),
    Reference("llama2-7b", "Llama 2 7B", 7, "B params", "Touvron et al. 2023 (Llama 2), Table 1", 0),
    Reference("llama2-13b", "Llama 2 13B", 13, "B params", "Touvron et al. 2023 (Llama 2), Table 1", 0),
    Reference("llama2-70b", "Llama 2 70B", 70, "B params", "Touvron et al. 2023 (Llama 2), Table 1", 0),
    Reference("llama3-8b", "Llama 3 8B", 8, "B params", "Dubey et al. 2024 (Llama 3), Table 3", 0),
    Reference("llama3-70b", "Llama 3 70B", 70, "B params", "Dubey et al. 2024 (Llama 3), Table 3", 0),
    Reference("llama3-405b", "Llama 3 405B", 405, "B params", "Dubey et al. 2024 (Llama 3), Table 3", 0),
    Reference("mixtral-8x7b", "Mixtral 8x7B (total)", 47, "B params", "Jiang et al. 2024 (Mixtral), abstract", 0),
)
"""The parameter counts the papers print for each preset (``key`` is the preset), at the papers' rounding."""

MIXTRAL_ACTIVE = Reference("mixtral-8x7b", "Mixtral 8x7B (active per token)", 13, "B params",
                           "Jiang et al. 2024 (Mixtral), abstract", 0)
"""Mixtral: "each token has access to 47B parameters, but only uses 13B active parameters"."""


# -- measured step time: the runs the kernel model is checked against ------------------------------
@dataclass(frozen=True)
class MeasuredRun:
    """One published, measured training run on A100-80GB (Selene: DGX A100 nodes of 8 GPUs, NVLink 3, eight
    HDR InfiniBand HCAs per node), with the plan the paper describes for it.

    ``label``: the paper's name; ``shape``: (layers, hidden, heads), vocabulary 51,200 and sequence 2048
    (Narayanan et al. 2021 §5.1; Korthikanti et al. 2022 §6, Table 3); ``gpus``, ``tp``, ``pp``,
    ``global_batch``, ``micro_batch``, ``chunks`` (interleaved model chunks per GPU, 1 = plain 1F1B);
    ``recompute`` and ``sp`` in this library's terms; ``zero``: 3 for DeepSpeed ZeRO-3, 1 for the optimizer
    state sharded over DP; ``metric``:
    "tflops" (achieved teraFLOP/s per GPU, counted as eq. 3 counts them) or "seconds" (iteration time);
    ``value`` the paper's number; ``source`` where the number and where the plan come from; ``stack``:
    the implementation whose timing rules apply ("" for Megatron-LM, "deepspeed-2021" for the ZeRO-3
    runs: :mod:`parallelsel.course.zero3_timeline`, "deepspeed" for DeepSpeed's pipeline engine); ``mfu``: the model FLOPs utilisation the paper prints for the
    run, where it prints one (None otherwise).
    """

    label: str
    shape: tuple[int, int, int]
    gpus: int
    tp: int
    pp: int
    global_batch: int
    micro_batch: int
    chunks: int
    recompute: str
    sp: bool
    metric: str
    value: float
    source: str
    zero: int = 0
    stack: str = ""
    mfu: float | None = None


_T1 = ("Narayanan et al. 2021, Table 1 (achieved teraFLOP/s per GPU); plan: NVIDIA/Megatron-LM "
       "examples/sc21/run_table_1.sh (micro-batch, --num-layers-per-virtual-pipeline-stage, --checkpoint-activations)")
_T5 = ("Korthikanti et al. 2022, Table 5 (iteration time, sequence parallelism + selective recompute); plan: "
       "Table 3 (TP, PP, GPUs, batch; data-parallel size 1), micro-batch and interleaving as in "
       "calculon-ai/calculon validation/*_seqsel.json")
NARAYANAN_THROUGHPUT = tuple(
    MeasuredRun(f"{b}B", (l, h, a), g, tp, pp, gb, mb, v, "full", False, "tflops", x, _T1)
    for b, a, h, l, tp, pp, g, gb, x, mb, v in (
        (1.7, 24, 2304, 24, 1, 1, 32, 512, 137, 16, 1),
        (3.6, 32, 3072, 30, 2, 1, 64, 512, 138, 16, 1),
        (7.5, 32, 4096, 36, 4, 1, 128, 512, 142, 16, 1),
        (18.4, 48, 6144, 40, 8, 1, 256, 1024, 135, 8, 1),
        (39.1, 64, 8192, 48, 8, 2, 512, 1536, 138, 4, 1),
        (76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140, 2, 3),     # 15 layers per stage, 5 per virtual stage
        (145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148, 2, 2),    # 10 per stage, 5 per virtual stage
        (310.1, 128, 16384, 96, 8, 16, 1920, 2160, 155, 1, 2),  # 6 per stage, 3 per virtual stage
        (529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163, 1, 3),  # 3 per stage, 1 per virtual stage
        (1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 163, 1, 1),
    )
)
"""Narayanan et al. 2021 Table 1: ten GPT models on 32 to 3,072 A100s; every run recomputes activations
(``--checkpoint-activations``) and uses fp16."""

KORTHIKANTI_TABLE5 = tuple(
    MeasuredRun(name, (l, h, a), g, 8, pp, gb, mb, v, "selective", True, "seconds", t, _T5, mfu=mfu)
    for name, a, h, l, pp, g, gb, mb, v, t, mfu in (
        ("22B", 64, 6144, 48, 1, 8, 4, 4, 1, 1.10, 0.415),
        ("175B", 96, 12288, 96, 8, 64, 64, 1, 3, 13.75, 0.514),
        ("530B", 128, 20480, 105, 35, 280, 280, 1, 3, 37.83, 0.560),
        ("1T", 160, 25600, 128, 64, 512, 512, 1, 1, 71.49, 0.563),
    )
)
"""Korthikanti et al. 2022 Table 5, "present work" column: iteration time with sequence parallelism and
selective activation recomputation, and the model FLOPs utilisation the table prints beside it (``mfu``;
the Megatron-LM README of June 2022 repeats them)."""

_T2 = "Narayanan et al. 2021, §5.2 and Table 2 (ZeRO-3 vs PTD-P, GPT-3 175B batch 1536, 530B batch 2240)"
NARAYANAN_ZERO3 = tuple(
    MeasuredRun(f"{kind} {name} {g}", shape, g, tp, pp, gb, mb, 1, "full", False, "tflops", x, _T2, zero,
                "deepspeed-2021" if zero else "")
    for kind, name, shape, g, tp, pp, gb, mb, x, zero in (
        ("ZeRO-3", "175B", (96, 12288, 96), 384, 1, 1, 1536, 4, 144, 3),
        ("ZeRO-3", "175B", (96, 12288, 96), 768, 1, 1, 1536, 2, 88, 3),
        ("ZeRO-3", "175B", (96, 12288, 96), 1536, 1, 1, 1536, 1, 44, 3),
        ("PTD-P", "175B", (96, 12288, 96), 384, 8, 12, 1536, 1, 153, 0),
        ("PTD-P", "175B", (96, 12288, 96), 768, 8, 12, 1536, 1, 149, 0),
        ("PTD-P", "175B", (96, 12288, 96), 1536, 8, 12, 1536, 1, 141, 0),
        ("ZeRO-3", "530B", (105, 20480, 128), 640, 1, 1, 2560, 4, 138, 3),   # did not fit 560 GPUs at micro-batch 4
        ("ZeRO-3", "530B", (105, 20480, 128), 1120, 1, 1, 2240, 2, 98, 3),
        ("ZeRO-3", "530B", (105, 20480, 128), 2240, 1, 1, 2240, 1, 48, 3),
        ("PTD-P", "530B", (105, 20480, 128), 560, 8, 35, 2240, 1, 171, 0),
        ("PTD-P", "530B", (105, 20480, 128), 1120, 8, 35, 2240, 1, 167, 0),
        ("PTD-P", "530B", (105, 20480, 128), 2240, 8, 35, 2240, 1, 159, 0),
    )
)
"""Narayanan et al. 2021 §5.2, Table 2: DeepSpeed ZeRO-3 without model parallelism (model-parallel size 1)
against PTD-P (model-parallel size 96 = TP 8 x PP 12 for 175B, 280 = TP 8 x PP 35 for 530B), achieved
teraFLOP/s per GPU; the global batch stays fixed as the GPUs double, so the ZeRO-3 micro-batch halves.
The published ranking is PTD-P ahead at every size ("PTD-P results in 6% and 24% higher throughput"
with the fewest GPUs, 70% more after doubling them). The ZeRO-3 530B row on 640 GPUs used batch 2560."""


_MTNLG = ("Smith et al. 2022 (Using DeepSpeed and Megatron to Train Megatron-Turing NLG 530B, arXiv:2201.11990) "
          "§2.3-2.4: 105 layers, hidden 20480, 128 heads, sequence 2048, global batch 1920; 8-way TP inside a "
          "node, 35-way PP across nodes, ZeRO-powered data parallelism, DeepSpeed's 1F1B pipeline engine, mixed "
          "precision, on Selene (DGX A100 80GB); iteration time 60.1, 50.2 and 44.4 s on 280, 350 and 420 nodes. "
          "Assumed, as the paper names none of them: micro-batch 1, full recomputation, ZeRO-1 (DeepSpeed's pipeline "
          "engine accepts ZeRO-0/1 only)")
MTNLG_RUNS = tuple(
    MeasuredRun(f"MT-NLG 530B {g}", (105, 20480, 128), g, 8, 35, 1920, 1, 1, "full", False, "seconds", t, _MTNLG, 1,
                "deepspeed")
    for g, t in ((2240, 60.1), (2800, 50.2), (3360, 44.4))
)
"""MT-NLG 530B's training throughput at three sizes: DeepSpeed's pipeline engine with Megatron's tensor parallelism
on the machine, model and TP x PP of :data:`NARAYANAN_ZERO3`'s PTD-P 530B rows (Megatron-LM's own engine)."""


# -- measured MFU of large dense training runs -------------------------------------------------
@dataclass(frozen=True)
class MeasuredMFU:
    """A published model FLOPs utilisation of a large dense training run, as the paper prints it."""

    label: str
    mfu: float
    gpus: int
    device: str
    source: str


PUBLISHED_MFU = (
    *(MeasuredMFU(f"{r.label}, Megatron-LM, SP + selective recompute", r.mfu, r.gpus, "A100-80GB",
                  "Korthikanti et al. 2022, Table 5") for r in KORTHIKANTI_TABLE5),
    MeasuredMFU("PaLM 540B", 0.462, 6144, "TPU v4", "Chowdhery et al. 2022, Table 3"),
    MeasuredMFU("Llama 3 405B, 8K context", 0.43, 8192, "H100-SXM-80GB", "Dubey et al. 2024, Table 4"),
    MeasuredMFU("Llama 3 405B, 8K context", 0.41, 16384, "H100-SXM-80GB", "Dubey et al. 2024, Table 4"),
    MeasuredMFU("Llama 3 405B, 131K context (CP 16)", 0.38, 16384, "H100-SXM-80GB", "Dubey et al. 2024, Table 4"),
)
"""MFU that large, well-tuned dense runs reached: the band a throughput quote can be judged against."""

__all__ += ["MeasuredMFU", "PUBLISHED_MFU"]


@dataclass(frozen=True)
class PretrainingRun:
    """A whole pretraining run as its paper reports it: ``tokens`` trained on and ``gpu_hours`` spent on
    ``device`` for the model preset ``key``. An average over the run -- failures, restarts and
    evaluation included -- with the plan and the GPU count not given."""

    key: str
    tokens: float
    gpu_hours: float
    device: str
    source: str


LLAMA2_70B_PRETRAINING = PretrainingRun("llama2-70b", 2.0e12, 1_720_320, "A100-80GB",
                                        "Touvron et al. 2023 (Llama 2), Table 1 (2.0T tokens) and Table 2 (GPU hours)")
"""Llama 2 70B: 2.0T pretraining tokens (Table 1), 1,720,320 A100-80GB GPU hours (Table 2, "total GPU time
required for training each model")."""

__all__ += ["PretrainingRun", "LLAMA2_70B_PRETRAINING"]

__all__ += ["MeasuredRun", "NARAYANAN_THROUGHPUT", "KORTHIKANTI_TABLE5", "NARAYANAN_ZERO3", "MEASURED_RUNS"]
MEASURED_RUNS = NARAYANAN_THROUGHPUT + KORTHIKANTI_TABLE5
"""The 14 runs the step-time model is validated on (tests/test_step_time.py, docs/validation.md)."""


# -- published nccl-tests bus bandwidths: the collective model's reference -------------------------
@dataclass(frozen=True)
class NcclFigure:
    """One published all_reduce_perf bus bandwidth for large messages over two or more nodes of 8 GPUs.

    ``hcas``: network ports per node; ``device`` and ``inter``: keys of ``ps.DEVICES`` / ``ps.LINKS``
    for the node (``inter`` None: ``hcas`` ports of ``port`` shared by the node's GPUs); ``busbw``:
    bytes/s as published; ``source``: the issue and the words the figure is quoted from.
    """

    label: str
    hcas: int
    device: str
    inter: str | None
    port: str
    busbw: float
    source: str


NCCL_BUSBW = (
    NcclFigure("A100 · 1 × HDR", 1, "a100-80gb", None, "ib-hdr", 24e9,
               "NVIDIA/nccl #1048: two 8-A100 nodes on one HDR NIC (NCCL_IB_HCA=mlx5_0) reached "
               "'the theoretical value (24GB/s)'"),
    NcclFigure("V100 · 1 × EDR", 1, "v100-32gb", None, "ib-edr", 12.2e9,
               "NVIDIA/nccl-tests #29, sjeaugey: '12.2 GB/s (for a 100Gbps card) is as good as you can get'"),
    NcclFigure("A100 · 4 × HDR", 4, "a100-80gb", "ib-hdr-4hca", "ib-hdr", 86e9,
               "NVIDIA/nccl #1048: 86 GB/s on four HDR NICs; NVIDIA/nccl-tests #119: 85-96 GB/s with 4 HDR HCAs per 8 A100"),
    NcclFigure("DGX-1 · 4 × EDR", 4, "v100-32gb", "ib-edr-4hca", "ib-edr", 48e9,
               "NVIDIA/nccl-tests #29, sjeaugey: 'DGX-1 can get 48 GB/s because we have 4 IB adapters'"),
    NcclFigure("DGX A100 · 8 × HDR", 8, "a100-80gb", "ib-hdr", "ib-hdr", 192e9,
               "NVIDIA/nccl #812, AddyLaddy (NVIDIA): 'we measure 192GB/s AllReduce BusBW'"),
    NcclFigure("DGX H100 · 8 × NDR", 8, "h100-sxm-80gb", "ib-ndr", "ib-ndr", 370e9,
               "NVIDIA/nccl-tests #309 (NVIDIA's DGX H100 figure, 'nearly 370 GB/s in a single node, and 380GB/s in a "
               "multi-host'); NVIDIA/nccl-tests #212, sjeaugey: NVLink 4 'effective ... 370GB/s' with NCCL_ALGO=RING"),
)
"""Published nccl-tests all-reduce bus bandwidths across nodes with 1, 4 and 8 HCAs per node, each with its
source (NVIDIA maintainers' answers, or measurements they confirmed); the validation page sets the
collective model of :mod:`parallelsel.core.placement` beside them."""

__all__ += ["NCCL_BUSBW", "NcclFigure"]
