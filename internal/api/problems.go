package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
)

// describeProblem documents a problem type, so that the relative "type" URI
// of every error body resolves to an explanation.
func (h *Handler) describeProblem(c echo.Context) error {
	for _, k := range problem.Kinds {
		if k.Slug == c.Param("slug") {
			return c.String(http.StatusOK, k.Title+"\n\n"+k.About+"\n")
		}
	}
	return web.Fail(problem.NotFound, "no such problem type")
}
