// Package lab is the double-click lab: scenarios that each send real
// orders to the shop and record, attempt by attempt, why however many
// submissions there are, one charge results (and, in the baseline, why ten
// keys make ten).
//
// The scenarios are driven from the server, not from page script, for two
// reasons. The timings are exact: two clicks 50 ms apart, ten requests let go
// by one barrier, a retry sent the moment the database clock says a lock has
// expired; a browser's timers and its six connections per host would blur
// all three. And a run reads the database between attempts (has the lock
// expired? was the key taken over?), which page script cannot. The requests
// still travel the way a client's do: over loopback HTTP to the server's own
// JSON API, through routing, authentication and the order handler, so what
// the lab shows is what the API does. The 3-D Secure scenarios go through
// the shop's pages instead, as a browser does (browser.go): the way back from
// the bank is a page's. The page only starts a run and renders what came
// back.
//
// Each run registers a shopper of its own (the last-mug run two), so runs
// never mix and their counts are those shoppers' charges and orders. The scenarios that wait for
// a lock to expire ask for a short lock (one or two seconds) on their own
// requests only (see LockHeader), not for the whole server. The fake provider's
// behaviour is global, so runs are serialised and put it back afterwards.
package lab

import (
	"time"

	"github.com/google/uuid"
)

// Run is the record of one run of a scenario.
type Run struct {
	Scenario string
	// CustomerID is the run's shopper, the first of Shoppers: the one the
	// inspector shows first.
	CustomerID uuid.UUID
	// Shoppers are every shopper of the run (two in the last-mug run);
	// Charges and Orders count them all.
	Shoppers []uuid.UUID
	Started  time.Time
	// Duration is the run's length so far while it is in flight.
	Duration time.Duration
	Running  bool
	Attempts []Attempt
	// Marks are the instants the run turns on (a lock expired, a webhook
	// came, a job was delivered again): a viewer cannot read them off the
	// attempts' bars, which may be a few milliseconds wide.
	Marks []Mark
	// LaneNoun is what one lane of the run stands for ("click"), when its
	// attempts are grouped in lanes: the summary counts what the viewer
	// counts, the lanes, not the requests.
	LaneNoun string
	// Charges and Orders are counted for the run's shoppers (at the
	// provider and in the database) once every attempt has answered.
	Charges int64
	Orders  int64
	// AsExpected is true when the counts are the scenario's.
	AsExpected bool
	// Notes are facts the run checked beyond the counts, such as "the
	// recovered order carries the original charge".
	Notes []string
	// Facts are what the run is about beyond charges and orders, shown
	// next to them: "recovered by: redelivery".
	Facts []Fact
	// Error is set, for people, when the run could not be carried out
	// (not when an attempt was refused: refusals are what the lab shows).
	Error string
}

// Fact is one headline of a run beyond its counts.
type Fact struct {
	Label string
	Value string
}

// Mark is an instant of a run, At from its start, named in a word or two:
// "lock expired", "webhook", "delivered again".
type Mark struct {
	Label string
	At    time.Duration
}

// Attempt is one request of a run, as its client saw it.
type Attempt struct {
	// N numbers the attempts in the order they were sent, from 1.
	N int
	// Label says what the attempt stands for ("click 2", "retry").
	Label string
	// Lane is whose story the attempt tells when a run tells more than
	// one (the first click's, the second click's); empty otherwise.
	Lane string
	// Waited is set when the attempt stands for a client that was told to
	// wait (409) and asked again until it had the answer: Status is that
	// answer, and the wait is part of its span.
	Waited bool
	Key    string
	// Start and End are offsets from the start of the run; End is zero
	// while the attempt is in flight.
	Start time.Duration
	End   time.Duration
	Done  bool
	// Status is the HTTP status; zero if no response came.
	Status int
	// Problem is the slug of the problem type of an error response.
	Problem string
	// Replayed is the Idempotent-Replayed marker.
	Replayed   bool
	RetryAfter string
	ChargeID   string
	// Lock is how the attempt stood towards the key's lock; see Lock.
	Lock Lock
	// Page, for a step of a shopper's browser (the 3-D Secure scenarios:
	// a form sent, the bank's page, the way back), is what the browser
	// ended on, in words: "sent to the bank", "the receipt". Status is the
	// first answer's, before any redirect.
	Page string
	// Error is why no response came.
	Error string
}

// Lock is an attempt's relation to its key's lock, read from its response:
// only an attempt that holds the lock calls the provider or writes.
type Lock string

const (
	// LockNone: the attempt never held the lock (told to wait, replayed,
	// refused).
	LockNone Lock = ""
	// LockHeld: the attempt claimed the key.
	LockHeld Lock = "held"
	// LockTookOver: the attempt took the key over from an earlier attempt
	// whose lock had expired.
	LockTookOver Lock = "took over"
)

// ShortID shortens a key, a shopper's id or a lock token for display, to
// the part that tells two of them apart. A time-ordered UUID (version 7,
// as the database mints customers and lock tokens) begins with its
// timestamp, so every id made in the same minute starts alike: it is shown
// by its random tail. Anything else is shown by its head.
func ShortID(id string) string {
	if u, err := uuid.Parse(id); err == nil && (u.Version() == 7 || u.Version() == 6 || u.Version() == 1) {
		s := u.String()
		return s[len(s)-8:]
	}
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
