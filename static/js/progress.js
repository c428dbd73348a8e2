// Follows re-evaluation jobs: every element with data-job-progress polls its data-url (the job's
// progress JSON) and updates its <progress> bar and text until the job has finished.
(function () {
  "use strict";

  var INTERVAL_MS = 1000;
  var MAX_INTERVAL_MS = 10000;

  function render(el, job) {
    var bar = el.querySelector("progress");
    var text = el.querySelector(".job-progress-text");
    var state = el.querySelector("[data-state]");
    if (bar) {
      bar.max = Math.max(job.total, 1);
      bar.value = job.done + job.failed;
      bar.textContent = job.percent + "%";
    }
    // The page's own JSON brings the words in the reader's language.
    if (text && job.text) {
      text.textContent = job.text;
    }
    if (state && job.state_label) {
      state.textContent = job.state_label;
    }
    el.dataset.state = job.state;
    el.dataset.changed = job.changed;
    // A list of jobs has a column of its own for the answers that got a new verdict.
    var row = el.closest("tr");
    var cell = row && row.querySelector("[data-changed-cell]");
    if (cell) {
      cell.textContent = String(job.changed);
    }
    // One job's page says it in a sentence under the bar.
    var card = el.closest(".card");
    var sentence = card && card.querySelector("p[data-changed]");
    if (sentence && job.changed_text) {
      sentence.textContent = job.changed_text;
    }
    showChangedTotal();
  }

  // A page following several jobs may show how many answers got a new verdict in all.
  function showChangedTotal() {
    var total = document.querySelector("[data-changed-total]");
    if (!total) {
      return;
    }
    var sum = 0;
    var nodes = document.querySelectorAll("[data-job-progress]");
    for (var i = 0; i < nodes.length; i++) {
      sum += parseInt(nodes[i].dataset.changed || "0", 10);
    }
    total.textContent = String(sum);
  }

  function follow(el) {
    var url = el.dataset.url;
    var wait = INTERVAL_MS;
    if (!url) {
      return;
    }
    function poll() {
      fetch(url, { credentials: "same-origin",
                   // The page asks by itself: the session's idle time goes on.
                   headers: { Accept: "application/json", "X-Background": "1" } })
        .then(function (response) {
          if (!response.ok) {
            throw new Error("progress " + response.status);
          }
          return response.json();
        })
        .then(function (job) {
          render(el, job);
          wait = INTERVAL_MS;
          if (job.finished) {
            if (el.hasAttribute("data-reload-on-finish")) {
              window.location.reload();
            }
            return;
          }
          window.setTimeout(poll, wait);
        })
        .catch(function () {
          // Back off while the server is unreachable; keep the last figures on screen.
          wait = Math.min(wait * 2, MAX_INTERVAL_MS);
          window.setTimeout(poll, wait);
        });
    }
    if (el.dataset.state !== "finished" && el.dataset.state !== "failed") {
      poll();
    }
  }

  function start() {
    var nodes = document.querySelectorAll("[data-job-progress]");
    for (var i = 0; i < nodes.length; i++) {
      follow(nodes[i]);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
