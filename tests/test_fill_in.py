"""The fill-in page (学后填写区) never loses a note: several tabs, failing storage, unsafe imports, tricky text.

Each test drives Debian's Chromium against the built site (served on 127.0.0.1, every other request aborted), in a
window 720 px high, as the issue's scenarios were tried. Warnings are checked where the reader would see them:
visible, inside the viewport and on top at their centre, not merely present in the DOM. Waits on another tab poll
on a timer (``polling=100``): animation frames, the default, stall in a tab that is not in front.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from browser_helpers import guard

pytestmark = pytest.mark.browser

WINDOW = {"width": 1280, "height": 720}
TIMEOUT_MS = 15_000
PAGE = "fill-in/"
LABELS = {
    "matrix": "三个案例的选择矩阵",
    "topology": "拓扑变化后的选择",
    "bubble": "一个 bubble 计算",
    "unmeasured": "最重要的未测因素",
    "skip": "我认为当前不必深入的策略",
}
FIELDS = list(LABELS)
KEY = "parallelsel:fill-in:"
OTHER_KEY = "parallelsel:fill-in-other:"

# setItem throws QuotaExceededError for this page's keys while window.__psFull is true (a full or blocked storage),
# or for a value longer than window.__psMaxChars (room for small answers only).
FULL_STORAGE_JS = """
(() => {
  const real = Storage.prototype.setItem;
  window.__psFull = false;
  window.__psMaxChars = Infinity;
  Storage.prototype.setItem = function (key, value) {
    const ours = String(key).startsWith('parallelsel:fill-in');
    if (ours && (window.__psFull || String(value).length > window.__psMaxChars)) {
      throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
    }
    return real.call(this, key, value);
  };
})();
"""

# Every write is refused, as with blocked site data. (Refusing localStorage itself also breaks the theme's own
# scripts, which then throw; the fill-in script handles both the same way: its probe write fails.)
NO_STORAGE_JS = """
Storage.prototype.setItem = function () { throw new DOMException('Access is denied for this document.', 'SecurityError'); };
"""

# Text that broke the old export -> import round trip, plus other shapes a heading parser could take for one.
TRICKY = {
    "matrix": "\n".join([
        "##\t三个案例的选择矩阵",
        "##  拓扑变化后的选择",
        "## 一个 bubble 计算 ##",
        "\\## x",
        "   ## 最重要的未测因素",
        "## 我认为当前不必深入的策略",
        "\\\\## two backslashes",
        "#",
        "##",
        "### 三级标题",
        "# 一级标题",
        "\t## tab-indented",
        "    ## four spaces",
        "C:\\path\\to\\file\tand a tab",
        "trailing spaces   ",
    ]),
    "topology": "\n\n  leading blank lines and indentation\n\n\n",
    "bubble": "\t(p-1)/(m+p-1)\t\\\n```\n## inside a fence\n```\n<!-- comment -->\n---\n===",
    "unmeasured": "".join(f"第 {i} 行：stage 时间\t## {i}\\\n" for i in range(2000)),  # ~40 000 characters
    "skip": "## " + "长" * 30_000,
}


# ---------------------------------------------------------------------------------------------------------------- fixtures


@pytest.fixture
def context(browser):
    """A fresh context (own storage) in a 720-px-high window; fails the test on any outside request or JS error."""
    ctx = browser.new_context(viewport=WINDOW, locale="zh-CN", accept_downloads=True)
    ctx.set_default_timeout(TIMEOUT_MS)
    log = guard(ctx)
    yield ctx
    ctx.close()
    assert not log.problems(), log.problems()


def open_page(context, server, init_script: str | None = None):
    page = context.new_page()
    if init_script:
        page.add_init_script(init_script)
    page.goto(server.base_url + PAGE)
    page.wait_for_function("document.querySelector('form[data-ps-fillin]').dataset.psReady === '1'")
    return page


# ---------------------------------------------------------------------------------------------------------------- helpers


def field(page, name):
    return page.locator(f"textarea[data-ps-field='{name}']")


def values(page) -> dict[str, str]:
    return page.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('textarea[data-ps-field]')]"
        ".map(a => [a.dataset.psField, a.value]))"
    )


def stored(page) -> dict[str, str | None]:
    return page.evaluate(f"() => Object.fromEntries({json.dumps(FIELDS)}.map(n => [n, localStorage.getItem('{KEY}' + n)]))")


def stored_others(page, name) -> list[str]:
    return json.loads(page.evaluate(f"localStorage.getItem('{OTHER_KEY}{name}')") or "[]")


PASTE_JS = """
([name, text]) => {
  const area = document.querySelector(`textarea[data-ps-field='${name}']`);
  area.focus();
  area.value = text;
  area.dispatchEvent(new InputEvent('input', {bubbles: true, inputType: 'insertFromPaste'}));
}
"""


def set_values(page, answers: dict[str, str]):
    for name, text in answers.items():
        if len(text) < 2000:
            field(page, name).fill(text)  # fires "input", which saves
        else:  # Playwright's fill types long text far too slowly: paste it, as a reader would
            page.evaluate(PASTE_JS, [name, text])


def panel(page, name):
    """The other-versions box of one question (only while it is shown)."""
    return page.get_by_role("group", name=f"“{LABELS[name]}”的另一个版本")


def alert(page, text: str):
    return page.locator(".ps-fillin__alerts .ps-fillin__alert", has_text=text)


def assert_in_viewport(page, locator):
    """Visible, wholly inside the viewport, and the topmost element at its centre (not covered by anything)."""
    assert locator.is_visible(), "not visible"
    box = locator.bounding_box()
    view = page.viewport_size
    assert box is not None
    assert box["x"] >= 0 and box["y"] >= 0, box
    assert box["x"] + box["width"] <= view["width"] + 0.5 and box["y"] + box["height"] <= view["height"] + 0.5, (box, view)
    on_top = locator.evaluate(
        "(el, [x, y]) => el.contains(document.elementFromPoint(x, y))",
        [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2],
    )
    assert on_top, "covered by another element"


def scroll_to(page, where: str):
    page.evaluate("w => window.scrollTo(0, w === 'top' ? 0 : document.documentElement.scrollHeight)", where)
    page.wait_for_timeout(50)


def upload(page, name: str, data: bytes):
    page.locator("input[data-ps-import]").set_input_files({"name": name, "mimeType": "text/markdown", "buffer": data})


def export(page, tmp_path, button_name="导出为 Markdown", scope=None) -> str:
    with page.expect_download() as info:
        (scope or page).get_by_role("button", name=button_name, exact=True).click()
    target = tmp_path / f"export-{len(list(tmp_path.iterdir()))}.md"
    info.value.save_as(target)
    return target.read_text(encoding="utf-8")


def reload_and_answer(page, accept: bool = True) -> list[str]:
    """Reload; return the types of dialogs shown on the way (a beforeunload prompt is accepted, or dismissed)."""
    seen = []

    def on_dialog(d):
        seen.append(d.type)
        d.accept() if accept else d.dismiss()

    page.on("dialog", on_dialog)
    if accept:
        page.reload()
    else:
        try:
            page.reload(timeout=2000)
        except Exception:  # noqa: BLE001 - staying on the page is the point: the navigation is cancelled
            pass
    page.remove_listener("dialog", on_dialog)
    return seen


# ---------------------------------------------------------------------------------------------------------------- two tabs


def test_tabs_see_each_others_saves_in_fields_not_being_edited(context, server):
    a = open_page(context, server)
    b = open_page(context, server)
    field(a, "topology").fill("A：节点内放 TP。")
    b.wait_for_function("document.querySelector(\"textarea[data-ps-field='topology']\").value !== ''", polling=100)
    assert field(b, "topology").input_value() == "A：节点内放 TP。"
    field(b, "skip").fill("B：暂不深入 MoE。")
    a.wait_for_function("document.querySelector(\"textarea[data-ps-field='skip']\").value !== ''", polling=100)
    expected = {"matrix": "", "topology": "A：节点内放 TP。", "bubble": "", "unmeasured": "", "skip": "B：暂不深入 MoE。"}
    assert values(a) == values(b) == expected
    assert stored(a)["topology"] == "A：节点内放 TP。" and stored(a)["skip"] == "B：暂不深入 MoE。"
    assert a.locator(".ps-fillin__alerts").is_hidden() and b.locator(".ps-fillin__alerts").is_hidden()

    # B's reader then edits on top of A's latest text, which B had received: a plain edit, not a conflict.
    field(a, "topology").fill("A：节点内放 TP，节点间放 DP。")
    a.evaluate("document.activeElement.blur()")  # A's reader is done with the box
    b.wait_for_function("document.querySelector(\"textarea[data-ps-field='topology']\").value.includes('DP')", polling=100)
    field(b, "topology").press("End")
    field(b, "topology").press_sequentially("！")
    a.wait_for_function("document.querySelector(\"textarea[data-ps-field='topology']\").value.endsWith('！')", polling=100)
    assert stored(a)["topology"] == "A：节点内放 TP，节点间放 DP。！"  # B typed on top of A's edit: nothing lost
    assert stored_others(a, "topology") == []


def test_typing_in_a_stale_tab_keeps_both_versions_and_shows_the_conflict(context, server):
    """The issue's first scenario: edit box 1 in tab A, then type one character in tab B (whose box had the focus)."""
    a = open_page(context, server)
    field(a, "matrix").fill("旧回答")
    b = open_page(context, server)
    assert field(b, "matrix").input_value() == "旧回答"
    field(b, "matrix").click()  # B's reader is in the box
    field(a, "matrix").fill("A 改过的回答")
    panel_b = panel(b, "matrix")
    panel_b.wait_for(state="visible")
    assert field(b, "matrix").input_value() == "旧回答", "text replaced under the reader's caret"
    assert panel_b.locator("textarea").input_value() == "A 改过的回答"

    field(b, "matrix").press("End")
    field(b, "matrix").press_sequentially("x")
    a.wait_for_function(f"localStorage.getItem('{KEY}matrix') === '旧回答x'", polling=100)
    assert stored_others(a, "matrix") == ["A 改过的回答"], "A's edit was overwritten"
    for page in (a, b):
        scroll_to(page, "top")
        assert_in_viewport(page, alert(page, "三个案例的选择矩阵"))
    panel(a, "matrix").wait_for(state="visible")
    assert panel(a, "matrix").locator("textarea").input_value() == "旧回答x"

    # After a reload both versions are still there and still shown.
    b.reload()
    assert field(b, "matrix").input_value() == "旧回答x"
    assert panel(b, "matrix").locator("textarea").input_value() == "A 改过的回答"
    assert_in_viewport(b, alert(b, "三个案例的选择矩阵"))

    # The reader keeps both, joined: one answer, no other version left, no warning.
    panel(b, "matrix").get_by_role("button", name="接在框里的回答后面").click()
    assert field(b, "matrix").input_value() == "旧回答x\n\nA 改过的回答"
    assert stored(b)["matrix"] == "旧回答x\n\nA 改过的回答" and stored_others(b, "matrix") == []
    assert panel(b, "matrix").is_hidden() and b.locator(".ps-fillin__alerts").is_hidden()


