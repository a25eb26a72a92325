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

// Lock is one attempt's hold on a key. Everything it does is fenced by
// Token: once another attempt has taken the key over, Finish, Release and
// Heartbeat fail with ErrLockLost and change nothing.
type Lock struct {
	store *Store
	Scope string
	Key   string
	// OperationID names the operation across takeovers: derive the keys of
	// downstream calls (a payment provider's idempotency key) from it, so a
	// second attempt repeats the first one's call instead of making another.
	OperationID string
	// Token names this attempt. A caller whose own write must land in the
	// same statement as the finish calls idem_finish with it (the SQL
	// contract, README.md), and writes only when it returns true, e.g.
	//
	//	WITH finished AS MATERIALIZED (
	//	    SELECT idem_finish($scope, $key, $token, 201, NULL, $body) AS ok)
	//	INSERT INTO orders (...) SELECT ... FROM finished WHERE ok
	Token string
	// Payload is what the claim stored with the key (Request.Payload).
	Payload json.RawMessage
	// TakenOver reports that an earlier attempt held the key and its lease
	// ran out: the operation may be half done.
	TakenOver bool
	// ByCompleter marks the Completer's locks (handed to a Settler).
	ByCompleter bool

	// finished is set once the answer is known to be stored: Finish, a Do
	// whose transaction committed, or a FinishTx whose commit Stored saw.
	// finishedInTx is set by FinishTx, whose transaction the caller
	// commits: until Stored asks, nobody here knows whether it did. A
	// FinishTx alone never sets finished, since a COMMIT that fails
	// afterwards stores nothing.
	finished     bool
	finishedInTx bool
	released     bool          // this attempt gave the key up (Release)
	answer       Response      // what the finish stored, or will once committed
	lease        time.Duration // how long each claim or heartbeat holds the key
	sent         time.Time     // when the claim was sent, by this process's clock
}

// Finish stores resp as the key's answer, if this attempt still holds it.
func (l *Lock) Finish(ctx context.Context, resp Response) error {
	if err := l.finish(ctx, l.store.q, resp); err != nil {
		return err
	}
	l.finished = true // a statement of its own: committed when it returns
	return nil
}

// FinishTx is Finish inside the caller's transaction, after the caller's own
// writes: when it fails with ErrLockLost the caller rolls back, so its
// write and the stored answer land together or not at all. The answer is
// stored only when the caller's COMMIT succeeds, so the lock does not count
// itself finished until Stored has seen that commit (the middleware asks).
func (l *Lock) FinishTx(ctx context.Context, tx pgx.Tx, resp Response) error {
	if err := l.finish(ctx, idemdb.New(tx), resp); err != nil {
		return err
	}
	l.finishedInTx = true
	return nil
}

func (l *Lock) finish(ctx context.Context, q *idemdb.Queries, resp Response) error {
	var header json.RawMessage
	if len(resp.Header) > 0 {
		var err error
		if header, err = json.Marshal(resp.Header); err != nil {
			return fmt.Errorf("finish key: %w", err)
		}
	}
	ok, err := q.Finish(ctx, idemdb.FinishParams{
		Scope: l.Scope, Key: l.Key, LockToken: l.Token,
		ResponseStatus: int32(resp.Status), ResponseHeaders: header, ResponseBody: resp.Body,
	})
	if err != nil {
		return storeError("finish key", err)
	}
	if !ok {
		return ErrLockLost
	}
	l.answer = resp
	return nil
}

// Stored reports whether this attempt's answer is stored: at once after
// Finish or a Do that returned it (no round trip), and after FinishTx by
// asking the database whether the caller's transaction committed. When it
// did not (it rolled back, or its COMMIT failed after the finish) the key is
// still this attempt's and started, and Stored fails with ErrNotCommitted;
// with ErrLockLost when the key is no longer this attempt's. The
// middleware calls it once the handler has returned.
func (l *Lock) Stored(ctx context.Context) (bool, error) {
	if l.finished || !l.finishedInTx {
		return l.finished, nil
	}
	status, err := l.store.q.StatusUnderToken(ctx, idemdb.StatusUnderTokenParams{Scope: l.Scope, Key: l.Key, LockToken: l.Token})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, ErrLockLost
	case err != nil:
		return false, storeError("look at key", err)
	case status != "finished":
		return false, ErrNotCommitted
	}
	l.finished = true
	return true, nil
}

