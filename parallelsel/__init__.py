"""parallelsel: choose DP, FSDP/ZeRO, TP and PP for large-model training, with every number traceable to a source."""

from . import comm, memory, moe, pipeline, reliability, roofline
from .calibrate import Calibration, calibrate
from .estimate import Estimate, MemoryBreakdown, StepTime, estimate, scaling_efficiency
from .lesson import FOUR_COLUMNS, paper_cases, topology_variant
from .matrix import MatrixRow, Verdict, selection_matrix
from .hardware import DEVICES, LINKS, Cluster, Device, Link
from .model import MODELS, Transformer
from .plan import Plan, Workload, fsdp_plan
from .recipe import RECIPES, Recipe
from .search import SearchResult, search

__all__ = [
    "DEVICES", "LINKS", "MODELS", "RECIPES",
    "Cluster", "pipeline", "comm", "memory", "moe", "reliability", "roofline",
    "calibrate", "Calibration", "estimate", "Estimate", "StepTime", "MemoryBreakdown", "scaling_efficiency",
    "FOUR_COLUMNS", "MatrixRow", "SearchResult", "Verdict", "paper_cases", "search", "selection_matrix", "topology_variant",
    "Device", "Link", "Plan", "Recipe", "Transformer", "Workload", "fsdp_plan",
]
__version__ = "0.1.0"