def test_two_tabs_typing_in_one_box_keep_both_texts_and_show_the_conflict(context, server):
    """Done-when: both tabs edit the same field, keystrokes interleaved; both texts end up recoverable."""
    a = open_page(context, server)
    b = open_page(context, server)
    field(a, "bubble").click()
    field(b, "bubble").click()
    text_a, text_b = "甲：p=4 时 m=16", "乙：p=8 时 m=32"
    for ch_a, ch_b in zip(text_a, text_b, strict=True):
        field(a, "bubble").press_sequentially(ch_a)
        field(b, "bubble").press_sequentially(ch_b)
    assert field(a, "bubble").input_value() == text_a and field(b, "bubble").input_value() == text_b
    a.wait_for_timeout(200)  # let the last storage events arrive
    kept = {stored(a)["bubble"], *stored_others(a, "bubble")}
    assert {text_a, text_b} <= kept, kept
    for page, other in ((a, text_b), (b, text_a)):
        assert_in_viewport(page, alert(page, "一个 bubble 计算"))
        box = panel(page, "bubble")
        box.scroll_into_view_if_needed()
        assert box.is_visible()
        assert other in [t.input_value() for t in box.locator("textarea").all()]

    # A fresh tab shows both as well: one in the box, the other beside it.
    c = open_page(context, server)
    shown = {field(c, "bubble").input_value(), *[t.input_value() for t in panel(c, "bubble").locator("textarea").all()]}
    assert {text_a, text_b} <= shown
    assert_in_viewport(c, alert(c, "一个 bubble 计算"))

    # The reader keeps both in the fresh tab, joined into one answer: the conflict ends there, in the saved copy,
    # and in a tab whose reader has left the box.
    field(a, "matrix").click()
    for _ in range(4):  # one version per click (a race may have kept an earlier state of the typing as well)
        if not panel(c, "bubble").is_visible():
            break
        panel(c, "bubble").get_by_role("button", name="接在框里的回答后面").first.click()
    joined = field(c, "bubble").input_value()
    assert text_a in joined and text_b in joined
    assert stored(c)["bubble"] == joined and stored_others(c, "bubble") == []
    a.wait_for_function("document.querySelector('.ps-fillin__alerts').hidden", polling=100)
    assert field(a, "bubble").input_value() == joined


