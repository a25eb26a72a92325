package checkout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

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
	// operation is the key's operation id (lock.OperationID), from which
	// the provider key is derived (see ProviderKey). It lives only in the
	// key row: a row lost after its attempt charged (a failover to an
	// asynchronous replica, a restore) makes the next retry a new operation
	// with a new provider key, and so a second charge. The key table needs
	// synchronous durability.
	operation uuid.UUID
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
// and, for a cart version, the binding of the version to the key. A key that
// exists is reported by the same statement and judged by the kit
// (idem.Store.Decide): a replay, a reused key or one in progress is answered
// from that unlocked read, since a fingerprint never changes and an answer
// is final; a takeover goes through the kit's locked path.
func (e *Engine) claimKey(ctx context.Context, a Attempt, priced catalog.Priced) (claim, *Result, error) {
	// A key this process has seen finished is answered from memory
	// (Config.Answers): a replay costs no round trip.
	if c, ok, err := e.keys.Recall(e.keyRequest(a, nil)); ok {
		return e.claimed(ctx, a, c, err)
	}
	request, err := encodeRequest(priced)
	if err != nil {
		return claim{}, nil, err
	}
	req := e.keyRequest(a, request)
	token := uuid.New()     // random, not time-ordered: nobody should guess it
	operation := uuid.New() // used only if this claim creates the key
	sent := time.Now()
	p := db.ClaimOrderKeyParams{
		CustomerID: a.CustomerID, Key: a.Key, Fingerprint: a.Fingerprint, Lease: e.lockFor(a),
		Request: request, OperationID: operation, LockToken: token,
		ProviderKey: ProviderKey(a.CustomerID, a.Key, operation), Kind: KeyKind,
	}
	if a.Cart != nil {
		p.CartID, p.CartVersion = &a.Cart.ID, &a.Cart.Version
	}
	row, err := e.db.ClaimOrderKey(ctx, p)
	switch {
	case errors.Is(err, database.ErrNotFound):
		if a.Cart != nil {
			if err := e.cartRefusal(ctx, a); err != nil {
				return claim{}, nil, err
			}
		}
		// A concurrent attempt inserted the key after this statement's
		// snapshot was taken: look again, locked.
		c, err := e.keys.Resume(ctx, req)
		return e.claimed(ctx, a, c, err)
	case err != nil:
		return claim{}, nil, fmt.Errorf("claim key: %w", err)
	case row.Inserted:
		return claim{lock: e.keys.Held(req, operation.String(), token.String(), sent), operation: operation}, nil, nil
	}
	k, err := idem.KeyOf(row.Fingerprint, row.Status, row.LeaseLeftSeconds, row.AgeSeconds, row.ResponseStatus, nil, row.ResponseBody)
	if err != nil {
		return claim{}, nil, err
	}
	c, err := e.keys.Decide(ctx, req, k)
	return e.claimed(ctx, a, c, err)
}

// keyRequest is an attempt as the kit's key store sees it: the customer is
// the key's scope.
func (e *Engine) keyRequest(a Attempt, request json.RawMessage) idem.Request {
	return idem.Request{Scope: a.CustomerID.String(), Key: a.Key, Fingerprint: a.Fingerprint,
		Accept: a.AcceptFingerprints, Payload: request, Lease: e.lockFor(a)}
}

// claimed turns the kit's verdict on a key that existed into the order
// flow's: a replayed Result, ErrKeyReused, an *InProgressError, or a claim
// taken over from an attempt whose lease ran out, which resumes the order
// it was claimed for.
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
	cl, err := resumedClaim(c.Lock)
	if err != nil {
		return claim{}, nil, err
	}
	e.recordEvent(ctx, a.CustomerID, a.Key, "taken_over", map[string]any{"by": "request"})
	return cl, nil, nil
}

// resumedClaim is the claim of a key taken over (by a retry or the
// completer), with the order it was first claimed for.
func resumedClaim(l *idem.Lock) (claim, error) {
	operation, err := uuid.Parse(l.OperationID)
	if err != nil {
		return claim{}, fmt.Errorf("operation id: %w", err)
	}
	c := claim{lock: l, operation: operation}
	if l.Payload != nil {
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

func (e *Engine) lockFor(a Attempt) time.Duration {
	if a.LockFor > 0 {
		return a.LockFor
	}
	return e.cfg.LockTimeout
}
