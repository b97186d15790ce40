/*
 * 计算器 (docs/matrix/calculator.md): the real parallelsel library, run in the reader's browser by Pyodide.
 *
 * Nothing loads until the reader presses 运行. Then, from this site only (hooks/calculator_assets.py put them there):
 * assets/calculator/manifest.json, the Pyodide runtime (assets/calculator/pyodide/), and the parallelsel wheel, which is
 * unpacked into Pyodide's site-packages (no micropip, no package index). The form's fields go to
 * parallelsel.render.calculator.run_json, which runs the parallelsel CLI in-process; what it prints is shown as it is, so the
 * page and `parallelsel plan --json` / `matrix --json` agree by construction. This script formats nothing itself.
 *
 * The result goes into #calc-result, with data-state="loading" | "done" | "error" | "unavailable", the top plan in
 * [data-top-plan] and each strategy's verdict in [data-strategy][data-verdict] (what the browser test reads).
 */
(function () {
  "use strict";

  var form = document.getElementById("calc-form");
  var result = document.getElementById("calc-result");
  if (!form || !result) return;
  var statusEl = document.getElementById("calc-status");
  var progress = document.getElementById("calc-progress");
  var button = form.querySelector("button[type=submit]");
  var assets = new URL(form.getAttribute("data-assets"), document.baseURI);
  var runtime = null; // Promise of a ready Pyodide with parallelsel installed

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function status(text, step) {
    statusEl.textContent = text;
    if (step === null) {
      progress.hidden = true;
    } else {
      progress.hidden = false;
      progress.value = step;
    }
  }

  function paint() { // let the browser draw the status before a long synchronous step
    return new Promise(function (resolve) { requestAnimationFrame(function () { setTimeout(resolve, 0); }); });
  }

  function Unavailable() {}

  async function load() {
    status("读取资源清单…", 1);
    var manifest = await (await fetch(new URL("manifest.json", assets))).json();
    if (!manifest.pyodide) throw new Unavailable();
    status("下载并启动 Python 运行时（Pyodide " + manifest.pyodide.version + "）…", 2);
    var mod = await import(new URL(manifest.pyodide.module, assets).href);
    var py = await mod.loadPyodide({ indexURL: new URL(manifest.pyodide.index, assets).href });
    status("安装 parallelsel…", 3);
    var wheel = await (await fetch(new URL(manifest.wheel, assets))).arrayBuffer();
    var sitePackages = py.runPython("import site; site.getsitepackages()[0]");
    py.unpackArchive(wheel, "wheel", { extractDir: sitePackages });
    py.runPython("import importlib; importlib.invalidate_caches(); import parallelsel.render.calculator");
    return py;
  }

  function fields() {
    var data = {};
    new FormData(form).forEach(function (value, name) { data[name] = String(value); });
    if (data.model !== "custom") {
      form.querySelectorAll(".ps-calc-shape input").forEach(function (input) { delete data[input.name]; });
    }
    return data;
  }

  function section(title) {
    result.appendChild(el("h3", {}, title));
  }

  function pre(text) {
    var block = el("pre", { "class": "ps-calc-out" });
    block.appendChild(el("code", { tabindex: "0" }, text)); // scrollable: reachable by keyboard
    result.appendChild(block);
  }

  function show(out) {
    result.textContent = "";
    if (!out.ok) {
      result.appendChild(el("p", { "class": "ps-calc-error", role: "alert" }, out.error));
      result.setAttribute("data-state", "error");
      return;
    }
    var top = out.plan.results.length ? out.plan.results[0].plan : "";
    var summary = el("p", { "class": "ps-calc-summary" });
    if (top) {
      summary.appendChild(document.createTextNode("排名第一的方案："));
      summary.appendChild(el("strong", { "data-top-plan": top }, top));
    } else {
      summary.appendChild(el("strong", { "data-top-plan": "" }, "没有能放下的方案"));
      summary.appendChild(document.createTextNode("（下面的选择矩阵给出每种策略差在哪里）"));
    }
    result.appendChild(summary);
    var verdicts = el("ul", { "class": "ps-calc-verdicts" });
    out.matrix.rows.forEach(function (row) {
      verdicts.appendChild(el("li", { "data-strategy": row.strategy, "data-verdict": row.verdict },
        row.strategy + "：" + row.verdict));
    });
    result.appendChild(verdicts);
    section("选择矩阵");
    pre(out.text.matrix);
    section("方案搜索");
    pre(out.text.plan);
    if (out.memory.length) {
      section("排名靠前方案的每卡内存分项与步时");
      out.memory.forEach(function (m) { pre(m.text); });
    }
    var cmd = el("details", { "class": "ps-calc-cmd" });
    cmd.appendChild(el("summary", {}, "同样的结果，用命令行"));
    cmd.appendChild(el("pre", { tabindex: "0" }, out.commands.join("\n")));
    result.appendChild(cmd);
    result.setAttribute("data-state", "done");
  }

  function syncShape() {
    form.querySelector(".ps-calc-shape").hidden = form.elements.model.value !== "custom";
  }

  form.addEventListener("change", function (event) {
    if (event.target.name === "model") syncShape();
  });

  form.querySelectorAll("[data-fill]").forEach(function (b) {
    b.addEventListener("click", function () {
      var values = JSON.parse(b.getAttribute("data-fill"));
      Object.keys(values).forEach(function (name) {
        if (form.elements[name]) form.elements[name].value = String(values[name]);
      });
      syncShape();
    });
  });
  syncShape(); // a reload may restore "custom" into the select

  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    button.disabled = true;
    result.setAttribute("data-state", "loading");
    var started = performance.now();
    try {
      if (!runtime) runtime = load();
      var py = await runtime;
      var loaded = performance.now();
      status("计算中…", 4);
      await paint();
      py.globals.set("_ps_form", JSON.stringify(fields()));
      var out = JSON.parse(py.runPython("parallelsel.render.calculator.run_json(_ps_form)"));
      show(out);
      // seconds spent loading (0 once the runtime is ready) and computing: read by the browser test and `make bench`
      result.setAttribute("data-load-seconds", ((loaded - started) / 1000).toFixed(3));
      result.setAttribute("data-run-seconds", ((performance.now() - loaded) / 1000).toFixed(3));
      status("完成，用时 " + ((performance.now() - started) / 1000).toFixed(1) + " 秒", null);
    } catch (err) {
      runtime = null;
      result.textContent = "";
      if (err instanceof Unavailable) {
        result.appendChild(el("p", { "class": "ps-calc-error", role: "alert" },
          "这个站点构建时没有安装 Pyodide（需要 npm，见 scripts/setup.sh），计算器无法在浏览器里运行。" +
          "可以在本地安装 parallelsel 后用命令行做同样的计算（见“参考 → 命令行”）。"));
        result.setAttribute("data-state", "unavailable");
      } else {
        result.appendChild(el("p", { "class": "ps-calc-error", role: "alert" }, "运行失败：" + err));
        result.setAttribute("data-state", "error");
      }
      status("", null);
    } finally {
      button.disabled = false;
    }
  });
})();
