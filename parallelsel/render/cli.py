"""The ``parallelsel`` command: selection matrix, ranked plans, pipeline bubble and memory, from a shell.

Subcommands (``parallelsel <cmd> --help`` for each)::

    parallelsel matrix --model llama2-70b --nodes 4 --global-batch 1024
    parallelsel plan   --model llama3-70b --nodes 8 --global-batch 512 --top 5
    parallelsel bubble --stages 4 --microbatches 8 --schedule 1f1b --svg bubble.svg
    parallelsel memory --model llama2-13b --tp 8 --recompute selective

The model comes from ``--model KEY`` (a preset), explicit shape flags (``--layers --hidden --heads``
and optionally ``--vocab --ffn-hidden --kv-heads``; with ``--model`` they override the preset's
fields), or ``--params N``: a GPT-shaped model of about N parameters (see :func:`gpt_like`).

Exit status: 0 on success, 2 on bad input -- one line on stderr saying what is wrong and what is
allowed, never a traceback.

``--json`` prints one JSON object with stable ASCII keys (values may be Chinese sentences); every text a person
reads (help, reports, sentences) is written by :mod:`parallelsel.render.cli_text` and :mod:`parallelsel.render.reasons`;
the CLI reference page (docs/reference/cli.md) lists every key of every command, generated from
real runs. Sizes are bytes, times seconds. ``plan --why PLAN`` explains one plan, ``plan --export
megatron|torchtitan|deepspeed`` prints the chosen plan for that launcher
(:mod:`parallelsel.core.launchers`), ``presets`` lists the preset keys with their sources.
"""

from __future__ import annotations

import argparse
import contextvars
import json
import math
import os
import sys
from dataclasses import replace

from ..core._check import ParallelselError, positive_int
from ..core.memory import DEFAULT_HEADROOM
from ..core.launchers import LAUNCHERS as LAUNCHER_CHOICES
from ..core.model import ATTENTION, MAX_PARAMS, MIN_PARAMS, RECOMPUTE, gpt_like
from ..core.plan import DISPATCHERS
from .cli_text import ERRORS, HELP, keys_text, see_help
from .reasons import LANGS
from .reasons import plan_label
from .lesson_text import verdict_word

__all__ = ["main", "gpt_like", "build_parser"]

DEFAULT_DEVICE = "a100-80gb"
DEFAULT_SEQ = 2048
DEFAULT_GPUS_PER_NODE = 8
PRESET_KINDS = ("models", "devices", "links", "recipes", "stacks")
def _compile_arg(a):
    """``Workload(compile=)`` (:data:`parallelsel.core.stacks.COMPILE_SCOPES`): ``--compile-model-only`` compiles the
    blocks and leaves the loss eager, ``--compile`` everything the stack compiles."""
    return "model" if a.compile_model_only else bool(a.compile)
# -- argument parsing ------------------------------------------------------------------------
_LANG = contextvars.ContextVar("parallelsel_cli_lang", default="zh")
"""The ``--lang`` of the running command, for errors argparse reports before the arguments are parsed."""


def _argv_lang(argv) -> str:
    """The value of ``--lang`` in ``argv`` if it names a language (``--lang en`` or ``--lang=en``), else Chinese."""
    argv = list(sys.argv[1:] if argv is None else argv)
    for i, arg in enumerate(argv):
        value = arg.partition("=")[2] if arg.startswith("--lang=") else (
            argv[i + 1] if arg == "--lang" and i + 1 < len(argv) else None)
        if value in LANGS:
            return value
    return "zh"


