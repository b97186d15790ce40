"""Compute time from the kernels each GPU runs: GEMMs at their per-GPU shapes, attention, memory-bound work.

A step's computation on one GPU is, per layer and micro-batch, the matrix multiplies of that layer
at the shapes the GPU actually holds (after the TP, CP and EP splits and for the micro-batch), the
attention core, and the work that only moves bytes (norms, activation functions, dropout,
residual adds, the softmax), plus the optimizer step once per step. Each is timed on a roofline
(Williams, Waterman & Patterson 2009): time = max(FLOPs / achieved FLOP/s, bytes / achieved bytes/s).

A GEMM's achieved FLOP/s is ``peak x device.gemm_efficiency x`` its shape's share
(:func:`gemm_efficiency`), following NVIDIA's *Matrix Multiplication Background User's Guide*
(§2.3 typical tile dimensions, §3.1 tile quantization, §3.2 wave quantization): the output is cut
into :data:`TILE` tiles, each SM runs one tile at a time, so a partial tile or a partial last wave
of tiles wastes the SMs it leaves idle; and each tile pays a fixed start-up and epilogue cost
(:data:`K_OVERHEAD`) that a short inner dimension cannot hide. ``device.gemm_efficiency`` is the
measured ceiling for a perfectly shaped matmul (:data:`parallelsel.core.hardware.DEVICES`).

The backward pass of a GEMM ``Y[M,N] = X[M,K] W[K,N]`` is two GEMMs: ``dX = dY W^T`` (M x K, inner N)
and ``dW = X^T dY`` (K x N, inner M) -- so backward costs twice the forward FLOPs, at shapes of
its own. Attention: the fused kernel (``attention="flash"``) at :data:`FLASH_SHARE` of the device's
GEMM ceiling, or the device's measured rate for the kernel the stack runs (FlashAttention-2, or cuDNN's where the
stack fuses ``cudnn_attention`` and the workload does not ask for ``"fa2"``); the standard kernel (``"standard"``, Korthikanti et al. 2022's baseline) as batched
GEMMs over heads plus the softmax and dropout over the s x s scores, which only move bytes.

Examples:
    >>> import parallelsel as ps
    >>> a100 = ps.DEVICES["a100-80gb"]
    >>> round(gemm_efficiency(8192, 8192, 8192, a100) / a100.gemm_efficiency, 3)   # 2048 tiles on 108 SMs: 19 waves
    0.983
    >>> round(gemm_efficiency(2048, 1536, 12288, a100) / a100.gemm_efficiency, 3)  # 96 tiles: one part-full wave
    0.88
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from ._check import ParallelselError, positive_int
from .hardware import Device, attention_length_factor

__all__ = ["FLASH_SHARE", "FUSED_ALL", "FUSED_BYTES", "K_OVERHEAD", "TILE", "ComputeTime", "Gemm", "WeightPiece",
           "attention_time", "compute_time", "fp8_gemm_time", "gemm_efficiency",
           "gemm_time", "layer_gemms", "moe_layer_parts", "recomputed_gemm_share", "weight_pieces"]

TILE = (256, 128)
"""Output tile of a large half-precision GEMM: NVIDIA's Matrix Multiplication Background guide (§2.3)
names 256x128 as the most efficient of cuBLAS's tiles on A100 and uses it in its quantization
examples (§3). Both orientations are tried; the better one is taken."""

K_OVERHEAD = 128
"""Inner-dimension length a tile spends on start-up and epilogue, so a GEMM of inner size K runs at
K / (K + K_OVERHEAD) of its steady rate. CUTLASS's default Sm80 tensor-op GEMM streams K in 64-deep
slices through a 3-stage pipeline (``default_gemm_configuration.h``: ThreadblockShape 128x256x64,
kStages 3), so two slices are loaded before the first multiply: 2 x 64."""

FLASH_SHARE = 0.72
"""Fused attention's rate relative to the device's GEMM ceiling, for a device without its own
``attention_efficiency`` (:class:`parallelsel.core.hardware.Device`). Dao 2023 (FlashAttention-2,
abstract) reaches 50-73% of the A100's peak; the midpoint, 62%, over the A100 matmul ceiling (85.9%).
Hopper parts carry FlashAttention-2's H100 figure instead (:data:`parallelsel.core.hardware.FA2_HOPPER`)."""

ELEMENTWISE_BYTES = 22
"""Bytes per hidden element per layer that the non-GEMM work moves in forward (16-bit activations):
two LayerNorms (read and write h: 2 x 4 bytes) and two fused bias-dropout-residual adds (read two h,
write one h, write a 1-byte mask: 2 x 7 bytes) -- Megatron-LM's fused kernels, the operations whose
outputs Korthikanti et al. 2022 §4.1 count. Split by TP only with sequence parallelism. A model without
dropout writes no masks (:data:`DROPOUT_MASK_BYTES` less)."""

