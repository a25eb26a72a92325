package checkout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"exactlyonce/idem"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/metrics"
)

// claim is this attempt's hold on a key: the kit's lock, and what the order
// flow needs besides.
type claim struct {
	lock *idem.Lock
	// operation is the key's operation id (lock.OperationID), and
	// providerKey the key derived from it for the provider (ProviderKey).
	// The operation lives only in the key row: a row lost after its
	// attempt charged (a failover to an asynchronous replica, a restore)
	// makes the next retry a new operation with a new provider key, and so
	// a second charge. The key table needs synchronous durability.
	operation   uuid.UUID
	providerKey string
	// resumed is the order as priced when the key was first claimed, set on
	// a takeover: the operation resumes with the amount the first attempt
	// may already have charged, even if prices have changed since.
	resumed *catalog.Priced
}

// byCompleter tells the completer's claims: their finishes are recorded as
// "recovered" and their losses counted apart.
func (c claim) byCompleter() bool { return c.lock.ByCompleter }

// holder names who holds the claim, for metrics.
func (c claim) holder() string {
	if c.byCompleter() {
		return metrics.HolderCompleter
	}
	return metrics.HolderRequest
}

// token is the lock token, in the type the shop's statements take.
func (c claim) token() uuid.UUID { return uuid.MustParse(c.lock.Token) }

// claimKey is phase 1. It returns a claim when this attempt now owns the
// key, or a Result to replay, or one of ErrKeyReused and *InProgressError.
//
// A new key costs one statement, ClaimOrderKey: the kit's claim
// (idem_claim) with the priced order the completer needs, the provider key
// and, for a cart version, the binding of the version to the key. The kit
// runs it (idem.Store.ClaimWith) and judges a key that existed, which the
// same statement reports: a replay, a reused key or one in progress is
// answered from that unlocked read, since a fingerprint never changes and
// an answer is final; a takeover goes through the kit's locked path. A key
// this process has seen finished is answered from memory first
// (Config.Answers), in no round trip.
//
// An order that could not be priced (priceErr: the product left the
// catalog, or the catalog cannot be read) inserts nothing, but a key
// already claimed for this very request still answers: a finished one
// replays what it stored, and a started one, which may have charged
// already, is answered as any claim would be (409 while its lock is held, a
// takeover that resumes with the stored request once it expired). Only
// when there is no such key is priceErr the answer: nothing was claimed, so
// nothing was charged.
func (e *Engine) claimKey(ctx context.Context, a Attempt, priced catalog.Priced, priceErr error) (claim, *Result, error) {
	if priceErr != nil {
		// Nothing to insert: look at the key under its row lock.
		kc, err := e.keys.Resume(ctx, e.keyRequest(a))
		c, replay, err := e.unpriced(ctx, a, kc, err, priceErr)
		e.countClaim(ctx, a, c, replay, err)
		return c, replay, err
	}
	kc, err := e.keys.ClaimWith(ctx, e.keyRequest(a), func(ctx context.Context, operation, token string) (bool, idem.Key, error) {
		request, err := encodeRequest(priced)
		if err != nil {
			return false, idem.Key{}, err
		}
		op := uuid.MustParse(operation)
		p := db.ClaimOrderKeyParams{
			CustomerID: a.CustomerID, Key: a.Key, Fingerprint: a.Fingerprint, Lease: a.LockFor,
			Request: request, OperationID: op, LockToken: uuid.MustParse(token),
			ProviderKey: ProviderKey(a.CustomerID, a.Key, op), Kind: KeyKind,
		}
		if a.Cart != nil {
			p.CartID, p.CartVersion = &a.Cart.ID, &a.Cart.Version
		}
		row, err := e.db.ClaimOrderKey(ctx, p)
		switch {
		case errors.Is(err, database.ErrNotFound) && a.Cart != nil:
			// The cart refused the key, or a concurrent attempt inserted
			// it after this statement's snapshot: the cart tells which.
			if err := e.cartRefusal(ctx, a); err != nil {
				return false, idem.Key{}, err
			}
			return false, idem.Key{}, idem.ErrNotFound
		case errors.Is(err, database.ErrNotFound):
			return false, idem.Key{}, idem.ErrNotFound
		case err != nil:
			return false, idem.Key{}, fmt.Errorf("claim key: %w", err)
		case row.Inserted:
			return true, idem.Key{}, nil
		}
		k, err := idem.KeyOf(row.Fingerprint, row.Status, row.LeaseLeftSeconds, row.AgeSeconds, row.ResponseStatus, nil, row.ResponseBody)
		return false, k, err
	})
	c, replay, err := e.claimed(ctx, a, kc, err)
	e.countClaim(ctx, a, c, replay, err)
	return c, replay, err
}

