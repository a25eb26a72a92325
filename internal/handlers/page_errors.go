package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/problem"
	"exactlyonce/views"
)

// pageError is a page handler's own refusal of its form, worded for that
// form (an expired checkout form, a quantity out of range). It is not an
// error the API could meet, so it has no row in the error table; every
// error that both audiences can meet is worded there instead.
type pageError struct {
	status  int
	title   string
	message string
	action  views.Link
	// err is the cause, for the log.
	err error
}

func (e *pageError) Error() string {
	if e.err != nil {
		return fmt.Sprintf("%d %s: %v", e.status, e.title, e.err)
	}
	return fmt.Sprintf("%d %s", e.status, e.title)
}

func (e *pageError) Unwrap() error { return e.err }

// The ways on from a page's own refusals; the table's rows name theirs.
var (
	backToShop  = link(problem.ToShop)
	backToCart  = link(problem.ToCart)
	newCheckout = link(problem.ToCheckout)
)

func link(l problem.Link) views.Link { return views.Link{Href: l.Href, Label: l.Label} }

// asPage makes a route part of the browser face: its errors, and those of
// the middleware after it, are answered with an HTML page.
func (h *Handler) asPage(next echo.HandlerFunc) echo.HandlerFunc {
	return h.answersWith(writePage)(next)
}

// writePage is the browser face's error renderer: the row's page copy (or
// a page handler's own refusal) as an HTML page with the row's status.
func writePage(c echo.Context, f *failure, err error) error {
	p := views.ErrorPage{Status: f.kind.Status, Title: f.kind.Page.Heading, Message: f.kind.Page.Message,
		Action: link(f.kind.Page.Next)}
	if f.reason != "" {
		p.Message += " (" + f.reason + ")"
	}
	if pe, ok := errors.AsType[*pageError](err); ok {
		p = views.ErrorPage{Status: pe.status, Title: pe.title, Message: pe.message, Action: pe.action}
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	if rerr := render(c, p.Status, views.Error(p)); rerr != nil {
		// The page itself failed: a line of text is still an answer.
		_ = c.String(p.Status, strconv.Itoa(p.Status)+" "+p.Title)
		return rerr
	}
	return nil
}

// methodNotAllowed answers a method a path does not serve. It is
// registered by the path's route set (routeSet.refuseOtherMethods) so that
// the 405 is worded for the set's audience; allow lists the methods the
// path does serve.
func methodNotAllowed(allow string) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderAllow, allow)
		return echo.NewHTTPError(http.StatusMethodNotAllowed)
	}
}
