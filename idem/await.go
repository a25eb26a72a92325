package idem

import (
	"context"
	"errors"
	"time"
)

// Await waits for the attempt that holds a key to finish it and returns the
// stored response. It gives up with ErrInProgress when ctx ends first (set
// a deadline: how long a waiting client may be kept), and returns
// ErrNotFound when the holder released the key, so the caller may claim it.
//
// It polls, with a delay that doubles from 10ms to 250ms: the one wait loop
// of the kit, used by Do, the middleware and the form status endpoint.
func (s *Store) Await(ctx context.Context, scope, key string) (Response, error) {
	delay := 10 * time.Millisecond
	for {
		resp, err := s.Get(ctx, scope, key)
		if !errors.Is(err, ErrInProgress) {
			if err != nil && ctx.Err() != nil {
				return Response{}, ErrInProgress
			}
			return resp, err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return Response{}, ErrInProgress
		case <-t.C:
		}
		delay = min(2*delay, 250*time.Millisecond)
	}
}
