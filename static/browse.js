// What the pages a shopper browses add with JavaScript: times in the
// shopper's own zone (the receipt, the orders list) and Add to cart that
// stays on the catalog. A file apart from app.js because the checkout page
// does not need it and has a byte budget (page_weight_test.go); the pages
// that do link it themselves (views.Page.Scripts). Without JavaScript each
// works as the server wrote it: times in UTC, said so, and an add that
// comes back to the catalog.
"use strict";

(function () {
  // A <time data-local> is written in UTC by the server; this says it in
  // the browser's zone and way of writing dates, zone named, and keeps
  // the UTC text as its title.
  var formats = {
    date: { day: "numeric", month: "short", year: "numeric" },
    clock: { hour: "2-digit", minute: "2-digit", timeZoneName: "short" },
  };
  document.querySelectorAll("time[data-local][datetime]").forEach(function (el) {
    var when = new Date(el.getAttribute("datetime"));
    var format = formats[el.getAttribute("data-local")];
    if (!format || isNaN(when) || !window.Intl) {
      return;
    }
    el.title = el.textContent;
    el.textContent = new Intl.DateTimeFormat(undefined, format).format(when);
  });

  // The catalog's add form is sent in place. Its answer is the catalog the
  // server comes back to without JavaScript, and the product's card and
  // the header's Cart link are taken from it: one source of what the page
  // says, and the card's next form (its quantity one more). The live
  // region says what happened. The form sets a quantity, so sending it
  // again is harmless: any trouble sends it the ordinary way, and the
  // server's page answers.
  var live = document.querySelector("[data-cart-live]");
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-add") || !live || !window.fetch) {
      return;
    }
    event.preventDefault();
    if (form.dataset.sending) {
      return;
    }
    form.dataset.sending = "true";
    var card = form.closest("[data-sku]");
    fetch(form.action, { method: "POST", body: new URLSearchParams(new FormData(form)), credentials: "same-origin" })
      .then(function (resp) {
        if (!resp.ok) {
          throw new Error("answered " + resp.status);
        }
        return resp.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById(card.id);
        var nav = doc.querySelector("[data-testid=nav-cart]");
        var note = fresh && fresh.querySelector("[data-flash]");
        if (!nav || !note) {
          throw new Error("not the catalog");
        }
        // The live region speaks; the note is only seen.
        note.removeAttribute("role");
        document.querySelectorAll(".product [data-flash]").forEach(function (old) {
          old.remove();
        });
        card.replaceWith(fresh);
        document.querySelector("[data-testid=nav-cart]").replaceWith(nav);
        fresh.querySelector("button").focus();
        live.textContent = note.firstElementChild.textContent + " " + (nav.getAttribute("aria-label") || "") + ".";
      })
      .catch(function () {
        form.submit();
      });
  });
})();
