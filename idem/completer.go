package idem

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"exactlyonce/idem/internal/idemdb"
)

// Settler settles an operation whose attempt died holding its key: the
// completer hands it the key, taken over with a fresh lease, and its
// Payload. Work that may outlast the lease runs under Lock.Keep, as an
// attempt's would. The Settler must either finish it (with its own
// write in the same transaction or statement, see Lock) or release it when
// nothing happened (Lock.Release), so the client's retry starts afresh. It
// names what it came to (outcome, such as "released", for the caller's
// Observe: metrics, logs). An error leaves the key to a later pass, once
// the new lease runs out; wrap it with Poison when retrying cannot cure it.
type Settler interface {
	Settle(ctx context.Context, l *Lock) (outcome string, err error)
}

// SettlerFunc adapts a function to Settler.
type SettlerFunc func(ctx context.Context, l *Lock) (string, error)

// Settle calls f.
func (f SettlerFunc) Settle(ctx context.Context, l *Lock) (string, error) { return f(ctx, l) }

// Poison marks a settling error that retrying cannot cure (an unreadable
// payload, a downstream service refusing the request itself): a key whose
// settling fails with it MaxAttempts times is parked. Outages are not
// poison: they park nothing.
func Poison(err error) error { return &poisonError{err} }

type poisonError struct{ err error }

func (e *poisonError) Error() string { return e.err.Error() }
func (e *poisonError) Unwrap() error { return e.err }

// isPoison reports whether err was marked with Poison.
func isPoison(err error) bool {
	var p *poisonError
	return errors.As(err, &p)
}

// Settled reports one key a completer pass handed to its Settler.
type Settled struct {
	Lock *Lock
	// Attempt counts the completer's takeovers of this key, this one
	// included.
	Attempt int
	// Outcome and Err are what the Settler returned.
	Outcome string
	Err     error
	// Parked is true when this pass parked the key.
	Parked bool
}

// maxAskedGraces is how many Graces past its lease a key's asks hold the
// completer off, by default (Completer.AsksFor).
const maxAskedGraces = 10

// Completer finds started keys of its Store's kind whose lease ran out and whose client has had
// Grace to retry, and has a Settler settle them, one by one. Several completers (one per instance) never wait for each
// other: each takes a different key (SKIP LOCKED).
type Completer struct {
	Store   *Store
	Settler Settler
	// Grace is how long after its client last asked (its claim, a retry
	// told the key is in progress, or one that found the database away) a
	// key is left to the client's retries before the completer may take it
	// over. After this process found the database away, a pass takes no
	// key for a Grace: the asks other instances kept through the outage
	// reach the database first.
	Grace time.Duration
	// AsksFor is how long after a key's claim its client's asks hold the
	// completer off; default the store's Lease plus ten Graces, or its
	// ResumeWithin when that is shorter. Past it, the completer takes the
	// key a Grace after the key's lease ran out, however recently its
	// client asked. An ask matters while the client's next retry can take
	// the key over and get its own outcome: the database comes back, a
	// rate limit lets the retry through, the holder's lease runs out. A
	// client asking for longer than that is asking about a key no retry of
	// its gets (too old to resume, a limit that never lets it through, an
	// outage of ten graces), and its asks, each answered "retry", would
	// otherwise keep the key started, and the client retrying, for ever.
	// Counting the grace from the first ask instead would settle a client's
	// key under it while it retried through any outage longer than a
	// Grace, which the asks exist to prevent.
	AsksFor time.Duration
	// Max bounds the keys of one pass; default 100.
	Max int
	// MaxAttempts is how many takeovers ending in a Poison error park a
	// key; default 5.
	MaxAttempts int
	// Observe, when set, is told about every key a pass handed over: for
	// the caller's audit trail, metrics and logs.
	Observe func(ctx context.Context, s Settled)
	// Around, when set, runs each key's turn (its settling, a parking,
	// Observe): it calls turn once, with ctx or a context derived from it.
	// Tracing uses it to make each key's turn a trace of its own, whose
	// context the Settler's and Observe's work and log lines carry.
	Around func(ctx context.Context, l *Lock, turn func(ctx context.Context))
}

