package app

import (
	"net/http"
	"strconv"
	"time"

	"exactlyonce/internal/web"
	"exactlyonce/views"
)

// adminPaymentsRows is how many of each list /payments shows.
const adminPaymentsRows = 200

// adminPayments is the admin listener's /payments: the PaymentIntents the
// shop leaves to an operator. Foreign intents (not this database's) are
// never refunded; refunds the provider refused for good are parked, so
// that the reconciler can move on.
func (a *App) adminPayments(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	deployment, err := a.DB.DeploymentID(ctx)
	if err != nil {
		a.adminError(w, r, "read deployment id", err)
		return
	}
	foreign, err := a.DB.ForeignIntents(ctx, adminPaymentsRows)
	if err != nil {
		a.adminError(w, r, "read foreign intents", err)
		return
	}
	refused, err := a.DB.RefusedRefunds(ctx, adminPaymentsRows)
	if err != nil {
		a.adminError(w, r, "read refused refunds", err)
		return
	}
	page := views.AdminPayments{Deployment: deployment}
	for _, f := range foreign {
		page.Foreign = append(page.Foreign, views.ForeignIntent{
			ID: f.PaymentIntentID, Amount: views.FormatMoney(f.Amount, f.Currency), Source: f.Source,
			Deployment: f.DeploymentID, Customer: f.CustomerID,
			Created: time.Unix(f.Created, 0).UTC().Format(time.DateTime), FirstSeen: f.FirstSeen.UTC().Format(time.DateTime),
		})
	}
	for _, f := range refused {
		page.Refused = append(page.Refused, views.RefusedRefund{
			ID: f.PaymentIntentID, Amount: views.FormatMoney(f.Amount, f.Currency), Customer: f.CustomerID,
			Key: f.Key, Reason: f.Reason, At: f.At.UTC().Format(time.DateTime),
		})
	}
	a.renderAdmin(w, r, views.AdminPaymentsPage(page))
}

// adminError logs why an admin page could not be made and answers 500
// without the cause, as the shop's pages do; an outage (the database
// away) is a 503 with a Retry-After, as it is on the shop's pages, for the
// operator or script to come back.
func (a *App) adminError(w http.ResponseWriter, r *http.Request, what string, err error) {
	if f := web.Classify(err); f.Kind.Status == http.StatusServiceUnavailable && f.RetryAfter > 0 {
		a.cfg.Log.WarnContext(r.Context(), "admin page: "+what, "path", r.URL.Path, "err", err)
		w.Header().Set("Retry-After", strconv.Itoa(web.RetryAfterSeconds(f.RetryAfter)))
		http.Error(w, f.Kind.Title+": "+f.Detail, f.Kind.Status)
		return
	}
	a.cfg.Log.ErrorContext(r.Context(), "admin page: "+what, "path", r.URL.Path, "err", err)
	http.Error(w, "internal error", http.StatusInternalServerError)
}
