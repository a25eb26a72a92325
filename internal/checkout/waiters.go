package checkout

import (
	"sync"

	"github.com/google/uuid"
)

// maxWaiters is how many callers of one key may wait at once for the
// attempt that holds it (PlaceOrAwait). A double-click needs one; a flood of
// one form (a stuck key, a script) would otherwise hold a goroutine and a
// database poll per request. Past the cap a caller is answered at once: a
// browser's page then waits by refreshing instead of holding a request.
const maxWaiters = 4

// keyWaiters counts the callers waiting per key.
type keyWaiters struct {
	mu sync.Mutex
	n  map[waitingKey]int
}

type waitingKey struct {
	customer uuid.UUID
	key      string
}

// join counts one more waiter for the key, unless the key has maxWaiters
// already; leave must be called once the wait is over.
func (w *keyWaiters) join(customer uuid.UUID, key string) (leave func(), ok bool) {
	k := waitingKey{customer, key}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == nil {
		w.n = map[waitingKey]int{}
	}
	if w.n[k] >= maxWaiters {
		return nil, false
	}
	w.n[k]++
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.n[k]--; w.n[k] <= 0 {
			delete(w.n, k)
		}
	}, true
}

// joinWaiters registers a caller that is about to wait for its key, or
// says it may not (the key has maxWaiters waiting already), counting both
// in the metrics.
func (e *Engine) joinWaiters(a Attempt) (leave func(), ok bool) {
	leaveKey, ok := e.waiters.join(a.CustomerID, a.Key)
	if !ok {
		e.metrics.Throttled.WithLabelValues("waiting_submit").Inc()
		return nil, false
	}
	e.metrics.WaitingSubmits.Inc()
	return func() {
		leaveKey()
		e.metrics.WaitingSubmits.Dec()
	}, true
}