# ---------------------------------------------------------------------------------------------------------------- failing storage


def test_failed_save_is_announced_in_the_viewport_until_a_save_succeeds(context, server, tmp_path):
    page = open_page(context, server, FULL_STORAGE_JS)
    field(page, "matrix").fill("已经保存的回答")
    page.evaluate("window.__psFull = true")
    field(page, "skip").click()
    field(page, "skip").press_sequentially("存不下的回答")
    warning = alert(page, "没能保存")
    for where in ("top", "bottom"):
        scroll_to(page, where)
        assert_in_viewport(page, warning)
    assert "我认为当前不必深入的策略" in warning.inner_text()
    assert field(page, "skip").input_value() == "存不下的回答"
    page.wait_for_timeout(4500)  # the old status line cleared itself after 4 s; the warning must not
    assert_in_viewport(page, warning)

    # Leaving asks first; dismissing keeps the page and the text.
    assert reload_and_answer(page, accept=False) == ["beforeunload"]
    assert field(page, "skip").input_value() == "存不下的回答"

    # The way out offered in the warning: export, which holds the unsaved text.
    text = export(page, tmp_path, "立即导出为 Markdown", scope=page.locator(".ps-fillin__alerts"))
    assert "## 我认为当前不必深入的策略\n\n存不下的回答\n" in text

    # Storage works again: the next keystroke saves everything and the warning goes away.
    page.evaluate("window.__psFull = false")
    field(page, "skip").press_sequentially("。")
    assert page.locator(".ps-fillin__alerts").is_hidden()
    assert reload_and_answer(page) == []
    assert values(page)["skip"] == "存不下的回答。" and values(page)["matrix"] == "已经保存的回答"


