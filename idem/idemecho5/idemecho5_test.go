package idemecho5_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v5"

	"exactlyonce/idem"
	"exactlyonce/idem/idemecho5"
	"exactlyonce/idem/idemtest"
)

// An Echo route under the kit's middleware: the handler binds the body
// (which the middleware put back) and writes with Do, a retry is replayed,
// another body with the key is refused, and the refusals reach Echo's error
// handler.
func TestMiddleware(t *testing.T) {
	pool := idemtest.NewPool(t)
	store := idem.NewStore(pool, idem.Options{Lease: 3 * time.Second})
	e := echo.New()
	e.HTTPErrorHandler = idemecho5.ErrorHandler(echo.DefaultHTTPErrorHandler(false))
	keys := idemecho5.New(idemecho5.Options{Store: store, MaxBody: 64, Scope: func(*echo.Context) (string, error) { return "alice", nil }})
	runs := 0
	e.POST("/notes", func(c *echo.Context) error {
		var in struct{ A int }
		if err := c.Bind(&in); err != nil {
			return err
		}
		runs++
		return idemecho5.Do(c, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
			return idem.JSON(http.StatusCreated, map[string]int{"run": runs, "a": in.A})
		})
	}, keys.Middleware())
	send := func(key, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/notes", strings.NewReader(body))
		req.Header.Set("Idempotency-Key", key)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec
	}
	first, again := send("n1", `{"a":1}`), send("n1", `{ "a": 1 }`)
	if first.Code != http.StatusCreated || first.Header().Get(idem.HeaderReplayed) != "" || !strings.Contains(first.Body.String(), `"a":1`) {
		t.Fatalf("first: got %d %v, want a fresh 201", first.Code, first.Header())
	}
	if again.Code != http.StatusCreated || again.Body.String() != first.Body.String() || again.Header().Get(idem.HeaderReplayed) != "true" || runs != 1 {
		t.Fatalf("again: got %d %q %v after %d runs, want the first answer replayed", again.Code, again.Body, again.Header(), runs)
	}
	for _, tc := range []struct {
		name, body string
		want       int
		answer     string
	}{
		{"another body with the key", `{"a":2}`, http.StatusUnprocessableEntity, `"type":"/problems/idempotency-key-reused"`},
		{"a body over MaxBody", `{"a":"` + strings.Repeat("x", 64) + `"}`, http.StatusRequestEntityTooLarge, `"type":"/problems/body-too-large"`},
		{"a body the handler cannot bind, by Echo's handler", `{"a":"x"}`, http.StatusBadRequest, `"message":`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "n2"
			if tc.want == http.StatusUnprocessableEntity {
				key = "n1"
			}
			if got := send(key, tc.body); got.Code != tc.want || !strings.Contains(got.Body.String(), tc.answer) {
				t.Fatalf("got %d %s, want %d with %s", got.Code, got.Body, tc.want, tc.answer)
			}
		})
	}
}

// A form through the Echo adapter: the key minted at render, submitted
// twice, does its work once and answers both with the same redirect, the
// second marked as a replay.
func TestForm(t *testing.T) {
	pool := idemtest.NewPool(t)
	store := idem.NewStore(pool, idem.Options{Lease: 3 * time.Second})
	form, err := idemecho5.NewForm(idemecho5.FormOptions{
		FormOptions: idem.FormOptions{Store: store, Secret: []byte(strings.Repeat("s", 32))},
		StatusPath:  "/send/status",
	})
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	var key idem.FormKey
	e.GET("/send", func(c *echo.Context) error {
		var err error
		key, err = form.Key(c)
		return err
	})
	sent := 0
	e.POST("/send", func(c *echo.Context) error {
		return form.Submit(c, []string{c.FormValue("amount")}, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
			sent++
			return idem.Redirect("/sent/1"), nil
		})
	})
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/send", nil))
	cookie := rec.Result().Cookies()[0]
	submit := func() *httptest.ResponseRecorder {
		body := url.Values{idem.KeyField: {key.Key}, idem.SigField: {key.Sig}, "amount": {"10"}}.Encode()
		req := httptest.NewRequest(http.MethodPost, "/send", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(cookie)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec
	}
	first, again := submit(), submit()
	if first.Code != http.StatusSeeOther || first.Header().Get("Location") != "/sent/1" || first.Header().Get(idem.HeaderReplayed) != "" {
		t.Fatalf("first: got %d %v, want a fresh 303 to /sent/1", first.Code, first.Header())
	}
	if again.Code != http.StatusSeeOther || again.Header().Get(idem.HeaderReplayed) != "true" || sent != 1 {
		t.Fatalf("again: got %d %v after %d sends, want the same 303, replayed, after 1", again.Code, again.Header(), sent)
	}
}
