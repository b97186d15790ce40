"""The reader's experience, checked in a real browser (Debian's Chromium driven by Playwright).

The real site is built once per session (``built_site`` in conftest.py), served by a local static server on
127.0.0.1 (``server``, also in conftest.py), and every request that would leave 127.0.0.1 is aborted and
recorded. Pages are found by walking the built site, so pages added later are covered without editing this file.

Artifacts (not committed): ``build/screenshots/*.png`` and ``build/page-weights.txt``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from browser_helpers import CHROMIUM, LAUNCH_ARGS, NetLog, guard, served_size, site_pages

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parent.parent
BUILD = REPO / "build"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
HOME_LIMIT = 500 * 1024  # bytes transferred for the home page, cold cache
PAGE_LIMIT = 1536 * 1024  # bytes transferred for any page, cold cache
TIMEOUT_MS = 15_000

# Reveal everything a reader can open, in one style change: every panel of every tab set (markdown-exec shows the
# source tab first, the result behind a second tab) and every folded block. Probes and axe then see all content.
REVEAL_JS = """
() => {
  if (!document.getElementById('ps-reveal')) {
    const style = document.createElement('style');
    style.id = 'ps-reveal';
    style.textContent = '.tabbed-set > .tabbed-content > .tabbed-block { display: block !important; }';
    document.head.appendChild(style);
  }
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  window.dispatchEvent(new Event('resize'));  // a11y.js re-checks which boxes scroll
}
"""

OVERFLOW_JS = """
(w) => [...document.querySelectorAll('body *')]
  .filter(e => e.getBoundingClientRect().right > w + 1)
  .slice(0, 5)
  .map(e => e.tagName.toLowerCase() + (typeof e.className === 'string' && e.className ? '.' + e.className.split(' ')[0] : ''))
