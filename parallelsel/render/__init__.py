"""Presentation only: Markdown tables and SVG charts from library data. Pure functions: data in, string out."""
