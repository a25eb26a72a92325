package idemecho5_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v5"

	"exactlyonce/idem"
	"exactlyonce/idem/idemecho5"
	"exactlyonce/idem/idemtest"
)

// The Echo adapter keeps idemhttp's promises when nothing is stored: a
// finish whose COMMIT fails is answered 503 with Retry-After and frees the
// key, whether the kit's transaction (Do) or the handler's own (FinishTx)
// failed, and a handler that answers nothing frees the key and is answered
// 500 no-response. Never a panic, never a client left without an answer.
func TestEchoAnswersWhatWasNotStored(t *testing.T) {
	pool := idemtest.NewPool(t)
	_, err := pool.Exec(context.Background(), `
CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL);
CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.body = 'refused at commit' THEN RAISE EXCEPTION 'refused at commit' USING ERRCODE = '23514'; END IF;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER INSERT ON notes
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_at_commit();`)
	if err != nil {
		t.Fatal(err)
	}
	store := idem.NewStore(pool, idem.Options{Lease: 3 * time.Second})
	e := echo.New()
	e.HTTPErrorHandler = idemecho5.ErrorHandler(echo.DefaultHTTPErrorHandler(false))
	keys := idemecho5.New(idemecho5.Options{Store: store, Scope: func(*echo.Context) (string, error) { return "alice", nil }})
	var failing atomic.Bool
	insert := func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
		body := "ok"
		if failing.Load() {
			body = "refused at commit"
		}
		if _, err := tx.Exec(ctx, `INSERT INTO notes (body) VALUES ($1)`, body); err != nil {
			return idem.Response{}, err
		}
		return idem.JSON(http.StatusCreated, map[string]string{"body": body})
	}
	e.POST("/do", keys.Handle(insert))
	e.POST("/own", func(c *echo.Context) error {
		ctx := c.Request().Context()
		var resp idem.Response
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			var err error
			if resp, err = insert(ctx, tx); err != nil {
				return err
			}
			return idemecho5.LockOf(c).FinishTx(ctx, tx, resp)
		})
		if err != nil {
			return err
		}
		return c.Blob(resp.Status, echo.MIMEApplicationJSON, resp.Body)
	}, keys.Middleware())
	e.POST("/silent", func(c *echo.Context) error {
		if !failing.Load() {
			return c.NoContent(http.StatusCreated)
		}
		return nil
	}, keys.Middleware())
	srv := httptest.NewServer(e)
	defer srv.Close()
	send := func(t *testing.T, route string) (int, http.Header, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+route, strings.NewReader(`{}`))
		req.Header.Set("Idempotency-Key", route)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v (the server sent no answer)", route, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	for _, tc := range []struct {
		route string
		want  int
		slug  string
	}{
		{"/do", http.StatusServiceUnavailable, "not-committed"},
		{"/own", http.StatusServiceUnavailable, "not-committed"},
		{"/silent", http.StatusInternalServerError, "no-response"},
	} {
		t.Run(tc.route, func(t *testing.T) {
			failing.Store(true)
			status, header, body := send(t, tc.route)
			if status != tc.want || !strings.Contains(body, `"/problems/`+tc.slug+`"`) ||
				(tc.want == http.StatusServiceUnavailable && header.Get("Retry-After") == "") {
				t.Fatalf("got %d %s (Retry-After %q), want %d %s", status, body, header.Get("Retry-After"), tc.want, tc.slug)
			}
			if _, err := store.Get(t.Context(), "alice", tc.route); !errors.Is(err, idem.ErrNotFound) {
				t.Fatalf("the key: got %v, want it free (idem.ErrNotFound)", err)
			}
			failing.Store(false)
			if status, _, body := send(t, tc.route); status != http.StatusCreated {
				t.Fatalf("the retry: got %d %s, want 201", status, body)
			}
		})
	}
}
