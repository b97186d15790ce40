# Run the `parallelsel` command in-process and show what a platform engineer sees in the terminal.
import contextlib
import io
import shlex

from parallelsel.render.cli import main

COMMANDS = [  # markdown-exec: hide
    "parallelsel --help",
    "parallelsel --version",
    "parallelsel presets recipes",
    "parallelsel matrix --model llama2-70b --device a100-80gb --nodes 4 --gpus-per-node 8 "
    "--intra nvlink3 --inter ib-hdr --global-batch 1024",
    "parallelsel plan --model llama3-70b --device h100-sxm-80gb --gpus 64 --global-batch 512 --top 3",
    "parallelsel plan --model llama3-70b --nodes 8 --global-batch 512 --why DP16·TP4·PP1·ZeRO-3",
    "parallelsel plan --model llama3-70b --device a100-40gb --global-batch 64",
    "parallelsel plan --model llama3-70b --nodes 8 --global-batch 512 --export megatron",
    "parallelsel plan --model llama3-70b --nodes 8 --global-batch 512 --export torchtitan",
    "parallelsel plan --model gpt2-1.5b --global-batch 64 --why 'DP8 mb2' --export deepspeed",
    "parallelsel bubble --stages 4 --microbatches 8 --schedule 1f1b",
    "parallelsel memory --model llama2-13b --device a100-80gb --nodes 1 --dp 8 --zero 3 --recompute selective --global-batch 64",
]
for command in COMMANDS:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(shlex.split(command)[1:])
    # The search's wall-clock line differs on every run; drop it so two builds stay byte-identical.
    shown = "".join(line for line in out.getvalue().splitlines(keepends=True) if not line.startswith("搜索用时"))
    print(f"```console\n$ {command}\n{shown}{err.getvalue()}```\n")
    print(f"退出码：`{code}`\n")
