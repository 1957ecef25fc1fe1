// The dashboard's only script besides htmx. It is a static file because the pages are
// served with a Content-Security-Policy that allows no inline script (script-src 'self').
// Listeners are delegated to the document, so they keep working after htmx swaps.

// <input type="checkbox" data-select-all="CSS selector">: ticks or clears every match.
document.addEventListener("change", function (event) {
  var box = event.target.closest ? event.target.closest("[data-select-all]") : null;
  if (!box) return;
  document.querySelectorAll(box.getAttribute("data-select-all")).forEach(function (c) {
    c.checked = box.checked;
  });
});
