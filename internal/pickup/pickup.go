// Package pickup reserves pickup slots: the shop's second protected form,
// which is not an order. What makes it safe to submit twice is the idem kit;
// this package holds only what is about reservations.
package pickup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"exactlyonce/idem"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
)

// Slot is a time a customer may collect their parcel.
type Slot struct {
	ID    string
	Label string
}

// Slots are the slots the form offers.
var Slots = []Slot{
	{"mon-am", "Monday, 9:00–12:00"},
	{"mon-pm", "Monday, 14:00–18:00"},
	{"sat-am", "Saturday, 9:00–12:00"},
}

// Version names what the form shows (the list of slots): a form key is
// bound to it, so a form rendered before the slots changed is refused.
// Change it whenever Slots changes.
const Version = "slots-v1"

// KeyKind is the kind of the pickup form's keys in the kit's table
// (idem.Options.Kind): its completer and sweeper take only these.
const KeyKind = "pickup"

// InvalidError is a reservation the form could not have asked for.
type InvalidError struct{ Reason string }

func (e *InvalidError) Error() string { return "invalid reservation: " + e.Reason }

// ErrNotFound means there is no such reservation for this visitor.
var ErrNotFound = errors.New("no such reservation")

// Reservation is one reserved slot.
type Reservation struct {
	ID        int64
	Slot      Slot
	Name      string
	CreatedAt time.Time
}

// Reserve writes a reservation in tx (the kit's transaction, which
// finishes the form's key with it) and returns its ID.
func Reserve(ctx context.Context, tx pgx.Tx, visitor, slotID, name string) (int64, error) {
	name = strings.TrimSpace(name)
	if _, ok := slot(slotID); !ok {
		return 0, &InvalidError{Reason: "no such slot"}
	}
	if name == "" || len(name) > 100 {
		return 0, &InvalidError{Reason: "the name must be 1 to 100 characters"}
	}
	id, err := database.TxQueries(tx).InsertPickup(ctx, db.InsertPickupParams{Visitor: visitor, Slot: slotID, Name: name})
	if err != nil {
		return 0, fmt.Errorf("reserve pickup: %w", err)
	}
	return id, nil
}

// Store reads reservations back.
type Store struct{ d *database.DB }

// NewStore returns a Store.
func NewStore(d *database.DB) *Store { return &Store{d: d} }

// Get returns the visitor's reservation id.
func (s *Store) Get(ctx context.Context, visitor string, id int64) (Reservation, error) {
	row, err := s.d.GetPickup(ctx, db.GetPickupParams{ID: id, Visitor: visitor})
	if errors.Is(err, database.ErrNotFound) {
		return Reservation{}, ErrNotFound
	}
	if err != nil {
		return Reservation{}, fmt.Errorf("get pickup: %w", err)
	}
	s2, _ := slot(row.Slot)
	return Reservation{ID: row.ID, Slot: s2, Name: row.Name, CreatedAt: row.CreatedAt}, nil
}

func slot(id string) (Slot, bool) {
	for _, s := range Slots {
		if s.ID == id {
			return s, true
		}
	}
	return Slot{}, false
}

// Settler settles a pickup form whose attempt died holding its key. The
// reservation is written in the transaction that finishes the key, so a key
// still started has written nothing: releasing it lets the visitor's
// resubmit reserve afresh.
var Settler = idem.SettlerFunc(func(ctx context.Context, l *idem.Lock) (string, error) {
	return "released", l.Release(ctx)
})

// ReserveFinishing writes a reservation and finishes the key l with
// answer(id), in one transaction: the reservation and the stored answer land
// together or not at all, and a stale attempt's reservation rolls back.
func (s *Store) ReserveFinishing(ctx context.Context, l *idem.Lock, visitor, slotID, name string, answer func(id int64) idem.Response) (idem.Response, error) {
	var resp idem.Response
	err := pgx.BeginFunc(ctx, s.d.Pool, func(tx pgx.Tx) error {
		id, err := Reserve(ctx, tx, visitor, slotID, name)
		if err != nil {
			return err
		}
		resp = answer(id)
		return l.FinishTx(ctx, tx, resp)
	})
	return resp, err
}
