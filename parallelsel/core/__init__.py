"""The model: numbers and :class:`~parallelsel.core.reasons.Reason` codes only (no sentences, no render data).

Imports only itself (and the standard library, numpy, matplotlib-free); ``tests/test_layers.py`` enforces it.
"""

VERSION = "0.1.0"
"""The package's version (``parallelsel.__version__``); kept in the lowest layer so every layer can print it."""
