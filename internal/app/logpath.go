package app

import (
	"strings"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/logging"
)

// loggedPathKey is where requestPath keeps a request's loggedPath in its
// Echo context.
const loggedPathKey = "exactlyonce.logged_path"

// requestPath is the request's loggedPath, made once per request and kept
// in its Echo context: the same string is its span's url.path
// (tracing.Route) and its access-log line's path.
func requestPath(c echo.Context) string {
	if p, ok := c.Get(loggedPathKey).(string); ok {
		return p
	}
	p := loggedPath(c)
	c.Set(loggedPathKey, p)
	return p
}

// loggedPath is the request path for the access log with the idempotency
// key a route carries (/api/keys/:key/events) redacted: the key lets whoever
// reads the log replay its operation's answer. It is rebuilt from the route
// template and its parameters, so no substring of the key can survive. A
// path that matched no such route (a trailing slash, a misspelt tail, a
// route not found) may still carry a key: every segment that follows a
// "keys" segment is redacted in it.
func loggedPath(c echo.Context) string {
	route := c.Path()
	if route == "" || !strings.Contains(route, ":key") {
		return redactRawPath(c.Request().URL.Path)
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

// redactRawPath redacts, with the one key redactor, the segment after each
// "keys" segment (in any case) of a path that matched no key route.
func redactRawPath(path string) string {
	parts := strings.Split(path, "/")
	for i := 1; i < len(parts); i++ {
		if strings.EqualFold(parts[i-1], "keys") && parts[i] != "" {
			parts[i] = logging.RedactKey(parts[i])
		}
	}
	return strings.Join(parts, "/")
}
