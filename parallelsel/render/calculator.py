"""The calculator page's entry point: the ``parallelsel`` CLI run on a form's fields, in-process.

The page (docs/matrix/calculator.md) runs this module in Pyodide, in the reader's browser. It does not
re-implement anything: each field becomes the CLI flag of the same meaning, and :func:`run` calls
:func:`parallelsel.render.cli.main` -- the function behind the ``parallelsel`` command -- for ``matrix`` and
``plan`` (their ``--json`` output and their text, which ``render/`` writes) and ``memory`` for the top
plans (their memory split and step time). So the page shows exactly what ``parallelsel plan --json`` and
``parallelsel matrix --json`` print for the same inputs, and a bad field is the CLI's one-line error.

Examples:
    >>> out = run({"model": "llama2-7b", "nodes": "1", "gpus_per_node": "8", "global_batch": "64"})
    >>> out["ok"], out["argv"]
    (True, ['--model', 'llama2-7b', '--nodes', '1', '--gpus-per-node', '8', '--global-batch', '64'])
    >>> out["plan"]["results"][0]["plan"] == out["memory"][0]["plan"]
    True
    >>> run({"model": "llama2-7b", "nodes": "zero"})["ok"]
    False
"""

from __future__ import annotations

import contextlib
import io
import json
import shlex
from collections.abc import Mapping

from .cli import main as cli_main

__all__ = ["FIELDS", "SHAPE_FIELDS", "CUSTOM", "argv", "cli", "run"]

# form field name -> CLI flag (the page's <input>/<select> names; DESIGN.md fixes the first six)
FIELDS = {
    "model": "--model", "device": "--device", "nodes": "--nodes", "gpus_per_node": "--gpus-per-node",
    "global_batch": "--global-batch", "seq_len": "--seq-len", "recipe": "--recipe", "headroom": "--headroom",
    "intra": "--intra", "inter": "--inter", "attention": "--attention", "stack": "--stack",
}
SHAPE_FIELDS = {"layers": "--layers", "hidden": "--hidden", "heads": "--heads", "kv_heads": "--kv-heads",
                "ffn_hidden": "--ffn-hidden", "vocab": "--vocab"}
CUSTOM = "custom"
"""The ``model`` value that means "my own shape": the shape fields are used instead of a preset."""

TOP_MEMORY = 3
"""How many of the ranked plans get their memory split (one ``parallelsel memory`` run each)."""


def argv(form: Mapping[str, object]) -> list[str]:
    """The model and cluster flags for ``form`` (empty fields are left to the CLI's defaults).

    ``model`` is a preset key, or :data:`CUSTOM` with the shape fields (``layers``, ``hidden``, ``heads``,
    optionally ``kv_heads``, ``ffn_hidden``, ``vocab``). Shape fields given with a preset override it, as
    on the command line.
    """
    out: list[str] = []
    for name, flag in FIELDS.items():
        value = str(form.get(name) or "").strip()
        if not value or (name == "model" and value == CUSTOM):
            continue
        out += [flag, value]
    for name, flag in SHAPE_FIELDS.items():
        value = str(form.get(name) or "").strip()
        if value:
            out += [flag, value]
    return out


def cli(args: list[str]) -> tuple[int, str, str]:
    """``parallelsel <args>`` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli_main(args)
    return status, out.getvalue(), err.getvalue()


def _json(command: str, flags: list[str]) -> dict:
    status, out, err = cli([command, *flags, "--json"])
    if status:
        raise _Failed(err)
    return json.loads(out)


def _text(command: str, flags: list[str]) -> str:
    status, out, err = cli([command, *flags])
    if status:
        raise _Failed(err)
    return out


class _Failed(Exception):
    """The CLI refused the input; its one-line message is the exception's text."""


def _memory_flags(plan: Mapping[str, object]) -> list[str]:
    # One ranked plan of `plan --json` as the flags `parallelsel memory` takes.
    flags = []
    for key, flag in (("dp", "--dp"), ("tp", "--tp"), ("pp", "--pp"), ("zero", "--zero"),
                      ("micro_batch", "--micro-batch"), ("recompute", "--recompute"), ("schedule", "--schedule"),
                      ("chunks", "--chunks")):
        if plan.get(key) is not None:
            flags += [flag, str(plan[key])]
    if plan.get("sp"):
        flags.append("--sp")
    return flags


def run(form: Mapping[str, object]) -> dict:
    """Everything the page shows for ``form``, as the CLI computes it.

    Returns ``{"ok": True, "argv", "commands", "matrix", "plan", "text": {"matrix", "plan"}, "memory": [{"plan", "text"}]}``
    where ``matrix`` / ``plan`` are the objects ``parallelsel matrix|plan <argv> --json`` prints, the texts are
    what the same commands print without ``--json``, and ``memory`` holds ``parallelsel memory`` for each of the
    first :data:`TOP_MEMORY` ranked plans, and ``commands`` the two command lines; or
    ``{"ok": False, "argv", "error"}`` with the CLI's error line.
    """
    flags = argv(form)
    try:
        matrix = _json("matrix", flags)
        plan = _json("plan", flags)
        text = {"matrix": _text("matrix", flags), "plan": _text("plan", flags)}
        memory = []
        for r in plan.get("results", [])[:TOP_MEMORY]:
            status, out, err = cli(["memory", *flags, *_memory_flags(r)])
            memory.append({"plan": r["plan"], "text": out if status == 0 else err})
    except _Failed as exc:
        lines = str(exc).strip().splitlines() or [""]
        return {"ok": False, "argv": flags, "error": lines[-1]}  # argparse prints usage first; the last line says why
    commands = [shlex.join(["parallelsel", command, *flags, "--json"]) for command in ("matrix", "plan")]
    return {"ok": True, "argv": flags, "commands": commands, "matrix": matrix, "plan": plan, "text": text,
            "memory": memory}


def run_json(form_json: str) -> str:
    """:func:`run` with JSON in and out (what the page's JavaScript calls through Pyodide)."""
    return json.dumps(run(json.loads(form_json)), ensure_ascii=False)
