package tracing

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Traceparent is the W3C traceparent of ctx's span, such as
// 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01, or "" when ctx
// carries none (tracing is off). It is how a trace is written down beside
// what it made (a key's "claimed" event, an outbox job's metadata), so that
// work done later, by another trace, can link back to it (Link).
func Traceparent(ctx context.Context) string {
	carrier := propagation.MapCarrier{}
	Propagator.Inject(ctx, carrier)
	return carrier["traceparent"]
}

// Link is a link to the span a traceparent names (see Traceparent); false
// when there is none or it cannot be read.
func Link(traceparent string) (trace.Link, bool) {
	if traceparent == "" {
		return trace.Link{}, false
	}
	ctx := Propagator.Extract(context.Background(), propagation.MapCarrier{"traceparent": traceparent})
	sc := trace.SpanContextFromContext(ctx)
	return trace.Link{SpanContext: sc}, sc.IsValid()
}

// TraceID is the id of ctx's trace in hex, or "" when it carries none: the
// trace_id of log lines and exemplars.
func TraceID(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.HasTraceID() {
		return ""
	}
	return sc.TraceID().String()
}

// Instance is the problem+json "instance" of an answer given in ctx's
// trace: urn:trace:<trace id>, an opaque URI that names this occurrence of
// the problem (RFC 9457, section 3.1.5) and that an operator pastes into the
// admin listener's /traces page or a collector's search; "" without one.
func Instance(ctx context.Context) string {
	if id := TraceID(ctx); id != "" {
		return InstancePrefix + id
	}
	return ""
}

// InstancePrefix is what Instance puts before the trace id.
const InstancePrefix = "urn:trace:"
