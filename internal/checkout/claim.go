package checkout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
)

// claim is this attempt's hold on a key.
type claim struct {
	token     uuid.UUID
	takenOver bool
}

// keyState is a key row as a claim sees it.
type keyState struct {
	fingerprint   []byte
	status        string
	lockRemaining time.Duration // by the database clock; <= 0 means expired
	responseCode  *int32
	responseBody  json.RawMessage
}

// claimKey is phase 1. It returns a claim when this attempt now owns the
// key, or a Result to replay, or one of ErrKeyReused and *InProgressError.
//
// The common cases cost one statement: ClaimKey inserts the key, or reports
// the row already there. Deciding from that unlocked read is safe for
// everything except a takeover, because a fingerprint never changes and a
// finished key never goes back to started. A takeover, and a row too new for
// ClaimKey's snapshot, go through lockAndClaim.
func (e *Engine) claimKey(ctx context.Context, a Attempt) (claim, *Result, error) {
	token := uuid.New() // random, not time-ordered: nobody should guess it
	row, err := e.db.ClaimKey(ctx, db.ClaimKeyParams{
		CustomerID: a.CustomerID, Key: a.Key, Fingerprint: a.Fingerprint,
		LockFor: e.lockFor(a), LockToken: token,
	})
	switch {
	case errors.Is(err, database.ErrNotFound):
		// A concurrent attempt inserted the key after this statement's
		// snapshot was taken: its INSERT waited for that one and did
		// nothing, and its SELECT cannot see the row. Look again, locked.
		return e.lockAndClaim(ctx, a, token)
	case err != nil:
		return claim{}, nil, fmt.Errorf("claim key: %w", err)
	case row.Inserted:
		return claim{token: token}, nil, nil
	}
	state := keyState{row.Fingerprint, row.Status, row.LockRemaining, row.ResponseCode, row.ResponseBody}
	if canTakeOver(a, state) {
		return e.lockAndClaim(ctx, a, token)
	}
	replay, err := decide(a, state)
	return claim{}, replay, err
}

// lockAndClaim reads the key under FOR UPDATE and decides again; only here
// can an attempt take over a key whose lock expired, so two retries racing
// for one expired key cannot both win.
func (e *Engine) lockAndClaim(ctx context.Context, a Attempt, token uuid.UUID) (claim, *Result, error) {
	var (
		c      claim
		replay *Result
	)
	err := e.db.InTx(ctx, func(q *db.Queries) error {
		row, err := q.LockKey(ctx, db.LockKeyParams{CustomerID: a.CustomerID, Key: a.Key})
		if err != nil {
			return fmt.Errorf("lock key: %w", err)
		}
		state := keyState{row.Fingerprint, row.Status, row.LockRemaining, row.ResponseCode, row.ResponseBody}
		if !canTakeOver(a, state) {
			replay, err = decide(a, state)
			return err
		}
		err = q.TakeOverKey(ctx, db.TakeOverKeyParams{
			CustomerID: a.CustomerID, Key: a.Key, LockToken: token, LockFor: e.lockFor(a),
		})
		if err != nil {
			return fmt.Errorf("take over key: %w", err)
		}
		c = claim{token: token, takenOver: true}
		return nil
	})
	return c, replay, err
}

// decide answers an attempt that does not own the key: a different request
// is refused, a finished one is replayed, a running one is asked to wait.
func decide(a Attempt, s keyState) (*Result, error) {
	switch {
	case !bytes.Equal(s.fingerprint, a.Fingerprint):
		return nil, ErrKeyReused
	case s.status == "finished":
		return &Result{Status: int(*s.responseCode), Body: s.responseBody, Replayed: true}, nil
	default:
		return nil, &InProgressError{RetryAfter: max(s.lockRemaining, 0)}
	}
}

// canTakeOver reports whether the key is this request's operation, still
// unfinished, and abandoned by its holder (the lock expired).
func canTakeOver(a Attempt, s keyState) bool {
	return bytes.Equal(s.fingerprint, a.Fingerprint) && s.status == "started" && s.lockRemaining <= 0
}

func (e *Engine) lockFor(a Attempt) time.Duration {
	if a.LockFor > 0 {
		return a.LockFor
	}
	return e.cfg.LockTimeout
}
