/* Queue page: j/k move through the rows, Enter opens (and claims) the selected one,
   n claims and opens the oldest unclaimed answer. */
(function () {
  "use strict";
  var rows = [];
  var selected = -1;

  function select(index) {
    if (!rows.length) return;
    index = Math.max(0, Math.min(rows.length - 1, index));
    if (selected >= 0) rows[selected].classList.remove("selected");
    selected = index;
    var row = rows[selected];
    row.classList.add("selected");
    row.scrollIntoView({ block: "nearest" });
    var open = row.querySelector("[data-open]");
    if (open) open.focus({ preventScroll: true });
  }

  // Enter claims the selected row only when nothing else has the focus: on "More", "Filter",
  // a reason chip (or the row's own button) it must do what that link or button does.
  function enterIsOurs(row) {
    var focus = document.activeElement;
    if (!focus || focus === document.body) return true;
    return row.contains(focus) && !focus.closest("a, button, summary");
  }

  // Back on a page of the queue (with Back, or after deciding), the selection is where the
  // reviewer was: on the answer they opened last (item.js notes it), or, when it has left the
  // queue, on the first row after it that is still here. So this page keeps its rows' order
  // as it shows them, for the next time.
  var SHOWN = "reviewqueue-queue-shown";
  var OPENED = "reviewqueue-opened";

  function restoreSelection() {
    var table = document.querySelector("[data-queue-key]");
    if (!table) return;
    var key = table.getAttribute("data-queue-key");
    var traces = rows.map(function (row) { return row.getAttribute("data-trace"); });
    try {
      var shown = JSON.parse(window.sessionStorage.getItem(SHOWN) || "null");
      var opened = window.sessionStorage.getItem(OPENED);
      window.sessionStorage.setItem(SHOWN, JSON.stringify({ key: key, traces: traces }));
    } catch (e) {
      return;  // no storage here (disabled, or full): nothing to remember
    }
    if (!shown || shown.key !== key || !opened) return;
    var was = shown.traces.indexOf(opened);
    if (was < 0) return;  // opened from elsewhere (another page of the queue, a link)
    for (var i = was; i < shown.traces.length; i++) {
      var index = traces.indexOf(shown.traces[i]);
      if (index >= 0) { select(index); return; }
    }
    // It was the last row shown (or every one after it has gone too): the row now in its
    // place, which came after it, moved up from the next page.
    select(was);
  }

  document.addEventListener("DOMContentLoaded", function () {
    rows = Array.prototype.slice.call(document.querySelectorAll("[data-row]"));
    restoreSelection();
    var filters = document.querySelector("details[data-filters]");
    if (filters && !filters.hasAttribute("data-active") &&
        window.matchMedia("(max-width: 640px)").matches) {
      filters.open = false;
    }
  });

  document.addEventListener("keydown", function (event) {
    var rq = window.ReviewQueue;
    if (!rq || rq.shortcutsOff(event)) return;
    if (event.key === "j") { event.preventDefault(); select(selected + 1); }
    else if (event.key === "k") { event.preventDefault(); select(selected - 1); }
    else if (event.key === "Enter" && selected >= 0 && enterIsOurs(rows[selected])) {
      var open = rows[selected].querySelector("[data-open]");
      if (open) { event.preventDefault(); open.click(); }
    } else if (event.key === "n") {
      var next = document.querySelector("[data-next]");
      if (next) { event.preventDefault(); next.click(); }
    }
  });
})();
