"""Fit the device's kernel constant to one measured step, then re-estimate every other plan from it.

A user who has timed one step of their own job (seconds, or the MFU their logs print) knows more
than any datasheet: the achieved kernel rate of their software stack. :func:`calibrate` finds the
``gemm_efficiency`` (:class:`parallelsel.Device`; the flat ``efficiency`` if the estimate used one)
at which :func:`parallelsel.core.estimate` reproduces the measurement, keeping everything else --
communication, overlap, bubble -- from the model, so nothing is counted twice. Step time falls
monotonically as the kernel rate rises, so the fit is a bisection.

Examples:
    >>> import parallelsel as ps
    >>> w = ps.Workload(ps.MODELS["gpt2-1.5b"], global_batch=64)
    >>> e = ps.estimate(w, ps.Plan(dp=8, micro_batch=8), ps.Cluster(ps.DEVICES["a100-80gb"], nodes=1))
    >>> c = calibrate(e, measured_step=1.25 * e.step.total)
    >>> round(c.estimate.step.total / e.step.total, 3), c.scale < 1
    (1.25, True)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ._check import ParallelselError, positive_number
from .estimate import Estimate, estimate
from .hardware import Cluster, Device

__all__ = ["Calibration", "calibrate"]

_ITERATIONS = 60
"""Bisection steps: 2^-60 of the bracket, far below any measurement's precision."""


@dataclass(frozen=True)
class Calibration:
    """The fitted constant and what it changes.

    ``scale``: fitted kernel rate / the model's; ``device`` and ``cluster``: the fitted device (its
    ``gemm_efficiency`` scaled) and a cluster built on it; ``efficiency``: the fitted flat efficiency
    when the estimate used one, else None; ``measured``: the step time fitted to (seconds);
    ``before``: the estimate given; ``estimate``: the same plan re-estimated with the fitted constant.
    """

    scale: float
    device: Device
    cluster: Cluster
    efficiency: float | None
    measured: float
    before: Estimate
    estimate: Estimate

    def apply(self, workload, plan) -> Estimate:
        """``plan`` for ``workload`` on the fitted cluster, with the fitted constant."""
        return estimate(workload, plan, self.cluster, efficiency=self.efficiency, headroom=self.before.headroom)


def _target(e: Estimate, measured_step, measured_mfu) -> float:
    if (measured_step is None) == (measured_mfu is None):
        raise ParallelselError("calibrate: give exactly one of measured_step= (seconds) or measured_mfu= (a share in (0, 1])")
    if measured_step is not None:
        return positive_number("measured_step", measured_step)
    mfu = positive_number("measured_mfu", measured_mfu)
    if mfu > 1:
        raise ParallelselError(f"measured_mfu={measured_mfu!r}: must be in (0, 1] (a share of peak, not a percentage)")
    # MFU = model FLOPs / (step x peak x GPUs), so the step time it implies is the estimate's own
    # step scaled by the ratio of the two MFUs.
    return e.step.total * e.step.mfu / mfu


def _rebuilt(e: Estimate, factor: float) -> tuple[Cluster, float | None]:
    if e.efficiency is not None:
        return e.cluster, e.efficiency * factor
    device = replace(e.cluster.device, gemm_efficiency=e.cluster.device.gemm_efficiency * factor)
    cluster = replace(e.cluster, device=device)
    # The links were taken from the original device if they were assumed; the fitted cluster keeps saying so.
    object.__setattr__(cluster, "assumed", e.cluster.assumed)
    return cluster, None


def calibrate(estimate_: Estimate, measured_step: float | None = None, measured_mfu: float | None = None) -> Calibration:
    """Fit the kernel constant so that ``estimate_``'s plan takes ``measured_step`` seconds (or reaches
    ``measured_mfu``); see the module docstring.

    Raises ``ValueError`` when no kernel rate up to the device's peak reproduces the measurement
    (measured faster than the model allows even with every kernel at peak: the communication or
    bubble it assumes must then be wrong, not the kernels).
    """
    if not isinstance(estimate_, Estimate):
        raise ParallelselError(f"estimate={estimate_!r}: must be an Estimate (ps.estimate(...))")
    # A plan that breaks a hard rule on this cluster (more GPUs than it has, degrees that do not divide,
    # a batch that does not split) never ran here: a step "measured" on it would fit the constant to
    # a configuration the model times only nominally. Memory is left out: the measurement outranks the
    # memory model when the two disagree.
    broken = [r.code for r in estimate_.reasons if r.code != "memory_exceeds_device"]
    if broken:
        raise ParallelselError(f"plan={estimate_.plan.label()!r}: cannot run on this cluster ({', '.join(broken)}); "
                               "a measured step calibrates only a plan that runs")
    target = _target(estimate_, measured_step, measured_mfu)
    base = estimate_.efficiency if estimate_.efficiency is not None else estimate_.cluster.device.gemm_efficiency
    low, high = 1e-3, 1.0 / base  # scale bracket: kernel rate from 0.1% of the model's up to peak

    def step(factor: float) -> float:
        cluster, eff = _rebuilt(estimate_, factor)
        return estimate(estimate_.workload, estimate_.plan, cluster, efficiency=eff, headroom=estimate_.headroom).step.total

    fastest = step(high)
    if target < fastest:
        raise ParallelselError(f"measured step {target:.6g} s: faster than the model's {fastest:.6g} s with every kernel at "
                               "peak; check the plan, links and overlap it assumes")
    for _ in range(_ITERATIONS):
        mid = (low + high) / 2
        low, high = (mid, high) if step(mid) > target else (low, mid)
    factor = (low + high) / 2
    cluster, eff = _rebuilt(estimate_, factor)
    after = estimate(estimate_.workload, estimate_.plan, cluster, efficiency=eff, headroom=estimate_.headroom)
    return Calibration(factor, cluster.device, cluster, eff, target, estimate_, after)