// Pass settles up to Max stuck keys and reports how many it handed over. A
// key whose settling failed is not an error of the pass (Observe sees it);
// only a failure to take keys over is.
func (c *Completer) Pass(ctx context.Context) (int, error) {
	limit := c.Max
	if limit <= 0 {
		limit = 100
	}
	maxAttempts := c.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = 5
	}
	flushed := time.Now()
	if err := c.Store.flushAsks(ctx); err != nil {
		return 0, err
	}
	if time.Since(flushed) >= slowAnswer {
		c.Store.asks.markDown()
	}
	if c.Store.asks.downWithin(c.Grace) {
		return 0, nil
	}
	asksFor := c.AsksFor
	if asksFor <= 0 {
		asksFor = c.Store.lease + maxAskedGraces*c.Grace
		if r := c.Store.resumeWithin; r > 0 && r < asksFor {
			asksFor = r
		}
	}
	n := 0
	// A key settled in this pass that comes back in it (its Settler ended
	// the lease at once, to leave the key free for its client) is given
	// back untouched and ends the pass: each key at most once per pass.
	done := map[[2]string]bool{}
	for ; n < limit; n++ {
		sent := time.Now()
		token := newID()
		row, err := c.takeStuck(ctx, idemdb.TakeStuckParams{LockToken: token, Lease: c.Store.lease, Grace: c.Grace,
			Kind: c.Store.kind, AsksFor: asksFor})
		if errors.Is(err, pgx.ErrNoRows) {
			break
		}
		if err != nil {
			if isOutage(err) {
				c.Store.asks.markDown()
			}
			return n, storeError("take stuck key", err)
		}
		if done[[2]string{row.Scope, row.Key}] {
			if _, err := c.Store.q.GiveBack(ctx, idemdb.GiveBackParams{Scope: row.Scope, Key: row.Key, LockToken: token}); err != nil {
				return n, storeError("give back a key settled in this pass", err)
			}
			return n, nil
		}
		done[[2]string{row.Scope, row.Key}] = true
		if time.Since(sent) >= slowAnswer {
			// The database judged the grace when it got round to the
			// statement, and the asks of that wait are not in yet (see
			// slowAnswer): give the key back untouched, and hold off.
			c.Store.asks.markDown()
			_, err := c.Store.q.GiveBack(ctx, idemdb.GiveBackParams{Scope: row.Scope, Key: row.Key, LockToken: token})
			if err != nil {
				return n, storeError("give back stuck key", err)
			}
			return n, nil
		}
		l := &Lock{store: c.Store, Scope: row.Scope, Key: row.Key, OperationID: row.OperationID,
			Token: token, Payload: row.Request, TakenOver: true, ByCompleter: true, lease: c.Store.lease, sent: sent}
		turn := func(ctx context.Context) { c.settle(ctx, l, int(row.SettleAttempts), maxAttempts) }
		if c.Around != nil {
			c.Around(ctx, l, turn)
		} else {
			turn(ctx)
		}
	}
	return n, nil
}

