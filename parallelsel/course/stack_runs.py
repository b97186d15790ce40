"""Measured runs of each training stack, from the stacks' own published benchmarks, with the plan each states.

The 14 Megatron-LM runs of :data:`parallelsel.course.references.MEASURED_RUNS` (A100, 2021-2022) are joined by:

* Megatron-LM's README H100 weak-scaling table (``README.md`` § Performance Benchmarking, the image
  ``images/model_table.png`` last changed in commit f2e5db4, 2024-07-15; NVIDIA/Megatron-LM @d98e8a6):
  per-GPU teraFLOP/s of GPT models from 1.7B to 462B on 48 to 6,144 H100s, vocabulary 131,072, sequence
  4,096, with ``--overlap-grad-reduce --overlap-param-gather --tp-comm-overlap`` (the README's words).
  The table gives TP, PP, DP and the global batch; what it does not give is named in :data:`MEGATRON_ASSUMED`.
* Megatron-Bridge's performance summary (NeMo containers 25.11 and 26.02): Llama 3 8B / 70B and Llama 3.1 405B
  on 8 to 1,024 H100s in FP8, tokens per second per GPU (:data:`MEGATRON_BRIDGE_H100`), and the same release's
  Blackwell rows: Llama 3 8B on 8 B200s and on 8 GB200s, Llama 3.1 405B on 128 B200s and (NeMo 26.06) on 256 GB200s
  (:data:`MEGATRON_BRIDGE_BLACKWELL`).
* NeMo's performance summary (NeMo 24.07): GPT-3 5B, 20B and 175B and Llama 2/3 7B-70B in FP8 on 8 to 512 H100s, tokens
  per second per GPU (:data:`NEMO_SUMMARY_H100`), and the same table's Nemotron-8B, 22B and Nemotron-4 340B
  (:data:`NEMOTRON_H100`).
* NeMo's long-sequence table (NeMo 24.03.01): Llama 2 7B in FP8 on 4 to 1,024 H100s, 4k to 1M tokens a sequence
  with context parallelism up to 32, teraFLOP/s per GPU as NeMo counts them (:data:`NEMO_LONG_H100`).
* torchtitan's benchmarks (pytorch/torchtitan @b5bcd76): ``benchmarks/llama3_h100_202412_torchtitan.md``
  (Llama 3.1 8B/70B/405B on the 500 W, 96 GB HBM2e H100 of Grand Teton, eager / compiled / Float8, tokens
  per second per GPU and peak memory), ``benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md`` (vanilla-TP
  column), ``benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md`` (H200), and ``docs/performance.md``
  at 877991a (Llama 2/3 on 64 A100 80GB, eager; Llama 3.1 405B on 128 H100).

Each row is data: the numbers as the source prints them, nothing computed by the library.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..core.model import MODELS, Transformer

__all__ = ["DGXC_ASSUMED", "DGXC_H100", "MEGATRON_ASSUMED", "MEGATRON_BRIDGE_BLACKWELL", "MEGATRON_BRIDGE_H100",
           "MEGATRON_BRIDGE_MOE_H100", "MEGATRON_H100", "QWEN3_235B", "QWEN3_30B", "QWEN3_30B_RELEASES", "QWEN3_30B_RELEASES_SOURCE", "NEMO_LONG_ASSUMED", "NEMO_LONG_H100",
           "NEMO_SUMMARY_ASSUMED", "NEMO_SUMMARY_H100", "NEMOTRON", "NEMOTRON_ASSUMED", "NEMOTRON_H100",
           "REFUSED", "STACK_RUNS",
           "StackRun", "TORCHTITAN_RUNS", "megatron_flops", "named_params", "source_flops", "stack_model"]


@dataclass(frozen=True)
class StackRun:
    """One published, measured run of a stack with its plan.

    ``model``: a :data:`parallelsel.MODELS` key, a :class:`parallelsel.Transformer` (a shape no preset has),
    or ``(layers, hidden, heads)`` of a GPT shape (with
    ``vocab`` and ``tied_embeddings``: whether its input embedding and output layer share one matrix);
    ``device``: a :data:`parallelsel.DEVICES` key (the part the source names); ``gpus``; ``plan``: the
    :class:`parallelsel.Plan` fields the source states; ``global_batch`` (sequences) and ``seq_len``;
    ``recipe``: a :data:`parallelsel.RECIPES` key, None for the stack's own bf16 recipe; ``compile`` (as
    :class:`parallelsel.Workload` takes it: ``"model"`` where the source's torchtitan left the loss eager);
    ``attention``: the kernel, as :class:`parallelsel.Workload` takes it (``"fa2"`` where the source's launch script
    sets ``NVTE_FUSED_ATTN=0``); ``nvlink_domain``: the GPUs one NVLink domain of the job joins, the cluster's node
    (None: an eight-GPU server, or all the GPUs of a smaller run); ``metric``: ``"tokens"`` (tokens per second per GPU) or ``"tflops"`` (teraFLOP/s per GPU counted as the
    source counts them, :func:`source_flops`: ``flops`` ``"megatron-gpt"`` or ``"nemo-llama"``); ``value``; ``memory_gib``: the peak memory the source prints (GiB), None if
    it prints none; ``source``: file and table.
    """

    label: str
    stack: str
    model: object
    device: str
    gpus: int
    plan: dict
    global_batch: int
    seq_len: int
    metric: str
    value: float
    source: str
    recipe: str | None = None
    compile: bool | str = False
    memory_gib: float | None = None
    vocab: int | None = None
    tied_embeddings: bool = True
    notes: tuple[str, ...] = field(default=())
    flops: str = "megatron-gpt"
    attention: str = "flash"
    nvlink_domain: int | None = None


MEGATRON_ASSUMED = ("micro-batch 1", "no recomputation", "sequence parallelism with TP (--tp-comm-overlap requires it)",
                    "distributed optimizer (ZeRO-1)", "1F1B without virtual stages where PP > 1 (the README names none; "
                    "three of its five PP rows have layers that 4 chunks per stage do not divide, and this reading was "
                    "chosen after 4-chunk interleaving, possible for the other two, put those two well above the "
                    "rest)", "GPT shape: 4h GeLU MLP (Megatron-Core's ffn_hidden_size default, "
                    "transformer_config.py L1453), bf16 (MFU column = TFLOP/s / 989.4)")
"""What the README table does not state, and what the rows assume for it."""

_MLM = ("NVIDIA/Megatron-LM README.md § Performance Benchmarking (images/model_table.png, commit f2e5db4, 2024-07-15): "
        "per-GPU TFLOP/s, vocabulary 131072, sequence 4096, --overlap-grad-reduce --overlap-param-gather --tp-comm-overlap; "
        "input embedding and output layer untied (--untie-embeddings-and-output-weights): the sizes the table names "
        "are the untied parameter counts, which the tied ones fall short of")


def _mlm(name, heads, hidden, layers, tp, pp, gpus, batch, tflops):
    plan = dict(dp=gpus // (tp * pp), tp=tp, pp=pp, zero=1, micro_batch=1, sp=tp > 1, tp_overlap=tp > 1,
                schedule="1f1b", chunks=1)
    return StackRun(f"Megatron-Core GPT {name} ({gpus} H100)", "megatron-core", (layers, hidden, heads), "h100-sxm-80gb",
                    gpus, plan, batch, 4096, "tflops", tflops, _MLM, vocab=131072, tied_embeddings=False,
                    notes=MEGATRON_ASSUMED)


MEGATRON_H100 = (
    _mlm("1.7B", 16, 2048, 24, 1, 1, 48, 192, 408.8),
    _mlm("7.1B", 32, 4096, 30, 2, 1, 96, 192, 465.9),
    _mlm("16B", 48, 6144, 32, 4, 1, 192, 192, 489.1),
    _mlm("32B", 56, 7168, 48, 8, 1, 384, 192, 459.6),
    _mlm("70B", 64, 8192, 84, 8, 2, 768, 384, 419.7),
    _mlm("119B", 80, 10240, 92, 8, 4, 1536, 768, 420.5),
    _mlm("177B", 96, 12288, 96, 8, 6, 2304, 1152, 432.8),
    _mlm("314B", 128, 16384, 96, 8, 8, 3072, 1536, 474.4),
    _mlm("462B", 144, 18432, 112, 8, 16, 6144, 3072, 459.9),
)
"""Megatron-LM README's H100 weak-scaling table (the nine rows, as transcribed from the image)."""