def test_retry_button_saves_once_storage_has_room(context, server):
    page = open_page(context, server, FULL_STORAGE_JS)
    page.evaluate("window.__psFull = true")
    field(page, "topology").fill("一段回答")
    assert_in_viewport(page, alert(page, "没能保存"))
    page.evaluate("window.__psFull = false")
    page.locator(".ps-fillin__alerts").get_by_role("button", name="重试保存").click()
    assert page.locator(".ps-fillin__alerts").is_hidden()
    assert stored(page)["topology"] == "一段回答"


def test_storage_unavailable_is_announced_at_once_and_export_still_works(context, server, tmp_path):
    page = open_page(context, server, NO_STORAGE_JS)
    warning = alert(page, "不允许本站在本地保存")
    assert_in_viewport(page, warning)  # before anything was typed
    field(page, "unmeasured").click()
    field(page, "unmeasured").press_sequentially("只在这个页面里的回答")
    scroll_to(page, "bottom")
    assert_in_viewport(page, warning)
    text = export(page, tmp_path)
    assert "## 最重要的未测因素\n\n只在这个页面里的回答\n" in text
    field(page, "unmeasured").press_sequentially("，再补一句")  # typed after the export: not in any file
    assert reload_and_answer(page, accept=False) == ["beforeunload"]
    assert field(page, "unmeasured").input_value() == "只在这个页面里的回答，再补一句"


