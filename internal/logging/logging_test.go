package logging_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"exactlyonce/internal/logging"
)

func TestRedactKey(t *testing.T) {
	for key, want := range map[string]string{
		"8e03978e-40d5-43e8-bc93-6894a57f9324": "8e0397…",
		"abcd":                                 "ab…",
		"k":                                    "…",
	} {
		if got := logging.RedactKey(key); got != want {
			t.Errorf("RedactKey(%q): got %q, want %q", key, got, want)
		}
	}
}

func TestRequestIDFromContext(t *testing.T) {
	var buf bytes.Buffer
	log := logging.New(&buf, "text", 0)
	log.InfoContext(logging.WithRequestID(context.Background(), "rid-1"), "hello", logging.Key("abcdefghijklmnop"))
	if got := buf.String(); !strings.Contains(got, "request_id=rid-1") || !strings.Contains(got, "key=abcdef…") {
		t.Errorf("got %q, want the request id and the redacted key", got)
	}
}

// A line logged with a context that carries a span names the span's trace
// and the span, so that a line leads to its trace on the admin listener or
// in a collector.
func TestTraceFromContext(t *testing.T) {
	var buf bytes.Buffer
	log := logging.New(&buf, "json", 0)
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0x4b, 0xf9, 1}, SpanID: trace.SpanID{0x00, 0xf0, 2}, TraceFlags: trace.FlagsSampled,
	})
	log.InfoContext(trace.ContextWithSpanContext(context.Background(), sc), "claim")
	got := buf.String()
	if !strings.Contains(got, `"trace_id":"`+sc.TraceID().String()+`"`) || !strings.Contains(got, `"span_id":"`+sc.SpanID().String()+`"`) {
		t.Errorf("got %q, want the trace and span ids", got)
	}
	buf.Reset()
	log.InfoContext(context.Background(), "no span")
	if got := buf.String(); strings.Contains(got, "trace_id") {
		t.Errorf("got %q, want no trace id without a span", got)
	}
}
