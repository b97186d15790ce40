"""Training recipes: bytes per parameter for weights, gradients and optimizer state.

Rajbhandari et al. 2020 (ZeRO), §3.1: mixed-precision Adam keeps 2 bytes of fp16/bf16 weights,
2 bytes of gradients and K = 12 bytes of optimizer state per parameter (fp32 master weights,
momentum and variance), 16 bytes in all.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._check import Catalogue, ParallelselError, positive_number, store

MAX_BYTES_PER_VALUE = 1024.0
"""Largest bytes per parameter or activation element accepted (fp32 Adam needs 16 in all)."""


@dataclass(frozen=True)
class Recipe:
    """Bytes per parameter: ``weights`` (compute copy), ``grads``, ``optimizer`` (K in ZeRO's notation).

    ``activation`` is the bytes per activation element (Korthikanti et al. 2022 assume 16-bit).
    """

    name: str
    weights: float
    grads: float
    optimizer: float
    activation: float = 2.0

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise ParallelselError(f"name={self.name!r}: must be a string")
        for f in ("weights", "grads", "activation"):
            store(self, f, positive_number(f, getattr(self, f), maximum=MAX_BYTES_PER_VALUE))
        store(self, "optimizer", positive_number("optimizer", self.optimizer, allow_zero=True, maximum=MAX_BYTES_PER_VALUE))

    @property
    def per_param(self) -> float:
        """Bytes of training state per parameter (weights + grads + optimizer)."""
        return self.weights + self.grads + self.optimizer


RECIPES: dict[str, Recipe] = Catalogue("recipe", {
    # ZeRO §3.1: 2 + 2 + 12 (fp32 master, momentum, variance).
    "bf16-adam": Recipe("bf16 + Adam", 2, 2, 12),
    # Megatron-LM's default with fp32 gradient accumulation (main_grad): 2 + 4 + 12.
    "bf16-adam-fp32grad": Recipe("bf16 + Adam, fp32 grads", 2, 4, 12),
    # Pure fp32 Adam: weights, grads, momentum, variance, no master copy: 4 + 4 + 8.
    "fp32-adam": Recipe("fp32 Adam", 4, 4, 8, activation=4),
    # torchtitan FSDP2 / DDP with bf16 compute: parameters, gradients and Adam moments stay fp32 (FSDP2's
    # MixedPrecisionPolicy casts to bf16 only for the all-gather and the compute; autocast likewise), no master copy: 4 + 4 + 8.
    "bf16-compute-fp32-adam": Recipe("bf16 compute, fp32 params + Adam", 4, 4, 8),
    # Dettmers et al. 2022 (8-bit optimizers): momentum and variance in 1 byte each, fp32 master kept: 2 + 2 + 6.
    "bf16-adam8bit": Recipe("bf16 + 8-bit Adam", 2, 2, 6),
    # SGD with momentum in fp32: weights, grads, momentum: 4 + 4 + 4.
    "sgd-momentum": Recipe("fp32 SGD + momentum", 4, 4, 4, activation=4),
})

RECIPE_SOURCES: dict[str, str] = {
    "bf16-adam": "Rajbhandari et al. 2020 (ZeRO) §3.1: 2 + 2 + 12 bytes per parameter",
    "bf16-adam-fp32grad": "Megatron-LM's fp32 gradient accumulation (main_grad): 2 + 4 + 12",
    "fp32-adam": "fp32 weights, gradients, Adam momentum and variance: 4 + 4 + 8",
    "bf16-compute-fp32-adam": "torchtitan configs.py L94-100 (mixed_precision_param bf16, reduce fp32) with "
                              "PyTorch FSDP2 MixedPrecisionPolicy / torch.autocast: fp32 states 4 + 4 + 8, bf16 compute",
    "bf16-adam8bit": "Dettmers et al. 2022 (8-bit Optimizers via Block-wise Quantization): 2 + 2 + 6",
    "sgd-momentum": "fp32 SGD with momentum: 4 + 4 + 4",
}
"""Where each :data:`RECIPES` preset's bytes per parameter come from."""
