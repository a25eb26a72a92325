package lab

import (
	"cmp"
	"net/http"
	"slices"
	"sync"
	"time"

	"exactlyonce/internal/problem"
)

// recorder collects a run's attempts as they start and end. The live view
// reads it while the run's goroutines write it.
type recorder struct {
	began time.Time

	mu       sync.Mutex
	attempts []Attempt
	marks    []Mark
}

func newRecorder() *recorder { return &recorder{began: time.Now()} }

// begin records an attempt being sent and returns its index.
func (r *recorder) begin(label, key string) int { return r.beginIn("", label, key) }

// beginIn is begin for an attempt of a lane.
func (r *recorder) beginIn(lane, label, key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts = append(r.attempts, Attempt{N: len(r.attempts) + 1, Lane: lane, Label: label, Key: key, Start: time.Since(r.began)})
	return len(r.attempts) - 1
}

// end records the answer to attempt i.
func (r *recorder) end(i int, resp orderResponse, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := &r.attempts[i]
	a.End, a.Done = time.Since(r.began), true
	if err != nil {
		// The cause is a transport error of the lab's own client (most
		// likely the run's time limit): nothing a viewer can act on.
		a.Error = "no response"
		return
	}
	a.Status, a.Problem, a.Replayed = resp.status, resp.problem, resp.replayed
	a.RetryAfter, a.ChargeID = resp.retryAfter, resp.chargeID
}

// endPage records the answer to attempt i, a browser's step: the first
// answer, and the page the browser ended on.
func (r *recorder) endPage(i int, first, landed page, waited bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := &r.attempts[i]
	a.End, a.Done = time.Since(r.began), true
	if err != nil {
		a.Error = "no response"
		return
	}
	a.Status, a.Replayed, a.Waited, a.Page = first.status, first.replayed, waited, landed.shown()
}

// markNow records an instant of the run that the lab itself sees happen,
// such as the database clock saying a lock has expired.
func (r *recorder) markNow(label string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.marks = append(r.marks, Mark{Label: label, At: time.Since(r.began)})
}

// markAt records an instant the database recorded (a webhook received, a
// job's attempt), placed on the run's time line by the wall clock: the
// database and the lab read the same machine's clock, or one kept in step.
// An instant before the run's start is put at its start.
func (r *recorder) markAt(label string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.marks = append(r.marks, Mark{Label: label, At: max(at.Round(0).Sub(r.began.Round(0)), 0)})
}

// marksSnapshot returns a copy of the marks so far, in the order of their
// instants.
func (r *recorder) marksSnapshot() []Mark {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]Mark(nil), r.marks...)
	slices.SortStableFunc(out, func(a, b Mark) int { return cmp.Compare(a.At, b.At) })
	return out
}

// snapshot returns a copy of the attempts so far, with their lock roles.
func (r *recorder) snapshot() []Attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]Attempt(nil), r.attempts...)
	assignLocks(out)
	return out
}

// assignLocks says which attempts held their key's lock, from their
// responses alone: only the holder calls the provider, so only it can answer
// with a new outcome (201 or 402 not replayed), a provider failure (5xx
// after charging, or not), or "superseded" (it held the lock and lost it).
// A holder that was not the key's first is one that took it over.
func assignLocks(attempts []Attempt) {
	held := map[string]bool{}
	for i := range attempts {
		a := &attempts[i]
		a.Lock = LockNone
		if !a.Done || !holdsLock(*a) {
			continue
		}
		a.Lock = LockHeld
		if held[a.Key] {
			a.Lock = LockTookOver
		}
		held[a.Key] = true
	}
}

func holdsLock(a Attempt) bool {
	switch {
	case a.Page == shownBank:
		// The form's attempt claimed the key and sent the shopper to
		// their bank, handing the key back.
		return true
	case a.Page != "" && a.Status != http.StatusPaymentRequired:
		// The bank's page and the way back: the return settles the key
		// under a lock, but its answer does not say whether it or the
		// webhook did.
		return false
	case a.Replayed:
		return false
	case a.Status == http.StatusCreated || a.Status == http.StatusPaymentRequired:
		return true
	}
	switch a.Problem {
	case problem.LockLost.Slug, problem.OutcomeUnknown.Slug, problem.ProviderTimeout.Slug, problem.ProviderUnavailable.Slug:
		return true
	}
	return false
}
