"""Each lesson page tells one story: at most 7 tables and charts outside folds, and numbers at the model's precision.

Counted in the built site (``site`` fixture) by ``tests/page_budget.py``. Lesson pages are the nav's pages except the
reference material (API/CLI/contributing, references, glossary), the validation page (where the detail goes), the
fill-in form, the calculator and the notebook.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from page_budget import exhibits, fine_figures

REPO = Path(__file__).resolve().parent.parent
MAX_EXHIBITS = 7
MAX_FINE = 20
NOT_LESSONS = ("reference/", "references.md", "glossary.md", "validation.md", "fill-in.md", "matrix/calculator.md",
               ".ipynb")


def _nav_pages(node) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [p for v in node.values() for p in _nav_pages(v)]
    return [p for item in node for p in _nav_pages(item)]


def lesson_pages() -> list[str]:
    config = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    return [p for p in _nav_pages(config["nav"]) if not any(p.startswith(x) or p.endswith(x) for x in NOT_LESSONS)]


def built(site: Path, page: str) -> str:
    rel = page[: -len("index.md")] if page.endswith("index.md") else page[: -len(".md")] + "/"
    return (site / rel / "index.html").read_text(encoding="utf-8")


def test_the_counters_see_what_they_count():
    html = ('<article><table></table><figure class="ps-chart"><svg><text>3.87 s</text></svg></figure>'
            '<details class="note"><summary>x</summary><table></table></details><p>12.34 ms 1.5 s 0.25% 1.56B</p>'
            '<pre><code>9.99 ms</code></pre></article><table></table>')
    assert exhibits(html) == ["table", "figure"]
    assert fine_figures(html) == ["3.87 s", "12.34 ms", "0.25%"]


def test_lesson_pages_are_found():
    pages = lesson_pages()
    assert "index.md" in pages and "matrix/index.md" in pages and "mechanics/bubble.md" in pages
    assert not [p for p in pages if p.startswith("reference/") or p == "validation.md"]


@pytest.mark.build
def test_at_most_seven_tables_and_charts_outside_folds(site):
    over = {p: len(exhibits(built(site, p))) for p in lesson_pages()}
    over = {p: n for p, n in over.items() if n > MAX_EXHIBITS}
    assert not over, f"lesson pages with more than {MAX_EXHIBITS} tables+charts in the main flow (fold the rest): {over}"


@pytest.mark.build
def test_few_figures_print_two_decimals_with_a_unit(site):
    found = {p: fine_figures(built(site, p)) for p in lesson_pages()}
    total = sum(len(v) for v in found.values())
    assert total <= MAX_FINE, (f"{total} numbers with a unit and 2+ decimals on lesson pages (limit {MAX_FINE}; "
                               f"render/units.places decides precision): { {p: v[:6] for p, v in found.items() if v} }")
