package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
)

// Observe records v in o with, when ctx's span is sampled, its trace id
// as the exemplar (trace_id), so that a slow bucket of a latency histogram
// leads to one of the traces that filled it. An unsampled trace's id leads
// nowhere (no collector and no /traces page holds it), so it is not
// offered. Exemplars are served only to a scraper that asks for
// OpenMetrics (Handler); the classic text format carries none.
func Observe(ctx context.Context, o prometheus.Observer, v float64) {
	sc := trace.SpanContextFromContext(ctx)
	if e, ok := o.(prometheus.ExemplarObserver); ok && sc.IsSampled() {
		e.ObserveWithExemplar(v, prometheus.Labels{"trace_id": sc.TraceID().String()})
		return
	}
	o.Observe(v)
}

// ObserveProvider records one provider call that started at began.
func (m *Metrics) ObserveProvider(ctx context.Context, call, result string, began time.Time) {
	Observe(ctx, m.ProviderCalls.WithLabelValues(call, result), time.Since(began).Seconds())
}
