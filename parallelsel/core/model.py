"""Transformer shapes with exact parameter and FLOP counts.

The counting follows the layer structure, not a fitted formula: attention projections
(Q: h x heads*head_dim, O: heads*head_dim x h -- h x h unless head_dim is given; K, V: h x kv_heads*head_dim), an MLP (two matrices, or three when gated as in
SwiGLU), optional biases, two norms per layer, a final norm, token embeddings (tied or not to
the output head) and learned position embeddings when used. For the GPT shape this reduces to
Narayanan et al. 2021, eq. 2: P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)), plus the final
layer norm (2h) that eq. 2 leaves out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ._check import cached_hash, state_without_hash, Catalogue, ParallelselError, choice, flag, positive_int, store

RECOMPUTE = ("none", "selective", "op", "full")
"""Activation recomputation policies, lightest first, as the frameworks define them:

* ``"none"``: every activation a layer's backward needs is stored.
* ``"selective"``: Megatron-Core's ``--recompute-granularity selective`` with its default
  ``recompute_modules=["core_attn"]`` (``megatron/core/transformer/transformer_config.py`` L532-582,
  L1940-1941 @d98e8a6): the attention core is recomputed (Korthikanti et al. 2022 §5).
* ``"op"``: torchtitan's op-level selective activation checkpointing (``selective_ac_option="op"``;
  ``torchtitan/models/llama3/parallelize_llama.py`` L218-268 @820504e): inside each checkpointed block
  the outputs of matmuls (``aten.mm``), of the fused attention (SDPA) and of reduce-scatters are saved,
  except every second matmul; everything else is recomputed (:func:`op_saved_matmuls`).
* ``"full"``: the whole layer is recomputed from its input (Megatron ``full``; torchtitan ``full``:
  ``ptd_checkpoint_wrapper`` on every block, ``parallelize_llama.py`` L237-238 @820504e). With
  ``Plan(recompute_layers=k)`` only k layers of each pipeline model chunk are (see :mod:`parallelsel.core.plan`).
"""


def block_matmuls(model) -> tuple[tuple[str, int, int], ...]:
    """The weight matmuls of one transformer block in the order its forward calls them, as
    ``(name, in_features, out_features)`` (unsharded; an MoE block lists one expert's, which each of
    top_k experts runs per token).

    Attention: ``wq``, ``wk``, ``wv`` then ``wo`` (torchtitan ``models/llama3/model.py`` L238 and L263
    @820504e). MLP: gated ``w2(F.silu(w1(x)) * w3(x))`` evaluates ``w1``, ``w3``, then ``w2``
    (``model.py`` L302); non-gated ``fc1`` then ``fc2``.

    Examples:
        >>> [n for n, _, _ in block_matmuls(MODELS["llama3-8b"])]
        ['wq', 'wk', 'wv', 'wo', 'w1', 'w3', 'w2']
    """
    h, q, kv, f = model.hidden, model.q_dim, model.kv_dim, model.ffn_hidden
    attn = (("wq", h, q), ("wk", h, kv), ("wv", h, kv), ("wo", q, h))
    mlp = (("w1", h, f), ("w3", h, f), ("w2", f, h)) if model.gated_mlp else (("fc1", h, f), ("fc2", f, h))
    return attn + mlp


def op_saved_matmuls(model) -> tuple[str, ...]:
    """The matmuls whose outputs torchtitan's op-level SAC saves: "Saves output of all compute ops,
    except every second mm" -- a per-block counter of ``aten.mm`` calls, and an mm whose count is even
    is PREFER_RECOMPUTE (``parallelize_llama.py`` L254-268 @820504e; the same rule for ``mm`` and
    ``linear`` in ``torchtitan/distributed/activation_checkpoint.py`` L241-274 @b5bcd76). So the 1st,
    3rd, 5th, ... matmul of :func:`block_matmuls` is saved.

    Examples:
        >>> op_saved_matmuls(MODELS["llama3-8b"])
        ('wq', 'wv', 'w1', 'w2')
    """
    return tuple(name for i, (name, _, _) in enumerate(block_matmuls(model)) if i % 2 == 0)

SHAPE_LIMITS = {"layers": 2**17, "hidden": 2**20, "heads": 2**16, "ffn_hidden": 2**22, "seq_len": 2**27,
                "vocab": 2**24, "experts": 2**16, "top_k": 2**16}
"""Largest value of each shape field. Far beyond any published model (Llama 3 405B: 126 layers,
hidden 16384, 128 heads, 53248 FFN, 128256 vocabulary; Dubey et al. 2024, Table 3; the longest
context trained, 10M tokens, is below 2**24), and small enough that every count and FLOP total
stays exact in float64 and that enumerating a shape's divisors takes milliseconds."""