"""

# Chart labels at the current width: each <text> of a chart, its font size in its own user units times the scale its
# screen transform applies (sqrt |det| of getScreenCTM), i.e. the CSS pixels its em box is tall on screen.
LABELS_JS = """
() => {
  const article = document.querySelector('article') || document.body;
  const out = [];
  for (const svg of article.querySelectorAll('.ps-chart svg')) {
    for (const t of svg.querySelectorAll('text')) {
      if (!t.textContent.trim()) continue;
      const m = t.getScreenCTM();
      if (!m) continue;
      const px = parseFloat(getComputedStyle(t).fontSize) * Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
      if (px > 0) out.push(Math.round(px * 10) / 10);
    }
  }
  return out;
}
"""

PROBE_JS = """
() => {
  const article = document.querySelector('article') || document.body;
  const size = el => { const r = el.getBoundingClientRect(); return [Math.round(r.width), Math.round(r.height)]; };
  return {
    math: [...article.querySelectorAll('math')].map(m => ({size: size(m), tex: m.textContent.slice(0, 40)})),
    charts: [...article.querySelectorAll('.ps-chart svg')].map(svg => ({
      size: size(svg),
      paths: svg.querySelectorAll('path').length,
      texts: svg.querySelectorAll('text').length,
    })),
  };
}
"""

# Tofu check. Chromium draws a character that no installed font covers as the primary font's .notdef glyph (an
# empty box), the same for every such character. We draw each distinct Han character of a text in the element's
# own computed font on a canvas and compare its pixels with the drawing of U+10FFFD (a private-use code point no
# font maps). The method is self-checked: U+10FFFE must draw exactly like U+10FFFD, and a Han character must differ.
TOFU_JS = """
([fontFamily, text]) => {
  const c = document.createElement('canvas');
  c.width = 72; c.height = 72;
  const g = c.getContext('2d', {willReadFrequently: true});
  const draw = ch => {
    g.clearRect(0, 0, c.width, c.height);
    g.font = `56px ${fontFamily}`;
    g.textBaseline = 'top';
    g.fillStyle = '#000';
    g.fillText(ch, 6, 6);
    return Array.from(g.getImageData(0, 0, c.width, c.height).data.filter((_, i) => i % 4 === 3));
  };
  const same = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);
  const inked = a => a.some(v => v > 0);
  const notdef = draw('\\u{10FFFD}');
  const han = [...new Set([...text].filter(ch => /\\p{Script=Han}/u.test(ch)))];
  return {
    han: han.length,
    tofu: han.filter(ch => { const d = draw(ch); return !inked(d) || same(d, notdef); }),
    controlSame: same(draw('\\u{10FFFE}'), notdef),
  };
}
"""


@dataclass
class Visit:
    path: str
    log: NetLog
    wire: int = 0  # bytes transferred (gzip for text, as static hosts serve it)
    raw: int = 0  # the same responses decoded
    html: int = 0  # the page's own HTML, decoded
    requests: int = 0
    probe: dict = field(default_factory=dict)
    phone_overflow: list = field(default_factory=list)  # [scrollWidth, widest elements] when wider than the phone
    phone_labels: list = field(default_factory=list)  # on-screen px height of every chart label at phone width


# ---------------------------------------------------------------------------------------------------------------- fixtures


@pytest.fixture
def ctx(browser):
    """A fresh browser context (empty cache and storage) whose network is guarded; yields (context, log)."""
    context = browser.new_context(viewport=DESKTOP, locale="zh-CN", accept_downloads=True)
    context.set_default_timeout(TIMEOUT_MS)
    log = guard(context)
    yield context, log
    context.close()


def url_of(server, path: str) -> str:
    return server.base_url + path


@pytest.fixture(scope="session")
def visits(browser, server, site) -> list[Visit]:
    """Every page with a cold cache, one after another in one tab: network log, bytes, probe, phone-width overflow."""
    context = browser.new_context(viewport=DESKTOP, locale="zh-CN")
    context.set_default_timeout(TIMEOUT_MS)
    running = guard(context)
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})  # each page is measured as a first visit
    out = []
    for path in site_pages(site):
        running.take()
        page.set_viewport_size(DESKTOP)
        page.goto(url_of(server, path), wait_until="load")
        page.wait_for_load_state("networkidle")  # the search worker fetches its index after load
        log = running.take()
        visit = Visit(path, log)
        sizes = [served_size(site, server.base_url, r.url) for r in log.requests]
        visit.wire = sum(w for w, _ in sizes)
        visit.raw = sum(r for _, r in sizes)
        visit.html = served_size(site, server.base_url, url_of(server, path))[1]
        visit.requests = len(log.requests)
        page.evaluate(REVEAL_JS)
        visit.probe = page.evaluate(PROBE_JS)
        page.set_viewport_size(PHONE)
        page.wait_for_timeout(50)
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE["width"]:
            visit.phone_overflow = [width, page.evaluate(OVERFLOW_JS, PHONE["width"])]
        visit.phone_labels = page.evaluate(LABELS_JS)
        visit.log.console_errors += running.take().console_errors  # errors raised while probing
        out.append(visit)
    context.close()
    return out


# ---------------------------------------------------------------------------------------------------------------- every page


def test_every_page_loads_without_errors_or_outside_requests(visits):
    assert len(visits) >= 20, f"expected the whole site, found {len(visits)} pages"
    problems = {v.path or "/": v.log.problems() for v in visits if v.log.problems()}
    assert not problems, "pages with console errors, failed requests or requests leaving 127.0.0.1:\n" + json.dumps(
        problems, ensure_ascii=False, indent=1
    )


def test_page_weights(visits):
    BUILD.mkdir(exist_ok=True)
    """Cold-cache weight of every page: all its requests (HTML, CSS, JS, the search worker's index, images).

    "transferred" is what a static host that gzips text (GitHub Pages, Netlify, nginx with gzip on) sends; the
    limits apply to it. "decoded" is the same uncompressed, and "html" the page's own document, uncompressed:
    no single page may be heavier than the transfer limit even on a host that does not compress.
    """
    rows = sorted(visits, key=lambda v: -v.wire)
    lines = [
        "Weight of each page on a first visit (cold cache): every request the page makes, including the search index.",
        "transferred = gzip for text types, as static hosts serve it; decoded = uncompressed; html = the page's own HTML.",
        "",
        f"{'page':<28} {'requests':>8} {'transferred KiB':>16} {'decoded KiB':>12} {'html KiB':>9}",
    ]
    lines += [
        f"{(v.path or '/'):<28} {v.requests:>8} {v.wire / 1024:>16.1f} {v.raw / 1024:>12.1f} {v.html / 1024:>9.1f}" for v in rows
    ]
    (BUILD / "page-weights.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    home = next(v for v in visits if v.path == "")
    assert home.wire < HOME_LIMIT, f"home page transfers {home.wire / 1024:.0f} KiB (limit {HOME_LIMIT // 1024} KiB)"
    heavy = {v.path: round(v.wire / 1024) for v in visits if v.wire >= PAGE_LIMIT}
    assert not heavy, f"pages transferring over {PAGE_LIMIT // 1024} KiB (KiB): {heavy}"
    fat = {v.path: round(v.html / 1024) for v in visits if v.html >= PAGE_LIMIT}
    assert not fat, f"pages whose HTML alone is over {PAGE_LIMIT // 1024} KiB uncompressed (KiB): {fat}"


def test_no_page_overflows_a_phone_screen(visits):
    """At 390 px wide, tables and charts scroll inside their own box; the page itself never scrolls sideways."""
    wide = {v.path or "/": v.phone_overflow for v in visits if v.phone_overflow}
    assert not wide, f"pages wider than {PHONE['width']} px ([scrollWidth, first elements past the edge]): {wide}"


LESSON_SKIP = ("reference/", "references/", "glossary/", "validation/", "fill-in/", "exercises/workbook/")
"""Pages that are not lesson pages: reference material, the validation page (where depth goes), the fill-in form."""


def test_chart_labels_stay_readable_on_a_phone(visits):
    """At 390 px, at most 10% of the chart labels on each lesson page are drawn under 8 px tall (charts shrink only to
    the width that keeps their labels readable, then scroll inside their own box: docs/assets/extra.css)."""
    lesson = [v for v in visits if not v.path.startswith(LESSON_SKIP)]
    assert len(lesson) >= 20 and sum(len(v.phone_labels) for v in lesson) > 1000, "label probe found too few labels"
    small = {v.path or "/": (sum(px < 8 for px in v.phone_labels), len(v.phone_labels)) for v in lesson if v.phone_labels}
    bad = {k: f"{n} of {t} under 8 px" for k, (n, t) in small.items() if n > 0.10 * t}
    assert not bad, f"lesson pages whose chart labels are too small at {PHONE['width']} px: {bad}"


def test_math_renders_as_mathml_with_size(visits):
    with_math = [v for v in visits if v.probe["math"]]
    if not with_math:
        pytest.skip("no page has formulas yet")
    empty = {v.path: [m["tex"] for m in v.probe["math"] if min(m["size"]) <= 0] for v in with_math}
    empty = {k: m for k, m in empty.items() if m}
    assert not empty, f"<math> elements with zero size: {empty}"


def test_charts_are_visible_and_drawn(visits):
    with_charts = [v for v in visits if v.probe["charts"]]
    if not with_charts:
        pytest.skip("no page has charts yet")
    bad = {
        v.path: [c for c in v.probe["charts"] if min(c["size"]) < 50 or c["paths"] == 0 or c["texts"] == 0]
        for v in with_charts
    }
    bad = {k: c for k, c in bad.items() if c}
    assert not bad, f"charts that are empty or have no size once their tab is shown: {bad}"


# ---------------------------------------------------------------------------------------------------------------- Chinese


def _platform_fonts(page, selector: str) -> dict[str, int]:
    """The fonts Chromium actually used for the text of the first element matching ``selector`` (CDP)."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    cdp.detach()
    return {f["familyName"]: f["glyphCount"] for f in fonts}


def _assert_no_tofu(page, selector: str) -> None:
    el = page.locator(selector).first
    el.scroll_into_view_if_needed()
    family = el.evaluate("e => getComputedStyle(e).fontFamily")
    text = el.text_content()
    result = page.evaluate(TOFU_JS, [family, text])
    assert result["controlSame"], "tofu check invalid here: two unmapped code points drew differently"
    assert result["han"] > 0, f"no Chinese characters in {selector!r}: {text!r}"
    assert not result["tofu"], f"characters drawn as the missing-glyph box in {selector!r} ({family}): {result['tofu']}"
    fonts = _platform_fonts(page, selector)
    assert any(re.search(r"CJK|Han|Hei|Song|Ming|Kai|SC|TC|JP", name) and n > 0 for name, n in fonts.items()), (
        f"no CJK font used for {selector!r}: {fonts}"
    )


def test_chinese_body_text_has_real_glyphs(ctx, server):
    context, _ = ctx
    page = context.new_page()
    page.goto(url_of(server, ""))
    _assert_no_tofu(page, "article h1")
    _assert_no_tofu(page, "article p")


def test_chinese_chart_text_has_real_glyphs(ctx, server, visits):
    with_charts = [v.path for v in visits if v.probe["charts"]]
    if not with_charts:
        pytest.skip("no page has charts yet")
    context, _ = ctx
    page = context.new_page()
    page.goto(url_of(server, with_charts[0]))
    page.evaluate(REVEAL_JS)
    # The first chart text with a Han character (titles and axis labels are Chinese).
    index = page.evaluate(
        """() => [...document.querySelectorAll('article .ps-chart svg text')].findIndex(t => /\\p{Script=Han}/u.test(t.textContent))"""
    )
    assert index >= 0, f"no Chinese text in the charts of {with_charts[0]}"
    page.evaluate(
        "(i) => document.querySelectorAll('article .ps-chart svg text')[i].setAttribute('data-ps-probe', '')", index
    )
    _assert_no_tofu(page, "[data-ps-probe]")
    BUILD.joinpath("screenshots").mkdir(parents=True, exist_ok=True)
    page.locator(".ps-chart").first.screenshot(path=str(BUILD / "screenshots" / "chart.png"))


# ---------------------------------------------------------------------------------------------------------------- widgets


def _page_with(site: Path, needle: str, prefer: list[str]) -> str | None:
    pages = site_pages(site)
    for p in prefer + pages:
        if p in pages and needle in (site / p / "index.html").read_text(encoding="utf-8"):
            return p
    return None


def test_folded_answers_open_and_close(ctx, server, site):
    path = _page_with(site, "<details", ["self-check/", "exercises/", "mechanics/bubble/"])
    if path is None:
        pytest.skip("no page has folded answers yet")
    context, log = ctx
    page = context.new_page()
    page.goto(url_of(server, path))
    details = page.locator("article details").first
    summary = details.locator("summary").first
    summary.scroll_into_view_if_needed()
    was_open = details.evaluate("d => d.open")
    summary.click()
    page.wait_for_timeout(400)  # Material animates the fold
    assert details.evaluate("d => d.open") != was_open
    if not was_open:
        assert details.locator(":scope > :not(summary)").first.is_visible()
    summary.click()
    page.wait_for_timeout(400)
    assert details.evaluate("d => d.open") == was_open
    assert not log.problems(), log.problems()


def test_content_tabs_switch(ctx, server, site):
    path = _page_with(site, 'class="tabbed-set', ["", "mechanics/bubble/"])
    if path is None:
        pytest.skip("no page has content tabs yet")
    context, _ = ctx
    page = context.new_page()
    page.goto(url_of(server, path))
    tabs = page.locator("article .tabbed-set").first
    labels = tabs.locator(":scope > .tabbed-labels > label")
    blocks = tabs.locator(":scope > .tabbed-content > .tabbed-block")
    assert labels.count() >= 2
    assert blocks.nth(0).is_visible() and not blocks.nth(1).is_visible()
    labels.nth(1).click()
    assert blocks.nth(1).is_visible() and not blocks.nth(0).is_visible()
    labels.nth(0).click()
    assert blocks.nth(0).is_visible() and not blocks.nth(1).is_visible()


@pytest.mark.parametrize(
    ("query", "expected"),
    [("流水线", ["core/pp/", "mechanics/bubble/"]), ("张量并行", ["core/tp/"])],
)
def test_search_finds_chinese_words(ctx, server, query, expected):
    context, log = ctx
    page = context.new_page()
    page.goto(url_of(server, ""))
    box = page.locator("input.md-search__input")
    box.click()
    box.fill(query)
    results = page.locator(".md-search-result__item > a.md-search-result__link")
    results.first.wait_for(state="attached")
    page.wait_for_timeout(200)
    hrefs = results.evaluate_all("els => els.map(a => a.href)")
    found = list(dict.fromkeys(h[len(server.base_url) :].split("#")[0].split("?")[0] for h in hrefs))
    assert any(e in found for e in expected), f"search for {query!r} returned {found}, expected one of {expected}"
    assert not log.problems(), log.problems()


# ---------------------------------------------------------------------------------------------------------------- fill-in

ANSWERS = {
    "matrix": "案例一：DP 可行。\n案例二：FSDP 可行，DP 不可行。\n\n- 案例三：TP 可行（需要 NVLink）",
    "topology": "节点内放 TP，节点间放 DP/PP。",
    "bubble": "p=4, m=8 与 m=32 两种情况。\n## 最重要的未测因素\n（上一行只是正文，看起来像标题）",
    "unmeasured": "stage 不平衡：用 profiler 测每个 stage 的前向和反向时间。",
    "skip": "MoE 的 expert parallel：当前没有 MoE 模型。",
}
FIELDS = list(ANSWERS)


def _field(page, name):
    return page.locator(f"textarea[data-ps-field='{name}']")


def _values(page) -> dict[str, str]:
    return {name: _field(page, name).input_value() for name in FIELDS}


def _type_answers(page):
    for name, text in ANSWERS.items():
        _field(page, name).fill(text)  # fires "input", which saves


def test_fill_in_page_is_labelled(ctx, server):
    context, _ = ctx
    page = context.new_page()
    page.goto(url_of(server, "fill-in/"))
    labels = [page.get_by_label(text, exact=True) for text in
              ["三个案例的选择矩阵", "拓扑变化后的选择", "一个 bubble 计算", "最重要的未测因素", "我认为当前不必深入的策略"]]
    assert [label.get_attribute("data-ps-field") for label in labels] == FIELDS


def test_fill_in_survives_reload_and_browser_restart(pw, server, tmp_path):
    profile = tmp_path / "profile"

    def open_page():
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, args=LAUNCH_ARGS, viewport=DESKTOP, locale="zh-CN"
        )
        context.set_default_timeout(TIMEOUT_MS)
        log = guard(context)
        page = context.pages[0] if context.pages else context.new_page()
        page.goto(url_of(server, "fill-in/"))
        return context, page, log

    context, page, log = open_page()
    assert _values(page) == dict.fromkeys(FIELDS, "")
    _type_answers(page)
    page.reload()
    assert _values(page) == ANSWERS
    keys = page.evaluate("Object.keys(localStorage).filter(k => k.startsWith('parallelsel:fill-in:')).sort()")
    assert keys == sorted(f"parallelsel:fill-in:{n}" for n in FIELDS)
    assert not log.problems(), log.problems()
    context.close()

    context, page, log = open_page()  # a new browser process on the same profile
    assert _values(page) == ANSWERS
    context.close()


