package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
)

// render writes a page. It renders into a buffer first, so that a template
// that fails is an error page, never half a page under a 200. Pages are not
// stored by caches unless the handler chose otherwise: most hold a CSRF
// token, and some hold a shopper's order.
func Render(c echo.Context, status int, page templ.Component) error {
	var buf bytes.Buffer
	// Not cut short by the request's end: a request whose body read failed
	// (the read timeout) has its context cancelled, and still gets its page.
	if err := page.Render(context.WithoutCancel(c.Request().Context()), &buf); err != nil {
		return fmt.Errorf("render page: %w", err)
	}
	h := c.Response().Header()
	if h.Get(echo.HeaderCacheControl) == "" {
		h.Set(echo.HeaderCacheControl, "no-store")
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// seeOther answers a form post with 303 See Other, the post/redirect/get
// that keeps a refresh of the next page from sending the form again.
func SeeOther(c echo.Context, url string) error {
	return c.Redirect(http.StatusSeeOther, url)
}