# ---------------------------------------------------------------------------------------------------------------- import


BEFORE = {
    "matrix": "案例一：DP 可行。",
    "topology": "节点内放 TP。",
    "bubble": "p=4, m=8。",
    "unmeasured": "stage 不平衡。",
    "skip": "MoE。",
}


def assert_refused(page, name: str, why: str):
    warning = alert(page, f"没有导入 {name}")
    warning.wait_for(state="visible")
    assert why in warning.inner_text() and "本页回答没有改变" in warning.inner_text()
    assert_in_viewport(page, warning)
    assert page.locator(".ps-fillin__preview").is_hidden()
    assert values(page) == BEFORE
    page.reload()
    assert values(page) == BEFORE


@pytest.mark.parametrize(
    ("name", "data", "why"),
    [
        ("huge.md", ("## 一个 bubble 计算\n\n" + "x" * 6_000_000).encode(), "超过导入上限"),
        ("empty.md", b"", "文件是空的"),
        ("blank.md", b" \n\n\t\n", "只有空白"),
        ("picture.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe", "不是 UTF-8 文本"),
        ("notes.md", "# 我的笔记\n\n## 别的标题\n\n内容\n".encode(), "没有本页的问题标题"),
        ("twice.md", "## 一个 bubble 计算\n\n第一段\n\n## 一个 bubble 计算\n\n第二段\n".encode(), "出现了不止一次"),
    ],
    ids=["oversized", "empty", "blank", "binary", "no-known-heading", "repeated-heading"],
)
def test_bad_files_change_nothing_and_say_why(context, server, name, data, why):
    page = open_page(context, server)
    set_values(page, BEFORE)
    upload(page, name, data)
    assert_refused(page, name, why)
    assert page.locator("#ps-fillin-status").inner_text() == ""  # no success message


def test_import_previews_changes_and_keeps_fields_absent_from_the_file(context, server):
    """The issue's case: a file holding only "## 一个 bubble 计算" used to erase the other four answers."""
    page = open_page(context, server)
    set_values(page, BEFORE)
    upload(page, "one.md", "## 一个 bubble 计算\n\np=8, m=32：bubble 变小。\n\n## 我的额外笔记\n\n不属于本页\n".encode())
    preview = page.locator(".ps-fillin__preview")
    preview.wait_for(state="visible")
    assert_in_viewport(page, preview.get_by_role("button", name="确认导入"))
    items = preview.locator("li").all_inner_texts()
    assert items[FIELDS.index("bubble")].startswith("一个 bubble 计算：替换")
    assert [i for n, i in enumerate(items) if n != FIELDS.index("bubble")] == [
        f"{LABELS[n]}：保留（文件里没有这一题）" for n in FIELDS if n != "bubble"
    ]
    assert "“我的额外笔记”" in preview.inner_text()  # the unknown heading is named
    assert values(page) == BEFORE, "changed before the reader confirmed"

    # Cancel changes nothing.
    preview.get_by_role("button", name="取消导入").click()
    assert preview.is_hidden() and values(page) == BEFORE

    upload(page, "one.md", "## 一个 bubble 计算\n\np=8, m=32：bubble 变小。\n".encode())
    preview.get_by_role("button", name="确认导入").click()
    after = dict(BEFORE, bubble="p=8, m=32：bubble 变小。")
    assert values(page) == after
    assert "已从 one.md 导入并保存" in page.locator("#ps-fillin-status").inner_text()
    page.reload()
    assert values(page) == after


