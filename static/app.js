// Progressive enhancement of the shop's pages: the busy state of forms
// marked data-busy (the pay button and its retries, the pickup form), the
// test cards and the card's check digit, the cart's note, the receipt's
// points. The server is what guarantees that an order is charged once
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
    if (form.hasAttribute("data-resubmit") && kit) {
      event.preventDefault();
      send(form, event.submitter);
    }
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

  // Forms marked data-resubmit (the pay and pickup forms) are sent by the
  // kit's module (idem/idemjs; the form names its URL), so that a network
  // error does not end on the browser's error page: the form is sent again,
  // with its key, after a growing random wait, and the shopper is told so.
  // Any answer from the server is a page to show, so none is retried.
  // Without fetch, or when the module cannot be loaded, the form is sent
  // the ordinary way.
  var kitForm = document.querySelector("form[data-idem-js]");
  var kit = kitForm && window.fetch ? import(kitForm.getAttribute("data-idem-js")) : null;

  function send(form, submitter) {
    kit.then(function (idem) {
      return idem.submit(form, {
        submitter: submitter,
        retryOn: [],
        attempts: 6,
        onRetry: function (r) {
          say(form, "Connection lost. Sending your order again with the same key (attempt " +
            (r.attempt + 1) + " of 6); you will not be charged twice.");
        },
      });
    }, function () {
      HTMLFormElement.prototype.submit.call(form);
      return new Promise(function () {});
    }).then(function (answer) {
      var resp = answer.response;
      if (resp.redirected) {
        window.location.assign(resp.url);
        return;
      }
      return resp.text().then(showPage);
    }, function () {
      say(form, "Still no connection. Nothing is lost: press the button again when you are back online. " +
        "It sends the same order key, so you will not be charged twice.");
      release(form);
    });
  }

  // showPage replaces the page with an answer the server rendered for the
  // POST (a card error, a decline, the processing or outage page),
  // following its meta refresh and autofocus, which a replaced body would
  // not (focus would fall to <body>, and a screen reader say nothing). A
  // refresh in <noscript> is not for us: this parser reads it as an element.
  function showPage(html) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    document.title = doc.title;
    document.body.replaceWith(doc.body);
    var focus = document.body.querySelector("[autofocus]");
    if (focus) {
      focus.focus();
    }
    followOrder(document.body);
    var refresh = doc.querySelector("head > meta[http-equiv=refresh]");
    var m = refresh && /^(\d+);url=(.+)$/i.exec(refresh.getAttribute("content") || "");
    if (m) {
      window.setTimeout(function () {
        window.location.assign(m[2]);
      }, Number(m[1]) * 1000);
    }
  }

  // The outage page counts down to when trying again is useful, then asks
  // the order's status every 3 s without leaving the page (and the card in
  // its form): a placed order goes to its receipt, a decline shows its
  // form. Without script the page refreshes to the status instead.
  function followOrder(root) {
    var el = root.querySelector("[data-countdown]");
    if (!el || !window.fetch) {
      return;
    }
    var left = Number(el.getAttribute("data-countdown")) || 0;
    var tries = 0;
    var tick = function () {
      if (!el.isConnected || tries++ > 40) {
        return;
      }
      el.textContent = "You can try again " + (left > 0 ? "in " + left + (left > 1 ? " seconds" : " second") : "now") +
        ". Meanwhile this page follows your order.";
      if (left-- > 0) {
        window.setTimeout(tick, 1000);
        return;
      }
      fetch(el.getAttribute("data-follow"), { credentials: "same-origin" })
        .then(function (resp) {
          if (resp.redirected) {
            return window.location.assign(resp.url);
          }
          if (resp.status === 402) {
            return resp.text().then(showPage);
          }
          window.setTimeout(tick, 3000);
        })
        .catch(function () {
          window.setTimeout(tick, 3000);
        });
    };
    tick();
  }
  followOrder(document);

  function say(form, text) {
    var status = form.querySelector("[data-resubmit-status]");
    if (!status) {
      status = document.createElement("p");
      status.className = "hint";
      status.setAttribute("role", "status");
      status.setAttribute("data-resubmit-status", "");
      status.setAttribute("data-testid", "resubmit-status");
      form.appendChild(status);
    }
    status.textContent = text;
  }

  function release(form) {
    delete form.dataset.submitted;
    var button = form.querySelector("button[type=submit]");
    if (button && button.dataset.label) {
      button.disabled = false;
      button.removeAttribute("aria-busy");
      button.textContent = button.dataset.label;
    }
  }

  // Other checkout tabs learn that the cart was ordered. A shopper has one
  // open cart, so an order placed in any tab of this browser closes the
  // cart every open checkout tab shows: the receipt announces the order, and
  // those tabs say so and point to it. Paying there would only replay the
  // order (the same cart version has the same key); this spares the doubt.
  // Without BroadcastChannel, or without JavaScript, the server's guarantee
  // is all there is, and it is enough.
  if ("BroadcastChannel" in window) {
    var receipt = document.querySelector("[data-order-url][data-cart-id]");
    var onMessage = function (event) {
      var msg = event.data || {};
      var note = document.querySelector("[data-testid=cart-ordered-elsewhere]");
      var form = document.querySelector("form[data-cart-id]");
      if (msg.type !== "cart-ordered" || !note || !form || msg.cart !== form.getAttribute("data-cart-id") ||
          typeof msg.order !== "string" || msg.order.indexOf("/orders/") !== 0) {
        return;
      }
      var link = note.querySelector("a");
      link.setAttribute("href", msg.order);
      link.textContent = "See the order";
      note.hidden = false;
      var button = form.querySelector("button[type=submit]");
      if (button) {
        button.disabled = true;
        button.textContent = "Already ordered";
      }
    };
    // The channel is closed while the page sits in the back/forward cache:
    // a message to a cached page would evict it, and Back from the receipt
    // must show this very form again (its key replays the order).
    var channel = null;
    var open = function () {
      channel = new BroadcastChannel("exactlyonce-cart");
      channel.addEventListener("message", onMessage);
    };
    open();
    if (receipt) {
      channel.postMessage({
        type: "cart-ordered",
        cart: receipt.getAttribute("data-cart-id"),
        order: receipt.getAttribute("data-order-url"),
      });
    }
    window.addEventListener("pagehide", function () {
      if (channel) {
        channel.close();
        channel = null;
      }
    });
    window.addEventListener("pageshow", function (event) {
      if (event.persisted && !channel) {
        open();
      }
    });
  }

  // The test cards listed under the pay form fill the card field when
  // clicked, and the field says at once when a number fails the Luhn check
  // every card number passes (a mistyped digit). The hint only helps: the
  // form is sent anyway, and the server, which applies the same rule
  // (checkout.NormalizeCard), is the judge.
  function luhn(digits) {
    var sum = 0;
    for (var i = 0; i < digits.length; i++) {
      var d = Number(digits.charAt(digits.length - 1 - i));
      if (i % 2 === 1) {
        d *= 2;
        if (d > 9) {
          d -= 9;
        }
      }
      sum += d;
    }
    return sum % 10 === 0;
  }

  function checkCard(input) {
    var hint = document.querySelector("[data-card-check]");
    if (!hint) {
      return;
    }
    var digits = input.value.replace(/[ -]/g, "");
    var wrong = /^[0-9]{12,19}$/.test(digits) && !luhn(digits);
    hint.textContent = wrong ? "This number has a typo: one of its digits is wrong." : "";
    hint.classList.toggle("bad", wrong);
  }

  document.addEventListener("click", function (event) {
    var button = event.target instanceof Element && event.target.closest("[data-fill-card]");
    var input = document.querySelector("input[data-luhn]");
    if (!button || !input) {
      return;
    }
    input.value = button.getAttribute("data-fill-card");
    checkCard(input);
    input.focus();
  });
  document.addEventListener("input", function (event) {
    if (event.target instanceof HTMLInputElement && event.target.hasAttribute("data-luhn")) {
      checkCard(event.target);
    }
  });

  // A note that says what the last form did (the cart's "Added …") is
  // for that visit only: the address loses its ?done=, so a reload or a
  // bookmark does not say it again.
  if (document.querySelector("[data-flash]") && window.history.replaceState) {
    window.history.replaceState(null, "", window.location.pathname);
  }

  // A receipt whose points are still being added asks for itself again
  // every two seconds, for a minute at most, and takes the points lines
  // from the answer once the loyalty job has run. Without JavaScript, a
  // reload shows them.
  var pending = document.querySelector("[data-points-pending]");
  if (pending && window.fetch) {
    // The page says "reload" without script.
    pending.textContent = "being added, this updates by itself";
    var tries = 0;
    var poll = function () {
      tries++;
      fetch(window.location.pathname, { credentials: "same-origin" })
        .then(function (resp) {
          return resp.ok ? resp.text() : "";
        })
        .then(function (html) {
          var doc = new DOMParser().parseFromString(html, "text/html");
          var points = doc.querySelector("[data-testid=order-points]");
          if (points && !points.hasAttribute("data-points-pending")) {
            ["order-points", "points-balance"].forEach(function (id) {
              var now = document.querySelector("[data-testid=" + id + "]");
              var fresh = doc.querySelector("[data-testid=" + id + "]");
              if (now && fresh) {
                // The text, not the node: the line stays the live region
                // that announces it.
                now.textContent = fresh.textContent;
                now.removeAttribute("data-points-pending");
              }
            });
            return;
          }
          if (tries < 30) {
            window.setTimeout(poll, 2000);
          }
        })
        .catch(function () {
          if (tries < 30) {
            window.setTimeout(poll, 2000);
          }
        });
    };
    window.setTimeout(poll, 2000);
  }

  // A checkout page shown again from a cache (Back from the receipt: the
  // back/forward cache, or the HTTP cache) is not asked of the server. It
  // asks its key's status: a paid order redirects to its receipt, and the
  // page says "already paid" with a link to it, in place of a Pay button
  // that would only replay the order while the shopper believes it failed.
  window.addEventListener("pageshow", function (event) {
    var nav = performance.getEntriesByType("navigation")[0];
    var form = document.querySelector("form[data-status-url]");
    var note = document.querySelector("[data-already-paid]");
    if (!(event.persisted || (nav && nav.type === "back_forward")) || !form || !note || !window.fetch) {
      return;
    }
    fetch(form.getAttribute("data-status-url"), { credentials: "same-origin" }).then(function (resp) {
      var path = resp.redirected ? new URL(resp.url).pathname : "";
      if (path.indexOf("/orders/") !== 0) {
        return;
      }
      note.querySelector("a").setAttribute("href", path);
      note.hidden = false;
      form.querySelector("button[type=submit]").disabled = true;
      form.querySelector("button[type=submit]").textContent = "Already paid";
      var count = document.querySelector("[data-testid=cart-count]");
      if (count) {
        count.parentElement.removeAttribute("aria-label");
        count.remove();
      }
      note.focus();
    });
  });

  // Coming back with the Back button may restore the page exactly as it was
  // left, button still busy. Make it usable again: sending the form a second
  // time is safe, since it carries the same key.
  window.addEventListener("pageshow", function (event) {
    if (!event.persisted) {
      return;
    }
    document.querySelectorAll("form[data-busy]").forEach(release);
  });
})();