def test_fill_in_export_import_and_clear(ctx, server, tmp_path):
    context, log = ctx
    page = context.new_page()
    page.goto(url_of(server, "fill-in/"))
    _type_answers(page)

    with page.expect_download() as info:
        page.get_by_role("button", name="导出为 Markdown").click()
    download = info.value
    assert download.suggested_filename.endswith(".md")
    exported = tmp_path / download.suggested_filename
    download.save_as(exported)
    text = exported.read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings == ["三个案例的选择矩阵", "拓扑变化后的选择", "一个 bubble 计算", "最重要的未测因素", "我认为当前不必深入的策略"]
    for answer in ANSWERS.values():
        for line in answer.splitlines():
            assert line in text

    # Clear asks first: dismissing keeps everything, accepting erases the boxes and the saved copies.
    messages = []
    page.once("dialog", lambda d: (messages.append(d.message), d.dismiss()))
    page.get_by_role("button", name="清空回答", exact=True).click()
    assert messages and _values(page) == ANSWERS
    page.once("dialog", lambda d: d.accept())
    page.get_by_role("button", name="清空回答", exact=True).click()
    assert _values(page) == dict.fromkeys(FIELDS, "")
    page.reload()
    assert _values(page) == dict.fromkeys(FIELDS, "")

    # Import shows what it will change, then restores every answer exactly (including a line that looks like a heading).
    page.locator("input[data-ps-import]").set_input_files(str(exported))
    page.locator(".ps-fillin__preview").get_by_role("button", name="确认导入").click()
    assert _values(page) == ANSWERS
    page.reload()
    assert _values(page) == ANSWERS

    # Importing over different text says so first; cancelling keeps the current text.
    _field(page, "skip").fill("改过的回答")
    page.locator("input[data-ps-import]").set_input_files(str(exported))
    preview = page.locator(".ps-fillin__preview")
    preview.get_by_text("我认为当前不必深入的策略：替换").wait_for()  # the file is read asynchronously
    preview.get_by_role("button", name="取消导入").click()
    assert _field(page, "skip").input_value() == "改过的回答"
    assert not log.problems(), log.problems()


