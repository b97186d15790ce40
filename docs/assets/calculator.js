/*
 * 计算器 (docs/matrix/calculator.md): the real parallelsel library, run in the reader's browser by Pyodide.
 *
 * Nothing loads until the reader presses 运行. Then a Web Worker (assets/calculator-worker.js) fetches, from this site
 * only (hooks/calculator_assets.py put them there), the Pyodide runtime and the parallelsel wheel, and runs
 * parallelsel.render.calculator.run_json on the form's fields: the parallelsel CLI in-process, so the page and
 * `parallelsel plan --json` / `matrix --json` agree by construction. The worker also turns the CLI's text into HTML
 * (render/calculator.text_html); this script formats nothing itself. The page stays responsive while the worker
 * computes; 取消 terminates the worker (the next run starts a new one).
 *
 * Every number field carries the rule of the CLI flag it becomes (data-rule, from render/calculator.field_rules);
 * what is typed is checked with it before anything runs, and a refusal is written beside the field. The CLI checks
 * it again when it runs; if it still refuses, its message goes beside the field it names.
 *
 * The result goes into #calc-result, with data-state="loading" | "done" | "error" | "invalid" | "cancelled" |
 * "unavailable", the top plan in [data-top-plan] and each strategy's verdict in [data-strategy][data-verdict] (what
 * the browser tests read).
 */
