"""Markdown for the selection matrix and the plan search: pure functions, data in, string out.

Units are printed with the number: memory in GiB (2**30 bytes), time via :func:`fmt_time`.
"""

from __future__ import annotations

from collections.abc import Sequence

from parallelsel.render.lesson_text import FOUR_COLUMNS, StrategyFacts, verdict_word
from parallelsel.core.matrix import MatrixRow, Verdict
from parallelsel.render.lesson_text import FOUR_COLUMN_HEADERS
from parallelsel.core.reasons import Reason
from parallelsel.render.reasons import join, stage_title, text, title
from parallelsel.render.tables import fmt_bytes, fmt_pct, fmt_time, markdown_table
from parallelsel.core.search import SearchResult
from .reasons import plan_label

__all__ = ["four_column_table", "headline", "matrix_table", "paper_cases_table", "funnel_table", "excluded_table",
           "reasons_list", "top_table", "why_list"]


def four_column_table(rows: Sequence[StrategyFacts] = FOUR_COLUMNS) -> str:
    """The static table 解决的瓶颈 — 主要通信 — 适用条件 — 代价."""
    return markdown_table(list(FOUR_COLUMN_HEADERS),
                          [[r.name, r.bottleneck, r.communication, r.conditions, r.cost] for r in rows])


HEADERS = {
    "zh": {"matrix": ("策略", "判断", "最佳设置", "每卡内存", "余量", "步时"), "reasons": "理由", "headline": "主要理由",
           "funnel": ("阶段", "方案数", "占枚举"), "excluded": ("排除原因", "方案数"),
           "top": ("名次", "方案", "步时", "tokens/s", "MFU", "每卡内存", "余量")},
    "en": {"matrix": ("strategy", "verdict", "best setting", "memory per GPU", "margin", "step"), "reasons": "reasons",
           "headline": "main reason", "funnel": ("stage", "plans", "share of enumerated"),
           "excluded": ("excluded because", "plans"),
           "top": ("rank", "plan", "step", "tokens/s", "MFU", "memory per GPU", "margin")},
}
"""The column headers of each table, per language (``lang``)."""


def _best(r: MatrixRow, lang: str = "zh") -> str:
    return plan_label(r.best.plan, lang) if r.best is not None else "—"


def headline(row: MatrixRow) -> Reason:
    """The reason a verdict rests on: the first violated constraint of an infeasible strategy; otherwise the last
    reason, which is the one that set the verdict (the matrix appends 不优先's comparison and 需更多信息's missing
    fact after the descriptive reasons) or, for 可行, the last fact it found."""
    return row.reasons[0] if row.verdict is Verdict.INFEASIBLE else row.reasons[-1]


def matrix_table(rows: Sequence[MatrixRow], reasons: bool | str = True, lang: str = "zh") -> str:
    """One line per strategy: verdict, best setting (memory per GPU, headroom left, step time) and the reasons:
    all of them (``True``), only :func:`headline` (``"short"``; pair it with :func:`reasons_list` folded below the
    table) or none (``False``).

    余量 is the share of the usable memory (driver-reported minus the runtime reserve) the plan leaves free.
    """
    if reasons not in (True, False, "short"):
        raise ValueError(f"reasons={reasons!r}: must be True, False or 'short'")
    h = HEADERS[lang]
    headers = list(h["matrix"]) + ([h["headline"] if reasons == "short" else h["reasons"]] if reasons else [])
    body = []
    for r in rows:
        e = r.best
        line = [r.strategy, verdict_word(r.verdict, lang), _best(r, lang), fmt_bytes(e.memory.total) if e else "—",
                fmt_pct(e.margin) if e else "—", fmt_time(e.step.total, lang=lang) if e else "—"]
        if reasons:
            line.append(text(headline(r), lang) if reasons == "short" else join(r.reasons, lang))
        body.append(line)
    return markdown_table(headers, body)


def reasons_list(rows: Sequence[MatrixRow]) -> str:
    """Every reason of every strategy, one bullet per strategy (what :func:`matrix_table` shortens)."""
    return "".join(f"- **{r.strategy}**（{verdict_word(r.verdict)}）：{join(r.reasons)}\n" for r in rows)


def paper_cases_table(cases: Sequence[tuple[str, Sequence[MatrixRow]]]) -> str:
    """The lesson's fill-in table: one row per case, one column per strategy, verdicts only."""
    strategies = [r.strategy for r in cases[0][1]] if cases else []
    return markdown_table(["案例"] + strategies, [[name] + [verdict_word(r.verdict) for r in rows] for name, rows in cases],
                          align="l" + "c" * len(strategies))


def funnel_table(result: SearchResult, lang: str = "zh") -> str:
    """Plans left after each stage, with the share of the enumeration."""
    total = max(1, result.considered)
    return markdown_table(list(HEADERS[lang]["funnel"]),
                          [[stage_title(stage, result.top, lang), f"{n:,}", fmt_pct(n / total)]
                           for stage, n in result.funnel()], align="lrr")


def excluded_table(result: SearchResult, lang: str = "zh") -> str:
    """Excluded plans by reason, in the order the checks run."""
    return markdown_table(list(HEADERS[lang]["excluded"]), [[title(k, {"top": result.top}, lang), f"{v:,}"]
                                                for k, v in result.excluded.items()], align="lr")


def top_table(result: SearchResult, lang: str = "zh") -> str:
    """The ranked plans: step time, throughput, MFU, memory per GPU and headroom (share of the usable memory left free)."""
    rows = []
    for r in result.results:
        st, mem = r.estimate.step, r.estimate.memory
        rows.append([r.rank, plan_label(r.plan, lang), fmt_time(st.total, lang=lang), f"{st.tokens_per_s:,.0f}",
                     fmt_pct(st.mfu), fmt_bytes(mem.total), fmt_pct(r.estimate.margin)])
    return markdown_table(list(HEADERS[lang]["top"]), rows, align="rlrrrrr")


def why_list(result: SearchResult, limit: int | None = None) -> str:
    """Each ranked plan's chain of decisions as a nested Markdown list."""
    out = []
    for r in result.results[:limit]:
        out.append(f"{r.rank}. **{plan_label(r.plan)}**")
        out.extend(f"    - {text(w)}" for w in r.why)
    return "\n".join(out) + "\n"
