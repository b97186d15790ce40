# Export a plan to a launcher, check that file, then check a hand-written launch script with a mistake in it.
import contextlib
import io
import shlex
import tempfile
from pathlib import Path

from parallelsel.render.cli import main

HAND_WRITTEN = """\
#!/bin/bash
# Llama 3 70B on 8 nodes of 8 A100-80GB, written by hand
export CUDA_DEVICE_MAX_CONNECTIONS=1
torchrun --nnodes 8 --nproc-per-node 8 pretrain_gpt.py \\
  --num-layers 80 --hidden-size 8192 --num-attention-heads 64 \\
  --group-query-attention --num-query-groups 8 --ffn-hidden-size 28672 \\
  --swiglu --normalization RMSNorm --position-embedding-type rope --disable-bias-linear \\
  --untie-embeddings-and-output-weights --tokenizer-type NullTokenizer --vocab-size 128256 \\
  --seq-length 8192 --max-position-embeddings 8192 \\
  --tensor-model-parallel-size 8 --sequence-parallel \\
  --micro-batch-size 1 --global-batch-size 512 \\
  --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather
"""


def run(command, files):  # markdown-exec: hide
    """Run one command in-process; FILE names in it are files of the temporary folder; `> FILE` saves stdout."""
    words = shlex.split(command)[1:]
    target = None
    if ">" in words:
        target = words[words.index(">") + 1]
        words = words[:words.index(">")]
    argv = [str(files / w) if (files / w).exists() else w for w in words]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    if target:
        (files / target).write_text(out.getvalue())
        print(f"```console\n$ {command}\n{err.getvalue()}$ cat {target}\n{out.getvalue()}```\n")
    else:
        print(f"```console\n$ {command}\n{out.getvalue()}{err.getvalue()}```\n")
    print(f"退出码：`{code}`\n")


with tempfile.TemporaryDirectory() as tmp:  # markdown-exec: hide
    files = Path(tmp)  # markdown-exec: hide
    (files / "train_70b.sh").write_text(HAND_WRITTEN)  # markdown-exec: hide
    print("**1. 导出**：第一名交给 Megatron-LM，文件开头是注释头。\n")  # markdown-exec: hide
    run("parallelsel plan --model llama3-70b --nodes 8 --global-batch 512 --export megatron > job.sh", files)
    print("**2. 检查导出的文件**：`check` 读回同一个方案，判断与 `plan` 一致。\n")  # markdown-exec: hide
    run("parallelsel check job.sh", files)
    print("**3. 检查一份手写的脚本**：\n")  # markdown-exec: hide
    print(f"```bash\n{HAND_WRITTEN}```\n")  # markdown-exec: hide
    run("parallelsel check train_70b.sh", files)
    print("**4. 第一名交不出去时**：导出该启动器能跑的最好方案，并在 stderr 说明。\n")  # markdown-exec: hide
    run("parallelsel plan --model llama3-8b --nodes 2 --global-batch 128 --seq-len 16384 --export torchtitan "
        "> job.toml", files)
