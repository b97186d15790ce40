"""The model: numbers and :class:`~parallelsel.core.reasons.Reason` codes only (no sentences, no render data).

Imports only itself (and the standard library, numpy, matplotlib-free); ``tests/test_layers.py`` enforces it.
"""
