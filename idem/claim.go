package idem

import (
	"bytes"
	"context"
	"crypto/rand"
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
	// Accept lists the fingerprints an earlier version of the caller's
	// fingerprint rule gave this same request: a key stored under one of
	// them is judged as if stored under Fingerprint. It lets a change of
	// the rule leave the keys stored before it retryable, byte for byte,
	// until they are swept.
	Accept [][]byte
	// Payload is kept with the key for whoever settles it if this attempt
	// dies (a Settler); it may be nil.
	Payload json.RawMessage
	// Lease overrides the store's Lease for this attempt when set.
	Lease time.Duration
}

// fingerprintFor is the fingerprint r is judged by against a key stored
// with stored: Fingerprint, or the accepted one that is stored.
func (r Request) fingerprintFor(stored []byte) []byte {
	for _, a := range r.Accept {
		if bytes.Equal(a, stored) {
			return a
		}
	}
	return r.Fingerprint
}

func (s *Store) leaseOf(r Request) time.Duration {
	if r.Lease > 0 {
		return r.Lease
	}
	return s.lease
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
//   - a finished key with the same fingerprint returns its Replay, and a
//     key used with another fingerprint fails with ErrMismatch, also in one
//     round trip (a fingerprint never changes, and an answer is final);
//   - a started key whose lease runs fails with an *InProgressError;
//   - a started key whose lease ran out (by the database clock) is taken
//     over under FOR UPDATE with a new lock token, keeping its operation ID
//     (resume).
//
// With Options.Answers, a replay or a mismatch of a key this process has
// seen finished is answered from memory, in no round trip.
func (s *Store) Claim(ctx context.Context, r Request) (Claim, error) {
	return s.ClaimWith(ctx, r, func(ctx context.Context, operation, token string) (bool, Key, error) {
		row, err := s.q.Claim(ctx, idemdb.ClaimParams{
			Scope: r.Scope, Key: r.Key, Fingerprint: r.Fingerprint, Lease: s.leaseOf(r), Request: r.Payload,
			OperationID: operation, LockToken: token, Kind: s.kind,
		})
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return false, Key{}, ErrNotFound
		case err != nil:
			return false, Key{}, storeError("claim key", err)
		case row.Inserted:
			return true, Key{}, nil
		}
		k, err := KeyRow{Fingerprint: row.Fingerprint, Status: row.Status, LeaseLeftSeconds: row.LeaseLeftSeconds,
			AgeSeconds: row.AgeSeconds, ResponseStatus: row.ResponseStatus, ResponseHeaders: row.ResponseHeaders,
			ResponseBody: row.ResponseBody}.Key()
		return false, k, err
	})
}

// ClaimStatement is a claim's one round trip: it calls idem_claim for the
// key with the operation ID and lock token given (and may bind writes of
// the caller's own to it in the same statement) and reports whether it
// inserted the key, or the key as the statement read it (KeyRow), or
// ErrNotFound when it read no row at all: a key a concurrent transaction
// inserted after the statement's snapshot.
type ClaimStatement func(ctx context.Context, operation, token string) (inserted bool, existing Key, err error)

// ClaimWith is Claim with the caller's own statement, for a caller whose
// write must land in the same statement as the claim (the shop's orders
// bind the cart version and the provider key to the key this way). The kit
// does the rest: the answer from memory first, then the verdict on a key
// that existed, and a takeover under the row lock.
//
// A nil run claims nothing new: it answers for a key that exists, as any
// claim would (a replay, a mismatch, a key in progress, a takeover of one
// whose lease ran out), and fails with ErrNotFound when there is none. A
// caller that refuses a request before claiming it (the shop, an order it
// cannot price today) asks this way whether the key is one in use, whose
// answer must not depend on today's refusal.
//
// A claim told that the key is in progress, or that the database is away,
// or one the client hung up on, is recorded as the client's ask (see
// Completer.Grace).
func (s *Store) ClaimWith(ctx context.Context, r Request, run ClaimStatement) (Claim, error) {
	began := time.Now()
	c, err := s.claimWith(ctx, r, run)
	s.asked(ctx, r, err, time.Since(began))
	return c, err
}

func (s *Store) claimWith(ctx context.Context, r Request, run ClaimStatement) (Claim, error) {
	if c, ok, err := s.recall(r); ok {
		return c, err
	}
	if run == nil {
		return s.resume(ctx, r)
	}
	sent := time.Now()
	operation, token := newID(), newID()
	inserted, k, err := run(ctx, operation, token)
	switch {
	case errors.Is(err, ErrNotFound):
		return retryable(s.resume(ctx, r))
	case err != nil:
		return Claim{}, err
	case inserted:
		return Claim{Lock: &Lock{store: s, Scope: r.Scope, Key: r.Key, OperationID: operation, Token: token,
			Payload: r.Payload, lease: s.leaseOf(r), sent: sent}}, nil
	}
	v := s.verdict(k, r)
	if v == verdictTakeOver {
		return retryable(s.resume(ctx, r))
	}
	s.remember(r, k)
	return s.answer(v, k)
}

// retryable turns a key that vanished between a claim's two looks
// (released by its holder, or swept) into one to claim again, at once.
func retryable(c Claim, err error) (Claim, error) {
	if errors.Is(err, ErrNotFound) {
		return c, &InProgressError{RetryAfter: minRetryAfter}
	}
	return c, err
}

