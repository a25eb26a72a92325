package idemecho5_test

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"

	"exactlyonce/idem"
	"exactlyonce/idem/idemecho5"
	"exactlyonce/idem/idemtest"
)

// A middleware outside the kit's that wraps the response (Echo's gzip)
// compresses the answer as it is sent, fresh or replayed, and the key
// stores it plain: the handler writes to the kit's recorder
// (c.SetResponse), not to the writer under the wrapper, whose bytes would
// be half a gzip stream.
func TestMiddlewareUnderAWrappingMiddleware(t *testing.T) {
	pool := idemtest.NewPool(t)
	store := idem.NewStore(pool, idem.Options{Lease: 3 * time.Second})
	e := echo.New()
	e.Use(middleware.Gzip())
	e.HTTPErrorHandler = idemecho5.ErrorHandler(echo.DefaultHTTPErrorHandler(false))
	keys := idemecho5.New(idemecho5.Options{Store: store, Scope: func(*echo.Context) (string, error) { return "alice", nil }})
	e.POST("/notes", func(c *echo.Context) error {
		return idemecho5.Do(c, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
			return idem.JSON(http.StatusCreated, map[string]string{"note": strings.Repeat("n", 64)})
		})
	}, keys.Middleware())
	want := `{"note":"` + strings.Repeat("n", 64) + `"}`
	for _, replayed := range []string{"", "true"} {
		req := httptest.NewRequest(http.MethodPost, "/notes", strings.NewReader(`{}`))
		req.Header.Set("Idempotency-Key", "g1")
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated || rec.Header().Get("Content-Encoding") != "gzip" || rec.Header().Get(idem.HeaderReplayed) != replayed {
			t.Fatalf("got %d %v, want 201 gzipped (replayed %q)", rec.Code, rec.Header(), replayed)
		}
		zr, err := gzip.NewReader(rec.Body)
		if err != nil {
			t.Fatalf("the answer is not gzip: %v", err)
		}
		if body, err := io.ReadAll(zr); err != nil || strings.TrimSpace(string(body)) != want {
			t.Fatalf("the answer unzipped: got %q (%v), want %s", body, err, want)
		}
	}
	stored, err := store.Get(t.Context(), "alice", "g1")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(stored.Body)); got != want {
		t.Fatalf("the stored answer: got %q, want it plain, %s", got, want)
	}
}
