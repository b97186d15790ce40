"""Per-device training memory, in bytes: model states, activations, the FSDP gather peak.

Three sources, each cited where its formula is used:

* model states (weights, gradients, optimizer) by ZeRO stage -- Rajbhandari et al. 2020, "ZeRO:
  Memory Optimizations Toward Training Trillion Parameter Models", §3.1 and §5 / Figure 1;
* activations per transformer layer, with tensor parallelism (TP), sequence parallelism (SP) and
  recomputation, plus the embedding and output layers and the micro-batches a pipeline keeps in
  flight -- Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
  Models", §4.1-§4.3 and Table 2; with a fused attention kernel, the storage rule of Dao 2023,
  "FlashAttention-2: Faster Attention with Better Parallelism and Work Partitioning", §3.1;
* the all-gathered unit of fully sharded data parallelism -- Zhao et al. 2023, "PyTorch FSDP:
  Experiences on Scaling Fully Sharded Data Parallel", §3.2-§3.3.

Examples:
    >>> import parallelsel as ps
    >>> s = model_states(7.5e9, ps.RECIPES["bf16-adam"], dp=64, zero=1)
    >>> round(s.total / 1e9, 1)          # ZeRO Figure 1, P_os: 31.4 GB
    31.4
    >>> gpt3 = ps.MODELS["gpt3-175b"]
    >>> activations_per_layer(gpt3, 1, tp=8, sp=True, recompute="selective") == 2048 * 12288 * 34 / 8
    True
    >>> round(activations_per_layer(gpt3, 1, attention="standard") / activations_per_layer(gpt3, 1), 2)
    3.35
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import NamedTuple

from ._check import ParallelselError, choice, flag, positive_int, positive_number, record
from .model import ATTENTION, MODELS, RECOMPUTE, Transformer, block_matmuls
from .pipeline import KINDS, last_stage_inflight, peak_inflight
from .plan import with_stack_split
from .recipe import RECIPES, Recipe
from .stacks import STACKS, effective_zero, stack_fused, state_shards, wire_bytes

__all__ = [
    "ALLOCATOR_OVERHEAD",
    "layer_shape",
    "CUDA_CONTEXT_BYTES",
    "DEFAULT_HEADROOM",
    "TIGHT_MARGIN",
    "NCCL_COMMUNICATOR_BYTES",
    "budget",
    "check_headroom",
    "communicators",
    "runtime_reserve",
    "usable_memory",
    "MemoryBreakdown",
    "States",
    "activations_per_layer",
    "op_saved_bytes",
    "breakdown",
    "candidate_stages",
    "layers_on",
    "embedding_activations",
    "fsdp_units",
    "FsdpUnit",
    "gather_peak",
    "inflight_microbatches",
    "logits_activations",
    "model_states",
    "stage_params",
    "states_floor",
    "LOSS_PARALLEL_BYTES",
]

ALLOCATOR_OVERHEAD = 0.05
"""Allowance for the caching allocator's fragmentation and temporary buffers, as a fraction of
everything else. An assumption, not a measurement: common practice budgets 5-10%, and Megatron-LM's
``theoretical_memory_usage.py`` adds 5% on top of activations. Measure it for a real job."""


CUDA_CONTEXT_BYTES = 512 * 2**20
"""Device memory the CUDA context takes before the first tensor: driver state, loaded kernels,
cuBLAS/cuDNN handles. Measured at about 300 MB with CUDA >= 11.7's lazy module loading (PyTorch
issue #107667, answer by NVIDIA's ptrblck), 300-400 MB per process (PyTorch issue #20532) and
200-700 MB depending on the machine (PyTorch issue #28113); 512 MiB sits at the top of the
lazy-loading range. Invisible to ``torch.cuda.memory_allocated()``, visible in nvidia-smi."""

NCCL_COMMUNICATOR_BYTES = 688 * 2**20
"""Device memory one NCCL communicator (one process group that has run a collective) holds:
688 MB for groups of more than two A100s and 544 MB for pairs, measured with PyTorch over NVLink
(NVIDIA/nccl issue #964); NCCL's maintainers confirm it grows with every communicator and with
the channels used (NVIDIA/nccl issues #864, #986). Charged once per process group a plan creates
(:func:`communicators`)."""

DEFAULT_HEADROOM = 0.0
"""Fraction of the usable memory a plan must leave free to be accepted (``headroom=`` on
:func:`parallelsel.core.estimate`, :func:`parallelsel.core.search`, :func:`parallelsel.selection_matrix`).
Zero by default: a plan is accepted when it fits the usable memory (driver-reported total less the CUDA
context and NCCL's buffers), because published runs train that close to it -- DeepSpeed's ZeRO-3 run of a
530B model on 640 A100s (Narayanan et al. 2021, Table 2) leaves only about 2% of the usable memory free by
this model (tests/test_uneven_pp.py), so a reserve above that margin refuses a plan that trained. A plan accepted with
less than :data:`TIGHT_MARGIN` free is flagged instead (``Estimate.tight``). Pass a headroom to require
a reserve, for a job whose memory you have not measured."""

TIGHT_MARGIN = 0.03
"""Share of the usable memory below which an accepted plan is flagged tight (``Estimate.tight``, the
``memory_tight`` reason of :func:`parallelsel.core.search.why`): an assumption, not a measurement, for
what this model does not count (temporary buffers of fused kernels, memory spikes of the optimizer step,
the estimate's own error). Measure such a plan's peak before committing to it."""


EAGER_LOSS_BYTES = 8
"""Extra bytes per logit at the peak of an eager (unfused) cross-entropy's backward: ``log_softmax``'s
backward (PyTorch ``aten::_log_softmax_backward_data``) reads the fp32 gradient of its output, which
``nll_loss``'s backward materialises dense (4 bytes a logit), and writes the fp32 gradient of its input
(4 more) while the saved output is still alive. A fused loss (torch.compile, Megatron's vocab-parallel
cross-entropy) works in place."""


LOSS_PARALLEL_BYTES = 12
"""Extra bytes per local logit at the peak of the vocabulary-parallel eager loss a stack with
``loss_parallel`` runs under TP > 1, over the fp32 logits :func:`logits_activations` counts. Its forward
saves fp32 log-probabilities; its backward (NLL and log-softmax together) builds a dense zero gradient,
``exp(log_probs)``, their sum and the sum's product with the loss gradient, three of them alive with the
saved log-probabilities at once: 16 bytes a logit, 12 above the logits (torchtitan @b5bcd76
``components/loss.py`` L179, L201, L214; torch 2.13 ``distributed/tensor/parallel/loss.py`` L197-221,
L451-518, the ``loss_parallel()`` that torchtitan of 2024 ran). Aten's fused log-softmax backward needs
:data:`EAGER_LOSS_BYTES`."""


def communicators(plan) -> int:
    """Process groups (NCCL communicators) each rank of ``plan`` creates and runs collectives on, as
    Megatron-LM's ``parallel_state`` and PyTorch's DeviceMesh create one group per dimension:

    * the default world group (``init_process_group``);
    * the group gradients are reduced over, when it has more than one rank: DP, or with context
      parallelism DP x CP (Megatron-LM's data-parallel group "with context parallel"); with HSDP
      (a shard group smaller than it) its two DeviceMesh dimensions, shard and replicate, instead;
    * TP, PP and the CP ring, each when its degree is above 1;
    * EP, and with it the expert data-parallel group that reduces expert gradients over
      tp x cp x dp / (etp x ep) ranks (Megatron-LM's expert data-parallel group), when that has more than one rank;
      and the experts' own TP group when their TP degree is not the dense one (``Plan.etp``).

    0 for a single GPU.

    Examples:
        >>> from parallelsel.core.plan import Plan
        >>> communicators(Plan(cp=4)), communicators(Plan(dp=8, ep=4))   # world, DPxCP, CP; world, DP, EP, expert DP
        (3, 4)
    """
    if plan.gpus == 1:
        return 0
    grads = plan.dp * plan.cp  # ranks that hold the same weights and reduce their gradients
    n = 1  # the world group (init_process_group)
    n += grads > 1
    n += plan.zero > 0 and plan.shard is not None and 1 < plan.shard < grads  # HSDP: shard and replica groups
    n += plan.tp > 1
    n += plan.pp > 1
    n += plan.cp > 1
    n += plan.ep > 1
    n += plan.ep > 1 and plan.expert_dp > 1
    n += plan.etp is not None and plan.etp > 1
    return n


def runtime_reserve(plan) -> float:
    """Bytes a rank of ``plan`` loses before any tensor: :data:`CUDA_CONTEXT_BYTES` plus
    :data:`NCCL_COMMUNICATOR_BYTES` per process group (:func:`communicators`). The caching
    allocator's fragmentation is counted separately, as :data:`ALLOCATOR_OVERHEAD` of the tensors."""
    return CUDA_CONTEXT_BYTES + NCCL_COMMUNICATOR_BYTES * communicators(plan)


def usable_memory(device, plan) -> float:
    """Bytes the training tensors of ``plan`` can use on ``device``: what the driver reports
    (:attr:`parallelsel.Device.memory`) minus :func:`runtime_reserve`."""
    return device.memory - runtime_reserve(plan)


def budget(device, plan, headroom: float = DEFAULT_HEADROOM) -> float:
    """The most a plan may need per device and still count as fitting:
    :func:`usable_memory` x (1 - ``headroom``).

    Examples:
        >>> import parallelsel as ps
        >>> h100 = ps.DEVICES["h100-sxm-80gb"]
        >>> round(budget(h100, ps.Plan(dp=8, tp=8), headroom=0.0) / 2**20)   # 81559 MiB - 512 - 3 x 688
        78983
    """
    return usable_memory(device, plan) * (1 - check_headroom(headroom))


def check_headroom(headroom) -> float:
    """``headroom`` as a float if it is a fraction in [0, 1); raises ValueError naming it otherwise."""
    h = positive_number("headroom", headroom, allow_zero=True)
    if h >= 1:
        raise ParallelselError(f"headroom={headroom!r}: must be a fraction in [0, 1)")
    return h


# -- model states ---------------------------------------------------------------------------
@dataclass(frozen=True)
class States:
    """Bytes per device of weights (``params``), gradients (``grads``) and optimizer state."""

    params: float
    grads: float
    optimizer: float

    @property
    def total(self) -> float:
        return self.params + self.grads + self.optimizer


def _states(n: float, recipe: Recipe, shards: int, zero: int) -> States:
    # Unchecked core of model_states, used on the fast path of estimate().
    return States(
        recipe.weights * n / (shards if zero >= 3 else 1),
        recipe.grads * n / (shards if zero >= 2 else 1),
        recipe.optimizer * n / (shards if zero >= 1 else 1),
    )


def model_states(params, recipe: Recipe = RECIPES["bf16-adam"], dp: int = 1, zero: int = 0) -> States:
    """Model-state bytes per device for ``params`` parameters replicated over ``dp`` ranks.

    Rajbhandari et al. 2020 (ZeRO), §5 and Figure 1: with Ψ parameters, mixed-precision Adam holds
    2Ψ of weights, 2Ψ of gradients and KΨ of optimizer state (K = 12), i.e. (2 + 2 + K)Ψ per
    rank. Stage 1 (P_os) divides the optimizer state by the data-parallel degree N_d, stage 2
    (P_os+g) also the gradients, stage 3 (P_os+g+p) also the weights: 2Ψ + 2Ψ + KΨ/N_d,
    2Ψ + (2 + K)Ψ/N_d and (2 + 2 + K)Ψ/N_d. The bytes per parameter come from ``recipe``.

    Examples:
        >>> s = model_states(7.5e9, dp=64, zero=3)
        >>> s.params, s.grads, s.optimizer
        (234375000.0, 234375000.0, 1406250000.0)
    """
    n = positive_number("params", params)
    recipe = record("recipe", recipe, Recipe, RECIPES)
    dp = positive_int("dp", dp)
    if isinstance(zero, bool) or zero not in (0, 1, 2, 3):
        raise ParallelselError(f"zero={zero!r}: must be a ZeRO stage 0, 1, 2 or 3")
    return _states(n, recipe, dp, zero)


class _Shape(NamedTuple):
    """The counts the fast path needs, computed once per model (Transformer recomputes them on access)."""

    layers: int
    hidden: int
    kv_dim: int
    ffn: int
    heads: int
    vocab: int
    f_tensors: int  # f-wide tensors an MLP stores per token: 2, or 3 gated; x top_k for MoE
    dense_layer: int  # one layer's parameters outside the experts
    experts: int  # one layer's expert parameters (all experts), 0 for dense models
    embedding: int
    head: int  # output projection + final norm, plus the tied word-embedding copy when pp > 1 (see _stage_params)
    tied: int  # vocab x hidden when embeddings are tied, else 0
    q_dim: int  # width of Q and of the attention output (heads x head_dim; hidden unless head_dim is given)


@lru_cache(maxsize=256)
def layer_shape(model: Transformer) -> _Shape:
    """The counts the memory and traffic formulas read from ``model`` (layers, widths, per-layer dense
    and expert parameters, embedding and head parameters), computed once per model."""
    expert = model.experts * model.expert_params if model.is_moe else 0
    return _Shape(
        model.layers, model.hidden, model.kv_dim, model.ffn_hidden, model.heads, model.vocab,
        (3 if model.gated_mlp else 2) * model.top_k, model.layer_params - expert, expert,
        model.embedding_params, model.head_params, model.vocab * model.hidden if model.tied_embeddings else 0,
        model.q_dim,
    )


# -- activations ----------------------------------------------------------------------------
def _layer_terms(model: Transformer, s: int, b: int, act_bytes: float, attention: str = "flash") -> tuple[float, float, float]:
    """Bytes of one layer's stored activations, split the way Korthikanti et al. §4.1-§4.2 split them.

    Returns ``(shared, split, scores)``: ``shared`` is replicated across a TP group and only SP
    divides it; ``split`` is divided by TP; ``scores`` is what the attention kernel itself keeps
    (also divided by TP, heads are split), which selective recomputation drops. See
    :func:`activations_per_layer` for the breakdown.
    """
    sh = layer_shape(model)
    h, kv, f = sh.hidden, sh.kv_dim, sh.ffn
    sb = s * b
    # Two norm inputs, the QKV-projection input and the MLP input (act_bytes each element) plus the
    # attention-output and MLP-output dropout masks (1 byte each element) when the model trains with dropout.
    shared = sb * (act_bytes * 4 * h + (2 * h if model.dropout else 0))
    # Q (q_dim wide: h unless head_dim is given), K and V (kv_dim wide each), the output-projection input
    # (q_dim), and the MLP's f-wide tensors: the activation's input and output (2), plus the up-projection
    # output when gated (3).
    split = sb * act_bytes * (2 * sh.q_dim + 2 * kv + sh.f_tensors * f)
    if attention == "standard":
        # Softmax output (act_bytes), its dropout mask (1 byte) and the dropout output (act_bytes),
        # a x s x s elements each per sequence; without dropout the product with V reads the softmax output.
        scores = sh.heads * s * sb * ((2 * act_bytes + 1) if model.dropout else act_bytes)
    else:
        # Fused kernel: one fp32 logsumexp per head and query row (FlashAttention-2, Algorithm 1-2).
        scores = _LSE_BYTES * sh.heads * sb
    return shared, split, scores


_LSE_BYTES = 4
"""FlashAttention-2 (Dao 2023, §3.1 Algorithm 1 line 12 and Algorithm 2): the forward writes the
output O and one logsumexp L = m + log(l) per row, in fp32, and the backward recomputes the
attention probabilities from Q, K, V, O and L; nothing of size s x s is stored."""


def activations_per_layer(model: Transformer, micro_batch: int, tp: int = 1, sp: bool = False,
                          recompute: str = "none", seq_len: int | None = None, act_bytes: float = 2,
                          attention: str = "flash") -> float:
    """Bytes of activations one transformer layer stores for backward, per device, per micro-batch.

    ``attention="standard"`` is Korthikanti et al. 2022, Table 2 (s sequence length, b
    micro-batch, h hidden, a heads, t TP):

    ==========================  ========================
    no parallelism              sbh(34 + 5as/h)
    TP                          sbh(10 + 24/t + 5as/(ht))
    TP + SP                     sbh(34/t + 5as/(ht))
    TP + selective recompute    sbh(10 + 24/t)
    TP + SP + selective         sbh(34/t)
    full recompute              2sbh  (2sbh/t with SP: the stored layer input is sequence-sharded)
    ==========================  ========================

    The constants assume 16-bit activations, MHA and a 4h GeLU MLP. They come from §4.1's
    breakdown, which this function evaluates term by term so it also covers other shapes:
    attention 11sbh + 5as²b (QKV input 2sbh, Q and K 4sbh, V 2sbh, output-projection input 2sbh,
    dropout mask sbh; softmax 2as²b, its dropout mask as²b and output 2as²b), MLP 19sbh (input
    2sbh, the 4h-wide GeLU input and output 16sbh, dropout mask sbh), two norm inputs 4sbh.
    §4.2.1: TP splits everything except the norm inputs, the QKV and MLP inputs and the two
    dropout masks (10sbh); §4.2.2: SP splits those too.

    ``attention="flash"`` (the default: FlashAttention-2, Dao 2023, and the fused kernels of
    Transformer Engine and PyTorch SDPA; ``"fa2"`` names FlashAttention-2's kernel, the same memory) stores no s x s tensor: the forward keeps the output O
    (already the output-projection input above) and one fp32 logsumexp per head and row, 4asb
    bytes, and the backward recomputes the probabilities (Dao 2023, §3.1, Algorithms 1-2; the
    attention-dropout mask is regenerated from the RNG state, not stored). The row becomes
    sbh(34 + 4a/h) without parallelism, and the 5as/h term of every row is replaced by 4a/(ht).
    "selective" recomputes the core attention (dropping the scores, or the statistics under flash),
    so both kernels give sbh(10 + 24/t); "full" keeps the layer input; "op" :func:`op_saved_bytes`.

    Generalisation (this library's, stated so it can be checked): K and V are ``kv_dim`` wide
    (GQA), so they scale by kv_dim/h; the MLP's wide tensors scale by ffn_hidden/(4h); a gated MLP
    (SwiGLU) stores a third f-wide tensor (the up-projection output), and an MoE layer stores
    top_k copies of them per token; masks are 1 byte and other tensors ``act_bytes`` each. A model
    trained without dropout (``Transformer.dropout`` False, Llama's) keeps no masks: 2sbh less per layer,
    and the standard kernel keeps only the softmax output (2as²b).
    For the GPT shape with act_bytes=2 and attention="standard" every row above is reproduced exactly.

    Examples:
        >>> import parallelsel as ps
        >>> m = ps.MODELS["gpt3-175b"]
        >>> activations_per_layer(m, 1, attention="standard") == 2048 * 12288 * (34 + 80)
        True
        >>> activations_per_layer(m, 1) == 2048 * 12288 * 34 + 4 * 96 * 2048
        True
    """
    model = record("model", model, Transformer, MODELS)
    b = positive_int("micro_batch", micro_batch)
    t = positive_int("tp", tp)
    sp = flag("sp", sp)
    choice("recompute", recompute, RECOMPUTE)
    choice("attention", attention, ATTENTION)
    s = model.seq_len if seq_len is None else positive_int("seq_len", seq_len)
    act_bytes = positive_number("act_bytes", act_bytes)
    return _activations(model, s, b, t, sp, recompute, act_bytes, attention)


def op_saved_bytes(model: Transformer, s: int, b: int, t: int = 1, sp: bool = False, act_bytes: float = 2,
                   attention: str = "flash") -> dict[str, float]:
    """Bytes one layer keeps per micro-batch under torchtitan's op-level selective activation checkpointing
    (``recompute="op"``), tensor by tensor, per device.

    The block runs under ``torch.utils.checkpoint`` with a policy (``torchtitan/models/llama3/
    parallelize_llama.py`` L218-268 @820504e): the checkpoint keeps the block's input; the outputs of
    ops in ``_save_list`` are cached (MUST_SAVE) -- ``aten.mm`` except every second one
    (:func:`parallelsel.core.model.op_saved_matmuls`), the flash / memory-efficient SDPA ops (output and
    logsumexp) and ``_c10d_functional.reduce_scatter_tensor``; every other op (norms, rotary, SiLU and
    the gating product, residual adds, the other matmuls, all-gathers) is recomputed in backward.

    Per token: the input (``act_bytes`` x h, sequence-split under SP); each saved matmul's output
    (column-parallel ``wq``/``wv``/``w1``: out / t; row-parallel ``wo``/``w2``: the full h-wide partial
    sum before its reduction); the SDPA output (q_dim / t, q_dim = heads x head_dim) and its fp32 logsumexp per
    local head; with SP the two reduce-scatter outputs (h / t each). A standard (unfused) attention is not an SDPA op: nothing of
    it is saved. An MoE block saves top_k copies of its experts' saved outputs.

    Examples:
        >>> import parallelsel as ps
        >>> sorted(op_saved_bytes(ps.MODELS["llama3-8b"], 1, 1))
        ['input', 'sdpa', 'w1', 'w2', 'wq', 'wv']
    """
    from .model import block_matmuls, op_saved_matmuls

    sh = layer_shape(model)
    sb = s * b
    sp = sp and t > 1
    row_parallel = ("wo", "w2", "fc2")
    out = {"input": act_bytes * sb * sh.hidden / (t if sp else 1)}
    saved = op_saved_matmuls(model)
    for name, _, width in block_matmuls(model):
        if name in saved:
            per_rank = width if (name in row_parallel and t > 1) else width / t
            copies = model.top_k if name not in ("wq", "wk", "wv", "wo") else 1
            out[name] = act_bytes * sb * per_rank * copies
    if attention != "standard":
        out["sdpa"] = act_bytes * sb * sh.q_dim / t + _LSE_BYTES * sh.heads * sb / t
    if sp:
        out["reduce_scatter"] = 2 * act_bytes * sb * sh.hidden / t
    return out


@lru_cache(maxsize=8192)
def _activations(model: Transformer, s: int, b: int, t: int, sp: bool, recompute: str, act_bytes: float,
                 attention: str = "flash", gathered: bool = False, fp8_inputs: bool = False) -> float:
    # Pure in its arguments; the search asks for the same few per (micro-batch, recompute) many times.
    # ``gathered``: the stack saves the SP all-gathered inputs of the column-parallel linears whole
    # (Stack.sp_gathered_inputs); Korthikanti et al.'s SP keeps them sequence-sharded.
    # ``fp8_inputs``: each linear saves its input as cast to FP8 (_fp8_saved_inputs).
    sp = sp and t > 1
    if recompute == "op":
        return sum(_op_saved(model, s, b, t, sp, act_bytes, attention).values())
    if recompute == "full":
        # Only the layer input is kept (Korthikanti et al. §5, Table 2 last row).
        x = act_bytes * s * b * layer_shape(model).hidden
        return x / t if sp else x
    shared, split, scores = _layer_terms(model, s, b, act_bytes, attention)
    if fp8_inputs:
        shared, split = _fp8_saved_inputs(model, s * b, act_bytes, shared, split)
    whole = act_bytes * s * b * 2 * layer_shape(model).hidden if sp and gathered else 0.0  # QKV and MLP inputs
    out = ((shared - whole) / t + whole if sp else shared) + split / t
    if recompute == "none":
        out += scores / t
    return out


def _fp8_saved_inputs(model: Transformer, sb: int, act_bytes: float, shared: float, split: float) -> tuple[float, float]:
    """``(shared, split)`` of :func:`_layer_terms` with the linears' inputs saved in FP8 (1 byte an element):
    Transformer Engine's linear under FP8 keeps the quantized input for its weight-gradient GEMM, on Hopper the
    columnwise copy only ("Discard row-wise data since it is not needed in backward pass",
    ``transformer_engine/pytorch/module/linear.py``, ``_Linear.forward``), and LayerNormLinear its FP8 norm
    output. So the QKV and MLP inputs (replicated terms) and the MLP's down-projection input (split) take 1 byte
    instead of ``act_bytes``; the output projection's FP8 input (q_dim wide) comes on top of the attention output,
    which the fused attention kernel keeps in 16 bits for its own backward."""
    sh = layer_shape(model)
    cut = act_bytes - 1.0
    return shared - sb * cut * 2 * sh.hidden, split - sb * (cut * sh.ffn * model.top_k - sh.q_dim)


@lru_cache(maxsize=4096)
def _op_saved(model, s, b, t, sp, act_bytes, attention):
    return op_saved_bytes(model, s, b, t, sp, act_bytes, attention)


def embedding_activations(model: Transformer, micro_batch: int, tp: int = 1, sp: bool = False,
                          seq_len: int | None = None) -> float:
    """Bytes the input embedding stores per micro-batch: its dropout mask, sbh (1 byte an element).

    Korthikanti et al. 2022, §4.3: the embedding's only stored activation is the dropout mask,
    sbh/t with SP (the paper multiplies by the p micro-batches held on the first stage; here the
    caller does that with :func:`inflight_microbatches`). Without SP it is replicated: sbh. A model
    trained without dropout (``Transformer.dropout`` False) stores nothing here.
    """
    b = positive_int("micro_batch", micro_batch)
    t = positive_int("tp", tp)
    s = model.seq_len if seq_len is None else positive_int("seq_len", seq_len)
    x = s * b * model.hidden if model.dropout else 0.0
    return x / t if (sp and t > 1) else x


def logits_activations(model: Transformer, micro_batch: int, tp: int = 1, sp: bool = False,
                       seq_len: int | None = None, act_bytes: float = 2) -> float:
    """Bytes the final norm, output projection and cross-entropy store per micro-batch (last stage).

    Korthikanti et al. 2022, §4.3: the final norm input 2sbh/t, the output-projection input
    2sbh/t and the fp32 logits for the loss 4sbv/t, i.e. 4sbh/t x (1 + v/h) with SP. Without SP
    the two sbh-sized inputs are replicated across the TP group (2sbh each); the vocabulary-parallel
    logits stay split. ``act_bytes`` scales the two inputs; logits are fp32 as in the paper.
    """
    b = positive_int("micro_batch", micro_batch)
    t = positive_int("tp", tp)
    s = model.seq_len if seq_len is None else positive_int("seq_len", seq_len)
    return _logits(model, s, b, t, sp and t > 1, act_bytes)


def _logits(model: Transformer, s: int, b: int, t: int, sp: bool, act_bytes: float, gathered: bool = False) -> float:
    # The final norm's input and the output layer's input (gathered whole under SP where the stack saves it so).
    x = act_bytes * s * b * model.hidden
    inputs = (x / t + (x if gathered else x / t)) if sp else 2 * x
    return inputs + 4.0 * s * b * model.vocab / t


def inflight_microbatches(schedule: str, stages: int, microbatches: int, chunks: int = 1, stage: int = 0) -> float:
    """Micro-batches whose activations ``stage`` holds at its peak, in units of the stage's full activations.

    Counted along the stage's own pass order (:func:`parallelsel.core.pipeline.peak_inflight`, the count of
    :meth:`parallelsel.core.pipeline.Schedule.peak_inflight`) and divided by ``chunks`` (each chunk holds
    1/chunks of the stage's layers), for every kind :func:`parallelsel.core.pipeline.schedule` builds and the
    settings it accepts (plus 1F1B and ZB-H1 with one chunk for any m). Without a pipeline
    (stages = 1) it is 1: gradient accumulation runs micro-batches one after another.

    The published closed forms, which the schedules reproduce where they apply (tests/test_memory.py):

    * GPipe (Huang et al. 2019): all m forwards run before any backward, so m on every stage.
    * 1F1B (Narayanan et al. 2021 §2.2.1): stage i (from 0) runs p - i warm-up forwards, so it
      holds min(p - i, m); the first stage holds min(p, m) (Korthikanti et al. 2022 §4.2.3).
    * Interleaved 1F1B with v chunks (Narayanan et al. 2021 §2.2.2), m a multiple of p: stage i runs
      2(p - i - 1) + (v - 1)p warm-up chunk-forwards plus one in the steady state, each chunk 1/v of
      the stage; on the first stage that is p(1 + (p-1)/(pv)), Korthikanti et al. §4.2.3's factor.

    Where the schedule departs from them: ZB-H1 (Qi et al. 2024 §2.1) as torch runs it keeps every
    stage's stored inputs until their W, so each stage holds min(p, m), not 1F1B's min(p - i, m);
    torch's interleaved 1F1B warms up with (v - 1)n + 2(p - 1 - i) forwards where n = m // max(1, m // p)
    (n = p only when m is a multiple of p), and with one chunk it still takes two forwards per hop.

    Examples:
        >>> [inflight_microbatches("zb-h1", 4, 8, stage=i) for i in range(4)]
        [4.0, 4.0, 4.0, 4.0]
        >>> [inflight_microbatches("1f1b", 4, 8, stage=i) for i in range(4)]
        [4.0, 3.0, 2.0, 1.0]
    """
    choice("schedule", schedule, KINDS)
    p = positive_int("stages", stages)
    m = positive_int("microbatches", microbatches)
    v = positive_int("chunks", chunks)
    i = positive_int("stage", stage, minimum=0)
    if i >= p:
        raise ParallelselError(f"stage={stage}: must be < stages={p}")
    if p == 1:
        return 1.0
    return peak_inflight(schedule, p, m, v, i) / v


@lru_cache(maxsize=4096)
def _inflight(schedule: str, p: int, m: int, v: int, i: int) -> float:
    # A Plan's settings (already checked by Plan), cached: the search asks for the same few often.
    return inflight_microbatches(schedule, p, m, v, i)


# -- parameters per stage and the FSDP unit -------------------------------------------------
def stage_params(model: Transformer, tp: int = 1, pp: int = 1, ep: int = 1, stage: int = 0,
                 layers: int | None = None, etp: int | None = None) -> tuple[float, float]:
    """Parameters one device holds on pipeline ``stage``: ``(dense, expert)``.

    Layers are split evenly over ``pp`` stages (the worst stage gets ceil(L/pp); a plan with an uneven
    split, :attr:`parallelsel.Plan.stage_layers`, is priced with each stage's own layers); the input
    embedding sits on the first stage, the output projection and final norm on the last; with tied
    embeddings and pp > 1 the last stage keeps its own copy of the word embedding for the output
    layer (Megatron-LM, Shoeybi et al. 2019 §3 and Narayanan et al. 2021). Everything is divided by
    ``tp`` (Megatron splits every matrix and the vocabulary; the small replicated norms and biases
    are counted as split too), and expert weights by ``etp`` (the experts' TP, ``tp`` by default) x ``ep``.
    ``layers``: the stage's transformer layers when the split is uneven (:func:`layers_on`).
    """
    t, p, x = _split_args(tp, pp, ep, etp)
    i = positive_int("stage", stage, minimum=0)
    if i >= p:
        raise ParallelselError(f"stage={stage}: must be < stages={p}")
    n = None if layers is None else positive_int("layers", layers)
    return _stage_params(model, t, p, x, i, n)


def _split_args(tp, pp, ep, etp) -> tuple[int, int, int]:
    # The checked (tp, pp) and the ways the experts are split: expert TP (the dense TP by default) x EP.
    t, p, e = positive_int("tp", tp), positive_int("pp", pp), positive_int("ep", ep)
    return t, p, (t if etp is None else positive_int("etp", etp)) * e


@lru_cache(maxsize=8192)
def _stage_params(model: Transformer, t: int, p: int, x: int, i: int, n: int | None = None) -> tuple[float, float]:
    # ``x``: the ways the experts are split (expert TP x EP, Plan.expert_split); ``n``: the stage's transformer
    # layers (Plan.stage_layers); None: the even split, ceil(L / p).
    sh = layer_shape(model)
    layers = -(-sh.layers // p) if n is None else n
    dense = layers * sh.dense_layer
    if i == 0:
        dense += sh.embedding
    if i == p - 1:
        dense += sh.head + (sh.tied if p > 1 else 0)
    return dense / t, layers * sh.experts / x


@dataclass(frozen=True)
class FsdpUnit:
    """One kind of FSDP unit on a pipeline stage: ``count`` units of ``params`` parameters each (per
    device, unsharded: already split by TP, experts by EP), and whether FSDP frees the gathered
    weights after the forward (``reshard_after_forward``) or keeps them until the backward.
    ``early_grads``: parameters of the unit whose gradients are computed before the blocks' backward
    and held, unsharded, until the unit's reduce-scatter after the last block (the root's final norm
    and output head)."""

    name: str
    params: float
    count: int
    reshard_after_forward: bool
    early_grads: float = 0.0


def fsdp_units(model: Transformer, tp: int = 1, pp: int = 1, ep: int = 1, stage: int = 0,
               reshard_after_forward: bool = True, layers: int | None = None,
               etp: int | None = None) -> tuple[FsdpUnit, ...]:
    """How a model is wrapped for FSDP: the units :func:`gather_peak`, :func:`breakdown`, the traffic
    (:func:`parallelsel.core.comm.traffic`) and the per-tensor accounting (:mod:`parallelsel.course.frameworks`) read.

    The wrapping of torchtitan (``apply_fsdp`` in ``torchtitan/models/llama3/infra/parallelize.py``)
    and of PyTorch's FSDP2 tutorial: ``fully_shard`` on every transformer block, then on the root
    module, which holds what is left -- the token embedding (first stage), the final norm and the
    output head (last stage; plus the tied word-embedding copy when pp > 1). The blocks take
    ``reshard_after_forward`` (True: FULL_SHARD, re-gathered for backward; False: SHARD_GRAD_OP, kept
    gathered until their backward); the root is never resharded after forward (FSDP2's root module
    keeps its parameters from forward to backward), so its weights stay gathered for the whole pass.
    Its reduce-scatter runs after the last block's backward, so the head's gradients, computed first,
    are held through the blocks' backward (``early_grads``; seen in the recorded torch run,
    parallelsel/course/data/torch_fsdp_accumulation.json).

    Examples:
        >>> import parallelsel as ps
        >>> [(u.name, u.count, u.reshard_after_forward) for u in fsdp_units(ps.MODELS["llama3-8b"])]
        [('block', 32, True), ('root', 1, False)]
    """
    t, p, x = _split_args(tp, pp, ep, etp)
    i = positive_int("stage", stage, minimum=0)
    if i >= p:
        raise ParallelselError(f"stage={stage}: must be < stages={p}")
    n = None if layers is None else positive_int("layers", layers)
    return _fsdp_units(model, t, p, x, i, flag("reshard_after_forward", reshard_after_forward), n)


@lru_cache(maxsize=1024)
def _fsdp_units(model: Transformer, t: int, p: int, x: int, i: int, raf: bool = True,
                n: int | None = None) -> tuple[FsdpUnit, ...]:
    # x: the ways the experts are split (expert TP x EP)
    sh = layer_shape(model)
    layers = -(-sh.layers // p) if n is None else n
    out = [FsdpUnit("block", sh.dense_layer / t + sh.experts / x, layers, raf)]
    head = (sh.head + (sh.tied if p > 1 else 0)) if i == p - 1 else 0
    root = (sh.embedding if i == 0 else 0) + head
    if root:
        out.append(FsdpUnit("root", root / t, 1, False, head / t))
    return tuple(out)


def gather_peak(model: Transformer, recipe: Recipe = RECIPES["bf16-adam"], tp: int = 1, pp: int = 1,
                ep: int = 1, stage: int = 0, prefetch: bool = True, reshard_after_forward: bool = True) -> float:
    """Extra bytes FSDP (ZeRO-3) needs for unsharded units at its peak (backward).

    Zhao et al. 2023 (PyTorch FSDP) §3.2 (sharding): each FSDP unit's parameters are all-gathered
    into a full buffer (compute dtype) before its forward and, if resharded after forward, again
    before its backward, and freed after; the unsharded gradient of the unit exists until its
    reduce-scatter. §3.3 (backward and forward prefetching): the next unit's all-gather is issued
    while the current one computes, so two resharded blocks are materialised at once. Units are
    :func:`fsdp_units`: the units not resharded after forward (the root; every block with
    ``reshard_after_forward=False``) stay gathered from forward to backward, and the root's head
    gradients are held through the blocks' backward. Every unit is resharded after its backward, so
    the peak is the larger of

    * the first block's backward: weights of every held unit (the root; all blocks if they are not
      resharded after forward) + head grads + (2 x weights + grads) of a block if blocks are resharded
      after forward ((1 x weights + grads) without prefetch), else its grads;
    * the root's backward, after the last block: the root's weights and all its grads.
    """
    t, p, e = positive_int("tp", tp), positive_int("pp", pp), positive_int("ep", ep)
    i = positive_int("stage", stage, minimum=0)
    if i >= p:
        raise ParallelselError(f"stage={stage}: must be < stages={p}")
    return _gather_peak(model, recipe, t, p, t * e, i, flag("prefetch", prefetch),
                        flag("reshard_after_forward", reshard_after_forward))


def _gather_peak(model, recipe, t, p, x, i, prefetch=True, raf=True, synced=True, n=None) -> float:
    # synced=False (no_sync): the unsharded gradients are counted in the states, not here.
    # Backward runs the units in the order fsdp_units lists them (blocks, then the root); the first
    # unit of each kind is where its moment peaks: the held units not yet run are still gathered.
    units = _fsdp_units(model, t, p, x, i, raf, n)
    w, g = recipe.weights, (recipe.grads if synced else 0.0)
    early = g * sum(u.early_grads for u in units)
    peak = 0.0
    for j, u in enumerate(units):
        held = sum(x.params * x.count for x in units[j:] if not x.reshard_after_forward)
        own = ((2 if prefetch else 1) * w + g) * u.params if u.reshard_after_forward else g * (u.params - u.early_grads)
        peak = max(peak, w * held + early + own)
    return peak


# -- the whole device -----------------------------------------------------------------------
@dataclass(frozen=True)
class MemoryBreakdown:
    """Bytes on the most loaded device of a plan, by kind, for the worst pipeline stage.

    ``stage`` is "first" or "last" (they coincide when pp = 1, reported as "first"); ``inflight``
    is the micro-batches in flight on that stage; ``allocator`` is :data:`ALLOCATOR_OVERHEAD` of
    the rest.
    """

    params: float
    grads: float
    optimizer: float
    activations: float
    embeddings: float  # embedding dropout mask (first stage) or logits (last stage) activations
    gather_peak: float
    allocator: float
    stage: str = "first"
    inflight: float = 1.0
    stage_index: int = 0
    """The pipeline rank this breakdown is for (0 = first; ``stage`` is "first", "middle" or "last")."""

    @property
    def states(self) -> float:
        return self.params + self.grads + self.optimizer

    @property
    def total(self) -> float:
        return (self.params + self.grads + self.optimizer + self.activations + self.embeddings
                + self.gather_peak + self.allocator)

    def as_dict(self) -> dict[str, float]:
        """The byte fields in display order, for bar charts and tables."""
        return {
            "params": self.params, "grads": self.grads, "optimizer": self.optimizer,
            "activations": self.activations, "embeddings": self.embeddings,
            "gather_peak": self.gather_peak, "allocator": self.allocator,
        }


def _linear_params(model: Transformer, t: int, p: int, x: int, n: int | None = None) -> float:
    """Weights of the linear layers (attention projections and MLPs; experts split by EP) one device holds on a
    stage of ``n`` layers (None: the even split)."""
    return sum(_linear_split(model, t, p, x, n))


def _linear_split(model: Transformer, t: int, p: int, x: int, n: int | None = None) -> tuple[float, float]:
    """:func:`_linear_params` as (dense, expert): ZeRO shards the two over different groups (experts over their data-parallel group, Plan.expert_dp)."""
    layers = -(-model.layers // p) if n is None else n
    if model.is_moe:
        return layers * model.attention_params / t, layers * model.experts * model.expert_params / x
    return layers * (model.attention_params + model.expert_params) / t, 0.0


def _fsdp_peak(workload, plan, stack, st: States, params: float, i: int,
               n_layers: int | None = None) -> tuple[States, float]:
    """FSDP's states and gather peak on stage ``i``: with ``no_sync`` (FSDP2
    ``set_requires_gradient_sync(False)``) every unit's gradient stays unsharded on each rank until the
    last micro-batch's reduce-scatter; the gathered weights are in the stack's gather dtype."""
    recipe = workload.recipe
    if plan.no_sync:
        st = States(st.params, recipe.grads * params, st.optimizer)
    gathered = replace(recipe, weights=wire_bytes(stack, recipe)[1])
    if stack.zero3_live:
        return st, _module_live_peak(workload.model, gathered, plan.tp, params, stack.zero3_live)
    return st, _gather_peak(workload.model, gathered, plan.tp, plan.pp, plan.expert_split, i, True, plan.reshard_after_forward,
                            not plan.no_sync, n_layers)


def _largest_module(model: Transformer, t: int) -> float:
    """Parameters of the largest module one device holds: a block's matmul weight
    (:func:`parallelsel.core.model.block_matmuls`, split by TP; an expert's matrices are the same shapes)
    or the vocabulary-parallel embedding (and output layer)."""
    biggest = max(n_in * n_out for _, n_in, n_out in block_matmuls(model)) / t
    return max(biggest, model.vocab * model.hidden / t)


def _module_live_peak(model: Transformer, recipe: Recipe, t: int, params: float, live) -> float:
    """ZeRO-3 as DeepSpeed's parameter coordinator runs it (:attr:`parallelsel.core.stacks.Stack.zero3_live`):
    the module about to run is fetched whole whatever its size, and each fetch prefetches the next
    parameters, at least ``prefetch_bucket_size`` elements in whole parameters (so up to one more module
    of that size), only while fewer than ``max_live_parameters`` are gathered; released modules free
    theirs. At the peak: the largest module and its prefetch (never more than the stage's ``params``); in
    backward also that module's full gradient and the contiguous ``reduce_bucket_size`` gradient bucket it
    is copied into and reduce-scattered from. Parameters below ``stage3_param_persistence_threshold``
    (norms, biases) stay gathered and are not counted."""
    big = _largest_module(model, t)
    ahead = min(max(live["prefetch_bucket_size"], big), max(0.0, live["max_live_parameters"] - big))
    weights = min(params, big + ahead)
    grads = min(params, big) + live["reduce_bucket_size"]
    return recipe.weights * weights + recipe.grads * grads


def _fp8_weight_copies(workload, t: int, p: int, x: int, n: int | None = None, transposed: bool = True) -> float:
    """Bytes of FP8 weight copies a stage keeps through the step beside its weights: Transformer Engine keeps the
    FP8 copy of each GEMM weight it quantized (1 byte a weight; none when the FP8 weight is the weight itself,
    ``Recipe.fp8_weights``: Megatron-Core's ``--fp8-param-gather``) and, where the part cannot read FP8 columnwise,
    a physically transposed one for the backward (1 byte more; with ``fp8_weights`` the recipe's weight bytes
    hold both, and :func:`_stage_states` drops the transposed one where the part needs none): "Hopper: cannot
    efficiently access elements in columnwise fashion, so columnwise tensors need to be physically transposed in
    memory [...] Blackwell: supports columnwise access natively, so no transpose is needed" (TE ``docs/features/low_precision_training/
    performance_considerations/performance_considerations.rst`` @44a8e03, "Architecture differences"; the same
    page: "FP8 training does not always reduce memory"). ``transposed``: the part needs that copy
    (:attr:`parallelsel.core.hardware.Device.fp8_transpose`). torchao's Float8Linear casts per use and keeps
    none. 0 without an FP8 recipe."""
    if not _te_fp8(workload) or workload.recipe.fp8_weights:  # fp8_weights: the copies are the weights (_stage_states)
        return 0.0
    return (2.0 if transposed else 1.0) * _linear_params(workload.model, t, p, x, n)


def _fp8_transposed(device) -> bool:
    """Whether ``device`` keeps a transposed FP8 copy (no device given: yes, as every Hopper part does)."""
    return True if device is None else device.fp8_transpose


def _te_fp8(workload) -> bool:
    """The job's linears run FP8 through Transformer Engine (the stack's mode is ``"te"``), whose FP8 weight
    copies and FP8-saved inputs the memory counts; torchao's Float8Linear keeps neither."""
    return workload.recipe.gemm == "fp8" and STACKS[workload.stack].mode(workload.compile) == "te"


def _stage_layer_activations(workload, plan, s: int, b: int) -> tuple[float, float]:
    """One micro-batch's stored activations of a stage's average layer, and the recomputation working set.

    With ``recompute_layers`` k layers of each model chunk recompute fully and the others store
    everything (Megatron's block method; torchtitan's every-N-th layer AC). Recomputation rebuilds one
    layer's discarded activations just before its backward, and that working set (one layer, one
    micro-batch) is live at the peak (Chen et al. 2016, "Training Deep Nets with Sublinear Memory Cost":
    the recomputed segment is materialised for its backward)."""
    model, t, act, kernel = workload.model, plan.tp, workload.recipe.activation, workload.attention
    gathered = STACKS[workload.stack].sp_gathered_inputs
    fp8_inputs = _te_fp8(workload)
    routed = _routed_inputs(model, s, b, plan, act)
    per_layer = _activations(model, s, b, t, plan.sp, plan.recompute, act, kernel, gathered, fp8_inputs)
    per_layer += routed if plan.recompute in ("none", "selective") else 0.0
    if plan.recompute == "none":
        return per_layer, 0.0
    whole = _activations(model, s, b, t, plan.sp, "none", act, kernel, gathered, fp8_inputs) + routed
    if plan.recompute_layers is not None:
        share = plan.recompute_share(model)
        per_layer = share * per_layer + (1 - share) * whole
    return per_layer, whole - per_layer


def _routed_inputs(model: Transformer, s: int, b: int, plan, act: float) -> float:
    """Bytes an MoE layer keeps of its experts' input for their first GEMM's weight gradient: the routed token
    copies a rank's experts receive, s x b x top_k x etp / tp of them (balanced; after the dispatcher's expert-TP
    all-gather, so not split by sequence parallelism), each h wide -- beside the router's own input, which the
    dense terms count (token_dispatcher.py core_r0.9.0 L532-538; the same count :mod:`parallelsel.core.moe` prices
    per routed token). 0 for a dense model."""
    if not model.is_moe:
        return 0.0
    return act * model.routed_tokens(s * b, plan.tp, plan.etp) * model.hidden


def _stage_states(workload, plan, i: int, n_layers: int | None = None,
                  transposed: bool = True) -> tuple[States, float]:
    """Stage ``i``'s model states, sharded by ZeRO over the ranks the stack shards over (FP8 weight copies
    with the weights), and its FSDP gather peak (0 without ZeRO-3): the part of its memory that no
    micro-batch, recompute mode, schedule or SP setting changes."""
    model, recipe, t, p, x = workload.model, workload.recipe, plan.tp, plan.pp, plan.expert_split
    dense, expert = _stage_params(model, t, p, x, i, n_layers)
    stack = STACKS[workload.stack]
    n = state_shards(stack, plan)  # DP (x CP where the stack shards over it)
    zero = effective_zero(plan)  # the stack's semantics (PP with FSDP runs as torchtitan runs it)
    st = _states(dense, recipe, n, zero)
    if expert:
        # Expert weights are replicated only over the experts' data-parallel ranks; ZeRO shards them over those.
        # (n x tp / (etp x ep): the experts' data-parallel share of the n state shards, Plan.expert_dp)
        ex = _states(expert, recipe, max(1, n * t // x), zero)
        st = States(st.params + ex.params, st.grads + ex.grads, st.optimizer + ex.optimizer)
    copies = _fp8_weight_copies(workload, t, p, x, n_layers, transposed)
    if recipe.fp8_weights and not transposed and _te_fp8(workload):
        # The recipe's bytes count Hopper's transposed copy of each FP8 linear weight, sharded as the weights are
        # (dense over the n state shards, experts over their data-parallel share of them).
        lin_dense, lin_expert = _linear_split(model, t, p, x, n_layers)
        copies -= (lin_dense / n + lin_expert / max(1, n * t // x)) if zero >= 3 else lin_dense + lin_expert
    st = States(st.params + copies, st.grads, st.optimizer)
    if zero == 3 and n > 1:
        return _fsdp_peak(workload, plan, stack, st, dense + expert, i, n_layers)
    return st, 0.0


def states_floor(workload, plan, device=None) -> float:
    """A lower bound on :func:`breakdown`'s total for ``plan`` and every plan that differs from it only in
    ``micro_batch``, ``recompute``, ``schedule``, ``chunks`` or ``sp``: the first stage's model states and gather
    peak (:func:`_stage_states`) with the allocator's share, since activations and the other terms are never
    negative and the most loaded stage holds at least as much as the first. The search uses it to drop plans
    that cannot fit without their full breakdown."""
    plan = with_stack_split(workload, plan)
    st, gather = _stage_states(workload, plan, 0, layers_on(plan, 0), _fp8_transposed(device))
    return (st.total + gather) * (1 + ALLOCATOR_OVERHEAD)


def _stage_breakdown(workload, plan, i: int, n: int | None = None, transposed: bool = True) -> MemoryBreakdown:
    model, recipe = workload.model, workload.recipe
    t, p, v, e = plan.tp, plan.pp, plan.chunks, plan.ep
    # Context parallelism splits each sequence over cp ranks: every activation a rank keeps is for
    # its s/cp tokens (Megatron-LM context parallelism; Liu et al. 2023, ring attention).
    s, b = workload.seq_len // getattr(plan, "cp", 1), plan.micro_batch
    m = max(1, plan.microbatches(workload))
    act = recipe.activation
    sp = plan.sp and t > 1

    n_layers = n
    stack = STACKS[workload.stack]
    st, gather = _stage_states(workload, plan, i, n_layers, transposed)

    flight = _inflight(plan.schedule, p, m, v, i)
    sh = layer_shape(model)
    layers = -(-sh.layers // p) if n_layers is None else n_layers
    if getattr(plan, "ep_overlap", None):
        # EP overlap pairs forward layer i of one micro-batch with backward layer L-1-i of another, each backward
        # layer freeing its graph as it goes (model_chunk_schedule_plan.py L556-574, pipeline_parallel/utils.py
        # L227-235 @d98e8a6); its extra warm-up forward (schedules.py L966-969) stands in for the forward a plain
        # 1F1B step runs before its backward: one layer's activations more at the peak.
        flight = min(flight + 1 / layers, m)
    per_layer, working = _stage_layer_activations(workload, plan, s, b)
    acts = flight * layers * per_layer + working

    extra = 0.0
    if i == 0:
        extra += flight * (s * b * sh.hidden / (t if sp else 1))
    if i == p - 1:
        # The logits live from the last stage's forward to its backward: that stage's own micro-batches in flight.
        held = last_stage_inflight(plan.schedule, p, m, v) if p > 1 else 1
        extra += held * _logits(model, s, b, t, sp, act, stack.sp_gathered_inputs)
        if stack.mode(workload.compile) != "te" and "cross_entropy" not in stack_fused(workload):
            eager = LOSS_PARALLEL_BYTES if stack.loss_parallel and t > 1 else EAGER_LOSS_BYTES
            extra += eager * s * b * model.vocab / t   # one micro-batch's eager loss backward

    rest = st.total + acts + extra + gather
    return MemoryBreakdown(st.params, st.grads, st.optimizer, acts, extra, gather, ALLOCATOR_OVERHEAD * rest,
                           "first" if i == 0 else "last" if i == p - 1 else "middle", flight, i)


def breakdown(workload, plan, device=None) -> MemoryBreakdown:
    """Per-device memory of ``plan`` on its most loaded pipeline stage (first or last), in bytes.

    ``device`` (a :class:`parallelsel.Device`, optional) matters only for Transformer Engine's FP8 weight copies:
    whether the part keeps a transposed one (Hopper) or not (Blackwell); without it, as on Hopper.

    Model states (:func:`model_states`) of the stage's parameters (:func:`stage_params`: split by
    TP and PP, experts also by EP) sharded by ZeRO over the ranks the workload's stack shards over
    (:func:`parallelsel.core.stacks.state_shards`: DP x CP); activations
    (:func:`activations_per_layer`) x layers on the stage x micro-batches in flight
    (:func:`inflight_microbatches`), plus, with recomputation, one layer's rebuilt activations;
    the embedding dropout mask on the first stage and the logits on the last
    (Korthikanti et al. 2022 §4.3); the FSDP gather peak (:func:`gather_peak`, with the plan's
    ``reshard_after_forward``, weights in the stack's gather dtype) under ZeRO-3, and with ``no_sync`` the stage's gradients unsharded; and
    :data:`ALLOCATOR_OVERHEAD`. The first and last stages are both computed; the larger is returned.

    With an uneven split (:attr:`parallelsel.Plan.stage_layers`) each stage holds its own layers, so a
    middle stage can be the most loaded: the first middle stage of each distinct layer count is
    computed too (the micro-batches in flight never grow from one stage to the next in any schedule a
    Plan names, so the first of equal stages is the fullest).
    """
    plan = with_stack_split(workload, plan)  # no split stated on layers that do not divide: the stack's own
    transposed = _fp8_transposed(device)
    first = _stage_breakdown(workload, plan, 0, layers_on(plan, 0), transposed)
    if plan.pp == 1:
        return first
    worst = first
    for i in candidate_stages(plan):
        b = _stage_breakdown(workload, plan, i, layers_on(plan, i), transposed)
        if b.total > worst.total:
            worst = b
    return worst


def layers_on(plan, i: int) -> int | None:
    """Layers of stage ``i`` under ``plan``'s split (None: the even split), as the per-stage functions take it."""
    return None if plan.stage_layers is None else plan.stage_layers[i]


def candidate_stages(plan) -> list[int]:
    """Stages other than the first that can be the most loaded: the last, and with an uneven split the
    first middle stage of each layer count."""
    out = [plan.pp - 1]
    if plan.stage_layers is not None:
        seen = set()
        for i in range(1, plan.pp - 1):
            n = plan.stage_layers[i]
            if n not in seen:
                seen.add(n)
                out.append(i)
    return out
