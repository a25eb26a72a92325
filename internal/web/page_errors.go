package web

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/problem"
	"exactlyonce/views"
)

// PageError is a page handler's own refusal of its form, worded for that
// form (an expired checkout form, a quantity out of range). It is not an
// error the API could meet, so it has no row in the error table; every
// error that both audiences can meet is worded there instead.
type PageError struct {
	Status  int
	Title   string
	Message string
	Action  views.Link
	// Err is the cause, for the log.
	Err error
}

func (e *PageError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%d %s: %v", e.Status, e.Title, e.Err)
	}
	return fmt.Sprintf("%d %s", e.Status, e.Title)
}

func (e *PageError) Unwrap() error { return e.Err }

// The ways on from a page's own refusals; the table's rows name theirs.
var (
	BackToShop  = PageLink(problem.ToShop)
	BackToCart  = PageLink(problem.ToCart)
	NewCheckout = PageLink(problem.ToCheckout)
)

// PageLink is an error page's way on, as the views take it.
func PageLink(l problem.Link) views.Link { return views.Link{Href: l.Href, Label: l.Label} }

// Page makes a route part of the browser face: its errors, and those of
// the middleware after it, are answered with an HTML page.
func (e *Errors) Page(next echo.HandlerFunc) echo.HandlerFunc {
	return e.With(WritePage)(next)
}

// WritePage is the browser face's error renderer: the row's page copy (or
// a page handler's own refusal) as an HTML page with the row's status.
func WritePage(c echo.Context, f *Failure, err error) error {
	p := views.ErrorPage{Status: f.Kind.Status, Title: f.Kind.Page.Heading, Message: f.Kind.Page.Message,
		Action: PageLink(f.Kind.Page.Next)}
	if f.Reason != "" {
		p.Message += " (" + f.Reason + ")"
	}
	if pe, ok := errors.AsType[*PageError](err); ok {
		p = views.ErrorPage{Status: pe.Status, Title: pe.Title, Message: pe.Message, Action: pe.Action}
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	if rerr := Render(c, p.Status, views.Error(p)); rerr != nil {
		// The page itself failed: a line of text is still an answer.
		_ = c.String(p.Status, strconv.Itoa(p.Status)+" "+p.Title)
		return rerr
	}
	return nil
}

// methodNotAllowed answers a method a path does not serve. It is
// registered by the path's route set (RouteSet.refuseOtherMethods) so that
// the 405 is worded for the set's audience; allow lists the methods the
// path does serve.
func methodNotAllowed(allow string) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderAllow, allow)
		return Fail(problem.MethodNotAllowed, fmt.Sprintf("%s is not allowed on %s; it allows %s", c.Request().Method, c.Request().URL.Path, allow))
	}
}
