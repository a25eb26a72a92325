package fakestripe

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"
)

// answer is what a request's work produced: the status and body to send,
// whether Stripe would store it for the key (an answer to a request that
// began executing is stored, a refused parameter is not), and the events it
// caused, sent once it is committed.
type answer struct {
	status int
	body   []byte
	save   bool
	events []event
}

// workTimeout bounds the transaction of a request, which runs on even when
// its client has gone: a hang-up tells the client nothing about the outcome,
// which is what the shop must cope with.
const workTimeout = 10 * time.Second

// idempotent runs work, the request's effect, in one transaction with
// Stripe's idempotency: with an Idempotency-Key that was used before it
// replays the stored answer (or refuses other parameters) instead; with a
// new key it stores work's answer in the same transaction as the effect. A
// key in use by a request still running is answered 409 with
// Stripe-Should-Retry: true, which the SDK retries. Without a key the work
// just runs.
func (p *Provider) idempotent(c echo.Context, form url.Values, work func(ctx context.Context, conn querier) (answer, error)) (answer, bool, error) {
	key := c.Request().Header.Get("Idempotency-Key")
	if len(key) > 255 {
		return answer{}, false, invalidRequest("", "", "Idempotency-Key must be at most 255 characters.")
	}
	hash := requestHash(c.Request(), form)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), workTimeout)
	defer cancel()
	var (
		a        answer
		replayed bool
	)
	err := inTx(ctx, p.pool, func(conn querier) error {
		a, replayed = answer{}, false
		if key != "" {
			var got bool
			if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1, hashtext($2))`, keyLockClass, key).Scan(&got); err != nil {
				return fmt.Errorf("lock key: %w", err)
			}
			if !got {
				return errKeyInUse
			}
			var stored struct {
				hash   []byte
				status int
				body   []byte
			}
			err := conn.QueryRow(ctx, `SELECT request_hash, status, body FROM fakestripe.idempotency_keys WHERE key = $1`, key).
				Scan(&stored.hash, &stored.status, &stored.body)
			switch {
			case err == nil:
				if subtle.ConstantTimeCompare(stored.hash, hash) != 1 {
					return errKeyReused(key)
				}
				a, replayed = answer{status: stored.status, body: stored.body}, true
				return nil
			case !errors.Is(err, errNotFound):
				return fmt.Errorf("read key: %w", err)
			}
		}
		var err error
		a, err = work(ctx, conn)
		if err != nil || key == "" || !a.save {
			return err
		}
		_, err = conn.Exec(ctx, `INSERT INTO fakestripe.idempotency_keys (key, request_hash, status, body) VALUES ($1, $2, $3, $4)`,
			key, hash, a.status, a.body)
		if err != nil {
			return fmt.Errorf("store answer: %w", err)
		}
		return nil
	})
	if err != nil {
		return answer{}, false, err
	}
	if key != "" {
		c.Response().Header().Set("Idempotency-Key", key)
	}
	if replayed {
		c.Response().Header().Set("Idempotent-Replayed", "true")
	}
	return a, replayed, nil
}

// keyLockClass is the class of the advisory lock a request holds on its
// idempotency key while it runs.
const keyLockClass = 1717660011

// HoldKey takes the lock a request holds on its idempotency key while it
// runs, and keeps it until release is called: a request with key meanwhile
// is answered as Stripe answers one concurrent with another, 409
// idempotency_error with Stripe-Should-Retry. For tests, which cannot
// otherwise keep a request inside its transaction. The lock is taken, as
// a request takes it, inside a transaction left open until release: a
// pooler in transaction mode (PgBouncer) keeps a transaction on its server
// connection, but not a session's lock.
func (p *Provider) HoldKey(ctx context.Context, key string) (release func(), err error) {
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("hold key: %w", err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, keyLockClass, key); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("hold key: %w", err)
	}
	return func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }, nil
}

var errKeyInUse = &apiError{
	Status:      http.StatusConflict,
	Type:        typeIdempotency,
	Message:     "There is currently another in-progress request using this Stripe API key and idempotency key. Please try again later.",
	shouldRetry: "true",
}

func errKeyReused(key string) *apiError {
	return &apiError{
		Status: http.StatusBadRequest,
		Type:   typeIdempotency,
		Message: fmt.Sprintf("Keys for idempotent requests can only be used with the same parameters they were first used with. "+
			"Try using a key other than '%s' if you meant to execute a different request.", key),
	}
}

// reply sends an answer; a stored error body is sent with its status.
func reply(c echo.Context, a answer) error {
	return c.JSONBlob(a.status, a.body)
}
