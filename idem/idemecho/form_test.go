package idemecho_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/idem/idemecho"
	"exactlyonce/idem/idemhttp"
	"exactlyonce/idem/idemtest"
)

var errOwn = errors.New("the application's own error")

// layout marks the application's layout around the kit's page.
type layout struct{ body idemhttp.Component }

func (l layout) Render(ctx context.Context, w io.Writer) error {
	if _, err := io.WriteString(w, "<main class=layout>"); err != nil {
		return err
	}
	return l.body.Render(ctx, w)
}

// formApp serves POST /send through a form whose visitor is always alice and
// whose page marks the layout; the amount 0 makes the work fail with errOwn.
func formApp(t *testing.T, o idemecho.FormOptions) (*echo.Echo, *idemecho.Form) {
	t.Helper()
	o.FormOptions = idem.FormOptions{Store: idem.NewStore(idemtest.NewPool(t), idem.Options{}), Secret: []byte(strings.Repeat("s", 32))}
	o.StatusPath = "/send/status"
	o.Visitor = func(echo.Context) (string, error) { return "alice", nil }
	o.Layout = func(_ string, body idemecho.Component) idemecho.Component {
		return layout{body}
	}
	form, err := idemecho.NewForm(o)
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.POST("/send", func(c echo.Context) error {
		amount := c.FormValue("amount")
		err := form.Submit(c, []string{amount}, func(context.Context, pgx.Tx) (idem.Response, error) {
			if amount == "0" {
				return idem.Response{}, errOwn
			}
			return idem.Redirect("/sent"), nil
		})
		if err != nil && !form.WriteError(c, err) {
			return c.String(http.StatusTeapot, err.Error())
		}
		return nil
	})
	return e, form
}

func submit(e *echo.Echo, key idem.FormKey, amount string) *httptest.ResponseRecorder {
	body := url.Values{idem.KeyField: {key.Key}, idem.SigField: {key.Sig}, "amount": {amount}}.Encode()
	req := httptest.NewRequest(http.MethodPost, "/send", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

// The kit's refusals of a submit are rendered through the form's page in
// words for the visitor; the application's own errors are left to it.
func TestFormWriteError(t *testing.T) {
	e, form := formApp(t, idemecho.FormOptions{StartOver: "/send"})
	key := form.Core().Mint("alice")
	if rec := submit(e, key, "5"); rec.Code != http.StatusSeeOther {
		t.Fatalf("first submit: %d", rec.Code)
	}
	rec := submit(e, key, "6")
	body := rec.Body.String()
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(body, "<main class=layout>") ||
		!strings.Contains(body, "already sent") || !strings.Contains(body, `href="/send"`) ||
		strings.Contains(strings.ToLower(body), "idempotency") {
		t.Fatalf("the same key with other values: %d %q, want 422 in the layout, in the visitor's words, with a way back", rec.Code, body)
	}
	if rec := submit(e, form.Core().Mint("alice"), "0"); rec.Code != http.StatusTeapot {
		t.Fatalf("the work's own error: %d %q, want it left to the application", rec.Code, rec.Body)
	}
}

// The status route written once: a finished submit's answer, and a key
// with nothing stored sent to StartOver.
func TestFormStatusHandler(t *testing.T) {
	e, form := formApp(t, idemecho.FormOptions{StartOver: "/send"})
	e.GET("/send/status", form.StatusHandler())
	key := form.Core().Mint("alice")
	submit(e, key, "5")
	status := func(key string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/send/status?"+url.Values{"key": {key}}.Encode(), nil))
		return rec
	}
	if rec := status(key.Key); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/sent" {
		t.Fatalf("a finished key: %d %v, want its 303 to /sent", rec.Code, rec.Header())
	}
	if rec := status(form.Core().Mint("alice").Key); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/send" {
		t.Fatalf("a key with nothing stored: %d %v, want a 303 to StartOver", rec.Code, rec.Header())
	}
}
