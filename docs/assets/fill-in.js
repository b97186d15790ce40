/*
 * 学后填写区 (docs/fill-in.md): answers saved in this browser only.
 *
 * - Each <textarea data-ps-field="name"> is saved to localStorage under "parallelsel:fill-in:<name>" as the reader types,
 *   and restored on load. Nothing is sent anywhere.
 * - Export writes a Markdown file: "# <page title>", then one "## <label text>" section per field.
 * - Import reads the same format back (only the known headings are recognised; other text stays inside the answer).
 * - Clear asks with confirm() before erasing.
 *
 * Works on a plain static host (DOMContentLoaded) and with Material's instant navigation (document$), and does nothing on
 * pages without the form.
 */
(function () {
  "use strict";

  var PREFIX = "parallelsel:fill-in:";
  var FILENAME = "parallelsel-fill-in.md";

  function storage() {
    try {
      var s = window.localStorage;
      var probe = PREFIX + "__probe__";
      s.setItem(probe, "1");
      s.removeItem(probe);
      return s;
    } catch (e) {
      return null; // blocked (privacy settings, some file:// setups): the page still works, without saving
    }
  }

  function labelOf(form, area) {
    var label = form.querySelector('label[for="' + area.id + '"]');
    return (label ? label.textContent : area.name).trim();
  }

  function toMarkdown(title, fields) {
    var headings = fields.map(function (f) { return "## " + f.label; });
    var out = ["# " + title, ""];
    fields.forEach(function (f) {
      out.push("## " + f.label, "");
      var body = f.area.value.replace(/\r\n?/g, "\n").replace(/\s+$/, "");
      // A line identical to one of our headings would split the answer on import: escape it.
      body = body.split("\n").map(function (line) {
        return headings.indexOf(line.trim()) >= 0 ? "\\" + line : line;
      }).join("\n");
      if (body) out.push(body, "");
    });
    return out.join("\n");
  }

  /* Returns {label: answer} for the known labels found in the text (null if none was found). */
  function fromMarkdown(text, labels) {
    var lines = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n").split("\n");
    var found = {};
    var current = null;
    var any = false;
    lines.forEach(function (line) {
      var m = /^##[ \t]+(.*?)[ \t#]*$/.exec(line);
      if (m && labels.indexOf(m[1]) >= 0) {
        current = m[1];
        found[current] = [];
        any = true;
        return;
      }
      if (/^#[ \t]/.test(line) && current === null) return; // the file's title
      if (current !== null) {
        var unescaped = /^\\##[ \t]/.test(line) ? line.slice(1) : line;
        found[current].push(unescaped);
      }
    });
    if (!any) return null;
    var result = {};
    Object.keys(found).forEach(function (k) {
      result[k] = found[k].join("\n").replace(/^\s*\n/, "").replace(/\s+$/, "");
    });
    return result;
  }

  function init(form) {
    if (form.dataset.psReady === "1") return;
    form.dataset.psReady = "1";

    var store = storage();
    var status = form.querySelector("[role=status]");
    var fileInput = form.querySelector("input[data-ps-import]");
    var titleEl = document.querySelector(".md-content h1") || document.querySelector("h1");
    var title = titleEl ? titleEl.textContent.replace(/[¶#]\s*$/, "").trim() : document.title;
    var fields = Array.prototype.map.call(form.querySelectorAll("textarea[data-ps-field]"), function (area) {
      return { key: PREFIX + area.dataset.psField, area: area, label: labelOf(form, area) };
    });
    var statusTimer = null;

    function say(message) {
      if (!status) return;
      status.textContent = message;
      clearTimeout(statusTimer);
      statusTimer = setTimeout(function () { status.textContent = ""; }, 4000);
    }

    function save(f) {
      if (!store) return;
      try {
        if (f.area.value) store.setItem(f.key, f.area.value);
        else store.removeItem(f.key);
      } catch (e) {
        say("无法保存到本浏览器（存储已满或被禁止）：请导出为 Markdown 文件。");
      }
    }

    function setAll(values) {
      fields.forEach(function (f) {
        f.area.value = values[f.label] || "";
        save(f);
      });
    }

    if (!store) {
      say("这个浏览器不允许本地保存：内容在刷新后会丢失，请导出为 Markdown 文件。");
    }

    fields.forEach(function (f) {
      if (store) {
        var saved = store.getItem(f.key);
        if (saved !== null) f.area.value = saved;
      }
      f.area.addEventListener("input", function () { save(f); });
    });

    // Another tab of the same site edited an answer: show it here too, unless the reader is typing in that box.
    window.addEventListener("storage", function (event) {
      fields.forEach(function (f) {
        if (event.key === f.key && document.activeElement !== f.area) f.area.value = event.newValue || "";
      });
    });

    form.addEventListener("submit", function (event) { event.preventDefault(); });

    form.querySelector('[data-ps-action="export"]').addEventListener("click", function () {
      var blob = new Blob([toMarkdown(title, fields)], { type: "text/markdown;charset=utf-8" });
      var url = URL.createObjectURL(blob);
      var a = document.createElement("a");
      a.href = url;
      a.download = FILENAME;
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
      say("已导出为 " + FILENAME + "。");
    });

    form.querySelector('[data-ps-action="import"]').addEventListener("click", function () {
      fileInput.value = "";
      fileInput.click();
    });

    fileInput.addEventListener("change", function () {
      var file = fileInput.files && fileInput.files[0];
      if (!file) return;
      var reader = new FileReader();
      reader.onload = function () {
        var parsed = fromMarkdown(String(reader.result), fields.map(function (f) { return f.label; }));
        if (!parsed) {
          say("没有在文件里找到本页的问题标题（以 “## ” 开头），未导入任何内容。");
          return;
        }
        var overwrites = fields.some(function (f) { return f.area.value && f.area.value !== (parsed[f.label] || ""); });
        if (overwrites && !window.confirm("导入会替换当前已填写的内容。继续吗？")) {
          say("已取消导入。");
          return;
        }
        setAll(parsed);
        say("已从 " + file.name + " 导入。");
      };
      reader.onerror = function () { say("无法读取这个文件。"); };
      reader.readAsText(file, "utf-8");
    });

    form.querySelector('[data-ps-action="clear"]').addEventListener("click", function () {
      var empty = fields.every(function (f) { return !f.area.value; });
      if (empty) {
        say("没有需要清空的内容。");
        return;
      }
      if (!window.confirm("清空本页全部回答？清空后不能恢复（可以先导出备份）。")) {
        say("已取消，内容保留。");
        return;
      }
      setAll({});
      say("已清空。");
    });
  }

  function initAll() {
    var forms = document.querySelectorAll("form[data-ps-fillin]");
    Array.prototype.forEach.call(forms, init);
  }

  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(initAll); // Material: fires on first load and after every instant navigation
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", initAll);
  } else {
    initAll();
  }
})();
