package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/problem"
	"exactlyonce/internal/session"
	"exactlyonce/internal/web"
	"exactlyonce/views"
)

// csrfProtection guards every state-changing form of the pages. A safe
// request gets the token its forms must carry (and the cookie that seals
// it, the first time). An unsafe one must be same-origin by the browser's
// own account (Sec-Fetch-Site or Origin, checked by net/http) and carry the
// token matching its cookie.
//
// Echo's CSRF middleware is not used: since v4.15 it skips the token check
// whenever Sec-Fetch-Site says same-origin and then hands the page a fixed
// placeholder instead of a token, so "a wrong token is refused" would not
// hold in browsers, and its cookie is not signed.
func (h *Handler) csrfProtection() echo.MiddlewareFunc {
	sameOrigin := http.NewCrossOriginProtection()
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			switch r.Method {
			case http.MethodGet, http.MethodHead, http.MethodOptions:
				token, err := h.sessions.CSRFToken(c.Response(), r)
				if err != nil {
					return err
				}
				c.Set(csrfKey, token)
				return next(c)
			}
			if err := sameOrigin.Check(r); err != nil {
				return &web.PageError{Status: http.StatusForbidden, Title: "Request refused",
					Message: "This form was sent from another site, so it was refused. Nothing was changed.",
					Action:  views.Link{Href: "/", Label: "Go to the shop"}, Err: err}
			}
			if err := readForm(r); err != nil {
				return err
			}
			token := c.FormValue("csrf_token")
			err := h.sessions.CheckCSRF(r, token)
			switch {
			case errors.Is(err, session.ErrCSRFMissing):
				return &web.PageError{Status: http.StatusBadRequest, Title: "Form incomplete",
					Message: "This form arrived without its security token. Nothing was changed or charged; reload the page and try again.",
					Action:  views.Link{Href: "/cart", Label: "Back to your cart"}, Err: err}
			case err != nil:
				return &web.PageError{Status: http.StatusForbidden, Title: "Form expired",
					Message: "This form's security token does not match your browser's, for instance because cookies were cleared. Nothing was changed or charged; reload the page and try again.",
					Action:  views.Link{Href: "/cart", Label: "Back to your cart"}, Err: err}
			}
			// A page answering the post (a retry form) carries the same token.
			c.Set(csrfKey, token)
			return next(c)
		}
	}
}

// readForm reads the form's body before anything looks into it: FormValue
// swallows a read that failed and answers "", which would make a body cut
// off by the server's read timeout (a client too slow to send it) look like
// a form without its token (400). That is the client's slowness: 408, a
// warning, as for a JSON body (web.ReadBody). A body over the limit stays
// the BodyLimit middleware's 413.
func readForm(r *http.Request) error {
	// ParseForm alone leaves a multipart body (a script's FormData, as the
	// lab's Run buttons send) unread but r.Form set, so FormValue would
	// never read it and the token would be missing: a multipart body is
	// parsed after it. ParseForm comes first because ParseMultipartForm
	// answers a urlencoded body's read error with ErrNotMultipart.
	err := r.ParseForm()
	if err == nil {
		if err = r.ParseMultipartForm(32 << 20); errors.Is(err, http.ErrNotMultipart) {
			err = nil
		}
	}
	var tooLarge *http.MaxBytesError
	var he *echo.HTTPError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &tooLarge), errors.As(err, &he):
		return err
	}
	return &web.Failure{Kind: problem.RequestTimeout, Detail: "the form did not arrive whole in time; send it again"}
}
