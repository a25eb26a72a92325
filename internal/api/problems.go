package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
	"exactlyonce/views"
)

// describeProblem documents a problem type, so that the relative "type" URI
// of every error body resolves to an explanation: what it means and what a
// client should do (its status, whether it carries Retry-After, whether to
// retry with the same key). A browser gets a page; everyone else, curl's
// */* included, gets the plain text it always got, with the advice after.
func (h *Handler) describeProblem(c echo.Context) error {
	for _, k := range problem.Kinds {
		if k.Slug != c.Param("slug") {
			continue
		}
		c.Response().Header().Add(echo.HeaderVary, echo.HeaderAccept)
		a, _ := k.Advice()
		if wantsHTML(c.Request().Header.Get(echo.HeaderAccept)) {
			return web.Render(c, http.StatusOK, views.ProblemPage(problemDoc(k, a)))
		}
		return c.String(http.StatusOK, problemText(k, a))
	}
	return web.Fail(problem.NotFound, "no such problem type")
}

// wantsHTML reports whether an Accept header names text/html before
// text/plain (or without it): a browser's does, curl's */* does not.
func wantsHTML(accept string) bool {
	for _, r := range strings.Split(accept, ",") {
		media, _, _ := strings.Cut(r, ";")
		switch strings.ToLower(strings.TrimSpace(media)) {
		case "text/html", "application/xhtml+xml":
			return true
		case "text/plain":
			return false
		}
	}
	return false
}

// problemText is the plain form: the title and explanation, as before,
// then what a client should do.
func problemText(k problem.Kind, a problem.Advice) string {
	var b strings.Builder
	b.WriteString(k.Title + "\n\n" + k.About + "\n\n")
	b.WriteString("Status: " + strconv.Itoa(k.Status) + " " + http.StatusText(k.Status) + "\n")
	if a.RetryAfter {
		b.WriteString("Retry-After: sent; wait that many seconds before the retry.\n")
	} else {
		b.WriteString("Retry-After: not sent.\n")
	}
	b.WriteString("What to do: " + a.Do + "\n" + a.Retry.String() + "\n")
	return b.String()
}

// problemDoc is the page's view model.
func problemDoc(k problem.Kind, a problem.Advice) views.ProblemDoc {
	doc := views.ProblemDoc{Slug: k.Slug, Title: k.Title, Status: k.Status, StatusText: http.StatusText(k.Status),
		About: k.About, Do: a.Do, Retry: a.Retry.String(), RetryAfter: a.RetryAfter}
	for _, o := range problem.Kinds {
		doc.Others = append(doc.Others, views.ProblemRef{Slug: o.Slug, Title: o.Title, Status: o.Status})
	}
	return doc
}
