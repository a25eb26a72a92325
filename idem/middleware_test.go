package idem_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
)

// newNotesAPI serves POST /notes under the middleware; its handler writes
// and finishes the key in one transaction.
func newNotesAPI(t *testing.T) (*echo.Echo, func() int) {
	t.Helper()
	s, pool := newStore(t)
	createNotes(t, pool)
	e := echo.New()
	mw := idem.Middleware(idem.MiddlewareConfig{
		Store: s, Required: true,
		Scope: func(c echo.Context) (string, error) { return c.Request().Header.Get("X-Client"), nil },
	})
	e.POST("/notes", func(c echo.Context) error {
		if strings.Contains(c.Request().Header.Get("X-Fail"), "500") {
			return c.JSON(http.StatusInternalServerError, map[string]string{"error": "boom"})
		}
		var id int
		err := pgx.BeginFunc(c.Request().Context(), pool, func(tx pgx.Tx) error {
			if err := tx.QueryRow(c.Request().Context(), `INSERT INTO notes (body) VALUES ('x') RETURNING id`).Scan(&id); err != nil {
				return err
			}
			body := fmt.Sprintf(`{"id":%d}`, id)
			return idem.LockOf(c).FinishTx(c.Request().Context(), tx, idem.Response{
				Status: http.StatusCreated, Body: []byte(body),
				Header: map[string]string{"Location": fmt.Sprintf("/notes/%d", id), "Content-Type": "application/json"},
			})
		})
		if err != nil {
			return err
		}
		c.Response().Header().Set("Location", fmt.Sprintf("/notes/%d", id))
		return c.JSONBlob(http.StatusCreated, []byte(fmt.Sprintf(`{"id":%d}`, id)))
	}, mw)
	return e, func() int { return countNotes(t, pool) }
}

func post(e *echo.Echo, key, body string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/notes", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Client", "alice")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

func TestMiddleware(t *testing.T) {
	e, notes := newNotesAPI(t)

	first := post(e, `"n1"`, `{"a": 1, "b": 2}`)
	if first.Code != http.StatusCreated || first.Header().Get(idem.HeaderReplayed) != "" {
		t.Fatalf("first: got %d %v, want a fresh 201", first.Code, first.Header())
	}

	t.Run("a retry with the same body in another order is replayed", func(t *testing.T) {
		again := post(e, `"n1"`, `{"b":2,"a":1}`)
		if again.Code != http.StatusCreated || again.Body.String() != first.Body.String() ||
			again.Header().Get("Location") != first.Header().Get("Location") ||
			again.Header().Get("Content-Type") != "application/json" ||
			again.Header().Get(idem.HeaderReplayed) != "true" {
			t.Fatalf("got %d %q %v, want the first answer replayed", again.Code, again.Body, again.Header())
		}
		if got := notes(); got != 1 {
			t.Fatalf("got %d notes, want 1", got)
		}
	})

	t.Run("the bare key form names the same key", func(t *testing.T) {
		if got := post(e, `n1`, `{"a":1,"b":2}`); got.Header().Get(idem.HeaderReplayed) != "true" {
			t.Fatalf("got %d, want a replay", got.Code)
		}
	})

	for _, tc := range []struct {
		name, key, body string
		want            int
	}{
		{"another body with the key is refused", `"n1"`, `{"a":2}`, http.StatusUnprocessableEntity},
		{"no key is refused", ``, `{}`, http.StatusBadRequest},
		{"a key with parameters is refused", `"n2";x=1`, `{}`, http.StatusBadRequest},
		{"an empty key is refused", `""`, `{}`, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := post(e, tc.key, tc.body); got.Code != tc.want {
				t.Fatalf("got %d %s, want %d", got.Code, got.Body, tc.want)
			}
		})
	}

	t.Run("a 5xx is not stored, so a retry runs again", func(t *testing.T) {
		if got := post(e, `"n3"`, `{}`, "X-Fail", "500"); got.Code != http.StatusInternalServerError {
			t.Fatalf("got %d, want 500", got.Code)
		}
		if got := post(e, `"n3"`, `{}`); got.Code != http.StatusCreated || got.Header().Get(idem.HeaderReplayed) != "" {
			t.Fatalf("retry: got %d %v, want a fresh 201", got.Code, got.Header())
		}
	})
}

func TestMiddlewareAnswers409WhileAKeyIsHeld(t *testing.T) {
	s, _ := newStore(t)
	e := echo.New()
	entered, release := make(chan struct{}), make(chan struct{})
	e.POST("/slow", func(c echo.Context) error {
		close(entered)
		<-release
		return c.NoContent(http.StatusNoContent)
	}, idem.Middleware(idem.MiddlewareConfig{Store: s,
		Scope: func(echo.Context) (string, error) { return "alice", nil }}))
	send := func() int {
		req := httptest.NewRequest(http.MethodPost, "/slow", strings.NewReader(`{}`))
		req.Header.Set("Idempotency-Key", "k")
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req.WithContext(context.Background()))
		return rec.Code
	}
	done := make(chan int)
	go func() { done <- send() }()
	<-entered
	if got := send(); got != http.StatusConflict {
		t.Fatalf("concurrent retry: got %d, want 409", got)
	}
	close(release)
	if got := <-done; got != http.StatusNoContent {
		t.Fatalf("first: got %d, want 204", got)
	}
	if got := send(); got != http.StatusNoContent {
		t.Fatalf("replay: got %d, want 204", got)
	}
}
