package app

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"exactlyonce/static"
)

// Admin is the operations handler: an index of the operator's pages at /,
// the readiness report at /readyz (as on the shop's listener), Prometheus
// metrics at /metrics, the Go profiler under /debug/pprof/, the recent
// traces under /traces, the PaymentIntents left to an operator (foreign
// ones, refunds refused for good) at /payments, and, when the demo's mail catcher runs in this
// process, the caught mail at /mail.
// ServeAdmin adds River UI. It is served only on ADMIN_ADDR, apart
// from the shop: the metrics tell anyone who reads them how busy the shop
// is and how its payments fail, and every profile or trace costs CPU and
// reveals the program's internals.
func (a *App) Admin() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", a.adminIndex)
	mux.Handle("GET /static/admin.css", static.Shop)
	mux.Handle("GET /readyz", a.Readiness)
	mux.Handle("GET /metrics", a.Metrics.Handler())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	if a.cfg.MailCatcherURL != "" {
		mux.HandleFunc("GET /mail", a.adminMail)
	}
	mux.HandleFunc("GET /payments", a.adminPayments)
	mux.HandleFunc("GET /orders", a.adminFind)
	mux.HandleFunc("GET /orders/{id}", a.adminOrder)
	mux.HandleFunc("POST /orders/{id}/refunds", a.adminRefund)
	mux.HandleFunc("GET /traces", a.adminTraces)
	mux.HandleFunc("GET /traces/{id}", a.adminTrace)
	return mux
}

// ServeAdmin serves Admin on ln until ctx ends, behind guardAdmin. A
// profile or trace runs for the seconds its caller asks, so there is no
// write timeout (a body still has readTimeout to arrive); the address is
// meant to be reachable from the host or the operator's network only.
//
// It adds River UI under /riverui/, whose background services live as long
// as the listener.
func (a *App) ServeAdmin(ctx context.Context, ln net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("/", a.Admin())
	if a.Jobs != nil {
		ui, err := newRiverUI(ctx, a.Jobs, a.cfg.Log)
		if err != nil {
			return err
		}
		mux.Handle(riverUIPrefix+"/", ui)
	}
	srv := &http.Server{Handler: a.guardAdmin(mux, ln), ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout: readTimeout, IdleTimeout: idleTimeout}
	if err := serveUntil(ctx, srv, ln, time.Second); err != nil {
		return fmt.Errorf("admin server: %w", err)
	}
	return nil
}
