package idemecho5_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v5"

	"exactlyonce/idem"
	"exactlyonce/idem/idemecho5"
)

// The examples that need a database compile but do not run (they have no
// Output); examples/echojson in the repository runs the same calls end to
// end.

func newStore() *idem.Store {
	pool, err := pgxpool.New(context.Background(), os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	return idem.NewStore(pool, idem.Options{})
}

// A handler under Middleware binds its body (Middleware put it back after
// reading it for the fingerprint), then writes with Do; an error it returns
// before Do frees the key.
func ExampleDo() {
	e := echo.New()
	e.HTTPErrorHandler = idemecho5.ErrorHandler(echo.DefaultHTTPErrorHandler(false))
	keys := idemecho5.New(idemecho5.Options{Store: newStore(),
		Scope: func(c *echo.Context) (string, error) { return c.Request().Header.Get("X-Account"), nil }})
	e.POST("/notes", func(c *echo.Context) error {
		var in struct {
			Text string `json:"text"`
		}
		if err := c.Bind(&in); err != nil {
			return err
		}
		return idemecho5.Do(c, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
			var id int64
			if err := tx.QueryRow(ctx, `INSERT INTO notes (text) VALUES ($1) RETURNING id`, in.Text).Scan(&id); err != nil {
				return idem.Response{}, err
			}
			return idem.JSON(http.StatusCreated, map[string]any{"id": id, "text": in.Text})
		})
	}, keys.Middleware())
	log.Fatal(e.Start("127.0.0.1:8080"))
}

// A route whose write needs nothing of the request but its key.
func ExampleKeys_Handle() {
	e := echo.New()
	e.HTTPErrorHandler = idemecho5.ErrorHandler(echo.DefaultHTTPErrorHandler(false))
	keys := idemecho5.New(idemecho5.Options{Store: newStore(),
		Scope: func(c *echo.Context) (string, error) { return c.Request().Header.Get("X-Account"), nil }})
	e.POST("/reports", keys.Handle(func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
		var id int64
		if err := tx.QueryRow(ctx, `INSERT INTO reports DEFAULT VALUES RETURNING id`).Scan(&id); err != nil {
			return idem.Response{}, err
		}
		return idem.JSON(http.StatusCreated, map[string]int64{"id": id})
	}))
	log.Fatal(e.Start("127.0.0.1:8080"))
}

// The kit's refusals are answered as problem+json; Echo's own errors, and
// the application's, by the handler it is given.
func ExampleErrorHandler() {
	e := echo.New()
	e.HTTPErrorHandler = idemecho5.ErrorHandler(echo.DefaultHTTPErrorHandler(false))
	e.GET("/reused", func(c *echo.Context) error { return idem.ErrMismatch })
	e.GET("/missing", func(c *echo.Context) error { return echo.ErrNotFound })
	for _, path := range []string{"/reused", "/missing"} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	}
	// Output:
	// 422 application/problem+json
	// 404 application/json
}
