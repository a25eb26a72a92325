package fakestripe

import (
	"context"
	"crypto/subtle"
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
func (p *Provider) idempotent(c echo.Context, form url.Values, work func(ctx context.Context, tx storeTx) (answer, error)) (answer, bool, error) {
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
	err := p.store.inTx(ctx, func(tx storeTx) error {
		a, replayed = answer{}, false
		if key != "" {
			if err := tx.claimKey(ctx, key); err != nil {
				return err
			}
			storedHash, stored, ok, err := tx.storedAnswer(ctx, key)
			if err != nil {
				return err
			}
			if ok {
				if subtle.ConstantTimeCompare(storedHash, hash) != 1 {
					return errKeyReused(key)
				}
				a, replayed = stored, true
				return nil
			}
		}
		var err error
		a, err = work(ctx, tx)
		if err != nil || key == "" || !a.save {
			return err
		}
		return tx.storeAnswer(ctx, key, hash, a)
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

// HoldKey makes key in use, as a request still running holds it, until
// release is called: a request with key meanwhile is answered as Stripe
// answers one concurrent with another, 409 idempotency_error with
// Stripe-Should-Retry. For tests, which cannot otherwise keep a request
// inside its transaction.
func (p *Provider) HoldKey(ctx context.Context, key string) (release func(), err error) {
	return p.store.holdKey(ctx, key)
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
