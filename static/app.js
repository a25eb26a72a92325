// Progressive enhancement for forms marked data-busy (the pay button and
// its retries). The server is what guarantees that an order is charged once
// however often its form is sent; this only spares the shopper the doubt of
// a button that seems to do nothing.
"use strict";

(function () {
  // After the first submit the button says the order is on its way, and a
  // second submit of the same form is dropped. The button is disabled on the
  // next tick: disabling it during the submit event would leave its
  // name/value out of the request the browser is about to send.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-busy")) {
      return;
    }
    if (form.dataset.submitted === "true") {
      event.preventDefault();
      return;
    }
    form.dataset.submitted = "true";
    var button = form.querySelector("button[type=submit]");
    if (!button) {
      return;
    }
    button.dataset.label = button.textContent;
    window.setTimeout(function () {
      button.disabled = true;
      button.setAttribute("aria-busy", "true");
      button.textContent = form.getAttribute("data-busy") || "Processing…";
    }, 0);
  });

  // Coming back with the Back button may restore the page exactly as it was
  // left, button still busy. Make it usable again: sending the form a second
  // time is safe, since it carries the same key.
  window.addEventListener("pageshow", function (event) {
    if (!event.persisted) {
      return;
    }
    document.querySelectorAll("form[data-busy]").forEach(function (form) {
      delete form.dataset.submitted;
      var button = form.querySelector("button[type=submit]");
      if (button && button.dataset.label) {
        button.disabled = false;
        button.removeAttribute("aria-busy");
        button.textContent = button.dataset.label;
      }
    });
  });
})();
