"""Roofline conditions: when each strategy's communication fits under its computation.

The method is the one "How to Scale Your Model" (Austin et al. 2025, part 5, "How to Parallelize a
Transformer for Training") teaches: write the compute time of one unit of work as FLOPs / F and its
communication time as bytes / beta, and ask which side is longer. The answer is a threshold on one
quantity the user controls (tokens per GPU, hidden size, layers per stage) against the ratio
F / beta of the hardware, in FLOPs per byte. Above the threshold the strategy is compute-bound; below
it, the exposed communication sets the step time.

Every function here uses the bandwidth term of the ring alpha-beta model only (large messages,
Thakur, Rabenseifner & Gropp 2005 §4), a dense model of ``6 x params`` FLOPs per token (Kaplan et al.
2020 §2.1: 2 forward, 4 backward), and no attention-score FLOPs: it is the condition to predict with,
before `parallelsel.core.estimate` prices the whole step.

The bandwidth beta is ``link.bandwidth`` (line rate). For a group that crosses nodes pass the link the
group is priced on (:func:`parallelsel.core.placement.link_for`): NCCL runs one ring per HCA a group has
on a node, so that link carries k HCAs' bandwidth. The bytes per parameter are the recipe's, or with
``stack`` those the stack sends (:func:`parallelsel.core.stacks.wire_bytes`: fp32 gradients on
Megatron-Core and torchtitan, bf16 on DeepSpeed; bf16 parameter gathers).

Units: FLOP/s, bytes/s, bytes; thresholds in tokens or elements.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._check import ParallelselError, positive_int, positive_number, record
from .comm import bus_factor
from .hardware import Device, Link
from .recipe import RECIPES, Recipe
from .stacks import Stack, wire_bytes

# FLOPs per parameter per token (Kaplan et al. 2020 §2.1): forward 2, backward 4 (input and weight gradients).
_FORWARD, _BACKWARD = 2.0, 4.0


def _hardware(device, link):
    if not isinstance(device, Device):
        raise ParallelselError(f"device={device!r}: must be a Device (e.g. ps.DEVICES['h100-sxm-80gb'])")
    if not isinstance(link, Link):
        raise ParallelselError(f"link={link!r}: must be a Link (e.g. ps.LINKS['ib-ndr'])")
    return device.peak_flops, link.bandwidth


def intensity(device: Device, link: Link) -> float:
    """The hardware's critical ratio F / beta in FLOPs per byte sent over ``link``.

    A piece of work that does fewer FLOPs per byte it must send than this is communication-bound
    on that link (Williams, Waterman & Patterson 2009, the roofline model, applied to a network link).

    Examples:
        >>> from parallelsel import DEVICES, LINKS
        >>> round(intensity(DEVICES["a100-80gb"], LINKS["ib-hdr"]))
        12480
    """
    flops, beta = _hardware(device, link)
    return flops / beta


def _recipe(recipe: Recipe | None, stack: Stack | None) -> Recipe:
    """``recipe``, or when None the stack's own (:attr:`Stack.recipe`), else bf16 + Adam (ZeRO's 2 + 2 + 12)."""
    if stack is not None and not isinstance(stack, Stack):
        raise ParallelselError(f"stack={stack!r}: must be a Stack (e.g. ps.STACKS['megatron-core']) or None")
    if recipe is None:
        return RECIPES[stack.recipe if stack is not None else "bf16-adam"]
    return record("recipe", recipe, Recipe, RECIPES)


def _wire(recipe: Recipe | None, stack: Stack | None) -> tuple[float, float]:
    """(gradient, weight) bytes per parameter on the wire: the recipe's, or as ``stack`` sends them."""
    recipe = _recipe(recipe, stack)
    if stack is None:
        return recipe.grads, recipe.weights
    return wire_bytes(stack, recipe)


def dp_critical_tokens(device: Device, link: Link, ranks: int, recipe: Recipe | None = None,
                       stack: Stack | None = None) -> float:
    """Tokens per GPU per step above which DP's gradient all-reduce fits under the backward pass.

    Backward time per step: 4 P T / F. Ring all-reduce of the gradients: 2(n-1)/n x g P / beta bytes,
    g the gradient bytes per parameter. Equal when T = 2(n-1)/n x g / 4 x F / beta; for bf16
    gradients that is (n-1)/n x F / beta (Li et al. 2020 §3.2.3 overlap the all-reduce with backward
    by buckets; the last bucket is always exposed, which this bound ignores).

    Examples:
        >>> from parallelsel import DEVICES, LINKS
        >>> round(dp_critical_tokens(DEVICES["a100-80gb"], LINKS["ib-hdr"], 64))
        12285
    """
    flops, beta = _hardware(device, link)
    n = positive_int("ranks", ranks)
    return bus_factor("all-reduce", n) * _wire(recipe, stack)[0] / _BACKWARD * flops / beta


