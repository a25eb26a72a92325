package lab

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"exactlyonce/demo/lab/labdb"
	"exactlyonce/internal/db"
)

// maxEvents bounds the audit trail shown for one key.
const maxEvents = 50

// Inspection is the database's view of a lab shopper: its keys, and the
// audit trail of one of them.
type Inspection struct {
	CustomerID uuid.UUID
	Keys       []KeyRow
	// Key is the key whose Events these are.
	Key    string
	Events []Event
}

// KeyRow is one order key (a row of the kit's idem_keys).
type KeyRow struct {
	Key         string
	Status      string
	LockedUntil time.Time
	// LockRemaining is by the database clock; <= 0 means expired.
	LockRemaining time.Duration
	// TokenPrefix is the short form of the lock token (ShortID): enough to
	// see it change when a retry takes the key over.
	TokenPrefix  string
	ResponseCode int
}

// Event is one entry of a key's audit trail.
type Event struct {
	Event  string
	At     time.Time
	Detail string
}

// ErrNotLabShopper means Inspect was asked about a customer no remembered
// run created: the lab shows its own shoppers only.
var ErrNotLabShopper = errors.New("not a shopper of a lab run")

// Inspect reads the keys of a lab shopper and the audit trail of key, or of
// its first key when key is empty or not the shopper's.
func (r *Runner) Inspect(ctx context.Context, customer uuid.UUID, key string) (Inspection, error) {
	if !r.isLabShopper(customer) {
		return Inspection{}, ErrNotLabShopper
	}
	rows, err := r.q.ListCustomerKeys(ctx, labdb.ListCustomerKeysParams{CustomerID: customer, MaxRows: maxKeys})
	if err != nil {
		return Inspection{}, fmt.Errorf("list keys: %w", err)
	}
	in := Inspection{CustomerID: customer, Keys: make([]KeyRow, len(rows))}
	found := false
	for i, k := range rows {
		status := k.Status
		if k.Parked && status == "started" {
			// A poison key the completer gave up on: it needs an operator.
			status = "parked"
		}
		in.Keys[i] = KeyRow{
			Key: k.Key, Status: status, LockedUntil: k.LockedUntil, LockRemaining: k.LockRemaining,
			TokenPrefix: ShortID(k.LockToken.String()),
		}
		if k.ResponseStatus != nil {
			in.Keys[i].ResponseCode = int(*k.ResponseStatus)
		}
		found = found || k.Key == key
	}
	switch {
	case found:
		in.Key = key
	case len(rows) > 0:
		in.Key = rows[0].Key
	default:
		return in, nil
	}
	events, err := r.db.ListKeyEvents(ctx, db.ListKeyEventsParams{CustomerID: customer, Key: in.Key, MaxRows: maxEvents})
	if err != nil {
		return Inspection{}, fmt.Errorf("list key events: %w", err)
	}
	in.Events = make([]Event, len(events))
	for i, e := range events {
		in.Events[i] = Event{Event: e.Event, At: e.At, Detail: string(e.Detail)}
	}
	return in, nil
}

// isLabShopper reports whether customer belongs to the run in flight or to
// a remembered run.
func (r *Runner) isLabShopper(customer uuid.UUID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live != nil && slices.Contains(r.live.shoppers, customer) {
		return true
	}
	for _, run := range r.last {
		if run.hasShopper(customer) {
			return true
		}
	}
	return false
}

// hasShopper reports whether customer is one of the run's shoppers.
func (run Run) hasShopper(customer uuid.UUID) bool {
	return slices.Contains(run.Shoppers, customer)
}
