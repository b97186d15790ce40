# Bad input to the `parallelsel` command: one line on stderr, exit status 2 (run in-process, as terminal_run.py does).
import contextlib
import io
import shlex

from parallelsel.render.cli import main

COMMANDS = [  # markdown-exec: hide
    "parallelsel plan --model llama3-70b --nodes 8 --global-batch 512 --export deepspeed",
    "parallelsel plan --model gpt3-175b --nodes 0",
    "parallelsel plan --model gpt3-175b --gpu 64",
    "parallelsel bubble --stages 2000 --microbatches 2000",
]
for command in COMMANDS:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(shlex.split(command)[1:])
    print(f"```console\n$ {command}\n{out.getvalue()}{err.getvalue()}```\n")
    print(f"退出码：`{code}`\n")