def fsdp_critical_tokens(device: Device, link: Link, ranks: int, recipe: Recipe | None = None,
                         stack: Stack | None = None) -> float:
    """Tokens per GPU per micro-batch above which FSDP's (ZeRO-3's) traffic fits under the whole step.

    Per micro-batch FSDP all-gathers the weights twice (forward, and again in backward after the
    forward resharded them) and reduce-scatters the gradients once: (n-1)/n x (2 w + g) P bytes
    (Rajbhandari et al. 2020 §7.2.2: 1.5x DP's volume), against 6 P T / F of compute, all of it
    prefetched under computation (Zhao et al. 2023 §3.3). Equal when T = (n-1)/n x (2 w + g) / 6 x F / beta.
    With gradient accumulation the gathers repeat every micro-batch, so T is tokens per micro-batch.

    Examples:
        >>> from parallelsel import DEVICES, LINKS
        >>> round(fsdp_critical_tokens(DEVICES["a100-80gb"], LINKS["ib-hdr"], 64))
        12285
    """
    flops, beta = _hardware(device, link)
    n = positive_int("ranks", ranks)
    g, w = _wire(recipe, stack)
    volume = bus_factor("all-gather", n) * 2 * w + bus_factor("reduce-scatter", n) * g
    return volume / (_FORWARD + _BACKWARD) * flops / beta


def dp_comm_to_compute(tokens: float, device: Device, link: Link, ranks: int,
                       recipe: Recipe | None = None, stack: Stack | None = None) -> float:
    """Ratio of DP's gradient all-reduce to the backward pass for ``tokens`` per GPU per step (1.0 = break-even).

    Both sides of :func:`dp_critical_tokens` scale the same way except the backward, which grows with the
    tokens: the ratio is the threshold over the tokens.

    Examples:
        >>> from parallelsel import DEVICES, LINKS
        >>> round(dp_comm_to_compute(4096, DEVICES["a100-80gb"], LINKS["ib-hdr"], 64), 2)
        3.0
    """
    return dp_critical_tokens(device, link, ranks, recipe, stack) / positive_number("tokens", tokens)


def fsdp_comm_to_compute(tokens: float, device: Device, link: Link, ranks: int,
                         recipe: Recipe | None = None, stack: Stack | None = None) -> float:
    """Ratio of FSDP's (ZeRO-3's) per-micro-batch traffic to the micro-batch's compute, for ``tokens`` per GPU
    per micro-batch (1.0 = break-even; see :func:`fsdp_critical_tokens`).

    Examples:
        >>> from parallelsel import DEVICES, LINKS
        >>> round(fsdp_comm_to_compute(4096, DEVICES["a100-80gb"], LINKS["ib-hdr"], 64), 2)
        3.0
    """
    return fsdp_critical_tokens(device, link, ranks, recipe, stack) / positive_number("tokens", tokens)


def pp_comm_to_compute(hidden: int, layers_per_stage: int, device: Device, link: Link,
                       activation_bytes: float = 2.0, ffn_ratio: float = 4.0) -> float:
    """Ratio of a stage boundary's p2p to the stage's compute, per token (1.0 = break-even; see
    :func:`pp_critical_hidden_layers`): the threshold over h x layers per stage.

    Examples:
        >>> from parallelsel import DEVICES, LINKS
        >>> round(pp_comm_to_compute(4096, 1, DEVICES["a100-80gb"], LINKS["eth-25g"]), 2)
        1.35
    """
    h = positive_int("hidden", hidden)
    layers = positive_int("layers_per_stage", layers_per_stage)
    return pp_critical_hidden_layers(device, link, activation_bytes, ffn_ratio) / (h * layers)


def tp_comm_to_compute(hidden: int, layer_params: int, tp: int, device: Device, link: Link,
                       activation_bytes: float = 2.0) -> float:
    """Ratio of a TP group's all-reduce time to its GEMM time, per layer and token (1.0 = break-even).

    Megatron TP (Shoeybi et al. 2019 §3; Narayanan et al. 2021 §3.2) all-reduces one activation of
    ``hidden`` elements twice in forward and twice in backward per layer: 4 x 2(t-1)/t x a h bytes per
    token. The layer's GEMMs do 6 x ``layer_params`` FLOPs per token, split over t GPUs. Neither term
    depends on the micro-batch or sequence length, so only h, the layer size, t and F / beta decide it;
    these all-reduces sit on the critical path, so a ratio above 1 is time lost, not hidden.

    Examples:
        >>> from parallelsel import DEVICES, LINKS, MODELS
        >>> m = MODELS["gpt3-175b"]
        >>> round(tp_comm_to_compute(m.hidden, m.layer_params, 8, DEVICES["a100-80gb"], LINKS["nvlink3"]), 3)
        0.132
    """
    flops, beta = _hardware(device, link)
    t = positive_int("tp", tp)
    h = positive_int("hidden", hidden)
    params = positive_int("layer_params", layer_params)
    comm = 4 * bus_factor("all-reduce", t) * activation_bytes * h / beta
    compute = (_FORWARD + _BACKWARD) * params / t / flops
    return comm / compute


