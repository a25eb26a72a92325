package web

import (
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// contentSecurityPolicy allows the pages nothing but their own origin: no
// inline script or style (the templates have none), no framing, and forms
// that post only here. A meta refresh, which the processing page waits
// with, is not governed by CSP.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"

// securityHeaders sets the usual protective headers on every response, the
// JSON API's included: they cost nothing there and a browser that opens an
// API URL is protected too. HSTS is only sent over HTTPS (echo checks).
func SecurityHeaders() echo.MiddlewareFunc {
	secure := middleware.SecureWithConfig(middleware.SecureConfig{
		// "0" switches off the legacy XSS auditor, which could itself be
		// abused to leak data; the CSP does its job.
		XSSProtection:         "0",
		ContentTypeNosniff:    "nosniff",
		XFrameOptions:         "DENY",
		HSTSMaxAge:            365 * 24 * 60 * 60,
		ContentSecurityPolicy: contentSecurityPolicy,
		ReferrerPolicy:        "same-origin",
	})
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return secure(func(c echo.Context) error {
			h := c.Response().Header()
			h.Set("Cross-Origin-Opener-Policy", "same-origin")
			h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()")
			return next(c)
		})
	}
}