DROPOUT_MASK_BYTES = 2
"""The two 1-byte dropout masks per hidden element in :data:`ELEMENTWISE_BYTES`, not written when the model trains
without dropout (``Transformer.dropout``: PyTorch's dropout at probability 0 returns its input)."""

SOFTMAX_BYTES = 9
"""Bytes per attention score element in forward for the standard kernel: the fused scale-mask-softmax
reads and writes 2 bytes each, the dropout reads 2, writes 2 and a 1-byte mask (Korthikanti et al.
2022 §4.1: the 2as^2 + as^2 + 2as^2 bytes of softmax output, mask and dropout output they store).
Without dropout only the softmax's 4 (:data:`SOFTMAX_DROPOUT_BYTES` less)."""

SOFTMAX_DROPOUT_BYTES = 5
"""The attention dropout's share of :data:`SOFTMAX_BYTES`: read 2, write 2 and the 1-byte mask."""

OPTIMIZER_BYTES = 32
"""Bytes per parameter one Adam step moves: read and write the fp32 master weight, momentum and
variance (24), read the gradient (4, fp32 main grad), write the 16-bit weight (2), plus the
gradient clipping norm's read (2). Memory-bound (Kingma & Ba 2015, Algorithm 1)."""

FUSED_ALL = ("attention", "rmsnorm", "swiglu", "rope", "cross_entropy", "fp8_cast", "cp_merge", "moe_permute")
"""Every memory-bound operator fused (an MoE layer's token permutation too, which no stack's defaults fuse), with a
FlashAttention-2 class attention kernel: Megatron-LM's own fused
kernels (the default of :func:`compute_time`, on which the 14 Megatron-LM runs of the validation page are timed;
Transformer Engine's cuDNN attention on Hopper is the stack's ``cudnn_attention``, not in this default).
:data:`parallelsel.core.stacks.STACKS` says which of them each stack fuses in each mode."""

FUSED_BYTES = {
    # per hidden element of one RMSNorm: a fused kernel reads and writes it once (2 + 2 bytes); the eager
    # composite of torchtitan's RMSNorm (models/norms.py: self._norm(x.float()).type_as(x) * self.weight, with
    # _norm = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)) runs six kernels over it: the fp32 upcast
    # (read 2, write 4), pow (4, 4), mean (4), the multiply by rsqrt (4, 4), type_as (4, 2), the weight (2, 2).
    "rmsnorm": (4, 36),
    # per q and k element: fused RoPE reads and writes it (2 + 2); torchtitan's eager apply_rotary_emb upcasts
    # to fp32 complex (2, 4), multiplies by freqs_cis (4, 4) and casts back (4, 2).
    "rope": (4, 20),
    # per FFN element: fused SwiGLU reads the two up-projections and writes one (2 + 2 + 2); eager F.silu(a) * b
    # writes silu(a) and reads it back (silu: 2, 2; mul: 4, 2).
    "swiglu": (6, 10),
    # per logit (vocabulary entry per token): a fused loss reads the bf16 logits once (2); eager
    # cross_entropy(logits.float()) upcasts (2, 4), then log_softmax reads it for the max and the sum and
    # writes fp32 (4 + 4, 4).
    "cross_entropy": (2, 18),
    # per element cast to FP8 with tensorwise dynamic scaling: fused into its producer, the amax comes for
    # free and the cast writes both layouts Hopper's TN-only FP8 GEMM needs (read 2, write 1 + 1; TE
    # introduction.rst @4a221f3a: "quantizes both input and input^T"); unfused, an amax pass reads it first
    # (2 more; torchao float8 without torch.compile, docs/float8.md: compile "fuse[s] the float8
    # scaling/casting kernels").
    "fp8_cast": (4, 6),
    # per element of a context-parallel rank's attention output (its queries, its heads), per ring step after the
    # first: the step's partial output is rescaled by its log-sum-exp and added into the running fp32 output.
    # Fused (Transformer Engine's AttnFuncWithCPAndKVP2P, transformer_engine/pytorch/attention: one correction
    # kernel reads the bf16 partial and reads and writes the fp32 output, 2 + 4 + 4); eager (PyTorch's ring
    # attention, torch/distributed/tensor/experimental/_attention.py _SDPAMerger.step: out - sigmoid(block_lse -
    # lse) * (out - block_out) in fp32, three passes: read 4 + 2, write 4; read 4, write 4; read 4 + 4, write 4).
    "cp_merge": (10, 30),
    # per routed element (token x top_k x hidden) of an MoE layer's token shuffle around its experts, before the
    # all-to-all and after it. Unfused, Megatron-Core's moe_utils.py (core_r0.9.0 L155-246, L514-550; at d98e8a6
    # without moe_permute_fusion, which defaults to False, transformer_config.py L941): permute gathers each token
    # once per expert it goes to (read 2, write 2); unpermute's moe_scatter zero-fills its output and scatter-adds
    # the expert outputs into it (write 2; read 2, read and write 2 + 2), weights them by their router
    # probabilities (2, 2) and sums the top_k copies of each token (read 2): 18. Fused (Transformer Engine's
    # moe_permute / moe_unpermute with the probabilities merged, --moe-permute-fusion): the gather (2, 2) and a
    # scatter-weight-sum that reads each copy once (2): 6. Both write the combined token once more
    # (MOE_COMBINE_BYTES).
    "moe_permute": (6, 18),
}
"""Forward bytes per element of the memory-bound operators, ``(fused, unfused)``; backward moves
:data:`BACKWARD_BYTES` times as many. A LayerNorm is one kernel in eager PyTorch too (``nn.LayerNorm``),
so only RMSNorm's count depends on fusion."""

