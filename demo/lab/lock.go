package lab

import (
	"fmt"
	"time"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/checkout"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
)

// Bounds on LockHeader. Below a second, a lock expires while its holder is
// still working on an ordinary loaded machine, and every retry takes the
// operation over: a client could turn one order into a stream of
// takeovers and provider calls. Longer than the lab needs is a typo.
const (
	minDemoLock = time.Second
	maxDemoLock = time.Minute
)

// LockOverride honours LockHeader: the orders a request places hold their
// keys for the time it names (checkout.WithLockFor). The app mounts it with
// DEMO=1 only, so that no client can shorten its locks in production; the
// API's handlers know nothing of it.
func LockOverride(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := c.Request().Header.Get(LockHeader)
		if v == "" {
			return next(c)
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < minDemoLock || d > maxDemoLock {
			return web.Fail(problem.InvalidRequest,
				fmt.Sprintf("%s must be a duration between %s and %s, such as 1s", LockHeader, minDemoLock, maxDemoLock))
		}
		r := c.Request()
		c.SetRequest(r.WithContext(checkout.WithLockFor(r.Context(), d)))
		return next(c)
	}
}