# ---------------------------------------------------------------------------------------------------------------- notebook


def test_notebook_page_shows_outputs_and_offers_the_ipynb(ctx, server):
    context, log = ctx
    page = context.new_page()
    page.goto(url_of(server, "exercises/workbook/"))
    outputs = page.locator(".jp-OutputArea-output")
    assert outputs.count() > 0, "no executed outputs on the notebook page"
    rich = page.locator(".jp-OutputArea-output :is(svg, img, table)")
    assert rich.count() > 0, "no chart, image or table among the notebook outputs"
    link = page.locator("article a[href$='.ipynb']").first
    href = link.get_attribute("href")
    assert href and not href.startswith("/"), href
    response = page.request.get(url_of(server, "exercises/workbook/") + href)
    assert response.status == 200
    notebook = response.json()
    assert notebook["cells"], "the downloadable notebook has no cells"
    assert not log.problems(), log.problems()


# ---------------------------------------------------------------------------------------------------------------- accessibility

A11Y_PAGES = ["", "matrix/", "mechanics/bubble/", "core/pp/", "fill-in/"]


@pytest.mark.parametrize("path", A11Y_PAGES, ids=lambda p: p.strip("/") or "home")
def test_no_serious_accessibility_violations(ctx, server, path):
    from axe_playwright_python.sync_playwright import Axe

    context, _ = ctx
    page = context.new_page()
    page.goto(url_of(server, path))
    page.evaluate(REVEAL_JS)  # one run over everything a reader can open
    page.wait_for_timeout(100)
    found = [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes'][:5]]}"
        for v in Axe().run(page).response["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    assert not found, "\n".join(found)


# ---------------------------------------------------------------------------------------------------------------- screenshots

SHOTS = {"home": "", "matrix": "matrix/", "pipeline-bubble": "mechanics/bubble/", "core-pp": "core/pp/", "fill-in": "fill-in/"}


def test_screenshots(ctx, server):
    """Full-page screenshots for a person to look at (build/screenshots/), desktop and phone width."""
    context, log = ctx
    out = BUILD / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    page = context.new_page()
    for name, path in SHOTS.items():
        page.set_viewport_size(DESKTOP)
        page.goto(url_of(server, path))
        page.screenshot(path=str(out / f"{name}.png"), full_page=True)
        page.set_viewport_size(PHONE)
        page.wait_for_timeout(50)
        page.screenshot(path=str(out / f"{name}-phone.png"), full_page=False)
    assert all((out / f"{n}.png").stat().st_size > 10_000 for n in SHOTS)
    assert not log.problems(), log.problems()
