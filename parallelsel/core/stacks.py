"""Which training stacks run pipeline parallelism together with ZeRO/FSDP, and as what.

Three stacks, three answers (each is data: a :class:`parallelsel.core.reasons.Reason`):

* DeepSpeed's ``PipelineEngine`` accepts ZeRO-1 and refuses ZeRO-2 and ZeRO-3: its constructor
  asserts ``zero_optimization_stage() < 2`` ("ZeRO-2 and ZeRO-3 are incompatible with pipeline
  parallelism", ``deepspeed/runtime/pipe/engine.py``).
* Megatron-LM's distributed optimizer (``--use-distributed-optimizer``) works with PP and shards
  only the optimizer state (fp32 master weights and Adam moments) over the DP group: ZeRO-1-like;
  gradients are reduce-scattered and updated weights all-gathered once per step (Megatron-LM docs,
  "Distributed Optimizer").
* torchtitan composes FSDP2 with PP: ``apply_fsdp`` sets ``reshard_after_forward = not pp_enabled``
  (``torchtitan/models/llama3/infra/parallelize.py``), and PyTorch's pipelining stage keeps
  gradients unsynchronised and parameters unsharded until the last micro-batch's backward
  (``torch.distributed.pipelining.stage``, ``backward_maybe_with_nosync``). So a stage's weights
  are all-gathered once per step and its gradients reduce-scattered once; at the peak the stage
  holds its unsharded weights and gradients, with the optimizer state sharded: the memory of ZeRO-1.

No stack runs PP with ZeRO-2 (DeepSpeed refuses it, Megatron-LM and torchtitan do not offer it).
:func:`effective_zero` is the ZeRO stage whose memory and traffic a plan's stack has.
"""

from __future__ import annotations

from .reasons import Reason

__all__ = ["effective_zero", "pp_zero_reason", "pp_zero_stack"]


def pp_zero_stack(plan) -> Reason | None:
    """The stacks that run ``plan``'s PP x ZeRO combination, as a reason; None without both.

    Examples:
        >>> import parallelsel as ps
        >>> pp_zero_stack(ps.Plan(dp=2, pp=8, zero=3)).code
        'pp_fsdp_torchtitan'
        >>> pp_zero_stack(ps.Plan(dp=2, pp=8, zero=2)).code, pp_zero_stack(ps.Plan(dp=2, zero=3))
        ('pp_zero2_no_stack', None)
    """
    return pp_zero_reason(plan.pp, plan.zero, plan.dp)


def pp_zero_reason(pp: int, zero: int, dp: int) -> Reason | None:
    """:func:`pp_zero_stack` from the three degrees alone (what the search knows before it builds a plan)."""
    if pp == 1 or zero == 0 or dp == 1:
        return None
    values = {"pp": pp, "zero": zero}
    if zero == 1:
        return Reason("pp_zero1_stacks", values)
    if zero == 2:
        return Reason("pp_zero2_no_stack", values)
    return Reason("pp_fsdp_torchtitan", values)


def effective_zero(plan) -> int:
    """The ZeRO stage whose memory and traffic ``plan`` has on the stack that runs it.

    ``plan.zero`` except ZeRO-3/FSDP with PP, which runs as torchtitan runs it (see the module
    docstring): weights and gradients unsharded for the step, optimizer state sharded, one
    all-gather and one reduce-scatter per step -- ZeRO-1's memory and traffic.
    """
    return 1 if plan.pp > 1 and plan.zero == 3 else plan.zero