def test_import_that_cannot_be_stored_is_rolled_back_and_not_reported_as_done(context, server):
    page = open_page(context, server, FULL_STORAGE_JS)
    set_values(page, BEFORE)
    # The first four answers fit, the last does not: the four already stored must be put back.
    new = "".join(f"## {LABELS[n]}\n\n新的{LABELS[n]}\n\n" for n in FIELDS[:-1]) + f"## {LABELS['skip']}\n\n{'长' * 5000}\n"
    upload(page, "all.md", new.encode())
    page.evaluate("window.__psMaxChars = 1000")
    page.locator(".ps-fillin__preview").get_by_role("button", name="确认导入").click()
    warning = alert(page, "没有导入 all.md")
    assert "放不下" in warning.inner_text()
    assert_in_viewport(page, warning)
    assert "导入并保存" not in page.locator("#ps-fillin-status").inner_text()
    assert values(page) == BEFORE and stored(page) == BEFORE
    page.reload()
    assert values(page) == BEFORE


# ---------------------------------------------------------------------------------------------------------------- round trip


def test_export_then_import_gives_back_every_answer_exactly(context, server, tmp_path):
    page = open_page(context, server)
    set_values(page, TRICKY)
    assert values(page) == TRICKY
    text = export(page, tmp_path)

    # An independent CommonMark parser sees exactly one level-2 heading per question and nothing else as a heading.
    # (ATX headings, the only kind the importer reads; a "---" under a line is left as Markdown has it.)
    tokens = MarkdownIt("commonmark").parse(text)
    headings = [(t.tag, tokens[i + 1].content) for i, t in enumerate(tokens) if t.type == "heading_open" and "#" in t.markup]
    assert headings == [("h1", "学后填写区")] + [("h2", label) for label in LABELS.values()]

    page.once("dialog", lambda d: d.accept())
    page.get_by_role("button", name="清空回答", exact=True).click()
    assert values(page) == dict.fromkeys(FIELDS, "")
    upload(page, "export.md", text.encode("utf-8"))
    page.locator(".ps-fillin__preview").get_by_role("button", name="确认导入").click()
    assert values(page) == TRICKY
    page.reload()
    assert values(page) == TRICKY
    assert export(page, tmp_path) == text  # and the second export is byte-identical to the first


def test_hand_written_headings_are_recognised(context, server):
    """Headings written by hand in any CommonMark form are read as the questions (and the others kept)."""
    page = open_page(context, server)
    set_values(page, BEFORE)
    text = (
        "# 我的笔记\n\n"
        "##\t三个案例的选择矩阵\n新矩阵\n"
        "##  拓扑变化后的选择\n\n新拓扑\n\n\n"
        "   ## 一个 bubble 计算 ##\n\n新 bubble\n"
        "## 一个  bubble 计算（另一个版本）\n\n草稿\n"
    )
    upload(page, "hand.md", text.encode())
    page.locator(".ps-fillin__preview").get_by_role("button", name="确认导入").click()
    assert values(page) == dict(BEFORE, matrix="新矩阵", topology="新拓扑\n", bubble="新 bubble")
    assert stored_others(page, "bubble") == ["草稿"]
    assert panel(page, "bubble").locator("textarea").input_value() == "草稿"


# ---------------------------------------------------------------------------------------------------------------- accessibility


