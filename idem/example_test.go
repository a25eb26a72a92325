package idem_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/idem"
)

// The examples that need a database compile but do not run (they have no
// Output): they connect to DATABASE_URL, as an application does.

func ExampleMigrate() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	// The kit's table and functions, once, whichever instance starts first.
	if err := idem.Migrate(ctx, pool); err != nil {
		log.Fatal(err)
	}
}

func ExampleStore_Do() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	keys := idem.NewStore(pool, idem.Options{})

	// The same request, sent again with its key, gets the same answer:
	// the order is inserted once.
	body := []byte(`{"sku": "tea"}`)
	req := idem.Request{Scope: "customer-42", Key: "order-7",
		Fingerprint: idem.Fingerprint([]byte("POST /orders"), idem.NormalizeJSON(body))}
	for range 2 {
		out, err := keys.Do(ctx, req, idem.DefaultWait, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
			var id int64
			if err := tx.QueryRow(ctx, `INSERT INTO orders (sku) VALUES ('tea') RETURNING id`).Scan(&id); err != nil {
				return idem.Response{}, err
			}
			return idem.JSON(http.StatusCreated, map[string]int64{"id": id})
		})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(out.Status, out.Replayed, string(out.Body)) // 201 false {"id":1}, then 201 true {"id":1}
	}
}

// Claim and FinishTx are Do's parts, for work that needs more than one
// transaction around its write (a call to another service first): the
// caller keeps the lease while it works and finishes the key in the
// transaction of its write.
func ExampleStore_Claim() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	keys := idem.NewStore(pool, idem.Options{})

	c, err := keys.Claim(ctx, idem.Request{Scope: "customer-42", Key: "refund-3", Fingerprint: idem.Fingerprint([]byte("refund 3"))})
	switch {
	case errors.Is(err, idem.ErrInProgress), errors.Is(err, idem.ErrMismatch):
		log.Fatal(err) // 409 or 422: idem.RefusalOf
	case err != nil:
		log.Fatal(err)
	case c.Replay != nil:
		fmt.Println("replay:", c.Replay.Status)
		return
	}
	held, stop := c.Lock.Keep(ctx) // renews the lease; ends held if the key is lost
	defer stop()
	// … call the payment provider under held, with a key derived from
	// c.Lock.OperationID, the same for every attempt of this operation …
	err = pgx.BeginFunc(held, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(held, `INSERT INTO refunds (order_id) VALUES (3)`); err != nil {
			return err
		}
		// ErrLockLost: another attempt took the key over, and this write
		// rolls back.
		return c.Lock.FinishTx(held, tx, idem.Response{Status: http.StatusCreated})
	})
	if err != nil {
		c.Lock.Release(context.WithoutCancel(ctx)) //nolint:errcheck // nothing was written: a retry starts afresh
		log.Fatal(err)
	}
}

func ExampleMaintain() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	keys := idem.NewStore(pool, idem.Options{})

	// Releases keys whose attempt died (the default Settler, idem.Release)
	// and deletes answers older than a day, until ctx ends.
	go idem.Maintain(ctx, idem.Maintenance{Store: keys})
}

func ExampleForm_Submit() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	form, err := idem.NewForm(idem.FormOptions{Store: idem.NewStore(pool, idem.Options{}), Secret: []byte(os.Getenv("FORM_SECRET"))})
	if err != nil {
		log.Fatal(err)
	}

	// When the form is rendered: a key for this visitor, in hidden fields.
	key := form.Mint("visitor-1")
	// When it comes back, however often: the work runs once.
	out, err := form.Submit(ctx, "visitor-1", key, []string{"Ada", "20"}, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
		_, err := tx.Exec(ctx, `INSERT INTO transfers (friend, amount) VALUES ('Ada', 20)`)
		return idem.Redirect("/sent"), err
	})
	if err != nil {
		log.Fatal(err) // idem.RefusalOf: 400 for a foreign or stale key, 422 for other fields
	}
	fmt.Println(out.Status, out.Header["Location"])
}

// A key is bound to the visitor it was minted for and to the version of the
// form: carried to another, it is refused.
func ExampleForms() {
	forms := idem.NewForms([]byte("a secret of 32 bytes or more....."), time.Hour)
	key := forms.Mint("visitor-1", "slots-v1")
	fmt.Println(forms.Verify("visitor-1", "slots-v1", key))
	fmt.Println(forms.Verify("visitor-2", "slots-v1", key))
	fmt.Println(forms.Verify("visitor-1", "slots-v2", key))
	// Output:
	// <nil>
	// the form key was not minted for this visitor and form
	// the form key was not minted for this visitor and form
}

// Every error of the kit has its answer; anything else is the caller's
// (a 500).
func ExampleRefusalOf() {
	for _, err := range []error{
		idem.ErrMismatch,
		&idem.InProgressError{RetryAfter: 2 * time.Second},
		idem.ErrNotFound,
		fmt.Errorf("claim key: %w", idem.ErrUnavailable),
		errors.New("the application's own"),
	} {
		if ref, ok := idem.RefusalOf(err); ok {
			fmt.Println(ref.Status, ref.Slug, ref.RetryAfter)
		} else {
			fmt.Println("not the kit's:", err)
		}
	}
	// Output:
	// 422 idempotency-key-reused 0s
	// 409 request-in-progress 2s
	// 404 idempotency-key-not-found 0s
	// 503 service-unavailable 2s
	// not the kit's: the application's own
}
