"""Key terms are explained where a reader meets them first.

A reader who follows the site in its navigation order (``mkdocs.yml`` ``nav``) meets each term somewhere first:
in prose, or in what a snippet prints (its snapshot under ``tests/snapshots/``, which is what the page shows).
At that first occurrence the sentence must link the term's entry in the glossary (``glossary.md#<id>``), the
place that gives its Chinese and English name and its one-line meaning; the glossary itself promises it.

The glossary page and the references page are not walked (the glossary is where the terms are defined), nor
is the workbook notebook (it comes after the pages that introduce the terms). A snippet's source tab is not
walked either: only what it prints reaches the reader as text.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
import yaml

from test_snippets import SNAPSHOTS, reduced

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"

# glossary id -> the forms the term takes on a page (Chinese name, English name, symbol).
KEY_TERMS = {
    "mfu": r"MFU",
    "recompute-selective": r"选择性重算",
    "recompute-full": r"完全重算",
    "bubble": r"气泡",
    "1f1b": r"1F1B",
    "alpha-beta": r"α-β|alpha-beta",
    "step-time": r"步时",
    "roofline": r"屋顶线|roofline",
    "bus-bandwidth": r"总线带宽|bus bandwidth|busbw",
    "micro-batch": r"微批",
}
# Every other glossary entry: its first occurrence links the glossary too (the glossary's promise, for all of it).
OTHER_TERMS = {
    "dp": r"(?<!分片)数据并行",
    "fsdp": r"全分片数据并行",
    "zero": r"ZeRO",
    "hsdp": r"HSDP|混合分片",
    "tp": r"张量并行",
    "sp": r"序列并行",
    "cp": r"上下文并行",
    "pp": r"流水线并行",
    "ep": r"专家并行",
    "global-batch": r"全局批量|global batch",
    "grad-accum": r"梯度累积",
    "bubble-fraction": r"气泡比例|气泡占比",
    "bubble-overhead": r"气泡开销",
    "interleaved": r"交错调度|交错 1F1B",
    "zero-bubble": r"零气泡",
    "collective": r"集合通信",
    "all-reduce": r"all-reduce|全归约",
    "all-gather": r"all-gather|全收集",
    "reduce-scatter": r"reduce-scatter|归约分发",
    "all-to-all": r"all-to-all|全交换",
    "p2p": r"点对点|p2p",
    "bus-factor": r"总线因子|bus factor",
    "nvlink": r"NVLink",
    "infiniband": r"InfiniBand",
    "overlap": r"重叠",
    "hfu": r"HFU",
    "scaling-efficiency": r"扩展效率",
    "straggler": r"慢卡|掉队者|straggler",
    "headroom": r"预留比例|headroom",
    "margin": r"(?<!分配器)余量|margin",
    "tight": r"偏紧",
}
NOT_WALKED = {"glossary.md", "references.md"}

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>```+|~~~+)(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
                    re.S | re.M)
_INCLUDE = re.compile(r"""-{1,}8<-{1,}[ \t]+(["'])(?P<path>[^"'\n]+?)\1""")
# A sentence ends at a full stop, a semicolon, a blank line, a table cell border or a list item.
_SENTENCE_END = re.compile(r"[。；！？]|\n[ \t]*\n|\||\n[ \t]*(?:[-*] |\d+\. )")


class _NavLoader(yaml.SafeLoader):
    """mkdocs.yml with its ``!!python/...`` and ``!relative`` tags read as plain nodes (only ``nav`` is used)."""


_NavLoader.add_multi_constructor("", lambda loader, suffix, node: None)
_NavLoader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def _nav_files(entries) -> list[str]:
    out = []
    for entry in entries:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        out.extend(_nav_files(value) if isinstance(value, list) else [value])
    return out


@functools.cache
def nav_pages() -> list[str]:
    """The Markdown pages of ``nav`` in reading order, minus :data:`NOT_WALKED`."""
    config = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_NavLoader)
    return [p for p in _nav_files(config["nav"]) if p.endswith(".md") and p not in NOT_WALKED]


def _shown(match: re.Match) -> str:
    """What a fenced block shows as text: an executed block -> its snippet's output; any other block as written."""
    info, body = match["info"], match["body"]
    if 'exec="on"' not in info:
        return match.group(0)
    shown = []
    for inc in _INCLUDE.finditer(body):
        path = inc["path"].strip()
        if ":" in path:  # a section of a snippet (an exercise's givens): its whole output is shown in the answer
            continue
        snapshot = SNAPSHOTS / (path.removeprefix("snippets/").removesuffix(".py") + ".txt")
        shown.append(snapshot.read_text(encoding="utf-8"))
    return "\n\n".join(shown)


@functools.cache
def page_text(page: str) -> str:
    """A page as the reader meets it: prose, and in place of each executed block what it prints."""
    return _FENCE.sub(_shown, (DOCS / page).read_text(encoding="utf-8"))


def _sentence(text: str, pos: int) -> str:
    starts = [m.end() for m in _SENTENCE_END.finditer(text, 0, pos)]
    start = starts[-1] if starts else 0
    end = _SENTENCE_END.search(text, pos)
    return text[start:end.start() if end else len(text)]


def _in_heading(text: str, pos: int) -> bool:
    return text[text.rfind("\n", 0, pos) + 1:].startswith("#")


def first_use(pattern: str) -> tuple[str, int, str] | None:
    """(page, line, sentence) of the first occurrence of ``pattern`` in reading order, headings aside (a heading
    names what the text below it explains, and holds no link)."""
    for page in nav_pages():
        text = page_text(page)
        for m in re.finditer(pattern, text):
            if not _in_heading(text, m.start()):
                return page, text.count("\n", 0, m.start()) + 1, _sentence(text, m.start())
    return None


def _glossary_ids() -> set[str]:
    return set(re.findall(r'<span id="([^"]+)"></span>', (DOCS / "glossary.md").read_text(encoding="utf-8")))


def test_terms_are_the_glossary():
    """Every glossary entry is walked, under the id it has there (the generic 激活重算 by its two kinds)."""
    walked = set(KEY_TERMS) | set(OTHER_TERMS) | {"recompute"}
    assert walked == _glossary_ids(), f"glossary ids not walked: {sorted(_glossary_ids() - walked)}; " \
                                      f"walked without a glossary entry: {sorted(walked - _glossary_ids())}"


def test_nav_pages_are_walked():
    pages = nav_pages()
    assert pages[0] == "index.md" and "core/context.md" in pages and "mechanics/communication.md" in pages
    assert pages.index("core/index.md") < pages.index("mechanics/communication.md")


@pytest.mark.parametrize("term", sorted(KEY_TERMS) + sorted(OTHER_TERMS))
def test_first_use_links_the_glossary(term):
    found = first_use({**KEY_TERMS, **OTHER_TERMS}[term])
    assert found, f"{term}: not used on any page; drop it from KEY_TERMS"
    page, line, sentence = found
    assert f"glossary.md#{term})" in sentence, (
        f"{term} is first used on docs/{page} (line {line} of the page with snippet output in place), "
        f"without a link to its glossary entry in that sentence:\n  {' '.join(sentence.split())[:400]}")


def test_sentence_splitting_finds_a_link_in_its_sentence_only():
    text = "前面一句。这里用到 [MFU](../glossary.md#mfu) 一词；后面一句 MFU。"
    assert "glossary.md#mfu)" in _sentence(text, text.index("MFU"))
    assert "glossary.md#mfu)" not in _sentence(text, text.rindex("MFU"))