MOE_COMBINE_BYTES = 2
"""Bytes per hidden element of each token an MoE layer writes when it sums the token's top_k expert outputs
back into one (the unpermute's output, 16-bit), beside :data:`FUSED_BYTES` ``"moe_permute"``."""

MOE_SORT_BYTES = 8
"""Bytes per routed element for regrouping the tokens a rank received by local expert and back: with more than
one expert on a rank, Megatron-Core's all-to-all dispatcher copies the received chunks into expert order after
the dispatch and back before the combine (``sort_chunks_by_idxs``, a ``torch.cat`` of the split chunks: read 2,
write 2, twice; token_dispatcher.py core_r0.9.0 L541-546, L571-576)."""

BACKWARD_BYTES = 2.0
"""Backward moves about twice the forward's bytes for elementwise work: it reads the saved input and
the incoming gradient and writes the outgoing gradient."""


@dataclass(frozen=True)
class Gemm:
    """One matrix multiply of a layer's forward pass: output M x N, inner dimension K, ``count`` of them."""

    name: str
    m: int
    n: int
    k: int
    count: int = 1

    @property
    def flops(self) -> float:
        return 2.0 * self.m * self.n * self.k * self.count

    @property
    def backward(self) -> tuple[Gemm, Gemm]:
        """The two GEMMs of this one's backward pass: ``dX = dY W^T`` (M x K, inner N) and
        ``dW = X^T dY`` (K x N, inner M), named ``<name>.dx`` and ``<name>.dw``.

        Examples:
            >>> [(g.m, g.n, g.k) for g in Gemm("fc1", 2048, 4096, 1024).backward]
            [(2048, 1024, 4096), (1024, 4096, 2048)]
        """
        return (Gemm(f"{self.name}.dx", self.m, self.k, self.n, self.count),
                Gemm(f"{self.name}.dw", self.k, self.n, self.m, self.count))

    def efficiency(self, device: Device) -> float:
        """Share of ``device.peak_flops`` this GEMM's FLOPs reach (:func:`gemm_efficiency`)."""
        return gemm_efficiency(self.m, self.n, self.k, device, self.count)

    def time(self, device: Device, fp8: bool = False) -> float:
        """Seconds on ``device`` (:func:`gemm_time`: the roofline of its FLOPs and its bytes); with ``fp8`` at
        the FP8 rate (:func:`fp8_gemm_time`), except the MoE router, which FP8 recipes keep in 16-bit."""
        if fp8 and self.name != "router":
            return _fp8_gemm(self.m, self.n, self.k, device, self.count)
        return gemm_time(self.m, self.n, self.k, device, self.count)


def gemm_efficiency(m: int, n: int, k: int, device: Device, count: int = 1) -> float:
    """Share of ``device.peak_flops`` a GEMM with output M x N and inner dimension K reaches
    (``count`` of them launched as one batched GEMM share the waves).

    ``gemm_efficiency x tile x wave x K / (K + K_OVERHEAD)``, the better of the two tile
    orientations (NVIDIA Matrix Multiplication Background guide §3.1-§3.2): tile = M N / (padded M x
    padded N) for :data:`TILE`-sized tiles; wave = tiles / (waves x SMs).
    """
    m, n, k, count = (positive_int(x, v) for x, v in (("m", m), ("n", n), ("k", k), ("count", count)))
    if not isinstance(device, Device):
        raise ParallelselError(f"device={device!r}: must be a Device")
    return _efficiency(m, n, k, count, device.sms, device.gemm_efficiency)