(function () {
  "use strict";

  var form = document.getElementById("calc-form");
  var result = document.getElementById("calc-result");
  if (!form || !result) return;
  var statusEl = document.getElementById("calc-status");
  var progress = document.getElementById("calc-progress");
  var cancel = document.getElementById("calc-cancel");
  var button = form.querySelector("button[type=submit]");
  var assets = new URL(form.getAttribute("data-assets"), document.baseURI);
  var worker = null;
  var running = false;
  var started = 0;
  form.hidden = false; // hidden in the HTML: without JavaScript the page reads as prose (<noscript>) instead

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function status(text, step, steps) {
    statusEl.textContent = text;
    if (step === null) {
      progress.hidden = true;
    } else if (!steps) { // loading: no count of steps to show, an indeterminate bar
      progress.hidden = false;
      progress.removeAttribute("value");
    } else {
      progress.hidden = false;
      progress.max = steps;
      progress.value = step;
    }
  }

  // ---- input rules: the CLI's own (parallelsel.render.cli._integer / _real), with the same bounds ----

  function pythonFloat(t) { // what Python's float() reads (finite forms; inf/nan are refused below anyway)
    return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t) ? Number(t) : NaN;
  }

  function check(input) {
    var rule = JSON.parse(input.getAttribute("data-rule"));
    var text = input.value;
    var t = text.trim().replace(/_/g, "");
    var required = rule.required || (input.closest(".ps-calc-shape") && form.elements.model.value === "custom" &&
                                     ["layers", "hidden", "heads"].indexOf(input.name) >= 0);
    var range = rule.min + " 到 " + rule.max;
    if (t === "") return required ? "必填：" + (rule.kind === "integer" ? range + " 之间的整数" : range + " 之间的数") : "";
    var v = /^[+-]?\d+$/.test(t) ? Number(t) : pythonFloat(t);
    if (rule.kind === "integer") {
      if (!(isFinite(v) && Number.isInteger(v) && v >= rule.min && v <= rule.max)) {
        return "“" + text + "”不是 " + range + " 之间的整数（" + rule.flag + " 的规则）";
      }
    } else if (!(isFinite(v) && v >= rule.min && v <= rule.max)) {
      return "“" + text + "”不是 " + range + " 之间的数（" + rule.flag + " 的规则）";
    }
    return "";
  }

  function mark(input, message) {
    var msg = document.getElementById(input.getAttribute("aria-describedby"));
    if (msg) msg.textContent = message;
    if (message) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
  }

  function ruled() {
    return Array.prototype.filter.call(form.querySelectorAll("input[data-rule]"), function (input) {
      return !input.closest("[hidden]");
    });
  }

  function validate() {
    var bad = [];
    ruled().forEach(function (input) {
      var message = check(input);
      mark(input, message);
      if (message) bad.push(input);
    });
    return bad;
  }

  form.addEventListener("input", function (event) {
    if (event.target.hasAttribute("data-rule")) mark(event.target, check(event.target));
  });

  // ---- the form ----

  function fields() {
    var data = {};
    new FormData(form).forEach(function (value, name) { data[name] = String(value); });
    if (data.model !== "custom") {
      form.querySelectorAll(".ps-calc-shape input, .ps-calc-shape select").forEach(function (input) { delete data[input.name]; });
    }
    return data;
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
        var control = form.elements[name];
        if (!control) return;
        control.value = String(values[name]);
        if (control.hasAttribute("data-rule")) mark(control, check(control));
      });
      syncShape();
    });
  });
  syncShape(); // a reload may restore "custom" into the select

  // ---- results ----

  function section(title, html) {
    result.appendChild(el("h3", {}, title));
    var box = el("div", { "class": "ps-calc-out" });
    box.innerHTML = html; // built by render/calculator.text_html, every text escaped there
    result.appendChild(box);
  }

  function alertText(text, state) {
    result.textContent = "";
    result.appendChild(el("p", { "class": "ps-calc-error", role: "alert" }, text));
    result.setAttribute("data-state", state);
  }

  function show(out) {
    result.textContent = "";
    if (!out.ok) {
      var input = out.field && form.elements[out.field];
      if (input && input.hasAttribute && input.hasAttribute("data-rule")) mark(input, out.error);
      alertText(out.error, "error");
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
    section("选择矩阵", out.html.matrix);
    section("方案搜索", out.html.plan);
    if (out.html.memory.length) {
      section("排名靠前方案的每卡内存分项与步时", out.html.memory.join("\n"));
    }
    var cmd = el("details", { "class": "ps-calc-cmd" });
    cmd.appendChild(el("summary", {}, "同样的结果，用命令行"));
    cmd.appendChild(el("pre", { tabindex: "0" }, out.commands.join("\n")));
    result.appendChild(cmd);
    result.setAttribute("data-state", "done");
  }

  function finish() {
    running = false;
    button.disabled = false;
    cancel.hidden = true;
  }

  function onMessage(event) {
    var msg = event.data;
    if (msg.type === "progress") {
      status(msg.text, msg.step, msg.steps);
      return;
    }
    if (msg.type === "done") {
      show(msg.out);
      // seconds spent loading (0 once the runtime is ready) and computing: read by the browser test and `make bench`
      result.setAttribute("data-load-seconds", msg.load.toFixed(3));
      result.setAttribute("data-run-seconds", msg.run.toFixed(3));
      status("完成，用时 " + ((performance.now() - started) / 1000).toFixed(1) + " 秒", null);
    } else if (msg.type === "unavailable") {
      alertText("这个站点构建时没有安装 Pyodide（需要 npm，见 scripts/setup.sh），计算器无法在浏览器里运行。" +
        "可以在本地安装 parallelsel 后用命令行做同样的计算（见“参考 → 命令行”）。", "unavailable");
      status("", null);
      stopWorker();
    } else {
      alertText("运行失败：" + msg.message, "error");
      status("", null);
      stopWorker();
    }
    finish();
  }

  function stopWorker() {
    if (worker) worker.terminate();
    worker = null;
  }

  function startWorker() {
    worker = new Worker(new URL("../calculator-worker.js", assets), { type: "module" });
    worker.onmessage = onMessage;
    worker.onerror = function (event) {
      event.preventDefault();
      onMessage({ data: { type: "failed", message: event.message || "后台计算进程无法启动" } });
    };
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (running) return;
    var bad = validate();
    if (bad.length) {
      alertText("有 " + bad.length + " 项输入不符合规则，见字段旁的说明；改好后再运行。", "invalid");
      bad[0].focus();
      return;
    }
    running = true;
    button.disabled = true;
    cancel.hidden = false;
    result.textContent = ""; // an earlier result or refusal no longer describes the form
    result.setAttribute("data-state", "loading");
    started = performance.now();
    status("准备中…", 0, 0);
    if (!worker) startWorker();
    worker.postMessage({ type: "run", form: fields(), assets: assets.href });
  });

  cancel.addEventListener("click", function () {
    if (!running) return;
    stopWorker(); // the only way to stop Python mid-search; the next run starts a fresh worker
    alertText("已取消。重新运行时要再启动一次 Python 运行时（浏览器已缓存它的文件）。", "cancelled");
    status("已取消", null);
    finish();
    button.focus();
  });
})();