class _Parser(argparse.ArgumentParser):
    """argparse with no prefix abbreviations (``--gpu`` is not ``--gpus-per-node``), and errors as one line, exit 2."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message):  # pragma: no cover - exercised through main()
        sys.stderr.write(see_help(self.prog, message, _LANG.get()) + "\n")
        raise SystemExit(2)


def _integer(lo: int, hi: int, why: str = ""):
    """An argparse type: a whole number in [lo, hi] (``1e3`` is 1000); empty, fractional, NaN, inf refused."""

    def parse(text: str) -> int:
        t = text.strip().replace("_", "")
        try:
            v = int(t)
        except ValueError:
            try:
                f = float(t)
            except ValueError:
                f = math.nan
            if not (math.isfinite(f) and f.is_integer()):
                raise argparse.ArgumentTypeError(f"{text!r}: must be an integer between {lo} and {hi}") from None
            v = int(f)
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{text!r}: must be an integer between {lo} and {hi}{why}")
        return v

    parse.__name__ = "integer"
    parse.rule = {"kind": "integer", "min": lo, "max": hi}  # the calculator page checks its fields with it
    return parse


def _integers(lo: int, hi: int):
    """An argparse type: comma-separated whole numbers, each as :func:`_integer` takes it ("7,8,8,7")."""
    one = _integer(lo, hi)

    def parse(text: str) -> tuple[int, ...]:
        return tuple(one(t) for t in text.split(","))

    parse.__name__ = "integers"
    return parse


def _real(lo: float, hi: float, why: str = ""):
    """An argparse type: a finite number in [lo, hi]; empty, NaN, inf and overflow (1e309) refused."""

    def parse(text: str) -> float:
        try:
            v = float(text.strip().replace("_", ""))
        except ValueError:
            v = math.nan
        if not (math.isfinite(v) and lo <= v <= hi):
            raise argparse.ArgumentTypeError(f"{text!r}: must be a finite number between {lo:g} and {hi:g}{why}")
        return v

    parse.__name__ = "number"
    parse.rule = {"kind": "number", "min": lo, "max": hi}
    return parse


def _key(text: str) -> str:
    """An argparse type for preset keys and names: not empty."""
    if not text.strip():
        raise argparse.ArgumentTypeError("'': must not be empty")
    return text.strip()


def _model_args(p: argparse.ArgumentParser) -> None:
    from ..core.model import ARCHITECTURES, MODELS, SHAPE_LIMITS
    from ..core.plan import MAX_GLOBAL_BATCH
    from ..core.recipe import RECIPES
    from ..core.stacks import DEFAULT_STACK, STACKS

    lim = SHAPE_LIMITS
    g = p.add_argument_group(HELP["group_model"])
    g.add_argument("--model", type=_key, metavar="KEY", help=HELP["model"].format(keys=keys_text(MODELS)))
    g.add_argument("--params", type=_real(MIN_PARAMS, MAX_PARAMS), metavar="N", help=HELP["params"])
    for flag in ("layers", "hidden", "heads"):
        g.add_argument(f"--{flag}", type=_integer(1, lim[flag]), help=HELP[flag])
    g.add_argument("--kv-heads", type=_integer(1, lim["heads"]), help=HELP["kv_heads"])
    g.add_argument("--head-dim", type=_integer(1, lim["hidden"]), help=HELP["head_dim"])
    g.add_argument("--ffn-hidden", type=_integer(1, lim["ffn_hidden"]), help=HELP["ffn_hidden"])
    g.add_argument("--vocab", type=_integer(1, lim["vocab"]), help=HELP["vocab"])
    g.add_argument("--experts", type=_integer(1, lim["experts"]), metavar="N", help=HELP["experts"])
    g.add_argument("--top-k", type=_integer(1, lim["top_k"]), metavar="K", help=HELP["top_k"])
    g.add_argument("--architecture", choices=tuple(ARCHITECTURES), default=None, help=HELP["architecture"])
    g.add_argument("--seq-len", type=_integer(1, lim["seq_len"]), metavar="N", help=HELP["seq_len"])
    g.add_argument("--recipe", type=_key, default=None, metavar="KEY",
                   help=HELP["recipe"].format(keys=keys_text(RECIPES)))
    g.add_argument("--stack", type=_key, default=None, metavar="KEY",
                   help=HELP["stack"].format(keys=keys_text(STACKS), default=DEFAULT_STACK))
    g.add_argument("--compile", action="store_true", help=HELP["compile"])
    g.add_argument("--compile-model-only", action="store_true", help=HELP["compile_model_only"])
    g.add_argument("--global-batch", type=_integer(1, MAX_GLOBAL_BATCH), metavar="N", help=HELP["global_batch"])
    g.add_argument("--attention", default=None, choices=ATTENTION, help=HELP["attention"])


def _cluster_args(p: argparse.ArgumentParser) -> None:
    from ..core.hardware import DEVICES, LINKS, MAX_GPUS, MAX_GPUS_PER_NODE

    g = p.add_argument_group(HELP["group_cluster"])
    g.add_argument("--device", type=_key, default=DEFAULT_DEVICE, metavar="KEY",
                   help=HELP["device"].format(keys=keys_text(DEVICES), default=DEFAULT_DEVICE))
    g.add_argument("--nodes", type=_integer(1, MAX_GPUS), metavar="N", help=HELP["nodes"])
    g.add_argument("--gpus", type=_integer(1, MAX_GPUS), metavar="N", help=HELP["gpus"])
    g.add_argument("--gpus-per-node", type=_integer(1, MAX_GPUS_PER_NODE), metavar="N", help=HELP["gpus_per_node"])
    g.add_argument("--intra", type=_key, metavar="KEY", help=HELP["intra"].format(keys=keys_text(LINKS)))
    g.add_argument("--inter", type=_key, metavar="KEY", help=HELP["inter"])
    g.add_argument("--headroom", type=_real(0.0, 0.99), default=DEFAULT_HEADROOM, metavar="F",
                   help=HELP["headroom"].format(default=DEFAULT_HEADROOM))


def _plan_args(p: argparse.ArgumentParser) -> None:
    from ..core.hardware import MAX_GPUS

    g = p.add_argument_group(HELP["group_plan"])
    for flag in ("dp", "tp", "pp", "cp", "ep", "etp"):
        g.add_argument(f"--{flag}", type=_integer(1, MAX_GPUS), help=HELP[flag])
    g.add_argument("--zero", type=_integer(0, 3), help=HELP["zero"])
    g.add_argument("--micro-batch", type=_integer(1, 4096), help=HELP["micro_batch"])
    g.add_argument("--recompute", choices=RECOMPUTE, help=HELP["recompute"])
    g.add_argument("--recompute-layers", type=_integer(1, 2**17), metavar="K", help=HELP["recompute_layers"])
    g.add_argument("--dispatcher", choices=DISPATCHERS, help=HELP["dispatcher"])


def _measured_args(p: argparse.ArgumentParser, plan_flag: bool) -> None:
    g = p.add_argument_group(HELP["group_measured"])
    g.add_argument("--measured-step", type=_real(1e-6, 1e9), metavar="SECONDS", help=HELP["measured_step"])
    g.add_argument("--measured-mfu", type=_real(1e-6, 1.0), metavar="F", help=HELP["measured_mfu"])
    if plan_flag:
        g.add_argument("--measured-plan", metavar="PLAN", help=HELP["measured_plan"])


def _calibrated(a, w, c, plan):
    """The cluster with its device fitted to --measured-step / --measured-mfu on ``plan`` (or ``c`` unchanged)."""
    if a.measured_step is None and a.measured_mfu is None:
        return c, None
    from ..core.calibrate import calibrate
    from ..core.estimate import estimate

    cal = calibrate(estimate(w, plan, c, headroom=_headroom_arg(a)), measured_step=a.measured_step,
                    measured_mfu=a.measured_mfu)
    return cal.cluster, cal


def _calibration_json(cal, lang: str = "zh") -> dict | None:
    if cal is None:
        return None
    return {"plan": plan_label(cal.before.plan, lang), "measured_step_s": cal.measured, "model_step_s": cal.before.step.total,
            "scale": cal.scale, "gemm_efficiency": cal.device.gemm_efficiency}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed so the docs can print its help)."""
    from ..core import VERSION as __version__

    common = _Parser(add_help=False)
    common.add_argument("--json", action="store_true", help=HELP["json"])
    common.add_argument("--lang", choices=LANGS, default="zh", help=HELP["lang"])
    parser = _Parser(prog="parallelsel", description=HELP["prog"])
    parser.add_argument("--version", action="version", version=f"parallelsel {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{matrix,plan,check,bubble,memory,presets}", parser_class=_Parser)
    sub.required = True

    def command(name):
        return sub.add_parser(name, parents=[common], help=HELP[name], description=HELP[f"{name}_description"])

    m = command("matrix")
    _model_args(m)
    _cluster_args(m)
    _plan_parser(command("plan"))
    _check_parser(command("check"))
    _bubble_parser(sub, common)
    _memory_parser(command("memory"))
    pr = command("presets")
    pr.add_argument("kind", nargs="?", choices=PRESET_KINDS, help=HELP["kind"])
    return parser


