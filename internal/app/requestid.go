package app

import (
	"regexp"

	"github.com/labstack/echo/v4"
)

// plainRequestID is what a client's X-Request-Id must look like to be kept:
// short, and nothing a log line or a response header could be abused with.
var plainRequestID = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

// dropOddRequestID removes an X-Request-Id that is not plain, so that the
// request id middleware that follows makes a new one instead of logging
// and echoing whatever the client sent (60 KB of it, or control bytes).
func dropOddRequestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Request().Header
		if v := h.Values(echo.HeaderXRequestID); len(v) > 0 && (len(v) > 1 || !plainRequestID.MatchString(v[0])) {
			h.Del(echo.HeaderXRequestID)
		}
		return next(c)
	}
}
