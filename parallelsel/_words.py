"""Numbers inside reason sentences (the library's Chinese explanations).

Reasons are data that pages, tests and the CLI print verbatim, so the few numbers they carry are
formatted here, once, in binary units (GiB/TiB) and seconds. Everything else is formatted by
``parallelsel.render``.
"""

from __future__ import annotations

GIB = 2**30


def size(n: float) -> str:
    """Bytes as GiB with one decimal, or TiB above 1024 GiB."""
    if n >= 1024 * GIB:
        return f"{n / 2**40:.2f} TiB"
    return f"{n / GIB:.1f} GiB"


def count(n: float) -> str:
    """A parameter count as 69.0B or 350M."""
    return f"{n / 1e9:.1f}B" if n >= 1e9 else f"{n / 1e6:.0f}M"


def secs(t: float) -> str:
    """Seconds as ms below one second."""
    return f"{t * 1e3:.0f} ms" if t < 1 else f"{t:.2f} s"


def rate(link) -> str:
    """A link's per-GPU bandwidth in decimal GB/s, as vendors quote it."""
    return f"{link.bandwidth / 1e9:g} GB/s"
