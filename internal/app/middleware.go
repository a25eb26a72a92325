package app

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"exactlyonce/internal/logging"
	"exactlyonce/internal/metrics"
	"exactlyonce/internal/tracing"
)

// useMiddleware installs what every request goes through: the name of its
// span (the server span comes from App.Handler, around Echo) and the path
// it records, redacted as the log's (requestPath, the same string), a
// request id, also carried in the request's context for the lines other
// packages log, a latency metric, one access-log line, and recovery from
// panics into the error handler. The log line names the route, never
// headers or bodies, so tokens and card numbers cannot reach it, and its
// path has any key redacted (loggedPath). A client's request id is kept
// only if it is plain (dropOddRequestID); the log line takes it from the
// request's context.
func useMiddleware(e *echo.Echo, log *slog.Logger, m *metrics.Metrics) {
	e.Use(tracing.Route(requestPath))
	e.Use(dropOddRequestID)
	e.Use(middleware.RequestIDWithConfig(middleware.RequestIDConfig{
		RequestIDHandler: func(c echo.Context, id string) {
			c.SetRequest(c.Request().WithContext(logging.WithRequestID(c.Request().Context(), id)))
		},
	}))
	// Outside the logger, whose HandleError has written the error response
	// by the time this reads the status.
	e.Use(observeLatency(m))
	e.Use(middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogStatus: true, LogLatency: true, LogMethod: true, LogRoutePath: true,
		HandleError: true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			level := slog.LevelInfo
			if v.Status >= 500 {
				level = slog.LevelError
			}
			// The request's context adds the request id and the trace.
			log.LogAttrs(c.Request().Context(), level, "request", slog.String("method", v.Method),
				slog.String("path", requestPath(c)), slog.String("route", v.RoutePath),
				slog.Int("status", v.Status), slog.Duration("latency", v.Latency))
			return nil
		},
	}))
	e.Use(middleware.Recover())
}

// observeLatency times each request by its route template (c.Path(), such as
// /api/orders/:id), never the raw path, so that the number of series stays
// bounded whatever clients request; a sampled request's trace is the
// observation's exemplar.
func observeLatency(m *metrics.Metrics) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			began := time.Now()
			err := next(c)
			route := c.Path()
			if route == "" {
				route = "unmatched"
			}
			metrics.Observe(c.Request().Context(),
				m.HTTPRequests.WithLabelValues(methodLabel(c.Request().Method), route, strconv.Itoa(c.Response().Status)),
				time.Since(began).Seconds())
			return err
		}
	}
}

// methodLabel keeps the method label bounded too: a client can send any
// token as a method.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return method
	}
	return "other"
}