ATTENTION = ("flash", "fa2", "standard")
"""Attention kernels a workload can assume: ``"flash"`` is a fused kernel that never materialises the
s x s scores, the one the stack picks (FlashAttention-2, Dao 2023; PyTorch SDPA; Transformer Engine's cuDNN
kernel where the stack fuses ``cudnn_attention``); ``"fa2"`` is the same memory with FlashAttention-2's kernel
where the stack would pick another: Transformer Engine with ``NVTE_FUSED_ATTN=0``, Megatron-Core's
``--attention-backend flash`` (which sets NVTE_FLASH_ATTN=1, NVTE_FUSED_ATTN=0:
``megatron/core/models/common/language_module/language_module.py`` L134-135 @d98e8a6);
``"standard"`` stores them as Korthikanti et al. 2022 count (softmax output, dropout mask and output)."""


ARCHITECTURES = {
    # GPT-2 / GPT-3 (Radford et al. 2019 §2.3; Brown et al. 2020 §2.1: "the same model and
    # architecture as GPT-2"): 4h GeLU MLP, learned positions, LayerNorm, biases, tied embeddings.
    # Dropout: GPT-2 trained with 0.1 (its released config's resid/attn/embd_pdrop), and Megatron-LM's GPT defaults
    # to 0.1 (arguments.py --hidden-dropout, --attention-dropout), which the GPT-3 runs here use.
    "gpt": dict(gated_mlp=False, tied_embeddings=True, position="learned", bias=True, norm="layernorm", dropout=True),
    # Llama 2 / Llama 3 (Touvron et al. 2023 §2.2; Dubey et al. 2024 §3.2): SwiGLU MLP, rotary
    # positions, RMSNorm, no biases, untied output head.
    # No dropout: Meta's reference model code has no dropout layer, nor has torchtitan's Llama; NeMo's and
    # Megatron-Bridge's Llama configs set hidden and attention dropout to 0.0 (NeMo-Framework-Launcher
    # conf/training/llama/llama2_7b.yaml @1a7171d7 L71-73).
    "llama": dict(gated_mlp=True, tied_embeddings=False, position="rotary", bias=False, norm="rmsnorm",
                  dropout=False),
}
"""The real architectures a bare :class:`Transformer` can take with one keyword (``architecture=``)."""


