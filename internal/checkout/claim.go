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

// claim is this attempt's hold on a key.
type claim struct {
	token     uuid.UUID
	takenOver bool
	// byCompleter marks the completer's claims: their finishes are recorded
	// as "recovered" and their losses counted apart.
	byCompleter bool
	// operation is the key's operation id, from which the provider key is
	// derived (see ProviderKey). It lives only in the key row: a row lost
	// after its attempt charged (a failover to an asynchronous replica, a
	// restore) makes the next retry a new operation with a new provider key,
	// and so a second charge. The key table needs synchronous durability.
	operation uuid.UUID
	// lockedAt is when, by this process's monotonic clock, the claim was
	// sent: the lock it got runs from no earlier than that, so lockedAt plus
	// the lock timeout is a safe lower bound on its expiry (see withLease).
	lockedAt time.Time
	// resumed is the order as priced when the key was first claimed, set on
	// a takeover: the operation resumes with the amount the first attempt
	// may already have charged, even if prices have changed since.
	resumed *catalog.Priced
}

// holder names who holds the claim, for metrics.
func (c claim) holder() string {
	if c.byCompleter {
		return metrics.HolderCompleter
	}
	return metrics.HolderRequest
}

// keyState is a key row as a claim sees it.
type keyState struct {
	fingerprint   []byte
	status        string
	lockRemaining time.Duration // by the database clock; <= 0 means expired
	responseCode  *int32
	responseBody  json.RawMessage
	operation     uuid.UUID
	// age is how long ago the key was created, by the database clock.
	age time.Duration
}

// claimKey is phase 1. It returns a claim when this attempt now owns the
// key, or a Result to replay, or one of ErrKeyReused and *InProgressError.
//
// The common cases cost one statement: ClaimKey inserts the key, or reports
// the row already there. Deciding from that unlocked read is safe for
// everything except a takeover, because a fingerprint never changes and a
// finished key never goes back to started. A takeover, and a row too new for
// ClaimKey's snapshot, go through lockAndClaim.
//
// The claim stores the priced order with the key, for the completer.
func (e *Engine) claimKey(ctx context.Context, a Attempt, priced catalog.Priced) (claim, *Result, error) {
	request, err := encodeRequest(priced)
	if err != nil {
		return claim{}, nil, err
	}
	token := uuid.New()     // random, not time-ordered: nobody should guess it
	operation := uuid.New() // used only if this claim creates the key
	lockedAt := time.Now()
	params := db.ClaimKeyParams{
		CustomerID: a.CustomerID, Key: a.Key, Fingerprint: a.Fingerprint,
		LockFor: e.lockFor(a), LockToken: token, Request: request, OperationID: operation,
		ProviderKey: ProviderKey(a.CustomerID, a.Key, operation),
	}
	var row db.ClaimKeyRow
	if a.Cart != nil {
		row, err = e.claimCartKey(ctx, a, params)
	} else {
		row, err = e.db.ClaimKey(ctx, params)
	}
	switch {
	case errors.Is(err, database.ErrNotFound):
		// A concurrent attempt inserted the key after this statement's
		// snapshot was taken: its INSERT waited for that one and did
		// nothing, and its SELECT cannot see the row. Look again, locked.
		return e.lockAndClaim(ctx, a, token, lockedAt)
	case err != nil:
		return claim{}, nil, fmt.Errorf("claim key: %w", err)
	case row.Inserted:
		return claim{token: token, operation: row.OperationID, lockedAt: lockedAt}, nil, nil
	}
	state := keyState{row.Fingerprint, row.Status, row.LockRemaining, row.ResponseCode, row.ResponseBody, row.OperationID, row.Age}
	if e.canTakeOver(a, state) {
		return e.lockAndClaim(ctx, a, token, lockedAt)
	}
	replay, err := e.decide(a, state)
	return claim{}, replay, err
}

// lockAndClaim reads the key under FOR UPDATE and decides again; only here
// can an attempt take over a key whose lock expired, so two retries racing
// for one expired key cannot both win.
func (e *Engine) lockAndClaim(ctx context.Context, a Attempt, token uuid.UUID, lockedAt time.Time) (claim, *Result, error) {
	var (
		c      claim
		replay *Result
	)
	err := e.db.InTx(ctx, func(q *db.Queries) error {
		// InTx may run this again after a serialization failure.
		c, replay = claim{}, nil
		row, err := q.LockKey(ctx, db.LockKeyParams{CustomerID: a.CustomerID, Key: a.Key})
		if err != nil {
			return fmt.Errorf("lock key: %w", err)
		}
		state := keyState{row.Fingerprint, row.Status, row.LockRemaining, row.ResponseCode, row.ResponseBody, row.OperationID, row.Age}
		if !e.canTakeOver(a, state) {
			replay, err = e.decide(a, state)
			return err
		}
		err = q.TakeOverKey(ctx, db.TakeOverKeyParams{
			CustomerID: a.CustomerID, Key: a.Key, LockToken: token, LockFor: e.lockFor(a),
		})
		if err != nil {
			return fmt.Errorf("take over key: %w", err)
		}
		c = claim{token: token, takenOver: true, operation: state.operation, lockedAt: lockedAt}
		if row.Request != nil {
			priced, err := decodeRequest(row.Request)
			if err != nil {
				return err
			}
			c.resumed = &priced
		}
		return nil
	})
	return c, replay, err
}

// decide answers an attempt that does not own the key: a different request
// is refused, a finished one is replayed, a running one is asked to wait. So
// is a key too old to resume (see canTakeOver): the completer settles it.
func (e *Engine) decide(a Attempt, s keyState) (*Result, error) {
	switch s.verdict(a) {
	case idem.VerdictMismatch:
		return nil, ErrKeyReused
	case idem.VerdictReplay:
		return &Result{Status: int(*s.responseCode), Body: s.responseBody, Replayed: true}, nil
	case idem.VerdictTakeOver:
		// Expired, but too old to resume (canTakeOver).
		return nil, &InProgressError{RetryAfter: e.lockFor(a)}
	default:
		return nil, &InProgressError{RetryAfter: s.lockRemaining}
	}
}

// verdict is the kit's claim rule (idem.Judge) applied to an order key.
func (s keyState) verdict(a Attempt) idem.Verdict {
	return idem.Judge(s.fingerprint, a.Fingerprint, s.status == "finished", s.lockRemaining > 0)
}

// canTakeOver reports whether the key is this request's operation, still
// unfinished, abandoned by its holder (the lock expired), and young enough
// for the provider to still know its idempotency key.
//
// A takeover resends the create-charge call under the operation's provider
// key, trusting the provider to answer it with the charge already made. A
// real provider forgets keys after a window (Stripe: 24 hours); past it the
// same call would charge a second time. So an older key is never resumed by
// a request: it is left to the completer, which only cancels, and a cancel
// of an unknown key returns the charge or closes the operation without
// creating anything.
func (e *Engine) canTakeOver(a Attempt, s keyState) bool {
	return s.verdict(a) == idem.VerdictTakeOver && s.age < e.cfg.ProviderKeyWindow
}

func (e *Engine) lockFor(a Attempt) time.Duration {
	if a.LockFor > 0 {
		return a.LockFor
	}
	return e.cfg.LockTimeout
}