def _plan_parser(pl: argparse.ArgumentParser) -> None:
    _model_args(pl)
    _cluster_args(pl)
    _plan_args(pl)
    pl.add_argument("--top", type=_integer(1, 1000), default=10, metavar="N", help=HELP["top"])
    pl.add_argument("--why", nargs="?", const="", metavar="PLAN", help=HELP["why"])
    pl.add_argument("--export", choices=LAUNCHER_CHOICES, help=HELP["export"])
    pl.add_argument("--no-tp-overlap", dest="tp_overlap", action="store_const", const=None, default="free",
                    help=HELP["no_tp_overlap"])
    pl.add_argument("--no-ep-overlap", dest="ep_overlap", action="store_const", const=None, default="free",
                    help=HELP["no_ep_overlap"])
    _measured_args(pl, plan_flag=True)


def _check_parser(ck: argparse.ArgumentParser) -> None:
    ck.add_argument("file", metavar="FILE", help=HELP["file"])
    ck.add_argument("--launcher", choices=LAUNCHER_CHOICES, help=HELP["launcher"])
    _model_args(ck)
    _cluster_args(ck)
    ck.add_argument("--top", type=_integer(1, 1000), default=10, metavar="N", help=HELP["top"])


def _bubble_parser(sub, common) -> None:
    from ..core.pipeline import KINDS, MAX_PASSES

    b = sub.add_parser("bubble", parents=[common], help=HELP["bubble"],
                       description=HELP["bubble_description"].format(max_passes=MAX_PASSES))
    b.add_argument("--stages", type=_integer(1, MAX_PASSES), required=True, metavar="P", help=HELP["stages"])
    b.add_argument("--microbatches", type=_integer(1, MAX_PASSES), required=True, metavar="M", help=HELP["microbatches"])
    b.add_argument("--schedule", default="1f1b", choices=KINDS, help=HELP["schedule"])
    b.add_argument("--chunks", type=_integer(1, MAX_PASSES), default=1, metavar="V", help=HELP["chunks"])
    b.add_argument("--svg", metavar="FILE", help=HELP["svg"])


def _memory_parser(mem: argparse.ArgumentParser) -> None:
    from ..core.plan import SCHEDULES

    _model_args(mem)
    _cluster_args(mem)
    _plan_args(mem)
    mem.add_argument("--sp", action="store_true", help=HELP["sp"])
    mem.add_argument("--schedule", default="1f1b", choices=SCHEDULES, help=HELP["memory_schedule"])
    mem.add_argument("--chunks", type=_integer(1, 1024), default=1, metavar="V", help=HELP["chunks"])
    mem.add_argument("--stage-layers", type=_integers(1, 2**17), metavar="N,N,...", help=HELP["stage_layers"])
    mem.add_argument("--tp-overlap", action="store_true", default=None, help=HELP["tp_overlap"])
    mem.add_argument("--ep-overlap", action="store_true", default=None, help=HELP["ep_overlap"])
    mem.add_argument("--no-p2p-overlap", dest="p2p_overlap", action="store_false", default=None,
                     help=HELP["no_p2p_overlap"])
    _measured_args(mem, plan_flag=False)


# -- building library objects from arguments --------------------------------------------------
def _headroom_arg(a) -> float:
    from ..core.memory import check_headroom

    try:
        return check_headroom(a.headroom)
    except ParallelselError:
        raise ParallelselError(f"--headroom {a.headroom!r}: must be a fraction in [0, 1)") from None


def _model(a):
    from ..core._check import preset
    from ..core.model import MODELS, Transformer

    shape = {k: getattr(a, k) for k in ("layers", "hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "vocab",
                                        "experts", "top_k") if getattr(a, k) is not None}
    seq = a.seq_len
    if a.model is not None and a.params is not None:
        raise ParallelselError("--model and --params: give only one of them")
    if a.architecture is not None and (a.model is not None or a.params is not None):
        raise ParallelselError(f"--architecture {a.architecture}: applies to a shape given by --layers, --hidden and "
                               f"--heads; --{'model' if a.model is not None else 'params'} builds its own")
    if a.model is not None:
        m = preset("--model", a.model, MODELS)
        if shape:
            if {"hidden", "heads"} & shape.keys() and "head_dim" not in shape and m.q_dim == m.hidden:
                shape["head_dim"] = None   # the preset's heads tile its width: so do the new ones
            m = replace(m, **shape, name=m.name + " (modified)")
    elif a.params is not None:
        if shape:
            raise ParallelselError(f"--params with --{next(iter(shape)).replace('_', '-')}: --params builds the "
                                   "whole shape; give one or the other")
        m = gpt_like(a.params, seq_len=seq or DEFAULT_SEQ)
    elif {"layers", "hidden", "heads"} <= shape.keys():
        m = Transformer(seq_len=seq or DEFAULT_SEQ, **{"vocab": 51200, **shape}, name="custom",
                        architecture=a.architecture or "gpt")
    else:
        raise ParallelselError("model: give --model KEY, --params N, or at least --layers, --hidden and --heads")
    if seq is not None:
        m = replace(m, seq_len=positive_int("--seq-len", seq))
    return m