@dataclass(frozen=True)
class Transformer:
    """A decoder-only transformer of one real architecture, ``architecture="gpt"`` by default.

    ``"gpt"`` is GPT-2/GPT-3's (Radford et al. 2019; Brown et al. 2020): a 4h GeLU MLP, learned
    position embeddings, LayerNorm, biases, tied input/output embeddings and dropout. ``"llama"`` is Llama
    2/3's (Touvron et al. 2023; Dubey et al. 2024): SwiGLU, rotary positions, RMSNorm, no biases, an
    untied head, no dropout, and ``ffn_hidden`` defaulting to Meta's rule 2/3 x 4h rounded up to a multiple of
    256 (11008 for h = 4096). Any of ``gated_mlp``, ``tied_embeddings``, ``position``, ``bias``,
    ``norm``, ``dropout`` given explicitly overrides the architecture's value. ``ffn_hidden`` defaults to 4*hidden
    for "gpt", ``kv_heads`` to ``heads`` (MHA).

    Examples:
        >>> Transformer(layers=48, hidden=1600, heads=25, seq_len=1024, vocab=50257).params   # GPT-2 XL
        1557611200
        >>> Transformer(layers=32, hidden=4096, heads=32, seq_len=4096, vocab=32000, architecture="llama").params
        6738415616
    """

    layers: int
    hidden: int
    heads: int
    seq_len: int
    vocab: int
    ffn_hidden: int | None = None
    kv_heads: int | None = None
    gated_mlp: bool | None = None
    tied_embeddings: bool | None = None
    position: str | None = None  # "learned" adds seq_len*hidden parameters; "rotary" adds none
    bias: bool | None = None
    norm: str | None = None  # "layernorm" has a bias, so 2*hidden parameters per norm
    experts: int = 1
    top_k: int = 1
    name: str = "custom"
    architecture: str = "gpt"
    source: str = field(default="", compare=False)
    """Where the record's numbers come from (paper and table, datasheet, measurement); every preset names one."""
    head_dim: int | None = None   # (after ``source``: positional arguments keep their places)
    """Width of one attention head, ``hidden // heads`` unless given: Q is ``heads * head_dim`` wide and the output
    projection maps that back to ``hidden`` (Megatron-LM ``--kv-channels``, Hugging Face ``head_dim``), as in models
    whose heads do not tile the hidden width (Qwen3-30B-A3B: hidden 2048, 32 heads of 128). Resolved when the record
    is built, like ``ffn_hidden`` and ``kv_heads``: ``dataclasses.replace(model, hidden=...)`` keeps it; pass
    ``head_dim=None`` as well to derive it again."""
    dropout: bool | None = None
    """Whether the model trains with dropout (probability > 0) after attention and the MLP, on the embedding and on
    the attention probabilities -- True for "gpt", False for "llama". With probability 0 PyTorch's dropout returns its
    input and stores no mask (``aten/src/ATen/native/Dropout.cpp`` ``_dropout_impl``: "if (p == 0 || !train ...)
    return input"), so the 1-byte masks Korthikanti et al. 2022 count are not kept, nor written."""

    __hash__ = cached_hash
    __getstate__ = state_without_hash

    def __post_init__(self):
        choice("architecture", self.architecture, tuple(ARCHITECTURES))
        for f, v in ARCHITECTURES[self.architecture].items():
            if getattr(self, f) is None:
                object.__setattr__(self, f, v)
        for f in ("layers", "hidden", "heads", "seq_len", "vocab", "experts", "top_k"):
            store(self, f, positive_int(f, getattr(self, f), maximum=SHAPE_LIMITS[f]))
        if self.ffn_hidden is None:
            ffn = 4 * self.hidden
            if self.architecture == "llama":
                ffn = -(-(2 * ffn // 3) // 256) * 256
            object.__setattr__(self, "ffn_hidden", ffn)
        if self.kv_heads is None:
            object.__setattr__(self, "kv_heads", self.heads)
        store(self, "ffn_hidden", positive_int("ffn_hidden", self.ffn_hidden, maximum=SHAPE_LIMITS["ffn_hidden"]))
        store(self, "kv_heads", positive_int("kv_heads", self.kv_heads, maximum=SHAPE_LIMITS["heads"]))
        for f in ("gated_mlp", "tied_embeddings", "bias", "dropout"):
            store(self, f, flag(f, getattr(self, f)))
        if not isinstance(self.name, str):
            raise ParallelselError(f"name={self.name!r}: must be a string")
        if self.head_dim is None:
            if self.hidden % self.heads:
                raise ParallelselError(f"hidden={self.hidden}: must be divisible by heads={self.heads} "
                                       "(or give head_dim)")
            object.__setattr__(self, "head_dim", self.hidden // self.heads)
        store(self, "head_dim", positive_int("head_dim", self.head_dim, maximum=SHAPE_LIMITS["hidden"]))
        if self.heads % self.kv_heads:
            raise ParallelselError(f"kv_heads={self.kv_heads}: must divide heads={self.heads} (grouped-query attention)")
        if self.top_k > self.experts:
            raise ParallelselError(f"top_k={self.top_k}: must be <= experts={self.experts}")
        choice("position", self.position, ("learned", "rotary"))
        choice("norm", self.norm, ("layernorm", "rmsnorm"))

    # -- shape helpers -------------------------------------------------------------------
    @property
    def q_dim(self) -> int:
        """Width of Q and of the attention output: heads * head_dim (``hidden`` unless ``head_dim`` is given)."""
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        """Width of K (and of V): kv_heads * head_dim."""
        return self.kv_heads * self.head_dim

    @property
    def is_moe(self) -> bool:
        return self.experts > 1

    def routed_tokens(self, tokens: float, tp: int = 1, etp: int | None = None) -> float:
        """Routed token copies the experts on one rank receive per MoE layer, for ``tokens`` tokens a rank holds:
        each token goes to ``top_k`` experts, and after Megatron-Core's dispatcher all-gathers them over the
        experts' TP group (``etp`` ranks, the dense ``tp`` by default) a rank holds those of etp / tp of the TP
        group's sequence shards: tokens x top_k x etp / tp (balanced routing; token_dispatcher.py core_r0.9.0
        L532-538)."""
        return tokens * self.top_k * (tp if etp is None else etp) / tp

    # -- parameters ----------------------------------------------------------------------
    @property
    def attention_params(self) -> int:
        """Q, K, V and output projections of one layer (with biases if ``bias``): Q is h x q, K and V h x kv, the
        output q x h, where q = :attr:`q_dim`."""
        h, q, kv = self.hidden, self.q_dim, self.kv_dim
        weights = 2 * h * q + 2 * h * kv
        biases = (q + h + 2 * kv) if self.bias else 0
        return weights + biases

    @property
    def expert_params(self) -> int:
        """One MLP (one expert): 2 matrices, or 3 when gated (SwiGLU, Shazeer 2020)."""
        h, f = self.hidden, self.ffn_hidden
        mats = 3 if self.gated_mlp else 2
        biases = ((2 * f if self.gated_mlp else f) + h) if self.bias else 0
        return mats * h * f + biases

    @property
    def mlp_params(self) -> int:
        """All experts of one layer plus the router (hidden x experts) when MoE."""
        router = self.hidden * self.experts if self.is_moe else 0
        return self.experts * self.expert_params + router

    @property
    def norm_params(self) -> int:
        """One norm: scale (and bias for LayerNorm)."""
        return 2 * self.hidden if self.norm == "layernorm" else self.hidden

    @property
    def layer_params(self) -> int:
        """One transformer layer: attention + MLP + two norms."""
        return self.attention_params + self.mlp_params + 2 * self.norm_params

    @property
    def embedding_params(self) -> int:
        """Token embedding, plus learned positions if used (the input side of the model)."""
        pos = self.seq_len * self.hidden if self.position == "learned" else 0
        return self.vocab * self.hidden + pos

    @property
    def head_params(self) -> int:
        """Output projection to the vocabulary (0 when tied to the embedding) plus the final norm."""
        out = 0 if self.tied_embeddings else self.vocab * self.hidden
        return out + self.norm_params

    @property
    def params(self) -> int:
        """Exact total parameter count."""
        return self.layers * self.layer_params + self.embedding_params + self.head_params

    @property
    def active_params(self) -> int:
        """Parameters touched per token (MoE routes each token to top_k experts)."""
        inactive = (self.experts - self.top_k) * self.expert_params * self.layers
        return self.params - inactive

    # -- FLOPs ---------------------------------------------------------------------------
    def forward_flops_per_token(self, seq_len: int | None = None) -> dict[str, float]:
        """Forward FLOPs per token, split into ``layers`` (matmuls), ``attention`` (scores) and ``logits``.

        Each multiply-add is 2 FLOPs. Matmuls: 2 x (weight matrices a token touches). Attention
        scores QK^T and the weighted sum over V: 2 x 2 x s x h per layer without a causal discount,
        as in Narayanan et al. 2021 (eq. 3) and Korthikanti et al. 2022 (§6) -- heads x head_dim in place of h
        when ``head_dim`` is given. Logits: 2 V h.
        """
        s = self.seq_len if seq_len is None else positive_int("seq_len", seq_len)
        h, q, kv, f = self.hidden, self.q_dim, self.kv_dim, self.ffn_hidden
        attn_mats = 2 * h * q + 2 * h * kv
        mlp_mats = self.top_k * (3 if self.gated_mlp else 2) * h * f
        router = h * self.experts if self.is_moe else 0
        return {
            "layers": 2.0 * self.layers * (attn_mats + mlp_mats + router),
            "attention": 4.0 * self.layers * s * q,
            "logits": 2.0 * self.vocab * h,
        }

    def flops_per_token(self, recompute: str = "none", seq_len: int | None = None,
                        recompute_share: float = 1.0) -> float:
        """Training FLOPs per token (forward + backward = 3 x forward).

        Backward costs twice the forward (Kaplan et al. 2020 §2.1; Narayanan et al. 2021 §5.1).
        For the GPT shape with recompute="none" this is 72 l h^2 + 12 l s h + 6 V h; with
        recompute="full" the layers' forward runs once more, giving Narayanan et al. eq. 3:
        96 l h^2 (1 + s/(6h)) + 6 V h per token. "selective" re-runs only the attention-score
        part (Korthikanti et al. 2022 §5); "op" re-runs the matmuls torchtitan's op-level SAC does not
        save (every second one, :func:`op_saved_matmuls`), not the attention. ``recompute_share``: the
        share of the layers that recompute (``Plan(recompute_layers=k)``: k of each chunk's layers).
        """
        choice("recompute", recompute, RECOMPUTE)
        fw = self.forward_flops_per_token(seq_len)
        total = 3.0 * (fw["layers"] + fw["attention"] + fw["logits"])
        return total + recompute_share * self.recompute_flops_per_token(recompute, seq_len)

    def recompute_flops_per_token(self, recompute: str = "none", seq_len: int | None = None) -> float:
        """Forward FLOPs per token that ``recompute`` runs a second time, all layers recomputing.

        Examples:
            >>> m = MODELS["llama3-8b"]
            >>> m.recompute_flops_per_token("op") == 2 * 32 * (4096 * 1024 + 4096 * 4096 + 4096 * 14336)
            True
        """
        choice("recompute", recompute, RECOMPUTE)
        fw = self.forward_flops_per_token(seq_len)
        if recompute == "full":
            return fw["layers"] + fw["attention"]
        if recompute == "selective":
            return fw["attention"]
        if recompute == "op":
            saved = op_saved_matmuls(self)
            redo = sum(i * o for name, i, o in block_matmuls(self) if name not in saved and name not in _ATTN_MM)
            redo_attn = sum(i * o for name, i, o in block_matmuls(self) if name not in saved and name in _ATTN_MM)
            return 2.0 * self.layers * (redo_attn + self.top_k * redo)
        return 0.0

    def stage_forward_flops(self, split, seq_len: int | None = None) -> list[float]:
        """Forward FLOPs per token of each pipeline stage, stage ``i`` holding ``split[i]`` layers.

        Layers cost the same each (matmuls plus attention scores, as in :meth:`forward_flops_per_token`);
        the output projection (logits, 2 V h) runs on the last stage, which is why an even split by
        layers is not an even split by work (Narayanan et al. 2021 §3.2 place the loss on the last stage).

        Examples:
            >>> m = Transformer(layers=4, hidden=64, heads=4, seq_len=16, vocab=1000)
            >>> [round(f / 1e3, 1) for f in m.stage_forward_flops((2, 2))]
            [204.8, 332.8]
        """
        split = tuple(positive_int("split[i]", n) for n in split)
        if not split or sum(split) != self.layers:
            raise ParallelselError(f"split={split!r}: must be layers per stage, each >= 1, summing to layers={self.layers}")
        fw = self.forward_flops_per_token(seq_len)
        layer = (fw["layers"] + fw["attention"]) / self.layers
        return [n * layer + (fw["logits"] if i == len(split) - 1 else 0.0) for i, n in enumerate(split)]

    def model_flops_per_token(self, seq_len: int | None = None) -> float:
        """The FLOPs MFU counts: training without recompute (Chowdhery et al. 2022, App. B)."""
        return self.flops_per_token("none", seq_len)


MIN_PARAMS = 1e8
MAX_PARAMS = 1e15
"""The range of :func:`gpt_like` (the CLI's ``--params``): from GPT-2 small's size (below it the 51200-token embedding
alone outweighs the layers)
to a thousand times Llama 3 405B."""


def gpt_like(params: float, seq_len: int = 2048, vocab: int = 51200):
    """A GPT-shaped :class:`Transformer` of roughly ``params`` parameters whose heads allow TP.

    Derivation: a GPT layer has about 12 h^2 parameters (Narayanan et al. 2021, eq. 2) and large
    GPT models keep h / l near 128 (GPT-3 175B: 12288 / 96; 13B: 5120 / 40; 6.7B: 4096 / 32,
    Brown et al. 2020, Table 2.1). So 12 l h^2 = 12 h^3 / 128 gives h = (128 N / 12)^(1/3). Heads
    are 128 wide, and their number is rounded to a multiple of 8 (to a power of two below 8), so
    that TP = 2, 4 and 8 -- a node of eight GPUs -- divide the heads: Megatron-LM requires the
    heads to divide by the TP size (Shoeybi et al. 2019 §3). Then l = round((N - V h) / (12 h^2)),
    at least 1, so the embedding (V h) is counted. For N = 175e9 this returns GPT-3's shape, and
    for 70e9 72 heads (a plain rounding would give 71, a prime: no TP at all).

    Examples:
        >>> m = gpt_like(175e9)
        >>> m.layers, m.hidden, m.heads
        (96, 12288, 96)
        >>> gpt_like(70e9).heads % 8
        0
    """
    n = float(params) if not isinstance(params, bool) and isinstance(params, (int, float)) else math.nan
    if not (math.isfinite(n) and MIN_PARAMS <= n <= MAX_PARAMS):
        raise ParallelselError(f"params={params!r}: must be a finite number between {MIN_PARAMS:g} and {MAX_PARAMS:g}")
    heads = (128 * n / 12) ** (1 / 3) / 128
    if heads >= 8:
        heads = 8 * max(1, round(heads / 8))
    else:
        heads = 2 ** max(0, round(math.log2(max(heads, 1.0))))
    h = 128 * heads
    layers = max(1, int(round((n - vocab * h) / (12 * h * h))))
    return Transformer(layers=layers, hidden=h, heads=heads, seq_len=seq_len, vocab=vocab, tied_embeddings=True,
                       position="learned", bias=True, norm="layernorm", name=f"GPT-like ~{n / 1e9:g}B")


_ATTN_MM = ("wq", "wk", "wv", "wo")


def _gpt(name, layers, hidden, heads, seq_len=2048, vocab=51200, source=""):
    return Transformer(
        layers=layers, hidden=hidden, heads=heads, seq_len=seq_len, vocab=vocab, tied_embeddings=True,
        position="learned", bias=True, norm="layernorm", name=name, source=source,
    )


def _llama(name, layers, hidden, heads, ffn, vocab, seq_len, kv_heads=None, experts=1, top_k=1, source=""):
    return Transformer(
        layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads, ffn_hidden=ffn, vocab=vocab, seq_len=seq_len,
        gated_mlp=True, tied_embeddings=False, position="rotary", bias=False, norm="rmsnorm",
        experts=experts, top_k=top_k, name=name, architecture="llama", source=source,
    )


MODELS: dict[str, Transformer] = Catalogue("model", {
    # Radford et al. 2019 (GPT-2 XL): 48 layers, d=1600, 25 heads, 1024 context, 50257 vocab -> 1,557,611,200.
    "gpt2-1.5b": _gpt("GPT-2 1.5B", 48, 1600, 25, seq_len=1024, vocab=50257,
                      source="Radford et al. 2019, Language Models are Unsupervised Multitask Learners (GPT-2 XL)"),
    # Brown et al. 2020, Table 2.1 (GPT-3 175B); vocab padded to 51200 as in Narayanan et al. 2021 §5.1.
    "gpt3-175b": _gpt("GPT-3 175B", 96, 12288, 96,
                      source=("Brown et al. 2020, Table 2.1; vocabulary padded to 51200 as in Narayanan et al. 2021 "
                              "§5.1")),
    # Touvron et al. 2023 (Llama 2), Table 1 and the released configs.
    "llama2-7b": _llama("Llama-2 7B", 32, 4096, 32, 11008, 32000, 4096,
                        source="Touvron et al. 2023 (Llama 2), Table 1 and the released config.json"),
    "llama2-13b": _llama("Llama-2 13B", 40, 5120, 40, 13824, 32000, 4096,
                         source="Touvron et al. 2023 (Llama 2), Table 1 and the released config.json"),
    "llama2-70b": _llama("Llama-2 70B", 80, 8192, 64, 28672, 32000, 4096, kv_heads=8,
                         source="Touvron et al. 2023 (Llama 2), Table 1 and the released config.json"),
    # Llama 3 Herd of Models (Dubey et al. 2024), Table 3.
    "llama3-8b": _llama("Llama-3 8B", 32, 4096, 32, 14336, 128256, 8192, kv_heads=8,
                        source="Dubey et al. 2024 (The Llama 3 Herd of Models), Table 3"),
    "llama3-70b": _llama("Llama-3 70B", 80, 8192, 64, 28672, 128256, 8192, kv_heads=8,
                         source="Dubey et al. 2024 (The Llama 3 Herd of Models), Table 3"),
    "llama3-405b": _llama("Llama-3 405B", 126, 16384, 128, 53248, 128256, 8192, kv_heads=8,
                          source="Dubey et al. 2024 (The Llama 3 Herd of Models), Table 3"),
    # Jiang et al. 2024 (Mixtral of Experts): 8 experts, top-2, 32 layers, d=4096, GQA 8.
    "mixtral-8x7b": _llama("Mixtral 8x7B", 32, 4096, 32, 14336, 32000, 4096, kv_heads=8, experts=8, top_k=2,
                           source="Jiang et al. 2024 (Mixtral of Experts), Table 1"),
})

