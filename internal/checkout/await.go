package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"exactlyonce/idem"
	"exactlyonce/internal/database"
)

// ErrNoSuchKey means the customer has no such key.
var ErrNoSuchKey = errors.New("no such key")

// KeyState is what became of a key: its stored outcome once finished,
// else whether an attempt still holds its lock.
type KeyState struct {
	Finished bool
	Result   Result // the stored outcome, Replayed, when Finished
	Held     bool   // an attempt holds the lock (by the database clock)
}

// State reads the customer's key, for a page that shows how an order is
// going. ErrNoSuchKey when there is none.
func (e *Engine) State(ctx context.Context, customer uuid.UUID, key string) (KeyState, error) {
	resp, err := e.keys.Get(ctx, customer.String(), key)
	var busy *idem.InProgressError
	switch {
	case errors.Is(err, idem.ErrNotFound):
		return KeyState{}, ErrNoSuchKey
	case errors.As(err, &busy):
		return KeyState{Held: busy.Held}, nil
	case err != nil:
		return KeyState{}, fmt.Errorf("read key: %w", database.Translate(err))
	}
	return KeyState{Finished: true, Result: Result{Status: resp.Status, Body: resp.Body, Replayed: true}}, nil
}

// Await waits until the attempt holding the key has finished or let its
// lock expire — the moment to call Place again — and reports true, or
// false when the deadline passes or ctx ends first. It waits with the kit's
// one wait loop (idem.Poll).
func (e *Engine) Await(ctx context.Context, customer uuid.UUID, key string, deadline time.Time) bool {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	err := idem.Poll(ctx, func(ctx context.Context) (bool, error) {
		_, err := e.keys.Get(ctx, customer.String(), key)
		if ctx.Err() != nil {
			// The wait is over (Poll returns ctx's error), whatever the
			// read said: a deadline that passed before the first read must
			// not count as "stopped holding", or a caller that loops on
			// Place and Await would spin until the lock runs out.
			return false, nil
		}
		// Finished, gone, or no longer held (its lease ran out): the
		// moment to place again. An error is for Place to meet and report.
		busy, held := errors.AsType[*idem.InProgressError](err)
		return !held || !busy.Held, nil
	})
	return err == nil
}

const (
	// MaxWait is the longest PlaceOrAwait keeps a caller waiting for the
	// attempt that holds its key. It covers a usual provider call, so the
	// second submit of a double-click ends on the receipt with no page in
	// between, and stays far below what a browser or a proxy gives a request.
	MaxWait = 3 * time.Second
	// ClaimTimeout bounds what a waiting caller's attempt does before it
	// owns its key (pricing and the claim), which PlaceOrAwait runs detached
	// from the caller's cancellation.
	ClaimTimeout = 15 * time.Second
)

// PlaceOrAwait is Place for a caller that would rather wait for the attempt
// holding its key than be told it is held: the second submit of a
// double-click, or an API client that asked to wait (Prefer: wait). When
// another attempt holds the key (*InProgressError, or ErrLockLost: a newer
// one took it over from this one) it waits, with the kit's one wait loop,
// until that attempt has finished or let its lock expire, and places again:
// the result is then the other attempt's, Replayed and Joined. It gives up
// after wait (at most MaxWait) with the error it last met (the key's
// *InProgressError, whose RetryAfter says when to ask again, or
// ErrLockLost); with wait zero it is Place.
//
// A caller that waits has its attempts detached from its own cancellation,
// bounded by ClaimTimeout beyond the wait, until one owns the key (Place
// detaches it from then on): a browser drops the first request of a
// double-click for the second, and the first must still claim its key and
// go on, or the second would find the key claimed by an attempt that
// stopped, and wait out its lock. Only
// maxWaiters callers wait per key at once; past that a caller is answered
// at once, so that a flood of one request (a stuck key, a script) cannot
// hold a goroutine and a database poll per request.
func (e *Engine) PlaceOrAwait(ctx context.Context, a Attempt, wait time.Duration) (Result, error) {
	wait = min(wait, MaxWait)
	deadline := time.Now().Add(wait)
	// The wait ends with the caller; the attempts do not (see above).
	waiting := ctx
	if wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), wait+ClaimTimeout)
		defer cancel()
	}
	var leave func()
	for {
		res, err := e.Place(ctx, a)
		held := errors.Is(err, ErrLockLost) || errors.Is(err, idem.ErrInProgress)
		if !held || wait <= 0 {
			res.Joined = leave != nil && err == nil
			return res, err
		}
		if leave == nil {
			var ok bool
			if leave, ok = e.joinWaiters(a); !ok {
				return Result{}, err
			}
			defer leave()
		}
		if !e.Await(waiting, a.CustomerID, a.Key, deadline) {
			return Result{}, err
		}
	}
}