def _stack_arg(a) -> str:
    """--stack, else the stack of the launcher --export names, else the default stack."""
    from ..core.launchers import LAUNCHER_SOURCES
    from ..core.stacks import DEFAULT_STACK

    if a.stack is not None:
        return a.stack
    export = getattr(a, "export", None)
    return LAUNCHER_SOURCES[export]["stack"] if export else DEFAULT_STACK


def _workload(a, cluster):
    from ..core._check import preset
    from ..core.plan import Workload
    from ..core.recipe import RECIPES
    from ..core.stacks import STACKS

    batch = a.global_batch
    if batch is None:
        batch = cluster.gpus  # one sequence per GPU; reported as an assumption
    attention = a.attention or "flash"   # (None: not given; `check` lets the file's kernel stand)
    if attention not in ATTENTION:
        raise ParallelselError(f"--attention {attention!r}: must be one of {', '.join(ATTENTION)}")
    stack = preset("--stack", _stack_arg(a), STACKS).key
    recipe = None if a.recipe is None else preset("--recipe", a.recipe, RECIPES)
    if _compile_arg(a) and "compile" not in STACKS[stack].modes:
        raise ParallelselError(f"--compile with --stack {stack}: {stack} does not run the model under torch.compile "
                               f"(its modes: {', '.join(STACKS[stack].modes)})")
    return Workload(_model(a), recipe=recipe, global_batch=batch, attention=attention, stack=stack,
                    compile=_compile_arg(a))


def _cluster(a, need: int | None = None):
    """The cluster from --nodes or --gpus (total), --gpus-per-node and the links.

    ``need``: GPUs a given plan uses (``memory``); with no --nodes/--gpus the cluster is just big
    enough for it, instead of a default that the plan does not fit on.
    """
    from ..core._check import preset
    from ..core.hardware import DEVICES, LINKS, Cluster

    kw = {}
    if a.intra is not None:
        kw["intra"] = preset("--intra", a.intra, LINKS)
    if a.inter is not None:
        kw["inter"] = preset("--inter", a.inter, LINKS)
    device = preset("--device", a.device, DEVICES)
    gpn = a.gpus_per_node if a.gpus_per_node is not None else DEFAULT_GPUS_PER_NODE
    gpus = a.gpus
    if gpus is None and a.nodes is None and need is not None:
        gpus = need
    if gpus is None:
        nodes = a.nodes if a.nodes is not None else 1
    elif gpus <= gpn and a.nodes in (None, 1):
        nodes, gpn = 1, gpus  # fewer GPUs than a node holds: one node with that many
    elif gpus % gpn:
        raise ParallelselError(f"--gpus {gpus}: must be a multiple of --gpus-per-node {gpn} (whole nodes), "
                               f"or at most {gpn} (one node)")
    else:
        nodes = gpus // gpn
        if a.nodes is not None and a.nodes != nodes:
            raise ParallelselError(f"--gpus {gpus} and --nodes {a.nodes}: {a.nodes} nodes x {gpn} GPUs is "
                                   f"{a.nodes * gpn}, not {gpus}; give one of them")
    return Cluster(device, nodes=nodes, gpus_per_node=gpn, **kw)


def _model_json(m) -> dict:
    return {"name": m.name, "params": m.params, "layers": m.layers, "hidden": m.hidden, "heads": m.heads,
            "kv_heads": m.kv_heads, "head_dim": m.head_dim, "ffn_hidden": m.ffn_hidden, "vocab": m.vocab, "seq_len": m.seq_len,
            "experts": m.experts, "top_k": m.top_k}


def _cluster_json(c) -> dict:
    return {"device": c.device.name, "nodes": c.nodes, "gpus_per_node": c.gpus_per_node, "gpus": c.gpus,
            "intra": c.intra.name, "inter": c.inter.name, "memory_bytes": c.device.memory,
            "assumed": list(c.assumed)}


# -- subcommands ------------------------------------------------------------------------------
def _cmd_matrix(a, out) -> None:
    from ..core.matrix import selection_matrix
    from .cli_text import matrix_text

    c = _cluster(a)
    w = _workload(a, c)
    unknown = []
    if a.global_batch is None:
        unknown.append("global_batch")
    if a.intra is None:
        unknown.append("interconnect")
    rows = selection_matrix(w, c, unknown=unknown, headroom=_headroom_arg(a))
    if a.json:
        data = {"model": _model_json(w.model), "stack": w.stack, "cluster": _cluster_json(c), "unknown": unknown, "rows": [
            {"strategy": r.strategy, "verdict": verdict_word(r.verdict, a.lang), "verdict_code": r.verdict.code,
             "reasons": _reasons_json(r.reasons, a.lang),
             "best": None if r.best is None else {"plan": _plan_json(r.best.plan, a.lang),
                                                   "memory_bytes": r.best.memory.total, "step_s": r.best.step.total}}
            for r in rows]}
        out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        return
    out.write(matrix_text(w, c, rows, unknown, a.lang))


