"""Sentences for what the launchers say about a plan: refusals (:func:`parallelsel.core.launchers.refusals`) and the
notes :func:`parallelsel.core.launchers.read_config` attaches to a launcher's file, in Chinese and English."""

from __future__ import annotations

from parallelsel.render.reasons import WORDS

__all__ = ["fallback_text", "refusal_text", "refusals_text"]

_LAUNCHER_NAMES = {"megatron": "Megatron-LM", "torchtitan": "torchtitan", "deepspeed": "DeepSpeed"}

_TEMPLATES = {
    "zh": {
        "launcher_schedule": "{name} 没有 {schedule} 调度（有：{supported}）",
        "launcher_schedule_chunks": "{name} 的 {schedule} 每卡至少要两段（虚拟流水段），这个方案每卡只有 {chunks} 段",
        "launcher_tp_overlap": "{name} 没有把 TP 通信（TP{tp}）与矩阵乘重叠的选项",
        "launcher_dispatcher": "{name} 的令牌分发器是 {dispatcher}；本库按 alltoall 分发器估算专家并行的通信",
        "launcher_ep_overlap": "{name} 没有把专家并行的 all-to-all（EP{ep}）藏到另一个微批次计算后面的调度（这是 Megatron-Core 的 --overlap-moe-expert-parallel-comm）",
        "launcher_flex_dispatcher": "{name} 没有 {dispatcher} 令牌分发器（这是 Megatron-Core 的 --moe-token-dispatcher-type flex）",
        "launcher_hsdp_zero": "{name} 的部分分片（shard {shard}）只支持 ZeRO-1（分布式优化器的多副本），不支持 ZeRO-{zero}",
        "launcher_pp_zero": "{name} 的 PP{pp} 只与 ZeRO-0/1（分布式优化器）组合；本库按 torchtitan 的做法估算 PP 加 FSDP，"
                            "ZeRO-{zero} 请用 --export torchtitan",
        "launcher_zero": "{name} 的 FSDP 要么前向后重分片（ZeRO-3），要么每个微批次都重新 all-gather（never）；"
                         "没有 ZeRO-{zero} 那样常驻完整权重的分片",
        "launcher_tp_without_sp": "{name} 的 TP（{tp} 路）总是带序列并行；请用带 SP 的方案",
        "launcher_ddp_multi_dim": "{name} 的纯 DDP 不能与其他维度组合（DP{dp} × TP{tp} × PP{pp}）；请用 ZeRO-3（FSDP）",
        "launcher_etp": "{name} 的专家张量并行度只能是 1 或与 TP 相同（TP{tp}），且只在 EP>1 时生效（这里 ETP={etp}、EP={ep}）",
        "launcher_ep_hsdp": "{name} 只在 HSDP 的分片组内（dp_shard×cp×tp = {ranks} 张卡）折叠专家，ETP×EP = {split} 不能整除它",
        "launcher_pp_in_code": "{name} 的流水线段数（PP{pp}）在模型代码里设（PipelineModule），不在 JSON 配置里",
        "launcher_tp_batch": "{name} 的 AutoTP（tensor_parallel.autotp_size）会把每张卡都算作 DP 来核对全局批量，"
                             "TP{tp} 的方案批量会变；用 --export megatron",
        "launcher_recompute_in_code": "{name} 的重算（{recompute}）在模型代码里调用 deepspeed.checkpointing，不是 JSON 开关",
        "launcher_recompute": "{name} 没有本库的 {recompute} 重算策略（有：{supported}）",
        "launcher_recipe": "{name} 没有配方 {recipe} 的选项（有：{supported}）",
        "launcher_recipe_zero": "{name} 的 FP8 权重（配方 {recipe}，--fp8-param-gather）只能与分布式优化器或 FSDP 同用；"
                                "ZeRO-{zero} 的方案请改用 ZeRO-1 或别的配方",
        "launcher_hsdp": "{name} 的 ZeRO 在整个 DP 组（{dp}）上分片，JSON 里没有 shard {shard} 的混合分片",
        "launcher_fsdp_option": "{name} 没有 FSDP 的这个开关：{option}",
        "launcher_ep_cp_in_code": "方案的专家并行 EP{ep} 与上下文并行 CP{cp} 在 {name} 里由模型代码设置，JSON 配置写不进去",
        "launcher_missing_option": "{name} 的校验要求 {option}，文件里没有，启动时会被拒绝",
        "launcher_no_overlap": "没有 {option}：{name} 不会把这部分通信藏在计算后面，本库的估算假定藏了",
        "launcher_fp32_params": "没有 {option}：{name} 用 fp32 参数和梯度训练（按 fp32 配方估算）",
        "launcher_default": "没写 {option}：{name} 取默认值 {value}",
        "launcher_stage_weights": "{name} 把嵌入层和输出层各算作 {first}/{last} 层来切分流水线段，首末段层数更少",
        "launcher_stage_layers": "{name} 的选项只能让首段、末段少放几层、其余各段一样多（且不交错）；表达不了 {stage_layers} 这样的切分",
    },
    "en": {
        "launcher_schedule": "{name} has no {schedule} schedule (it has: {supported})",
        "launcher_schedule_chunks": "{name}'s {schedule} needs two or more (virtual) stages a rank; this plan has {chunks}",
        "launcher_tp_overlap": "{name} has no option to overlap TP communication (TP{tp}) with the matmuls",
        "launcher_dispatcher": "{name}'s token dispatcher is {dispatcher}; the library prices expert-parallel traffic as the alltoall dispatcher's",
        "launcher_ep_overlap": "{name} has no schedule that hides the expert-parallel all-to-alls (EP{ep}) under another micro-batch's compute (Megatron-Core's --overlap-moe-expert-parallel-comm)",
        "launcher_flex_dispatcher": "{name} has no {dispatcher} token dispatcher (Megatron-Core's --moe-token-dispatcher-type flex)",
        "launcher_hsdp_zero": "{name}'s partial sharding (shard {shard}) supports only ZeRO-1 (distributed-optimizer "
                              "instances), not ZeRO-{zero}",
        "launcher_pp_zero": "{name} combines PP{pp} only with ZeRO-0/1 (distributed optimizer); the library prices PP "
                            "with FSDP as torchtitan runs it, so export ZeRO-{zero} with --export torchtitan",
        "launcher_zero": "{name}'s FSDP either reshards after forward (ZeRO-3) or all-gathers again every micro-batch "
                         "(never); it has no sharding that keeps whole weights resident like ZeRO-{zero}",
        "launcher_tp_without_sp": "{name}'s TP ({tp}-way) always comes with sequence parallelism; use a plan with SP",
        "launcher_ep_hsdp": "{name} folds the experts only inside the HSDP shard group (dp_shard x cp x tp = {ranks} "
                            "GPUs), which ETP x EP = {split} does not divide",
        "launcher_etp": "{name}'s expert tensor parallel degree is either 1 or the TP degree (TP{tp}) and acts only with EP > 1 "
                        "(here ETP={etp}, EP={ep})",
        "launcher_ddp_multi_dim": "{name}'s plain DDP cannot be combined with another dimension (DP{dp} x TP{tp} x "
                                  "PP{pp}); use ZeRO-3 (FSDP)",
        "launcher_pp_in_code": "{name} sets pipeline stages (PP{pp}) in model code (PipelineModule), not in the JSON",
        "launcher_tp_batch": "{name}'s AutoTP (tensor_parallel.autotp_size) counts every rank as DP when it checks the "
                             "global batch, so a TP{tp} plan's batch would change; use --export megatron",
        "launcher_recompute_in_code": "{name}'s recomputation ({recompute}) is deepspeed.checkpointing in model code, "
                                      "not a JSON switch",
        "launcher_recompute": "{name} has no {recompute} recomputation as the library models it (it has: {supported})",
        "launcher_recipe": "{name} has no options for the recipe {recipe} (it has: {supported})",
        "launcher_recipe_zero": "{name} keeps FP8 weights (recipe {recipe}, --fp8-param-gather) only with the "
                                "distributed optimizer or an FSDP; for a ZeRO-{zero} plan use ZeRO-1 or another recipe",
        "launcher_hsdp": "{name} shards ZeRO over the whole DP group ({dp}); its JSON has no hybrid shard of {shard}",
        "launcher_fsdp_option": "{name} has no switch for this FSDP option: {option}",
        "launcher_ep_cp_in_code": "the plan's expert and context parallel degrees (EP{ep}, CP{cp}) are set in the model code on {name}, not in its JSON config",
        "launcher_missing_option": "{name}'s validator requires {option}, which the file lacks: the launch would be "
                                   "refused",
        "launcher_no_overlap": "no {option}: {name} will not hide this communication behind compute, while the "
                               "estimate assumes it does",
        "launcher_fp32_params": "no {option}: {name} trains with fp32 parameters and gradients (priced as the fp32 recipe)",
        "launcher_default": "{option} not given: {name} takes its default {value}",
        "launcher_stage_weights": "{name} counts the embedding and the output as {first}/{last} layers when it splits "
                                  "stages, so the first and last stages hold fewer layers",
        "launcher_stage_layers": "{name}'s options only give the first and last stage fewer layers and the others the "
                                 "same number (not interleaved); they cannot express the split {stage_layers}",
    },
}