// keyRequest is an attempt as the kit's key store sees it: the customer is
// the key's scope.
func (e *Engine) keyRequest(a Attempt) idem.Request {
	return idem.Request{Scope: a.CustomerID.String(), Key: a.Key, Fingerprint: a.Fingerprint,
		Accept: a.AcceptFingerprints, Lease: a.LockFor}
}

// claimed turns the kit's answer to a claim into the order flow's: a
// replayed Result, ErrKeyReused, an *InProgressError, or a claim of the key,
// new or taken over from an attempt whose lease ran out, which resumes the
// order it was claimed for.
func (e *Engine) claimed(ctx context.Context, a Attempt, c idem.Claim, err error) (claim, *Result, error) {
	switch {
	case errors.Is(err, idem.ErrMismatch):
		return claim{}, nil, ErrKeyReused
	case errors.Is(err, idem.ErrInProgress):
		return claim{}, nil, err
	case err != nil:
		return claim{}, nil, fmt.Errorf("claim key: %w", database.Translate(err))
	case c.Replay != nil:
		return claim{}, &Result{Status: c.Replay.Status, Body: c.Replay.Body, Replayed: true}, nil
	}
	cl, err := claimOf(a.CustomerID, c.Lock)
	if err == nil && c.Lock.TakenOver {
		e.recordEvent(ctx, a.CustomerID, a.Key, "taken_over", map[string]any{"by": "request"})
	}
	return cl, nil, err
}

// unpriced answers the claim of an order that could not be priced (see
// claimKey): the key's own answer when there is a key for this request,
// the pricing's error when there is none.
func (e *Engine) unpriced(ctx context.Context, a Attempt, kc idem.Claim, err, priceErr error) (claim, *Result, error) {
	if err = database.Translate(err); errors.Is(err, idem.ErrNotFound) {
		return claim{}, nil, priceError(priceErr)
	}
	c, replay, err := e.claimed(ctx, a, kc, err)
	switch {
	case errors.Is(err, ErrKeyReused):
		return claim{}, nil, priceError(priceErr)
	case err == nil && replay == nil && c.resumed == nil:
		// A key claimed before requests were stored with their keys: it
		// cannot be resumed without pricing it, so it is left to the
		// completer (in practice such keys are past the provider's window).
		return claim{}, nil, &InProgressError{RetryAfter: a.LockFor}
	}
	return c, replay, err
}

// claimOf is the order flow's claim of the key l holds for customer; a key
// taken over (by a retry or the completer) resumes the order it was first
// claimed for.
func claimOf(customer uuid.UUID, l *idem.Lock) (claim, error) {
	operation, err := uuid.Parse(l.OperationID)
	if err != nil {
		return claim{}, fmt.Errorf("operation id: %w", err)
	}
	c := claim{lock: l, operation: operation, providerKey: ProviderKey(customer, l.Key, operation)}
	if l.TakenOver && l.Payload != nil {
		priced, err := decodeRequest(l.Payload)
		if err != nil {
			return c, err
		}
		c.resumed = &priced
	}
	return c, nil
}

// recordEvent appends a step the kit took to the key's audit trail. The
// trail is for people: a failure to write it is logged, not returned.
func (e *Engine) recordEvent(ctx context.Context, customer uuid.UUID, key, event string, detail map[string]any) {
	raw, err := json.Marshal(detail)
	if err == nil {
		err = e.db.RecordKeyEvent(ctx, db.RecordKeyEventParams{CustomerID: customer, Key: key, Event: event, Detail: raw})
	}
	if err != nil {
		e.log.WarnContext(ctx, "record key event", "event", event, "err", err)
	}
}