def _fixed(a) -> dict:
    fixed = {}
    for k in ("dp", "tp", "pp", "cp", "ep", "etp", "zero", "micro_batch", "recompute", "recompute_layers", "dispatcher"):
        v = getattr(a, k, None)
        if v is not None:
            fixed[k] = v
    if getattr(a, "tp_overlap", "free") is None:  # plan --no-tp-overlap: the stack's default (off) pinned
        fixed["tp_overlap"] = None
    if getattr(a, "ep_overlap", "free") is None:  # plan --no-ep-overlap: off pinned
        fixed["ep_overlap"] = None
    return fixed


def _reasons_json(reasons, lang: str) -> list[dict]:
    """Each reason as ``{"code", "values", "text"}`` (the text in ``lang``)."""
    from .reasons import as_json

    return [as_json(r, lang) for r in reasons]


def _plan_json(p, lang: str = "zh") -> dict:
    """A plan's fields, with its label rendered in ``lang``."""
    return {"label": plan_label(p, lang), "dp": p.dp, "tp": p.tp, "pp": p.pp, "ep": p.ep, "etp": p.etp,
            "cp": getattr(p, "cp", 1),
            "zero": p.zero, "shard": p.shard_size, "micro_batch": p.micro_batch, "sp": p.sp,
            "recompute": p.recompute, "recompute_layers": p.recompute_layers, "schedule": p.schedule,
            "chunks": p.chunks, "stage_layers": None if p.stage_layers is None else list(p.stage_layers),
            "tp_overlap": p.tp_overlap, "p2p_overlap": p.p2p_overlap, "ep_overlap": bool(p.ep_overlap),
            "dispatcher": p.dispatcher or "alltoall"}


def _result_json(x, lang: str = "zh") -> dict:
    p, e = x.plan, x.estimate
    return {"rank": x.rank, "plan": plan_label(p, lang), **{k: v for k, v in _plan_json(p).items() if k != "label"},
            "step_s": e.step.total, "tokens_per_s": e.step.tokens_per_s, "mfu": e.step.mfu,
            "memory_bytes": e.memory.total, "why": _reasons_json(x.why, lang)}


def _fixes_json(fx, lang: str) -> list[dict]:
    """Each single change that makes a plan fit as ``{"code", "values", "text", "memory_bytes", "step_s"}``."""
    from .cli_text import fix_text

    return [{"code": f.code, "values": f.values, "text": fix_text(f, lang), "memory_bytes": f.estimate.memory.total,
             "step_s": f.estimate.step.total} for f in fx]


