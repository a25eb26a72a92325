package idem

import (
	"context"
	"errors"
	"time"
)

// Await waits for the attempt that holds a key to finish it and returns the
// stored response. It gives up when ctx ends first (set a deadline: how long
// a waiting client may be kept) with the key's *InProgressError as last
// seen, whose RetryAfter says when to ask again; it returns ErrNotFound
// when the holder released the key, so the caller may claim it.
func (s *Store) Await(ctx context.Context, scope, key string) (Response, error) {
	var (
		resp    Response
		pending error = &InProgressError{RetryAfter: minRetryAfter}
	)
	err := Poll(ctx, func(ctx context.Context) (bool, error) {
		var err error
		resp, err = s.Get(ctx, scope, key)
		if errors.Is(err, ErrInProgress) {
			pending = err
			return false, nil
		}
		return true, err
	})
	if err != nil && ctx.Err() != nil {
		return Response{}, pending
	}
	return resp, err
}

// Poll is the kit's one wait loop: it calls check, with a delay that doubles
// from 10ms to 250ms, until check reports done or fails, or ctx ends (then
// it returns ctx's error). Await is built on it, and so is a caller's wait
// for keys it keeps in a table of its own.
func Poll(ctx context.Context, check func(ctx context.Context) (done bool, err error)) error {
	delay := 10 * time.Millisecond
	for {
		done, err := check(ctx)
		if done || err != nil {
			return err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, 250*time.Millisecond)
	}
}
