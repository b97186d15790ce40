"""Record the bytes autograd keeps for dropout at probability 0 and above, in a Llama-style residual block.

Not run by ``make test`` (it needs torch); the tests read only its output,
``parallelsel/course/data/torch_dropout.json``. How it was run (the file records the torch version it saw)::

    /tmp/torchenv/bin/python tools/record_torch_dropout.py   # any venv with torch

One bf16 tensor of ``TOKENS x HIDDEN`` elements goes through ``x + F.dropout(x @ w, p)`` and, for the scores of
standard attention, ``F.dropout(softmax(q @ k.T), p) @ v``; ``torch.autograd.graph.saved_tensors_hooks`` sums the
bytes of every tensor autograd saves for backward (each storage once). The record keeps, per probability, the bytes
saved and the elements of the dropped tensor, so a reader can see what dropout itself adds: at p = 0 PyTorch's
dropout returns its input (``aten/src/ATen/native/Dropout.cpp`` ``_dropout_impl``) and nothing is added. (On CPU a
p > 0 dropout keeps its noise in the input's dtype; CUDA's fused kernel keeps a 1-byte mask instead.)
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.nn.functional as F

TOKENS, HIDDEN, HEADS_SEQ = 64, 32, 16
PROBABILITIES = (0.0, 0.1)
OUT = Path(__file__).resolve().parents[1] / "parallelsel" / "course" / "data" / "torch_dropout.json"


def saved_bytes(fn) -> int:
    seen: dict[int, int] = {}

    def pack(t):
        seen[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn()
    return sum(seen.values())


def main() -> None:
    torch.manual_seed(0)
    x = torch.randn(TOKENS, HIDDEN, dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(HIDDEN, HIDDEN, dtype=torch.bfloat16, requires_grad=True)
    q = torch.randn(HEADS_SEQ, HIDDEN, dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(HEADS_SEQ, HIDDEN, dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(HEADS_SEQ, HIDDEN, dtype=torch.bfloat16, requires_grad=True)
    rows = []
    for p in PROBABILITIES:
        residual = saved_bytes(lambda: x + F.dropout(x @ w, p=p, training=True))
        scores = saved_bytes(lambda: F.dropout(torch.softmax(q @ k.T, dim=-1), p=p, training=True) @ v)
        rows.append({"p": p, "residual_block_bytes": residual, "residual_dropped_elements": TOKENS * HIDDEN,
                     "attention_scores_bytes": scores, "scores_dropped_elements": HEADS_SEQ * HEADS_SEQ})
    OUT.write_text(json.dumps({
        "torch": torch.__version__, "device": "cpu", "dtype": "bfloat16",
        "how": "tools/record_torch_dropout.py: autograd saved_tensors_hooks, bytes of each saved storage once",
        "rows": rows}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