def _pinned_plan(a, c):
    """The plan --why explains: a label, or the pinned flags (dp defaults to the GPUs left over)."""
    from ..core.plan import Plan
    from .reasons import read_plan

    if a.why:
        p = read_plan(a.why)
        pinned = {k: v for k, v in _fixed(a).items()}
        return p.with_(**pinned) if pinned else p
    tp = a.tp or 1
    pp = a.pp or 1
    cp = a.cp or 1
    dp = a.dp if a.dp is not None else max(1, c.gpus // (tp * pp * cp))
    return Plan(dp=dp, tp=tp, pp=pp, cp=cp, ep=a.ep or 1, etp=a.etp, zero=a.zero or 0, micro_batch=a.micro_batch or 1,
                recompute=a.recompute or ("full" if a.recompute_layers else "none"),
                recompute_layers=a.recompute_layers, dispatcher=a.dispatcher)


def _cmd_why(a, w, c, out) -> None:
    from .cli_text import why_text
    from ..core.search import explain, fixes

    h = _headroom_arg(a)
    x = explain(w, c, _pinned_plan(a, c), top=a.top, headroom=h)
    e, p = x.estimate, x.plan
    fx = fixes(w, c, p, headroom=h) if x.gpus_match and not e.fits else ()
    if a.export:
        return _export(a, w, c, p, out) if x.fits else _refuse_export(p, e, x)
    if a.json:
        data = {"model": _model_json(w.model), "stack": w.stack, "cluster": _cluster_json(c), "global_batch": w.global_batch,
                "plan": _plan_json(p, a.lang), "fits": x.fits, "uses_all_gpus": x.gpus_match,
                "reasons": _reasons_json(e.reasons, a.lang), "verdict": _reasons_json(x.verdict, a.lang),
                "memory_bytes": e.memory.total, "capacity_bytes": c.device.memory,
                "budget_bytes": e.budget,
                "step_s": e.step.total, "rank": x.rank,
                "dominated_by": None if x.dominated_by is None else plan_label(x.dominated_by, a.lang),
                "best": None if x.best is None else _result_json(x.best, a.lang), "why": _reasons_json(x.why, a.lang),
                "fixes": _fixes_json(fx, a.lang)}
        out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        return
    out.write(why_text(w, c, x, fx, a.lang))


def _refuse_export(p, e, x) -> None:
    from .reasons import join

    raise ParallelselError(f"--export: plan {plan_label(p, 'en')} cannot run here: " + join(x.verdict, "en"))


EXPORT_SEARCH_TOP = 300
"""How many ranked plans ``plan --export L`` looks through for the best one L can run when the top one cannot."""


def _export(a, w, c, p, out) -> None:
    from ..core.launchers import export, refusals
    from .launchers import refusals_text

    bad = refusals(w, p, a.export)
    if bad:
        raise ParallelselError(f"--export {a.export}: plan {plan_label(p, 'en')} cannot be launched: "
                               + refusals_text(a.export, bad, "en"))
    out.write(export(w, p, a.export, c))


def _export_best(a, w, c, r, out) -> None:
    """``plan --export L``: the top plan, or else the best plan L can run, saying on stderr which and why."""
    from ..core.launchers import export, refusals
    from ..core.search import search
    from .launchers import fallback_text, refusals_text

    top = r.best
    bad = refusals(w, top.plan, a.export)
    if not bad:
        out.write(export(w, top.plan, a.export, c))
        return
    wide = r if len(r.results) >= EXPORT_SEARCH_TOP else search(w, c, top=EXPORT_SEARCH_TOP, fixed=_fixed(a),
                                                                headroom=_headroom_arg(a))
    chosen = next((x for x in wide.results if not refusals(w, x.plan, a.export)), None)
    if chosen is None:
        raise ParallelselError(f"--export {a.export}: none of the {len(wide.results)} best plans can be launched; the "
                               f"top one {plan_label(top.plan, 'en')}: " + refusals_text(a.export, bad, "en"))
    sys.stderr.write(f"parallelsel plan: {fallback_text(a.export, top, bad, chosen, a.lang)}\n")
    out.write(export(w, chosen.plan, a.export, c))


def _cmd_plan(a, out) -> None:
    from .cli_text import plan_text
    from ..core.search import fixes, search

    c = _cluster(a)
    w = _workload(a, c)
    if (a.measured_step is not None or a.measured_mfu is not None) and not a.measured_plan:
        raise ParallelselError("--measured-step/--measured-mfu: give --measured-plan, the plan that step was measured on")
    if a.measured_plan:
        from .reasons import read_plan

        c, cal = _calibrated(a, w, c, read_plan(a.measured_plan))
    else:
        cal = None
    if a.why is not None:
        return _cmd_why(a, w, c, out)
    r = search(w, c, top=a.top, fixed=_fixed(a), headroom=_headroom_arg(a))
    if a.export:
        if r.best is None:
            raise ParallelselError("--export: no plan fits, so there is nothing to export (run without --export "
                                   "to see the closest miss)")
        return _export_best(a, w, c, r, out)
    miss = None
    if not r.results and r.closest_miss is not None:
        from ..core.estimate import estimate

        me = estimate(w, r.closest_miss, c, headroom=_headroom_arg(a))
        miss = (me, fixes(w, c, r.closest_miss, headroom=_headroom_arg(a)))
    if a.json:
        data = {"model": _model_json(w.model), "stack": w.stack, "cluster": _cluster_json(c), "global_batch": w.global_batch,
                **({"calibration": _calibration_json(cal, a.lang)} if cal is not None else {}), "considered": r.considered,
                "funnel": [{"stage": s, "plans": n} for s, n in r.funnel()], "excluded": dict(r.excluded),
                "results": [_result_json(x, a.lang) for x in r.results], "seconds": r.seconds,
                "tie": None if r.tie is None else _reasons_json([r.tie], a.lang)[0],
                "closest_miss": None if miss is None else {
                    "plan": _plan_json(r.closest_miss, a.lang), "reason": _reasons_json([r.closest_miss_reason], a.lang)[0],
                    "memory_bytes": miss[0].memory.total,
                    "budget_bytes": miss[0].budget, "gap_bytes": miss[0].memory.total - miss[0].budget,
                    "fixes": _fixes_json(miss[1], a.lang)}}
        out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        return
    out.write(plan_text(w, c, r, miss, cal, a.global_batch is None, a.lang))
    if r.tie is not None:
        from .reasons import text

        out.write("\n" + text(r.tie, a.lang) + "\n")


def _cmd_bubble(a, out) -> None:
    from ..core import pipeline as pl

    if a.svg is not None and not a.svg.strip():
        raise ParallelselError("--svg '': give a file name to write the chart to")
    sched = pl.schedule(a.schedule, a.stages, a.microbatches, chunks=a.chunks)
    tl = pl.simulate(sched, forward=1.0, backward=2.0)
    v = a.chunks
    closed_f = pl.bubble_fraction(a.stages, a.microbatches, v)
    closed_o = pl.bubble_overhead(a.stages, a.microbatches, v)
    if a.svg is not None:
        from .pipeline_charts import gantt

        svg = gantt(tl, salt=f"cli-{a.schedule}-{a.stages}-{a.microbatches}-{v}")
        with open(a.svg, "w", encoding="utf-8") as f:
            f.write(svg)
    if a.json:
        data = {"schedule": a.schedule, "stages": a.stages, "microbatches": a.microbatches, "chunks": v,
                "bubble_fraction": closed_f, "bubble_overhead": closed_o,
                "simulated_bubble_fraction": tl.bubble_fraction, "simulated_bubble_overhead": tl.bubble_overhead,
                "makespan": tl.makespan, "svg": a.svg}
        out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        return
    from .cli_text import bubble_text

    out.write(bubble_text(a.schedule, a.stages, a.microbatches, v, closed_f, closed_o, tl, a.svg))


def _cmd_memory(a, out) -> None:
    from ..core.estimate import estimate
    from ..core.plan import Plan, constraint_violations, pp_violations, stack_split, tp_violations
    from .cli_text import memory_text
    from .reasons import join

    tp = a.tp if a.tp is not None else 1
    pp = a.pp if a.pp is not None else 1
    cp = a.cp if a.cp is not None else 1
    c = _cluster(a, need=None if a.dp is None else a.dp * tp * pp * cp)
    w = _workload(a, c)
    m = w.model
    for flag, bad in (("--tp", tp_violations(m, tp)),
                      ("--pp", pp_violations(m, pp, a.chunks, a.stage_layers if a.stage_layers is not None
                                             else stack_split(w.stack, m.layers, pp, a.chunks, a.schedule)))):
        if bad:  # the structural rules of parallelsel.core.plan, before dp is derived from them
            raise ParallelselError(f"{flag} {tp if flag == '--tp' else pp}: {join(bad, 'en')}")
    if pp == 1 and (a.schedule != "1f1b" or a.chunks != 1):  # a schedule orders pipeline stages: none here
        given = " ".join(f for f, on in ((f"--schedule {a.schedule}", a.schedule != "1f1b"),
                                         (f"--chunks {a.chunks}", a.chunks != 1)) if on)
        raise ParallelselError(f"{given}: applies only to a pipeline (--pp > 1), got --pp 1")
    if a.dp is None:
        if c.gpus % (tp * pp * cp):
            raise ParallelselError(f"--tp {tp} × --pp {pp} × --cp {cp} = {tp * pp * cp}: must divide the cluster's "
                                   f"{c.gpus} GPUs (or give --dp)")
        dp = c.gpus // (tp * pp * cp)
    else:
        dp = a.dp
    plan = Plan(dp=dp, tp=tp, pp=pp, zero=0 if a.zero is None else a.zero,
                micro_batch=1 if a.micro_batch is None else a.micro_batch, sp=a.sp,
                recompute=a.recompute or ("full" if a.recompute_layers else "none"),
                recompute_layers=a.recompute_layers, schedule=a.schedule, chunks=a.chunks,
                cp=cp, ep=1 if a.ep is None else a.ep, etp=a.etp, stage_layers=a.stage_layers, tp_overlap=a.tp_overlap,
                p2p_overlap=a.p2p_overlap, ep_overlap=a.ep_overlap, dispatcher=a.dispatcher)
    hard = constraint_violations(w, plan, c)
    if hard:
        raise ParallelselError(f"plan {plan_label(plan, a.lang)}: " + join(hard, a.lang))
    c, cal = _calibrated(a, w, c, plan)
    e = estimate(w, plan, c, headroom=_headroom_arg(a))
    plan, mem = e.plan, e.memory   # (with the split the stack builds where the flags state none)
    if a.json:
        data = {"model": _model_json(w.model), "stack": w.stack, "cluster": _cluster_json(c), "plan": plan_label(plan, a.lang), "fits": e.fits,
                "reasons": _reasons_json(e.reasons, a.lang), "capacity_bytes": c.device.memory, "usable_bytes": e.usable,
                "headroom": e.headroom, "margin": e.margin, "tight": e.tight,
                "advisories": _reasons_json(e.advisories, a.lang), "total_bytes": mem.total,
                "components_bytes": mem.as_dict(), "stage": mem.stage, "step_s": e.step.total,
                "tokens_per_s": e.step.tokens_per_s, "mfu": e.step.mfu, "contention_s": e.step.contention,
                **({"calibration": _calibration_json(cal, a.lang)} if cal is not None else {})}
        out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        return
    out.write(memory_text(w, c, plan, e, cal, a.lang))


def _cmd_presets(a, out) -> None:
    from ..core.hardware import DEVICES, LINKS
    from ..core.model import MODELS
    from ..core.recipe import RECIPES
    from ..core.stacks import STACKS
    from .cli_text import presets_text

    catalogues = {"models": MODELS, "devices": DEVICES, "links": LINKS, "recipes": RECIPES, "stacks": STACKS}
    kinds = [a.kind] if a.kind else list(PRESET_KINDS)
    if not a.json:
        out.write(presets_text({k: catalogues[k] for k in kinds}))
        return
    as_json = {
        "models": lambda k, m: {"key": k, **_model_json(m)},
        "devices": lambda k, d: {"key": k, "name": d.name, "memory_bytes": d.memory, "peak_flops": d.peak_flops,
                                 "intra": d.intra, "inter": d.inter},
        "links": lambda k, x: {"key": k, "name": x.name, "bandwidth_bytes_per_s": x.bandwidth, "latency_s": x.latency},
        "recipes": lambda k, r: {"key": k, "name": r.name, "weights_bytes": r.weights, "grads_bytes": r.grads,
                                 "optimizer_bytes": r.optimizer, "activation_bytes": r.activation},
        "stacks": lambda k, x: {"key": k, "name": x.name, "version": x.version, "recipe": x.recipe,
                                "grad_reduce_dtype": x.grad_reduce_dtype, "param_gather_dtype": x.param_gather_dtype,
                                "model_state_bytes": x.model_state_bytes, "optimizer_shard": x.optimizer_shard,
                                "overlap_grad_reduce": list(x.overlap_grad_reduce),
                                "overlap_param_gather": list(x.overlap_param_gather),
                                "overlap_tp_comm": x.overlap_tp_comm, "schedules": list(x.schedules),
                                "recompute": list(x.recompute), "modes": list(x.modes), "seq_dim": x.seq_dim,
                                "zero3_live": dict(x.zero3_live)},
    }
    data = {kind: [{**as_json[kind](k, v), "source": v.source} for k, v in catalogues[kind].items()]
            for kind in kinds}
    out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def _check_job(a):
    """The workload, cluster, plan and launcher file ``check`` judges: the file's settings, the CLI's options for the rest."""
    from ..core._check import preset
    from ..core.launchers import read_config
    from ..core.model import MODELS, Transformer
    from ..core.plan import Plan, Workload
    from ..core.recipe import RECIPES

    with open(a.file, encoding="utf-8") as f:
        text = f.read()
    world_arg = a.gpus if a.gpus is not None else (a.nodes * (a.gpus_per_node or DEFAULT_GPUS_PER_NODE)
                                                   if a.nodes is not None else None)
    given = any(getattr(a, k) is not None for k in ("model", "params", "layers", "hidden", "heads"))
    cfg0 = read_config(text, a.launcher, world=world_arg)
    if given:
        m = _model(a)
    elif "preset" in cfg0.model:
        m = MODELS[cfg0.model["preset"]]
    elif {"layers", "hidden", "heads"} <= cfg0.model.keys():
        seq = cfg0.seq_len or a.seq_len or DEFAULT_SEQ
        m = Transformer(seq_len=seq, name=os.path.basename(a.file), **{"vocab": 51200, **cfg0.model})
    else:
        raise ParallelselError(f"{a.file}: names no model shape; give --model KEY (or --layers --hidden --heads)")
    world = world_arg if world_arg is not None else cfg0.world
    cfg = read_config(text, cfg0.launcher, world=world, layers=m.layers)
    if "dp" not in cfg.plan:
        raise ParallelselError(f"{a.file}: the data-parallel size follows from the world size, which the file does not "
                               f"state (no torchrun --nnodes/--nproc-per-node): give --gpus N")
    plan = Plan(**cfg.plan)
    c = _cluster(a, need=plan.gpus)
    if a.global_batch is not None and cfg.global_batch is not None and a.global_batch != cfg.global_batch:
        raise ParallelselError(f"--global-batch {a.global_batch}: the file says {cfg.global_batch}; give one of them")
    if cfg.recipe is None and a.recipe is None:
        raise ParallelselError(f"{a.file}: its optimizer/precision is none of the recipes the library prices "
                               f"({', '.join(RECIPES)}): give the nearest with --recipe KEY")
    recipe = preset("--recipe", a.recipe, RECIPES) if a.recipe is not None else RECIPES[cfg.recipe]
    seq = cfg.seq_len or a.seq_len or m.seq_len
    if seq != m.seq_len:
        m = replace(m, seq_len=seq)
    from ..core.launchers import LAUNCHER_SOURCES

    stack = LAUNCHER_SOURCES[cfg.launcher]["stack"]
    if a.stack is not None and a.stack != stack:
        raise ParallelselError(f"--stack {a.stack}: a {cfg.launcher} file runs on {stack}")
    if cfg.attention is not None and a.attention is not None and a.attention != cfg.attention:
        raise ParallelselError(f"--attention {a.attention}: the file's {cfg.attention_from} means attention "
                               f"{cfg.attention}; drop --attention or pass {cfg.attention}")
    w = Workload(m, recipe=recipe, global_batch=cfg.global_batch or a.global_batch or plan.dp, seq_len=seq,
                 attention=cfg.attention or a.attention or "flash", stack=stack, compile=cfg.compile)
    return w, c, plan, cfg


def _cmd_check(a, out) -> None:
    from ..core.plan import constraint_violations
    from ..core.search import explain, fixes
    from .cli_text import check_text
    from .launchers import refusal_text
    from .reasons import join

    w, c, plan, cfg = _check_job(a)
    hard = constraint_violations(w, plan, c)
    if hard:
        raise ParallelselError(f"{a.file}: plan {plan_label(plan, 'en')}: " + join(hard, "en"))
    h = _headroom_arg(a)
    x = explain(w, c, plan, top=a.top, headroom=h)
    e = x.estimate
    fx = fixes(w, c, plan, headroom=h) if x.gpus_match and not e.fits else ()
    notes = [{"code": code, "values": v, "text": refusal_text(cfg.launcher, code, v, a.lang)} for code, v in cfg.notes]
    for n in notes:  # a note whose option has a price: the same job with it set, as the stack runs it by default
        if n["code"] == "launcher_fp32_params":
            from ..core.estimate import estimate
            from ..core.recipe import RECIPES
            from ..core.stacks import STACKS

            fixed = estimate(replace(w, recipe=RECIPES[STACKS[w.stack].recipe]), plan, c, headroom=h)
            n.update(fix_fits=fixed.fits, fix_memory_bytes=fixed.memory.total, fix_step_s=fixed.step.total)
    best = x.best
    if a.json:
        data = {"launcher": cfg.launcher, "model": _model_json(w.model), "cluster": _cluster_json(c),
                "global_batch": w.global_batch, "recipe": cfg.recipe, "plan": _plan_json(plan, a.lang),
                "notes": notes, "fits": e.fits, "reasons": _reasons_json(e.reasons, a.lang),
                "memory_bytes": e.memory.total, "components_bytes": e.memory.as_dict(), "budget_bytes": e.budget,
                "capacity_bytes": c.device.memory, "step_s": e.step.total, "tokens_per_s": e.step.tokens_per_s,
                "mfu": e.step.mfu, "decomposition_s": e.step.decomposition, "exposed_s": dict(e.step.exposed),
                "contention_s": e.step.contention, "rank": x.rank, "best": None if best is None else _result_json(best, a.lang),
                "step_vs_best": None if best is None or not e.fits else e.step.total / best.estimate.step.total,
                "verdict": _reasons_json(x.verdict, a.lang), "fixes": _fixes_json(fx, a.lang)}
        out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        return
    out.write(check_text(w, c, x, fx, cfg, notes, a.lang))


_COMMANDS = {"matrix": _cmd_matrix, "plan": _cmd_plan, "check": _cmd_check, "bubble": _cmd_bubble, "memory": _cmd_memory,
             "presets": _cmd_presets}


def main(argv=None) -> int:
    """Run the CLI; returns the exit status (0 ok, 2 bad input) instead of raising."""
    parser = build_parser()
    token = _LANG.set(_argv_lang(argv))
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help (0) or an argparse error (2), already printed
            return int(exc.code or 0)
        error = ERRORS[args.lang]
        try:
            _COMMANDS[args.command](args, sys.stdout)
        except (ParallelselError, ValueError, TypeError) as exc:
            msg = " ".join(str(exc).split())
            sys.stderr.write(f"parallelsel {args.command}: {error}: {msg}\n")
            return 2
        except OSError as exc:
            sys.stderr.write(f"parallelsel {args.command}: {error}: {exc.strerror or exc}: {exc.filename}\n")
            return 2
        return 0
    finally:
        _LANG.reset(token)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
