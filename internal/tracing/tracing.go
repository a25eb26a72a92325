// Package tracing is the shop's OpenTelemetry tracing: one tracer provider,
// built at start-up from the configuration and handed to every part that
// makes spans (the HTTP server and the provider's client, the checkout
// engine, the completer and the reconciler, pgx, River), never installed as
// the global one; the in-process store of recent traces that the admin
// listener shows (Recent); and the few conventions the parts share: the
// attributes that name an idempotency key without revealing it (KeyRef), the
// W3C traceparent that carries a trace into a job or an audit event and back
// out as a link, and the problem+json instance that names a trace.
//
// Tracing is on by default with no exporter: every sampled span goes to the
// recent-traces store only, so trace ids appear in the logs, in problem+json
// answers and on the admin listener's /traces page without a collector.
// With an OTLP endpoint the spans are exported too, in batches.
package tracing

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Config is how New builds the tracer provider.
type Config struct {
	// Off makes no spans at all (OTEL_SDK_DISABLED=true): no trace ids in
	// logs or answers, no /traces page, nothing exported.
	Off bool
	// ServiceName names this process in every span (OTEL_SERVICE_NAME).
	ServiceName string
	// Endpoint is the OTLP/HTTP collector's base URL, such as
	// http://127.0.0.1:4318, to which spans are exported in batches under
	// /v1/traces (OTEL_EXPORTER_OTLP_ENDPOINT); empty exports nothing.
	Endpoint string
	// SampleRatio is the share of new traces recorded, from 0 to 1 (1
	// records all). A trace joined from a caller (the provider's server
	// span) follows its caller's decision.
	SampleRatio float64
	// RecentBytes bounds the memory the recent-traces store keeps (see
	// Recent); zero or less keeps none.
	RecentBytes int
	// Processors are more span processors, such as a test's in-memory
	// recorder (tracetest.SpanRecorder).
	Processors []sdktrace.SpanProcessor
}

// DefaultRecentBytes is the recent-traces store's default budget: a few
// thousand checkout traces.
const DefaultRecentBytes = 16 << 20

// Tracing is the process's tracer provider and what it feeds.
type Tracing struct {
	// Provider makes the spans; a no-op provider when tracing is off.
	Provider trace.TracerProvider
	// Recent holds the latest traces for the admin listener; nil when
	// tracing is off or its budget is zero.
	Recent *Recent
	// Collector is the OTLP endpoint spans are exported to (Config's
	// Endpoint), "" when they are not: where traces older than Recent's
	// are, or none are.
	Collector string

	sdk *sdktrace.TracerProvider
}

// Off is tracing switched off: a provider whose spans record nothing and
// carry no ids. The zero Config of an App means this.
func Off() *Tracing { return &Tracing{Provider: noop.NewTracerProvider()} }

// New builds the tracer provider cfg describes. Shut it down last, after
// everything that makes spans has stopped, so that the batch still waiting
// is exported.
func New(ctx context.Context, cfg Config) (*Tracing, error) {
	if cfg.Off {
		return Off(), nil
	}
	if cfg.ServiceName == "" {
		cfg.ServiceName = "exactlyonce"
	}
	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(cfg.ServiceName))),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.SampleRatio))),
	}
	t := &Tracing{Collector: cfg.Endpoint}
	if cfg.RecentBytes > 0 {
		t.Recent = NewRecent(cfg.RecentBytes)
		opts = append(opts, sdktrace.WithSpanProcessor(t.Recent))
	}
	if cfg.Endpoint != "" {
		exporter, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(cfg.Endpoint+"/v1/traces"))
		if err != nil {
			return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
		}
		opts = append(opts, sdktrace.WithBatcher(exporter))
	}
	for _, p := range cfg.Processors {
		opts = append(opts, sdktrace.WithSpanProcessor(p))
	}
	t.sdk = sdktrace.NewTracerProvider(opts...)
	t.Provider = t.sdk
	return t, nil
}

// Shutdown ends the provider: the spans still batched are exported, within
// ctx's deadline.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t.sdk == nil {
		return nil
	}
	if err := t.sdk.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("tracing: shut down: %w", err)
	}
	return nil
}

// Propagator is how a trace crosses a process boundary: the W3C
// traceparent header, on the calls to the provider and in the outbox's
// job metadata. It is passed explicitly wherever it is used: the global
// propagator is a no-op unless someone installs one, and nothing here does.
var Propagator propagation.TextMapPropagator = propagation.TraceContext{}
