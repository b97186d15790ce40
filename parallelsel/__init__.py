"""parallelsel: choose DP, FSDP/ZeRO, TP and PP for large-model training, with every number traceable to a source."""

from . import comm, memory, pipeline
from .estimate import Estimate, MemoryBreakdown, StepTime, estimate, scaling_efficiency
from .hardware import DEVICES, LINKS, Cluster, Device, Link
from .model import MODELS, Transformer
from .plan import Plan, Workload, fsdp_plan
from .recipe import RECIPES, Recipe

__all__ = [
    "DEVICES", "LINKS", "MODELS", "RECIPES",
    "Cluster", "pipeline", "comm", "memory",
    "estimate", "Estimate", "StepTime", "MemoryBreakdown", "scaling_efficiency", "Device", "Link", "Plan", "Recipe", "Transformer", "Workload", "fsdp_plan",
]
__version__ = "0.1.0"
