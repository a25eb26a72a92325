package handlers

import (
	"sync"

	"github.com/google/uuid"

	"exactlyonce/internal/checkout"
)

// maxWaitingSubmits is how many submits of one key may wait at once for the
// attempt that holds it. A double-click needs one; a flood of one form
// (a stuck key, a script) would otherwise hold a goroutine and a DB poll
// per request. Past the cap a submit answers at once with the processing
// page, which waits by refreshing instead of holding a request.
const maxWaitingSubmits = 4

// keyWaiters counts the submits waiting per key.
type keyWaiters struct {
	mu sync.Mutex
	n  map[waitingKey]int
}

type waitingKey struct {
	customer uuid.UUID
	key      string
}

// join counts one more waiter for the key, unless the key has
// maxWaitingSubmits already; leave must be called once the wait is over.
func (w *keyWaiters) join(customer uuid.UUID, key string) (leave func(), ok bool) {
	k := waitingKey{customer, key}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == nil {
		w.n = map[waitingKey]int{}
	}
	if w.n[k] >= maxWaitingSubmits {
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

// joinWaiters registers a submit that is about to wait for its key, or
// says it may not (the key has maxWaitingSubmits waiting already).
func (h *Handler) joinWaiters(a checkout.Attempt) (leave func(), ok bool) {
	leaveKey, ok := h.waiters.join(a.CustomerID, a.Key)
	if !ok {
		h.metrics.Throttled.WithLabelValues("waiting_submit").Inc()
		return nil, false
	}
	h.metrics.WaitingSubmits.Inc()
	return func() {
		leaveKey()
		h.metrics.WaitingSubmits.Dec()
	}, true
}
