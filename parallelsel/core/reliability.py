"""Failures and checkpoints: how often a job of N GPUs stops, and how often to checkpoint it.

A job stops when any of its GPUs (or their hosts) fails, so its mean time between failures is the
per-GPU MTBF divided by N. The first-order optimal checkpoint interval is Young's
T = sqrt(2 C M) (Young 1974, "A first order approximation to the optimum checkpoint interval",
CACM 17(9)), with C the time to write a checkpoint and M the job's MTBF; the fraction of time lost
at interval T is about C/T (writing) + T/(2M) (work redone after a failure, half an interval on
average).

Examples:
    >>> round(job_mtbf(16384) / 3600, 2)  # Llama 3's cluster: an interruption about every 3 hours
    3.09
    >>> round(young_interval(60.0, 7200.0), 1)  # write for a minute, fail every two hours
    929.5
"""

from __future__ import annotations

import math

from ._check import positive_int, positive_number, record

LLAMA3_INTERRUPTIONS = (419, 54 * 86400.0, 16384)
"""Dubey et al. 2024 (The Llama 3 Herd of Models), §3.3.4 / Table 5: 419 unexpected interruptions
in a 54-day snapshot of pre-training on 16,384 H100 GPUs: (interruptions, seconds, GPUs)."""

GPU_FAILURE_RATE = LLAMA3_INTERRUPTIONS[0] / (LLAMA3_INTERRUPTIONS[1] * LLAMA3_INTERRUPTIONS[2])
"""Interruptions per GPU-second implied by :data:`LLAMA3_INTERRUPTIONS`."""

NODE_WRITE_BANDWIDTH = 2e9
"""Bytes/s one node writes to shared storage: a stated assumption (measure yours)."""

STORAGE_BANDWIDTH = 40e9
"""Bytes/s a parallel file system sustains in aggregate for one job: a stated assumption."""


def job_mtbf(gpus: int, rate: float = GPU_FAILURE_RATE) -> float:
    """Seconds between failures of a job on ``gpus`` GPUs, each failing at ``rate`` per second."""
    return 1.0 / (positive_number("rate", rate) * positive_int("gpus", gpus))


def checkpoint_bytes(params: float, recipe) -> float:
    """Bytes a full checkpoint holds: weights and optimizer state (gradients are not saved).

    ``recipe`` is a :class:`parallelsel.core.recipe.Recipe` or the key of one in ``RECIPES`` (``"bf16-adam"``).
    """
    from .recipe import RECIPES, Recipe  # local: reliability stays importable without the presets
    recipe = record("recipe", recipe.lower() if isinstance(recipe, str) else recipe, Recipe, RECIPES)
    return positive_number("params", params) * (recipe.weights + recipe.optimizer)


def write_time(nbytes: float, writers: int = 1, node_bandwidth: float = NODE_WRITE_BANDWIDTH,
               storage_bandwidth: float = STORAGE_BANDWIDTH) -> float:
    """Seconds to write ``nbytes`` from ``writers`` nodes in parallel, capped by the storage's aggregate bandwidth.

    ``writers=1`` is a full state dict written by one rank; a sharded checkpoint has every node write.
    """
    rate = min(positive_int("writers", writers) * positive_number("node_bandwidth", node_bandwidth),
               positive_number("storage_bandwidth", storage_bandwidth))
    return positive_number("nbytes", nbytes, allow_zero=True) / rate


def young_interval(write: float, mtbf: float) -> float:
    """Young's optimal checkpoint interval sqrt(2 C M), seconds."""
    return math.sqrt(2.0 * positive_number("write", write, allow_zero=True) * positive_number("mtbf", mtbf))


def lost_fraction(write: float, interval: float, mtbf: float) -> float:
    """Share of time lost at checkpoint ``interval``: C/T for writing plus T/(2M) for redone work (Young 1974)."""
    return (positive_number("write", write, allow_zero=True) / positive_number("interval", interval)
            + interval / (2.0 * positive_number("mtbf", mtbf)))
