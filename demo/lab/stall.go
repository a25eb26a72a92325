package lab

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"exactlyonce/internal/checkout"
)

// maxStall bounds a stall, so that a run that failed to release one cannot
// wedge an attempt for good.
const maxStall = 30 * time.Second

// stalls makes chosen attempts freeze, as a process stopped by a long GC
// pause or a suspended VM would: no lease renewal, no self-fencing timer, no
// finish until released. The slow-original scenario needs the original's
// lock to expire while it is still running, and the engine's heartbeat
// exists precisely to stop that. It works through the engine's hooks
// (BeforeRenew, BeforeFence, BeforeFinish), which are made for this, so the
// engine itself knows nothing of the lab.
type stalls struct {
	mu sync.Mutex
	m  map[stallKey]chan struct{}
}

type stallKey struct {
	customer uuid.UUID
	key      string
}

// add stalls the lease of the first attempt on (customer, key), until
// release is called. Attempts that take the key over are never stalled.
func (s *stalls) add(customer uuid.UUID, key string) (release func()) {
	ch := make(chan struct{})
	k := stallKey{customer, key}
	s.mu.Lock()
	if s.m == nil {
		s.m = map[stallKey]chan struct{}{}
	}
	s.m[k] = ch
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			delete(s.m, k)
			s.mu.Unlock()
			close(ch)
		})
	}
}

// wait blocks while c's attempt is stalled.
func (s *stalls) wait(ctx context.Context, c checkout.Claimed) {
	if c.TakenOver || c.ByCompleter {
		return
	}
	s.mu.Lock()
	ch := s.m[stallKey{c.CustomerID, c.Key}]
	s.mu.Unlock()
	if ch == nil {
		return
	}
	t := time.NewTimer(maxStall)
	defer t.Stop()
	select {
	case <-ch:
	case <-ctx.Done():
	case <-t.C:
	}
}
