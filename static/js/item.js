/* Item page: keeps the lease while the page is open, records which passages the reviewer
   opened, and the keyboard shortcuts (j/k, Enter, o, a, e, r, u). */
(function () {
  "use strict";
  var workspace;
  var channel = null;  // to this answer's other pages in this browser
  var recorded = {};
  var sentences = [];
  var current = -1;

  function post(url, body, background) {
    var headers = { "Content-Type": "application/json", "X-CSRFToken": window.ReviewQueue.csrfToken() };
    // Sent by the page itself, not by anything the reviewer did: the session's idle time
    // goes on (accounts/idle.py).
    if (background) headers["X-Background"] = "1";
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      keepalive: true,
      headers: headers,
      body: JSON.stringify(body || {})
    });
  }

  // Whether the reviewer did anything (a key, a click, a scroll, the pointer) since the last
  // renewal: one that follows nothing of the kind does not keep the session from idling out.
  var active = true;
  ["keydown", "pointerdown", "pointermove", "wheel", "scroll", "input", "focus"].forEach(
    function (name) { window.addEventListener(name, function () { active = true; }, true); });

  function recordExpansion(details) {
    var cite = details.getAttribute("data-cite");
    // A read-only page (an owner's) has no expand URL: it records nothing.
    if (!details.open || !cite || recorded[cite] || !workspace.dataset.expandUrl) return;
    recorded[cite] = true;
    post(workspace.dataset.expandUrl, { cite: cite, verdict: Number(workspace.dataset.verdict) })
      .catch(function () { recorded[cite] = false; });
  }

  // The page no longer holds the answer: say so once, and take away every action (decide,
  // release, hand off, re-evaluate) until the reviewer reloads, or takes a free answer back
  // (`free`: nobody holds it now), which gives them back as they were (see `regained`).
  var lost = null;  // what leaseLost changed, to undo then

  function leaseLost(message, free) {
    var banner = document.querySelector("[data-lease-lost]");
    var mine = document.querySelector(".lease-box.mine");
    var first = !lost;
    if (first) lost = { changed: [], box: mine, text: null, banner: banner, home: null };
    if (mine) {
      // The lease box itself says it, in the banner's place at the top of the side column:
      // in sight wherever the reviewer has scrolled to, and covering nothing. Said in the
      // box and in a banner besides, the page showed the same sentence twice.
      mine.classList.replace("mine", "lost");  // no longer the green "you hold it" box
      var until = mine.querySelector("[data-lease-until]");
      if (until) {
        lost.text = until.textContent;
        until.textContent = message;
      }
      mine.setAttribute("role", "alert");
      mine.setAttribute("data-lease-lost", "");
      if (banner) {
        lost.home = document.createComment("lease box");
        mine.before(lost.home);
        banner.replaceWith(mine);
      }
      banner = mine;
      if (free && workspace.dataset.claimUrl) {
        var again = document.createElement("button");
        again.type = "button";
        again.className = "primary";
        again.setAttribute("data-take-back", "");
        again.textContent = workspace.dataset.takeBack;
        again.addEventListener("click", takeBack);
        mine.appendChild(again);
      }
    } else if (banner) {
      banner.textContent = message;
      banner.hidden = false;
    }
    if (banner) banner.scrollIntoView({ block: "nearest" });  // the side column may be scrolled
    if (!first) return;  // taken away already
    function set(element, property) {
      if (element[property]) return;  // as the page drew it: left so when given back
      element[property] = true;
      lost.changed.push([element, property]);
    }
    document.querySelectorAll("main form[method=post] button[type=submit]").forEach(function (b) {
      set(b, "disabled");
    });
    // What the reviewer wrote stays, to read and copy, but can no longer be changed: nothing
    // here can be sent any more.
    document.querySelectorAll("main form[method=post] textarea, " +
                              "main form[method=post] input:not([type=hidden])").forEach(
      function (field) {
        set(field, field.type === "checkbox" || field.type === "radio" ? "disabled" : "readOnly");
      });
    document.querySelectorAll("main form[method=post] select").forEach(function (s) {
      set(s, "disabled");
    });
  }

  // "Start reviewing again, keeping what you wrote": claims the answer from this page, which
  // keeps what its forms hold (a reload would drop it). The renewal that follows tells whether
  // the answer is the reviewer's again, or who took it first.
  function takeBack(event) {
    var button = event.currentTarget;
    button.disabled = true;
    post(workspace.dataset.claimUrl, {}).then(function () {
      workspace.dataset.leaseMine = "1";
      renewLease(true);
      renewEvery();
    }, function () { button.disabled = false; });  // offline: try again
  }

  // The answer is the reviewer's again: the page as it was before leaseLost.
  function regained() {
    var box = lost.box;
    lost.changed.forEach(function (change) { change[0][change[1]] = false; });
    if (box) {
      box.classList.replace("lost", "mine");
      box.removeAttribute("role");
      box.removeAttribute("data-lease-lost");
      var until = box.querySelector("[data-lease-until]");
      if (until && lost.text !== null) until.textContent = lost.text;
      box.querySelectorAll("[data-take-back]").forEach(function (b) { b.remove(); });
      if (lost.home) {
        box.replaceWith(lost.banner);
        lost.home.replaceWith(box);
      }
    }
    lost = null;
  }

  // The lease box says until when the reviewer holds the answer: move that time with each
  // renewal, in the page's own words (only the time changes).
  function showLeaseUntil(data) {
    var box = document.querySelector("[data-lease-until]");
    var shown = box && box.getAttribute("data-lease-until");
    if (!shown || !data.until_shown || data.until_shown === shown) return;
    box.textContent = box.textContent.split(shown).join(data.until_shown);
    box.setAttribute("data-lease-until", data.until_shown);
  }

  function renewLease(retry) {
    var idle = !active;
    active = false;
    return post(workspace.dataset.renewUrl, {}, idle).then(function (response) {
      if (response.redirected) {
        // Sent to the sign-in page: the session ended (idle too long, or signed out in
        // another tab). The lease lapses; what the reviewer wrote stays, to copy.
        workspace.dataset.leaseMine = "";
        leaseLost(workspace.dataset.signedOut || "");
        return;
      }
      if (response.status === 409) {
        workspace.dataset.leaseMine = "";
        return response.json().then(function (data) {
          leaseLost(data.message || "", data.error === "lease_lost");
        });
      }
      if (response.ok) {
        return response.json().then(function (data) {
          if (lost) regained();
          if (data.until) workspace.dataset.leaseEnd = data.until;
          showLeaseUntil(data);
        });
      }
    }).catch(function () {
      // Offline for a moment: try again soon, not only at the next tick (a reload's leaving
      // page may have left the lease a minute to live).
      if (retry) setTimeout(function () { if (workspace.dataset.leaseMine) renewLease(false); },
                            10000);
    });
  }

  // Renew at once (a reload, or this page coming back from the history, may follow a page that
  // said it was leaving), then every third of the lease, and at least once a minute, while the
  // lease is still this page's: a lease an admin broke is said within a minute, not at the next
  // third of a 15-minute lease. And as the reviewer comes back to the tab, at most every 5 s.
  var timer = null;
  function renewEvery() {
    var seconds = Number(workspace.dataset.leaseSeconds) || 900;
    var every = Math.min(60, Math.max(10, Math.floor(seconds / 3))) * 1000;
    clearInterval(timer);  // one at a time, when the answer is taken back
    timer = setInterval(function () {
      if (!workspace.dataset.leaseMine) { clearInterval(timer); return; }
      renewLease(true);
    }, every);
  }

  function keepLease() {
    if (!workspace.dataset.leaseMine) return;
    renewLease(true);
    renewEvery();
    var lastBack = 0;
    function back() {
      if (!workspace.dataset.leaseMine || document.visibilityState === "hidden" ||
          Date.now() - lastBack < 5000) return;
      lastBack = Date.now();
      renewLease(false);
    }
    window.addEventListener("focus", back);
    document.addEventListener("visibilitychange", back);
    // Another page of this answer, open in this browser, is leaving: it shortened the lease
    // this page holds too, so renew it now.
    if (window.BroadcastChannel) {
      channel = new BroadcastChannel("reviewqueue-lease:" + workspace.dataset.renewUrl);
      channel.onmessage = function () { if (workspace.dataset.leaseMine) renewLease(true); };
    }
  }

  // Leaving the page (tab closed, link followed, reload): the lease lapses within a minute
  // instead of keeping colleagues out for its whole term. The server shortens it only while
  // it still ends when this page last saw it, so a page that renewed since keeps it.
  // Said as the page starts to go, and again as it goes if the lease moved in between.
  // Returns the request, or null when there was nothing to say.
  var leftWith = "";
  function leaving() {
    var end = workspace.dataset.leaseEnd;
    if (!workspace.dataset.leaseMine || !end || end === leftWith) return null;
    leftWith = end;
    var sent = post(workspace.dataset.leaveUrl, { until: end }, true);
    if (channel) channel.postMessage("leaving");
    // Still here ten seconds on: the navigation was called off (or is very slow). Take the
    // whole term back; if the page does go, it says so again with the new end.
    setTimeout(function () { if (workspace.dataset.leaseMine) renewLease(true); }, 10000);
    return sent;
  }

  // A link of this site followed from the page (the queue, above all): say so first and go
  // once the server has it (a second at most), so the next page already shows the shorter
  // lease. Sent with the navigation instead, it could be read after that page was drawn.
  function leaveThenGo(url) {
    var gone = false;
    function go() { if (!gone) { gone = true; window.location.href = url; } }
    var sent = leaving();
    if (!sent) { go(); return; }
    sent.then(go, go);
    setTimeout(go, 1000);
  }

  // The claims table ends with one empty row: "Add a claim" adds another empty row, as many
  // times as needed, numbered as the formset expects (claims-N-...).
  function addClaim() {
    // The empty row the page ends the table with comes first.
    var blank = document.querySelector("[data-blank-row][hidden]");
    if (blank) {
      blank.hidden = false;
      blank.removeAttribute("data-blank-row");
      var first = blank.querySelector("[name$='-key']");
      if (first) first.focus();
      return;
    }
    var rows = document.querySelectorAll("[data-claim-row]");
    var total = document.querySelector("input[name=claims-TOTAL_FORMS]");
    if (!rows.length || !total) return;
    var n = Number(total.value);
    var row = rows[rows.length - 1].cloneNode(true);
    // Neither the errors nor the length counters of the row copied belong to the new one.
    row.querySelectorAll(".errorlist, [data-near-limit]").forEach(function (el) { el.remove(); });
    row.querySelectorAll("[name], [id], [for]").forEach(function (el) {
      ["name", "id", "for"].forEach(function (attr) {
        var value = el.getAttribute(attr);
        if (value) el.setAttribute(attr, value.replace(/claims-\d+-/, "claims-" + n + "-"));
      });
      el.removeAttribute("aria-invalid");
      el.removeAttribute("aria-describedby");
      if (el.type === "checkbox") el.checked = false;
      else if (el.tagName === "SELECT") {
        // The choice the page offers an empty row (the HTML's own selected option).
        var chosen = Array.prototype.findIndex.call(el.options, function (o) {
          return o.defaultSelected;
        });
        el.selectedIndex = Math.max(0, chosen);
      } else if (el.tagName === "INPUT" || el.tagName === "TEXTAREA") el.value = "";
    });
    row.querySelectorAll("label.visually-hidden").forEach(function (label) {
      label.textContent = label.textContent.replace(/\d+\s*$/, String(n + 1));
    });
    rows[rows.length - 1].after(row);
    window.ReviewQueue.addCounters(row);
    total.value = String(n + 1);
    var key = row.querySelector("[name$='-key']");
    if (key) key.focus();
  }

  // A source cited again has its card written once, at its first chip (review_tags.py): the
  // later chips take a copy of it as they open.
  function fillFromAbove(details) {
    if (!details.hasAttribute("data-cited-above")) return;
    var cite = details.getAttribute("data-cite");
    var first = Array.prototype.find.call(document.querySelectorAll("details.cite"), function (d) {
      return d.getAttribute("data-cite") === cite && !d.hasAttribute("data-cited-above");
    });
    var card = first && first.querySelector(".cite-card");
    if (!card) return;
    details.querySelector(".cite-card").replaceWith(card.cloneNode(true));
    details.removeAttribute("data-cited-above");
  }

  function expandAll() {
    document.querySelectorAll("details.cite").forEach(function (d) { d.open = true; });
  }

  function moveTo(index) {
    if (!sentences.length) return;
    index = Math.max(0, Math.min(sentences.length - 1, index));
    if (current >= 0) sentences[current].classList.remove("selected");
    current = index;
    sentences[current].classList.add("selected");
    sentences[current].focus({ preventScroll: true });
    sentences[current].scrollIntoView({ block: "nearest" });
  }

  function openAction(name, selector) {
    var box = document.querySelector("#decide [data-action=" + name + "]");
    if (!box) return;
    if (box.tagName.toLowerCase() === "details") box.open = true;
    var field = box.querySelector(selector);
    box.scrollIntoView({ block: "nearest" });
    if (field) field.focus();
  }

  document.addEventListener("DOMContentLoaded", function () {
    workspace = document.getElementById("workspace");
    if (!workspace) return;
    // For the queue, when the reviewer goes back to it (queue.js).
    try {
      window.sessionStorage.setItem("reviewqueue-opened", workspace.dataset.trace);
    } catch (e) { /* no storage here: the queue starts at its top */ }
    sentences = Array.prototype.slice.call(document.querySelectorAll("[data-sentence]"));
    document.querySelectorAll("details.cite").forEach(function (details) {
      details.addEventListener("toggle", function () {
        if (details.open) fillFromAbove(details);
        recordExpansion(details);
      });
    });
    document.querySelectorAll("[data-expand-all]").forEach(function (button) {
      button.addEventListener("click", expandAll);
    });
    document.querySelectorAll("[data-add-claim]").forEach(function (button) {
      document.querySelectorAll("[data-blank-row]").forEach(function (row) { row.hidden = true; });
      button.hidden = false;
      button.addEventListener("click", addClaim);
    });
    document.querySelectorAll("[data-then-next]").forEach(function (label) {
      var box = label.querySelector("input");
      label.hidden = false;
      box.addEventListener("change", function () {
        document.querySelectorAll("[data-then]").forEach(function (then) {
          then.value = box.checked ? "next" : "queue";
        });
      });
    });
    showFirstError();
    startOnTheQuestion();
    // After the focus moves: that is no sign of the reviewer (see `active`).
    keepLease();
    // A refused form comes back drawn at the form's address (…/decide): give the page its
    // own, so Reload and Back open the item instead of offering to send the form again.
    var own = workspace.dataset.itemUrl;
    if (own && window.location.pathname !== own.split("?")[0]) {
      window.history.replaceState(null, "", own);
    }
  });
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a[href]");
    if (!workspace || !workspace.dataset.leaseMine || !link || event.defaultPrevented ||
        event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey ||
        event.altKey || link.target || link.hasAttribute("download") ||
        link.origin !== window.location.origin || link.getAttribute("href").charAt(0) === "#" ||
        (link.pathname === window.location.pathname && link.search === window.location.search)) {
      return;
    }
    event.preventDefault();
    leaveThenGo(link.href);
  });
  // A second press while the first form is on its way sends nothing more. Unless text typed
  // in another form would be lost (common.js asks first): the reader may stay, and then the
  // next press must go. A submit that loads no page (the keyboard help's Close, a form its
  // own handler stopped: those run before this one, on the document) is not on its way.
  var sending = false;
  document.addEventListener("submit", function (event) {
    if (!window.ReviewQueue.submitLoadsPage(event)) return;
    if (sending) { event.preventDefault(); return; }
    if (!window.ReviewQueue.unsentBesides(event.target)) sending = true;
  });
  window.addEventListener("beforeunload", function () { if (workspace) leaving(); });
  window.addEventListener("pagehide", function () { if (workspace) leaving(); });
  window.addEventListener("pageshow", function (event) {
    sending = false;
    // Back from the history cache: the page said it was leaving, so renew now.
    if (event.persisted && workspace && workspace.dataset.leaseMine) renewLease(true);
  });

  // A refused decision comes back as a whole page, scrolled to the top: bring the first
  // error in the decision forms into view, with the cursor in its field.
  function showFirstError() {
    var error = document.querySelector("#decide .errorlist");
    if (!error) {
      // Refused with no form left to hold it: what the reviewer wrote is shown to copy.
      var unsaved = document.querySelector("[data-unsaved]");
      if (unsaved) unsaved.scrollIntoView({ block: "center" });
      return;
    }
    var box = error.closest("details");
    if (box) box.open = true;
    // Each field's errors follow the field itself (or its length counter, which follows it).
    var field = error.previousElementSibling;
    if (field && field.matches("[data-near-limit]")) field = field.previousElementSibling;
    // A box written inside its label ("Approve it all the same"): the label's own control.
    if (field && field.tagName === "LABEL" && field.control) field = field.control;
    if (!field || !field.matches("input:not([type=hidden]), select, textarea")) {
      field = (error.closest("td") || error.parentElement)
        .querySelector("input:not([type=hidden]), select, textarea");
    }
    error.scrollIntoView({ block: "center" });
    if (field) field.focus({ preventScroll: true });
  }

  // A page opened with nothing to take the focus (a claim from the queue, "Next", a decision's
  // "then the next answer") starts it on the question, the page's heading: the first Tab
  // leads into the answer instead of through the top bar, and a screen reader reads the
  // question out. A refused form's field, an element the page marks autofocus, a #target or
  // the unsaved text it scrolled to keep theirs.
  function startOnTheQuestion() {
    var focus = document.activeElement;
    if ((focus && focus !== document.body) || window.location.hash ||
        document.querySelector("[autofocus], [data-unsaved]")) return;
    var question = document.querySelector("[data-question]");
    if (question) question.focus({ preventScroll: true });
  }

  document.addEventListener("keydown", function (event) {
    var rq = window.ReviewQueue;
    if (!workspace || !rq || rq.shortcutsOff(event)) return;
    var handled = true;
    switch (event.key) {
      case "j": moveTo(current + 1); break;
      case "k": moveTo(current - 1); break;
      case "Enter":
        if (current < 0 || document.activeElement !== sentences[current]) { handled = false; break; }
        var cites = sentences[current].querySelectorAll("details.cite");
        var open = Array.prototype.some.call(cites, function (d) { return !d.open; });
        cites.forEach(function (d) { d.open = open; });
        break;
      case "o": expandAll(); break;
      case "a": openAction("approve", "textarea"); break;
      case "e": openAction("edit", "textarea"); break;
      case "r": openAction("reject", "select"); break;
      case "u": leaveThenGo(document.querySelector(".crumbs a").href); break;
      default: handled = false;
    }
    if (handled) event.preventDefault();
  });
})();
