/* onelayer: two fixes for the stored ipywidgets that the ipywidgets HTML manager (_static/ipywidgets/embed.js)
   draws without a kernel. Loaded on every page (html_js_files in _config.yml); does nothing on pages
   without widgets.

   1. MathJax. The manager typesets widget labels with MathJax 2's API (MathJax.Hub.Queue) whenever a
      global MathJax exists; the book loads MathJax 3, which has no Hub, so every widget page threw
      "Cannot read properties of undefined (reading 'Queue')" and drew no widget after the first.
      Deferred scripts (MathJax) have run by DOMContentLoaded and the manager draws on "load", so a Hub
      added in between turns its one call into MathJax 3's typesetPromise.
   2. Accessible names. The sliders' handles (role="slider") have no accessible name: the widget's
      <label> is not tied to them. Each handle is pointed at its label (aria-labelledby) as widgets
      appear. */
(function () {
  "use strict";

  document.addEventListener("DOMContentLoaded", function () {
    var mj = window.MathJax;
    if (!mj || !mj.version || mj.Hub) return;
    mj.Hub = {
      Queue: function () {
        Array.prototype.forEach.call(arguments, function (job) {
          if (Array.isArray(job) && job[0] === "Typeset" && mj.startup && mj.typesetPromise) {
            var element = job[2];
            mj.startup.promise.then(function () { return mj.typesetPromise(element ? [element] : undefined); });
          }
        });
      },
    };
  });

  var counter = 0;
  function labelSliders(root) {
    var handles = root.querySelectorAll('.widget-slider [role="slider"]:not([aria-labelledby]):not([aria-label])');
    Array.prototype.forEach.call(handles, function (handle) {
      var widget = handle.closest(".widget-slider");
      var label = widget && widget.querySelector(":scope > label.widget-label");
      if (label && label.textContent.trim()) {
        if (!label.id) label.id = "onelayer-widget-label-" + (++counter);
        handle.setAttribute("aria-labelledby", label.id);
      } else {
        handle.setAttribute("aria-label", "slider");
      }
    });
  }

  window.addEventListener("load", function () {
    if (!document.querySelector('script[type="application/vnd.jupyter.widget-view+json"]')) return;
    labelSliders(document);
    new MutationObserver(function () { labelSliders(document); })
      .observe(document.body, { childList: true, subtree: true });
  });
})();
