# `parallelsel presets devices`, run in-process: every device key, its memory, peak FLOP/s, usual links and source.
import contextlib
import io

from parallelsel.render.cli import main

out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(["presets", "devices"])
assert code == 0
print(out.getvalue().split("\n\n", 1)[1])