_TT_H100 = ("pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md @b5bcd76 (= docs/performance.md @d4c86e3), "
            "Table {t}: TPS/GPU at iteration 90, memory = max over GPUs; H100 96 GB HBM2e, 500 W; sequence 8192")
_TT_ASYNC = ("pytorch/torchtitan benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md @b5bcd76, vanilla TP column "
             "(tokens/s per GPU); same Grand Teton H100s; sequence 8192 (config default)")
_TT_H200 = ("pytorch/torchtitan benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md @b5bcd76: FSDP, local batch 2, "
            "compile, float8 with enable_fsdp_float8_all_gather, default selective (op) AC; TPS/GPU and memory at step 100")
_TT_A100 = ("pytorch/torchtitan docs/performance.md @877991a (Llama 3 rows from 7e76ecb, Llama 2 rows from 0809984): "
            "64 A100 80GB, FSDP2 over 64, bf16, eager (train_configs compile = false then); WPS per GPU")
_BLOCKS = ("compile = the transformer blocks only, the loss eager: torchtitan's train.py had no loss compile in "
           "August 2024 (9515a14) and turned it off on 2024-12-18 (e8977b0, 'compiling loss function causes CUDA "
           "errors') until 2025-04-02 (bbb1b61); the December tables ran torchtitan 9dec370 of 2024-12-26")
_TT_405 = ("pytorch/torchtitan docs/performance.md @877991a: Llama 3.1 405B on 128 H100 (95 GB HBM2e, lower-TDP SXM), "
           "FSDP 16 x TP 8, local batch 2, sequence 8192, full AC, compile; WPS per GPU")
_TT_ASYNC_ON = ("pytorch/torchtitan benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md @b5bcd76 and its table "
                "assets/images/async-tp-perf-06-14-2025.png @5ecb74e, {col} column (tokens/s per GPU); Grand Teton "
                "H100s; sequence 8192 (config default)")
_TT_PP = ("torchtitan 9dec370 (the December tables' version): pipeline_parallel_microbatches unset, so the local "
          "batch splits into as many micro-batches as pipeline ranks (parallelisms/pipelining_utils.py "
          "build_pipeline_schedule), and the 126 layers split by generate_split_points (first stage base, middle "
          "stages one more while the remainder lasts, the last stage the rest): 15/16x6/15 for 8 stages, "
          "7/8x14/7 for 16 (two per rank, looped)")

_FP8 = "fp8-compute-fp32-adam"


def _tt(label, model, device, gpus, plan, batch, seq, value, source, memory=None, compile=False, fp8=False):
    return StackRun(label, "torchtitan", model, device, gpus, plan, batch, seq, "tokens", value, source,
                    _FP8 if fp8 else None, compile, memory, notes=(_BLOCKS,) if compile == "model" else ())


def _fsdp(dp, mb, recompute="op", **kw):
    return dict(dp=dp, zero=3, micro_batch=mb, recompute=recompute, **kw)


