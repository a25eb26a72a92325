package idem

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
)

// FormFlow is the server side of a protected HTML form: checking its key,
// running the work once, and the "processing" page for a submission that is
// still running when the browser asks again.
type FormFlow struct {
	Store *Store
	Forms *Forms
	// StatusPath is the route of Status, e.g. "/pickup/status".
	StatusPath string
	// Wait is how long a submission waits for another attempt holding its
	// key before the browser is sent to the processing page.
	Wait time.Duration
	// Page renders a component as a whole page with the given status.
	Page func(c echo.Context, status int, body templ.Component) error
}

// Submission is one submitted form.
type Submission struct {
	Visitor string // who the key was minted for; also the key's scope
	Version string // the version of what the form showed
	// Fields identify what was asked, in a fixed order; the same key sent
	// with other fields is refused with ErrMismatch.
	Fields []string
}

// Submit verifies the form's key and runs work at most once for it. work
// writes in its transaction and answers with a redirect (303 and a
// Location) to the result, which retries replay. A submission whose key
// another attempt holds is sent to the processing page. Errors (ErrFormKey…,
// ErrMismatch, work's own) are returned for the application's error handler.
func (f *FormFlow) Submit(c echo.Context, s Submission, work Work) error {
	k := FormKeyOf(c)
	if err := f.Forms.Verify(s.Visitor, s.Version, k); err != nil {
		return err
	}
	parts := [][]byte{[]byte(s.Version)}
	for _, field := range s.Fields {
		parts = append(parts, []byte(field))
	}
	r := Request{Scope: s.Visitor, Key: k.Key, Fingerprint: Fingerprint(parts...)}
	o, err := f.Store.Do(c.Request().Context(), r, f.Wait, work)
	if errors.Is(err, ErrInProgress) {
		return c.Redirect(http.StatusSeeOther, f.statusURL(k.Key))
	}
	if err != nil {
		return err
	}
	return Write(c, o)
}

func (f *FormFlow) statusURL(key string) string {
	return f.StatusPath + "?" + url.Values{"key": {key}}.Encode()
}

// Status answers the processing page's GET: the stored answer (a redirect to
// the result) once the key is finished, else the processing page again with
// a Refresh header. visitor names the scope, as in Submit.
func (f *FormFlow) Status(c echo.Context, visitor string) error {
	key := c.QueryParam("key")
	if CheckKey(key) != nil {
		return echo.ErrNotFound
	}
	resp, err := f.Store.Get(c.Request().Context(), visitor, key)
	switch {
	case errors.Is(err, ErrInProgress):
		c.Response().Header().Set("Refresh", "1")
		return f.Page(c, http.StatusAccepted, Processing(f.statusURL(key)))
	case errors.Is(err, ErrNotFound):
		return echo.ErrNotFound
	case err != nil:
		return err
	}
	return Replay(c, resp)
}
