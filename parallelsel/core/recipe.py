"""Training recipes: bytes per parameter for weights, gradients and optimizer state.

Rajbhandari et al. 2020 (ZeRO), §3.1: mixed-precision Adam keeps 2 bytes of fp16/bf16 weights,
2 bytes of gradients and K = 12 bytes of optimizer state per parameter (fp32 master weights,
momentum and variance), 16 bytes in all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._check import Catalogue, ParallelselError, positive_number, store

GEMM_PRECISIONS = ("bf16", "fp8")
"""Precisions the linear layers' matmuls may run in (:attr:`Recipe.gemm`)."""

MAX_BYTES_PER_VALUE = 1024.0
"""Largest bytes per parameter or activation element accepted (fp32 Adam needs 16 in all)."""


@dataclass(frozen=True)
class Recipe:
    """Bytes per parameter: ``weights`` (compute copy), ``grads``, ``optimizer`` (K in ZeRO's notation).

    ``activation`` is the bytes per activation element (Korthikanti et al. 2022 assume 16-bit).
    ``gemm``: the precision the linear layers' matmuls run in, ``"bf16"`` or ``"fp8"`` (Transformer
    Engine / torchao float8 with tensorwise scaling). Under FP8 the attention core and the output
    layer (LM head) stay in bf16: Megatron-Core's ``fp8_dot_product_attention`` and ``fp8_output_proj``
    default off (``transformer_config.py`` L635-641 @d98e8a6), TE runs "attention computations ... in
    high precision by default" (TE ``docs/features/low_precision_training/introduction/introduction.rst``
    @4a221f3a), and torchao's ``Float8Linear`` replaces only ``nn.Linear`` modules, torchtitan
    filtering ``output`` (``docs/float8.md``). :mod:`parallelsel.core.kernels` times the FP8 GEMMs at
    the device's FP8 rate and charges the casts; :mod:`parallelsel.core.memory` the FP8 weight copies
    Transformer Engine keeps. Saved activations are counted at ``activation`` bytes under FP8 too (an
    over-estimate where a framework saves a GEMM's input in FP8).
    ``gather_bytes``: bytes per parameter of the weight all-gather (ZeRO-1/2's updated weights, ZeRO-3/FSDP's
    before each use) when the recipe fixes it (FSDP2's float8 all-gather, Megatron-Core's
    ``--fp8-param-gather``: 1); 0 leaves it to the stack's gather dtype
    (:func:`parallelsel.core.stacks.wire_bytes`).
    ``fp8_weights``: the linear layers' weights are kept in FP8 only, with no 16-bit copy (Megatron-Core's
    ``--fp8-param-gather``: Transformer Engine's ``fp8_model_init`` creates them as FP8 tensors and the
    distributed optimizer all-gathers them in FP8; the fp32 master stays in the optimizer state), so
    ``weights`` counts their FP8 bytes (:mod:`parallelsel.core.memory`).
    """

    name: str
    weights: float
    grads: float
    optimizer: float
    activation: float = 2.0
    gemm: str = "bf16"
    gather_bytes: float = 0.0
    fp8_weights: bool = False
    source: str = field(default="", compare=False)
    """Where the record's numbers come from (paper and table, datasheet, measurement); every preset names one."""

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise ParallelselError(f"name={self.name!r}: must be a string")
        if self.gemm not in GEMM_PRECISIONS:
            raise ParallelselError(f"gemm={self.gemm!r}: must be one of {', '.join(GEMM_PRECISIONS)}")
        if self.fp8_weights is not False and (self.fp8_weights is not True or self.gemm != "fp8"):
            raise ParallelselError(f"fp8_weights={self.fp8_weights!r}: must be True or False, and True only with "
                                   f"gemm='fp8'")
        if not isinstance(self.source, str):
            raise ParallelselError(f"source={self.source!r}: must be a string")
        store(self, "gather_bytes", positive_number("gather_bytes", self.gather_bytes, allow_zero=True,
                                                    maximum=MAX_BYTES_PER_VALUE))
        for f in ("weights", "grads", "activation"):
            store(self, f, positive_number(f, getattr(self, f), maximum=MAX_BYTES_PER_VALUE))
        store(self, "optimizer", positive_number("optimizer", self.optimizer, allow_zero=True, maximum=MAX_BYTES_PER_VALUE))

    @property
    def per_param(self) -> float:
        """Bytes of training state per parameter (weights + grads + optimizer)."""
        return self.weights + self.grads + self.optimizer


