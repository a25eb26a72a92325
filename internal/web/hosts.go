package web

import (
	"github.com/labstack/echo/v4"

	"exactlyonce/internal/hosts"
	"exactlyonce/internal/problem"
)

// hostAllowList refuses a request whose Host header is not one of the
// server's names, before routing, so no handler runs for it. Without it a
// page on any domain can rebind its name to this server's address (DNS
// rebinding): its requests are then same-origin to the browser, pass the
// origin checks, and reach the demo controls on a loopback address.
//
// An allowed name with a port ("shop.example:8443") must match exactly; one
// without ("shop.example") matches on any port.
func HostAllowList(allowed []string) echo.MiddlewareFunc {
	list := hosts.New(allowed)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !list.Allows(c.Request().Host) {
				return Fail(problem.MisdirectedRequest, "this server does not answer for that host name")
			}
			return next(c)
		}
	}
}
