package tracing

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Server makes each request to h a server span (otelhttp), named by its
// method until the router names its route (Route). A request for which
// public reports true starts a trace of its own, with a link to the
// caller's trace if it sent one: the shop's listener serves strangers,
// who must not choose the trace their request lands in. The others join
// the caller's trace (the traceparent header): the fake Stripe's calls
// come from the shop itself. A nil public trusts every caller.
func Server(h http.Handler, tp trace.TracerProvider, public func(*http.Request) bool) http.Handler {
	opts := []otelhttp.Option{
		otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(Propagator),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method }),
	}
	if public != nil {
		opts = append(opts, otelhttp.WithPublicEndpointFn(public))
	}
	return otelhttp.NewHandler(h, "http.server", opts...)
}

// Route returns Echo middleware that names the request's server span
// (Server) after its route template, POST /api/orders or GET /orders/:id,
// never the raw path, and records the template as http.route. A non-nil
// path replaces the span's url.path with what it makes of the request: the
// shop's redacts the idempotency key a path may carry, as its access log
// does.
func Route(path func(echo.Context) string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			span := trace.SpanFromContext(c.Request().Context())
			if !span.IsRecording() {
				return next(c)
			}
			if route := c.Path(); route != "" {
				span.SetName(c.Request().Method + " " + route)
				span.SetAttributes(semconv.HTTPRoute(route))
			}
			if path != nil {
				span.SetAttributes(semconv.URLPath(path(c)))
			}
			return next(c)
		}
	}
}

// Transport makes each call through base a client span (otelhttp) of the
// span its context carries, and sends that span's traceparent along, so
// that a server instrumented with Server continues the trace. A call made
// outside any trace is sent as it is, with no span of its own.
func Transport(base http.RoundTripper, tp trace.TracerProvider) http.RoundTripper {
	return otelhttp.NewTransport(base,
		otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(Propagator),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelhttp.WithFilter(func(r *http.Request) bool { return trace.SpanContextFromContext(r.Context()).IsValid() }),
	)
}