_NEMO_ADAM = ("NVIDIA/NeMo nemo/collections/nlp/models/language_modeling/megatron_base_model.py @7eac53c L794-804 "
              "(store_params False and store_param_remainders True for fp32 optimizer states on a bf16 model); "
              "NVIDIA/apex apex/contrib/optimizers/distributed_fused_adam.py docstring (store_param_remainders: "
              "the bits to rebuild the fp32 parameter from the bf16 one)")

RECIPES: dict[str, Recipe] = Catalogue("recipe", {
    # ZeRO §3.1: 2 + 2 + 12 (fp32 master, momentum, variance).
    "bf16-adam": Recipe("bf16 + Adam", 2, 2, 12,
                        source="Rajbhandari et al. 2020 (ZeRO) §3.1: 2 + 2 + 12 bytes per parameter"),
    # Megatron-LM's default with fp32 gradient accumulation (main_grad): 2 + 4 + 12.
    "bf16-adam-fp32grad": Recipe("bf16 + Adam, fp32 grads", 2, 4, 12,
                                 source="Megatron-LM's fp32 gradient accumulation (main_grad): 2 + 4 + 12"),
    # Pure fp32 Adam: weights, grads, momentum, variance, no master copy: 4 + 4 + 8.
    "fp32-adam": Recipe("fp32 Adam", 4, 4, 8, activation=4,
                        source="fp32 weights, gradients, Adam momentum and variance: 4 + 4 + 8"),
    # torchtitan FSDP2 / DDP with bf16 compute: parameters, gradients and Adam moments stay fp32 (FSDP2's
    # MixedPrecisionPolicy casts to bf16 only for the all-gather and the compute; autocast likewise), no master copy: 4 + 4 + 8.
    "bf16-compute-fp32-adam": Recipe("bf16 compute, fp32 params + Adam", 4, 4, 8,
                                     source="torchtitan configs.py L94-100 (mixed_precision_param bf16, reduce fp32) with "
                                            "PyTorch FSDP2 MixedPrecisionPolicy / torch.autocast: fp32 states 4 + 4 + 8, bf16 compute"),
    # DeepSeek-V3 (DeepSeek-AI 2024, §3.3.2 "Low-Precision Optimizer States"): AdamW moments in BF16, master weights
    # and the gradients used for accumulation kept in FP32: 2 + 4 + (4 + 2 + 2).
    "bf16-adam-bf16-moments": Recipe("bf16 + Adam, bf16 moments, fp32 master and grads", 2, 4, 8,
                                     source='DeepSeek-AI 2024 (DeepSeek-V3 technical report) §3.3.2: BF16 first and second moments of AdamW, FP32 master weights and gradients: 2 + 4 + 8'),
    # FP8 linear layers (Transformer Engine under Megatron-Core; torchao float8 under torchtitan), states as the
    # stack keeps them for bf16: Megatron's bf16 weights, fp32 main grads, fp32 master + Adam (2 + 4 + 12) ...
    "fp8-adam-fp32grad": Recipe("FP8 GEMMs + bf16 weights, fp32 grads + Adam", 2, 4, 12, gemm="fp8",
                                source='Megatron-Core --fp8-format / --fp8-recipe with Transformer Engine (transformer_config.py L587-641 @d98e8a6): FP8 linear GEMMs, attention and output layer in bf16; states 2 + 4 + 12'),
    # ... and torchtitan's fp32 parameters, gradients and Adam moments (4 + 4 + 8).
    # torchtitan's published float8 runs cast the weights to FP8 before FSDP's all-gather
    # (--float8.enable_fsdp_float8_all_gather: "communicate in float8 to save bandwidth", docs/float8.md).
    "fp8-compute-fp32-adam": Recipe("FP8 GEMMs + FP8 all-gather, fp32 params + Adam", 4, 4, 8, gemm="fp8",
                                    gather_bytes=1.0, source='torchtitan --model.converters=float8 (torchao Float8Linear, tensorwise scaling; docs/float8.md @820504e): FP8 linear GEMMs, SDPA and the output layer in bf16; FSDP2 fp32 states 4 + 4 + 8; weights all-gathered in FP8 (enable_fsdp_float8_all_gather, as torchtitan benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md runs it)'),
    # NVIDIA's Megatron-Bridge performance recipes for H100 (the rows of its published performance summary):
    # FP8 weights kept and all-gathered in FP8 (fp8_param_gather=True), gradients accumulated and reduced in bf16
    # (grad_reduce_in_fp32=False), fp32 master + Adam in the distributed optimizer. The FP8 weights take a rowwise
    # and a transposed copy on Hopper: 1 + 1 bytes, as the bf16 copy they replace (on Blackwell, which reads FP8
    # columnwise, the rowwise one only: parallelsel.core.memory counts 1 there, Device.fp8_transpose).
    "fp8-params-bf16grad": Recipe("FP8 weights + FP8 all-gather, bf16 grads, fp32 master + Adam", 2, 2, 12, gemm="fp8",
                                  gather_bytes=1.0, fp8_weights=True,
                                  source="NVIDIA-NeMo/Megatron-Bridge scripts/performance (r0.2.0 @0465189): "
                                         "bf16_with_fp8_current_scaling_mixed (fp8_param_gather=True), "
                                         "grad_reduce_in_fp32=False in mixed_precision and ddp "
                                         "(llama3_llm_pretrain.py L46-47), distributed optimizer; states 2 + 2 + 12"),
    # TE FP8 GEMMs beside bf16 weights, with gradients accumulated and reduced in bf16 (Megatron-LM's
    # --grad-reduce-in-bf16; NeMo's launcher examples for H100 FP8 pass optim.grad_sync_dtype=bf16): 2 + 2 + 12.
    "fp8-adam-bf16grad": Recipe("FP8 GEMMs + bf16 weights, bf16 grads + Adam", 2, 2, 12, gemm="fp8",
                                source="Megatron-LM --fp8-format hybrid --grad-reduce-in-bf16 (arguments.py L1213-1216 "
                                       "@d98e8a6); NVIDIA/NeMo-Framework-Launcher examples/training/gpt/h100/"
                                       "175b_fp8_16node.sh and llama/h100/llama2_13b_fp8.sh (fp8, "
                                       "optim.grad_sync_dtype=bf16); states 2 + 2 + 12"),
    # NeMo 1.x/2.0's distributed optimizer (apex DistributedFusedAdam, NeMo's launcher default through 2024) with
    # fp32 states on a bf16 (megatron_amp_O2) model: NeMo sets store_params False and store_param_remainders True,
    # so the fp32 master is the bf16 weight plus a 16-bit remainder: 2 + 4 + 4 = 10 bytes of optimizer state.
    # Gradients reduced in bf16 (the launcher's FP8 examples pass optim.grad_sync_dtype=bf16) ...
    "fp8-adam-remainders-bf16grad": Recipe("FP8 GEMMs + bf16 weights, bf16 grads, Adam with 16-bit master remainders",
                                           2, 2, 10, gemm="fp8", source=_NEMO_ADAM + "; grad_sync_dtype bf16 "
                                           "(NVIDIA/NeMo-Framework-Launcher examples/training/llama/h100/"
                                           "llama2_13b_fp8.sh); states 2 + 2 + 10"),
    # ... or in fp32, apex's default grad_sync_dtype (the optimizer's dtype) where the configuration names none.
    "fp8-adam-remainders-fp32grad": Recipe("FP8 GEMMs + bf16 weights, fp32 grads, Adam with 16-bit master remainders",
                                           2, 4, 10, gemm="fp8", source=_NEMO_ADAM + "; grad_sync_dtype unset, so "
                                           "fp32 (apex distributed_fused_adam.py docstring: default the optimizer's "
                                           "dtype); states 2 + 4 + 10"),
    # ... and with the Adam moments in bf16 and no master copy: NeMo's distributed optimizer (apex
    # DistributedFusedAdam, whose ``dtype`` is "datatype for optimizer state") at optim.dtype=bf16, as NeMo's
    # Nemotron-4 340B configuration sets it; NeMo then keeps no parameter copy (store_params False when the
    # optimizer's dtype is the bf16 model's), so momentum and variance only: 2 + 2 + 4.
    "fp8-adam-bf16-states": Recipe("FP8 GEMMs + bf16 weights, bf16 grads, bf16 Adam moments, no master copy", 2, 2, 4,
                                   gemm="fp8",
                                   source="NVIDIA/NeMo-Framework-Launcher launcher_scripts/conf/training/nemotron/"
                                          "nemotron_340b.yaml @7c842fcd L158-165 (optim distributed_fused_adam, "
                                          "grad_sync_dtype bf16, dtype bf16); NVIDIA/NeMo nemo/collections/nlp/models/"
                                          "language_modeling/megatron_base_model.py @7eac53c L794-804 (store_params "
                                          "False when the optimizer dtype is the model's); states 2 + 2 + 4"),
    # The same two NeMo optimizer setups on a bf16 run (no FP8): NVIDIA's DGX Cloud benchmark configurations of NeMo
    # 24.09/24.11 run apex's distributed Adam with grad_sync_dtype bf16 (Llama 3.1, GPT-3, Nemotron-4 15B: 2 + 2 + 10)
    # or with optim.dtype bf16 as well (Nemotron-4 340B: 2 + 2 + 4).
    "bf16-adam-remainders-bf16grad": Recipe("bf16 weights and grads, Adam with 16-bit master remainders", 2, 2, 10,
                                            source=_NEMO_ADAM + "; grad_sync_dtype bf16 (NVIDIA/dgxc-benchmarking "
                                            "llama3.1/llama3.1_70b.yaml @143b90d); states 2 + 2 + 10"),
    "bf16-adam-bf16-states": Recipe("bf16 weights and grads, bf16 Adam moments, no master copy", 2, 2, 4,
                                    source="NVIDIA/dgxc-benchmarking nemotron/nemotron4-340b-synth.yaml @143b90d "
                                           "(optim distributed_fused_adam, grad_sync_dtype bf16, dtype bf16); NVIDIA/"
                                           "NeMo megatron_base_model.py @7eac53c L794-804 (store_params False when "
                                           "the optimizer dtype is the model's); states 2 + 2 + 4"),
    # Dettmers et al. 2022 (8-bit optimizers): momentum and variance in 1 byte each, fp32 master kept: 2 + 2 + 6.
    "bf16-adam8bit": Recipe("bf16 + 8-bit Adam", 2, 2, 6,
                            source="Dettmers et al. 2022 (8-bit Optimizers via Block-wise Quantization): 2 + 2 + 6"),
    # SGD with momentum in fp32: weights, grads, momentum: 4 + 4 + 4.
    "sgd-momentum": Recipe("fp32 SGD + momentum", 4, 4, 4, activation=4,
                           source="fp32 SGD with momentum: 4 + 4 + 4"),
})

