package idemhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"exactlyonce/idem"
)

// Serve runs next at most once for req: it claims the key, or waits up to
// wait for the request holding it, or replays the stored answer; next runs
// under the kept lease with the lock in its request's context (LockOf), and
// its answer is held back until it is stored, then sent. It returns the
// kit's refusals (idem.RefusalOf) and next's own error for the caller to
// answer: nothing has been written to w then. Keys.Middleware is built on
// it, and so are idemecho's and idemecho5's.
func Serve(w http.ResponseWriter, r *http.Request, store *idem.Store, req idem.Request, wait time.Duration,
	next func(w http.ResponseWriter, r *http.Request) error) error {
	ctx := r.Context()
	claim, err := store.ClaimOrAwait(ctx, req, wait)
	if err != nil {
		return err
	}
	if claim.Replay != nil {
		Write(w, idem.Outcome{Response: *claim.Replay, Replayed: true})
		return nil
	}
	lock := claim.Lock
	held, stop := lock.Keep(ctx)
	defer stop()
	background := context.WithoutCancel(ctx)
	defer func() {
		// A handler that panics has answered nothing, as one that failed
		// with a 5xx: free the key for a retry, then let the panic go on
		// to the server's recovery. Release frees only a key still
		// started, so an answer whose transaction did commit stays.
		if p := recover(); p != nil {
			if !lock.Finished() {
				lock.Release(background) //nolint:errcheck // lost: another attempt has the key
			}
			panic(p)
		}
	}()
	rec := &recorder{header: w.Header().Clone()}
	err = next(rec, r.WithContext(idem.WithLock(held, lock)))
	// Whether the handler's own transaction stored an answer (FinishTx) is
	// known only once it committed: ask, rather than believe the finish
	// statement, whose COMMIT may have failed after it.
	stored, storedErr := lock.Stored(background)
	switch {
	case errors.Is(storedErr, idem.ErrNotCommitted):
		// The handler finished the key in its transaction, which did not
		// commit: nothing was stored, whatever the handler answered, and
		// the client retries with the key, freed.
		lock.Release(background) //nolint:errcheck // lost: another attempt has the key
		if err != nil {
			return fmt.Errorf("%w: %w", storedErr, err)
		}
		return storedErr
	case storedErr != nil:
		// ErrLockLost: another attempt has the key, and its answer is the
		// one a retry gets. Or the database is away (503).
		return storedErr
	case stored && rec.status == 0:
		// Stored, then nothing written (or an error after the commit): the
		// client gets what its retry would get.
		writeResponse(w, lock.Answer())
		return nil
	case stored:
	default:
		// Only the work's answer is the key's: Do's, or the one the
		// handler finished the key with (FinishTx, Finish). Anything else
		// (a refusal before the work began, failed validation, an answer
		// to work that failed and freed the key, a 5xx, nothing at all) is
		// sent but not stored, and the key is freed, so the corrected
		// request runs: Stripe's rule, and Echo's for an error returned
		// before Do.
		relErr := lock.Release(background)
		switch {
		case err != nil:
			return err
		case errors.Is(relErr, idem.ErrLockLost):
			// Another attempt took the key over: its answer, not this
			// one, is what a retry gets.
			return relErr
		case relErr != nil:
			return relErr
		case rec.status == 0:
			// A handler that wrote nothing is answered for it, never
			// with an empty answer.
			return idem.ErrNoResponse
		}
	}
	rec.flush(w)
	return nil
}

// Write sends an outcome: its status, the stored headers and the body,
// marked Idempotent-Replayed: true only when it is a replay.
func Write(w http.ResponseWriter, o idem.Outcome) {
	if o.Replayed {
		w.Header().Set(idem.HeaderReplayed, "true")
	}
	writeResponse(w, o.Response)
}

func writeResponse(w http.ResponseWriter, resp idem.Response) {
	for k, v := range resp.Header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(resp.Status)
	w.Write(resp.Body) // the client went away: nothing to do
}

// recorder holds a handler's answer back until it is stored, so that a
// client never sees an answer its retry would not get. It has headers of its
// own, sent with the answer by flush.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

func (r *recorder) flush(w http.ResponseWriter) {
	h := w.Header()
	clear(h)
	for k, v := range r.header {
		h[k] = v
	}
	w.WriteHeader(r.status)
	w.Write(r.body.Bytes()) // the client went away: nothing to do
}