_H = "h100-hbm2e-96gb"
_A = "a100-80gb"
_SPLIT_TT = (15,) + (16,) * 6 + (15,)  # Llama 3.1 405B's 126 layers on 8 pipeline ranks (_TT_PP)
TORCHTITAN_RUNS = (
    # Table 1: Llama 3.1 8B on 8 GPUs, FSDP 8, local batch 2, selective (op) AC.
    _tt("torchtitan Llama 3.1 8B, 8 GPUs, eager", "llama3-8b", _H, 8, _fsdp(8, 2), 16, 8192, 5762,
        _TT_H100.format(t=1), 82.4),
    _tt("torchtitan Llama 3.1 8B, 8 GPUs, compile", "llama3-8b", _H, 8, _fsdp(8, 2), 16, 8192, 6667,
        _TT_H100.format(t=1), 77.0, compile="model"),
    _tt("torchtitan Llama 3.1 8B, 8 GPUs, compile + Float8", "llama3-8b", _H, 8, _fsdp(8, 2), 16, 8192, 8532,
        _TT_H100.format(t=1), 76.8, compile="model", fp8=True),
    # Table 3: the same on 128 GPUs.
    _tt("torchtitan Llama 3.1 8B, 128 GPUs, eager", "llama3-8b", _H, 128, _fsdp(128, 2), 256, 8192, 5605,
        _TT_H100.format(t=3), 67.0),
    _tt("torchtitan Llama 3.1 8B, 128 GPUs, compile", "llama3-8b", _H, 128, _fsdp(128, 2), 256, 8192, 6514,
        _TT_H100.format(t=3), 62.0, compile="model"),
    _tt("torchtitan Llama 3.1 8B, 128 GPUs, compile + Float8", "llama3-8b", _H, 128, _fsdp(128, 2), 256, 8192, 8380,
        _TT_H100.format(t=3), 61.8, compile="model", fp8=True),
    # Table 4: Llama 3.1 70B, FSDP 32 x TP 8 (torchtitan's TP shards the norms by sequence), local batch 16, full AC.
    _tt("torchtitan Llama 3.1 70B, 256 GPUs, FSDP32 TP8, Float8", "llama3-70b", _H, 256,
        _fsdp(32, 16, "full", tp=8, sp=True), 512, 8192, 829, _TT_H100.format(t=4), 71.9, compile="model", fp8=True),
    # Async-TP benchmarks, vanilla TP column.
    _tt("torchtitan Llama 3 70B, 256 GPUs, FSDP32 TP8, bf16", "llama3-70b", _H, 256,
        _fsdp(32, 16, "full", tp=8, sp=True), 512, 8192, 597.3, _TT_ASYNC, compile=True),
    _tt("torchtitan Llama 3 8B, 64 GPUs, FSDP8 TP8, bf16", "llama3-8b", _H, 64, _fsdp(8, 12, tp=8, sp=True),
        96, 8192, 4378, _TT_ASYNC, compile=True),
    _tt("torchtitan Llama 3 8B, 64 GPUs, FSDP8 TP8, Float8", "llama3-8b", _H, 64, _fsdp(8, 12, tp=8, sp=True),
        96, 8192, 5078.1, _TT_ASYNC, compile=True, fp8=True),
    _tt("torchtitan Llama 3.1 70B, 256 GPUs, FSDP32 TP8, Float8, async TP", "llama3-70b", _H, 256,
        _fsdp(32, 16, "full", tp=8, sp=True, tp_overlap=True), 512, 8192, 876, _TT_H100.format(t=4), 67.6,
        compile="model", fp8=True),
    # Table 2: FSDP x CP, compile + Float8, local batch 1, full AC; the sequence grows with CP (32k tokens a GPU).
    *(_tt(f"torchtitan Llama 3.1 8B, 8 GPUs, FSDP{8 // cp} CP{cp}, sequence {seq // 1024}k, Float8", "llama3-8b", _H,
          8, _fsdp(8 // cp, 1, "full", cp=cp), 8 // cp, seq, value, _TT_H100.format(t=2), memory, compile="model",
          fp8=True)
      for cp, seq, value, memory in ((1, 32768, 3890, 83.9), (2, 65536, 2540, 84.2), (4, 131072, 1071, 84.0),
                                     (8, 262144, 548, 84.5))),
    # Table 5: FSDP 8 x TP 8 x PP 8, compile + Float8 + async TP, local batch 32 in 8 micro-batches, full AC.
    _tt("torchtitan Llama 3.1 405B, 512 GPUs, FSDP8 TP8 PP8, 1F1B", "llama3-405b", _H, 512,
        _fsdp(8, 4, "full", tp=8, sp=True, tp_overlap=True, pp=8, stage_layers=_SPLIT_TT), 256, 8192, 100,
        _TT_H100.format(t=5) + "; " + _TT_PP, 82.5, compile="model", fp8=True),
    _tt("torchtitan Llama 3.1 405B, 512 GPUs, FSDP8 TP8 PP8, interleaved 1F1B", "llama3-405b", _H, 512,
        _fsdp(8, 4, "full", tp=8, sp=True, tp_overlap=True, pp=8, schedule="interleaved", chunks=2,
              stage_layers=_SPLIT_TT), 256, 8192, 128, _TT_H100.format(t=5) + "; " + _TT_PP, 72.7, compile="model",
        fp8=True),
    # Table 6: TP 8 x PP 8 (1F1B) x FSDP x CP, compile + Float8 + async TP, local batch 8, full AC.
    *(_tt(f"torchtitan Llama 3.1 405B, 512 GPUs, FSDP{8 // cp} CP{cp} TP8 PP8, sequence {seq // 1024}k",
          "llama3-405b", _H, 512, _fsdp(8 // cp, 1, "full", cp=cp, tp=8, sp=True, tp_overlap=True, pp=8,
                                        stage_layers=_SPLIT_TT), 8 * (8 // cp), seq, value,
          _TT_H100.format(t=6) + "; " + _TT_PP, memory, compile="model", fp8=True)
      for cp, seq, value, memory in ((1, 32768, 76, 75.3), (2, 65536, 47, 75.9), (4, 131072, 31, 77.1),
                                     (8, 262144, 16, 84.9))),
    # Async-TP benchmarks, async TP column; and the Float8 tensorwise 70B pair.
    _tt("torchtitan Llama 3 70B, 256 GPUs, FSDP32 TP8, bf16, async TP", "llama3-70b", _H, 256,
        _fsdp(32, 16, "full", tp=8, sp=True, tp_overlap=True), 512, 8192, 652.4, _TT_ASYNC_ON.format(col="async TP"),
        compile=True),
    _tt("torchtitan Llama 3 8B, 64 GPUs, FSDP8 TP8, bf16, async TP", "llama3-8b", _H, 64,
        _fsdp(8, 12, tp=8, sp=True, tp_overlap=True), 96, 8192, 4809.4, _TT_ASYNC_ON.format(col="async TP"),
        compile=True),
    _tt("torchtitan Llama 3 8B, 64 GPUs, FSDP8 TP8, Float8, async TP", "llama3-8b", _H, 64,
        _fsdp(8, 12, tp=8, sp=True, tp_overlap=True), 96, 8192, 5570.1, _TT_ASYNC_ON.format(col="async TP"),
        compile=True, fp8=True),
    _tt("torchtitan Llama 3 70B, 256 GPUs, FSDP32 TP8, Float8 (2025)", "llama3-70b", _H, 256,
        _fsdp(32, 16, "full", tp=8, sp=True), 512, 8192, 809.8, _TT_ASYNC_ON.format(col="vanilla TP, float8 tensorwise"),
        compile=True, fp8=True),
    _tt("torchtitan Llama 3 70B, 256 GPUs, FSDP32 TP8, Float8 (2025), async TP", "llama3-70b", _H, 256,
        _fsdp(32, 16, "full", tp=8, sp=True, tp_overlap=True), 512, 8192, 942.4,
        _TT_ASYNC_ON.format(col="async TP, float8 tensorwise"), compile=True, fp8=True),
    # Llama 3.1 405B, 2D.
    _tt("torchtitan Llama 3.1 405B, 128 GPUs, FSDP16 TP8", "llama3-405b", _H, 128, _fsdp(16, 2, "full", tp=8, sp=True),
        32, 8192, 109, _TT_405, compile="model"),
    _tt("torchtitan Llama 3.1 405B, 128 GPUs, FSDP16 TP8, Float8", "llama3-405b", _H, 128,
        _fsdp(16, 2, "full", tp=8, sp=True), 32, 8192, 177, _TT_405, compile="model", fp8=True),
    _tt("torchtitan Llama 3.1 405B, 128 GPUs, FSDP16 TP8, Float8, async TP", "llama3-405b", _H, 128,
        _fsdp(16, 2, "full", tp=8, sp=True, tp_overlap=True), 32, 8192, 185, _TT_405, compile="model", fp8=True),
    # H200.
    _tt("torchtitan Llama 3.1 8B, 32 H200, Float8", "llama3-8b", "h200-141gb", 32, _fsdp(32, 2), 64, 8192, 10938,
        _TT_H200, 47.96, compile=True, fp8=True),
    _tt("torchtitan Llama 3.1 8B, 64 H200, Float8", "llama3-8b", "h200-141gb", 64, _fsdp(64, 2), 128, 8192, 10753,
        _TT_H200, 46.97, compile=True, fp8=True),
    # A100, eager; "selective layer" = every 2nd block fully (selective_ac_option "2"): half of each stage's layers.
    _tt("torchtitan Llama 3 8B, 64 A100, layer AC", "llama3-8b", _A, 64,
        _fsdp(64, 1, "full", recompute_layers=16), 64, 8192, 2904, _TT_A100),
    _tt("torchtitan Llama 3 8B, 64 A100, op AC", "llama3-8b", _A, 64, _fsdp(64, 1), 64, 8192, 2973, _TT_A100),
    _tt("torchtitan Llama 3 70B, 64 A100, full AC", "llama3-70b", _A, 64, _fsdp(64, 1, "full"), 64, 8192, 331,
        _TT_A100),
    _tt("torchtitan Llama 2 13B, 64 A100, no AC", "llama2-13b", _A, 64, _fsdp(64, 2, "none"), 128, 4096, 2162,
        _TT_A100),
    _tt("torchtitan Llama 2 13B, 64 A100, layer AC", "llama2-13b", _A, 64,
        _fsdp(64, 2, "full", recompute_layers=20), 128, 4096, 1914, _TT_A100),
    _tt("torchtitan Llama 2 13B, 64 A100, op AC", "llama2-13b", _A, 64, _fsdp(64, 2), 128, 4096, 1904, _TT_A100),
    _tt("torchtitan Llama 2 70B, 64 A100, op AC", "llama2-70b", _A, 64, _fsdp(64, 1), 64, 4096, 355, _TT_A100),
    _tt("torchtitan Llama 2 70B, 64 A100, full AC", "llama2-70b", _A, 64, _fsdp(64, 2, "full"), 128, 4096, 353,
        _TT_A100),
)
"""torchtitan's published measured runs with the plan each states (FSDP2 over all GPUs unless TP is named)."""

_MB = ("NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md @{commit} (NeMo container {container}), {system} "
       "pre-training table: tokens/s/GPU, sequence 8192, the micro-batch the table prints; recipe of the perf scripts at release branch "
       "{branch}: FP8 current scaling with fp8_param_gather=True, grad_reduce_in_fp32=False, distributed optimizer, "
       "overlap_grad_reduce and overlap_param_gather, no recomputation, TP communication overlap with sequence "
       "parallelism (scripts/performance/utils/helpers.py get_precision_config, configs/llama3*/"
       "workload_base_configs.py)")
_MB_2511 = _MB.format(commit="97ad8cc", container="25.11", branch="r0.2.0 @0465189", system="DGX-H100")
_MB_2602 = _MB.format(commit="067f987 (archive)", container="26.02", branch="r0.3.0 @8301abf", system="DGX-H100")
_MB_2606_GB200 = ("NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md @067f987, § 26.06 NeMo Container, "
                  "LLAMA3.1_405B, DGX-GB200 FP8 row: tokens/s/GPU, sequence 8192, micro-batch 1; recipe of "
                  "src/megatron/bridge/perf_recipes/llama/gb200/llama31.py @067f987 "
                  "(llama31_405b_pretrain_256gpu_gb200_fp8cs_config: _perf_precision('fp8_cs'), i.e. FP8 current "
                  "scaling with fp8_param_gather and grad_reduce_in_fp32=False, distributed optimizer, TP "
                  "communication overlap with sequence parallelism, embedding and loss counted in the pipeline split, "
                  "no recomputation)")
_MB_2511_BLACKWELL = {system: _MB.format(commit="97ad8cc", container="25.11", branch="r0.2.0 @0465189",
                                         system=f"DGX-{system}") for system in ("B200", "GB200")}
_MB_RECIPE = "fp8-params-bf16grad"
_SPLIT_405B = (15,) + (16,) * 6 + (15,)   # llama31_405b.py: account_for_embedding/loss_in_pipeline_split=True
_SPLIT_405B_PP16 = (7,) + (8,) * 14 + (7,)   # the same 128 slots over 16 ranks x 4 chunks of 2


def gb200_nvlink_domain(gpus: int) -> int:
    """The GPUs of one NVLink domain a Megatron-Bridge job on ``gpus`` GB200s runs in: its perf scripts launch
    GB200 jobs on nodes of four GPUs (one compute tray; ``scripts/performance/argument_parser.py``
    ``NUM_GPUS_PER_NODE_MAP``) and ask Slurm for ``--segment`` blocks of trays that share an NVL72 rack's NVLink: all
    the trays up to 18, else the largest divisor of the tray count that is at most 18
    (``scripts/performance/utils/executors.py`` L167-176 @067f987).

    Examples:
        >>> gb200_nvlink_domain(8), gb200_nvlink_domain(64), gb200_nvlink_domain(256)
        (8, 64, 64)
    """
    trays = -(-gpus // 4)
    segment = trays if trays <= 18 else next(k for k in range(18, 0, -1) if trays % k == 0)
    return min(gpus, 4 * segment)


def _mb(label, model, gpus, plan, batch, value, source, device="h100-sxm-80gb"):
    domain = gb200_nvlink_domain(gpus) if device == "gb200-186gb" else None
    return StackRun(label, "megatron-core", model, device, gpus, plan, batch, 8192, "tokens", value, source,
                    _MB_RECIPE, nvlink_domain=domain)


def _mcore(dp, tp, pp, vp, cp=1, split=None):
    return dict(dp=dp, tp=tp, pp=pp, cp=cp, zero=1, micro_batch=1, sp=True, tp_overlap=True, schedule="interleaved",
                chunks=vp, stage_layers=split)


def _mcore_dp(dp, micro_batch):
    # Data parallelism alone (TP = PP = CP = 1): the distributed optimizer, no sequence parallelism or TP overlap.
    return dict(dp=dp, zero=1, micro_batch=micro_batch)


MEGATRON_BRIDGE_H100 = (
    _mb("Megatron-Bridge Llama3 70B (64 H100, FP8)", "llama3-70b", 64, _mcore(2, 4, 8, 5), 128, 1602, _MB_2511),
    _mb("Megatron-Bridge Llama3.1 405B (1024 H100, FP8)", "llama3-405b", 1024, _mcore(8, 8, 8, 8, 2, _SPLIT_405B), 512,
        292, _MB_2511),
    _mb("Megatron-Bridge Llama3.1 405B (1024 H100, FP8, GBS 1536)", "llama3-405b", 1024,
        _mcore(8, 8, 8, 8, 2, _SPLIT_405B), 1536, 311, _MB_2602),
    # Megatron-FSDP (use_megatron_fsdp, data_parallel_sharding_strategy "optim_grads_params": ZeRO-3 over the 8 GPUs).
    _mb("Megatron-Bridge Llama3 8B (8 H100, FP8, Megatron-FSDP)", "llama3-8b", 8, dict(dp=8, zero=3, micro_batch=1),
        128, 14451, _MB_2511),
)
"""Megatron-Bridge's published DGX-H100 pre-training rows for dense Llama models with the plan and recipe the
perf scripts of the matching release set (the pages print the plan; the release branch holds the recipe)."""

QWEN3_235B = Transformer(layers=94, hidden=4096, heads=64, kv_heads=4, head_dim=128, ffn_hidden=1536, vocab=151936,
                         seq_len=4096, gated_mlp=True, experts=128, top_k=8, tied_embeddings=False, position="rotary",
                         bias=False, norm="rmsnorm", dropout=False, name="Qwen3-235B-A22B",
                         source="Qwen/Qwen3-235B-A22B config.json (num_hidden_layers 94, hidden_size 4096, "
                                "num_attention_heads 64, num_key_value_heads 4, head_dim 128, moe_intermediate_size "
                                "1536, num_experts 128, num_experts_per_tok 8, vocab_size 151936), as Megatron-Bridge's "
                                "Qwen3 MoE provider maps it")

QWEN3_30B = Transformer(layers=48, hidden=2048, heads=32, kv_heads=4, head_dim=128, ffn_hidden=768, vocab=151936,
                        seq_len=4096, gated_mlp=True, experts=128, top_k=8, tied_embeddings=False, position="rotary",
                        bias=False, norm="rmsnorm", dropout=False, name="Qwen3-30B-A3B",
                        source="Qwen/Qwen3-30B-A3B config.json (num_hidden_layers 48, hidden_size 2048, "
                               "num_attention_heads 32, num_key_value_heads 4, head_dim 128, moe_intermediate_size 768, "
                               "num_experts 128, num_experts_per_tok 8, vocab_size 151936, tie_word_embeddings false)")

MEGATRON_BRIDGE_MOE_H100 = (
    StackRun("Megatron-Bridge Qwen3-235B-A22B (256 H100, FP8)", "megatron-core", QWEN3_235B, "h100-sxm-80gb", 256,
             dict(dp=16, tp=2, pp=8, ep=32, etp=1, zero=1, micro_batch=1, sp=True, schedule="interleaved", chunks=4,
                  stage_layers=(11,) + (12,) * 6 + (11,), ep_overlap=True), 8192, 4096, "tokens", 1712,
             "NVIDIA-NeMo/Megatron-Bridge docs/fern/versions/0.4.2/pages/performance-summary.mdx @067f987, § 26.04.01 "
             "NeMo Container, Qwen3_235B_a22B, DGX-H100 FP8 row (GBS 8192, MBS 1, sequence 4096, TP2 PP8 VP4 EP32): "
             "tokens/s/GPU; recipe of src/megatron/bridge/perf_recipes/qwen/h100/qwen3_moe.py @067f987 "
             "(qwen3_235b_a22b_pretrain_256gpu_h100_fp8cs_config: FP8 current scaling, the alltoall dispatcher, "
             "overlap_moe_expert_parallel_comm on, tp_comm_overlap off, moe_router_force_load_balancing, no "
             "recomputation) over recipes/qwen/h100/qwen3_moe.py (expert_tensor_parallel_size 1, embedding and loss "
             "counted in the pipeline split)", _MB_RECIPE),
    StackRun("Megatron-Bridge Qwen3-30B-A3B (16 H100, FP8)", "megatron-core", QWEN3_30B, "h100-sxm-80gb", 16,
             dict(dp=16, ep=16, etp=1, zero=1, micro_batch=1, dispatcher="hybridep"), 1024, 4096, "tokens", 8960,
             "NVIDIA-NeMo/Megatron-Bridge docs/fern/versions/0.4.2/pages/performance-summary.mdx @067f987, § 26.04.01 "
             "NeMo Container, Qwen3_30B_a3B, DGX-H100 FP8 row (GBS 1024, MBS 1, sequence 4096, TP1 PP1 EP16): "
             "tokens/s/GPU; recipe of src/megatron/bridge/perf_recipes/qwen/h100/qwen3_moe.py @067f987 "
             "(qwen3_30b_a3b_pretrain_16gpu_h100_fp8cs_config: FP8 current scaling, the flex dispatcher with the "
             "hybridep backend, moe_a2a_overlap off, moe_router_force_load_balancing, no recomputation, CUDA graphs "
             "over attention, router and dispatch preprocessing) over recipes/qwen/h100/qwen3_moe.py "
             "(expert_tensor_parallel_size 1, moe_permute_fusion and cross_entropy_loss_fusion on)", _MB_RECIPE),
)
"""Megatron-Bridge's published DGX-H100 rows of fine-routed MoEs (128 experts, top-8), each with the recipe its perf
script sets: Qwen3-235B-A22B, whose experts' all-to-alls cross four nodes and run under another micro-batch's
compute (``Plan.ep_overlap``), added when EP overlap was built from Megatron-Core's schedule, to check it; and
Qwen3-30B-A3B over two nodes through HybridEP, added after the flex dispatcher was built, as it stood (no constant
changed for it), the model's largest known miss on a MoE (the validation page). Not among :data:`STACK_RUNS`.
The recipes fuse the token permutation and the loss, which the model prices as Megatron-Core's defaults leave them
(unfused: :data:`parallelsel.core.stacks.STACKS`), so it prices them slower than they ran, not faster."""

QWEN3_30B_RELEASES = (("26.02", 5113), ("26.02.01", 9058))
"""Megatron-Bridge's DGX-H100 tokens/s/GPU for one Qwen3-30B-A3B parallel layout in two consecutive NeMo containers
(whether the recipes were otherwise the same the table does not say) (:data:`QWEN3_30B_RELEASES_SOURCE`)."""
QWEN3_30B_RELEASES_SOURCE = ("NVIDIA-NeMo/Megatron-Bridge docs/fern/versions/0.4.2/pages/performance-summary-archive.mdx "
                             "@067f987, § 26.02 and § 26.02.01 NeMo Container, Qwen3_30B_a3B, DGX-H100 FP8 rows (16 "
                             "GPUs, GBS 1024, MBS 1, sequence 4096, TP1 PP2 VP12 EP8)")


MEGATRON_BRIDGE_BLACKWELL = (
    # r0.2.0 configs/llama3/workload_base_configs.py LLAMA3_8B_{B200,GB200}_FP8_CS_BASE_CONFIG: micro-batch 2, no
    # other parallelism, CUDA graphs over the whole iteration (launch overheads the model does not price anyway).
    _mb("Megatron-Bridge Llama3 8B (8 B200, FP8)", "llama3-8b", 8, _mcore_dp(8, 2), 128, 30624,
        _MB_2511_BLACKWELL["B200"], "b200-180gb"),
    _mb("Megatron-Bridge Llama3 8B (8 GB200, FP8)", "llama3-8b", 8, _mcore_dp(8, 2), 128, 31508,
        _MB_2511_BLACKWELL["GB200"], "gb200-186gb"),
    # r0.2.0 configs/llama31/workload_base_configs.py LLAMA31_405B_B200_FP8_CS_BASE_CONFIG: TP4 PP8 CP2 VP8, global
    # batch 64 on 128 GPUs; llama31_llm_pretrain.py llama31_405b_b200_config: TP overlap (userbuffers b200 tp4 cp2).
    _mb("Megatron-Bridge Llama3.1 405B (128 B200, FP8)", "llama3-405b", 128, _mcore(2, 4, 8, 8, 2, _SPLIT_405B), 64,
        661, _MB_2511_BLACKWELL["B200"], "b200-180gb"),
    # The 26.06 table's GB200 row: perf_recipes/llama/gb200/llama31.py @067f987
    # llama31_405b_pretrain_256gpu_gb200_fp8cs_config: TP4 PP16 VP4, global batch 1536, micro-batch 1, TP overlap,
    # no recomputation, embedding and loss counted in the pipeline split (128 slots, 2 a chunk).
    _mb("Megatron-Bridge Llama3.1 405B (256 GB200, FP8)", "llama3-405b", 256, _mcore(4, 4, 16, 4, 1, _SPLIT_405B_PP16),
        1536, 843, _MB_2606_GB200, "gb200-186gb"),
)
"""Megatron-Bridge's Blackwell rows (NeMo 25.11: DGX-B200 and DGX-GB200; and 26.06's GB200 Llama 3.1 405B) for dense
Llama models whose plan the perf configs of the matching code confirm. Left out: 25.11's GB200 Llama 3 70B and Llama
3.1 405B rows, whose FP8 configs run Megatron-FSDP with 40 and 92 layers' activations offloaded to the CPU
(``cpu_offloading_num_layers``), which the model does not price; and the MXFP8 and NVFP4 figures, recipes the model
does not have."""

_NEMO_LONG = ("NVIDIA/NeMo docs/source/performance/performance_long_sequence.md @0aa2671 (NeMo 24.03.01 container, "
              "DGX-H100): LLAMA2-7B FP8, the with-CP columns (TP, PP, DP, CP and TFLOPS per GPU)")
NEMO_LONG_ASSUMED = ("micro-batch 1, global batch 128, no recomputation, TP communication overlap off "
                     "(NVIDIA/NeMo-Framework-Launcher launcher_scripts/conf/training/llama/llama2_7b.yaml: "
                     "micro_batch_size 1, activations_checkpoint_granularity null, ub_tp_comm_overlap False; "
                     "examples/training/llama/h100/llama2_7b_fp8.sh: global_batch_size=128, fp8_hybrid)",
                     "sequence parallelism with TP",
                     "FP8 with bf16 gradient reduction and NeMo's distributed optimizer, apex's, with 16-bit "
                     "remainders for the fp32 master (the launcher's FP8 scripts)",
                     "TFLOPS as NeMo counts them (nemo/utils/flops_formulas.py llama2: 12 + 12 g/a + 18 f/h + "
                     "12 s/h + 6 V/(L h) times B s L h^2, the full s x s attention, vocabulary 32,000)")
"""What the long-sequence page does not state, and what its rows assume."""


def _nemo_long(k, gpus, tp, pp, dp, cp, tflops):
    plan = dict(dp=dp, tp=tp, pp=pp, cp=cp, zero=1, micro_batch=1, sp=tp > 1, tp_overlap=False)
    return StackRun(f"NeMo {MODELS['llama2-7b'].name}, sequence {k}k, {gpus} H100 (FP8, TP{tp} PP{pp} CP{cp})",
                    "megatron-core",
                    "llama2-7b", "h100-sxm-80gb", gpus, plan, 128, k * 1024, "tflops", tflops, _NEMO_LONG,
                    "fp8-adam-remainders-bf16grad", vocab=32000, tied_embeddings=False, notes=NEMO_LONG_ASSUMED,
                    flops="nemo-llama")


NEMO_LONG_H100 = tuple(_nemo_long(*row) for row in (
    (4, 4, 1, 1, 4, 1, 768), (8, 8, 1, 2, 4, 1, 730), (16, 16, 2, 1, 8, 1, 660), (32, 32, 2, 1, 8, 2, 610),
    (64, 64, 4, 1, 8, 2, 574), (128, 128, 4, 1, 8, 4, 555), (256, 256, 4, 1, 8, 8, 549),
    (512, 512, 8, 1, 4, 16, 549), (1024, 1024, 8, 1, 4, 32, 536)))
"""NeMo's long-sequence table (Megatron-Core with Transformer Engine): Llama 2 7B in FP8 from 4k to 1M tokens a
sequence, context parallelism from 1 to 32 ranks, on DGX-H100; the sequence grows with the GPUs, so each row holds
the tokens a GPU nearly constant while attention's share of the work grows from a fifth to nearly all of it."""

_NEMO_SUM = ("NVIDIA/NeMo docs/source/performance/performance_summary.md @e2de75c (NeMo 24.07 container, DGX-H100): "
             "pre-training at FP8, the model's row (GPUs, GBS, MBS, sequence, TP, PP, CP, VP, tokens/s per GPU)")
_GPT3_SHAPES = {(24, 4096, 32): "GPT-3 5B", (44, 6144, 48): "GPT-3 20B"}
"""The GPT-3 shapes of NeMo's table as their 24.07 launcher configurations give them (num_layers, hidden_size,
num_attention_heads), by name."""

NEMO_SUMMARY_ASSUMED = ("each model's NeMo-Framework-Launcher configuration of the 24.07 era for what the table "
                        "does not print (launcher_scripts/conf/training/gpt3/{5b,20b,175b}.yaml and llama/"
                        "llama2_{7b,13b,70b}.yaml, llama3_{8b,70b}.yaml @1a7171d7, whose plans are the table's but for "
                        "Llama 3 70B's virtual stages, 10 there and 5 in the table, and the 512-GPU GPT-3 175B row's "
                        "micro-batch, 1 there and 2 in the table: no recomputation; sequence parallelism wherever "
                        "TP > 1)",
                        "ub_tp_comm_overlap on wherever TP > 1, as the 20B and Llama 70B configurations set it "
                        "(175b.yaml sets it off)",
                        "attention as Transformer Engine's cuDNN kernel, as the launcher's GPT-3 175B H100 example "
                        "script sets it (examples/training/gpt/h100/175b_fp8_16node.sh: NVTE_FUSED_ATTN=1), though "
                        "the launcher's conf/config.yaml defaults every stage to 0 (FlashAttention-2)",
                        "FP8 with bf16 gradient reduction (grad_sync_dtype bf16) and NeMo's distributed optimizer, "
                        "apex's, which keeps a 16-bit remainder for the fp32 master (store_param_remainders)",
                        "; ".join(f"{name} as its configuration's shape ({layers} layers, hidden {hidden}, {heads} heads)"
                                  for (layers, hidden, heads), name in _GPT3_SHAPES.items())
                        + ", the vocabulary 51,200 (GPT-2's BPE padded as Narayanan et al. 2021 count it) and tied "
                          "embeddings")
"""What NeMo's performance summary does not print, and what its rows assume."""


def _nemo_plan(gpus, tp, pp, cp, vp, mbs, ep=1, recompute="none"):
    # A NeMo run's plan from its table's degrees: the distributed optimizer, SP and TP overlap wherever TP > 1.
    plan = dict(dp=gpus // (tp * pp * cp), tp=tp, pp=pp, cp=cp, ep=ep, zero=1, micro_batch=mbs, sp=tp > 1,
                tp_overlap=tp > 1, recompute=recompute)
    if vp > 1:
        plan.update(schedule="interleaved", chunks=vp)
    return plan


def _nemo_sum(model, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps, recipe="fp8-adam-remainders-bf16grad", recompute="none",
              notes=NEMO_SUMMARY_ASSUMED):
    plan = _nemo_plan(gpus, tp, pp, cp, vp, mbs, recompute=recompute)
    if isinstance(model, tuple):
        name = _GPT3_SHAPES[model]
    else:
        name = model.name if isinstance(model, Transformer) else MODELS[model].name
    return StackRun(f"NeMo {name} ({gpus} H100, FP8, TP{tp} PP{pp} CP{cp})", "megatron-core", model, "h100-sxm-80gb",
                    gpus, plan, gbs, seq, "tokens", tps, _NEMO_SUM, recipe,
                    vocab=51200 if isinstance(model, tuple) else None, notes=notes)


NEMO_SUMMARY_H100 = tuple(_nemo_sum(*row) for row in (
    ((24, 4096, 32), 64, 2048, 4, 2048, 1, 1, 1, 1, 23406), ((44, 6144, 48), 64, 256, 2, 2048, 2, 1, 1, 1, 5851),
    ("gpt3-175b", 128, 256, 1, 2048, 4, 8, 1, 6, 716), ("gpt3-175b", 512, 2048, 2, 2048, 4, 8, 1, 6, 825),
    ("llama2-7b", 8, 128, 1, 4096, 1, 1, 1, 1, 16934), ("llama2-13b", 16, 128, 1, 4096, 1, 4, 1, 10, 8715),
    ("llama2-70b", 64, 128, 1, 4096, 4, 4, 1, 20, 1728), ("llama3-8b", 8, 128, 1, 8192, 1, 1, 2, 1, 12273),
    ("llama3-70b", 64, 128, 1, 8192, 4, 4, 2, 5, 1524)))
"""NeMo's performance summary for the 24.07 container (Megatron-Core with Transformer Engine, FP8, DGX-H100): the
GPT-3 and Llama rows (the Nemotron rows, a non-gated squared-ReLU MLP, are :data:`NEMOTRON_H100`). The model puts the
GPT-3 20B row's plan past the H100's usable memory, a run that trained: the tensors it counts fit, the allowance it
adds for the caching allocator (:data:`parallelsel.core.memory.ALLOCATOR_OVERHEAD`, an assumption) does not
(:data:`REFUSED`; the tests keep it visible as strict xfails)."""

_NEMOTRON_CONF = "NVIDIA/NeMo-Framework-Launcher launcher_scripts/conf/training/nemotron/nemotron_{}.yaml @{}"


def _nemotron(name, size, commit, layers, hidden, heads, kv_heads):
    # Nemotron's block (Parmar et al. 2024, Nemotron-4 15B Technical Report §2: squared-ReLU MLP, rotary positions,
    # no biases, untied embeddings, a 256,000-entry vocabulary); the configurations give the MLP's width (4h, no
    # gate) and the norm (layernorm1p), the 340B's its 256k tokenizer (nemotron_2_256k.model), and no dropout
    # (hidden_dropout, attention_dropout and ffn_dropout 0.0).
    return Transformer(layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads, ffn_hidden=4 * hidden,
                       vocab=256000, seq_len=4096, gated_mlp=False, tied_embeddings=False, position="rotary",
                       bias=False, norm="layernorm", dropout=False, name=name,
                       source=_NEMOTRON_CONF.format(size, commit))


NEMOTRON = {
    "nemotron-8b": _nemotron("Nemotron-8B", "8b", "1a7171d7", 32, 4096, 32, None),
    "nemotron-22b": _nemotron("Nemotron-22B", "22b", "1a7171d7", 40, 6144, 48, None),
    "nemotron-340b": _nemotron("Nemotron-4 340B", "340b", "7c842fcd", 96, 18432, 96, 8),
}
"""The shapes of NeMo's Nemotron rows, from the launcher configurations of the 24.07 era (num_layers, hidden_size,
ffn_hidden_size = 4 hidden, num_attention_heads, num_query_groups, share_embeddings_and_output_weights false)."""

NEMOTRON_ASSUMED = ("the launcher configuration of each model for what the table does not print "
                    "(nemotron_8b.yaml and nemotron_22b.yaml @1a7171d7: no recomputation, ub_tp_comm_overlap, "
                    "apex's distributed Adam with no dtype given, so fp32 states (a 16-bit remainder for the master) "
                    "and fp32 gradient reduction; "
                    "nemotron_340b.yaml @7c842fcd: selective recomputation, optim.dtype and grad_sync_dtype bf16)",
                    "the table's micro-batches, which are not the configurations' (8B: 2 there, 4 in the table; 22B: "
                    "1 there, 2 in the table); for the 340B row, whose whole plan is not its configuration's (TP8 "
                    "PP12 with 8 virtual stages, TP overlap and overlapped pipeline sends off, for 6,144 GPUs), TP "
                    "communication overlap and overlapped pipeline sends as the table's other rows with TP > 1 run "
                    "them",
                    "the squared-ReLU activation priced as one elementwise kernel like GeLU (Megatron-Core runs "
                    "relu and its square, bias_activation_fusion false), rotary embeddings on every head dimension "
                    "(the configurations rotate half: rotary_percentage 0.5)")
"""What NeMo's performance summary does not print for the Nemotron rows, and what they assume."""


NEMOTRON_H100 = tuple(_nemo_sum(NEMOTRON[key], *row, recipe=recipe, recompute=recompute, notes=NEMOTRON_ASSUMED)
                      for key, row, recipe, recompute in (
    ("nemotron-8b", (64, 256, 4, 4096, 2, 1, 1, 1, 12507), "fp8-adam-remainders-fp32grad", "none"),
    ("nemotron-22b", (64, 256, 2, 4096, 2, 4, 1, 10, 4312), "fp8-adam-remainders-fp32grad", "none"),
    ("nemotron-340b", (128, 32, 1, 4096, 8, 8, 1, 12, 326), "fp8-adam-bf16-states", "selective")))
"""NeMo 24.07's Nemotron rows (the same table as :data:`NEMO_SUMMARY_H100`): the non-gated squared-ReLU MLP and a
256k vocabulary, shapes and settings from each model's launcher configuration."""

_DGXC = ("NVIDIA/dgxc-benchmarking @143b90d (release v25.01), {readme} \"Expected Performance\": training step time on "
         "DGX-H100 with the configuration {conf} and launch scripts of that release ({container}); tokens/s/GPU = "
         "sequence x GBS / step time / GPUs")
DGXC_ASSUMED = ("each table's plan, then the release's launch script (configure.sh), then its configuration file for "
                "what the table does not print (micro-batch, sequence parallelism, ub_tp_comm_overlap: on in every "
                "row with TP, overlap_p2p_comm, recomputation, dropout, the tokenizer; the FP8 switches model.fp8, "
                "fp8_hybrid and fp8_params, so FP8 weights)",
                "BF16 rows: apex's distributed Adam with 16-bit master remainders and bf16 gradient reduction "
                "(Nemotron-4 340B: bf16 moments; Grok-1: Megatron-Core's distributed optimizer, fp32 master and "
                "moments); FP8 rows: FP8 weights all-gathered in FP8 with an fp32 master (fp8_params rules out the "
                "16-bit remainders), but Nemotron-4 340B's FP8 row with its bf16 moments and no FP8 weights (no "
                "recipe combines the two)",
                "Llama 3.1 405B with the configuration's GPT-2 BPE tokenizer (its launch script sets no other for "
                "405B), padded to 51,200 entries",
                "Grok-1 (the configuration's shape: 64 layers, hidden 6,144, 48 heads in 8 groups, 8 experts of "
                "FFN 32,768 with GeGLU, top-2 routing, the Llama 3 tokenizer's 128,256 entries): the table's DP "
                "column is the experts' data parallelism (dp / ep: expert parallelism was carved out of "
                "DP in Megatron-Core 0.9, which its dev container of FW_VERSION 24.09 likely ran; the model lays EP out as "
                "Megatron-Core has since 0.10, folded over CP), capacity factor 1.0 with padding (balanced routing: the "
                "model's), no grouped GEMM")
"""What the DGX Cloud benchmark tables do not print, and what their rows assume."""


def _dgxc(name, model, seq, readme, conf, container, plan, rows, recipes=("bf16-adam-remainders-bf16grad",
                                                                        "fp8-params-bf16grad"), vocab=None,
          attention="flash"):
    # rows: (GPUs, GBS, BF16 seconds a step, FP8 seconds a step); the tables print both precisions per GPU count.
    # attention: "fa2" where the model's configure.sh exports NVTE_FUSED_ATTN=0 (Transformer Engine then runs the
    # flash-attn package's FlashAttention-2 instead of cuDNN's kernel), "flash" where it exports 1.
    source = _DGXC.format(readme=readme, conf=conf, container=container)
    out = []
    for gpus, gbs, *steps in rows:
        for precision, recipe, step in zip(("BF16", "FP8"), recipes, steps):
            out.append(StackRun(f"DGXC {name} ({gpus} H100, {precision})", "megatron-core", model, "h100-sxm-80gb",
                                gpus, plan(gpus), gbs, seq, "tokens", round(seq * gbs / step / gpus, 1), source, recipe,
                                vocab=vocab, notes=DGXC_ASSUMED, attention=attention))
    return tuple(out)


_LLAMA405_GPT2 = replace(MODELS["llama3-405b"], vocab=51200, name="Llama 3.1 405B (GPT-2 BPE, 51,200)",
                         source=MODELS["llama3-405b"].source + "; vocabulary: NVIDIA/dgxc-benchmarking "
                                "llama3.1/llama3.1_405b.yaml @143b90d (tokenizer GPT2BPETokenizer, 50,257 padded "
                                "to a multiple of 128 x TP 8)")

_GROK1 = Transformer(layers=64, hidden=6144, heads=48, kv_heads=8, ffn_hidden=32768, vocab=128256, seq_len=8192,
                     gated_mlp=True, experts=8, top_k=2, tied_embeddings=False, position="rotary", bias=False,
                     norm="rmsnorm", dropout=False, name="Grok-1",
                     source="NVIDIA/dgxc-benchmarking grok1/grok1_314b.yaml @143b90d (num_layers, hidden_size, "
                            "num_attention_heads, num_query_groups, ffn_hidden_size, num_moe_experts, moe_router_topk, "
                            "activation fast-geglu, tokenizer meta-llama/Meta-Llama-3-70B)")

DGXC_H100 = (
    _dgxc("Llama 3.1 8B", "llama3-8b", 8192, "llama3.1/README_8b.md", "llama3.1/llama3.1_8b.yaml", "NeMo 24.09",
          lambda g: _nemo_plan(g, 1, 1, 2, 1, 1), ((8, 128, 12.91, 9.67), (128, 2048, 13.10, 9.82)))
    + _dgxc("Llama 3.1 70B", "llama3-70b", 8192, "llama3.1/README_70b.md", "llama3.1/llama3.1_70b.yaml", "NeMo 24.09",
            lambda g: _nemo_plan(g, 4, 4, 2, 5, 1), ((64, 128, 14.72, 11.01), (2048, 4096, 14.98, 11.39)))
    + _dgxc("Llama 3.1 405B", _LLAMA405_GPT2, 8192, "llama3.1/README_405b.md", "llama3.1/llama3.1_405b.yaml",
            "NeMo 24.09", lambda g: _nemo_plan(g, 8, 9, 2, 7, 1), ((576, 252, 17.20, 11.24), (2304, 1008, 17.62, 12.35)))
    + _dgxc("Nemotron-4 15B", Transformer(layers=32, hidden=6144, heads=48, kv_heads=8, ffn_hidden=24576, vocab=256000,
                                          seq_len=4096, gated_mlp=False, tied_embeddings=False, position="rotary",
                                          bias=False, norm="layernorm", dropout=False, name="Nemotron-4 15B",
                                          source="NVIDIA/dgxc-benchmarking nemotron/nemotron4-15b-synth.yaml @143b90d"),
            4096, "nemotron/README_15b.md", "nemotron/nemotron4-15b-synth.yaml", "NeMo 24.11",
            lambda g: _nemo_plan(g, 4, 1, 1, 1, 4), ((16, 64, 2.83, 2.08), (2048, 8192, 2.96, 2.18)))
    + _dgxc("Nemotron-4 340B", NEMOTRON["nemotron-340b"], 4096, "nemotron/README_340b.md",
            "nemotron/nemotron4-340b-synth.yaml", "NeMo 24.11",
            lambda g: _nemo_plan(g, 8, 8, 1, 12, 1, recompute="selective"),
            ((128, 32, 4.61, 3.16), (2048, 512, 4.84, 3.49)), recipes=("bf16-adam-bf16-states", "fp8-adam-bf16-states"),
            attention="fa2")   # nemotron/configure.sh: NVTE_FUSED_ATTN=1 for 15b, 0 for 340b
    + _dgxc("GPT-3 175B", "gpt3-175b", 2048, "nemo_megatron/README_175b.md", "nemo_megatron/gpt3_175b_hydra.yaml",
            "NeMo 24.11", lambda g: _nemo_plan(g, 4, 8, 1, 12, 1), ((128, 256, 8.91, 5.92), (2048, 4096, 9.02, 6.24)),
            vocab=51200, attention="fa2")   # nemo_megatron/configure.sh: NVTE_FUSED_ATTN=0
    + _dgxc("Grok-1 314B", _GROK1, 8192, "grok1/README_314b.md", "grok1/grok1_314b.yaml", "NeMo dev container",
            lambda g: _nemo_plan(g, 4, 8, 2, 8, 1, ep=8), ((512, 1024, 20.83, 16.69), (2048, 4096, 21.09, 17.04)),
            recipes=("bf16-adam", "fp8-params-bf16grad"), attention="fa2"))   # grok1/configure.sh: NVTE_FUSED_ATTN=0
"""NVIDIA's DGX Cloud benchmark recipes, release v25.01: Llama 3.1 (NeMo 24.09), Nemotron-4, GPT-3 175B (NeMo 24.11)
and the Grok-1 MoE on H100, in BF16 and FP8, at the fewest and the most GPUs each table runs the full model on
(weak scaling: the global batch grows with the GPUs). Held out: added after the model's constants were set, and no
constant was changed to meet them; the dense rows were priced as they stood. The Grok-1 rows, first priced too fast
(one FP8 row past 20%), led to reading Megatron-Core's MoE dispatcher, whose TP all-gather of the routed tokens, token
shuffles and two-level all-to-all the model now prices from that source. Not among
:data:`STACK_RUNS`, whose error sets the search's tie band."""

REFUSED = tuple(r.label for r in NEMO_SUMMARY_H100 if _GPT3_SHAPES.get(r.model) == "GPT-3 20B")
"""The validation rows whose published plan the model refuses though the run trained: the GPT-3 20B row of NeMo's
table, whose tensors fit and which only the allocator allowance (:data:`parallelsel.core.memory.ALLOCATOR_OVERHEAD`,
an assumption) puts past the usable memory."""

STACK_RUNS = (MEGATRON_H100 + MEGATRON_BRIDGE_H100 + MEGATRON_BRIDGE_BLACKWELL + NEMO_SUMMARY_H100 + NEMOTRON_H100 + NEMO_LONG_H100
              + TORCHTITAN_RUNS)
"""Every stack run of the validation page beside the 14 Megatron-LM A100 runs."""


def named_params(run: StackRun) -> float:
    """The model size a Megatron-LM README row is named by ("1.7B" ... "462B"), in parameters."""
    return float(run.label.split("GPT ")[1].split("B ")[0]) * 1e9


def stack_model(run: StackRun) -> Transformer:
    """The model ``run`` trained: its :class:`parallelsel.Transformer`, the :data:`parallelsel.MODELS` preset it
    names, or the GPT shape its ``(layers, hidden, heads)``, ``vocab`` and ``tied_embeddings`` give."""
    if isinstance(run.model, Transformer):
        return run.model
    if isinstance(run.model, tuple):
        layers, hidden, heads = run.model
        return Transformer(layers=layers, hidden=hidden, heads=heads, seq_len=run.seq_len, vocab=run.vocab,
                           tied_embeddings=run.tied_embeddings)
    return MODELS[run.model]


def source_flops(run: StackRun) -> float:
    """FLOPs per iteration as ``run``'s source counts them: :func:`megatron_flops` for a GPT shape, or NeMo's
    formula for the Llama family (``nemo/utils/flops_formulas.py`` ``llama2``, NVIDIA/NeMo @034b17b):
    B s L h^2 (12 + 12 g/a + 18 f/h + 12 s/h + 6 V/(L h)) with g query groups, a heads, f the gated MLP's
    width -- the full s x s attention, no causal discount, like Megatron-LM's."""
    if run.flops == "megatron-gpt":
        return megatron_flops(run)
    if run.flops != "nemo-llama":
        raise ValueError(f"flops={run.flops!r}: must be 'megatron-gpt' or 'nemo-llama'")
    m = stack_model(run)
    b, s, v = run.global_batch, run.seq_len, run.vocab
    return b * s * m.layers * m.hidden**2 * (12 + 12 * m.kv_heads / m.heads + 18 * m.ffn_hidden / m.hidden
                                             + 12 * s / m.hidden + 6 * v / (m.layers * m.hidden))


def megatron_flops(run: StackRun) -> float:
    """FLOPs per iteration as Megatron-LM counts them for a GPT (MHA, 4h non-gated MLP):
    ``num_floating_point_operations`` in ``megatron/training/training.py`` (2024):
    12 B s L h^2 x ((1 + g/a + s/h) + f/h + V/(2 L h)) with g = a query groups and f = 4h, which is
    72 B s L h^2 (1 + s/(6h) + V/(12 L h))."""
    layers, hidden, _ = run.model
    b, s, v = run.global_batch, run.seq_len, run.vocab
    return 72.0 * b * s * layers * hidden**2 * (1 + s / (6 * hidden) + v / (12 * layers * hidden))
