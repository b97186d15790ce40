"""The calculator page in Chromium, offline: Pyodide and parallelsel from the built site only, results equal the CLI's.

The built site is served on 127.0.0.1 and every other request is aborted (and recorded). Three inputs -- a preset
(the paper case "状态超单卡", filled by its button), a custom shape and a case where nothing fits -- are run one after
another in the same page; the top plan and the four verdicts the page shows must equal ``parallelsel plan --json`` /
``matrix --json`` for the same flags, run as a subprocess. Timings are printed (``make bench`` reports them); no
timing is asserted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from browser_helpers import StaticServer, guard, served_size

pytestmark = pytest.mark.browser

CLI = Path(sys.executable).with_name("parallelsel")
PAGE = "matrix/calculator/"
DONE = '#calc-result[data-state="done"], #calc-result[data-state="error"], #calc-result[data-state="unavailable"]'
FIRST_RUN_MS = 300_000  # a ceiling against hangs only (the machine is shared); the figure itself goes to make bench

# (how to fill the form, the same inputs as CLI flags written out by hand)
INPUTS = [
    ("preset", {"scenario": "状态超单卡"},
     ["--model", "llama2-70b", "--device", "a100-80gb", "--nodes", "4", "--gpus-per-node", "8", "--global-batch",
      "1024", "--seq-len", "4096", "--intra", "nvlink3", "--inter", "ib-hdr", "--stack", "megatron-core"]),
    # (the custom shape's architecture select is left on llama: the preset case after it must not send it)
    ("custom", {"model": "custom", "layers": "4", "hidden": "16384", "heads": "128", "architecture": "llama",
                "device": "a100-40gb", "nodes": "1", "gpus_per_node": "8", "global_batch": "64", "seq_len": "2048",
                "intra": "nvlink3"},
     ["--layers", "4", "--hidden", "16384", "--heads", "128", "--architecture", "llama", "--device", "a100-40gb",
      "--nodes", "1", "--gpus-per-node", "8", "--global-batch", "64", "--seq-len", "2048", "--intra", "nvlink3"]),
    ("impossible", {"model": "llama3-405b", "device": "rtx4090-24gb", "nodes": "1", "gpus_per_node": "8",
                    "global_batch": "8", "seq_len": "", "intra": "", "inter": ""},
     ["--model", "llama3-405b", "--device", "rtx4090-24gb", "--nodes", "1", "--gpus-per-node", "8",
      "--global-batch", "8"]),
]


def cli_json(command: str, flags: list[str]) -> dict:
    proc = subprocess.run([str(CLI), command, *flags, "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def site(request) -> Path:
    existing = os.environ.get("PARALLELSEL_SITE_DIR")
    site = Path(existing) if existing else request.getfixturevalue("built_site")
    manifest = json.loads((site / "assets" / "calculator" / "manifest.json").read_text(encoding="utf-8"))
    if manifest["pyodide"] is None:
        if shutil.which("npm") is None:
            pytest.skip("npm is not installed, so this build has no Pyodide (the page says so)")
        pytest.fail("npm is available but the build has no Pyodide: run scripts/setup.sh (npm ci)", pytrace=False)
    return site


@pytest.fixture(scope="module")
def page_and_log(site, browser):
    # The session's one Playwright driver and browser (tests/conftest.py): a second sync driver in the same
    # process is refused by Playwright.
    with StaticServer(site) as server:
        context = browser.new_context(locale="zh-CN")
        context.set_default_timeout(60_000)
        log = guard(context)
        page = context.new_page()
        page.goto(server.base_url + PAGE, wait_until="load")
        page.wait_for_load_state("networkidle")
        yield page, log, server, site
        context.close()


def fill(page, how: dict) -> None:
    form = page.locator("#calc-form")
    if "scenario" in how:
        form.get_by_role("button", name=how["scenario"]).click()
        return
    for name, value in how.items():
        control = form.locator(f'[name="{name}"]')
        if control.evaluate("e => e.tagName") == "SELECT":
            control.select_option(value)
        else:
            control.fill(value)


def run(page) -> None:
    page.evaluate("document.getElementById('calc-result').removeAttribute('data-state')")
    page.locator("#calc-form").get_by_role("button", name="运行").click()
    page.wait_for_selector(DONE, timeout=FIRST_RUN_MS)


@pytest.fixture(scope="module")
def runs(page_and_log):
    page, log, server, site = page_and_log
    before = log.take()
    assert not [r.url for r in before.requests if "/assets/calculator/" in r.url], "Pyodide or the wheel loaded before 运行"
    out = {}
    for name, how, flags in INPUTS:
        fill(page, how)
        run(page)
        net = log.take()
        shown = {
            "state": page.get_attribute("#calc-result", "data-state"),
            "error": page.locator("#calc-result .ps-calc-error").all_inner_texts(),
            "top": page.get_attribute("#calc-result [data-top-plan]", "data-top-plan"),
            "verdicts": [(li.get_attribute("data-strategy"), li.get_attribute("data-verdict"))
                         for li in page.locator("#calc-result [data-verdict]").all()],
            "text": page.inner_text("#calc-result"),
            "html": page.inner_html("#calc-result"),
            "tables": page.locator("#calc-result table").count(),
        }
        wire = sum(served_size(site, server.base_url, r.url)[0] for r in net.requests)
        out[name] = (shown, flags, net, wire)
        print(f"calculator {name}: {len(net.requests)} requests, {wire / 2**20:.1f} MiB transferred "
              f"(load {page.get_attribute('#calc-result', 'data-load-seconds')} s, "
              f"compute {page.get_attribute('#calc-result', 'data-run-seconds')} s)")
    return out


@pytest.mark.parametrize("name", [n for n, _, _ in INPUTS])
def test_shows_what_the_cli_prints(runs, name):
    shown, flags, net, _ = runs[name]
    assert shown["state"] == "done", shown["error"]
    plan, matrix = cli_json("plan", flags), cli_json("matrix", flags)
    assert shown["top"] == (plan["results"][0]["plan"] if plan["results"] else "")
    assert shown["verdicts"] == [(r["strategy"], r["verdict"]) for r in matrix["rows"]]
    page_text = " ".join(shown["text"].split())
    for row in matrix["rows"]:  # the reasons are on the page too (the matrix text)
        for reason in row["reasons"]:
            text = reason["text"] if isinstance(reason, dict) else reason
            assert " ".join(text.split()) in page_text, text


def test_impossible_case_says_nothing_fits(runs):
    shown = runs["impossible"][0]
    assert shown["top"] == "" and {v for _, v in shown["verdicts"]} == {"不可行"}
    assert "没有能放下的方案" in shown["text"]


def test_offline_only_local_requests(runs):
    for name, (_, _, net, _) in runs.items():
        assert not net.blocked, f"{name}: requests off 127.0.0.1: {net.blocked}"
        assert not net.failed and not net.console_errors, (name, net.failed, net.console_errors)
    first = runs["preset"][2]
    assert any(r.url.endswith("pyodide.asm.wasm") for r in first.requests)
    assert any(r.url.endswith(".whl") for r in first.requests)
    later = [r.url for name in ("custom", "impossible") for r in runs[name][2].requests]
    assert not [u for u in later if "/assets/calculator/" in u], f"runtime fetched again: {later}"


def test_no_serious_accessibility_violations_with_results_shown(runs, page_and_log):
    from axe_playwright_python.sync_playwright import Axe

    page = page_and_log[0]
    found = [f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes'][:5]]}"
             for v in Axe().run(page).response["violations"] if v["impact"] in ("serious", "critical")]
    assert not found, "\n".join(found)


def test_a_build_without_pyodide_says_so(runs, page_and_log):
    page, log, server, site = page_and_log
    other = page.context.new_page()
    wheel = json.loads((site / "assets" / "calculator" / "manifest.json").read_text(encoding="utf-8"))["wheel"]
    other.route("**/assets/calculator/manifest.json",
                lambda route: route.fulfill(status=200, content_type="application/json",
                                            body=json.dumps({"pyodide": None, "wheel": wheel})))
    other.goto(server.base_url + PAGE, wait_until="load")
    other.locator("#calc-form").get_by_role("button", name="运行").click()
    other.wait_for_selector(DONE)
    assert other.get_attribute("#calc-result", "data-state") == "unavailable"
    assert "Pyodide" in other.inner_text("#calc-result [role=alert]")
    other.close()


@pytest.mark.parametrize("name", [n for n, _, _ in INPUTS])
def test_results_are_html_tables_in_the_sites_look_not_markdown(runs, name):
    shown = runs[name][0]
    assert shown["tables"] >= 2, shown["html"][:2000]
    for raw in ("|---", "| ---", "| :---", "|:--", "---: |"):
        assert raw not in shown["html"], raw
    assert 'class="md-typeset__table"' in shown["html"]  # Material's own table wrapper: the site's table look


# What the CLI's integer rule (render/cli._integer) refuses and accepts; the page must say the same before running.
TYPED = ["4-", "1e", "--2", "8e+", "", " ", "0", "-1", "2.5", "nan", "inf", "1e309", "0x10", "4", " 4 ", "1e3", "1_000",
         "+8", "4.0", "1048576", "1048577"]


@pytest.fixture
def fresh(page_and_log):
    page, log, server, site = page_and_log
    other = page.context.new_page()
    other.console = []  # every console message but debug/info: the page must print no warning and no error
    other.on("console", lambda m: m.type not in ("debug", "info", "log") and other.console.append(f"{m.type}: {m.text}"))
    other.goto(server.base_url + PAGE, wait_until="load")
    yield other
    other.close()


def test_fields_are_checked_with_the_cli_rule_and_refusals_are_written_beside_them(fresh):
    from parallelsel.render.calculator import field_rules
    from parallelsel.render.cli import _integer

    rule = field_rules()["nodes"]
    python = _integer(rule["min"], rule["max"])
    page = fresh
    page.locator("#calc-nodes").fill("4")
    for typed in TYPED:
        page.locator("#calc-nodes").fill(typed)
        message = page.inner_text("#calc-nodes-msg")
        try:
            python(typed)
            cli_ok = True
        except Exception:  # noqa: BLE001 - argparse's ArgumentTypeError: the CLI refuses it
            cli_ok = False
        required = not typed.strip()  # the field is required: empty is refused on the page, never defaulted
        assert (message == "") == (cli_ok and not required), (typed, message)
        assert (page.get_attribute("#calc-nodes", "aria-invalid") == "true") == bool(message)


def test_typed_non_number_in_nodes_is_refused_with_a_message_and_nothing_runs(fresh):
    page = fresh
    page.locator("#calc-nodes").fill("4-")
    page.locator("#calc-form").get_by_role("button", name="运行").click()
    page.wait_for_selector('#calc-result[data-state="invalid"]')
    message = page.inner_text("#calc-nodes-msg")
    assert "4-" in message and "整数" in message and "1048576" in message
    assert page.evaluate("document.activeElement.id") == "calc-nodes"
    assert "见字段旁的说明" in page.inner_text("#calc-result")
    assert page.is_hidden("#calc-cancel")
    assert page.console == []  # the old number boxes warned twice that "None" cannot be parsed


def test_form_has_no_none_values_and_a_prose_fallback_without_javascript(site):
    html = (site / PAGE / "index.html").read_text(encoding="utf-8")
    assert 'value="None"' not in html
    fallback = html.split("<noscript>", 1)[1].split("</noscript>", 1)[0]
    assert "](" not in fallback and 'href="../../reference/cli/"' in fallback and "parallelsel plan" in fallback
    assert '<form id="calc-form"' in html and " hidden>" in html.split('<form id="calc-form"', 1)[1].split("\n", 1)[0]


CLICK_LATENCY_JS = """
() => { window.__clicks = []; document.addEventListener('click', e => window.__clicks.push(performance.now() - e.timeStamp)); }
"""


def _click(page) -> None:
    """A real mouse click on the page's heading; waits until the page's click handler has run.

    The handler records ``performance.now() - event.timeStamp``: how long the click waited for the page's main
    thread. A page busy computing (the old calculator ran the search on it) answers only when the search ends."""
    n = page.evaluate("window.__clicks.length")
    box = page.locator("h1").bounding_box()
    page.mouse.click(box["x"] + 5, box["y"] + box["height"] / 2)
    page.wait_for_function(f"window.__clicks.length > {n}", polling=10)


def test_page_answers_clicks_during_a_long_run_and_cancel_stops_it(fresh):
    page = fresh
    page.evaluate(CLICK_LATENCY_JS)
    # 40,320 GPUs (a count with many divisors) and a 64K context (CP degrees too): about 6 s of search natively.
    page.locator('#calc-form [name="model"]').select_option("llama3-70b")
    page.locator("#calc-nodes").fill("5040")
    page.locator("#calc-global_batch").fill("40320")
    page.locator("#calc-seq_len").fill("65536")
    page.locator("#calc-form").get_by_role("button", name="运行").click()
    assert page.is_visible("#calc-cancel")
    for _ in range(3):  # while the runtime loads
        page.wait_for_timeout(300)
        _click(page)
    page.wait_for_function("document.getElementById('calc-status').textContent.includes('计算中')", timeout=FIRST_RUN_MS)
    for _ in range(3):  # while the search runs
        _click(page)
        page.wait_for_timeout(200)
    assert page.get_attribute("#calc-result", "data-state") == "loading", "the run ended before it could be probed"
    waited = page.evaluate("window.__clicks")
    print("clicks waited (ms):", [round(w) for w in waited])
    assert len(waited) >= 6 and max(waited) < 200  # the six probes (and the click on 运行 itself)

    page.locator("#calc-cancel").click()
    page.wait_for_selector('#calc-result[data-state="cancelled"]', timeout=2000)
    assert page.is_hidden("#calc-cancel") and page.is_hidden("#calc-progress")
    assert page.is_enabled("#calc-form button[type=submit]")
    page.wait_for_timeout(500)
    assert page.get_attribute("#calc-result", "data-state") == "cancelled"  # no late result from the stopped worker

    # The next run starts a fresh worker and finishes.
    page.locator('#calc-form [name="model"]').select_option("llama2-7b")
    page.locator("#calc-nodes").fill("1")
    page.locator("#calc-global_batch").fill("64")
    page.locator("#calc-seq_len").fill("")
    run(page)
    assert page.get_attribute("#calc-result", "data-state") == "done"
    assert page.console == []
