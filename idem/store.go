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
	answers      Answers
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
	// replays skip the database (see Answers). Default: nothing remembered.
	Answers Answers
}

// NewStore returns a Store on pool, whose database has Migrations applied.
func NewStore(pool *pgxpool.Pool, opts Options) *Store {
	if opts.Lease <= 0 {
		opts.Lease = 30 * time.Second
	}
	return &Store{pool: pool, q: idemdb.New(pool), kind: opts.Kind, lease: opts.Lease, resumeWithin: opts.ResumeWithin, answers: opts.Answers}
}

// Kind is the kind of operation this store's keys protect (Options.Kind).
func (s *Store) Kind() string { return s.kind }

// Lease is how long a claim holds its key without a heartbeat.
func (s *Store) Lease() time.Duration { return s.lease }

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

// Get returns the stored response of a finished key, an *InProgressError
// while the key is started, and ErrNotFound when there is no such key.
func (s *Store) Get(ctx context.Context, scope, key string) (Response, error) {
	row, err := s.q.GetKey(ctx, idemdb.GetKeyParams{Scope: scope, Key: key})
	if errors.Is(err, pgx.ErrNoRows) {
		return Response{}, ErrNotFound
	}
	if err != nil {
		return Response{}, fmt.Errorf("get key: %w", err)
	}
	if row.Status != "finished" {
		return Response{}, &InProgressError{RetryAfter: max(seconds(row.LeaseLeftSeconds), 0)}
	}
	return responseFrom(row.ResponseStatus, row.ResponseHeaders, row.ResponseBody)
}
