package fakestripe

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// store is where the fake keeps its state: in PostgreSQL (postgresStore,
// the default, which outlives a restart of the fake as Stripe's books
// outlive a crash of the shop) or in memory (memoryStore, for load tests,
// where the fake's own database work would be measured as the shop's).
// Both give the handlers the same transactions, so the idempotency, the
// one-at-a-time decisions on an intent and the answers are the same.
type store interface {
	// inTx runs fn as one transaction: its writes all happen, or none do
	// when it returns an error.
	inTx(ctx context.Context, fn func(tx storeTx) error) error
	// intent reads the intent id, or errNotFound.
	intent(ctx context.Context, id string) (Intent, error)
	// list reads the intents q selects, in q's order.
	list(ctx context.Context, q listQuery) ([]Intent, error)
	// refund reads the refund id, or errNotFound.
	refund(ctx context.Context, id string) (Refund, error)
	// refunds reads the refunds q selects, in q's order.
	refunds(ctx context.Context, q refundQuery) ([]Refund, error)
	// succeeded counts the succeeded intents.
	succeeded(ctx context.Context) (int64, error)
	// holdKey makes key in use, as by a request still running, until
	// release is called (HoldKey).
	holdKey(ctx context.Context, key string) (release func(), err error)
}

// storeTx is what a request's work reads and writes within its
// transaction.
type storeTx interface {
	// claimKey makes the idempotency key the transaction's until it ends,
	// or answers errKeyInUse when a request still running has it.
	claimKey(ctx context.Context, key string) error
	// storedAnswer is the answer stored for key with the hash of its
	// request, ok false when there is none.
	storedAnswer(ctx context.Context, key string) (hash []byte, a answer, ok bool, err error)
	// storeAnswer stores a, the answer to the first request with key.
	storeAnswer(ctx context.Context, key string, hash []byte, a answer) error
	// insertIntent adds in, setting its Seq and Created.
	insertIntent(ctx context.Context, in *Intent) error
	// lockIntent reads the intent id, or errNotFound, and keeps it the
	// transaction's until it ends: a confirm and a cancel of one intent
	// are decided one at a time, so an intent ends succeeded or canceled,
	// never both.
	lockIntent(ctx context.Context, id string) (Intent, error)
	// saveIntent writes the changeable fields of in back.
	saveIntent(ctx context.Context, in Intent) error
	// intentOfCharge is the id of the intent whose latest charge is
	// charge, or errNotFound.
	intentOfCharge(ctx context.Context, charge string) (string, error)
	// insertRefund adds r, setting its Seq and Created, and adds its
	// amount to its intent's AmountRefunded, which the caller has locked
	// (lockIntent) and checked; a refund past the intent's amount is an
	// error.
	insertRefund(ctx context.Context, r *Refund) error
}

// refundQuery selects refunds, as listQuery selects intents.
type refundQuery struct {
	// intentID, when set, is the intent whose refunds are read.
	intentID string
	window
}

// listQuery selects intents: every condition set holds.
type listQuery struct {
	// metadata pairs the intent's metadata holds, all of them.
	metadata map[string]string
	// created bounds Created (Unix seconds).
	created []createdBound
	window
}

// window is the part of a query a list page sets, for intents and refunds
// alike: which Seq it starts after, its order, its size. The zero window
// is every row, oldest first.
type window struct {
	// seqBelow and seqAbove, when not zero, bound Seq: the cursors of a
	// list page (starting_after, ending_before).
	seqBelow, seqAbove int64
	// newestFirst orders by Seq descending, else ascending.
	newestFirst bool
	// limit is the most rows read, zero for all.
	limit int
}

// holds reports whether a row numbered seq is inside w's cursors.
func (w window) holds(seq int64) bool {
	return (w.seqBelow == 0 || seq < w.seqBelow) && (w.seqAbove == 0 || seq > w.seqAbove)
}

// sql adds w's cursors to where, its order and limit to the end of a query
// over the table aliased as alias, through arg, which binds a value.
func (w window) sql(alias string, where []string, arg func(any) string) (conditions []string, tail string) {
	if w.seqBelow != 0 {
		where = append(where, alias+".seq < "+arg(w.seqBelow))
	}
	if w.seqAbove != 0 {
		where = append(where, alias+".seq > "+arg(w.seqAbove))
	}
	tail = " ORDER BY " + alias + ".seq"
	if w.newestFirst {
		tail += " DESC"
	}
	if w.limit > 0 {
		tail += " LIMIT " + arg(w.limit)
	}
	return where, tail
}

// createdBound is one condition on Created: op is one of = >= > <= <.
type createdBound struct {
	op string
	t  int64
}

// holds reports whether created meets b.
func (b createdBound) holds(created int64) bool {
	switch b.op {
	case "=":
		return created == b.t
	case ">=":
		return created >= b.t
	case ">":
		return created > b.t
	case "<=":
		return created <= b.t
	case "<":
		return created < b.t
	}
	return false
}

// errNotFound is what both stores' reads return for an intent or a charge
// that is not there: pgx.ErrNoRows, which the PostgreSQL store's scans
// return as they are, so it needs no translating there.
var errNotFound = pgx.ErrNoRows
