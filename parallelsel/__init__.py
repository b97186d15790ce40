"""parallelsel: choose DP, FSDP/ZeRO, TP and PP for large-model training, with every number traceable to a source.

The package has three layers in three folders, each importing only the ones below it (``tests/test_layers.py``
enforces it): :mod:`parallelsel.core` (the model: numbers and reason codes), :mod:`parallelsel.course` (the
lesson's data) and :mod:`parallelsel.render` (presentation: text, charts, the CLI and the in-browser calculator).
The names in ``__all__`` are the package's face.
"""

from . import _moved
from .core import comm, memory, moe, pipeline, reliability, roofline
from .core.calibrate import Calibration, calibrate
from .core.estimate import Estimate, MemoryBreakdown, StepTime, estimate, scaling_efficiency
from .core.hardware import DEVICES, LINKS, Cluster, Device, Link
from .core.matrix import MatrixRow, Verdict, selection_matrix
from .core.model import MODELS, Transformer
from .core.plan import Plan, Workload, fsdp_plan
from .core.recipe import RECIPES, Recipe
from .core.search import SearchResult, search
from .core.stacks import STACKS, Stack
from .course.lesson import paper_cases, topology_variant
from .render.lesson_text import FOUR_COLUMNS

__all__ = [
    "DEVICES", "LINKS", "MODELS", "RECIPES", "STACKS", "Stack",
    "Cluster", "pipeline", "comm", "memory", "moe", "reliability", "roofline",
    "calibrate", "Calibration", "estimate", "Estimate", "StepTime", "MemoryBreakdown", "scaling_efficiency",
    "FOUR_COLUMNS", "MatrixRow", "SearchResult", "Verdict", "paper_cases", "search", "selection_matrix", "topology_variant",
    "Device", "Link", "Plan", "Recipe", "Transformer", "Workload", "fsdp_plan",
]
from .core import VERSION as __version__  # one place for the version

_moved.install(__name__)