// resume decides about a key that exists, holding its row lock so that two
// attempts cannot both take over an expired key: it answers as Claim does,
// and takes the key over when its lease ran out. ErrNotFound means there is
// no such key (any more).
func (s *Store) resume(ctx context.Context, r Request) (Claim, error) {
	sent := time.Now()
	var c Claim
	err := s.inTx(ctx, "resume key", func(tx pgx.Tx) error {
		q := idemdb.New(tx)
		row, err := q.LockKey(ctx, idemdb.LockKeyParams{Scope: r.Scope, Key: r.Key})
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return storeError("lock key", err)
		}
		k, err := KeyRow{Fingerprint: row.Fingerprint, Status: row.Status, LeaseLeftSeconds: row.LeaseLeftSeconds,
			AgeSeconds: row.AgeSeconds, ResponseStatus: row.ResponseStatus, ResponseHeaders: row.ResponseHeaders,
			ResponseBody: row.ResponseBody}.Key()
		if err != nil {
			return err
		}
		k.Parked = row.Parked
		if v := s.verdict(k, r); v != verdictTakeOver {
			s.remember(r, k)
			c, err = s.answer(v, k)
			return err
		}
		token := newID()
		taken, err := q.TakeOver(ctx, idemdb.TakeOverParams{Scope: r.Scope, Key: r.Key, LockToken: token, Lease: s.leaseOf(r)})
		if errors.Is(err, pgx.ErrNoRows) {
			// Parked after all (the statement checks it again): an
			// operator's, never a retry's.
			c, err = s.answer(verdictParked, k)
			return err
		}
		if err != nil {
			return storeError("take over key", err)
		}
		err = s.tookOver(ctx, tx, Takeover{Scope: r.Scope, Key: r.Key, LockedUntil: taken.LockedUntil})
		if err != nil {
			return err
		}
		c = Claim{Lock: &Lock{store: s, Scope: r.Scope, Key: r.Key, OperationID: taken.OperationID,
			Token: token, Payload: taken.Request, TakenOver: true, lease: s.leaseOf(r), sent: sent}}
		return nil
	})
	return c, err
}

// Key is a stored key as a claim judges it.
type Key struct {
	Fingerprint []byte
	Finished    bool
	// LeaseLeft is what remains of the holder's lease by the database
	// clock; zero or less means it ran out.
	LeaseLeft time.Duration
	// Age is how long ago the key was first claimed, by the database clock.
	Age time.Duration
	// Parked reports that the completer gave the key up (a poison key, see
	// Completer.MaxAttempts) and left it, started, to an operator. Only the
	// claim's locked read (before a takeover) reads it: no claim may take a
	// parked key over and write what the completer refused.
	Parked bool
	// Answer is the stored response of a finished key.
	Answer Response
}

// KeyRow is a key as a claim statement reads it, in the columns of the
// SQL contract's view (idem_keys_v1: fingerprint, status, response_status,
// response_headers, response_body) with lease_left and age in seconds
// (extract(epoch FROM …)). A ClaimStatement that found the key already
// there reports it as KeyRow{…}.Key().
type KeyRow struct {
	Fingerprint      []byte
	Status           string
	LeaseLeftSeconds float64
	AgeSeconds       float64
	ResponseStatus   *int32
	ResponseHeaders  json.RawMessage
	ResponseBody     []byte
}

// Key is the row as the kit judges it.
func (r KeyRow) Key() (Key, error) {
	k := Key{Fingerprint: r.Fingerprint, Finished: r.Status == "finished", LeaseLeft: seconds(r.LeaseLeftSeconds),
		Age: seconds(r.AgeSeconds)}
	if !k.Finished {
		return k, nil
	}
	var err error
	k.Answer, err = responseFrom(r.ResponseStatus, r.ResponseHeaders, r.ResponseBody)
	return k, err
}

// verdict is judge, with the request's accepted fingerprints and the
// store's ResumeWithin: a key stored under a fingerprint r accepts matches,
// and a key too old to be resumed is not taken over by a claim but left to
// the completer.
func (s *Store) verdict(k Key, r Request) claimVerdict {
	v := judge(k.Fingerprint, r.fingerprintFor(k.Fingerprint), k.Finished, k.LeaseLeft > 0)
	switch {
	case v != verdictTakeOver:
	case k.Parked:
		return verdictParked
	case s.resumeWithin > 0 && k.Age >= s.resumeWithin:
		return verdictTooOld
	}
	return v
}

// answer turns verdict v on k, anything but a takeover, into what Claim
// returns.
func (s *Store) answer(v claimVerdict, k Key) (Claim, error) {
	switch v {
	case verdictMismatch:
		return Claim{}, ErrMismatch
	case verdictReplay:
		resp := k.Answer
		return Claim{Replay: &resp}, nil
	case verdictTooOld, verdictParked:
		// Left to the completer, which settles it within its next passes,
		// or, parked, to an operator.
		return Claim{}, &InProgressError{RetryAfter: maxRetryAfter}
	}
	return Claim{}, &InProgressError{RetryAfter: retryAfter(k), Held: true}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// newID returns a random (version 4) UUID in its text form: lock tokens and
// operation IDs, which nobody should be able to guess.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