_OPTION_WORDS = {
    "zh": {"no_sync": "梯度累积时跳过同步（no_sync）", "reshard_after_forward": "前向后不释放权重（reshard_after_forward=False）"},
    "en": {"no_sync": "skipping gradient sync while accumulating (no_sync)",
           "reshard_after_forward": "keeping weights after forward (reshard_after_forward=False)"},
}


def refusal_text(launcher: str, code: str, values: dict, lang: str = "zh") -> str:
    """One refusal or note as a sentence in ``lang``, naming the launcher and the numbers it rests on."""
    name = _LAUNCHER_NAMES.get(launcher, launcher)
    sched = WORDS[lang]["schedule"]
    recompute = WORDS[lang]["recompute"]
    sep = "、" if lang == "zh" else ", "
    v = dict(values)
    if "schedule" in v:
        v["schedule"] = sched.get(v["schedule"], v["schedule"])
    if code == "launcher_schedule":
        v["supported"] = sep.join(sched.get(s, s) for s in v["supported"])
    elif code == "launcher_recompute":
        v["supported"] = sep.join(recompute.get(s, s) for s in v["supported"])
        v["recompute"] = recompute.get(v["recompute"], v["recompute"])
    elif code == "launcher_recompute_in_code":
        v["recompute"] = recompute.get(v["recompute"], v["recompute"])
    elif code == "launcher_recipe":
        v["supported"] = sep.join(v["supported"])
    elif code == "launcher_fsdp_option":
        v["option"] = _OPTION_WORDS[lang].get(v["option"], v["option"])
    template = _TEMPLATES[lang].get(code)
    return template.format(name=name, **v) if template else f"{name}: {code} {values}"


