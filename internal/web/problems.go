package web

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/problem"
	"exactlyonce/internal/tracing"
)

// WriteProblem is the API's error renderer: the row's problem type, title
// and status as problem+json, with the request's trace as its instance. A page's own refusal never reaches an API
// route; if one did, it is a bug, answered as one.
func WriteProblem(c echo.Context, f *Failure, err error) error {
	if _, ok := errors.AsType[*PageError](err); ok {
		f = Fail(problem.Internal, "")
	}
	if f.Kind.Status == http.StatusUnauthorized {
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="api"`)
	}
	p := f.Kind.New(f.Detail)
	p.Errors, p.Left = f.Errors, f.Left
	p.Instance = tracing.Instance(c.Request().Context())
	return c.Blob(p.Status, problem.ContentType, p.JSON())
}
