package idem

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"exactlyonce/idem/internal/idemdb"
)

// maxPendingAsks bounds the asks a store remembers while its database is
// away: enough for every key a busy instance is asked about during a long
// outage; past it, the newest asks are dropped, and those keys fall back to
// the grace counted from their last ask that reached the database.
const maxPendingAsks = 10_000

// slowAnswer is how long a database call may take before the completer
// stops trusting the asks the database holds. A healthy database answers a
// claim or a takeover in milliseconds; one that took this long was stalled
// or blocked meanwhile, and the clients that asked during that time wait,
// in every process, for their own calls to get through: their asks are not
// in yet. (make chaos, 6 December 2026: a takeover sent during a 12 s stall
// of PostgreSQL ran when it resumed, before the other instances' asks,
// and settled keys whose clients were retrying.)
const slowAnswer = time.Second

// asks is what a store knows of its clients that the database does not
// yet: the keys clients asked about while the database was away, and when
// that was by this process's monotonic clock. The completer leaves a key
// alone for its Grace after the client's last ask (Completer.Grace), so a
// client retrying through an outage must not look like one that gave up:
// the asks are written (asked_at) as soon as the database answers again,
// and the completer of this process holds off for a Grace after the
// outage, so that it never acts before another instance's asks are in.
type asks struct {
	mu      sync.Mutex
	pending map[askKey]time.Time
	downAt  time.Time // the last time a call found the database away
	// some says whether pending holds anything, read without the lock by
	// every claim, which would otherwise take it only to find nothing.
	some atomic.Bool
}

type askKey struct{ scope, key string }

// note remembers that a client asked about a key now, and that the
// database did not answer when down is true.
func (a *asks) note(scope, key string, down bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	if down {
		a.downAt = now
	}
	if a.pending == nil {
		a.pending = make(map[askKey]time.Time)
	}
	if _, ok := a.pending[askKey{scope, key}]; ok || len(a.pending) < maxPendingAsks {
		a.pending[askKey{scope, key}] = now
		a.some.Store(true)
	}
}

// downWithin reports whether the database was found away less than d ago.
func (a *asks) downWithin(d time.Duration) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return !a.downAt.IsZero() && time.Since(a.downAt) < d
}

// markDown records that a call found the database away.
func (a *asks) markDown() {
	a.mu.Lock()
	a.downAt = time.Now()
	a.mu.Unlock()
}

// take hands the pending asks to a flush, each with how long ago it was.
func (a *asks) take() idemdb.AskedParams {
	a.mu.Lock()
	defer a.mu.Unlock()
	var p idemdb.AskedParams
	for k, at := range a.pending {
		p.Scopes = append(p.Scopes, k.scope)
		p.Keys = append(p.Keys, k.key)
		p.Agos = append(p.Agos, time.Since(at).Seconds())
	}
	clear(a.pending)
	a.some.Store(false)
	return p
}

// putBack returns asks a flush could not write, unless newer ones came.
func (a *asks) putBack(p idemdb.AskedParams) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	for i := range p.Scopes {
		k := askKey{p.Scopes[i], p.Keys[i]}
		if _, newer := a.pending[k]; !newer && len(a.pending) < maxPendingAsks {
			a.pending[k] = now.Add(-time.Duration(p.Agos[i] * float64(time.Second)))
			a.some.Store(true)
		}
	}
}

func (a *asks) empty() bool { return !a.some.Load() }

// asked records a claim's ask about r's key: a client that is told the key
// is in progress, or that the database is away, is still there, and the
// completer's grace counts from now; so is one that hung up while the
// claim waited on the database (its own timeout, through a stalled server
// or a locked row): no answer reached it, but it asked. An ask the database
// cannot take now is kept for the next flush, which any later claim or
// completer pass of this store makes. A claim that took slowAnswer or
// longer to fail counts as an outage for the completer's hold-off.
func (s *Store) asked(ctx context.Context, r Request, err error, took time.Duration) {
	switch {
	case IsUnavailable(err), errors.Is(err, context.Canceled):
		s.asks.note(r.Scope, r.Key, isOutage(err) || took >= slowAnswer)
		return
	case isInProgress(err):
		s.asks.note(r.Scope, r.Key, false)
	case s.asks.empty():
		return
	}
	_ = s.flushAsks(ctx) // what it could not write stays pending
}

// Ask records that a client asked about its key and was told to retry
// before any claim was made (a rate limit refused the request, say), as a
// claim told the key is in progress is recorded: the completer leaves the
// key to its client for a Grace from now. Every answer that tells a client
// to retry must count as an ask, or a client that obeys it can find its
// key settled "not completed" by the time its retry gets through. A key
// that does not exist, is finished, parked, or too old to be resumed is
// left as it is (see Asked). An ask the database cannot take now is kept
// for the next flush, as a claim's is.
func (s *Store) Ask(ctx context.Context, scope, key string) error {
	s.asks.note(scope, key, false)
	return s.flushAsks(ctx)
}

// flushAsks writes the pending asks, in one statement: each key's asked_at
// becomes the database's now() less the ask's age, if that is later than
// what it holds. A key finished or gone meanwhile is left as it is; one
// whose row is locked at the moment keeps its ask for the next flush.
func (s *Store) flushAsks(ctx context.Context) error {
	p := s.asks.take()
	if len(p.Keys) == 0 {
		return nil
	}
	skipped, err := s.q.Asked(ctx, p)
	if err != nil {
		s.asks.putBack(p)
		if isOutage(err) {
			s.asks.markDown()
		}
		return storeError("record asks", err)
	}
	if len(skipped) > 0 {
		var left idemdb.AskedParams
		for _, k := range skipped {
			left.Scopes, left.Keys, left.Agos = append(left.Scopes, k.Scope), append(left.Keys, k.Key), append(left.Agos, k.Ago)
		}
		s.asks.putBack(left)
	}
	return nil
}

func isInProgress(err error) bool { return errors.Is(err, ErrInProgress) }

// isOutage reports whether err means the database was away: unreachable,
// restarting, read-only after a failover. A statement that only ran out of
// time is not one: a slow moment must not hold the completer off for a
// whole Grace (its ask is still kept). Nor is a transaction the database
// rolled back (SQLSTATE class 40: a deadlock, a serialization failure):
// the database answered.
func isOutage(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "40") {
		return false
	}
	return IsUnavailable(err) && !errors.Is(err, context.DeadlineExceeded) && !pgconn.Timeout(err)
}
