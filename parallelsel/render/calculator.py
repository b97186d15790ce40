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
    >>> out["plan"]["results"][0]["plan"] in out["memory"][0]["text"]   # the memory panel prices the plan ranked
    True
    >>> run({"model": "llama2-7b", "nodes": "zero"})["ok"]
    False
"""

from __future__ import annotations

import contextlib
import html
import io
import json
import re
import shlex
from collections.abc import Callable, Mapping

from .cli import main as cli_main

__all__ = ["FIELDS", "ON", "SHAPE_FIELDS", "SWITCHES", "CUSTOM", "argv", "cli", "field_rules", "run", "text_html"]

# form field name -> CLI flag (the page's <input>/<select> names; DESIGN.md fixes the first six)
FIELDS = {
    "model": "--model", "device": "--device", "nodes": "--nodes", "gpus_per_node": "--gpus-per-node",
    "global_batch": "--global-batch", "seq_len": "--seq-len", "recipe": "--recipe", "headroom": "--headroom",
    "intra": "--intra", "inter": "--inter", "attention": "--attention", "stack": "--stack",
}
SWITCHES = {"compile": "--compile"}
"""Form fields that are CLI switches: any of :data:`ON` turns the flag on, anything else leaves it off."""
ON = ("on", "true", "1", "yes")
SHAPE_FIELDS = {"layers": "--layers", "hidden": "--hidden", "heads": "--heads", "kv_heads": "--kv-heads",
                "head_dim": "--head-dim", "ffn_hidden": "--ffn-hidden", "vocab": "--vocab", "experts": "--experts",
                "top_k": "--top-k", "architecture": "--architecture"}
CUSTOM = "custom"
"""The ``model`` value that means "my own shape": the shape fields are used instead of a preset."""

TOP_MEMORY = 3
"""How many of the ranked plans get their memory split (one ``parallelsel memory`` run each)."""


def argv(form: Mapping[str, object]) -> list[str]:
    """The model and cluster flags for ``form`` (empty fields are left to the CLI's defaults).

    ``model`` is a preset key, or :data:`CUSTOM` with the shape fields (``layers``, ``hidden``, ``heads``,
    optionally ``kv_heads``, ``head_dim``, ``ffn_hidden``, ``vocab``, ``experts``, ``top_k``, ``architecture``). Shape
    fields given with a preset override it, as on the command line.
    """
    out: list[str] = []
    for name, flag in FIELDS.items():
        value = str(form.get(name) or "").strip()
        if not value or (name == "model" and value == CUSTOM):
            continue
        out += [flag, value]
    for name, flag in SWITCHES.items():
        if str(form.get(name) or "").strip().lower() in ON:
            out.append(flag)
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
    for key, flag in (("dp", "--dp"), ("tp", "--tp"), ("pp", "--pp"), ("cp", "--cp"), ("ep", "--ep"), ("etp", "--etp"),
                      ("zero", "--zero"), ("micro_batch", "--micro-batch"), ("recompute", "--recompute"),
                      ("recompute_layers", "--recompute-layers"), ("schedule", "--schedule"),
                      ("chunks", "--chunks"), ("dispatcher", "--dispatcher")):
        if plan.get(key) is not None:
            flags += [flag, str(plan[key])]
    if plan.get("stage_layers"):
        flags += ["--stage-layers", ",".join(map(str, plan["stage_layers"]))]
    flags += [flag for key, flag in (("sp", "--sp"), ("tp_overlap", "--tp-overlap"), ("ep_overlap", "--ep-overlap"))
              if plan.get(key)]
    if plan.get("p2p_overlap") is False:
        flags.append("--no-p2p-overlap")
    return flags


def field_rules() -> dict[str, dict]:
    """The rule of each number field of the form, as the CLI checks its flag: ``{"kind": "integer" | "number",
    "min", "max", "flag"}``. The page checks what is typed with these before it runs anything, and the CLI
    checks it again when it runs, so the two cannot disagree on what is accepted."""
    names = {flag: name for name, flag in {**FIELDS, **SHAPE_FIELDS}.items()}
    parser = _subparser("plan")
    out = {}
    for action in parser._actions:
        rule = getattr(action.type, "rule", None)
        for flag in action.option_strings:
            if rule is not None and flag in names:
                out[names[flag]] = {**rule, "flag": flag}
    return out


def _subparser(command: str):
    from .cli import build_parser

    parser = build_parser()
    for action in parser._actions:
        if getattr(action, "choices", None) and command in (action.choices or {}):
            return action.choices[command]
    raise KeyError(command)


def _field_of(error: str) -> str | None:
    """The form field an argparse error line names (``argument --nodes: ...``), if any."""
    m = re.search(r"argument (--[a-z-]+)", error)
    if not m:
        return None
    return next((name for name, flag in {**FIELDS, **SHAPE_FIELDS}.items() if flag == m.group(1)), None)


_LIST = re.compile(r"^( *)(?:(-)|(\d+)\.) (.*)$")


def text_html(text: str) -> str:
    r"""The CLI's text output (plain lines, Markdown pipe tables, ``-`` and ``1.`` lists) as HTML in the site's own
    look: each table in Material's table wrappers, lists as lists, other lines as paragraphs; every text escaped.

    Examples:
        >>> print(text_html("模型 X\n\n| a | b |\n| :-- | --: |\n| 1 | 2 |\n\nDP：可行\n  - 理由"))
        <p>模型 X</p>
        <div class="md-typeset__scrollwrap"><div class="md-typeset__table"><table>
        <thead><tr><th style="text-align:left">a</th><th style="text-align:right">b</th></tr></thead>
        <tbody><tr><td style="text-align:left">1</td><td style="text-align:right">2</td></tr></tbody>
        </table></div></div>
        <p>DP：可行</p>
        <ul><li>理由</li></ul>
    """
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif line.lstrip().startswith("|"):
            j = i
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                j += 1
            out.append(_table(lines[i:j]))
            i = j
        elif _LIST.match(line):
            j = i
            while j < len(lines) and _LIST.match(lines[j]):
                j += 1
            out.append(_lists(lines[i:j]))
            i = j
        else:
            out.append(f"<p>{html.escape(line.strip())}</p>")
            i += 1
    return "\n".join(out)


def _cells(row: str) -> list[str]:
    row = row.strip()
    return [c.strip() for c in row[1:-1 if row.endswith("|") else None].split("|")]


def _table(rows: list[str]) -> str:
    head, align, body = _cells(rows[0]), [], rows[1:]
    if body and re.fullmatch(r"[\s|:\-]+", body[0]):
        for spec in _cells(body[0]):
            align.append("right" if spec.endswith(":") and not spec.startswith(":") else
                         "center" if spec.startswith(":") and spec.endswith(":") else "left")
        body = body[1:]

    def row(cells, tag):
        tds = []
        for k, c in enumerate(cells):
            style = f' style="text-align:{align[k]}"' if k < len(align) else ""
            tds.append(f"<{tag}{style}>{html.escape(c)}</{tag}>")
        return "<tr>" + "".join(tds) + "</tr>"

    return ('<div class="md-typeset__scrollwrap"><div class="md-typeset__table"><table>\n'
            f"<thead>{row(head, 'th')}</thead>\n<tbody>{''.join(row(_cells(r), 'td') for r in body)}</tbody>\n"
            "</table></div></div>")


def _lists(lines: list[str]) -> str:
    """Consecutive list lines, nested by indentation: ``-`` items as ``<ul>``, numbered ones as ``<ol>``."""
    html_out: list[str] = []
    stack: list[tuple[int, str]] = []  # (indent, "ul" | "ol") of the open lists
    for line in lines:
        indent, dash, number, body = _LIST.match(line).groups()
        depth, kind = len(indent), "ul" if dash else "ol"
        while stack and (stack[-1][0] > depth or (stack[-1][0] == depth and stack[-1][1] != kind)):
            html_out.append(f"</li></{stack.pop()[1]}>")
        if stack and stack[-1][0] == depth:
            html_out.append("</li>")
        else:
            start = f' start="{number}"' if number and number != "1" else ""
            html_out.append(f"<{kind}{start}>")
            stack.append((depth, kind))
        html_out.append(f"<li>{html.escape(body)}")
    while stack:
        html_out.append(f"</li></{stack.pop()[1]}>")
    return "".join(html_out)


def run(form: Mapping[str, object], progress: Callable[[int, int, str], object] | None = None) -> dict:
    """Everything the page shows for ``form``, as the CLI computes it.

    Returns ``{"ok": True, "argv", "commands", "matrix", "plan", "text": {"matrix", "plan"}, "html": {"matrix", "plan",
    "memory"}, "memory": [{"plan", "text", "ok"}]}``
    where ``matrix`` / ``plan`` are the objects ``parallelsel matrix|plan <argv> --json`` prints, the texts are
    what the same commands print without ``--json``, and ``memory`` holds ``parallelsel memory`` for each of the
    first :data:`TOP_MEMORY` ranked plans, and ``commands`` the two command lines; or
    ``{"ok": False, "argv", "error", "field"}`` with the CLI's error line and the form field it names (or None).
    ``progress(k, n, what)`` is called before each of the ``n`` CLI runs (and with ``k == n`` at the end): the
    page's worker passes it on as its progress bar.
    """
    flags = argv(form)
    steps = 2 + TOP_MEMORY

    def step(k: int, what: str) -> None:
        if progress is not None:
            progress(k, steps, what)

    try:
        step(0, "matrix")
        matrix = _json("matrix", flags)
        text = {"matrix": _text("matrix", flags)}
        step(1, "plan")
        plan = _json("plan", flags)
        text["plan"] = _text("plan", flags)
        memory = []
        for k, r in enumerate(plan.get("results", [])[:TOP_MEMORY]):
            step(2 + k, "memory")
            status, out, err = cli(["memory", *flags, *_memory_flags(r)])
            memory.append({"plan": r["plan"], "text": out if status == 0 else err, "ok": status == 0})
    except _Failed as exc:
        lines = str(exc).strip().splitlines() or [""]
        error = lines[-1]  # argparse prints usage first; the last line says why
        return {"ok": False, "argv": flags, "error": error, "field": _field_of(error)}
    step(steps, "done")
    commands = [shlex.join(["parallelsel", command, *flags, "--json"]) for command in ("matrix", "plan")]
    html_ = {"matrix": text_html(text["matrix"]), "plan": text_html(text["plan"]),
             "memory": [text_html(m["text"]) if m["ok"] else f"<p>{html.escape(m['text'])}</p>" for m in memory]}
    return {"ok": True, "argv": flags, "commands": commands, "matrix": matrix, "plan": plan, "text": text,
            "html": html_, "memory": memory}


def run_json(form_json: str, progress: Callable[[int, int, str], object] | None = None) -> str:
    """:func:`run` with JSON in and out (what the page's Web Worker calls through Pyodide)."""
    return json.dumps(run(json.loads(form_json), progress), ensure_ascii=False)
