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
GEMM ceiling; the standard kernel (``"standard"``, Korthikanti et al. 2022's baseline) as batched
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

from dataclasses import dataclass
from functools import lru_cache

from ._check import ParallelselError, positive_int
from .hardware import Device

__all__ = ["FLASH_SHARE", "K_OVERHEAD", "TILE", "ComputeTime", "Gemm", "WeightPiece", "compute_time", "gemm_efficiency",
           "gemm_time", "layer_gemms", "weight_pieces"]

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
"""Fused attention's rate relative to the device's GEMM ceiling. Dao 2023 (FlashAttention-2,
abstract) reaches 50-73% of the A100's peak; the midpoint, 62%, over the A100 matmul ceiling (85.9%)."""

ELEMENTWISE_BYTES = 22
"""Bytes per hidden element per layer that the non-GEMM work moves in forward (16-bit activations):
two LayerNorms (read and write h: 2 x 4 bytes) and two fused bias-dropout-residual adds (read two h,
write one h, write a 1-byte mask: 2 x 7 bytes) -- Megatron-LM's fused kernels, the operations whose
outputs Korthikanti et al. 2022 §4.1 count. Split by TP only with sequence parallelism."""

SOFTMAX_BYTES = 9
"""Bytes per attention score element in forward for the standard kernel: the fused scale-mask-softmax
reads and writes 2 bytes each, the dropout reads 2, writes 2 and a 1-byte mask (Korthikanti et al.
2022 §4.1: the 2as^2 + as^2 + 2as^2 bytes of softmax output, mask and dropout output they store)."""

OPTIMIZER_BYTES = 32
"""Bytes per parameter one Adam step moves: read and write the fp32 master weight, momentum and
variance (24), read the gradient (4, fp32 main grad), write the 16-bit weight (2), plus the
gradient clipping norm's read (2). Memory-bound (Kingma & Ba 2015, Algorithm 1)."""

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

        >>> [(g.m, g.n, g.k) for g in Gemm("fc1", 2048, 4096, 1024).backward]
        [(2048, 1024, 4096), (1024, 4096, 2048)]
        """
        return (Gemm(f"{self.name}.dx", self.m, self.k, self.n, self.count),
                Gemm(f"{self.name}.dw", self.k, self.n, self.m, self.count))

    def efficiency(self, device: Device) -> float:
        """Share of ``device.peak_flops`` this GEMM's FLOPs reach (:func:`gemm_efficiency`)."""
        return gemm_efficiency(self.m, self.n, self.k, device, self.count)

    def time(self, device: Device) -> float:
        """Seconds on ``device`` (:func:`gemm_time`: the roofline of its FLOPs and its bytes)."""
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
               moved / (device.hbm_bandwidth * device.memory_efficiency))


