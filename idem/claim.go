package idem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"exactlyonce/idem/internal/idemdb"
)

// Request is what a claim asks for.
type Request struct {
	// Scope is the key's owner: keys are unique per scope, so one client
	// can never see or block another's.
	Scope string
	Key   string
	// Fingerprint identifies what was asked (see Fingerprint); the same key
	// sent with another fingerprint is refused with ErrMismatch.
	Fingerprint []byte
	// Payload is kept with the key for whoever settles it if this attempt
	// dies (a Settler); it may be nil.
	Payload json.RawMessage
}

// Claim is the outcome of Store.Claim: either this attempt holds the key
// (Lock) or the key is finished and its response is to be replayed (Replay).
type Claim struct {
	Lock   *Lock
	Replay *Response
}

// Claim takes the key for this attempt, or reports what became of it:
//
//   - a new key is inserted and held, in one round trip;
//   - a finished key with the same fingerprint returns its Replay;
//   - a key used with another fingerprint fails with ErrMismatch;
//   - a started key whose lease runs fails with ErrInProgress;
//   - a started key whose lease ran out (by the database clock) is taken
//     over under FOR UPDATE with a new lock token, keeping its operation ID.
func (s *Store) Claim(ctx context.Context, r Request) (Claim, error) {
	sent := time.Now()
	row, err := s.q.Claim(ctx, idemdb.ClaimParams{
		Scope: r.Scope, Key: r.Key, Fingerprint: r.Fingerprint, Lease: s.lease, Request: r.Payload,
	})
	if err == nil {
		return Claim{Lock: &Lock{store: s, Scope: r.Scope, Key: r.Key, OperationID: row.OperationID,
			Token: row.LockToken, Payload: r.Payload, sent: sent}}, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return Claim{}, fmt.Errorf("claim key: %w", err)
	}
	var c Claim
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		c, err = s.claimExisting(ctx, idemdb.New(tx), r, sent)
		return err
	})
	return c, err
}

// claimExisting decides about a key that exists, holding its row lock so
// that two attempts cannot both take over an expired key.
func (s *Store) claimExisting(ctx context.Context, q *idemdb.Queries, r Request, sent time.Time) (Claim, error) {
	row, err := q.LockKey(ctx, idemdb.LockKeyParams{Scope: r.Scope, Key: r.Key})
	if errors.Is(err, pgx.ErrNoRows) {
		// Released or swept between the insert and the lock: the caller
		// may simply claim again.
		return Claim{}, ErrInProgress
	}
	if err != nil {
		return Claim{}, fmt.Errorf("lock key: %w", err)
	}
	switch Judge(row.Fingerprint, r.Fingerprint, row.Status == "finished", row.Held) {
	case VerdictMismatch:
		return Claim{}, ErrMismatch
	case VerdictReplay:
		resp, err := responseFrom(row.ResponseStatus, row.ResponseHeaders, row.ResponseBody)
		if err != nil {
			return Claim{}, err
		}
		return Claim{Replay: &resp}, nil
	case VerdictInProgress:
		return Claim{}, ErrInProgress
	}
	taken, err := q.TakeOver(ctx, idemdb.TakeOverParams{Scope: r.Scope, Key: r.Key, Lease: s.lease})
	if err != nil {
		return Claim{}, fmt.Errorf("take over key: %w", err)
	}
	return Claim{Lock: &Lock{store: s, Scope: r.Scope, Key: r.Key, OperationID: taken.OperationID,
		Token: taken.LockToken, Payload: taken.Request, TakenOver: true, sent: sent}}, nil
}
