"""Sentences for the reasons a launcher refuses a plan (:func:`parallelsel.core.launchers.refusals`)."""

from __future__ import annotations

from parallelsel.render.reasons import WORDS

__all__ = ["refusal_text", "refusals_text"]

_SCHEDULE_NAMES = WORDS["zh"]["schedule"]
_LAUNCHER_NAMES = {"megatron": "Megatron-LM", "torchtitan": "torchtitan", "deepspeed": "DeepSpeed"}


def refusal_text(launcher: str, code: str, values: dict) -> str:
    """One reason as a Chinese sentence, naming the launcher and the numbers it rests on."""
    name = _LAUNCHER_NAMES.get(launcher, launcher)
    v = values
    if code == "launcher_schedule":
        ok = "、".join(_SCHEDULE_NAMES.get(s, s) for s in v["supported"])
        return f"{name} 没有 {_SCHEDULE_NAMES.get(v['schedule'], v['schedule'])} 调度（有：{ok}）"
    if code == "launcher_hsdp_zero":
        return f"{name} 的部分分片（shard {v['shard']}）只支持 ZeRO-1（分布式优化器的多副本），不支持 ZeRO-{v['zero']}"
    if code == "launcher_zero":
        return f"{name} 没有只分片优化器状态的 ZeRO-{v['zero']}（FSDP 即 ZeRO-3，不重分片即接近 ZeRO-2）"
    if code == "launcher_tp_without_sp":
        return f"{name} 的 TP（{v['tp']} 路）总是带序列并行；请用带 SP 的方案"
    if code == "launcher_ddp_multi_dim":
        return (f"{name} 的纯 DDP 不能与其他维度组合（DP{v['dp']} × TP{v['tp']} × PP{v['pp']}）；"
                f"请用 ZeRO-2/3（FSDP）")
    if code == "launcher_pp_in_code":
        return f"{name} 的流水线段数（PP{v['pp']}）在模型代码里设（PipelineModule），不在 JSON 配置里"
    if code in ("launcher_tp_in_code", "launcher_tp_batch"):
        return (f"{name} 的 AutoTP（tensor_parallel.autotp_size）会把每张卡都算作 DP 来核对全局批量，"
                f"TP{v['tp']} 的方案批量会变；用 --export megatron（Megatron-DeepSpeed）")
    if code == "launcher_recompute_in_code":
        return f"{name} 的重算（{v['recompute']}）在模型代码里调用 deepspeed.checkpointing，不是 JSON 开关"
    if code == "launcher_hsdp":
        return f"{name} 的 ZeRO 在整个 DP 组（{v['dp']}）上分片，JSON 里没有 shard {v['shard']} 的混合分片"
    if code == "launcher_fsdp_option":
        what = {"no_sync": "梯度累积时跳过同步（no_sync）", "reshard_after_forward": "前向后不释放权重（reshard_after_forward=False）"}
        return f"{name} 没有 FSDP 的这个开关：{what.get(v['option'], v['option'])}"
    if code == "launcher_ep_cp_in_code":
        return f"{name} 的 EP{v['ep']} / CP{v['cp']} 不由 JSON 配置设"
    return f"{name}：{code} {v}"


def refusals_text(launcher: str, refusals) -> str:
    """Every ``(code, values)`` refusal of :func:`parallelsel.core.launchers.refusals`, one sentence each, joined."""
    return "；".join(refusal_text(launcher, code, values) for code, values in refusals)