// SettleKey settles the one key (scope, key) of the store's kind now, as a
// Pass does when the key's turn comes, but without waiting for its client
// to have been quiet for a Grace: for a caller that has learned the key's
// outcome may be known (the provider's webhook, a client back from a
// redirect to its bank). It takes the key over when it is started, not
// parked and no attempt holds its lease, and hands it to the Settler (a
// Poison error counts toward parking, and Observe sees the outcome, as in a
// Pass). It returns an *InProgressError when an attempt holds the key (or
// a completer or a retry is deciding about it at this moment), and
// ErrNotFound when there is no started key to settle: finished already, or
// none.
func (c *Completer) SettleKey(ctx context.Context, scope, key string) (Settled, error) {
	maxAttempts := c.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = 5
	}
	sent := time.Now()
	token := newID()
	p := idemdb.TakeStuckKeyParams{Scope: scope, Key: key, Kind: c.Store.kind, LockToken: token, Lease: c.Store.lease}
	var row idemdb.TakeStuckKeyRow
	take := func(q *idemdb.Queries) error {
		var err error
		row, err = q.TakeStuckKey(ctx, p)
		return err
	}
	var err error
	if c.Store.onTakeover == nil {
		err = take(c.Store.q)
	} else {
		err = pgx.BeginFunc(ctx, c.Store.pool, func(tx pgx.Tx) error {
			if err := take(idemdb.New(tx)); err != nil {
				return err
			}
			return c.Store.tookOver(ctx, tx, Takeover{Scope: row.Scope, Key: row.Key, ByCompleter: true,
				Attempt: int(row.SettleAttempts), LockedUntil: row.LockedUntil})
		})
	}
	if errors.Is(err, pgx.ErrNoRows) {
		_, err := c.Store.Get(ctx, scope, key)
		if busy, ok := errors.AsType[*InProgressError](err); ok {
			return Settled{}, busy
		}
		if err != nil && !errors.Is(err, ErrNotFound) {
			return Settled{}, err
		}
		return Settled{}, ErrNotFound
	}
	if err != nil {
		return Settled{}, storeError("take key", err)
	}
	l := &Lock{store: c.Store, Scope: row.Scope, Key: row.Key, OperationID: row.OperationID,
		Token: token, Payload: row.Request, TakenOver: true, ByCompleter: true, lease: c.Store.lease, sent: sent}
	var s Settled
	turn := func(ctx context.Context) { s = c.settle(ctx, l, int(row.SettleAttempts), maxAttempts) }
	if c.Around != nil {
		c.Around(ctx, l, turn)
	} else {
		turn(ctx)
	}
	return s, nil
}

// takeStuck takes the next stuck key over: one statement, or, when the
// store has a TookOver hook, a transaction of it and the hook's write, so
// that the caller's record of the takeover commits with it.
func (c *Completer) takeStuck(ctx context.Context, p idemdb.TakeStuckParams) (idemdb.TakeStuckRow, error) {
	if c.Store.onTakeover == nil {
		return c.Store.q.TakeStuck(ctx, p)
	}
	var row idemdb.TakeStuckRow
	err := pgx.BeginFunc(ctx, c.Store.pool, func(tx pgx.Tx) error {
		var err error
		if row, err = idemdb.New(tx).TakeStuck(ctx, p); err != nil {
			return err
		}
		return c.Store.tookOver(ctx, tx, Takeover{Scope: row.Scope, Key: row.Key, ByCompleter: true,
			Attempt: int(row.SettleAttempts), LockedUntil: row.LockedUntil})
	})
	return row, err
}

// settle is one key's turn: the Settler, a parking when it keeps failing
// with a Poison error, and Observe. It returns what Observe was told.
func (c *Completer) settle(ctx context.Context, l *Lock, attempt, maxAttempts int) Settled {
	outcome, err := c.Settler.Settle(ctx, l)
	s := Settled{Lock: l, Attempt: attempt, Outcome: outcome, Err: err}
	if isPoison(err) && s.Attempt >= maxAttempts {
		s.Parked = c.park(ctx, l)
	}
	if c.Observe != nil {
		c.Observe(ctx, s)
	}
	return s
}

// park leaves a poison key to an operator, if the completer still holds it.
func (c *Completer) park(ctx context.Context, l *Lock) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	n, err := c.Store.q.Park(ctx, idemdb.ParkParams{Scope: l.Scope, Key: l.Key, LockToken: l.Token})
	return err == nil && n == 1
}
