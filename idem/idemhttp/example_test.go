package idemhttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/idem"
	"exactlyonce/idem/idemhttp"
)

// The examples that need a database compile but do not run (they have no
// Output); examples/sendmoney and examples/echojson in the repository run
// the same calls end to end.

func newStore() *idem.Store {
	pool, err := pgxpool.New(context.Background(), os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	return idem.NewStore(pool, idem.Options{})
}

// A route whose write needs nothing of the request but its key.
func ExampleKeys_Handle() {
	keys := idemhttp.New(idemhttp.Options{Store: newStore(),
		Scope: func(r *http.Request) (string, error) { return r.Header.Get("X-Account"), nil }})
	mux := http.NewServeMux()
	mux.Handle("POST /reports", keys.Handle(func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
		var id int64
		if err := tx.QueryRow(ctx, `INSERT INTO reports DEFAULT VALUES RETURNING id`).Scan(&id); err != nil {
			return idem.Response{}, err
		}
		return idem.JSON(http.StatusCreated, map[string]int64{"id": id})
	}))
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", mux))
}

// A handler under Middleware reads its body (Middleware put it back after
// reading it for the fingerprint), then writes with Do.
func ExampleDo() {
	keys := idemhttp.New(idemhttp.Options{Store: newStore(),
		Scope: func(r *http.Request) (string, error) { return r.Header.Get("X-Account"), nil }})
	mux := http.NewServeMux()
	mux.Handle("POST /notes", keys.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Text string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			// Sent, not stored: the work has not begun, so the key is
			// freed and the corrected body runs under the same key.
			http.Error(w, "the body is not a note", http.StatusBadRequest)
			return
		}
		err := idemhttp.Do(w, r, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
			var id int64
			if err := tx.QueryRow(ctx, `INSERT INTO notes (text) VALUES ($1) RETURNING id`, in.Text).Scan(&id); err != nil {
				return idem.Response{}, err
			}
			return idem.JSON(http.StatusCreated, map[string]any{"id": id, "text": in.Text})
		})
		if err != nil {
			idemhttp.WriteError(w, r, err)
		}
	})))
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", mux))
}

// A form: a key minted when it is rendered, the work run once however often
// it is submitted, the status route for a submit still running after the
// wait.
func ExampleForm() {
	form, err := idemhttp.NewForm(idemhttp.FormOptions{
		FormOptions: idem.FormOptions{Store: newStore(), Secret: []byte(os.Getenv("FORM_SECRET"))},
		StatusPath:  "/send/status",
		StartOver:   "/send",
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /send", func(w http.ResponseWriter, r *http.Request) {
		key, err := form.Key(w, r)
		if err != nil {
			idemhttp.WriteError(w, r, err)
			return
		}
		fmt.Fprint(w, `<form method="post" action="/send">`)
		idemhttp.HiddenFields(key).Render(r.Context(), w) //nolint:errcheck // its only error is a failed write: the client hung up
		fmt.Fprint(w, `<input name="amount"><button>Send</button></form>`)
	})
	mux.HandleFunc("POST /send", func(w http.ResponseWriter, r *http.Request) {
		amount := r.PostFormValue("amount")
		err := form.Submit(w, r, []string{amount}, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
			// The visitor the form computed is the lock's scope.
			_, err := tx.Exec(ctx, `INSERT INTO transfers (sender, amount) VALUES ($1, $2)`, idem.LockOf(ctx).Scope, amount)
			return idem.Redirect("/sent"), err
		})
		// The kit's refusals as a page in the visitor's words; the
		// application's own errors are its to answer.
		if err != nil && !form.WriteError(w, r, err) {
			log.Print(err)
			http.Error(w, "Something went wrong", http.StatusInternalServerError)
		}
	})
	// The status route, its "start over" (StartOver) included.
	mux.Handle("GET /send/status", form.StatusHandler())
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", mux))
}

func ExampleWriteError() {
	rec := httptest.NewRecorder()
	idemhttp.WriteError(rec, httptest.NewRequest(http.MethodPost, "/notes", nil), &idem.InProgressError{RetryAfter: 2 * time.Second})
	fmt.Println(rec.Code, rec.Header().Get("Retry-After"), rec.Header().Get("Content-Type"))
	fmt.Print(rec.Body)
	// Output:
	// 409 2 application/problem+json
	// {"detail":"a request with this key is still running; retry after Retry-After seconds","status":409,"title":"Request in progress","type":"/problems/request-in-progress"}
}
