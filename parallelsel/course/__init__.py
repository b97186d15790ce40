"""The lesson's data: paper cases, measured runs, references and the one-page models the lesson teaches with.

Imports :mod:`parallelsel.core` and itself only; ``tests/test_layers.py`` enforces it.
"""
