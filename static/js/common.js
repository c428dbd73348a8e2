/* Shared enhancements: the help dialog, the language picker, and helpers for page scripts.
   Everything here is optional: every page works without JavaScript. */
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  function isTyping(event) {
    var el = event.target;
    if (!el || !el.tagName) return false;
    var tag = el.tagName.toLowerCase();
    // A box, a radio or a button takes no text: a letter pressed there is a shortcut.
    if (tag === "input" && /^(checkbox|radio|button|submit|reset)$/.test(el.type)) return false;
    return tag === "input" || tag === "textarea" || tag === "select" || el.isContentEditable;
  }

  function hasModifier(event) {
    return event.ctrlKey || event.metaKey || event.altKey;
  }

  // Page shortcuts (j, k, n, a...) wait while the reader types, holds a modifier, or has a
  // dialog open (the keyboard help): a key pressed there must not act on the page behind it.
  function shortcutsOff(event) {
    return isTyping(event) || hasModifier(event) || !!document.querySelector("dialog[open]");
  }

  function csrfToken() {
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function openHelp() {
    var dialog = document.getElementById("help");
    if (dialog && typeof dialog.showModal === "function" && !dialog.open) dialog.showModal();
  }

  document.addEventListener("DOMContentLoaded", function () {
    // What was just done ("Approved t-1") is said as well as drawn: a live region is read
    // out when its text changes, not when it is there as the page loads.
    var shown = document.querySelector("[data-messages]");
    var live = document.querySelector("body > [role=status]");
    if (shown && live) {
      var said = Array.prototype.map.call(shown.querySelectorAll(".message"), function (m) {
        return m.textContent.trim();
      }).join(" ");
      setTimeout(function () { live.textContent = said; }, 100);
    }
    // A choice made with the mouse applies at once. Arrow keys change a closed menu's value
    // one step at a time, so from the keyboard the menu waits for its button instead.
    document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
      var keyed = false;
      select.addEventListener("keydown", function () { keyed = true; });
      select.addEventListener("pointerdown", function () { keyed = false; });
      select.addEventListener("change", function () {
        if (!keyed) { select.form.submit(); return; }
        select.form.querySelectorAll(".js-hidden").forEach(function (b) {
          b.classList.remove("js-hidden");
        });
      });
    });
    // A refused form that lists its bad fields (data-error-summary) puts the cursor in the
    // first of them; the list's links lead to each. So does a sent form drawn again with a bad
    // field and no list (a withdrawal, a dismissal, a webhook): the page opens at its top, and
    // the refusal, further down, would otherwise go unseen and unsaid.
    var summary = document.querySelector("[data-error-summary]");
    var invalid = document.querySelector(summary ? "[aria-invalid=true]"
                                                 : "form[method=post] [aria-invalid=true]");
    if (invalid) {
      var box = invalid.closest("details");
      if (box) box.open = true;
      invalid.scrollIntoView({ block: "center" });
      invalid.focus({ preventScroll: true });
    }
    // Only a page with shortcuts has their help: elsewhere the button stays hidden.
    var hasHelp = !!document.getElementById("help");
    document.querySelectorAll("[data-help]").forEach(function (button) {
      button.hidden = !hasHelp;
      button.addEventListener("click", openHelp);
    });
  });

  // What the keyboard brings into view (j/k on the queue and an item page, a refused form's
  // first error) stops below the sticky top bar, whose height changes with the window; on a
  // phone the bar scrolls away with the page (app.css) and leaves nothing to clear.
  function clearTopBar() {
    var bar = document.querySelector(".topbar");
    if (!bar) return;
    var sticky = getComputedStyle(bar).position === "sticky";
    document.documentElement.style.scrollPaddingTop = sticky ? (bar.offsetHeight + 8) + "px" : "";
  }
  document.addEventListener("DOMContentLoaded", clearTopBar);
  window.addEventListener("resize", clearTopBar);

  // A table wider than its box scrolls sideways inside it. The side with more to see fades
  // out (data-more, styled in app.css), so a reader on a phone can tell the table goes on.
  var SCROLLERS = ".table-wrap, .table-scroll, main table:not(.queue)";

  function markMore(box) {
    var left = box.scrollLeft > 1;
    var right = box.scrollLeft + box.clientWidth < box.scrollWidth - 1;
    var more = left && right ? "both" : left ? "left" : right ? "right" : "";
    if (more) box.setAttribute("data-more", more);
    else box.removeAttribute("data-more");
  }

  function markAll() { document.querySelectorAll(SCROLLERS).forEach(markMore); }

  document.addEventListener("DOMContentLoaded", markAll);
  window.addEventListener("resize", markAll);
  document.addEventListener("scroll", function (event) {  // scroll does not bubble: capture it
    var box = event.target;
    if (box.matches && box.matches(SCROLLERS)) markMore(box);
  }, { capture: true, passive: true });

  // A text area with a limit (data-limit) counts its characters as one types, as the server
  // counts them (a line break is one): "4,980 / 5,000", marked when over. There is no
  // maxlength, which would cut a long paste without a word; the server refuses it whole and
  // gives it back.
  // A field whose template places no counter gets one after it, shown once the text nears
  // its limit (a short note's field stays as it was).
  var NEAR_LIMIT = 0.8;

  // Characters as the server counts them: an emoji (two UTF-16 units here) is one.
  var PAIR = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g;

  // A field marked data-limit-of="value" holds a value that may be written in JSON quotes
  // (a fact's, with its line breaks as \n): the limit is the value's, as the server counts it.
  function counted(area) {
    var text = area.value;
    if (area.getAttribute("data-limit-of") !== "value") return text;
    var trimmed = text.trim();
    if (trimmed.charAt(0) !== '"') return text;
    try {
      var value = JSON.parse(trimmed);
      return typeof value === "string" ? value : text;
    } catch (e) {
      return text;
    }
  }

  function countChars(area, out) {
    var limit = Number(area.getAttribute("data-limit"));
    var text = counted(area);
    var used = text.length - (text.match(PAIR) || []).length;
    out.textContent = used.toLocaleString() + " / " + limit.toLocaleString();
    out.classList.toggle("over", used > limit);
    if (out.hasAttribute("data-near-limit")) out.hidden = used < limit * NEAR_LIMIT;
  }

  function follow(area, out) {
    countChars(area, out);
    area.addEventListener("input", function () { countChars(area, out); });
  }

  // Counters for the limited fields under `root` that have none yet (item.js calls it for a
  // claim row it adds).
  function addCounters(root) {
    root.querySelectorAll("[data-limit][id]").forEach(function (area) {
      if (document.querySelector('[data-counter-for="' + area.id + '"]')) return;
      var out = document.createElement("span");
      out.className = "hint counter";
      out.id = area.id + "-count";
      out.setAttribute("data-counter-for", area.id);
      out.setAttribute("data-near-limit", "");
      out.setAttribute("aria-live", "polite");
      area.insertAdjacentElement("afterend", out);
      var described = area.getAttribute("aria-describedby");
      area.setAttribute("aria-describedby", (described ? described + " " : "") + out.id);
      follow(area, out);
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-counter-for]").forEach(function (out) {
      var area = document.getElementById(out.getAttribute("data-counter-for"));
      if (area) follow(area, out);
    });
    addCounters(document);
  });

  // Text typed in a form that asks for it (data-unsent-guard: a decision, a note or a reply)
  // and not sent: leaving the page asks first, as the text would go with it. Sending that
  // form is no loss; sending another one (Re-evaluate now, Release, Sign out) or following a
  // link is, and asks too.
  var unsent = [];
  function guarded(form) {
    return !!form && (form.hasAttribute("data-unsent-guard") || !!form.closest("#decide"));
  }
  function unsentBesides(form) {
    return unsent.some(function (other) { return other !== form; });
  }
  document.addEventListener("input", function (event) {
    var form = event.target.form;
    if (guarded(form) && unsent.indexOf(form) < 0) unsent.push(form);
  });
  // Whether a submit event is on its way to load a page. A form that only closes a dialog
  // (method="dialog": the keyboard help's Close) loads none, nor does one a handler before
  // this one has stopped.
  function submitLoadsPage(event) {
    if (event.defaultPrevented) return false;
    var button = event.submitter;
    var method = button && button.hasAttribute("formmethod") ? button.formMethod
                                                             : event.target.method;
    return method !== "dialog";
  }
  // On the window, after every page script's own handler: a form one of them stopped is
  // not sent, and keeps asking.
  window.addEventListener("submit", function (event) {
    if (submitLoadsPage(event)) {
      unsent = unsent.filter(function (form) { return form !== event.target; });
    }
  });
  window.addEventListener("beforeunload", function (event) {
    if (unsent.length) { event.preventDefault(); event.returnValue = ""; }
  });

  document.addEventListener("keydown", function (event) {
    if (event.key === "?" && !isTyping(event) && !hasModifier(event)) {
      event.preventDefault();
      openHelp();
    }
  });

  window.ReviewQueue = { shortcutsOff: shortcutsOff, csrfToken: csrfToken, addCounters: addCounters,
                         unsentBesides: unsentBesides, submitLoadsPage: submitLoadsPage };
})();
