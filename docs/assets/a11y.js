/*
 * Keyboard access to boxes that scroll sideways (axe-core rule scrollable-region-focusable): a wide table, formula,
 * chart or notebook output that overflows its column gets tabindex="0", so it can be focused and scrolled with the
 * arrow keys. Boxes that fit get no tab stop. Re-checked when the window is resized, a content tab is switched or a
 * folded block is opened (hidden boxes have no width until then).
 */
(function () {
  "use strict";

  var SELECTOR = ".md-typeset table:not([class]), .md-typeset__table, .ps-math, .ps-chart, .jp-OutputArea-output";

  function mark() {
    Array.prototype.forEach.call(document.querySelectorAll(SELECTOR), function (el) {
      var scrolls = el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1;
      var style = window.getComputedStyle(el);
      scrolls = scrolls && /(auto|scroll)/.test(style.overflowX + " " + style.overflowY);
      if (scrolls && !el.hasAttribute("tabindex")) {
        el.setAttribute("tabindex", "0");
        el.setAttribute("data-ps-scroll-focus", "");
      } else if (!scrolls && el.hasAttribute("data-ps-scroll-focus")) {
        el.removeAttribute("tabindex");
        el.removeAttribute("data-ps-scroll-focus");
      }
    });
  }

  var pending = null;
  function later() {
    if (pending) return;
    pending = window.requestAnimationFrame(function () {
      pending = null;
      mark();
    });
  }

  window.addEventListener("resize", later);
  document.addEventListener("change", later, true); // content tabs are radio inputs
  document.addEventListener("toggle", later, true); // <details>
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(later); // first load and every instant navigation
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", later);
  } else {
    later();
  }
  window.addEventListener("load", later);
})();