def tp_critical_hidden(tp: int, device: Device, link: Link, ffn_ratio: float = 4.0, activation_bytes: float = 2.0) -> float:
    """Hidden size above which TP's per-layer all-reduces are shorter than its GEMMs (GPT-style layer).

    With a non-gated MLP of width ``ffn_ratio`` x h, a layer has (4 + 2 ffn_ratio) h^2 GEMM weights;
    setting `tp_comm_to_compute` to 1 gives h* = 8 a (t-1) / (6 (4 + 2 ffn_ratio)) x F / beta, which is
    2(t-1)/9 x F / beta for the usual 4h MLP and bf16 activations.

    Examples:
        >>> from parallelsel import DEVICES, LINKS
        >>> round(tp_critical_hidden(8, DEVICES["a100-80gb"], LINKS["nvlink3"]))
        1618
    """
    flops, beta = _hardware(device, link)
    t = positive_int("tp", tp)
    weights_per_h2 = 4 + 2 * ffn_ratio
    return 4 * 2 * (t - 1) * activation_bytes / ((_FORWARD + _BACKWARD) * weights_per_h2) * flops / beta


def pp_critical_hidden_layers(device: Device, link: Link, activation_bytes: float = 2.0, ffn_ratio: float = 4.0) -> float:
    """Hidden size x layers per stage above which a stage boundary's p2p fits under the stage's compute.

    Each token sends one activation forward and one gradient back per boundary (2 a h bytes,
    Narayanan et al. 2021 §3.3) against 6 (4 + 2 ffn_ratio) h^2 L_s FLOPs of the stage: break-even at
    h L_s = 2 a / (6 (4 + 2 ffn_ratio)) x F / beta. The threshold is tiny on any real link, which is why
    PP is the dimension that crosses the slow links.

    Examples:
        >>> from parallelsel import DEVICES, LINKS
        >>> round(pp_critical_hidden_layers(DEVICES["a100-80gb"], LINKS["ib-hdr"]))
        693
    """
    flops, beta = _hardware(device, link)
    return 2 * activation_bytes / ((_FORWARD + _BACKWARD) * (4 + 2 * ffn_ratio)) * flops / beta


def ep_comm_to_compute(model, ep: int, device: Device, link: Link, activation_bytes: float = 2.0) -> float:
    """Ratio of an MoE layer's all-to-all time to its compute, per token (1.0 = break-even).

    Per MoE layer each token goes out to its top_k experts and comes back (dispatch and combine), in
    forward and again in backward: 4 x (e-1)/e x k x a h bytes (Lepikhin et al. 2021; Fedus et al.
    2022). Against it, the layer's GEMMs the token touches: 6 x (attention + k x one expert) FLOPs.
    Unlike TP's all-reduce, an all-to-all of one micro-batch can run under another micro-batch's
    computation; DeepSeek-AI 2024 (DeepSeek-V3, §3.2.1) schedules cross-node EP so that the two are
    about 1:1 and hides the all-to-all completely, which a ratio at or below 1 allows.

    Examples:
        >>> from parallelsel import DEVICES, LINKS, MODELS
        >>> round(ep_comm_to_compute(MODELS["mixtral-8x7b"], 8, DEVICES["a100-80gb"], LINKS["ib-hdr"]), 2)
        0.3
    """
    flops, beta = _hardware(device, link)
    e = positive_int("ep", ep)
    if not getattr(model, "is_moe", False):
        raise ParallelselError(f"model={getattr(model, 'name', model)!r}: must be an MoE model (experts > 1)")
    k = model.top_k
    comm = 4 * bus_factor("all-to-all", e) * k * activation_bytes * model.hidden / beta
    compute = (_FORWARD + _BACKWARD) * (model.attention_params + k * model.expert_params) / flops
    return comm / compute


@dataclass(frozen=True)
class Conditions:
    """The four thresholds for one device and link, with the F / beta they come from."""

    device: str
    link: str
    intensity: float
    dp_tokens: float
    fsdp_tokens: float
    tp_hidden: float
    pp_hidden_layers: float


def conditions(device: Device, link: Link, ranks: int = 8, tp: int = 8,
               recipe: Recipe | None = None, stack: Stack | None = None) -> Conditions:
    """Every strategy's compute-bound threshold on one device and link (see the functions above)."""
    recipe = _recipe(recipe, stack)
    return Conditions(
        device=device.name, link=link.name, intensity=intensity(device, link),
        dp_tokens=dp_critical_tokens(device, link, ranks, recipe, stack),
        fsdp_tokens=fsdp_critical_tokens(device, link, ranks, recipe, stack),
        tp_hidden=tp_critical_hidden(tp, device, link, activation_bytes=recipe.activation),
        pp_hidden_layers=pp_critical_hidden_layers(device, link, activation_bytes=recipe.activation),
    )
