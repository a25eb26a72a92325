package api

import (
	"fmt"
	"time"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/lab"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
)

// Bounds on lab.LockHeader. Below a second, a lock expires while its
// holder is still working on an ordinary loaded machine, and every retry
// takes the operation over: a client could turn one order into a stream of
// takeovers and provider calls. Longer than the lab needs is a typo.
const (
	minDemoLock = time.Second
	maxDemoLock = time.Minute
)

// demoLockFor returns the lock timeout a request asks for with
// lab.LockHeader, or zero for the engine's default. Only a demo server
// honours the header; any other ignores it, so that no client can shorten
// its locks in production.
func (h *Handler) demoLockFor(c echo.Context) (time.Duration, error) {
	v := c.Request().Header.Get(lab.LockHeader)
	if h.demo == nil || v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < minDemoLock || d > maxDemoLock {
		return 0, web.Fail(problem.InvalidRequest,
			fmt.Sprintf("%s must be a duration between %s and %s, such as 1s", lab.LockHeader, minDemoLock, maxDemoLock))
	}
	return d, nil
}
