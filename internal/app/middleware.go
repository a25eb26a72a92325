package app

import (
	"context"
	"log/slog"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// useMiddleware installs what every request goes through: a request id,
// one access-log line, and recovery from panics into the error handler.
// The log line names the route, never headers or bodies, so tokens, keys
// and card numbers cannot reach it.
func useMiddleware(e *echo.Echo, log *slog.Logger) {
	e.Use(middleware.RequestID())
	e.Use(middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogStatus: true, LogLatency: true, LogMethod: true, LogURIPath: true, LogRequestID: true, LogRoutePath: true,
		HandleError: true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			level := slog.LevelInfo
			if v.Status >= 500 {
				level = slog.LevelError
			}
			log.LogAttrs(context.Background(), level, "request",
				slog.String("request_id", v.RequestID), slog.String("method", v.Method),
				slog.String("path", v.URIPath), slog.String("route", v.RoutePath),
				slog.Int("status", v.Status), slog.Duration("latency", v.Latency))
			return nil
		},
	}))
	e.Use(middleware.Recover())
}
