package idemecho5_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v5"

	"exactlyonce/idem"
	"exactlyonce/idem/idemecho5"
	"exactlyonce/idem/idemtest"
)

// What every adapter does (a body read back, a replay, the refusals, forms)
// is idemtest.Conformance's (conformance_test.go). What is Echo's own: a
// handler's error that is not the kit's, here a body c.Bind cannot bind,
// passes through ErrorHandler to the application's Echo handler, which
// answers it in Echo's words.
func TestAnErrorNotTheKitsReachesEchosHandler(t *testing.T) {
	store := idem.NewStore(idemtest.NewPool(t), idem.Options{Lease: 3 * time.Second})
	e := echo.New()
	e.HTTPErrorHandler = idemecho5.ErrorHandler(echo.DefaultHTTPErrorHandler(false))
	keys := idemecho5.New(idemecho5.Options{Store: store, Scope: func(*echo.Context) (string, error) { return "alice", nil }})
	e.POST("/notes", func(c *echo.Context) error {
		var in struct{ A int }
		if err := c.Bind(&in); err != nil {
			return err
		}
		return idemecho5.Do(c, func(context.Context, pgx.Tx) (idem.Response, error) {
			return idem.JSON(http.StatusCreated, map[string]int{"a": in.A})
		})
	}, keys.Middleware())
	req := httptest.NewRequest(http.MethodPost, "/notes", strings.NewReader(`{"a":"x"}`))
	req.Header.Set("Idempotency-Key", "n2")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"message":`) {
		t.Fatalf("got %d %s, want Echo's 400 with its message", rec.Code, rec.Body)
	}
}