def refusals_text(launcher: str, refusals, lang: str = "zh") -> str:
    """Every ``(code, values)`` refusal of :func:`parallelsel.core.launchers.refusals`, one sentence each, joined."""
    return ("；" if lang == "zh" else "; ").join(refusal_text(launcher, code, values, lang) for code, values in refusals)


def fallback_text(launcher: str, top, refused, chosen, lang: str = "zh") -> str:
    """What ``plan --export L`` says on stderr when the top plan cannot run on L: which plan it exports instead, and why.

    ``top`` and ``chosen`` are search results (``.rank``, ``.plan``, ``.estimate``); ``refused`` the top plan's
    refusals.
    """
    from parallelsel.render.reasons import plan_label
    from parallelsel.render.units import fmt_time

    name = _LAUNCHER_NAMES[launcher]
    why = refusals_text(launcher, refused, lang)
    if lang == "zh":
        return (f"第 1 名 {plan_label(top.plan, lang)} 不能交给 {name}：{why}。改为导出 {name} 能跑的最好方案，"
                f"第 {chosen.rank} 名 {plan_label(chosen.plan, lang)}（估计步时 {fmt_time(chosen.estimate.step.total, 2)}，"
                f"第 1 名 {fmt_time(top.estimate.step.total, 2)}）")
    return (f"the top plan {plan_label(top.plan, lang)} cannot run on {name}: {why}. Exporting the best plan {name} "
            f"can run instead, rank {chosen.rank} {plan_label(chosen.plan, lang)} (estimated step "
            f"{fmt_time(chosen.estimate.step.total, 2, lang)}, top plan {fmt_time(top.estimate.step.total, 2, lang)})")
