package app

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/google/uuid"

	"exactlyonce/internal/mail"
	"exactlyonce/internal/web"
	"exactlyonce/views"
)

// adminCSP is the admin pages' Content-Security-Policy: their own
// stylesheet and nothing else, as for the shop's pages.
const adminCSP = "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// adminIndex is the admin listener's /: a link to every operator page,
// saying which listener serves it. River UI is served by ServeAdmin only,
// so it is listed when the jobs client it shows exists.
func (a *App) adminIndex(w http.ResponseWriter, r *http.Request) {
	shop := a.shopURL(r)
	const admin, onShop = "admin listener (ADMIN_ADDR)", "shop listener (ADDR)"
	links := []views.AdminLink{
		{Title: "Readiness", Href: "/readyz", Listener: admin,
			About: "Each check (database, migrations, replication, provider, jobs) with its status and latency, as JSON; 503 when a check that gates fails. The shop listener answers the same at " + shop + "/readyz, for load balancers."},
		{Title: "Metrics", Href: "/metrics", Listener: admin, About: "Prometheus metrics: claims, finishes, the completer, the reconciler, the provider's latency, HTTP latency."},
	}
	links = append(links, views.AdminLink{Title: "Find an order", Href: "/orders", Listener: admin,
		About: "An order from what a customer quotes (its #number, id, PaymentIntent, the customer's id, address or name): its key and trail, the provider's events, refunds, jobs and mail. Without a query, the keys and refunds waiting, counted."})
	links = append(links, views.AdminLink{Title: "Payments for an operator", Href: "/payments", Listener: admin,
		About: "This database's deployment id; succeeded PaymentIntents on the account that this database did not make (never refunded); refunds the provider refused for good (parked)."})
	if a.Jobs != nil {
		links = append(links, views.AdminLink{Title: "River UI", Href: riverUIPrefix + "/", Listener: admin,
			About: "The outbox's jobs (loyalty points, confirmation mail) by state, with their attempts and errors. Read-only without ADMIN_TOKEN."})
	}
	if a.cfg.MailCatcherURL != "" {
		links = append(links, views.AdminLink{Title: "Caught mail", Href: "/mail", Listener: admin,
			About: "The demo's confirmation mails, each with the way to its order."})
	}
	links = append(links, views.AdminLink{Title: "Traces", Href: "/traces", Listener: admin,
		About: "The latest traces this process keeps in memory, and the traces of one idempotency key: its requests, the provider's calls, the completer's passes and the outbox's jobs, span by span."})
	links = append(links, views.AdminLink{Title: "Profiles", Href: "/debug/pprof/", Listener: admin,
		About: "The Go profiler: CPU, heap, goroutines, traces. Each profile costs CPU while it runs."})
	if a.demo.Inspector != "" {
		links = append(links, views.AdminLink{Title: "Key inspector", Href: shop + a.demo.Inspector + "#inspector", Listener: onShop,
			About: "In the double-click lab: a lab shopper's keys, their status, lock and audit trail."})
	} else {
		links = append(links, views.AdminLink{Title: "Key inspector", Listener: onShop,
			About: "Not on this server: it is part of the double-click lab, served by the demo's binary with DEMO=1 (make run; demo/cmd/demo). GET /api/keys/{key}/events gives a customer its key's trail."})
	}
	a.renderAdmin(w, r, views.AdminIndexPage(views.AdminIndex{ShopURL: shop, Links: links}))
}

// adminMail is the admin listener's /mail: the caught mail, newest first,
// each confirmation linked to its order: its receipt on the shop (which
// opens for the browser that placed it) and, for a lab run's shopper, the
// key inspector.
func (a *App) adminMail(w http.ResponseWriter, r *http.Request) {
	caught, err := readCaughtMail(r.Context(), a.cfg.MailCatcherURL)
	if err != nil {
		a.cfg.Log.WarnContext(r.Context(), "admin: caught mail unreadable", "err", err)
		http.Error(w, "The mail catcher at "+a.cfg.MailCatcherURL+" cannot be read: is make run's catcher running?", http.StatusBadGateway)
		return
	}
	msgs := caught.Messages
	slices.Reverse(msgs)
	shop := a.shopURL(r)
	lab := demoShoppers{inspects: a.demo.Inspects, known: map[uuid.UUID]bool{}}
	page := views.AdminMail{SMTPAddr: caught.SMTP, Mails: make([]views.CaughtMail, len(msgs))}
	for i, m := range msgs {
		v := views.CaughtMail{Subject: m.Subject, From: m.From, To: strings.Join(m.To, ", "),
			Received: m.ReceivedAt.UTC().Format(time.DateTime), MessageID: m.MessageID, Body: m.Body, Raw: string(m.Raw)}
		if order, ok := mail.OrderOfMessageID(m.MessageID); ok {
			v.OrderID, v.ReceiptURL = order.String(), shop+"/orders/"+order.String()
			for _, to := range m.To {
				if customer, ok := mail.CustomerOfAddress(to); ok && lab.has(r.Context(), customer) {
					v.InspectorURL = shop + a.demo.Inspector + "?" + url.Values{"customer": {customer.String()}}.Encode() + "#inspector"
				}
			}
		}
		page.Mails[i] = v
	}
	a.renderAdmin(w, r, views.AdminMailPage(page))
}

// shopURL is where the operator's browser reaches the shop's listener:
// BaseURL, unless the shop listens on every address (ADDR=:8080, whose
// BaseURL is http://[::]:8080, no address a browser opens), then the host
// the operator reached this listener by, with the shop's port.
func (a *App) shopURL(r *http.Request) string {
	shop, err := web.ReachableURL(a.cfg.BaseURL, r)
	if err != nil {
		return strings.TrimRight(a.cfg.BaseURL, "/")
	}
	return shop
}

// demoShoppers says which customers are the demo's shoppers, asking the
// demo once per customer.
type demoShoppers struct {
	inspects func(ctx context.Context, customer uuid.UUID) bool
	known    map[uuid.UUID]bool
}

func (l demoShoppers) has(ctx context.Context, customer uuid.UUID) bool {
	if l.inspects == nil {
		return false
	}
	if is, ok := l.known[customer]; ok {
		return is
	}
	l.known[customer] = l.inspects(ctx, customer)
	return l.known[customer]
}

// renderAdmin renders a page into a buffer first, so that a render error
// is a 500 rather than half a page.
func (a *App) renderAdmin(w http.ResponseWriter, r *http.Request, page templ.Component) {
	var buf bytes.Buffer
	if err := page.Render(r.Context(), &buf); err != nil {
		a.cfg.Log.ErrorContext(r.Context(), "render admin page", "path", r.URL.Path, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", adminCSP)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(buf.Bytes()) // the operator's browser hung up
}
