package app

import (
	"strings"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/logging"
)

// loggedPath is the request path for the access log with the idempotency
// key a route carries (/api/keys/:key/events) redacted: the key lets whoever
// reads the log replay its operation's answer. It is rebuilt from the route
// template and its parameters, so no substring of the key can survive; a
// path that matched no route is logged as its template would be, unmatched.
func loggedPath(c echo.Context) string {
	route := c.Path()
	if route == "" || !strings.Contains(route, ":key") {
		return c.Request().URL.Path
	}
	parts := strings.Split(route, "/")
	for i, p := range parts {
		name, ok := strings.CutPrefix(p, ":")
		if !ok {
			continue
		}
		v := c.Param(name)
		if name == "key" {
			v = logging.RedactKey(v)
		}
		parts[i] = v
	}
	return strings.Join(parts, "/")
}