def layer_gemms(model, tokens: int, tp: int = 1, ep: int = 1) -> tuple[Gemm, ...]:
    """The weight GEMMs of one transformer layer's forward pass for ``tokens`` tokens on one GPU.

    Megatron-LM's TP split (Shoeybi et al. 2019 §3): QKV and the MLP's first matrix by columns (N / tp),
    the attention output and the MLP's second matrix by rows (K / tp). MoE: each of the experts / ep
    local experts receives tokens x top_k x ep / experts tokens (balanced routing), plus the router.
    """
    h, kv, f = model.hidden, model.kv_dim, model.ffn_hidden
    up = -(-(2 if model.gated_mlp else 1) * f // tp)
    out = [Gemm("qkv", tokens, -(-(h + 2 * kv) // tp), h), Gemm("proj", tokens, h, -(-h // tp))]
    if model.is_moe:
        routed = max(1, tokens * model.top_k * ep // model.experts)
        local = max(1, model.experts // ep)
        out += [Gemm("router", tokens, model.experts, h), Gemm("fc1", routed, up, h, local),
                Gemm("fc2", routed, h, -(-f // tp), local)]
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
                 ep: int = 1, sp: bool = False, recompute: str = "none", attention: str = "flash") -> ComputeTime:
    """Compute seconds per micro-batch on one GPU of a stage holding layers / pp layers (and 1/pp of the
    output layer's work, as the even FLOP split of :mod:`parallelsel.core.estimate` assumes).

    Forward: the layer GEMMs (:func:`layer_gemms`), attention, the elementwise bytes
    (:data:`ELEMENTWISE_BYTES`, GeLU/SwiGLU on the MLP width, the standard softmax's
    :data:`SOFTMAX_BYTES`) and the logits GEMM. Backward: the two GEMMs per forward GEMM, attention
    backward at twice the forward FLOPs, :data:`BACKWARD_BYTES` x the forward bytes; full
    recomputation repeats the layers' forward, selective the attention core (Korthikanti et al. 2022 §5).
    """
    return _compute(model, micro_batch, seq_len, device, tp, pp, cp, ep, sp, recompute, attention)


def stage_compute_times(model, micro_batch: int, seq_len: int, device: Device, split, tp: int = 1, cp: int = 1,
                        ep: int = 1, sp: bool = False, recompute: str = "none",
                        attention: str = "flash") -> tuple[ComputeTime, ...]:
    """Compute seconds per micro-batch on one GPU of each pipeline rank, rank ``i`` holding ``split[i]`` layers.

    Each rank runs its own layers (the per-layer kernels of :func:`compute_time`); the output layer's
    logits GEMM (and its backward) runs on the last rank only, where Megatron-LM and torchtitan place
    it (Narayanan et al. 2021 §3.2), so an even split by layers leaves the last rank the slowest. The
    embedding lookup is a gather, not a GEMM, and is not timed. The slowest rank sets the pipeline's
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
    return _stage_times(model, b, s, device, split, tp, cp, ep, sp, recompute, attention)


@lru_cache(maxsize=8192)
def _stage_times(model, b, s, device, split, tp, cp, ep, sp, recompute, attention) -> tuple[ComputeTime, ...]:
    layer, head = layer_and_head_times(model, b, s, device, tp, cp, ep, sp, recompute, attention)
    out = []
    last = len(split) - 1
    for i, n in enumerate(split):
        k = 1.0 if i == last else 0.0
        out.append(ComputeTime(*(n * x + k * y for x, y in zip(layer, head))))
    return tuple(out)


@lru_cache(maxsize=8192)
def layer_and_head_times(model, b, s, device, tp, cp, ep, sp, recompute, attention) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """One layer's and the output layer's (forward, backward, gemm, attention, memory) seconds per micro-batch
    (arguments as :func:`compute_time` takes them, already checked): the parts :func:`stage_compute_times` adds."""
    tokens = b * (s // cp)
    gemms = layer_gemms(model, tokens, tp, ep)
    g_fwd = sum(g.time(device) for g in gemms)
    g_bwd = sum(d.time(device) for g in gemms for d in g.backward)
    a_fwd, a_bwd = _attention(model, b, s, cp, tp, device, attention)
    m_fwd = _elementwise_bytes(model, tokens, s, tp, sp, attention) / (device.hbm_bandwidth * device.memory_efficiency)
    v = -(-model.vocab // tp)
    head = Gemm("logits", tokens, v, model.hidden)
    logits = head.time(device)
    logits_bwd = sum(d.time(device) for d in head.backward)
    extra = {"full": g_fwd + a_fwd + m_fwd, "selective": a_fwd, "none": 0.0}[recompute]
    forward = g_fwd + a_fwd + m_fwd
    backward = g_bwd + a_bwd + BACKWARD_BYTES * m_fwd + extra
    gemm = g_fwd + g_bwd + (g_fwd if recompute == "full" else 0.0)
    attn = a_fwd + a_bwd + (a_fwd if recompute in ("full", "selective") else 0.0)
    return ((forward, backward, gemm, attn, forward + backward - gemm - attn),
            (logits, logits_bwd, logits + logits_bwd, 0.0, 0.0))


@lru_cache(maxsize=8192)
def _compute(model, b, s, device, tp, pp, cp, ep, sp, recompute, attention) -> ComputeTime:
    tokens = b * (s // cp)
    gemms = layer_gemms(model, tokens, tp, ep)
    g_fwd = sum(g.time(device) for g in gemms)
    g_bwd = sum(d.time(device) for g in gemms for d in g.backward)
    a_fwd, a_bwd = _attention(model, b, s, cp, tp, device, attention)
    m_fwd = _elementwise_bytes(model, tokens, s, tp, sp, attention) / (device.hbm_bandwidth * device.memory_efficiency)
    layers = model.layers / pp
    v = -(-model.vocab // tp)
    head = Gemm("logits", tokens, v, model.hidden)
    logits = head.time(device)
    logits_bwd = sum(d.time(device) for d in head.backward)
    extra = {"full": g_fwd + a_fwd + m_fwd, "selective": a_fwd, "none": 0.0}[recompute]
    forward = layers * (g_fwd + a_fwd + m_fwd) + logits / pp
    backward = layers * (g_bwd + a_bwd + BACKWARD_BYTES * m_fwd + extra) + logits_bwd / pp
    gemm = layers * (g_fwd + g_bwd + (g_fwd if recompute == "full" else 0.0)) + (logits + logits_bwd) / pp
    attn = layers * (a_fwd + a_bwd + (a_fwd if recompute in ("full", "selective") else 0.0))
    return ComputeTime(forward, backward, gemm, attn, forward + backward - gemm - attn)


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
    mem = _elementwise_bytes(model, tokens, s, tp, False, attention) / (device.hbm_bandwidth * device.memory_efficiency)
    out = []
    for g in layer_gemms(model, tokens, tp):
        forward = g.time(device) + mem / 4 + (a_fwd if g.name == "qkv" else 0.0)
        backward = (sum(b.time(device) for b in g.backward) + BACKWARD_BYTES * mem / 4
                    + (a_bwd if g.name == "proj" else 0.0))
        out.append(WeightPiece(g.name, g.n * g.k, forward, backward))
    return tuple(out)


def _attention(model, b: int, s: int, cp: int, tp: int, device: Device, attention: str) -> tuple[float, float]:
    # Forward and backward seconds of the attention core (QK^T and the weighted sum over V) of one layer.
    heads = max(1, model.heads // tp)
    q = s // cp
    d = model.head_dim
    if attention == "flash":
        flops = 4.0 * b * heads * q * s * d
        rate = device.peak_flops * device.gemm_efficiency * FLASH_SHARE
        return flops / rate, 2 * flops / rate
    batch = b * heads
    fwd = gemm_time(q, s, d, device, batch) + gemm_time(q, d, s, device, batch)
    bwd = (gemm_time(q, d, s, device, batch) + gemm_time(s, d, q, device, batch)      # dQ, dK from dS
           + gemm_time(q, s, d, device, batch) + gemm_time(s, d, q, device, batch))   # dP from dO, dV
    return fwd, bwd


def _elementwise_bytes(model, tokens: int, s: int, tp: int, sp: bool, attention: str) -> float:
    # Forward bytes of one layer's memory-bound work on one GPU.
    h = model.hidden
    act = (3 if model.gated_mlp else 2) * 2 * model.ffn_hidden / tp   # read the MLP's input(s), write its output
    replicated = ELEMENTWISE_BYTES * h / (tp if sp else 1)
    scores = SOFTMAX_BYTES * max(1, model.heads // tp) * s if attention == "standard" else 0.0
    return tokens * (replicated + act + scores)


def optimizer_time(params: float, device: Device) -> float:
    """Seconds of one Adam step over ``params`` parameters held by one GPU (:data:`OPTIMIZER_BYTES` each)."""
    return params * OPTIMIZER_BYTES / (device.hbm_bandwidth * device.memory_efficiency)


__all__ += ["optimizer_time"]
