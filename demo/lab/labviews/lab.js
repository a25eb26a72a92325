// The double-click lab's page script. Without it every Run button is a plain
// form post and the page comes back with the result; with it a run happens
// in place, and while it is in flight the card's timeline and the database
// inspector are refreshed from the server a few times a second. The server
// renders every fragment, so this script only fetches and swaps them.
"use strict";

(function () {
  var lab = document.querySelector("[data-lab]");
  if (!lab || !window.fetch || !window.FormData) {
    return;
  }
  var POLL_MS = 250;
  var running = false;
  var headers = function (what) { return { "Lab-Fragment": what }; };

  function parse(html) {
    var t = document.createElement("template");
    t.innerHTML = html.trim();
    return t.content.firstElementChild;
  }

  // swapResult moves a fresh result panel's content into the one on the
  // page, which stays in place so that its live region keeps announcing.
  function swapResult(fresh) {
    var target = fresh && document.getElementById(fresh.id);
    if (!target) {
      return;
    }
    target.replaceChildren.apply(target, Array.prototype.slice.call(fresh.childNodes));
    ["data-running", "aria-busy"].forEach(function (name) {
      if (fresh.hasAttribute(name)) {
        target.setAttribute(name, fresh.getAttribute(name));
      } else {
        target.removeAttribute(name);
      }
    });
  }

  function refreshInspector(url) {
    var panel = document.getElementById("inspector");
    if (!url) {
      // While a run is in flight, follow its shopper.
      url = panel && panel.hasAttribute("data-running") ? panel.getAttribute("data-poll") : "/lab/inspector";
    }
    return fetch(url, { headers: headers("inspector"), credentials: "same-origin" })
      .then(function (resp) { return resp.ok ? resp.text() : null; })
      .then(function (html) {
        var fresh = html && parse(html);
        var current = document.getElementById("inspector");
        // Only a panel replaces the panel: an answer that is anything
        // else (a page, an error) leaves the one shown in place.
        if (fresh && fresh.id === "inspector" && current) {
          current.replaceWith(fresh);
        }
      })
      .catch(function () {});
  }

  function refreshLive() {
    return fetch("/lab/live", { headers: headers("live"), credentials: "same-origin" })
      .then(function (resp) { return resp.status === 200 ? resp.text() : null; })
      .then(function (html) {
        if (html && running) {
          swapResult(parse(html));
        }
      })
      .catch(function () {});
  }

  function poll() {
    if (!running) {
      return;
    }
    Promise.all([refreshLive(), refreshInspector()]).then(function () {
      window.setTimeout(poll, POLL_MS);
    });
  }

  function setBusy(form, busy) {
    lab.querySelectorAll("form[data-lab-run] button, .lab-fault-form button").forEach(function (b) {
      b.disabled = busy;
    });
    var button = form.querySelector("button");
    var label = form.querySelector(".lab-run-label");
    if (busy) {
      button.setAttribute("aria-busy", "true");
      label.textContent = "Running…";
    } else {
      button.removeAttribute("aria-busy");
      label.textContent = "Run";
    }
  }

  function showError(form, message) {
    var result = form.closest(".lab-card").querySelector(".lab-result");
    var p = document.createElement("p");
    p.className = "note bad";
    p.setAttribute("role", "alert");
    p.textContent = message;
    result.prepend(p);
  }

  lab.addEventListener("submit", function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-lab-run")) {
      return;
    }
    event.preventDefault();
    if (running) {
      return;
    }
    running = true;
    setBusy(form, true);
    window.setTimeout(poll, 100);
    fetch(form.action, { method: "POST", body: new FormData(form), headers: headers("card"), credentials: "same-origin" })
      .then(function (resp) {
        return resp.text().then(function (text) {
          running = false;
          if (resp.ok) {
            swapResult(parse(text));
          } else if (resp.status === 409) {
            showError(form, text);
          } else {
            showError(form, "The run could not be started (" + resp.status + "). Reload the page and try again.");
          }
        });
      })
      .catch(function () {
        running = false;
        showError(form, "The server did not answer. Is it still running?");
      })
      .then(function () {
        setBusy(form, false);
        return refreshInspector("/lab/inspector");
      });
  });

  // Presenter mode: one card at a time. The Previous and Next links load
  // the neighbouring card without script; here they, and the arrow, Page
  // and Home/End keys, move in place, so that results already shown stay.
  if (lab.hasAttribute("data-present")) {
    var cards = Array.prototype.slice.call(lab.querySelectorAll(".lab-card"));
    var nav = lab.querySelector(".lab-present-nav");
    var current = Math.max(0, cards.findIndex(function (c) { return c.hasAttribute("data-current"); }));
    var show = function (i) {
      i = Math.max(0, Math.min(cards.length - 1, i));
      cards[current].removeAttribute("data-current");
      cards[i].setAttribute("data-current", "");
      current = i;
      var prev = nav.querySelector("[data-present-step='-1']");
      var next = nav.querySelector("[data-present-step='1']");
      prev.href = cards[Math.max(0, i - 1)].getAttribute("data-present-url");
      next.href = cards[Math.min(cards.length - 1, i + 1)].getAttribute("data-present-url");
      nav.querySelector("[data-present-n]").textContent = String(i + 1);
      history.replaceState(null, "", cards[i].getAttribute("data-present-url"));
    };
    nav.addEventListener("click", function (event) {
      var link = event.target.closest("[data-present-step]");
      if (!link || event.metaKey || event.ctrlKey || event.shiftKey) {
        return;
      }
      event.preventDefault();
      show(current + Number(link.getAttribute("data-present-step")));
    });
    document.addEventListener("keydown", function (event) {
      var t = event.target;
      if (event.altKey || event.ctrlKey || event.metaKey ||
          (t && t.closest && t.closest("input, select, textarea, [contenteditable]"))) {
        return;
      }
      var step = { ArrowRight: 1, PageDown: 1, ArrowLeft: -1, PageUp: -1 }[event.key];
      if (event.key === "Home") {
        show(0);
      } else if (event.key === "End") {
        show(cards.length - 1);
      } else if (step) {
        show(current + step);
      } else {
        return;
      }
      event.preventDefault();
    });
  }

  // A key of the inspector, or a run's shopper: show it in place.
  lab.addEventListener("click", function (event) {
    var link = event.target.closest("a[data-inspect]");
    if (!link || event.metaKey || event.ctrlKey || event.shiftKey) {
      return;
    }
    event.preventDefault();
    var inInspector = !!link.closest("#inspector");
    refreshInspector("/lab/inspector" + new URL(link.href).search).then(function () {
      var panel = document.getElementById("inspector");
      var current = panel && panel.querySelector("a[aria-current]");
      if (inInspector && current) {
        current.focus();
      } else if (panel) {
        panel.scrollIntoView({ block: "start" });
      }
    });
  });
})();
