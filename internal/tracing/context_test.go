package tracing_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"exactlyonce/internal/tracing"
)

// A traceparent written down beside what a span made (a key's event, a
// job's metadata) reads back as a link to that very span.
func TestTraceparentReadsBackAsALink(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("test").Start(context.Background(), "checkout.claim")
	defer span.End()
	link, ok := tracing.Link(tracing.Traceparent(ctx))
	if !ok || link.SpanContext.TraceID() != span.SpanContext().TraceID() || link.SpanContext.SpanID() != span.SpanContext().SpanID() {
		t.Errorf("got link %v (%v), want one to %v", link.SpanContext, ok, span.SpanContext())
	}
	if got, want := tracing.Instance(ctx), "urn:trace:"+span.SpanContext().TraceID().String(); got != want {
		t.Errorf("instance: got %q, want %q", got, want)
	}
}

// Without a span there is nothing to write down, link to or name.
func TestNoSpanNoTrace(t *testing.T) {
	ctx := context.Background()
	if got := tracing.Traceparent(ctx); got != "" {
		t.Errorf("traceparent: got %q, want none", got)
	}
	if _, ok := tracing.Link(""); ok {
		t.Error("a link from no traceparent")
	}
	if _, ok := tracing.Link("00-not-a-trace"); ok {
		t.Error("a link from a malformed traceparent")
	}
	if got := tracing.Instance(ctx); got != "" {
		t.Errorf("instance: got %q, want none", got)
	}
	ctx, span := tracing.Off().Provider.Tracer("test").Start(ctx, "off")
	defer span.End()
	if got := tracing.Instance(ctx); got != "" {
		t.Errorf("instance with tracing off: got %q, want none", got)
	}
}
