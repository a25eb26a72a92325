package app

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"exactlyonce/idem"
	"exactlyonce/idem/idemhttp"
	"exactlyonce/internal/database"
	"exactlyonce/internal/refund"
	"exactlyonce/internal/session"
	"exactlyonce/internal/web"
	"exactlyonce/views"
)

// OperatorChannel is the admin listener's channel of refunds
// (refund.Ask.Channel): an operator's refund is answered with the order's
// admin page.
const OperatorChannel = "operator"

// operatorRefundAnswer is the answer stored under an operator's refund key:
// back to the order's admin page, which tells how it ended, the first time
// and on every resubmit.
func operatorRefundAnswer(r refund.Refund) idem.Response {
	return idem.Redirect("/orders/" + r.OrderID.String() + "?" + url.Values{"refund": {r.State}}.Encode())
}

// refundVersion binds an operator's refund form key to its order.
func refundVersion(orderID uuid.UUID) string { return "refund:" + orderID.String() }

// adminRefundForm is the refund form of the order's admin page, with a key
// minted now: sending it twice (a double click, a resubmit after a lost
// answer) refunds once.
func (a *App) adminRefundForm(orderID uuid.UUID) *views.AdminRefundForm {
	return &views.AdminRefundForm{Action: "/orders/" + orderID.String() + "/refunds",
		Key: a.refundKeys.Mint(refund.OperatorScope, refundVersion(orderID)), NeedsToken: a.cfg.AdminToken == ""}
}

// newRefundKeys signs the operator's refund form keys: with the shop's
// session secret, or a random one (forms then die with the process).
func newRefundKeys(cfg Config) *idem.Forms {
	secret := []byte(cfg.SessionSecret)
	if len(secret) == 0 {
		secret = session.RandomSecret()
	}
	return idem.NewForms(secret, checkoutFormTTL(cfg.KeyRetention))
}

// adminRefund is POST /orders/{id}/refunds on the admin listener: an
// operator refunds part (or all that is left) of an order. Money moves, so
// it needs the operator's credential (ADMIN_TOKEN): without one configured
// the listener refunds nothing, whoever reaches it.
func (a *App) adminRefund(w http.ResponseWriter, r *http.Request) {
	token := a.cfg.AdminToken
	switch {
	case token == "":
		http.Error(w, "forbidden: refunds need an operator credential; set ADMIN_TOKEN", http.StatusForbidden)
		return
	case !operator(r, token):
		w.Header().Set("WWW-Authenticate", `Basic realm="exactlyonce admin", charset="UTF-8"`)
		http.Error(w, "unauthorized: refunds ask for the operator's credential (ADMIN_TOKEN)", http.StatusUnauthorized)
		return
	}
	ctx := r.Context()
	orderID, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		http.Error(w, "not an order id: want a UUID", http.StatusBadRequest)
		return
	}
	amount, err := parseAmount(r.FormValue("amount"))
	if err != nil {
		http.Error(w, "amount: "+err.Error()+"; nothing was refunded", http.StatusBadRequest)
		return
	}
	reason := strings.TrimSpace(r.FormValue("reason"))
	if len(reason) > 200 {
		http.Error(w, "reason: at most 200 characters; nothing was refunded", http.StatusBadRequest)
		return
	}
	key := idemhttp.FormKeyOf(r)
	if err := a.refundKeys.Verify(refund.OperatorScope, refundVersion(orderID), key); err != nil {
		http.Error(w, "this form's key is missing, foreign or too old: open the order's page again; nothing was refunded", http.StatusBadRequest)
		return
	}
	found, err := a.orderWithID(ctx, orderID)
	if errors.Is(err, database.ErrNotFound) {
		http.Error(w, "no such order", http.StatusNotFound)
		return
	}
	if err != nil {
		a.adminError(w, r, "refund", err)
		return
	}
	o, err := a.Refunds.Do(ctx, idem.Request{Scope: refund.OperatorScope, Key: key.Key,
		Fingerprint: idem.Fingerprint([]byte(OperatorChannel), []byte(refund.KindRefund), orderID[:],
			[]byte(strconv.FormatInt(amount, 10)), []byte(reason))}, idem.DefaultWait,
		refund.Ask{CustomerID: found.CustomerID, OrderID: orderID, Kind: refund.KindRefund, Amount: amount, Reason: reason,
			Channel: OperatorChannel})
	if err != nil {
		f := web.Classify(err)
		if f.Kind.Status >= 500 && f.RetryAfter == 0 {
			a.adminError(w, r, "refund", err)
			return
		}
		if f.RetryAfter > 0 {
			// A refund whose outcome is unknown, a key in progress, an
			// outage: when to send the form again, as the API says it.
			w.Header().Set("Retry-After", strconv.Itoa(web.RetryAfterSeconds(f.RetryAfter)))
		}
		http.Error(w, f.Kind.Title+": "+f.Detail+". Nothing more was refunded by this request.", f.Kind.Status)
		return
	}
	idemhttp.Write(w, o)
}

// parseAmount reads an amount in the currency's major units ("12.50", "3")
// as minor units.
func parseAmount(s string) (int64, error) {
	s = strings.TrimSpace(s)
	whole, frac, dotted := strings.Cut(s, ".")
	if whole == "" || len(frac) > 2 || (dotted && frac == "") {
		return 0, fmt.Errorf("want an amount such as 12.50, got %q", s)
	}
	for len(frac) < 2 {
		frac += "0"
	}
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil || n <= 0 || strings.ContainsAny(s, "+-") {
		return 0, fmt.Errorf("want a positive amount such as 12.50, got %q", s)
	}
	return n, nil
}
