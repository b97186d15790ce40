# The --json output of each command, run in-process: every key a script can rely on, with its type.
import contextlib
import io
import json
import os
import tempfile

from parallelsel.render.cli import main

COMMANDS = {  # markdown-exec: hide
    "matrix": ["matrix", "--model", "gpt2-1.5b", "--global-batch", "64"],
    "plan": ["plan", "--model", "llama2-7b", "--global-batch", "64", "--top", "1"],
    "plan（无方案放得下时）": ["plan", "--model", "llama3-70b", "--device", "a100-40gb", "--global-batch", "64"],
    "plan --why": ["plan", "--model", "llama2-7b", "--global-batch", "64", "--why", "DP8 ZeRO-3 mb1 full"],
    "bubble": ["bubble", "--stages", "4", "--microbatches", "8"],
    "memory": ["memory", "--model", "llama2-13b", "--tp", "8", "--global-batch", "16"],
    "presets": ["presets", "recipes"],
    "check": ["check", "job.sh"],
}
JOB = tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False)  # markdown-exec: hide
with contextlib.redirect_stdout(JOB):  # markdown-exec: hide
    main(["plan", "--model", "llama2-7b", "--global-batch", "64", "--export", "megatron"])  # markdown-exec: hide
JOB.close()  # markdown-exec: hide


def shape(x, path, out, parent=()):  # markdown-exec: hide
    """One line per key path: `a.b[].c  type`. Lists show their first element's keys."""
    if isinstance(x, dict) and path == "excluded":  # keyed by exclusion code: one line for all
        out.append(("excluded.<code>", "int"))
    elif isinstance(x, dict) and path == "exposed_s":  # keyed by strategy label (DP, FSDP, TP, PP, CP, EP ...)
        out.append(("exposed_s.<strategy>", "float"))
    elif isinstance(x, dict) and path.endswith(".values") and {"code", "text"} <= set(parent):  # a reason's values: per code
        out.append((path + ".<name>", "number|str|bool|null|dict (see the code table)"))
    elif isinstance(x, dict):
        for k, v in x.items():
            shape(v, f"{path}.{k}" if path else k, out, x)
    elif isinstance(x, list):
        out.append((path + "[]", "list"))
        if x and isinstance(x[0], (dict, list)):
            shape(x[0], path + "[]", out)
    else:
        out.append((path, type(x).__name__))


for name, argv in COMMANDS.items():
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main([JOB.name if a == "job.sh" else a for a in argv] + ["--json"])
    assert code == 0, argv
    rows = []
    shape(json.loads(buf.getvalue()), "", rows)
    keys = {k for k, _ in rows}
    assert all(part.isascii() for part in keys), keys  # keys are ASCII; values may be Chinese
    seen = []
    for k, t in rows:
        if (k, t) not in seen:
            seen.append((k, t))
    print(f"`parallelsel {' '.join(argv)} --json`\n")
    print("```text\n" + "\n".join(f"{k:<44} {t}" for k, t in seen) + "\n```\n")
os.unlink(JOB.name)  # markdown-exec: hide
