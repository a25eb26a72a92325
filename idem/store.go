package idem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/idem/internal/idemdb"
)

// Store keeps idempotency keys in PostgreSQL. It is safe for concurrent use.
type Store struct {
	pool         *pgxpool.Pool
	q            *idemdb.Queries
	kind         string
	lease        time.Duration
	resumeWithin time.Duration
	onTakeover   func(ctx context.Context, tx pgx.Tx, t Takeover) error
	answers      Answers
	// rememberWhile is the age below which a finished key may be
	// remembered: Retention minus the entries' lifetime (see remember).
	rememberWhile time.Duration
	// asks are the clients' asks the database has not recorded yet.
	asks asks
}

// Options configure a Store.
type Options struct {
	// Kind names the kind of operation this store's keys protect, when
	// several flows share the table: each flow's Completer and Sweeper take
	// only keys of their store's kind. Default "".
	Kind string
	// Lease is how long a claim holds its key without a heartbeat before
	// another attempt may take it over. Default 30s.
	Lease time.Duration
	// ResumeWithin, when set, is the age past which a claim no longer takes
	// over a key whose lease ran out: the client is told the key is in
	// progress and the completer settles it. Set it to the window in which
	// a downstream service still recognises a key derived from the
	// operation (a payment provider forgets idempotency keys after a day):
	// past it, repeating the first attempt's call would do the work twice.
	ResumeWithin time.Duration
	// Answers, when set, remembers finished keys in this process, so that
	// replays skip the database (see Answers). AnswersFor is how long its
	// entries live, and Retention how long finished keys stay in the table
	// (the Sweeper's Keep). A key is remembered only while its age plus
	// AnswersFor is under Retention, so that no remembered answer outlives
	// its row: after the sweep, the same key is a new operation, and an
	// answer remembered past that would name the old one. Answers without
	// both remembers nothing. Default: nothing remembered.
	Answers    Answers
	AnswersFor time.Duration
	Retention  time.Duration
	// TookOver, when set, is called inside the transaction that takes a
	// key over (a retry's claim, or the completer's pass), after the
	// takeover's statement: a write of the caller's in tx (an audit
	// event) commits with the takeover or not at all. An error rolls the
	// takeover back. It costs a takeover one statement of the caller's;
	// with it set, the completer's search for a stuck key runs in a
	// transaction of its own (BEGIN and COMMIT, or ROLLBACK when it finds
	// none: two more round trips a pass). A request's claim of a key not
	// taken over never calls it, and costs nothing more.
	TookOver func(ctx context.Context, tx pgx.Tx, t Takeover) error
}

// NewStore returns a Store on pool, whose database has Migrations applied.
func NewStore(pool *pgxpool.Pool, opts Options) *Store {
	if opts.Lease <= 0 {
		opts.Lease = 30 * time.Second
	}
	s := &Store{pool: pool, q: idemdb.New(pool), kind: opts.Kind, lease: opts.Lease, resumeWithin: opts.ResumeWithin,
		onTakeover: opts.TookOver}
	// A new store's completer holds off for a Grace, as after an outage:
	// the asks that this process's predecessor kept in memory died with
	// it, and those other instances kept through an outage this process
	// never saw may still be on their way (make chaos: an instance
	// restarted after kill -9 during a stall settled keys at its first
	// pass, while their clients retried).
	s.asks.downAt = time.Now()
	if opts.Answers != nil && opts.AnswersFor > 0 && opts.Retention > opts.AnswersFor+rememberMargin {
		s.answers, s.rememberWhile = opts.Answers, opts.Retention-opts.AnswersFor-rememberMargin
	}
	return s
}

// Kind is the kind of operation this store's keys protect (Options.Kind).
func (s *Store) Kind() string { return s.kind }

// Response is what a finished key replays: a status, the headers worth
// replaying and the body, byte for byte as first sent.
type Response struct {
	Status int
	Header map[string]string
	Body   []byte
}

func responseFrom(status *int32, header json.RawMessage, body []byte) (Response, error) {
	r := Response{Body: body}
	if status != nil {
		r.Status = int(*status)
	}
	if len(header) > 0 {
		if err := json.Unmarshal(header, &r.Header); err != nil {
			return Response{}, fmt.Errorf("stored headers: %w", err)
		}
	}
	return r, nil
}

// Unpark hands a key the completer parked (its Settler failed
// Completer.MaxAttempts times with a Poison error) back to the completer,
// once an operator has dealt with the cause: its attempts count from zero
// and its lease ends, so the next completer pass settles it. It returns
// ErrNotFound when (scope, key) is not a parked key. The README's
// operator's section says how to find one.
func (s *Store) Unpark(ctx context.Context, scope, key string) error {
	n, err := s.q.Unpark(ctx, idemdb.UnparkParams{Scope: scope, Key: key})
	if err != nil {
		return storeError("unpark key", err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// Get returns the stored response of a finished key, an *InProgressError
// while the key is started, and ErrNotFound when there is no such key.
func (s *Store) Get(ctx context.Context, scope, key string) (Response, error) {
	row, err := s.q.GetKey(ctx, idemdb.GetKeyParams{Scope: scope, Key: key})
	if errors.Is(err, pgx.ErrNoRows) {
		return Response{}, ErrNotFound
	}
	if err != nil {
		return Response{}, storeError("get key", err)
	}
	if row.Status != "finished" {
		k := Key{LeaseLeft: seconds(row.LeaseLeftSeconds), Age: seconds(row.AgeSeconds)}
		return Response{}, &InProgressError{RetryAfter: retryAfter(k), Held: k.LeaseLeft > 0}
	}
	return responseFrom(row.ResponseStatus, row.ResponseHeaders, row.ResponseBody)
}
