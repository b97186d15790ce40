/*
 * The calculator's Web Worker (started by docs/assets/calculator.js): loads Pyodide and the parallelsel wheel from this
 * site, then runs parallelsel.render.calculator.run_json on each form it is sent. All of it off the page's main thread,
 * so a long search never freezes the page; the page cancels a run by terminating this worker.
 *
 * Messages in:  {type: "run", form, assets}          (assets: the absolute URL of assets/calculator/)
 * Messages out: {type: "progress", step, steps, text} while loading (steps 0: no count yet) and computing,
 *               {type: "done", out, load, run}        (out: run_json's object; load/run: seconds),
 *               {type: "unavailable"}                 (this build has no Pyodide),
 *               {type: "failed", message}             (the runtime itself failed: not a refused input).
 */
"use strict";

var runtime = null; // Promise of a ready Pyodide with parallelsel installed

function say(step, steps, text) {
  self.postMessage({ type: "progress", step: step, steps: steps, text: text });
}

function Unavailable() {}

async function load(assets) {
  say(0, 0, "读取资源清单…");
  var manifest = await (await fetch(new URL("manifest.json", assets))).json();
  if (!manifest.pyodide) throw new Unavailable();
  say(0, 0, "下载并启动 Python 运行时（Pyodide " + manifest.pyodide.version + "）…");
  var mod = await import(new URL(manifest.pyodide.module, assets).href);
  var py = await mod.loadPyodide({ indexURL: new URL(manifest.pyodide.index, assets).href });
  say(0, 0, "安装 parallelsel…");
  var wheel = await (await fetch(new URL(manifest.wheel, assets))).arrayBuffer();
  var sitePackages = py.runPython("import site; site.getsitepackages()[0]");
  py.unpackArchive(wheel, "wheel", { extractDir: sitePackages });
  py.runPython("import importlib; importlib.invalidate_caches(); import parallelsel.render.calculator");
  return py;
}

var WHAT = { matrix: "选择矩阵", plan: "方案搜索", memory: "内存分项", done: "整理结果" };

self.onmessage = async function (event) {
  var msg = event.data;
  if (msg.type !== "run") return;
  var started = performance.now();
  try {
    if (!runtime) runtime = load(msg.assets);
    var py = await runtime;
    var loaded = performance.now();
    py.globals.set("_ps_form", JSON.stringify(msg.form));
    py.globals.set("_ps_progress", function (step, steps, what) {
      say(step, steps, "计算中：" + (WHAT[what] || what) + "（" + Math.min(step + 1, steps) + "/" + steps + "）…");
    });
    var out = JSON.parse(py.runPython("parallelsel.render.calculator.run_json(_ps_form, _ps_progress)"));
    self.postMessage({ type: "done", out: out, load: (loaded - started) / 1000,
                       run: (performance.now() - loaded) / 1000 });
  } catch (err) {
    runtime = null;
    if (err instanceof Unavailable) self.postMessage({ type: "unavailable" });
    else self.postMessage({ type: "failed", message: String(err && err.message || err) });
  }
};
