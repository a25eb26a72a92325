// Package pickup reserves pickup slots: the shop's second protected form,
// which is not an order. What makes it safe to submit twice is the idem kit;
// this package holds only what is about reservations.
package pickup

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
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

// InvalidError is a reservation the form could not have asked for: Field
// names the input to fix ("slot" or "name"), Reason says how.
type InvalidError struct{ Field, Reason string }

func (e *InvalidError) Error() string { return "invalid reservation: " + e.Reason }

// MaxNameLength is the longest name a reservation holds, in characters.
const MaxNameLength = 100

// Validate checks what a visitor asked for, before anything is claimed or
// written, and returns the name as it is stored (trimmed). A name is 1 to
// MaxNameLength characters of valid UTF-8 without control characters:
// PostgreSQL's text cannot hold NUL, and a CR, LF or ESC in a name shown on
// a receipt, in a log line or in a mail header only ever means mischief; so
// does a bidirectional control (U+202E and its kin), which reorders what is
// shown after it ("Ada\u202Egnp.exe" reads "Adaexe.png").
func Validate(slotID, name string) (string, error) {
	if _, ok := slot(slotID); !ok {
		return "", &InvalidError{Field: "slot", Reason: "choose one of the slots offered"}
	}
	name = strings.TrimSpace(name)
	switch {
	case !utf8.ValidString(name):
		return "", &InvalidError{Field: "name", Reason: "the name must be text (valid UTF-8)"}
	case strings.ContainsFunc(name, unicode.IsControl):
		return "", &InvalidError{Field: "name", Reason: "the name must not contain control characters (such as NUL, line breaks or ESC)"}
	case strings.ContainsFunc(name, isBidiControl):
		return "", &InvalidError{Field: "name", Reason: "the name must not contain bidirectional controls (such as U+202E RIGHT-TO-LEFT OVERRIDE)"}
	case name == "" || utf8.RuneCountInString(name) > MaxNameLength:
		return "", &InvalidError{Field: "name", Reason: fmt.Sprintf("the name must be 1 to %d characters", MaxNameLength)}
	}
	return name, nil
}

// ErrNotFound means there is no such reservation for this visitor.
var ErrNotFound = errors.New("no such reservation")

// Reservation is one reserved slot.
type Reservation struct {
	ID        uuid.UUID
	Slot      Slot
	Name      string
	CreatedAt time.Time
}

// Reserve writes a reservation in tx (the kit's transaction, which
// finishes the form's key with it) and returns its ID. It validates again
// what the caller should have validated before claiming the key.
func Reserve(ctx context.Context, tx pgx.Tx, visitor, slotID, name string) (uuid.UUID, error) {
	name, err := Validate(slotID, name)
	if err != nil {
		return uuid.Nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.Nil, fmt.Errorf("reservation id: %w", err)
	}
	if err := database.TxQueries(tx).InsertPickup(ctx, db.InsertPickupParams{PublicID: id, Visitor: visitor, Slot: slotID, Name: name}); err != nil {
		return uuid.Nil, fmt.Errorf("reserve pickup: %w", err)
	}
	return id, nil
}

// Store reads reservations back.
type Store struct{ d *database.DB }

// NewStore returns a Store.
func NewStore(d *database.DB) *Store { return &Store{d: d} }

// Get returns the visitor's reservation named id: its public id, or the
// sequence number that named reservations before public ids, which a
// stored answer of that time still carries.
func (s *Store) Get(ctx context.Context, visitor, id string) (Reservation, error) {
	var (
		row db.GetPickupRow
		err error
	)
	if public, perr := uuid.Parse(id); perr == nil {
		row, err = s.d.GetPickup(ctx, db.GetPickupParams{PublicID: public, Visitor: visitor})
	} else if n, nerr := strconv.ParseInt(id, 10, 64); nerr == nil {
		var old db.GetPickupByNumberRow
		old, err = s.d.GetPickupByNumber(ctx, db.GetPickupByNumberParams{ID: n, Visitor: visitor})
		row = db.GetPickupRow(old)
	} else {
		return Reservation{}, ErrNotFound
	}
	if errors.Is(err, database.ErrNotFound) {
		return Reservation{}, ErrNotFound
	}
	if err != nil {
		return Reservation{}, fmt.Errorf("get pickup: %w", err)
	}
	s2, _ := slot(row.Slot)
	return Reservation{ID: row.PublicID, Slot: s2, Name: row.Name, CreatedAt: row.CreatedAt}, nil
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
func (s *Store) ReserveFinishing(ctx context.Context, l *idem.Lock, visitor, slotID, name string, answer func(id uuid.UUID) idem.Response) (idem.Response, error) {
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

// isBidiControl reports the characters that reorder the text shown after
// them (Unicode's Bidi_Control: U+061C, U+200E–U+200F, U+202A–U+202E,
// U+2066–U+2069). unicode.IsControl does not cover them: they are format
// characters.
func isBidiControl(r rune) bool { return unicode.Is(unicode.Bidi_Control, r) }