@lru_cache(maxsize=65536)
def _efficiency(m: int, n: int, k: int, count: int, sms: int, ceiling: float) -> float:
    best = 0.0
    for tm, tn in (TILE, TILE[::-1]):
        rows, cols = -(-m // tm), -(-n // tn)
        tiles = rows * cols * count
        waves = -(-tiles // sms)
        best = max(best, m * n / (rows * tm * cols * tn) * tiles / (waves * sms))
    return ceiling * best * k / (k + K_OVERHEAD)


def gemm_time(m: int, n: int, k: int, device: Device, count: int = 1, element_bytes: float = 2.0) -> float:
    """Seconds for ``count`` GEMMs (M x N output, inner K) on ``device``, batched: the roofline of the
    FLOPs at :func:`gemm_efficiency` and the bytes of A, B and C (``element_bytes`` each) at the
    achieved HBM rate."""
    return _gemm(m, n, k, device, count, element_bytes)


@lru_cache(maxsize=65536)
def _gemm(m: int, n: int, k: int, device: Device, count: int = 1, element_bytes: float = 2.0) -> float:
    if m * n * k * count == 0:
        return 0.0
    flops = 2.0 * m * n * k * count
    moved = element_bytes * (m * k + k * n + m * n) * count
    return max(flops / (device.peak_flops * _efficiency(m, n, k, count, device.sms, device.gemm_efficiency)),
               moved / device.memory_rate)


def fp8_gemm_time(m: int, n: int, k: int, device: Device, count: int = 1) -> float:
    """Seconds for ``count`` FP8 GEMMs (M x N output, inner K) on ``device``: the FLOPs at
    ``device.fp8_flops x device.fp8_efficiency`` times the shape's tile and wave share (as
    :func:`gemm_efficiency`), or the bytes (1-byte inputs, 2-byte output) at the achieved HBM rate,
    whichever is longer. Casting the inputs is charged apart (:data:`FUSED_BYTES` ``"fp8_cast"``)."""
    if not device.fp8_flops:
        raise ParallelselError(f"device={device.name!r}: has no FP8 tensor cores (fp8_flops=0)")
    return _fp8_gemm(m, n, k, device, count)


@lru_cache(maxsize=65536)
def _fp8_gemm(m: int, n: int, k: int, device: Device, count: int = 1) -> float:
    if m * n * k * count == 0:
        return 0.0
    shape = _efficiency(m, n, k, count, device.sms, 1.0)
    flops = 2.0 * m * n * k * count
    moved = (m * k + k * n + 2 * m * n) * count
    return max(flops / (device.fp8_flops * device.fp8_efficiency * shape),
               moved / device.memory_rate)


def layer_gemms(model, tokens: int, tp: int = 1, ep: int = 1, etp: int | None = None) -> tuple[Gemm, ...]:
    """The weight GEMMs of one transformer layer's forward pass for ``tokens`` tokens on one GPU.

    Megatron-LM's TP split (Shoeybi et al. 2019 §3): QKV and the MLP's first matrix by columns (N / tp),
    the attention output and the MLP's second matrix by rows (K / tp). MoE: each of the experts / ep
    local experts receives tokens x top_k x ep / experts tokens (balanced routing), plus the router; with an
    expert TP ``etp`` other than ``tp`` (MoE parallel folding) the experts are split etp ways and a rank's
    experts see the tokens of etp of the tp ranks' sequence shards: tokens x etp / tp of them.
    """
    h, q, kv, f = model.hidden, model.q_dim, model.kv_dim, model.ffn_hidden
    up = -(-(2 if model.gated_mlp else 1) * f // tp)
    out = [Gemm("qkv", tokens, -(-(q + 2 * kv) // tp), h), Gemm("proj", tokens, h, -(-q // tp))]
    if model.is_moe:
        etp = tp if etp is None else etp
        # (exact: the ratio's float error is far below the 1 / (tp x experts) a non-integer is from an integer)
        routed = max(1, math.floor(model.routed_tokens(tokens, tp, etp) * ep / model.experts))
        local = max(1, model.experts // ep)
        out += [Gemm("router", tokens, model.experts, h),
                Gemm("fc1", routed, -(-(2 if model.gated_mlp else 1) * f // etp), h, local),
                Gemm("fc2", routed, h, -(-f // etp), local)]
    else:
        out += [Gemm("fc1", tokens, up, h), Gemm("fc2", tokens, h, -(-f // tp))]
    return tuple(out)


@dataclass(frozen=True)
class ComputeTime:
    """Seconds of computation one GPU spends per micro-batch on its layers (the pipeline stage's share).

    ``forward`` and ``backward`` (backward includes recomputation) sum to ``total``; ``gemm``,
    ``attention`` and ``memory`` (memory-bound work) split the same total another way.
    """

    forward: float
    backward: float
    gemm: float
    attention: float
    memory: float

    @property
    def total(self) -> float:
        return self.forward + self.backward


def compute_time(model, micro_batch: int, seq_len: int, device: Device, tp: int = 1, pp: int = 1, cp: int = 1,
                 ep: int = 1, sp: bool = False, recompute: str = "none", attention: str = "flash",
                 recompute_share: float = 1.0, fused: tuple[str, ...] = FUSED_ALL, fp8: bool = False,
                 etp: int | None = None) -> ComputeTime:
    """Compute seconds per micro-batch on one GPU of a stage holding layers / pp layers (and 1/pp of the
    output layer's work, as the even FLOP split of :mod:`parallelsel.core.estimate` assumes).

    Forward: the layer GEMMs (:func:`layer_gemms`), attention, the elementwise bytes
    (:data:`ELEMENTWISE_BYTES`, GeLU/SwiGLU on the MLP width, the standard softmax's
    :data:`SOFTMAX_BYTES`) and the logits GEMM. Backward: the two GEMMs per forward GEMM, attention
    backward at twice the forward FLOPs, :data:`BACKWARD_BYTES` x the forward bytes; full
    recomputation repeats the layers' forward, selective the attention core (Korthikanti et al. 2022 §5),
    op (torchtitan's op-level SAC) the matmuls it does not save (:func:`recomputed_gemm_share`) and all
    the memory-bound work, not the attention. ``recompute_share``: the share of layers that recompute
    (``Plan.recompute_share``).

    ``fused``: the operators that run fused (:data:`FUSED_BYTES`; the stack's, from
    :data:`parallelsel.core.stacks.STACKS`); the others run as eager PyTorch runs them, each pass
    over memory counted. ``fp8``: the linear layers' GEMMs run in FP8 (:func:`fp8_gemm_time`), plus the
    casts of their inputs, weights and output gradients; attention and the output layer stay bf16. ``etp``: the
    experts' tensor-parallel degree (``Plan.etp``; None: ``tp``).
    """
    if fp8 and not device.fp8_flops:
        raise ParallelselError(f"fp8=True: device {device.name!r} has no FP8 tensor cores")
    return _compute(model, micro_batch, seq_len, device, tp, pp, cp, ep, sp, recompute, attention,
                    float(recompute_share), tuple(sorted(fused)), bool(fp8), etp)


def recomputed_gemm_share(model, name: str) -> float:
    """Share of the FLOPs of :func:`layer_gemms`' GEMM ``name`` that op-level SAC runs again in backward:
    the matmuls of :func:`parallelsel.core.model.block_matmuls` it does not save
    (:func:`parallelsel.core.model.op_saved_matmuls`), grouped as this module fuses them (``qkv`` = wq, wk,
    wv; ``proj`` = wo; ``fc1`` = w1 and w3 when gated; ``fc2`` = w2).

    Examples:
        >>> import parallelsel as ps
        >>> m = ps.MODELS["llama3-8b"]
        >>> recomputed_gemm_share(m, "qkv"), recomputed_gemm_share(m, "proj"), recomputed_gemm_share(m, "fc1")
        (0.16666666666666666, 1.0, 0.5)
    """
    from .model import block_matmuls, op_saved_matmuls

    group = {"wq": "qkv", "wk": "qkv", "wv": "qkv", "wo": "proj", "w1": "fc1", "w3": "fc1", "fc1": "fc1",
             "w2": "fc2", "fc2": "fc2"}
    saved = op_saved_matmuls(model)
    total = redo = 0.0
    for mm, i, o in block_matmuls(model):
        if group[mm] == name:
            total += i * o
            redo += 0.0 if mm in saved else i * o
    return redo / total if total else 0.0


def stage_compute_times(model, micro_batch: int, seq_len: int, device: Device, split, tp: int = 1, cp: int = 1,
                        ep: int = 1, sp: bool = False, recompute: str = "none", attention: str = "flash",
                        recompute_share: float = 1.0, fused: tuple[str, ...] = FUSED_ALL,
                        fp8: bool = False, etp: int | None = None) -> tuple[ComputeTime, ...]:
    """Compute seconds per micro-batch on one GPU of each pipeline rank, rank ``i`` holding ``split[i]`` layers
    (the other arguments as :func:`compute_time` takes them).

    Each rank runs its own layers (the per-layer kernels of :func:`compute_time`); the output layer's
    logits GEMM and loss (and their backward) run on the last rank only, where Megatron-LM and torchtitan
    place them (Narayanan et al. 2021 §3.2), so an even split by layers leaves the last rank the slowest.
    The embedding lookup is a gather, not a GEMM, and is not timed. The slowest rank sets the pipeline's
    pace (:func:`parallelsel.core.estimate.estimate`).

    Examples:
        >>> import parallelsel as ps
        >>> m, d = ps.MODELS["llama3-8b"], ps.DEVICES["h100-sxm-80gb"]
        >>> f = [round(c.forward * 1e3, 2) for c in stage_compute_times(m, 1, 8192, d, (8, 8, 8, 8))]
        >>> f[0] == f[1] == f[2] < f[3]
        True
    """
    b, s = positive_int("micro_batch", micro_batch), positive_int("seq_len", seq_len)
    split = tuple(positive_int(f"split[{i}]", n) for i, n in enumerate(split))
    return checked_stage_times(model, b, s, device, split, tp, cp, ep, sp, recompute, attention, recompute_share,
                               fused, fp8, etp)


def checked_stage_times(model, b: int, s: int, device: Device, split: tuple, tp: int, cp: int, ep: int, sp: bool,
                        recompute: str, attention: str, share: float, fused: tuple[str, ...],
                        fp8: bool, etp: int | None = None) -> tuple[ComputeTime, ...]:
    """:func:`stage_compute_times` for arguments already checked -- a :class:`parallelsel.Plan` and
    :class:`parallelsel.Workload` validated them -- as the estimate calls it tens of thousands of times a search."""
    if fp8 and not device.fp8_flops:
        raise ParallelselError(f"fp8=True: device {device.name!r} has no FP8 tensor cores")
    return _stage_times(model, b, s, device, split, tp, cp, ep, sp, recompute, attention, float(share),
                        tuple(sorted(fused)), bool(fp8), etp)


@lru_cache(maxsize=8192)
def _stage_times(model, b, s, device, split, tp, cp, ep, sp, recompute, attention, share=1.0, fused=FUSED_ALL,
                 fp8=False, etp=None) -> tuple[ComputeTime, ...]:
    layer, head = layer_and_head_times(model, b, s, device, tp, cp, ep, sp, recompute, attention, share, fused, fp8,
                                       etp)
    out = []
    last = len(split) - 1
    for i, n in enumerate(split):
        k = 1.0 if i == last else 0.0
        out.append(ComputeTime(*(n * x + k * y for x, y in zip(layer, head))))
    return tuple(out)


@lru_cache(maxsize=8192)
def layer_and_head_times(model, b, s, device, tp, cp, ep, sp, recompute, attention, share=1.0, fused=FUSED_ALL,
                         fp8=False, etp=None) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """One layer's and the output layer's (forward, backward, gemm, attention, memory) seconds per micro-batch
    (arguments as :func:`compute_time` passes them on, already checked): the parts :func:`compute_time` and
    :func:`stage_compute_times` add up."""
    tokens = b * (s // cp)
    gemms = layer_gemms(model, tokens, tp, ep, etp)
    g_fwd = sum(g.time(device, fp8) for g in gemms)
    g_bwd = sum(d.time(device, fp8) for g in gemms for d in g.backward)
    a_fwd, a_bwd = _attention(model, b, s, cp, tp, device, attention, "cudnn_attention" in fused)
    rate = device.memory_rate
    m_fwd = _elementwise_bytes(model, tokens, s, tp, sp, attention, fused) / rate
    if model.is_moe:
        m_fwd += _moe_shuffle_bytes(model, tokens, tp, sp, ep, fused, etp) / rate
    if cp > 1:   # the ring's merge of each step's partial output (the backward's dQ, dK, dV sums: BACKWARD_BYTES)
        merge = FUSED_BYTES["cp_merge"][0 if "cp_merge" in fused else 1]
        m_fwd += merge * (cp - 1) * tokens * max(1, model.heads // tp) * model.head_dim / rate
    cast_bwd = 0.0
    if fp8:
        c = FUSED_BYTES["fp8_cast"][0 if "fp8_cast" in fused else 1]
        # Forward: each GEMM's input and its weight; backward: each GEMM's output gradient.
        m_fwd += c * sum(g.m * g.k * g.count + g.k * g.n * g.count for g in gemms if g.name != "router") / rate
        cast_bwd = c * sum(g.m * g.n * g.count for g in gemms if g.name != "router") / rate
    v = -(-model.vocab // tp)
    head = Gemm("logits", tokens, v, model.hidden)
    ce = FUSED_BYTES["cross_entropy"][0 if "cross_entropy" in fused else 1] * tokens * v / rate
    logits = head.time(device) + ce
    logits_bwd = sum(d.time(device) for d in head.backward) + BACKWARD_BYTES * ce
    if recompute == "full":
        g_redo = g_fwd
    elif recompute == "op":
        g_redo = sum(g.time(device, fp8) * recomputed_gemm_share(model, g.name) for g in gemms)
    else:
        g_redo = 0.0
    a_redo = a_fwd if recompute in ("full", "selective") else 0.0
    m_redo = m_fwd if recompute in ("full", "op") else 0.0
    g_redo, a_redo, m_redo = share * g_redo, share * a_redo, share * m_redo
    forward = g_fwd + a_fwd + m_fwd
    backward = g_bwd + a_bwd + BACKWARD_BYTES * m_fwd + cast_bwd + g_redo + a_redo + m_redo
    gemm = g_fwd + g_bwd + g_redo
    attn = a_fwd + a_bwd + a_redo
    head_gemm = logits + logits_bwd - (1 + BACKWARD_BYTES) * ce
    return ((forward, backward, gemm, attn, forward + backward - gemm - attn),
            (logits, logits_bwd, head_gemm, 0.0, logits + logits_bwd - head_gemm))


@lru_cache(maxsize=4096)
def moe_layer_parts(model, b, s, device, tp, cp, ep, sp, recompute, attention, share=1.0, fused=FUSED_ALL,
                    fp8=False, etp=None) -> tuple[float, float, float, float, float]:
    """One MoE layer's seconds per micro-batch split as Megatron-Core's EP overlap schedules them
    (``models/common/model_chunk_schedule_plan.py`` L236-300 @d98e8a6): ``(pre_f, pre_b, mlp_f, mlp_dgrad,
    mlp_wgrad)`` -- the work before the dispatch (attention, norms, router, token shuffle: everything but the
    experts) forward and backward, and the experts' GEMMs forward, input-gradient and weight-gradient. They sum to
    :func:`layer_and_head_times`' layer forward and backward (arguments as it takes them)."""
    (forward, backward, *_), _ = layer_and_head_times(model, b, s, device, tp, cp, ep, sp, recompute, attention,
                                                      share, fused, fp8, etp)
    experts = [g for g in layer_gemms(model, b * (s // cp), tp, ep, etp) if g.name in ("fc1", "fc2")]
    mlp_f = sum(g.time(device, fp8) for g in experts)
    dgrad = sum(g.backward[0].time(device, fp8) for g in experts)
    wgrad = sum(g.backward[1].time(device, fp8) for g in experts)
    return forward - mlp_f, backward - dgrad - wgrad, mlp_f, dgrad, wgrad


@lru_cache(maxsize=8192)
def _compute(model, b, s, device, tp, pp, cp, ep, sp, recompute, attention, share=1.0, fused=FUSED_ALL,
             fp8=False, etp=None) -> ComputeTime:
    # layers / pp layers and 1/pp of the output layer (the even split of compute_time's contract).
    layer, head = layer_and_head_times(model, b, s, device, tp, cp, ep, sp, recompute, attention, share, fused, fp8,
                                       etp)
    layers = model.layers / pp
    return ComputeTime(*(layers * x + y / pp for x, y in zip(layer, head)))


@dataclass(frozen=True)
class WeightPiece:
    """One weight matrix of a layer with the compute that runs while it is in use, for one micro-batch.

    ``params``: the matrix's elements on this GPU; ``forward`` / ``backward``: seconds of the kernels
    from this matrix's GEMM up to the next weight GEMM in execution order (forward: the attention core
    after QKV; backward: the attention core's backward after the output projection's), with the
    layer's memory-bound work split evenly over the pieces.
    """

    name: str
    params: int
    forward: float
    backward: float


def weight_pieces(model, micro_batch: int, seq_len: int, device: Device, tp: int = 1,
                  attention: str = "flash") -> tuple[WeightPiece, ...]:
    """The weight GEMMs of one dense layer in execution order (QKV, output projection, MLP in, MLP out)
    with the kernel seconds each one heads (:func:`layer_gemms`, the attention core and the
    elementwise bytes of :func:`compute_time`): the granularity at which a ZeRO-3 implementation that
    gathers parameter by parameter sees the layer. The pieces sum to :func:`compute_time`'s per-layer
    forward and backward (without recomputation).

    Examples:
        >>> import parallelsel as ps
        >>> [p.name for p in weight_pieces(ps.MODELS["gpt3-175b"], 1, 2048, ps.DEVICES["a100-80gb"])]
        ['qkv', 'proj', 'fc1', 'fc2']
    """
    if model.is_moe:
        raise ParallelselError(f"model={model!r}: weight_pieces covers dense layers (an MoE layer routes tokens)")
    b, s = positive_int("micro_batch", micro_batch), positive_int("seq_len", seq_len)
    tokens = b * s
    a_fwd, a_bwd = _attention(model, b, s, 1, tp, device, attention)
    mem = _elementwise_bytes(model, tokens, s, tp, False, attention) / device.memory_rate
    out = []
    for g in layer_gemms(model, tokens, tp):
        forward = g.time(device) + mem / 4 + (a_fwd if g.name == "qkv" else 0.0)
        backward = (sum(b.time(device) for b in g.backward) + BACKWARD_BYTES * mem / 4
                    + (a_bwd if g.name == "proj" else 0.0))
        out.append(WeightPiece(g.name, g.n * g.k, forward, backward))
    return tuple(out)


def attention_time(model, micro_batch: int, seq_len: int, device: Device, tp: int = 1, cp: int = 1,
                   attention: str = "flash", fused: tuple[str, ...] = FUSED_ALL) -> tuple[float, float]:
    """Forward and backward seconds of one layer's attention core on one GPU, per micro-batch: its 1/cp of the
    queries against the whole sequence, its 1/tp of the heads -- the part of :func:`compute_time` that a
    context-parallel ring hides its transfers under (:mod:`parallelsel.core.comm`). ``fused`` as in
    :func:`compute_time` (``"cudnn_attention"`` in it: cuDNN's kernel where the device has a rate for it).

    Examples:
        >>> import parallelsel as ps
        >>> f, b = attention_time(ps.MODELS["llama3-8b"], 1, 8192, ps.DEVICES["h100-sxm-80gb"])
        >>> round(b / f, 1)   # backward: twice the forward's FLOPs (at the backward's own rate for this length)
        2.0
    """
    return _attention(model, micro_batch, seq_len, cp, tp, device, attention, "cudnn_attention" in fused)


def _attention(model, b: int, s: int, cp: int, tp: int, device: Device, attention: str,
               cudnn: bool = False) -> tuple[float, float]:
    # Forward and backward seconds of the attention core (QK^T and the weighted sum over V) of one layer;
    # ``cudnn``: the stack runs cuDNN's fused kernel where the device has a rate for it. The full s x s FLOPs at
    # the kernel's benchmark rate (benchmarks halve a causal mask's FLOPs): causal attention at half its benchmark
    # speed, which measured steps of two stacks support (tests/test_stack_runs.py, docs/validation.md).
    heads = max(1, model.heads // tp)
    q = s // cp
    d = model.head_dim
    if attention != "standard":   # "flash": the stack's fused kernel; "fa2": FlashAttention-2 whatever it fuses
        flops = 4.0 * b * heads * q * s * d
        cudnn = bool(cudnn and attention == "flash" and device.cudnn_attention_efficiency)
        share = device.cudnn_attention_efficiency if cudnn else device.attention_efficiency
        rate = device.peak_flops * (share or device.gemm_efficiency * FLASH_SHARE)
        if not share:   # the length curve is the Hopper figures' (parallelsel.core.hardware.FA3_FIGURES_H100)
            return flops / rate, 2 * flops / rate
        # A ring step sweeps the keys of one block (s/cp tokens), a plain kernel the whole sequence.
        kernel, keys = ("cudnn" if cudnn else "fa2"), max(1, s // cp)   # (a plan with cp > s is refused, not timed)
        return (flops / rate * attention_length_factor(kernel, "forward", keys),
                2 * flops / rate * attention_length_factor(kernel, "backward", keys))
    batch = b * heads
    fwd = gemm_time(q, s, d, device, batch) + gemm_time(q, d, s, device, batch)
    bwd = (gemm_time(q, d, s, device, batch) + gemm_time(s, d, q, device, batch)      # dQ, dK from dS
           + gemm_time(q, s, d, device, batch) + gemm_time(s, d, q, device, batch))   # dP from dO, dV
    return fwd, bwd


def _elementwise_bytes(model, tokens: int, s: int, tp: int, sp: bool, attention: str,
                       fused: tuple[str, ...] = FUSED_ALL) -> float:
    # Forward bytes of one layer's memory-bound work on one GPU: ELEMENTWISE_BYTES for the norms and residual
    # adds as fused kernels, plus an eager RMSNorm's extra passes; the activation (GeLU, or SwiGLU fused or not);
    # rotary embeddings on q and k; the standard kernel's softmax.
    h = model.hidden
    f = model.ffn_hidden * model.top_k / tp
    if model.gated_mlp:
        act = FUSED_BYTES["swiglu"][0 if "swiglu" in fused else 1] * f
    else:
        act = 2 * 2 * f   # read the GeLU's input, write its output (one kernel either way)
    norm = ELEMENTWISE_BYTES - (0 if model.dropout else DROPOUT_MASK_BYTES)
    if model.norm == "rmsnorm" and "rmsnorm" not in fused:
        norm += 2 * (FUSED_BYTES["rmsnorm"][1] - FUSED_BYTES["rmsnorm"][0])   # two norms per layer
    replicated = norm * h / (tp if sp else 1)
    rope = 0.0
    if model.position == "rotary":
        rope = FUSED_BYTES["rope"][0 if "rope" in fused else 1] * (model.q_dim + model.kv_dim) / tp
    softmax = SOFTMAX_BYTES - (0 if model.dropout else SOFTMAX_DROPOUT_BYTES)
    scores = softmax * max(1, model.heads // tp) * s if attention == "standard" else 0.0
    return tokens * (replicated + act + rope + scores)


def _moe_shuffle_bytes(model, tokens: int, tp: int, sp: bool, ep: int, fused: tuple[str, ...] = FUSED_ALL,
                       etp: int | None = None) -> float:
    # Forward bytes of one MoE layer's token shuffle on one GPU (Megatron-Core's all-to-all dispatcher,
    # token_dispatcher.py core_r0.9.0 L487-606, the same steps at d98e8a6 L624-909): permute and unpermute act
    # on the rank's own tokens (1/tp of them under sequence parallelism: MoE with TP requires it), each sent to
    # top_k experts; after the all-to-all and the expert-TP all-gather a rank holds tokens x top_k x etp / tp
    # routed tokens (balanced routing), which it regroups by local expert when it has more than one.
    h, k = model.hidden, model.top_k
    own = tokens / (tp if sp else 1)
    shuffle = own * h * (FUSED_BYTES["moe_permute"][0 if "moe_permute" in fused else 1] * k + MOE_COMBINE_BYTES)
    if model.experts // ep > 1:
        shuffle += MOE_SORT_BYTES * model.routed_tokens(tokens, tp, etp) * h
    return shuffle


def optimizer_time(params: float, device: Device) -> float:
    """Seconds of one Adam step over ``params`` parameters held by one GPU (:data:`OPTIMIZER_BYTES` each)."""
    return params * OPTIMIZER_BYTES / device.memory_rate


__all__ += ["optimizer_time"]
