/*
 * 学后填写区 (docs/fill-in.md): the reader's answers, kept in this browser only. Nothing is sent anywhere.
 *
 * Storage (localStorage of this site):
 * - "parallelsel:fill-in:<name>": the answer of <textarea data-ps-field="name">, plain text (absent when empty).
 * - "parallelsel:fill-in-other:<name>": JSON list of other versions of that answer, kept when two tabs changed it
 *   without seeing each other's text. They are shown under the field until the reader picks one.
 *
 * Rules:
 * - Every keystroke saves. A save first reads what is stored: if it changed since this tab last saw it (another tab),
 *   that text is kept as an "other version" before ours is written, so nothing is overwritten unseen.
 * - Another tab's save (the "storage" event) updates a field here unless the reader is editing it (focused, page
 *   visible) or it holds unsaved text; then the newer text is shown beside the field instead.
 * - A failed save leaves the text in the field and shows an alert (fixed in the viewport) until a save succeeds;
 *   leaving the page with unsaved text asks first. Without storage the page says so at once; export still works.
 *   Storage that can be read but not written (full at load) still shows every saved answer; the alert names the cause
 *   the browser gave: full (QuotaExceededError) or not allowed (anything else).
 * - Export: "# title", then "## <label>", a blank line, the answer, a blank line, per field. A line of an answer that
 *   starts with optional blanks, backslashes and "#" gets one more backslash after its blanks, so no answer line can
 *   read as a heading; import removes exactly that backslash. Export -> import gives every answer back exactly.
 *   Files of the first export format (no intro line; see isFirstFormat) are read by that format's own rules.
 * - Import shows what it would change (replaced / filled / kept / unknown headings) and changes nothing until the
 *   reader confirms; fields absent or empty in the file are kept; bad files change nothing; success is reported only
 *   after everything was stored (a partial failure is rolled back).
 */
