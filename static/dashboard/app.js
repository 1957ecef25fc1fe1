/* memoryweb dashboard behaviour that cannot be an htmx attribute. Served as a static file:
   the pages carry no inline script and no on*= handlers (Content-Security-Policy). */
(function () {
  "use strict";

  // <input type="checkbox" data-select-all="#bulk input[name=ids]">: ticks every match.
  document.addEventListener("change", function (event) {
    var box = event.target;
    if (!box.matches || !box.matches("input[data-select-all]")) return;
    document.querySelectorAll(box.getAttribute("data-select-all")).forEach(function (c) { c.checked = box.checked; });
  });

  // Plain (non-htmx) forms and buttons with data-confirm ask before submitting; htmx
  // forms use hx-confirm instead, which htmx asks itself.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var submitter = event.submitter;
    var text = (submitter && submitter.getAttribute("data-confirm")) || form.getAttribute("data-confirm");
    if (text && !window.confirm(text)) event.preventDefault();
  }, true);

  // Local times: <time data-local datetime="…Z">: shows the viewer's own time beside UTC.
  function localise(root) {
    (root || document).querySelectorAll("time[data-local]:not([data-done])").forEach(function (t) {
      var d = new Date(t.getAttribute("datetime"));
      if (isNaN(d)) return;
      t.setAttribute("data-done", "1");
      t.title = d.toLocaleString() + " (your time)";
    });
  }
  document.addEventListener("DOMContentLoaded", function () { localise(document); });
  document.addEventListener("htmx:afterSwap", function (event) { localise(event.target); });
})();