def test_warnings_conflicts_and_preview_have_no_serious_accessibility_violations(context, server):
    from axe_playwright_python.sync_playwright import Axe

    page = open_page(context, server, FULL_STORAGE_JS)
    other = open_page(context, server)
    field(page, "matrix").click()
    field(other, "matrix").fill("另一个标签页的回答")
    panel(page, "matrix").wait_for(state="visible")
    page.evaluate("window.__psFull = true")
    field(page, "skip").fill("存不下")
    upload(page, "one.md", "## 一个 bubble 计算\n\n新的\n".encode())
    page.locator(".ps-fillin__preview").wait_for(state="visible")
    assert alert(page, "没能保存").is_visible() and alert(page, "另一个标签页").is_visible()
    found = [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes'][:5]]}"
        for v in Axe().run(page).response["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    assert not found, "\n".join(found)
    page.evaluate("window.__psFull = false")
    field(page, "skip").fill("存得下")  # leave nothing unsaved, so closing does not prompt


# ---------------------------------------------------------------------------------------------------------------- storage full at load


def test_full_storage_at_load_still_shows_saved_answers_names_the_cause_and_exports_them(context, server, tmp_path):
    """Issue 33: with the site's storage already full when the page loads, every saved answer showed as an empty box,
    the alert blamed the browser for not allowing storage, and an export then held none of the answers."""
    page = open_page(context, server, FULL_STORAGE_JS)
    set_values(page, {"matrix": "已经保存的回答", "bubble": "p=4, m=8"})
    page.add_init_script("window.__psFull = true")  # runs after FULL_STORAGE_JS on every later load
    page.reload()
    page.wait_for_function("document.querySelector('form[data-ps-fillin]').dataset.psReady === '1'")
    assert values(page)["matrix"] == "已经保存的回答" and values(page)["bubble"] == "p=4, m=8"
    warning = page.locator(".ps-fillin__alerts .ps-fillin__alert")
    assert_in_viewport(page, warning)
    assert "已满" in warning.inner_text() and "不允许" not in warning.inner_text()
    text = export(page, tmp_path)
    assert "## 三个案例的选择矩阵\n\n已经保存的回答\n" in text and "## 一个 bubble 计算\n\np=4, m=8\n" in text
    field(page, "skip").fill("存不下")
    unsaved = alert(page, "没能保存")
    assert "已满" in unsaved.inner_text() and "我认为当前不必深入的策略" in unsaved.inner_text()


def test_blocked_storage_names_that_cause_not_a_full_one(context, server):
    page = open_page(context, server, NO_STORAGE_JS)
    warning = page.locator(".ps-fillin__alerts .ps-fillin__alert")
    assert_in_viewport(page, warning)
    assert "不允许本站在本地保存" in warning.inner_text() and "已满" not in warning.inner_text()


# ---------------------------------------------------------------------------------------------------------------- earlier formats

EXPORTERS = (Path(__file__).parent / "fixtures" / "fill_in_exporters.js").read_text(encoding="utf-8")

# Answers whose lines each format had to protect: exact labels, indented labels, a literal backslash before "##",
# headings that are not questions, blank lines at both ends.
OLD_ANSWERS = {
    "matrix": "\n".join(["## 拓扑变化后的选择", "   ## 最重要的未测因素", "\\## x", "\\\\## two backslashes",
                         "## 别的标题", "### 三级", "# 一级", "C:\\path"]),
    "topology": "\n\n  leading blank lines and indentation",
    "bubble": "(p-1)/(m+p-1)\n\n## 一个 bubble 计算 ##\n末行",
    "unmeasured": "",
    "skip": "MoE\t\n不必深入   \n\n",
}


@pytest.mark.parametrize("fmt", ["first", "intro"])
def test_files_written_by_every_earlier_exporter_import_exactly(context, server, fmt):
    """Each earlier exporter (tests/fixtures/fill_in_exporters.js, copied from the history) writes a file of the same
    answers; today's importer gives every answer back as that file holds it. The first format trimmed trailing
    blanks of an answer when it wrote the file, so those are the only thing not given back."""
    page = open_page(context, server, EXPORTERS)
    set_values(page, OLD_ANSWERS)
    text = page.evaluate(f"window.__psExporters[{fmt!r}]()")
    expected = {k: v.rstrip() for k, v in OLD_ANSWERS.items()} if fmt == "first" else dict(OLD_ANSWERS)
    if fmt == "first":
        assert "\\   ## 最重要的未测因素" in text and "\n\\## x\n" in text  # what that exporter wrote: the old shape
    page.once("dialog", lambda d: d.accept())
    page.get_by_role("button", name="清空回答", exact=True).click()
    upload(page, f"{fmt}.md", text.encode("utf-8"))
    page.locator(".ps-fillin__preview").get_by_role("button", name="确认导入").click()
    assert values(page) == expected
    page.reload()
    assert values(page) == expected