(function () {
  "use strict";

  var PREFIX = "parallelsel:fill-in:";
  var OTHER_PREFIX = "parallelsel:fill-in-other:";
  var FILENAME = "parallelsel-fill-in.md";
  var MAX_IMPORT_BYTES = 2 * 1024 * 1024;
  var OTHER_SUFFIX = "（另一个版本）";
  var INTRO = "导出自 parallelsel 的学后填写区。每个二级标题是一个问题，下面是回答；" +
    "回答里以 # 开头的行前面多加了一个反斜杠，导入时会去掉。";
  var controllers = [];

  /* Whether a storage error says "full" (quota) rather than "not allowed" (blocked site data, privacy settings). */
  function isFull(e) {
    return !!e && (e.name === "QuotaExceededError" || e.name === "NS_ERROR_DOM_QUOTA_REACHED" ||
                   e.code === 22 || e.code === 1014);
  }

  /* {store, problem}: store is the localStorage when it can be read (null when even reading is refused); problem is
     null, "full" or "blocked" as a probe write found it. A full storage is still read: saved answers are shown. */
  function openStorage() {
    var s;
    try {
      s = window.localStorage;
      s.getItem(PREFIX + "__probe__");
    } catch (e) {
      return { store: null, problem: "blocked" };
    }
    try {
      var probe = PREFIX + "__probe__";
      s.setItem(probe, "1");
      s.removeItem(probe);
      return { store: s, problem: null };
    } catch (e) {
      return { store: s, problem: isFull(e) ? "full" : "blocked" };
    }
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function button(text, onClick, primary) {
    var b = el("button", { type: "button", "class": "md-button" + (primary ? " md-button--primary" : "") }, text);
    b.addEventListener("click", onClick);
    return b;
  }

  // ------------------------------------------------------------------------------------------------ export format

  function escapeLine(line) { return line.replace(/^([ \t]*)(?=\\*#)/, "$1\\"); }
  function unescapeLine(line) { return line.replace(/^([ \t]*)\\(?=\\*#)/, "$1"); }

  /* The text of a level-2 ATX heading (CommonMark: up to 3 spaces, "##", a blank or the end), or null. */
  function headingText(line) {
    var m = /^ {0,3}##(?:[ \t](.*))?$/.exec(line);
    if (!m) return null;
    var text = (m[1] || "").trim();
    text = /^#+$/.test(text) ? "" : text.replace(/[ \t]+#+$/, "");
    return text.replace(/[ \t]+/g, " ").trim();
  }

  function section(lines, heading, body) {
    lines.push("## " + heading, "");
    if (body) body.split("\n").forEach(function (line) { lines.push(escapeLine(line)); });
    if (body) lines.push("");
  }

  function toMarkdown(title, entries) {
    var lines = ["# " + title, "", INTRO, ""];
    entries.forEach(function (e) {
      section(lines, e.label, e.text);
      e.others.forEach(function (v) { section(lines, e.label + OTHER_SUFFIX, v); });
    });
    return lines.join("\n");
  }

  /* Files written by the first exporter (commit 9f83d0c, before the intro line existed): "# <title>", a blank line,
     then "## <label>", a blank line and the answer (trailing blanks trimmed), a blank line, for every question in
     page order; a line of an answer that equals one of those headings once trimmed got a backslash in front, and
     nothing else was escaped. Recognised by that exact outline (and no intro line), so a hand-written file is not. */
  function isFirstFormat(lines, title, labels) {
    if (lines[0] !== "# " + title || lines.indexOf(INTRO) >= 0) return false;
    var at = 0;
    return labels.every(function (label) {
      at = lines.indexOf("## " + label, at);
      return at++ >= 0;
    });
  }

  /* {values: {label: text}, others: {label: [text]}, unknown: [heading], duplicate: label or null}. */
  function fromMarkdown(text, labels, title) {
    var all = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n").split("\n");
    var first = isFirstFormat(all, title, labels);
    var headings = labels.map(function (label) { return "## " + label; });
    var sections = [];
    var current = null;
    all.forEach(function (line) {
      var h = first ? (headings.indexOf(line) >= 0 ? line.slice(3) : null) : headingText(line);
      if (h !== null) {
        current = { heading: h, lines: [] };
        sections.push(current);
      } else if (current) {
        current.lines.push(line);
      }
    });
    var out = { values: {}, others: {}, unknown: [], duplicate: null };
    sections.forEach(function (s) {
      var lines = s.lines;
      if (lines.length && lines[0] === "") lines = lines.slice(1); // the blank line after the heading
      if (lines.length && lines[lines.length - 1] === "") lines = lines.slice(0, -1); // and before the next one
      var body = lines.map(first ? function (line) {
        return line.charAt(0) === "\\" && headings.indexOf(line.slice(1).trim()) >= 0 ? line.slice(1) : line;
      } : unescapeLine).join("\n");
      var otherOf = s.heading.slice(0, -OTHER_SUFFIX.length);
      if (labels.indexOf(s.heading) >= 0) {
        if (Object.prototype.hasOwnProperty.call(out.values, s.heading)) out.duplicate = out.duplicate || s.heading;
        out.values[s.heading] = body;
      } else if (s.heading.slice(-OTHER_SUFFIX.length) === OTHER_SUFFIX && labels.indexOf(otherOf) >= 0) {
        if (body) (out.others[otherOf] = out.others[otherOf] || []).push(body);
      } else {
        out.unknown.push(s.heading);
      }
    });
    return out;
  }

  // ------------------------------------------------------------------------------------------------ one form

  function Controller(form) {
    var self = this;
    var opened = openStorage();
    var store = opened.store; // readable (saved answers are shown) even when it cannot be written
    var problem = opened.problem; // null, "full" or "blocked": what the last write (or the probe at load) met
    var status = form.querySelector("[role=status]");
    var fileInput = form.querySelector("input[data-ps-import]");
    var actions = form.querySelector(".ps-fillin__actions");
    var titleEl = document.querySelector(".md-content h1") || document.querySelector("h1");
    var title = titleEl ? titleEl.textContent.replace(/[¶#]\s*$/, "").trim() : document.title;
    var alerts = el("div", { "class": "ps-fillin__alerts md-typeset", role: "alert" });
    var preview = el("div", { "class": "ps-fillin__preview", role: "region", "aria-label": "导入预览", tabindex: "-1" });
    var importProblem = null;
    var exported = null; // the answers as last exported: unsaved text that is also in a file is not lost
    var alertsShown = "";
    var statusTimer = null;
    alerts.hidden = true;
    preview.hidden = true;
    document.body.appendChild(alerts);
    actions.parentNode.insertBefore(preview, actions.nextSibling);

    var fields = Array.prototype.map.call(form.querySelectorAll("textarea[data-ps-field]"), function (area) {
      var label = form.querySelector('label[for="' + area.id + '"]');
      var f = {
        name: area.dataset.psField, key: PREFIX + area.dataset.psField, otherKey: OTHER_PREFIX + area.dataset.psField,
        area: area, label: (label ? label.textContent : area.name).trim(),
        base: "", newer: null, others: [], panel: el("div", { "class": "ps-fillin__conflict", role: "group" }), shown: "",
      };
      f.panel.hidden = true;
      f.panel.setAttribute("aria-label", "“" + f.label + "”的另一个版本");
      area.parentNode.insertBefore(f.panel, area.nextSibling);
      return f;
    });

    function say(message) {
      if (!status) return;
      status.textContent = message;
      clearTimeout(statusTimer);
      statusTimer = setTimeout(function () { status.textContent = ""; }, 8000);
    }

    function read(key) {
      try { return (store && store.getItem(key)) || ""; } catch (e) { return ""; }
    }

    function readOthers(f) {
      try {
        var list = JSON.parse(read(f.otherKey) || "[]");
        return Array.isArray(list) ? list.filter(function (v) { return typeof v === "string" && v; }) : [];
      } catch (e) {
        return [];
      }
    }

    /* The versions worth showing or keeping: distinct, not empty, not equal to a text in `kept`, and not held whole
       inside another text (an earlier state of the same typing adds nothing to the later one). */
    function distinct(list, kept) {
      var all = list.concat(kept);
      return list.filter(function (v, i) {
        return v && list.indexOf(v) === i && kept.indexOf(v) < 0 &&
          !all.some(function (t) { return t !== v && t.indexOf(v) >= 0; });
      });
    }

    function writeOthers(f, list, kept) { // throws when storage refuses; `kept`: texts already stored elsewhere
      list = distinct(list, kept || []);
      if (list.length) store.setItem(f.otherKey, JSON.stringify(list));
      else store.removeItem(f.otherKey);
      f.others = list;
    }

    /* Store `text` as f's answer; whatever it would overwrite unseen is kept as another version. */
    function commit(f, text) {
      if (!store) return false;
      try {
        var stored = read(f.key);
        if (stored !== f.base && stored !== text && stored !== "") {
          var list = readOthers(f).filter(function (v) { return v !== f.base && v !== stored && v !== text; });
          list.push(stored);
          writeOthers(f, list);
        }
        if (text) store.setItem(f.key, text);
        else store.removeItem(f.key);
        f.base = text;
        f.newer = null;
        problem = null;
        if (text && readOthers(f).some(function (v) { return text.indexOf(v) >= 0; })) {
          try { writeOthers(f, readOthers(f), [text]); } catch (e) { /* the extra copy stays */ }
        }
        return true;
      } catch (e) {
        problem = isFull(e) ? "full" : "blocked";
        return false;
      }
    }

    function dirty(f) { return f.area.value !== f.base; }

    function saveAll() {
      fields.forEach(function (f) { if (dirty(f)) commit(f, f.area.value); });
      if (problem && store && !fields.some(dirty)) problem = openStorage().problem; // room again?
      render();
    }

    function editing(f) { return document.activeElement === f.area && document.visibilityState === "visible"; }

    /* Take in what another tab stored. */
    function sync(f) {
      f.others = readOthers(f);
      var stored = read(f.key);
      if (stored === f.base) return;
      if (stored === f.area.value) {
        f.base = stored;
        f.newer = null;
      } else if (!dirty(f) && !editing(f)) {
        f.area.value = stored;
        f.base = stored;
        f.newer = null;
        say("另一个标签页更新了“" + f.label + "”，这里已经换成新的内容。");
      } else {
        f.newer = stored; // the reader's text stays; the newer one is shown beside it
      }
    }

    function versions(f) {
      return distinct(f.others.concat(f.newer ? [f.newer] : []), [f.area.value]);
    }

    function resolve(f, v, how) {
      if (v === f.newer) { // seen now: it is no longer "unseen" text
        f.base = read(f.key);
        f.newer = null;
      }
      var rest = readOthers(f).filter(function (o) { return o !== v; });
      try { writeOthers(f, rest, [read(f.key)]); } catch (e) { /* stays listed */ }
      if (how === "use") f.area.value = v;
      if (how === "append") f.area.value = f.area.value ? f.area.value.replace(/\n*$/, "\n\n") + v : v;
      saveAll();
      f.area.focus();
    }

    function renderPanel(f) {
      var list = versions(f);
      var key = JSON.stringify(list);
      if (key === f.shown) return;
      f.shown = key;
      f.panel.textContent = "";
      f.panel.hidden = !list.length;
      if (!list.length) return;
      f.panel.appendChild(el("p", { "class": "ps-fillin__conflict-note" },
        "另一个标签页也改了这个回答，两个版本都留着：上面的框里是这个标签页的版本，下面是另一个。" +
        "请选一个，或把两个接在一起。"));
      list.forEach(function (v, i) {
        var id = f.area.id + "-other-" + (i + 1);
        f.panel.appendChild(el("label", { "for": id, "class": "ps-fillin__label" },
          "另一个版本" + (list.length > 1 ? " " + (i + 1) : "")));
        var box = el("textarea", { id: id, readonly: "", rows: "4" });
        box.value = v;
        f.panel.appendChild(box);
        var row = el("div", { "class": "ps-fillin__actions" });
        row.appendChild(button("改用这个版本", function () { resolve(f, v, "use"); }));
        row.appendChild(button("接在框里的回答后面", function () { resolve(f, v, "append"); }));
        row.appendChild(button("删去这个版本", function () { resolve(f, v, "drop"); }));
        f.panel.appendChild(row);
      });
    }

    function names(list) { return list.map(function (f) { return "“" + f.label + "”"; }).join("、"); }

    function renderAlerts() {
      var messages = [];
      var cause = problem === "full" ? "这个浏览器里本站的本地存储已满" :
        "这个浏览器不允许本站在本地保存（隐私设置或无痕模式）";
      if (!store) {
        messages.push([cause + "：你写的内容在刷新或关闭页面后会丢失。写完请用“导出为 Markdown”存成文件。", "export"]);
      } else {
        var unsaved = fields.filter(dirty);
        if (unsaved.length) {
          messages.push(["没能保存 " + names(unsaved) + "：" + cause + "。文字还在框里，但刷新或关闭页面会丢失：" +
            "请先导出为 Markdown 文件。", "export", "retry"]);
        } else if (problem) {
          messages.push([cause + "：已经保存的回答照常显示在框里，但新写的内容存不进去。" +
            (problem === "full" ? "可以清理本站或其他页面的本地数据腾出空间，" : "") +
            "写完请用“导出为 Markdown”存成文件。", "export", "retry"]);
        }
      }
      var conflicted = fields.filter(function (f) { return versions(f).length; });
      if (conflicted.length) {
        messages.push([names(conflicted) + " 在另一个标签页也被改过：两个版本都留着，请在这一题下面选择保留哪个。", "show"]);
      }
      if (importProblem) messages.push([importProblem, "dismiss"]);
      var key = JSON.stringify(messages);
      if (key === alertsShown) return;
      alertsShown = key;
      alerts.textContent = "";
      messages.forEach(function (m) {
        var box = el("div", { "class": "ps-fillin__alert" });
        box.appendChild(el("p", {}, m[0]));
        var row = el("div", { "class": "ps-fillin__actions" });
        m.slice(1).forEach(function (action) {
          if (action === "export") row.appendChild(button("立即导出为 Markdown", exportFile, true));
          if (action === "retry") row.appendChild(button("重试保存", saveAll));
          if (action === "show") {
            row.appendChild(button("查看", function () {
              var first = fields.filter(function (f) { return versions(f).length; })[0];
              if (first) { first.panel.scrollIntoView({ block: "center" }); first.area.focus({ preventScroll: true }); }
            }));
          }
          if (action === "dismiss") row.appendChild(button("知道了", function () { importProblem = null; render(); }));
        });
        box.appendChild(row);
        alerts.appendChild(box);
      });
      alerts.hidden = !messages.length;
      document.body.style.paddingBottom = messages.length ? alerts.offsetHeight + "px" : "";
    }

    function render() {
      fields.forEach(renderPanel);
      renderAlerts();
    }

    function snapshot() { return JSON.stringify(fields.map(function (f) { return f.area.value; })); }

    this.hasUnsaved = function () {
      var lost = store ? fields.some(dirty) : fields.some(function (f) { return f.area.value; });
      return lost && snapshot() !== exported;
    };

    this.sync = function () {
      fields.forEach(sync);
      render();
    };

    function exportFile() {
      var entries = fields.map(function (f) { return { label: f.label, text: f.area.value, others: versions(f) }; });
      var blob = new Blob([toMarkdown(title, entries)], { type: "text/markdown;charset=utf-8" });
      var url = URL.createObjectURL(blob);
      var a = el("a", { href: url, download: FILENAME });
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
      exported = snapshot();
      say("已导出为 " + FILENAME + "（在浏览器的下载里）。");
    }

    // ------------------------------------------------------------------------------------------------ import

    function refuse(file, why) {
      importProblem = "没有导入 " + file.name + "：" + why + "本页回答没有改变。";
      preview.hidden = true;
      render();
    }

    function chars(text) { return Array.from(text).length + " 字"; }

    function showPreview(file, parsed) {
      var plan = [];
      var lines = [];
      fields.forEach(function (f) {
        var text = parsed.values[f.label];
        var now = f.area.value;
        var add = (parsed.others[f.label] || []).filter(function (v) {
          return v !== now && v !== text && versions(f).indexOf(v) < 0;
        });
        if (text === undefined) lines.push(f.label + "：保留（文件里没有这一题）");
        else if (text === "") lines.push(f.label + "：保留（文件里这一题是空的）");
        else if (text === now) lines.push(f.label + "：不变（与文件相同）");
        else if (!now) lines.push(f.label + "：填入文件里的回答（" + chars(text) + "，框里原来是空的）");
        else lines.push(f.label + "：替换——框里的回答（" + chars(now) + "）会换成文件里的（" + chars(text) + "）");
        if (add.length) lines.push(f.label + "：另有 " + add.length + " 个版本，会放在这一题下面，不替换回答");
        if ((text && text !== now) || add.length) plan.push({ f: f, text: text && text !== now ? text : null, add: add });
      });
      preview.textContent = "";
      preview.appendChild(el("p", { "class": "ps-fillin__label" }, "导入预览：" + file.name));
      preview.appendChild(el("p", {}, plan.length ? "确认之前什么都不会改变。导入后本页会这样变：" :
        "文件里的回答与本页现在的一样，没有需要导入的内容。"));
      var ul = el("ul");
      lines.forEach(function (t) { ul.appendChild(el("li", {}, t)); });
      preview.appendChild(ul);
      if (parsed.unknown.length) {
        preview.appendChild(el("p", {}, "文件里这些标题不是本页的问题，不会导入：" +
          parsed.unknown.map(function (h) { return "“" + h + "”"; }).join("、") + "。"));
      }
      var row = el("div", { "class": "ps-fillin__actions" });
      if (plan.length) row.appendChild(button("确认导入", function () { apply(file, plan); }, true));
      if (plan.length) row.appendChild(button("先导出现在的回答", exportFile));
      row.appendChild(button(plan.length ? "取消导入" : "关闭", function () {
        preview.hidden = true;
        if (plan.length) say("已取消导入，本页回答没有改变。");
      }));
      preview.appendChild(row);
      preview.hidden = false;
      preview.scrollIntoView({ block: "nearest" });
      preview.focus({ preventScroll: true });
    }

    function apply(file, plan) {
      preview.hidden = true;
      var before = plan.map(function (p) { return { value: p.f.area.value, others: readOthers(p.f) }; });
      plan.forEach(function (p) { if (p.text !== null) p.f.area.value = p.text; });
      if (!store) {
        render();
        say("已把 " + file.name + " 的内容填入本页，但这个浏览器不能保存：请记得导出。");
        return;
      }
      var ok = plan.every(function (p) { return p.text === null || commit(p.f, p.text); });
      ok = ok && plan.every(function (p) {
        if (!p.add.length) return true;
        try { writeOthers(p.f, readOthers(p.f).concat(p.add)); return true; } catch (e) { return false; }
      });
      if (!ok) { // put back what was there, so the page and the stored copy agree again
        var failed = problem; // what the failing write met (the writes that put things back may succeed)
        plan.forEach(function (p, i) {
          p.f.area.value = before[i].value;
          commit(p.f, before[i].value);
          try { writeOthers(p.f, before[i].others); } catch (e) { /* unchanged if it cannot be written */ }
        });
        refuse(file, failed === "full" ? "浏览器里本站的本地存储已满，放不下。" : "浏览器不允许本站在本地保存。");
        return;
      }
      render();
      say("已从 " + file.name + " 导入并保存：" + plan.filter(function (p) { return p.text !== null; }).length +
        " 个回答有改动。");
    }

    function load(file) {
      importProblem = null;
      preview.hidden = true;
      render();
      if (file.size === 0) return refuse(file, "文件是空的。");
      if (file.size > MAX_IMPORT_BYTES) {
        return refuse(file, "文件有 " + (file.size / 1048576).toFixed(1) + " MB，超过导入上限 " +
          (MAX_IMPORT_BYTES / 1048576) + " MB（导出的文件远比这小，这多半不是导出的文件）。");
      }
      file.arrayBuffer().then(function (buffer) {
        var text;
        try {
          text = new TextDecoder("utf-8", { fatal: true }).decode(buffer);
        } catch (e) {
          return refuse(file, "它不是 UTF-8 文本（导出的 Markdown 文件是）。");
        }
        if (!text.trim()) return refuse(file, "文件里只有空白。");
        if (text.indexOf("\u0000") >= 0) return refuse(file, "它不是文本文件。");
        var parsed = fromMarkdown(text, fields.map(function (f) { return f.label; }), title);
        if (parsed.duplicate) {
          return refuse(file, "“" + parsed.duplicate + "”这个标题在文件里出现了不止一次，无法确定用哪一段。" +
            "请在编辑器里删去多余的一段再导入。");
        }
        if (!Object.keys(parsed.values).length && !Object.keys(parsed.others).length) {
          return refuse(file, "文件里没有本页的问题标题（以“## ”开头，例如“## " + fields[0].label + "”）。");
        }
        showPreview(file, parsed);
      }, function () {
        refuse(file, "浏览器读不了这个文件。");
      });
    }

    // ------------------------------------------------------------------------------------------------ wiring

    fields.forEach(function (f) {
      f.base = read(f.key);
      f.others = readOthers(f);
      f.area.value = f.base;
      f.area.addEventListener("input", saveAll);
    });
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    form.querySelector('[data-ps-action="export"]').addEventListener("click", exportFile);
    form.querySelector('[data-ps-action="import"]').addEventListener("click", function () {
      fileInput.value = "";
      fileInput.click();
    });
    fileInput.addEventListener("change", function () {
      if (fileInput.files && fileInput.files[0]) load(fileInput.files[0]);
    });
    form.querySelector('[data-ps-action="clear"]').addEventListener("click", function () {
      if (fields.every(function (f) { return !f.area.value && !versions(f).length; })) {
        say("没有需要清空的内容。");
        return;
      }
      if (!window.confirm("清空本页全部回答（连同另一个版本）？清空后不能恢复（可以先导出备份）。")) {
        say("已取消，内容保留。");
        return;
      }
      fields.forEach(function (f) {
        f.base = read(f.key); // the reader asked to erase what is stored, whichever tab wrote it
        f.newer = null;
        f.area.value = "";
        try { if (store) writeOthers(f, []); else f.others = []; } catch (e) { /* shown again below */ }
      });
      saveAll();
      say("已清空。");
    });
    render();
    self.form = form;
  }

  window.addEventListener("storage", function (event) {
    if (event.key !== null && event.key.indexOf(PREFIX) !== 0 && event.key.indexOf(OTHER_PREFIX) !== 0) return;
    controllers.forEach(function (c) { if (document.contains(c.form)) c.sync(); });
  });

  window.addEventListener("beforeunload", function (event) {
    var unsaved = controllers.some(function (c) { return document.contains(c.form) && c.hasUnsaved(); });
    if (unsaved) {
      event.preventDefault();
      event.returnValue = ""; // older Chromium needs it set to show the prompt
    }
  });

  function initAll() {
    Array.prototype.forEach.call(document.querySelectorAll("form[data-ps-fillin]"), function (form) {
      if (form.dataset.psReady === "1") return;
      form.dataset.psReady = "1";
      controllers.push(new Controller(form));
    });
  }

  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(initAll); // Material: fires on first load and after every instant navigation
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", initAll);
  } else {
    initAll();
  }
})();