// Answer is the response this attempt finished the key with, once Stored
// (or Finished) reports it stored.
func (l *Lock) Answer() Response { return l.answer }

// Release gives the key up when nothing was done under it (the request was
// refused before any write), so that the client's retry starts afresh. A
// lock released already (by hand, or by Do when its work failed) is not
// released again: nil, so that the middleware, which frees every key whose
// answer was not stored, tells a key this attempt freed (the handler's
// answer is sent) from one another attempt took over (ErrLockLost).
func (l *Lock) Release(ctx context.Context) error {
	if l.released {
		return nil
	}
	n, err := l.store.q.Release(ctx, idemdb.ReleaseParams{Scope: l.Scope, Key: l.Key, LockToken: l.Token})
	if err != nil {
		return storeError("release key", err)
	}
	if n == 0 {
		return ErrLockLost
	}
	l.released = true
	return nil
}

// Expire ends this attempt's lease now, by the database clock, and leaves the
// key started: the next claim takes it over at once and resumes the
// operation, instead of being told to wait for a lease nobody will renew.
// Call it when the attempt stops without knowing the outcome of its work
// (a downstream call that failed or timed out) and without having written
// anything, after its lease keeper has stopped; a retry then repeats the
// downstream call with the same derived key. ErrLockLost means the key is no
// longer this attempt's.
func (l *Lock) Expire(ctx context.Context) error {
	n, err := l.store.q.Expire(ctx, idemdb.ExpireParams{Scope: l.Scope, Key: l.Key, LockToken: l.Token})
	if err != nil {
		return storeError("expire lease", err)
	}
	if n == 0 {
		return ErrLockLost
	}
	return nil
}

// Heartbeat extends the lease by the lock's lease, from the database's now().
func (l *Lock) Heartbeat(ctx context.Context) error {
	_, err := l.store.q.Heartbeat(ctx, idemdb.HeartbeatParams{
		Scope: l.Scope, Key: l.Key, LockToken: l.Token, Lease: l.lease,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrLockLost
	}
	if err != nil {
		return storeError("heartbeat", err)
	}
	return nil
}

// Keep heartbeats the lease every third of it until stop is called, and
// fences the attempt itself (keepLease): the returned context is cancelled,
// with cause ErrLockLost, as soon as a heartbeat finds the key taken over,
// and with cause ErrLeaseLapsing when no heartbeat has succeeded for
// FenceAt of the lease, before the lease can run out. Do the attempt's
// work under the returned context.
func (l *Lock) Keep(ctx context.Context) (held context.Context, stop func()) {
	held, stopKeeping := l.KeepWith(ctx, LeaseHooks{})
	return held, func() { _ = stopKeeping() }
}

// LeaseHooks watch the heartbeats of Lock.KeepWith.
type LeaseHooks struct {
	// BeforeRenew and BeforeFence, when set, run before each heartbeat and
	// before the fence stops the work; tests block in them to stand for a
	// stalled process.
	BeforeRenew func(ctx context.Context)
	BeforeFence func(ctx context.Context)
	// Renewed, when set, is told how each heartbeat went: nil, ErrLockLost,
	// or the error of one that failed (not a lost lock: the keeper tries
	// again, and the fence stops the work if none succeeds). For metrics
	// and logs.
	Renewed func(ctx context.Context, err error)
}

// KeepWith is Keep with hooks, and a stop that reports what, if anything,
// ended the returned context early: ErrLockLost (a heartbeat found the key
// taken over), ErrLeaseLapsing (the fence stopped the work) or nil. A work
// that returned its answer before the fence fired may keep it: the key is
// still this attempt's, and its finish is fenced anyway.
func (l *Lock) KeepWith(ctx context.Context, h LeaseHooks) (held context.Context, stop func() error) {
	return keepLease(ctx, leaseKeeping{Lease: l.lease, Since: l.sent, Renew: l.Heartbeat,
		BeforeRenew: h.BeforeRenew, BeforeFence: h.BeforeFence, Renewed: h.Renewed})
}

// Finished reports whether this attempt's answer is known to be stored:
// Finish, or Do, returned it, or Stored saw a FinishTx's transaction
// commit. A FinishTx whose transaction has not been looked at by Stored is
// not finished yet.
func (l *Lock) Finished() bool { return l.finished }
