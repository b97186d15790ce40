"""`make bench` section "calculator": the in-browser calculator (docs/matrix/calculator.md) and every page's weight.

Serves a built site on 127.0.0.1 (gzip for text types, as static hosts do; tests/browser_helpers.py), with every
other request aborted, in Debian's Chromium:

* page weights: each page opened with a cold cache, its requests and bytes transferred -- the calculator's runtime
  is loaded only after 运行, so no page's weight includes it;
* the calculator: time from the click on 运行 to the first result (Pyodide download and start, the wheel, the
  computation), split as the page reports it, the bytes transferred for it, and requests that tried to leave
  127.0.0.1; then a second input in the same page (runtime already loaded).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from browser_helpers import CHROMIUM, LAUNCH_ARGS, StaticServer, guard, served_size, site_pages  # noqa: E402

DONE = '#calc-result[data-state="done"], #calc-result[data-state="error"], #calc-result[data-state="unavailable"]'


def _descendants_cpu() -> float:
    """CPU seconds (user + system) used so far by this process's descendants that are alive: the Playwright driver
    and the Chromium it started. Less sensitive to a loaded machine than wall-clock time."""
    stats = {}
    for st in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = st.read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        stats[int(st.parent.name)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    todo, ticks = list(children.get(os.getpid(), [])), 0
    while todo:
        pid = todo.pop()
        ticks += stats[pid][1]
        todo += children.get(pid, [])
    return ticks / os.sysconf("SC_CLK_TCK")


def _kib(n: int) -> str:
    return f"{n / 1024:,.1f} KiB"


def bench_calculator(site: Path | None, rows: list, notes: list) -> None:
    if site is None or not (site / "matrix" / "calculator" / "index.html").is_file():
        rows.append(("calculator", "-", "no built site with the calculator page"))
        return
    if not Path(CHROMIUM).exists():
        rows.append(("calculator", "-", f"{CHROMIUM} not found (scripts/setup.sh installs it)"))
        return
    from playwright.sync_api import sync_playwright

    with StaticServer(site) as server, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            context = browser.new_context(locale="zh-CN")
            log = guard(context)
            page = context.new_page()
            cdp = context.new_cdp_session(page)
            cdp.send("Network.enable")
            cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
            weights = []
            for path in site_pages(site):
                log.take()
                page.goto(server.base_url + path, wait_until="load")
                page.wait_for_load_state("networkidle")
                got = log.take()
                wire = sum(served_size(site, server.base_url, r.url)[0] for r in got.requests)
                weights.append((path or "/", len(got.requests), wire, len(got.blocked)))
            cdp.send("Network.setCacheDisabled", {"cacheDisabled": False})
            rows.append(("page weights (cold cache, transferred)", _kib(sum(w for _, _, w, _ in weights) // len(weights)),
                         f"mean of {len(weights)} pages; table below; off-origin requests: "
                         f"{sum(b for *_, b in weights)}"))
            for path, n, wire, _ in sorted(weights, key=lambda w: -w[2]):
                rows.append((f"  page {path}", _kib(wire), f"{n} requests"))

            page.goto(server.base_url + "matrix/calculator/", wait_until="load")
            page.wait_for_load_state("networkidle")
            log.take()
            started, cpu = time.perf_counter(), _descendants_cpu()
            page.locator("#calc-form").get_by_role("button", name="运行").click()
            page.wait_for_selector(DONE, timeout=600_000)
            first, cpu = time.perf_counter() - started, _descendants_cpu() - cpu
            got = log.take()
            state = page.get_attribute("#calc-result", "data-state")
            wire = sum(served_size(site, server.base_url, r.url)[0] for r in got.requests)
            raw = sum(served_size(site, server.base_url, r.url)[1] for r in got.requests)
            rows.append(("calculator: click 运行 -> first result", f"{first:.1f} s",
                         f"state {state}; Pyodide + wheel load {page.get_attribute('#calc-result', 'data-load-seconds')} s, "
                         f"compute {page.get_attribute('#calc-result', 'data-run-seconds')} s (default form); "
                         f"Chromium used {cpu:.1f} CPU s meanwhile"))
            rows.append(("calculator: bytes for the first result", f"{wire / 2**20:.1f} MiB",
                         f"{len(got.requests)} requests, {raw / 2**20:.1f} MiB decoded; requests off 127.0.0.1: "
                         f"{len(got.blocked)}"))
            page.locator("#calc-form").get_by_role("button", name="状态超单卡").click()
            page.evaluate("document.getElementById('calc-result').removeAttribute('data-state')")
            started = time.perf_counter()
            page.locator("#calc-form").get_by_role("button", name="运行").click()
            page.wait_for_selector(DONE, timeout=600_000)
            again = time.perf_counter() - started
            got = log.take()
            rows.append(("calculator: next input (runtime loaded)", f"{again:.1f} s",
                         f"paper case 状态超单卡; {len(got.requests)} requests"))
            if state != "done":
                notes.append(f"calculator ended in state {state!r}: {page.inner_text('#calc-result')[:200]}")
        finally:
            browser.close()
