package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/problem"
)

// writeProblem is the API's error renderer: the row's problem type, title
// and status as problem+json. A page's own refusal never reaches an API
// route; if one did, it is a bug, answered as one.
func writeProblem(c echo.Context, f *failure, err error) error {
	if _, ok := errors.AsType[*pageError](err); ok {
		f = fail(problem.Internal, "")
	}
	if f.kind.Status == http.StatusUnauthorized {
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="api"`)
	}
	p := f.kind.New(f.detail)
	return c.Blob(p.Status, problem.ContentType, p.JSON())
}

// describeProblem documents a problem type, so that the relative "type" URI
// of every error body resolves to an explanation.
func (h *Handler) describeProblem(c echo.Context) error {
	for _, k := range problem.Kinds {
		if k.Slug == c.Param("slug") {
			return c.String(http.StatusOK, k.Title+"\n\n"+k.About+"\n")
		}
	}
	return fail(problem.NotFound, "no such problem type")
}
