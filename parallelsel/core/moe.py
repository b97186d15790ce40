"""One MoE layer's routed tokens under two token policies, and what each costs on the busiest expert-parallel rank.

A router assigns each token to ``top_k`` experts; the counts per expert are rarely equal. Two ways to run the
experts on them:

* ``"capacity"`` (GShard, Lepikhin et al. 2021 §2.2; Switch Transformer, Fedus et al. 2022 §2.2): every expert
  takes at most ``capacity = int(capacity_factor x tokens x top_k / experts)`` tokens; the rest are dropped (they
  skip the expert and pass through the residual connection). The expert buffers have this fixed shape, and an
  expert computes its whole buffer, padding included (static shapes, as on TPUs): time and memory are known
  before routing, the dropped tokens are the price.
* ``"dropless"`` (MegaBlocks, Gale et al. 2023; DeepSeek-V3, DeepSeek-AI 2024 §2.1.2, which balances the
  router with a bias instead of dropping): every expert computes exactly the tokens it was sent. Nothing is
  lost, but the rank holding the busiest experts sets the layer's time (the others wait for it at the next
  all-to-all), and its activation buffers grow with its load: memory must be provisioned for the worst step.

Here a rank holds ``experts / ep`` consecutive experts (Megatron-LM's layout), so its load is their sum. The
time of a rank is its experts' GEMMs timed by :func:`parallelsel.core.kernels.gemm_time` (forward, and twice that
for the input and weight gradients in backward); its activation memory is what the layer's MLP stores per
routed token (:func:`parallelsel.core.memory.layer_shape`: the f-wide tensors, plus the dispatched input).

Examples:
    >>> r = route((6, 2, 2, 2), "capacity", capacity_factor=1.0)
    >>> r.computed, r.dropped, r.imbalance
    ((3, 3, 3, 3), 3, 2.0)
    >>> route((6, 2, 2, 2), "dropless").computed
    (6, 2, 2, 2)
"""

from __future__ import annotations

from dataclasses import dataclass

from ._check import ParallelselError, choice, positive_int, positive_number
from .hardware import Device
from .kernels import gemm_time
from .memory import layer_shape
from .model import Transformer

__all__ = ["POLICIES", "ExpertCost", "Routing", "expert_cost", "route"]

POLICIES = ("capacity", "dropless")


@dataclass(frozen=True)
class Routing:
    """Tokens sent to each expert (``routed``), and the tokens each computes under ``policy`` (``computed``)."""

    policy: str
    routed: tuple[int, ...]
    computed: tuple[int, ...]
    capacity_factor: float | None = None

    @property
    def mean(self) -> float:
        """Tokens per expert if the router were balanced."""
        return sum(self.routed) / len(self.routed)

    @property
    def imbalance(self) -> float:
        """Busiest expert's routed tokens / the balanced share (the slowdown a dropless layer pays)."""
        return max(self.routed) / self.mean

    @property
    def dropped(self) -> int:
        """Token assignments no expert computes (0 when dropless)."""
        return sum(max(r - c, 0) for r, c in zip(self.routed, self.computed))

    @property
    def dropped_fraction(self) -> float:
        return self.dropped / sum(self.routed)


def route(routed, policy: str = "dropless", capacity_factor: float | None = None) -> Routing:
    """Apply a token ``policy`` to the router's counts per expert (see the module docstring)."""
    counts = tuple(positive_int(f"routed[{i}]", n, minimum=0) for i, n in enumerate(routed))
    if len(counts) < 2 or not sum(counts):
        raise ParallelselError(f"routed={routed!r}: must count the tokens of at least 2 experts, not all zero")
    choice("policy", policy, POLICIES)
    if policy == "dropless":
        if capacity_factor is not None:
            raise ParallelselError(f"capacity_factor={capacity_factor!r}: a dropless layer has no capacity")
        return Routing(policy, counts, counts)
    if capacity_factor is None:
        raise ParallelselError("capacity_factor=None: the capacity policy needs one (e.g. 1.25)")
    cf = positive_number("capacity_factor", capacity_factor)
    capacity = int(cf * sum(counts) / len(counts))  # Fedus et al. 2022, §2.2: (tokens / experts) x CF
    return Routing(policy, counts, (capacity,) * len(counts), cf)


@dataclass(frozen=True)
class ExpertCost:
    """The busiest rank's expert work for one micro-batch of one layer: its tokens, ``seconds`` (forward +
    backward GEMMs: the layer waits for the slowest rank) and ``activation_bytes`` stored for backward (the buffer
    to provision: the largest over ranks), beside the same with balanced routing (``balanced_*``)."""

    rank_tokens: int
    seconds: float
    activation_bytes: float
    balanced_seconds: float
    balanced_activation_bytes: float


def _rank_cost(model: Transformer, loads, device: Device, act_bytes: float) -> tuple[float, float]:
    h, f = model.hidden, model.ffn_hidden
    up = (2 if model.gated_mlp else 1) * f
    per_token = act_bytes * (h + layer_shape(model).f_tensors // model.top_k * f)
    forward = sum(gemm_time(n, up, h, device) + gemm_time(n, h, f, device) for n in loads if n)
    return 3 * forward, per_token * sum(loads)  # backward: input and weight gradients, one GEMM each per forward GEMM


def expert_cost(model: Transformer, routing: Routing, device: Device, ep: int | None = None,
                act_bytes: float = 2.0) -> ExpertCost:
    """What the busiest of ``ep`` expert-parallel ranks (default: one expert per rank) computes and stores."""
    if not isinstance(model, Transformer) or not model.is_moe:
        raise ParallelselError(f"model={getattr(model, 'name', model)!r}: must be an MoE Transformer (experts > 1)")
    if not isinstance(routing, Routing) or len(routing.routed) != model.experts:
        raise ParallelselError(f"routing: must be a Routing over the model's {model.experts} experts")
    if not isinstance(device, Device):
        raise ParallelselError(f"device={device!r}: must be a Device (e.g. ps.DEVICES['h100-sxm-80gb'])")
    e = model.experts if ep is None else positive_int("ep", ep)
    if model.experts % e:
        raise ParallelselError(f"ep={e}: must divide the {model.experts} experts")
    local = model.experts // e
    act = positive_number("act_bytes", act_bytes)
    ranks = [routing.computed[i * local:(i + 1) * local] for i in range(e)]
    costs = [_rank_cost(model, loads, device, act) for loads in ranks]
    balanced = _rank_cost(model, (int(routing.mean),) * local, device, act)
    return ExpertCost(max(sum(loads) for loads in ranks), max(c[0] for c in costs), max(c[1] for c in costs),
                      balanced[0], balanced[1])
