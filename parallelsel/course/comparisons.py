"""The library beside each published figure of :mod:`parallelsel.course.references`: one :class:`Comparison` per figure.

:mod:`parallelsel.course.references` holds the papers' numbers as data; this module computes the library's value
for each (memory, activations, parameter counts, training days), in the paper's unit, so the validation page
and the tests read one list. Labels and units are ASCII; ``render/`` prints them in the page's language.

Examples:
    >>> z = comparisons("zero")[1]
    >>> z.label, z.published, round(z.library, 1), z.agrees
    ('P_os', 31.4, 31.4, True)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core import memory
from ..core.model import MODELS, Transformer
from ..core.recipe import RECIPES
from .references import (KORTHIKANTI_GPT3, KORTHIKANTI_MTNLG, KORTHIKANTI_SELECTIVE_SAVING, KORTHIKANTI_TABLE2,
                         MIXTRAL_ACTIVE, MODEL_PARAMS, NARAYANAN_EQ4, NARAYANAN_GPT, NARAYANAN_TABLE1, ZERO_FIGURE1,
                         ZERO_FIGURE1_SETUP)

__all__ = ["Comparison", "comparisons"]


@dataclass(frozen=True)
class Comparison:
    """A published number and the library's value for the same quantity, in the paper's unit.

    ``agrees`` is True when the library's value, rounded as the paper rounds, equals the paper's.
    """

    group: str
    label: str
    published: float
    library: float
    unit: str
    source: str
    digits: int

    @property
    def difference(self) -> float:
        """Relative difference (library - published) / published."""
        return (self.library - self.published) / self.published

    @property
    def agrees(self) -> bool:
        return round(self.library, self.digits) == round(self.published, self.digits)


def _zero() -> list[Comparison]:
    """ZeRO Figure 1: model-state memory per GPU (GB) for each stage at the figure's setting."""
    z = ZERO_FIGURE1_SETUP
    return [Comparison("zero", r.label, r.value,
                       memory.model_states(z["params"], RECIPES["bf16-adam"], dp=z["dp"], zero=r.key).total / 1e9,
                       r.unit, r.source, r.digits) for r in ZERO_FIGURE1]


def _activations() -> list[Comparison]:
    """Korthikanti Table 2: activation bytes per layer over sbh for GPT-3 at t = 8, under each technique."""
    g = KORTHIKANTI_GPT3
    gpt3, sbh = MODELS["gpt3-175b"], g["s"] * g["h"]
    out = []
    for row in KORTHIKANTI_TABLE2:
        t = g["t"] if row.tp else 1
        got = memory.activations_per_layer(gpt3, 1, tp=t, sp=row.sp, recompute=row.recompute, attention="standard") / sbh
        out.append(Comparison("activations", row.formula, row.per_sbh(**g), got, "x sbh bytes", row.source, 2))
    return out


def _selective_saving(model: Transformer, t: int) -> float:
    """Percent of the TP + SP activations that selective recomputation removes (Korthikanti §5)."""
    full = memory.activations_per_layer(model, 1, tp=t, sp=True, attention="standard")
    sel = memory.activations_per_layer(model, 1, tp=t, sp=True, recompute="selective", attention="standard")
    return 100 * (1 - sel / full)


def _recompute() -> list[Comparison]:
    """Korthikanti §5's savings for GPT-3 and MT-NLG, and the abstract's reduction against TP alone."""
    t, gpt3 = KORTHIKANTI_GPT3["t"], MODELS["gpt3-175b"]
    tp_only = memory.activations_per_layer(gpt3, 1, tp=t, attention="standard")
    best = memory.activations_per_layer(gpt3, 1, tp=t, sp=True, recompute="selective", attention="standard")
    got = (_selective_saving(gpt3, t), _selective_saving(Transformer(**KORTHIKANTI_MTNLG), t), tp_only / best)
    return [Comparison("recompute", r.label, r.value, v, r.unit, r.source, r.digits)
            for r, v in zip(KORTHIKANTI_SELECTIVE_SAVING, got)]


def _narayanan() -> list[Comparison]:
    """Narayanan Table 1: the parameter count (billions) of each GPT shape."""
    out = []
    for r in NARAYANAN_TABLE1:
        m = Transformer(layers=r.key["layers"], hidden=r.key["hidden"], heads=r.key["heads"], tied_embeddings=True,
                        position="learned", bias=True, norm="layernorm", **NARAYANAN_GPT)
        out.append(Comparison("narayanan", r.label, r.value, m.params / 1e9, r.unit, r.source, r.digits))
    return out


def _days() -> list[Comparison]:
    """Narayanan §5.1: GPT-3's training days by eq. 4 (8TP/(nX)) and by the exact FLOPs per token."""
    e = NARAYANAN_EQ4
    model = MODELS[e.key["model"]]
    rate = e.key["gpus"] * e.key["flops_per_gpu"]
    eq4 = 8 * e.key["tokens"] * model.params / rate  # eq. 4: 8TP/(nX), P the library's exact count
    exact = e.key["tokens"] * model.flops_per_token("full") / rate  # eq. 3's terms kept, per token
    return [Comparison("days", "eq. 4: 8TP/(nX)", e.value, eq4 / 86400, e.unit, e.source, e.digits),
            Comparison("days", "exact FLOPs per token (full recompute)", e.value, exact / 86400, e.unit, e.source,
                       e.digits)]


def _models() -> list[Comparison]:
    """The model papers' parameter counts for the presets (Mixtral's active count too)."""
    out = []
    for r in MODEL_PARAMS + (MIXTRAL_ACTIVE,):
        m = MODELS[r.key]
        n = m.active_params if r is MIXTRAL_ACTIVE else m.params
        scale = 1e6 if r.unit == "M params" else 1e9
        out.append(Comparison("models", r.label, r.value, n / scale, r.unit, r.source, r.digits))
    return out


GROUPS = {"zero": _zero, "activations": _activations, "recompute": _recompute, "narayanan": _narayanan,
          "days": _days, "models": _models}
"""The comparison groups, in the validation page's order."""


def comparisons(group: str | None = None) -> tuple[Comparison, ...]:
    """Every published reference of :mod:`parallelsel.course.references` beside the library's value, optionally one ``group``.

    Groups: ``"zero"`` (Figure 1), ``"activations"`` (Table 2 for GPT-3, t = 8, as bytes / sbh),
    ``"recompute"`` (§5 savings and the abstract's 5x), ``"narayanan"`` (Table 1 parameters),
    ``"days"`` (eq. 4 with the library's parameter count, then with its exact FLOPs per token, which keep
    the s/(6h) and V/(16lh) terms eq. 4 drops), ``"models"`` (preset parameter counts).
    """
    if group is not None and group not in GROUPS:
        raise ValueError(f"group={group!r}: must be one of {', '.join(GROUPS)}")
    return tuple(c for name, make in GROUPS.items() if group in (None, name) for c in make())
