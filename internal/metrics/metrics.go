// Package metrics holds the Prometheus collectors of the key lifecycle and
// the HTTP server, registered on a registry of their own rather than the
// client library's global one: each App (and so each test) counts for
// itself, and nothing outside the process registers into it by accident.
package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Claim outcomes, the values of the claims counter's outcome label.
const (
	ClaimNew      = "new"
	ClaimReplay   = "replay"
	ClaimConflict = "conflict"
	ClaimMismatch = "mismatch"
	ClaimTakeover = "takeover"
)

// Holders name who held a key: an attempt of a request or the completer.
const (
	HolderRequest   = "request"
	HolderCompleter = "completer"
)

// Metrics is every collector the application updates. The zero value is not
// usable; call New.
type Metrics struct {
	registry *prometheus.Registry

	// Claims counts claim outcomes of requests.
	Claims *prometheus.CounterVec
	// FinishesLost counts finishes that matched no row because a newer
	// attempt holds the key, by holder of the losing attempt.
	FinishesLost *prometheus.CounterVec
	// LeaseRenewals counts heartbeat renewals: renewed, lost, error.
	LeaseRenewals *prometheus.CounterVec
	// Recoveries counts what the completer did with each key it took over.
	Recoveries *prometheus.CounterVec
	// OrphanCharges counts succeeded charges a finish held when it lost its
	// lock and that no order holds: money taken without an order. It must
	// stay 0; the reconciler refunds what it counts.
	OrphanCharges prometheus.Counter
	// Reconciled counts the charges the reconciler examined, by result.
	Reconciled *prometheus.CounterVec
	// Refunds counts charges the reconciler refunded (once per charge,
	// whichever instance refunded it).
	Refunds prometheus.Counter
	// ForeignIntents counts succeeded PaymentIntents this database did not
	// make, once each, by where they were first met (webhook, reconciler):
	// left alone, listed on the admin listener's /payments.
	ForeignIntents *prometheus.CounterVec
	// RefusedRefunds counts refunds the provider refused for good, once per
	// intent: parked for an operator, listed on /payments.
	RefusedRefunds prometheus.Counter
	// SweptKeys and SweptEvents count rows the sweeper deleted.
	SweptKeys   prometheus.Counter
	SweptEvents prometheus.Counter
	// ProviderCalls times calls to the payment provider by call and result.
	ProviderCalls *prometheus.HistogramVec
	// HTTPRequests times requests by method, route template and status.
	HTTPRequests *prometheus.HistogramVec
	// WaitingSubmits is how many requests (browser submits, API orders sent
	// with Prefer: wait) are waiting for another attempt at their key to
	// finish.
	WaitingSubmits prometheus.Gauge
	// Throttled counts requests refused by a quota, by quota.
	Throttled *prometheus.CounterVec
}

// New returns metrics registered on a new registry, together with the Go
// runtime and process collectors.
func New() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		Claims: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "exactlyonce_claims_total",
			Help: "Idempotency key claims by requests, by outcome: new, replay, conflict (in progress), mismatch (key reused with another request), takeover.",
		}, []string{"outcome"}),
		FinishesLost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "exactlyonce_finishes_lost_total",
			Help: "Finishes that wrote nothing because a newer attempt had taken the key over, by holder of the losing attempt (request, completer).",
		}, []string{"holder"}),
		LeaseRenewals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "exactlyonce_lease_renewals_total",
			Help: "Lock renewals while a provider call is in flight, by result: renewed, lost (the token was gone), error, fenced (renewals failed and the attempt stopped its own call before the lock could run out).",
		}, []string{"result"}),
		Recoveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "exactlyonce_completer_recoveries_total",
			Help: "Keys the completer took over, by outcome: charged (order written), declined, not_completed (canceled at the provider, no charge), lost (a retry finished first), error (left started), parked (a poison key given up after too many errors).",
		}, []string{"outcome"}),
		OrphanCharges: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "exactlyonce_orphan_charges_total",
			Help: "Succeeded charges held by a finish that lost its lock and that no order holds. Must stay 0; the reconciler refunds them.",
		}),
		Reconciled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "exactlyonce_reconciler_charges_total",
			Help: "Provider charges the reconciler examined, by result: matched (an order holds it), not_succeeded, refunded (already), pending (its key is still started), parked (its key was parked for an operator), unknown_key (no key claims it: held, refunded as lost_key if it stays so), lost_key (refunded now: its key was lost), orphan (refunded now), refund_failed (the provider refused for good: parked for an operator), foreign (not this database's: left alone), watched (this deployment's, not succeeded yet: read again by id until settled), refund_later (the provider asked for the refund again later: its key in use by another refund of the intent, or our rate).",
		}, []string{"result"}),
		Refunds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "exactlyonce_reconciler_refunds_total",
			Help: "Orphan charges (succeeded, no order, key finished without one) the reconciler refunded.",
		}),
		ForeignIntents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "exactlyonce_foreign_intents_total",
			Help: "Succeeded PaymentIntents this database did not make (no order or key of its own, and their metadata names another deployment, none, or no customer of it), once each, by where first met: webhook, reconciler. Never refunded; listed on the admin listener's /payments.",
		}, []string{"source"}),
		RefusedRefunds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "exactlyonce_refused_refunds_total",
			Help: "Refunds of intents no order holds that the provider refused for good, once per intent: parked for an operator, listed on the admin listener's /payments.",
		}),
		SweptKeys: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "exactlyonce_sweeper_deleted_keys_total",
			Help: "Finished idempotency keys deleted after the retention window.",
		}),
		SweptEvents: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "exactlyonce_sweeper_deleted_events_total",
			Help: "Audit events deleted after their retention.",
		}),
		ProviderCalls: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "exactlyonce_provider_call_duration_seconds",
			Help:    "Calls to the payment provider by call (charge, cancel) and result (succeeded, declined, no_charge, unavailable, error, cancelled).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"call", "result"}),
		HTTPRequests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "exactlyonce_http_request_duration_seconds",
			Help:    "HTTP requests by method, route template (not the raw path, to bound cardinality) and status code.",
			Buckets: prometheus.DefBuckets,
		}, []string{"method", "route", "status"}),
		WaitingSubmits: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "exactlyonce_checkout_waiting_submits",
			Help: "Requests waiting for the attempt already running under their key (a double-click's second submit, an API order sent with Prefer: wait); capped per key.",
		}),
		Throttled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "exactlyonce_throttled_total",
			Help: "Requests refused by a quota, by quota: new_customer (anonymous customers created per client address), waiting_submit (submits per key waiting at once).",
		}, []string{"quota"}),
	}
	m.registry.MustRegister(
		m.WaitingSubmits, m.Throttled,
		m.Claims, m.FinishesLost, m.LeaseRenewals, m.Recoveries, m.SweptKeys, m.SweptEvents,
		m.OrphanCharges, m.Reconciled, m.Refunds, m.ForeignIntents, m.RefusedRefunds,
		m.ProviderCalls, m.HTTPRequests,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Handler serves the registry in the Prometheus text format, or in
// OpenMetrics to a scraper that asks for it (Accept:
// application/openmetrics-text), which then gets the latency histograms'
// exemplars too (Observe).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry, EnableOpenMetrics: true})
}
