package idemecho

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/idem/idemhttp"
)

// FormOptions configure a Form, as idemhttp.FormOptions do, with Echo's
// context.
type FormOptions struct {
	idem.FormOptions
	// Visitor names the visitor (its keys' scope); default
	// idemhttp.CookieVisitor("idem_visitor").
	Visitor func(c echo.Context) (string, error)
	// StatusPath is where Status is served (GET); default the submit's
	// path and "/status" (idemhttp.FormOptions.StatusPath).
	StatusPath string
	// Layout frames the kit's pages in the application's layout under
	// their titles (idemhttp.FormOptions.Layout); default a bare page.
	Layout func(title string, body Component) Component
	// StartOver is where a visitor goes to fill the form in again
	// (idemhttp.FormOptions.StartOver, which defaults it to "/").
	StartOver string
}

// Component is a piece of HTML of templ's shape (idemhttp.Component): what
// a Layout frames, and what a templ layout is handed.
type Component = idemhttp.Component

// Form is an HTML form protected by a key minted when it is rendered
// (idemhttp.Form), for Echo.
type Form struct {
	http *idemhttp.Form
}

// NewForm returns the form o describes.
func NewForm(o FormOptions) (*Form, error) {
	ho := idemhttp.FormOptions{FormOptions: o.FormOptions, StatusPath: o.StatusPath, Layout: o.Layout, StartOver: o.StartOver}
	if o.Visitor != nil {
		ho.Visitor = func(_ http.ResponseWriter, r *http.Request) (string, error) { return o.Visitor(contextOf(r)) }
	}
	f, err := idemhttp.NewForm(ho)
	if err != nil {
		return nil, err
	}
	return &Form{http: f}, nil
}

// Core is the framework-neutral form under f.
func (f *Form) Core() *idem.Form { return f.http.Core() }

// with returns the request carrying c, for the options' callbacks.
func with(c echo.Context) *http.Request {
	return c.Request().WithContext(context.WithValue(c.Request().Context(), contextKey{}, c))
}

// Key mints the key to render into the form (idemhttp.HiddenFields).
func (f *Form) Key(c echo.Context) (idem.FormKey, error) { return f.http.Key(c.Response(), with(c)) }

// Submit runs work at most once for the key the submitted form carries
// (idemhttp.Form.Submit); refusals and work's errors go to Echo's error
// handler.
func (f *Form) Submit(c echo.Context, fields []string, work idem.Work) error {
	return f.http.Submit(c.Response(), with(c), fields, work)
}

// Status serves the form's StatusPath (idemhttp.Form.Status).
func (f *Form) Status(c echo.Context) error { return f.http.Status(c.Response(), with(c)) }

// WriteError answers one of the kit's refusals of a submit as a page in the
// form's layout, in words for the visitor (idemhttp.Form.WriteError), and
// reports false, writing nothing, for the application's own errors.
func (f *Form) WriteError(c echo.Context, err error) bool {
	return f.http.WriteError(c.Response(), with(c), err)
}

// StatusHandler serves the form's StatusPath whole: Status, a submit that
// left nothing stored (idem.ErrNotFound) sent to StartOver to fill the form
// in again, the kit's refusals written by WriteError; any other error goes
// to Echo's error handler.
func (f *Form) StatusHandler() echo.HandlerFunc {
	return func(c echo.Context) error {
		err := f.Status(c)
		switch {
		case errors.Is(err, idem.ErrNotFound):
			return c.Redirect(http.StatusSeeOther, f.http.StartOver())
		case err != nil && f.WriteError(c, err):
			return nil
		}
		return err
	}
}
